/*
 * main.c: the command-line front end. Parses options, dispatches to the
 * subcommands, and is the only place that prints usage and picks exit codes for
 * bad usage:
 *   0 success, 1 something ran but failed (a mismatch, a compile error),
 *   2 bad usage or bad input (nothing ran).
 *
 * Every option is declared once, in OPTS, with the commands that take it and a
 * line of help; `harness COMMAND --help` lists exactly those, and an option given
 * to a command that does not take it is an error (never silently ignored).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "cli.h"
#include "commands.h"
#include "util.h"

enum {
    C_RUN = 1 << 0,
    C_LIST = 1 << 1,
    C_COMPILE = 1 << 2,
    C_DEBUG = 1 << 3,
    C_PLOT = 1 << 4,
    C_COMPARE = 1 << 5,
    C_BENCH = 1 << 6,
    C_INFO = 1 << 7,
    C_CACHE = 1 << 8,
    C_TUNE = 1 << 9,
    C_TRAIN = 1 << 10,
    C_MERGE = 1 << 11,
    C_CHECK = 1 << 12,
    C_PROFILE = 1 << 13,
    C_ALL = 0x3fff,
};

typedef struct {
    const char *name;
    int (*fn)(const hn_cli *);
    int bit;
    const char *args;  /* positional arguments, for usage */
    int needs_file;    /* 1: the positional argument is required; 2: it and at least one more (merge); 3: it and any more (compare) */
    const char *what;
} cmd_def;

/* What `harness COMMAND --help` says beyond the one line, for the commands that need it. */
static const struct {
    const char *cmd;
    const char *text;
} CMD_NOTES[] = {
    {"info",
     "Checks, each by using the part: NVRTC compiles a probe kernel (with the C and toolkit\n"
     "headers kernels include); the emulator compiles it with the host C++ compiler and runs\n"
     "it, checking its output; with a GPU, the cuda backend runs it too; the kernel cache\n"
     "folder is writable. Exit code 0 when all pass; 1 when one is broken (it is named on\n"
     "stderr): a check fails, cuBLAS cannot say its version, or an NVIDIA device node exists\n"
     "(/dev/nvidia0) without a usable driver. No GPU at all is not broken: the emulator runs\n"
     "kernels there.\n"},
    {"bench",
     "Sub-benchmarks: `reference` (the fp64 conv2d reference's GFLOP/s), `ops` (every\n"
     "operator's reference against a copy of the same bytes), `emu` (the CPU emulator's costs)\n"
     "and `tune` (tune's space construction, overhead and strategies); all when none is named.\n"
     "--quick: `reference` and `emu` only, on small shapes with few repetitions (about a second;\n"
     "`ops` and `tune` have no quick form). Exit code 1 when a figure could not be measured or a\n"
     "result was wrong.\n"},
    {"merge",
     "OUT.csv SHARD.csv...: the shards of a run (--shard I/N) into one results file with its\n"
     "best.csv, listing the rows missing; OUT's folder is made; a file given twice is read once.\n"
     "OUT.journal A.journal...: a tune's journals into one.\n"},
};

