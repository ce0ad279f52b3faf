/*
 * run.h: the pipeline shared by `harness run` and `harness debug`.
 *
 *   hn_build     the compile request of one variant instance (owns its strings)
 *   hn_workload  one case on one backend: host inputs, the fp64 reference, device
 *                buffers; created once per case and shared by every variant
 *   hn_exec      running one variant on a workload: geometry, argument binding,
 *                launch, check (before and after timing), timing
 *
 * Rows are produced by run.c; this header exposes what debug.c (and tests) reuse.
 */
#ifndef HN_RUN_H
#define HN_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "check.h"
#include "cli.h"
#include "config.h"
#include "csv.h"
#include "stats.h"

/* The status of a row:
 *   ok, mismatch       it ran; its output matched the reference, or not
 *   compile_error      the variant did not compile
 *   launch_error       it could not be launched (geometry over the device's limits,
 *                      arguments that do not fit the kernel, ...)
 *   fault              the kernel crashed (bad address, trap, divergent barrier;
 *                      or the worker process died running it)
 *   timeout            a launch ran longer than --kernel-timeout
 *   skipped            not run, with the reason (a where, the emulator's budget, an
 *                      earlier timeout of the variant)
 *   race, memcheck,    the emulator's sanitizer (`harness check`, --sanitize) found
 *   initcheck,         something of that class (the first finding's class; the
 *   synccheck          reason is that finding) */
typedef enum {
    HN_ST_OK,
    HN_ST_MISMATCH,
    HN_ST_COMPILE,
    HN_ST_LAUNCH,
    HN_ST_FAULT,
    HN_ST_TIMEOUT,
    HN_ST_SKIPPED,
    HN_ST_RACE,
    HN_ST_MEMCHECK,
    HN_ST_INITCHECK,
    HN_ST_SYNCCHECK,
    HN_ST_COUNT
} hn_status;
extern const char *const hn_status_names[HN_ST_COUNT]; /* "ok", "mismatch", ... */
/* Whether a row with this status counts as a failure (exit code 1). */
int hn_status_failed(int status);
/* The cases a command runs, as a mask of n_cases: --case's list (cli->cases), or
 * the one case_id a caller set, or all. Returns 0, or -1 with err when an id is
 * out of the plan. */
int hn_cli_cases(const hn_cli *cli, int64_t n_cases, unsigned char *mask, hn_err *err);

typedef struct {
    hn_compile_req req;
    char **defines;
    int n_defines;
    const char *kernels[HN_MAX_LAUNCHES]; /* the variant's, in launch order */
} hn_build;

/* Builds the compile request of variant v: its defines, then extra (e.g.
 * "DEBUG", "SINGLE_BLOCK"), for arch (cuda) and cache_dir. */
void hn_build_init(hn_build *b, const hn_plan *p, const hn_variant *v, const char *const *extra,
                   int n_extra, const char *arch, const char *cache_dir);
void hn_build_free(hn_build *b);

/* The most parameters and buffers an operator may have (checked when a
 * workload is made). */
#define HN_MAX_PARAMS 32
#define HN_MAX_BUFFERS 16
/* every buffer has its bit in a variant's "zero", below the scratch buffers' */
_Static_assert(HN_MAX_BUFFERS <= HN_ZERO_BUFFERS && HN_ZERO_BUFFERS + HN_MAX_SCRATCH <= 64, "zero's bits");

typedef struct hn_workload {
    const hn_plan *plan;
    const hn_case *c;
    double params[HN_MAX_PARAMS];   /* the operator's parameters for this case */
    int64_t counts[HN_MAX_BUFFERS]; /* elements per operator buffer */
    hn_dtype dtype[HN_MAX_BUFFERS];  /* each buffer's dtype for this case (hn_op_dtype) */
    void *host[HN_MAX_BUFFERS];     /* inputs as generated; outputs as last downloaded */
    void *inout_copy[HN_MAX_BUFFERS]; /* generated contents of in-out buffers (restored per sample) */
    hn_ref refs[HN_MAX_BUFFERS];    /* per output buffer */
    hn_dptr dev[HN_MAX_BUFFERS];
    /* the current variant's scratch buffers (hn_workload_scratch): n_scratch of
     * them, scratch_bytes each, in allocations of scratch_cap bytes (0: none)
     * that the next variant reuses where it asks for as many */
    hn_dptr scratch[HN_MAX_SCRATCH];
    size_t scratch_bytes[HN_MAX_SCRATCH], scratch_cap[HN_MAX_SCRATCH];
    int n_scratch;
    hn_backend *be;
    double flop, bytes;
    char label[128];
    double ref_seconds, gen_seconds, upload_seconds;
} hn_workload;

