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
#include "config.h"
#include "stats.h"

typedef struct {
    hn_compile_req req;
    char **defines;
    int n_defines;
    const char *kernel;
} hn_build;

/* Builds the compile request of variant v: its defines, then extra (e.g.
 * "DEBUG", "SINGLE_BLOCK"), for arch (cuda) and cache_dir. */
void hn_build_init(hn_build *b, const hn_plan *p, const hn_variant *v, const char *const *extra,
                   int n_extra, const char *arch, const char *cache_dir);
void hn_build_free(hn_build *b);

typedef struct {
    const hn_plan *plan;
    const hn_case *c;
    double params[16];      /* the operator's parameters for this case */
    int64_t counts[8];      /* elements per operator buffer */
    void *host[8];          /* inputs as generated; outputs as last downloaded */
    hn_ref refs[8];         /* per output buffer */
    hn_dptr dev[8];
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

/* Evaluates a variant's launch geometry for a case. */
int hn_eval_geometry(const hn_plan *p, const hn_variant *v, const hn_workload *w,
                     hn_launch_dims *d, hn_err *err);

/* Packs the kernel arguments of v for w. vals must hold n_args + 1 slots; args
 * gets pointers into vals; debug_counter is the device counter (0 if none). Appends
 * the counter when append_counter is set and the config does not bind it. */
typedef union {
    int32_t i;
    uint32_t u;
    int64_t l;
    float f;
    double d;
    hn_dptr p;
} hn_argval;
int hn_pack_args(const hn_plan *p, const hn_variant *v, const hn_workload *w, hn_dptr debug_counter,
                 int append_counter, hn_argval *vals, void **args, int *n_args, hn_err *err);

/* Checks the bound arguments against the kernel's declared parameters (where
 * the backend can tell them). */
int hn_check_signature(const hn_plan *p, const hn_variant *v, hn_backend *be, hn_kernel *k,
                       int append_counter, hn_err *err);

/* Downloads every output buffer of w and checks it against the reference with
 * the plan's tolerances for (case, variant). res gets the worst buffer's result. */
int hn_check_outputs(hn_workload *w, const hn_variant *v, hn_check_result *res, double *atol,
                     double *rtol, hn_err *err);

/* Fills every output buffer with 0xFF bytes (NaN for floats), so elements a
 * kernel never writes show up as NaN. */
int hn_poison_outputs(hn_workload *w, hn_err *err);

/* The first line of a compiler log that says "error" (or the first line). */
void hn_first_error_line(const char *log, char *out, size_t size);

/* "name" made safe for file names. */
void hn_sanitize_name(const char *in, char *out, size_t size);

#endif