static const cmd_def CMDS[] = {
    {"run", hn_cmd_run, C_RUN, "CONFIG", 1, "compile every variant, run the sweep, check, time, write CSV"},
    {"list", hn_cmd_list, C_LIST, "CONFIG", 1, "print the plan (cases and variants) without running anything"},
    {"compile", hn_cmd_compile, C_COMPILE, "CONFIG", 1,
     "compile every variant (NVRTC, no GPU needed): registers, spills, shared memory"},
    {"debug", hn_cmd_debug, C_DEBUG, "CONFIG", 1,
     "one variant on one small case with -DDEBUG -DSINGLE_BLOCK, blocks in order"},
    {"plot", hn_cmd_plot, C_PLOT, "CSV | --all", 0, "draw charts of a results file (gnuplot)"},
    {"compare", hn_cmd_compare, C_COMPARE, "CSV [CSV...]", 3,
     "compare variants or a define (--by ACCUM_DTYPE) in time and accuracy; or runs (several CSVs)"},
    {"bench", hn_cmd_bench, C_BENCH, "[reference|ops|emu|tune]", 0, "print the harness's own benchmark figures"},
    {"info", hn_cmd_info, C_INFO, "", 0, "versions, devices and backends; checks that each works"},
    {"tune", hn_cmd_tune, C_TUNE, "CONFIG", 1,
     "search a variant's tunable space for the fastest configuration per case (or across cases)"},
    {"train", hn_cmd_train, C_TRAIN, "xor|mnist|gradcheck", 1,
     "train a small network with the catalogue's kernels (autograd in C); check every layer's gradient"},
    {"check", hn_cmd_check, C_CHECK, "CONFIG", 1,
     "run every variant once on the emulator with the sanitizer: races, out-of-bounds and misaligned "
     "accesses, uninitialised reads, barrier and warp-mask misuse"},
    {"profile", hn_cmd_profile, C_PROFILE, "CONFIG", 1,
     "run every variant once on the emulator, profiling its memory accesses: per source line, requests, "
     "sectors per request (coalescing), shared-memory bank conflicts"},
    {"cache", hn_cmd_cache, C_CACHE, "info|clean", 1,
     "the compiled-kernel cache: what it holds and what fails verification, or empty it"},
    {"merge", hn_cmd_merge, C_MERGE, "OUT SHARD...", 2,
     "combine the shards of a run (CSV) or a tune (journal) into one, with its best.csv"},
};

typedef struct {
    const char *name;
    char kind; /* s string, i int, I int64, d double, p positive double, f flag, m multi string (repeatable:
                  --variant into only[], --tuned into tuned[]), c case list; every kind but f and m may be
                  given once */
    size_t offset;
    int cmds;
    const char *arg;
    const char *help;
} opt_def;