/* Evaluates the case, generates inputs, computes the reference (sampled above
 * ref_budget_gflop) and uploads the inputs. Returns -1 with err on failure (the
 * workload is then released). */
int hn_workload_create(hn_workload *w, const hn_plan *p, const hn_case *c, hn_backend *be,
                       double ref_budget_gflop, hn_err *err);
/* Only evaluates parameters, label and counts (no data); for skipping decisions. */
int hn_workload_shape(hn_workload *w, const hn_plan *p, const hn_case *c, hn_err *err);
void hn_workload_free(hn_workload *w);

/* Makes v's scratch buffers for w's case (v NULL: none, for a baseline): their
 * sizes evaluated, each allocated to exactly its size (so an overrun is seen
 * on the emulator) and named for the backend's messages. They start as 0xFF bytes
 * (hn_poison_outputs), or 0 where the variant's "zero" names them. */
int hn_workload_scratch(hn_workload *w, const hn_variant *v, hn_err *err);
/* The bytes of v's scratch buffers in all for w's case (v NULL: 0), without
 * allocating: for a budget's decision before hn_workload_scratch. */
int hn_workload_scratch_total(const hn_workload *w, const hn_variant *v, double *bytes, hn_err *err);

/* Writes v's "constants" into the module variables of k, a loaded kernel of
 * v's image (the kernels of one image share their module on both backends, so
 * one write serves every launch), for w's case:
 * an input buffer's generated contents, or a parameter's or expression's
 * value. img is the variant's compiled image (its sym_lowered names). -1 with
 * a message naming the constant on failure (a variable too small for the
 * buffer, a scalar of another size). */
int hn_workload_constants(const hn_workload *w, const hn_variant *v, const hn_module_image *img, hn_kernel *k,
                          hn_err *err);

/* The grid and block of launch `launch` as the results' columns show them
 * ("0x1x1"), appended to grid and block: each dimension as it evaluates, also
 * one hn_eval_geometry refuses (0, negative, 2^32 or more), "?" for one that
 * cannot be evaluated. For the row of a launch that could not be set up. */
void hn_geometry_text(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_sb *grid,
                      hn_sb *block);
/* Evaluates the geometry of a variant's launch `launch` (0 .. hn_spec_launches - 1) for a case. */
int hn_eval_geometry(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_launch_dims *d,
                     hn_err *err);

/* Packs the arguments of v's launch `launch` for w. vals and args must hold
 * HN_MAX_ARGS + 1 slots (more arguments are an error); args gets pointers into
 * vals; debug_counter is the device counter (0 if none). Appends the counter
 * when append_counter is set and the config does not bind it. */
#define HN_MAX_ARGS 64
typedef union {
    uint8_t b;
    int32_t i;
    uint32_t u;
    int64_t l;
    float f;
    double d;
    hn_dptr p;
    _Alignas(16) unsigned char bytes[HN_MAX_STRUCT_BYTES]; /* a struct's (16-aligned, as a float4 member wants) */
} hn_argval;
int hn_pack_args(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_dptr debug_counter,
                 int append_counter, hn_argval *vals, void **args, int *n_args, hn_err *err);

/* Checks launch `launch`'s bound arguments against its kernel's declared parameters (where
 * the backend can tell them). */
int hn_check_signature(const hn_plan *p, const hn_variant *v, int launch, hn_backend *be, hn_kernel *k,
                       int append_counter, hn_err *err);

/* The check of a row: every output buffer against its reference with its own
 * tolerances; the row passes when every output reaches its min_match. */
typedef struct {
    hn_check_result worst;  /* of the output that did worst (lowest match fraction) */
    int worst_buffer;       /* its index in op->buffers; -1 when a variant was given no output (failed) */
    double atol, rtol;      /* its tolerances */
    double min_match;       /* its min_match */
    int passed;             /* every output reached its min_match */
    int n_outputs;
} hn_row_check;

