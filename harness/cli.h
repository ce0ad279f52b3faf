/*
 * cli.h: command-line options shared by the subcommands, parsed once in main.c.
 *
 * Every option has a default that the config may override where the config has a
 * say (timing), and the command line overrides both. Numbers < 0 mean "not given".
 */
#ifndef HN_CLI_H
#define HN_CLI_H

#include <stdint.h>
#include <string.h>

typedef struct {
    const char *config;        /* positional: the config or results file (cache: the action) */
    const char *backend;       /* cuda | emu | auto */
    const char *out;           /* results CSV path */
    const char *arch;          /* sm_XX for compile */
    const char *cache_dir;
    const char *save_tensors;  /* folder for .npy files */
    const char *kernel;        /* debug: variant name */
    const char *set;           /* debug: axis assignments */
    const char *block;         /* debug: "x,y,z" */
    const char *sort;          /* plot: column to sort by */
    const char *by;            /* compare: column to compare by */
    const char *baseline;      /* plot/compare: the baseline variant */
    const char *format;        /* plot: png | svg | pdf */
    const char *only[32];      /* run: --variant filters */
    int n_only;
    int64_t seed;
    int64_t case_id;           /* debug/run: one case (the first of --case's list) */
    const char *cases;         /* run/tune/check/profile: --case's list ("3", "0,5-8"); NULL: all */
    int emu_threads;
    double kernel_timeout;
    double max_gflop;          /* emu budget per case */
    int all;                   /* run: ignore the emu budget; plot: every results CSV */
    int quick;
    int hot;
    int min_samples;
    int max_samples;
    double max_noise;          /* fraction */
    double min_time;
    double timeout;
    int warmup;
    int save_samples;
    int jobs;                  /* parallel compiles */
    int quiet;
    int verbose;
    int log_scale;
    int no_baseline;           /* run: skip the baseline rows (cuBLAS, cuDNN) */
    int resume;                /* run: keep the rows --out already holds */
    int force;                 /* run: overwrite an unfinished --out */
    int retry_timeouts;        /* run: keep running a variant after it timed out */
    double compile_timeout;    /* run: seconds a variant's compile may take (< 0: default) */
    int printf_lines;          /* run: kernel printf lines shown per launch (< 0: default) */
    int printf_all;            /* run: show printf of every launch, not only a row's first */
    const char *strategy;      /* tune */
    const char *budget;        /* tune: "100", "60s", "10%" */
    int across;                /* tune: one configuration across cases */
    const char *journal;       /* tune */
    const char *replay;        /* tune */
    int compare_strategies;    /* tune */
    int repeats;               /* tune: seeds per strategy (< 0: default) */
    int space_only;            /* tune */
    const char *with_best;     /* tune: other devices' best.json files for the C header, comma-separated */
    int top;                   /* tune: configurations re-measured at the end (< 0: default) */
    int epochs;                /* train (< 0: the task's default) */
    int batch;                 /* train: samples per step (< 0: default) */
    double lr;                 /* train: learning rate (< 0: default) */
    const char *optimizer;     /* train: sgd | adam */
    double momentum;           /* train: SGD's momentum (< 0: 0.9) */
    int limit;                 /* train: the first N training images (< 0: all) */
    int test_limit;            /* train: the first N test images (< 0: all) */
    int interval;              /* train: steps (xor: epochs) between progress lines (< 0: default) */
    const char *data;          /* train mnist: the folder of the IDX files */
    const char *kernels;       /* train: the training config (kernels per layer type) */
    const char *tuned[8];      /* run, list, check, profile, train: best.json files of harness tune
                                  (--tuned, repeatable; train takes one) */
    int n_tuned;
    const char *save;          /* train: write the weights here */
    const char *load;          /* train: start from these weights */
    const char *devices;       /* run, tune: "0,1,2,3", "all", or a count of emulator workers */
    const char *shard;         /* run, tune: "I/N" */
    const char *inputs[256];   /* merge: the files after the first positional argument */
    int n_inputs;
    const char *sanitize;      /* run, debug, check: "race,mem,init,sync" (any subset) or "all";
                                  NULL: no sanitizer */
    const char *report;        /* run, debug, check: also append the sanitizer's full report here */
    int profile;               /* run, profile: profile memory accesses (one instrumented launch a row) */
    int profile_blocks;        /* blocks of a launch the profile records (0: all; < 0: default) */
    const char *results;       /* not an option: the results file run writes (set by hn_cmd_run,
                                  for its worker) */
} hn_cli;

/* Every option "not given" (what a command line without options gives). */
static inline void hn_cli_init(hn_cli *cli) {
    memset(cli, 0, sizeof *cli);
    cli->backend = "auto";
    cli->seed = cli->case_id = -1;
    cli->kernel_timeout = cli->compile_timeout = -1;
    cli->max_gflop = -1;
    cli->min_samples = cli->max_samples = cli->warmup = -1;
    cli->max_noise = cli->min_time = cli->timeout = -1;
    cli->jobs = cli->printf_lines = cli->repeats = cli->top = -1;
    cli->epochs = cli->batch = cli->limit = cli->test_limit = cli->interval = -1;
    cli->lr = cli->momentum = -1;
    cli->profile_blocks = -1;
}

#endif