#define OPT(n, k, field, cmds, arg, help) {n, k, offsetof(hn_cli, field), cmds, arg, help}
static const opt_def OPTS[] = {
    OPT("backend", 's', backend, C_RUN | C_DEBUG | C_COMPILE | C_TUNE | C_TRAIN, "cuda|emu|auto",
        "where kernels run (default auto: the GPU if present); compile: emu builds for the emulator"),
    OPT("out", 's', out, C_RUN | C_DEBUG | C_PLOT | C_COMPARE | C_TUNE | C_TRAIN | C_CHECK | C_PROFILE, "PATH",
        "run: results CSV (default results/<name>.csv); debug: folder for the mismatch map; plot, "
        "compare: the chart; train: the loss and accuracy curve (default results/train_<task>.csv)"),
    OPT("resume", 'f', resume, C_RUN | C_CHECK | C_PROFILE, NULL,
        "keep the rows --out already holds for this plan (same case, variant, defines, kernel "
        "source and device) and run only the rest"),
    OPT("force", 'f', force, C_RUN | C_CHECK | C_PROFILE, NULL, "overwrite --out even when it holds an unfinished run"),
    OPT("seed", 'I', seed, C_RUN | C_LIST | C_COMPILE | C_DEBUG | C_TUNE | C_TRAIN | C_CHECK | C_PROFILE, "N",
        "override the config's sampling seed; tune: the search's seed (the cases stay the config's sample); train: the initialisation and shuffling seed (default 42); train gradcheck: the seed of its inputs"),
    OPT("arch", 's', arch, C_COMPILE, "sm_XX", "target (default: the device's, else sm_90)"),
    OPT("cache-dir", 's', cache_dir, C_RUN | C_COMPILE | C_DEBUG | C_CACHE | C_TUNE | C_TRAIN | C_CHECK | C_PROFILE, "DIR",
        "compiled-kernel cache (default $HARNESS_CACHE_DIR or ~/.cache/harness)"),
    OPT("variant", 'm', only, C_RUN | C_TUNE | C_CHECK | C_PROFILE, "NAME",
        "run only this variant (repeatable; run: NAME@tuned, a --tuned one)"),
    OPT("case", 'c', cases, C_RUN | C_DEBUG | C_TUNE | C_CHECK | C_PROFILE, "IDS",
        "run only these cases of the plan: an id, or ids and ranges such as 0,5-8 (debug: one id)"),
    OPT("save-tensors", 's', save_tensors, C_RUN | C_TRAIN | C_CHECK, "DIR",
        "write inputs, reference and outputs as .npy; train: every layer's tensors of the first step"),
    OPT("emu-threads", 'i', emu_threads, C_RUN | C_DEBUG | C_TUNE | C_TRAIN | C_CHECK | C_PROFILE, "N", "emulator worker threads (default: one per core; debug: 1)"),
    OPT("kernel-timeout", 'p', kernel_timeout, C_RUN | C_DEBUG | C_TUNE | C_TRAIN | C_CHECK | C_PROFILE, "S",
        "stop a launch that runs longer than S seconds (default 60)"),
    OPT("compile-timeout", 'p', compile_timeout, C_RUN | C_CHECK | C_PROFILE | C_TUNE, "S",
        "give up on a variant whose compile takes longer than S seconds (default 600)"),
    OPT("retry-timeouts", 'f', retry_timeouts, C_RUN | C_CHECK | C_PROFILE, NULL,
        "keep running a variant in later cases after it timed out (default: skip them)"),
    OPT("max-gflop", 'd', max_gflop, C_RUN | C_TUNE | C_CHECK | C_PROFILE, "X", "emulator: skip cases above X GFLOP (default 0.05)"),
    OPT("all", 'f', all, C_RUN | C_PLOT | C_TUNE | C_CHECK | C_PROFILE, NULL, "run: every case whatever its size (emulator); plot: every CSV under results/"),
    OPT("quick", 'f', quick, C_RUN | C_TUNE | C_BENCH, NULL,
        "run, tune: exploration timing preset (few samples), over the config's timing; bench: small work, "
        "one repetition"),
    OPT("hot", 'f', hot, C_RUN | C_TUNE, NULL, "time back-to-back launches (default: cold L2)"),
    OPT("warmup", 'i', warmup, C_RUN | C_TUNE, "N", "untimed launches before sampling"),
    OPT("min-samples", 'i', min_samples, C_RUN | C_TUNE, "N", "samples before any stopping rule"),
    OPT("max-samples", 'i', max_samples, C_RUN | C_TUNE, "N", "stop after N samples"),
    OPT("max-noise", 'd', max_noise, C_RUN | C_TUNE, "PCT", "stop when the relative standard deviation is under PCT %"),
    OPT("min-time", 'd', min_time, C_RUN | C_TUNE, "S", "kernel time to gather before stopping on noise"),
    OPT("timeout", 'd', timeout, C_RUN | C_TUNE, "S", "sampling time limit per row"),
    OPT("save-samples", 'f', save_samples, C_RUN, NULL, "also write every sample to <out>.samples.csv"),
    OPT("no-baseline", 'f', no_baseline, C_RUN, NULL, "skip the baseline rows (cuBLAS, cuDNN)"),
    OPT("jobs", 'i', jobs, C_RUN | C_TUNE | C_CHECK | C_PROFILE, "N", "parallel compiles (default: cores)"),
    OPT("printf-lines", 'i', printf_lines, C_RUN | C_CHECK | C_PROFILE, "N", "kernel printf lines shown per launch (default 100)"),
    OPT("printf-all", 'f', printf_all, C_RUN | C_CHECK | C_PROFILE, NULL,
        "show kernel printf of every launch (default: only each row's first launch)"),
    OPT("strategy", 's', strategy, C_TUNE, "NAME",
        "brute_force, random, annealing, genetic, diff_evolution, pso, local_search, bandit (default bandit)"),
    OPT("budget", 's', budget, C_TUNE, "N|Ns|N%",
        "evaluations per tuning (N), wall time (N s), or a fraction of the space (N %); default 100"),
    OPT("across", 'f', across, C_TUNE, NULL, "one configuration for all cases (geometric mean), not one per case"),
    OPT("journal", 's', journal, C_TUNE, "FILE", "append every evaluation here (default <out>.journal); resumes from it"),
    OPT("replay", 's', replay, C_TUNE, "FILE", "evaluate by looking configurations up in a recorded journal (no device)"),
    OPT("compare-strategies", 'f', compare_strategies, C_TUNE, NULL,
        "with --replay: every strategy over many seeds, scored against random search"),
    OPT("repeats", 'i', repeats, C_TUNE, "N", "seeds per strategy for --compare-strategies (default 100)"),
    OPT("space-only", 'f', space_only, C_TUNE, NULL, "build the space, print its raw and valid sizes, and stop"),
    OPT("with-best", 's', with_best, C_TUNE, "FILE,...",
        "the C header <out>.h also selects these tunes' results (best.json of other GPUs)"),
    OPT("top", 'i', top, C_TUNE, "K", "re-measure the best K with the full sampling rules (default 3)"),
    OPT("epochs", 'i', epochs, C_TRAIN, "N", "passes over the training data (xor 1000, mnist 3)"),
    OPT("batch", 'i', batch, C_TRAIN, "N", "samples per step (xor 4, mnist 64)"),
    OPT("lr", 'd', lr, C_TRAIN, "X", "learning rate (xor 0.01, mnist 1e-3)"),
    OPT("optimizer", 's', optimizer, C_TRAIN, "sgd|adam", "the optimizer (default adam; sgd has momentum 0.9)"),
    OPT("momentum", 'd', momentum, C_TRAIN, "X", "sgd: the momentum (default 0.9; 0 is plain SGD)"),
    OPT("data", 's', data, C_TRAIN, "DIR", "mnist: the folder of the four IDX files (gzipped or not)"),
    OPT("limit", 'i', limit, C_TRAIN, "N", "mnist: train on the first N images"),
    OPT("test-limit", 'i', test_limit, C_TRAIN, "N", "mnist: test on the first N test images"),
    OPT("interval", 'i', interval, C_TRAIN, "N", "steps between progress lines (xor: epochs; default a fifth of an epoch, xor 100)"),
    OPT("kernels", 's', kernels, C_TRAIN, "FILE", "the kernel of each layer type (default configs/train/default.json)"),
    OPT("tuned", 'm', tuned, C_RUN | C_LIST | C_COMPILE | C_CHECK | C_PROFILE | C_TRAIN, "FILE",
        "a best.json of harness tune: run, list, compile: its configurations (per case) as the variant "
        "<variant>@tuned (repeatable); train: its defines for the kernel it tuned"),
    OPT("save", 's', save, C_TRAIN, "FILE", "write the trained weights"),
    OPT("load", 's', load, C_TRAIN, "FILE", "start from weights written by --save"),
    OPT("devices", 's', devices, C_RUN | C_TUNE, "0,1,..|all|N",
        "one worker per GPU listed (or all), rows handed out as they free up; on the emulator N workers"),
    OPT("shard", 's', shard, C_RUN | C_TUNE, "I/N",
        "run shard I of N: a share of the cases balanced by estimated cost (harness merge combines them)"),
    OPT("sanitize", 's', sanitize, C_RUN | C_DEBUG | C_CHECK, "race,mem,init,sync|all",
        "run on the emulator with instrumented kernels and report these (check: all by default); rows get "
        "the status race, memcheck, initcheck or synccheck"),
    OPT("report", 's', report, C_RUN | C_DEBUG | C_CHECK, "FILE",
        "also append the sanitizer's full report to FILE (it always goes to stderr)"),
    OPT("profile", 'f', profile, C_RUN, NULL,
        "profile memory accesses on the emulator instead of timing (what harness profile does)"),
    OPT("profile-blocks", 'i', profile_blocks, C_RUN | C_PROFILE, "N",
        "at most N blocks of each launch the profile records, spread over the grid (default 8; 0: all, exact)"),
    OPT("kernel", 's', kernel, C_DEBUG, "NAME", "the variant to debug"),
    OPT("set", 's', set, C_DEBUG, "a=1,b=2", "the case: a value for every axis (default: the plan's smallest)"),
    OPT("block", 's', block, C_DEBUG, "X,Y,Z", "only this block prints (DEBUG_BLOCK_X/Y/Z)"),
    OPT("sort", 's', sort, C_PLOT, "VARIANT", "sort cases by this variant's time"),
    OPT("log", 'f', log_scale, C_PLOT, NULL, "logarithmic time axis"),
    OPT("format", 's', format, C_PLOT | C_COMPARE, "png|svg|pdf", "chart format (default png)"),
    OPT("by", 's', by, C_COMPARE, "COLUMN", "compare the values of this column (a define, or variant)"),
    OPT("baseline", 's', baseline, C_PLOT | C_COMPARE, "NAME", "the variant or value to compare against"),
    OPT("quiet", 'f', quiet,
        C_RUN | C_CHECK | C_PROFILE | C_TUNE | C_TRAIN | C_DEBUG | C_CACHE | C_MERGE | C_COMPARE | C_PLOT, NULL,
        "print less (run: no progress on stderr; cache: one line)"),
    OPT("verbose", 'f', verbose, C_COMPILE | C_COMPARE | C_PLOT | C_CACHE | C_TRAIN, NULL,
        "print more (compile: compiler logs; cache: every file)"),
};

