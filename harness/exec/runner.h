/*
 * runner.h: running the rows of a plan on one backend, inside the process that
 * owns the device (the worker process of `harness run`, see worker.h).
 *
 * For each case of [first_case, last_case) with a row still to run: the workload
 * once (inputs, fp64 reference, device buffers), then each baseline and each
 * selected variant: geometry, arguments, warm-up, check, timed samples until the
 * stopping rule holds, check again, and a check that the kernel left its inputs
 * as they were. Variants compile in background threads while the device
 * measures. Each row goes to the sink as soon as it is complete, as one CSV line
 * over the columns of hn_run_columns, with its status and median for the
 * summary. The runner never writes the results file itself.
 *
 * A row is identified by (case, slot): slots 0..n_variants-1 are the plan's
 * variants, then one slot per baseline of the operator (op->baselines).
 *
 * Shared state (hn_run_shared) lives in memory shared with the parent process
 * and every other worker: which rows are already done (resumed, or written
 * before a worker restart), which lane runs which row and case (--devices: one
 * worker per device, rows handed out as workers free up), where each variant
 * timed out, the stop request of an interrupt, and per lane the moment its
 * device last became busy (the parent's watchdog for kernels that never
 * return).
 */
#ifndef HN_RUNNER_H
#define HN_RUNNER_H

#include <stdint.h>

#include "cli.h"
#include "csv.h"
#include "run.h"

/* The bytes of a compile error's row reason kept in the shared block. */
#define HN_COMPILE_WHY 1536

/* The most worker processes (lanes) a run or a tune drives at once. */
#define HN_MAX_LANES 64

/* One worker's corner of the shared block: where it runs and what the parent's
 * watchdog reads. The parent sets device and emu_threads before it starts the
 * lane's worker; the worker writes the rest. */
typedef struct {
    volatile double busy_since;   /* hn_now() when the device became busy; 0 idle */
    volatile double compile_since;/* hn_now() when the lane began waiting for a compile; 0 not */
    volatile int compile_slot;    /* the variant whose compile it waits for */
    int device;                   /* cuda: the device ordinal */
    int emu_threads;              /* emu: worker threads (0: --emu-threads, else one per core) */
} hn_run_lane;

/* Memory shared by the parent and its worker processes. Arrays follow the struct
 * (see hn_run_shared_create).
 *
 * Rows are handed out by claims: a lane runs a row only after it set the row's
 * claim from 0 to its own lane + 1 (an atomic compare-and-swap, so two lanes
 * never run one row); it sets a case up after claiming the case's owner byte
 * the same way, or, once every case has an owner, to help with the rows of a
 * case still running (see runner.c). The parent releases the claims of a lane
 * whose worker died, except the row it writes for it. */
typedef struct {
    volatile int stop;            /* the parent asks to stop after the current row */
    int64_t n_cases;
    int n_variants, n_slots;
    int n_lanes;
    hn_run_lane lane[HN_MAX_LANES];
    volatile unsigned char *done; /* [n_cases * n_slots]: the row is in the results file */
    volatile unsigned char *claim;/* [n_cases * n_slots]: the lane + 1 that runs it, 0 none */
    volatile unsigned char *owner;/* [n_cases]: the lane + 1 that set the case up first, 0 none */
    volatile unsigned char *in_run;/* [n_cases]: the case is part of this run (--case, --shard) */
    volatile double *median_ms;   /* [n_cases * n_slots]: of done ok rows, else NAN */
    volatile int64_t *timed_out;  /* [n_variants]: the case where it timed out, or -1 */
    /* [n_variants]: 2 once a worker found the variant does not compile, its row
     * reason then in compile_why (a worker restarted after a fault does not
     * compile it again, nor print the error again); 1 while that is written */
    volatile unsigned char *compile_failed;
    volatile char *compile_why;   /* [n_variants * HN_COMPILE_WHY] */
    size_t map_bytes;             /* the size of the mapping */
} hn_run_shared;

/* The emulator's budget per case (none on a GPU or with --all): GFLOP and MB
 * moved, each < 0 for none; and whether workload w is over it (reason says
 * why). */
void hn_emu_budget(const hn_cli *cli, const hn_plan *p, int is_emu, double *max_gflop, double *max_mb);
int hn_emu_over_budget(double max_gflop, double max_mb, const hn_workload *w, char *reason, size_t size);

/* Maps the shared block for a plan (MAP_SHARED, so it survives fork): one lane,
 * every case in the run, nothing claimed. */
hn_run_shared *hn_run_shared_create(int64_t n_cases, int n_variants, int n_baselines);
void hn_run_shared_destroy(hn_run_shared *s);
/* Releases every claim of lane that is not done (its worker died). */
void hn_run_shared_release(hn_run_shared *s, int lane);
/* Claims row (c, slot) for lane: 1 when the lane holds it now (it was free or
 * already the lane's) and it is not done, else 0. */
