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
 * Shared state (hn_run_shared) lives in memory shared with the parent process:
 * which rows are already done (resumed, or written before a worker restart),
 * where each variant timed out, the stop request of an interrupt, and the
 * moment the device last became busy (the parent's watchdog for kernels that
 * never return).
 */
#ifndef HN_RUNNER_H
#define HN_RUNNER_H

#include <stdint.h>

#include "cli.h"
#include "csv.h"
#include "run.h"

/* Memory shared by the parent and its worker process. Arrays follow the struct
 * (see hn_run_shared_create). */
typedef struct {
    volatile double busy_since;   /* hn_now() when the device became busy; 0 idle */
    volatile double compile_since;/* hn_now() when the run began waiting for a compile; 0 not */
    volatile int compile_slot;    /* the variant whose compile it waits for */
    volatile int stop;            /* the parent asks to stop after the current row */
    int64_t n_cases;
    int n_variants, n_slots;
    volatile unsigned char *done; /* [n_cases * n_slots]: the row is in the results file */
    volatile double *median_ms;   /* [n_cases * n_slots]: of done ok rows, else NAN */
    volatile int64_t *timed_out;  /* [n_variants]: the case where it timed out, or -1 */
    size_t map_bytes;             /* the size of the mapping */
} hn_run_shared;

/* Maps the shared block for a plan (MAP_SHARED, so it survives fork). */
hn_run_shared *hn_run_shared_create(int64_t n_cases, int n_variants, int n_baselines);
void hn_run_shared_destroy(hn_run_shared *s);

/* Where the runner runs: the device as it reported itself. */
typedef struct {
    hn_device_info dev;
    char backend[16];               /* "cuda" or "emu" */
    double peak_fp32, peak_fp64, peak_bw;
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
    void (*case_begin)(void *ctx, int64_t case_id, const char *label);
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

/* Runs the rows of cases [first_case, last_case) of variants with selected[v]
 * set, skipping rows marked done. Returns one of the codes above. */
int hn_runner_run(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, int64_t first_case,
                  int64_t last_case, hn_run_shared *shared, const hn_run_sink *sink);

/* Serve mode (harness tune): after the device message, evaluates the requests
 * the sink hands out, one row each (its slot is the request's tag), until STOP
 * or the end of requests. Same exit codes. */
int hn_runner_serve(const hn_cli *cli, const hn_plan *p, hn_run_shared *shared, const hn_run_sink *sink);

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