/* What an option means to one command, where OPTS's line (written for all of
 * them) would mislead: `harness COMMAND --help` prints this instead. */
static const struct {
    const char *opt;
    int cmds;
    const char *help;
} OPT_HELP[] = {
    {"out", C_RUN, "the results CSV (default results/<name>.csv; a folder is refused)"},
    {"out", C_CHECK, "the results CSV (default results/<name>.check.csv)"},
    {"out", C_PROFILE, "the results CSV (default results/<name>.profile.csv; .lines.csv and .txt beside it)"},
    {"out", C_TUNE, "the prefix of the tune's files: .best.json, .csv, .journal, .h (default results/<name>.tune)"},
    {"out", C_DEBUG, "folder for the mismatch map (default debug/)"},
    {"out", C_PLOT | C_COMPARE, "the chart: a file (.png, .svg, .pdf) or a folder (default plots/<name>.png)"},
    {"out", C_TRAIN, "the loss and accuracy curve (default results/train_<task>.csv)"},
    {"all", C_RUN | C_TUNE | C_CHECK | C_PROFILE, "every case whatever its size on the emulator (no --max-gflop budget)"},
    {"all", C_PLOT, "every results CSV under results/ into plots/ (not those of check, profile, tune)"},
    {"quick", C_RUN | C_TUNE, "exploration timing preset (few samples), over the config's timing"},
    {"quick", C_BENCH, "bench: small work, one repetition, reference and emu only (about a second)"},
    {"seed", C_TUNE, "the search's seed (the cases stay the config's sample)"},
    {"seed", C_TRAIN, "the initialisation and shuffling seed (default 42); gradcheck: the seed of its inputs"},
    {"backend", C_COMPILE, "cuda: NVRTC for --arch (no GPU needed); emu: the emulator's host build; auto: cuda"},
    {"tuned", C_TRAIN, "a best.json of harness tune: its defines for the kernel it tuned"},
    {"quiet", C_MERGE, "no verdict table: only the merged line and what is missing"},
    {"quiet", C_COMPARE | C_PLOT | C_TRAIN | C_TUNE | C_DEBUG, "print less"},
    {"verbose", C_PLOT | C_COMPARE, "show gnuplot's output even when it succeeds"},
    {"verbose", C_TRAIN, "show the kernels' compiler logs"},
};