/* Whether variant v passes buffer `buffer` to its kernel. */
int hn_variant_binds(const hn_plan *p, const hn_variant *v, int buffer);
/* The FLOP and bytes of a row of variant v (NULL: a baseline, the whole
 * operator): a kernel given only some of the operator's buffers counts those
 * (see hn_op.flop_of). */
void hn_row_work(const hn_plan *p, const hn_workload *w, const hn_variant *v, double *flop, double *bytes);

/* Downloads every output buffer of w and checks each against its reference with
 * the plan's tolerances for (case, variant): for a variant, the outputs its
 * kernel is given (an operator with several outputs may be computed by several
 * kernels, one output each); for a baseline (v NULL, b the operator's baseline),
 * the outputs it declares it writes (hn_op_baseline.outputs); with v and b both
 * NULL, every output. */
int hn_check_outputs(hn_workload *w, const hn_variant *v, const hn_op_baseline *b, hn_row_check *rc, hn_err *err);

/* Compares every input buffer on the device with the generated one and
 * re-uploads any that differ. Returns the first buffer a kernel wrote into
 * (with how many bytes differ in *n_diff), -1 if none, -2 on error. */
int hn_verify_inputs(hn_workload *w, size_t *n_diff, hn_err *err);
/* Fills every output buffer with 0xFF bytes (NaN for floats), so elements a
 * kernel never writes show up as NaN, and the current scratch buffers too;
 * those of zero (bit i: buffer i, bit HN_ZERO_SCRATCH(i): scratch i, the
 * variant's "zero") are set to 0 instead. An in-out buffer gets its generated
 * input back instead (the state the reference started from). */
int hn_poison_outputs(hn_workload *w, uint64_t zero, hn_err *err);
/* Sets the output and scratch buffers of zero to 0: before every launch of a
 * variant with "zero", outside any timed interval. */
int hn_zero_outputs(hn_workload *w, uint64_t zero, hn_err *err);

/* Enqueues one unit of measured work on the backend's stream. */
typedef int (*hn_issue_fn)(void *ctx, hn_err *err);

typedef struct {
    int hot;               /* back-to-back batches instead of a cold L2 per sample */
    double default_mhz;    /* the device's default SM clock; <= 0 unknown */
    FILE *samples_csv;     /* every kept sample's time is appended here (or NULL) */
    const char *row_name;  /* for the samples file */
    /* Called before every sample, outside the timed interval (e.g. to restore
     * inputs a kernel overwrites); may be NULL. */
    hn_issue_fn restore;
    void *restore_ctx;
} hn_measure_opts;

typedef struct {
    const char *stop;      /* the stopping rule that ended sampling */
    double clock_mhz;      /* mean SM clock over the kept samples; < 0 unknown */
    double wall_seconds;
} hn_measure_result;

/* Takes samples of issue() until the sampler's stopping rule holds: per sample,
 * flush L2 (cold), record an event, issue, record an event, read the elapsed
 * time; every ~5 ms of wall time the SM clock is probed (outside the timed
 * interval) and samples taken under the sampler's clock threshold are discarded.
 * The sampler is reset first; its statistics are the result. */
int hn_measure(hn_backend *be, const hn_measure_opts *o, hn_sampler *s, hn_issue_fn issue, void *ctx,
               hn_measure_result *res, hn_err *err);

/* Fills the check columns of a row (the worst output's figures, and which output
 * that was). */
void hn_row_check_columns(hn_csv *csv, const hn_workload *w, const hn_row_check *rc);

/* The precision of variant v ("float" when the config gives none) for a case. */
/* The reason of a row whose variant was given none of the operator's outputs. */
void hn_op_outputs_text(const hn_op *op, char *buf, size_t size);
void hn_variant_precision(const hn_plan *p, const hn_variant *v, const hn_workload *w, char *out, size_t size);
/* Fills the timing columns of a row from a finished sampler. */
void hn_row_stats_columns(hn_csv *csv, const hn_sampler *s, const hn_measure_result *mr);

/* The first line of a compiler log that says "error" (or the first line). */
void hn_first_error_line(const char *log, char *out, size_t size);

/* "name" made safe for file names. */
void hn_sanitize_name(const char *in, char *out, size_t size);

#endif