int hn_run_shared_claim(hn_run_shared *s, int lane, int64_t c, int slot);

/* Where the runner runs: the device as it reported itself. */
typedef struct {
    hn_device_info dev;
    char backend[16];               /* "cuda" or "emu" */
    double peak_fp32, peak_fp64, peak_bw;
    int index;                      /* the device_index column: cuda ordinal, or emu lane */
    int n_devices;                  /* cuda: devices the driver sees; 0 on emu */
} hn_run_device;

/* A finished row. */
typedef struct {
    int64_t case_id;
    int slot;
    int status;                     /* hn_status */
    double median_ms;               /* NAN when it has no timing */
    double noise;                   /* relative standard deviation, fraction; NAN if none */
    const char *line;               /* the CSV line, without its newline */
} hn_run_row;

/* Where the wall time went, for the summary. */
typedef struct {
    double compile_wait, compile_busy, ref, gen, transfer, check, kernel;
    int compile_threads;
} hn_run_stats;

/* A request to a serving runner (harness tune): compile a configuration
 * ahead, evaluate one on a case, or stop. */
#define HN_RUN_MAX_DEFINES 64
typedef struct {
    int type;                        /* HN_REQ_* */
    int64_t case_id;                 /* EVAL */
    int full;                        /* EVAL: the full sampling rules (else the search's quick ones) */
    int tag;                         /* EVAL: echoed as the row's slot */
    int spec;                        /* the variant spec */
    int n;                           /* its define count */
    int choice[HN_RUN_MAX_DEFINES];  /* a value index per define */
} hn_run_request;
enum { HN_REQ_PREFETCH = 1, HN_REQ_EVAL, HN_REQ_STOP };

/* What the runner reports, in order: device (once, first), then per case
 * case_begin, then per row row_begin and row, then stats at the end. device
 * returns 0 to go on (after the parent has decided what is done) or -1 to stop;
 * keys[v] is variant v's compile key (the cache key of its source tree, defines,
 * options and target). */
typedef struct {
    void *ctx;
    int (*device)(void *ctx, const hn_run_device *d, char *const *keys);
    /* helping: the lane runs some rows of a case another lane set up first */
    void (*case_begin)(void *ctx, int64_t case_id, const char *label, int helping);
    void (*row_begin)(void *ctx, int64_t case_id, int slot);
    void (*row)(void *ctx, const hn_run_row *r);
    void (*stats)(void *ctx, const hn_run_stats *s);
    /* Serve mode only: waits for the next request; -1 when there is none (the
     * parent went away). */
    int (*request)(void *ctx, hn_run_request *req);
} hn_run_sink;

/* Exit codes of hn_runner_run (and of the worker process). */
enum {
    HN_RUN_DONE = 0,     /* every row of the range was reported */
    HN_RUN_FAILED = 1,   /* could not start (no device, a bad option): says why on stderr */
    HN_RUN_RESTART = 3,  /* a kernel faulted: the device (or the emulated memory) is not to
                            be trusted; continue in a fresh process */
    HN_RUN_STOPPED = 4,  /* stopped after a row because shared->stop was set */
};

/* Runs, as lane `lane` of the shared block, the rows of the cases in the run
 * (shared->in_run) of variants with selected[v] set that no other lane has
 * claimed, skipping rows marked done. Returns one of the codes above. */
int hn_runner_run(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *shared,
                  int lane, const hn_run_sink *sink);

/* Serve mode (harness tune): after the device message, evaluates the requests
 * the sink hands out, one row each (its slot is the request's tag), until STOP
 * or the end of requests. Same exit codes. */
int hn_runner_serve(const hn_cli *cli, const hn_plan *p, hn_run_shared *shared, int lane, const hn_run_sink *sink);

/* A profile's files beside the results file out (x.csv): x.lines.csv, a row
 * per source line of every row (created here with its header), and x.txt, the
 * tables and annotated listings (created empty). The runner appends to both. */
int hn_runner_profile_files(const hn_plan *p, const char *out, hn_err *err);

/* The columns of a results file for p (caller frees the array, not the names). */
const char **hn_run_columns(const hn_plan *p, int *n);

/* The columns every row of case c shares (w: its shape, or NULL when unknown). */
void hn_run_row_case(hn_csv *csv, const hn_plan *p, const hn_case *c, const hn_workload *w,
                     const hn_run_device *d);
/* The columns of a row's slot (variant or baseline), or of a variant. */
void hn_run_row_slot(hn_csv *csv, const hn_plan *p, int slot);
void hn_run_row_variant(hn_csv *csv, const hn_plan *p, const hn_variant *v);
/* "speedup_vs_<family>" (a string that lives as long as the process). */
const char *hn_run_speedup_column(const char *family);
/* The name of a slot: the variant's label or the baseline's name. */
const char *hn_run_slot_name(const hn_plan *p, int slot);

#endif