static void usage(FILE *f) {
    fprintf(f, "harness %s: benchmark and autotune CUDA kernels\n\nusage: harness COMMAND [ARGS] [OPTIONS]\n\ncommands:\n",
            HN_VERSION);
    for (size_t i = 0; i < HN_ARRAY_LEN(CMDS); i++)
        fprintf(f, "  %-8s %-25s %s\n", CMDS[i].name, CMDS[i].args, CMDS[i].what);
    fprintf(f, "\n`harness COMMAND --help` lists the options of a command.\n");
}

static void command_usage(FILE *f, const cmd_def *c) {
    fprintf(f, "usage: harness %s %s [OPTIONS]\n  %s\n", c->name, c->args, c->what);
    for (size_t i = 0; i < HN_ARRAY_LEN(CMD_NOTES); i++)
        if (strcmp(CMD_NOTES[i].cmd, c->name) == 0) fprintf(f, "\n%s", CMD_NOTES[i].text);
    fprintf(f, "\noptions:\n");
    for (size_t i = 0; i < HN_ARRAY_LEN(OPTS); i++) {
        const opt_def *o = &OPTS[i];
        if (!(o->cmds & c->bit)) continue;
        char head[64];
        snprintf(head, sizeof head, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        const char *help = o->help;
        for (size_t k = 0; k < HN_ARRAY_LEN(OPT_HELP); k++)
            if ((OPT_HELP[k].cmds & c->bit) && strcmp(OPT_HELP[k].opt, o->name) == 0) help = OPT_HELP[k].help;
        fprintf(f, "  %-28s %s\n", head, help);
    }
    fprintf(f, "  %-28s %s\n", "--help", "this list");
}

static int parse_number(const char *opt, const char *text, double *out) {
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if (errno || end == text || *end || isnan(*out)) {
        fprintf(stderr, "harness: --%s: '%s' is not a number\n", opt, text);
        return -1;
    }
    /* no option means anything by infinity (--kernel-timeout inf timed out at
     * once, --lr inf trained to NaN, --min-time inf was refused only after the
     * results file was started) */
    if (!isfinite(*out)) {
        fprintf(stderr, "harness: --%s: '%s' is not a finite number\n", opt, text);
        return -1;
    }
    return 0;
}

/* Parses argv (after the command) into cli; 1 when --help was asked. */
static int parse_args(int argc, char **argv, const cmd_def *cmd, hn_cli *cli, int *backend_given) {
    hn_cli_init(cli);
    *backend_given = 0;
    /* the value each single-value option was given (a second is an error: the
     * last one used to win in silence) */
    const char *given[HN_ARRAY_LEN(OPTS)] = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 1;
        if (strncmp(a, "--", 2) != 0 || strcmp(a, "--") == 0) {
            if (cli->config && cmd->needs_file >= 2) { /* 2: merge's shards; 3: compare's other runs */
                if (cli->n_inputs == (int)HN_ARRAY_LEN(cli->inputs)) {
                    fprintf(stderr, "harness %s: at most %d files\n", cmd->name, (int)HN_ARRAY_LEN(cli->inputs));
                    return -1;
                }
                cli->inputs[cli->n_inputs++] = a;
                continue;
            }
            if (cli->config) {
                if (cmd->bit == C_PLOT)
                    fprintf(stderr, "harness plot: unexpected argument '%s': plot takes one results file (plot "
                                    "each on its own; harness compare %s %s compares two runs)\n",
                            a, cli->config, a);
                else
                    fprintf(stderr, "harness %s: unexpected argument '%s'\n", cmd->name, a);
                return -1;
            }
            cli->config = a;
            continue;
        }
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_def *o = NULL;
        for (size_t k = 0; k < HN_ARRAY_LEN(OPTS); k++)
            if (strlen(OPTS[k].name) == len && strncmp(OPTS[k].name, name, len) == 0) o = &OPTS[k];
        if (!o) {
            fprintf(stderr, "harness %s: unknown option '%.*s' (harness %s --help lists them)\n", cmd->name,
                    (int)len + 2, a, cmd->name);
            return -1;
        }
        if (!(o->cmds & cmd->bit)) {
            fprintf(stderr, "harness %s: --%s is not an option of %s (harness %s --help lists them)\n",
                    cmd->name, o->name, cmd->name, cmd->name);
            return -1;
        }
        char *field = (char *)cli + o->offset;
        size_t oi = (size_t)(o - OPTS);
        if (o->kind == 'f') {
            if (eq) {
                fprintf(stderr, "harness %s: --%s takes no value\n", cmd->name, o->name);
                return -1;
            }
            *(int *)field = 1;
            continue;
        }
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!val) {
            fprintf(stderr, "harness %s: --%s needs a value (%s)\n", cmd->name, o->name, o->arg);
            return -1;
        }
        if (o->kind != 'm' && given[oi]) {
            fprintf(stderr, "harness %s: --%s given twice ('%s' and '%s'); it takes one value\n", cmd->name, o->name,
                    given[oi], val);
            return -1;
        }
        given[oi] = val;
        if (o->offset == offsetof(hn_cli, backend)) *backend_given = 1;
        double d;
        switch (o->kind) {
        case 's': *(const char **)field = val; break;
        case 'c': {
            hn_err err;
            int64_t n;
            if (hn_case_list_parse(val, -1, NULL, &cli->case_id, &n, &err) != 0) {
                fprintf(stderr, "harness %s: %s\n", cmd->name, err.msg);
                return -1;
            }
            *(const char **)field = val;
            break;
        }
        case 'm': {
            int tuned = o->offset == offsetof(hn_cli, tuned);
            int *n = tuned ? &cli->n_tuned : &cli->n_only;
            int cap = tuned ? (int)HN_ARRAY_LEN(cli->tuned) : (int)HN_ARRAY_LEN(cli->only);
            if (*n == cap) {
                fprintf(stderr, "harness %s: too many --%s options (at most %d)\n", cmd->name, o->name, cap);
                return -1;
            }
            ((const char **)field)[(*n)++] = val;
            break;
        }
        case 'i':
        case 'I':
            if (parse_number(o->name, val, &d) != 0) return -1;
            if (d != floor(d) || d < 0 || d > (o->kind == 'i' ? 2147483647.0 : 9.0e18)) {
                fprintf(stderr, "harness %s: --%s: '%s' is not a whole number >= 0\n", cmd->name, o->name, val);
                return -1;
            }
            if (d == 0 && o->offset == offsetof(hn_cli, emu_threads)) { /* 0 is its "not given" */
                fprintf(stderr, "harness %s: --emu-threads 0: must be at least 1 (leave it out for the default)\n",
                        cmd->name);
                return -1;
            }
            if (o->kind == 'i') *(int *)field = (int)d;
            else *(int64_t *)field = (int64_t)d;
            break;
        case 'd':
        case 'p':
            if (parse_number(o->name, val, &d) != 0) return -1;
            if (d < 0 || (o->kind == 'p' && d == 0)) {
                fprintf(stderr, "harness %s: --%s: must be %s (got %s)%s\n", cmd->name, o->name,
                        o->kind == 'p' ? "> 0" : ">= 0", val,
                        o->kind == 'p' ? "; 0 would mean no limit, which is not offered" : "");
                return -1;
            }
            *(double *)field = d;
            break;
        }
    }
    if (cli->max_noise >= 0) cli->max_noise /= 100.0; /* given in percent */
    return 0;
}

/* Options that parse alone but not together, or values no command can use:
 * refused here, before a command loads anything or touches a results file.
 * -1 with the message printed. */
static int check_combinations(const cmd_def *cmd, const hn_cli *cli, const int *given_backend) {
    const char *n = cmd->name;
    if (strcmp(cli->backend, "cuda") != 0 && strcmp(cli->backend, "emu") != 0 && strcmp(cli->backend, "auto") != 0) {
        fprintf(stderr, "harness %s: --backend: '%s' is not a backend (cuda, emu or auto)\n", n, cli->backend);
        return -1;
    }
    if (cli->min_samples == 0 || cli->max_samples == 0) {
        fprintf(stderr, "harness %s: --%s: 0 samples measure nothing; give at least 1\n", n,
                cli->min_samples == 0 ? "min-samples" : "max-samples");
        return -1;
    }
    /* 0 was the default in disguise (one per core; emu-threads is refused as it is parsed) */
    if (cli->jobs == 0) {
        fprintf(stderr, "harness %s: --jobs 0: must be at least 1 (leave it out for the default)\n", n);
        return -1;
    }
    if (cli->min_samples > 0 && cli->max_samples > 0 && cli->max_samples < cli->min_samples) {
        fprintf(stderr, "harness %s: --max-samples %d is under --min-samples %d\n", n, cli->max_samples,
                cli->min_samples);
        return -1;
    }
    if (cli->timeout == 0) {
        fprintf(stderr, "harness %s: --timeout: must be > 0 (got 0); it is the sampling time of a row\n", n);
        return -1;
    }
    if (cli->resume && cli->force) {
        fprintf(stderr, "harness %s: --resume and --force: --resume keeps the rows --out holds, --force starts it "
                        "over; give one\n", n);
        return -1;
    }
    if (cli->quiet && cli->verbose) {
        fprintf(stderr, "harness %s: --quiet and --verbose: give one\n", n);
        return -1;
    }
    if (cli->arch && *given_backend && strcmp(cli->backend, "emu") == 0) {
        fprintf(stderr, "harness %s: --arch %s and --backend emu: the emulator compiles for the host CPU, not an "
                        "architecture; drop one\n", n, cli->arch);
        return -1;
    }
    /* asked before anything is written: the worker would find it only after the
     * results file was started */
    if ((cmd->bit & (C_RUN | C_DEBUG | C_TUNE | C_TRAIN)) && strcmp(cli->backend, "cuda") == 0 && !cli->replay &&
        !cli->sanitize && !cli->profile) {
        char why[512];
        if (!hn_cuda_available_isolated(why, sizeof why)) {
            fprintf(stderr, "harness %s: --backend cuda: no usable GPU here (%s); --backend emu (or auto, the "
                            "default) runs the kernels on the CPU emulator, and harness info says what it finds\n",
                    n, why);
            return -1;
        }
    }
    if (cmd->bit == C_RUN && cli->profile_blocks >= 0 && !cli->profile) {
        fprintf(stderr, "harness run: --profile-blocks needs --profile (or harness profile)\n");
        return -1;
    }
    if (cmd->bit == C_RUN && cli->save_samples && (cli->profile || cli->sanitize)) {
        fprintf(stderr, "harness run: --save-samples and --%s: a %s run times nothing, so it has no samples\n",
                cli->profile ? "profile" : "sanitize", cli->profile ? "profiled" : "sanitized");
        return -1;
    }
    if (cli->out) {
        struct stat st;
        int exists = stat(cli->out, &st) == 0;
        int takes_folder = cmd->bit & (C_DEBUG | C_PLOT | C_COMPARE);
        if (exists && !takes_folder && S_ISDIR(st.st_mode)) {
            fprintf(stderr, "harness %s: --out %s is a folder; give a file path (%s)\n", n, cli->out,
                    cmd->bit == C_TUNE ? "the prefix of the tune's files, such as results/x.tune"
                                       : "such as results/x.csv");
            return -1;
        }
        if (exists && cmd->bit == C_DEBUG && !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "harness debug: --out %s is a file, not a folder (debug writes its mismatch map "
                            "into a folder)\n", cli->out);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        if (argc > 2) {
            for (size_t i = 0; i < HN_ARRAY_LEN(CMDS); i++)
                if (strcmp(argv[2], CMDS[i].name) == 0) {
                    command_usage(stdout, &CMDS[i]);
                    return 0;
                }
        }
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("harness %s\n", HN_VERSION);
        return 0;
    }
    const cmd_def *cmd = NULL;
    for (size_t i = 0; i < HN_ARRAY_LEN(CMDS); i++)
        if (strcmp(name, CMDS[i].name) == 0) cmd = &CMDS[i];
    if (!cmd) {
        fprintf(stderr, "harness: unknown command '%s'\n\n", name);
        usage(stderr);
        return 2;
    }
    hn_cli cli;
    int backend_given;
    int rc = parse_args(argc - 2, argv + 2, cmd, &cli, &backend_given);
    if (rc == 1) {
        command_usage(stdout, cmd);
        return 0;
    }
    if (rc != 0 || check_combinations(cmd, &cli, &backend_given) != 0) return 2;
    if (cmd->needs_file == 2 && (!cli.config || !cli.n_inputs)) {
        fprintf(stderr, "harness %s: expected the output and at least one shard (harness %s %s)\n", cmd->name,
                cmd->name, cmd->args);
        return 2;
    }
    if (cmd->needs_file && !cli.config) {
        if (cmd->bit == C_CACHE)
            fprintf(stderr, "harness %s: missing the action (harness %s %s)\n", cmd->name, cmd->name, cmd->args);
        else if (cmd->bit == C_TRAIN)
            fprintf(stderr, "harness %s: missing the task (harness %s %s)\n", cmd->name, cmd->name, cmd->args);
        else
            fprintf(stderr, "harness %s: missing the %s file (harness %s %s)\n", cmd->name,
                    cmd->bit == C_COMPARE ? "results" : "config", cmd->name, cmd->args);
        return 2;
    }
    return cmd->fn(&cli);
}
