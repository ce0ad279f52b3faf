/*
 * run.c: `harness run CONFIG`: compile every variant (in parallel threads, while
 * the device already measures the first ones), then for each case build the
 * workload once (inputs, fp64 reference, device buffers) and for each variant:
 * geometry, arguments, warm-up, check, timed samples until the stopping rule
 * holds, check again; one CSV row per (case, variant), written and flushed as it
 * finishes. Ends with a summary, the ranked verdict, and where the time went.
 *
 * A failing variant is a row, not a crash: compile errors, geometry over the
 * device's limits, launch faults and mismatches get their status and reason and
 * the sweep goes on.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "commands.h"
#include "csv.h"
#include "npy.h"
#include "peak.h"
#include "run.h"
#include "sweep.h"

/* Default budget of the emulator: cases above this many GFLOP are skipped unless
 * --all (keeps the README's main command near a minute on 2 cores). */
#define HN_EMU_DEFAULT_MAX_GFLOP 0.05

/* ---------------------------------------------------------------------- */
/* compiling in the background */

typedef struct {
    hn_build build;
    hn_module_image img;
    int selected;
    int done;
    int ok;
    char reason[sizeof(hn_err)];
    hn_kernel *kernel;
    int loaded;     /* kernel_load attempted */
    int usable;     /* compiled, loaded and signature checked */
} slot;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    slot *slots;
    int n;
    int next;
    hn_target target;
    double busy_seconds;  /* compiler work, summed over threads */
    double wait_seconds;  /* time the run loop waited for a compile */
} compile_pool;

static void *compile_worker(void *arg) {
    compile_pool *cp = arg;
    for (;;) {
        pthread_mutex_lock(&cp->mu);
        while (cp->next < cp->n && !cp->slots[cp->next].selected) cp->next++;
        int i = cp->next++;
        pthread_mutex_unlock(&cp->mu);
        if (i >= cp->n) break;
        slot *s = &cp->slots[i];
        hn_err err;
        char *log = NULL;
        int rc = hn_compile(cp->target, &s->build.req, &s->img, &log, &err);
        pthread_mutex_lock(&cp->mu);
        s->ok = rc == 0;
        if (rc != 0) {
            /* The reason is the first error line; the full log goes to stderr later. */
            char line[512];
            hn_first_error_line(log && *log ? log : err.msg, line, sizeof line);
            snprintf(s->reason, sizeof s->reason, "%s", line);
            fprintf(stderr, "harness: compile error in %s:\n%s\n", s->build.req.src_path, err.msg);
        }
        free(log);
        cp->busy_seconds += s->img.seconds;
        s->done = 1;
        pthread_cond_broadcast(&cp->cv);
        pthread_mutex_unlock(&cp->mu);
    }
    return NULL;
}

/* Waits for slot i; the time spent waiting is compile time not hidden behind
 * measuring. */
static void pool_wait(compile_pool *cp, int i) {
    double t0 = hn_now();
    pthread_mutex_lock(&cp->mu);
    while (!cp->slots[i].done) pthread_cond_wait(&cp->cv, &cp->mu);
    pthread_mutex_unlock(&cp->mu);
    cp->wait_seconds += hn_now() - t0;
}

/* ---------------------------------------------------------------------- */

typedef struct {
    const hn_cli *cli;
    hn_plan *plan;
    hn_backend *be;
    hn_device_info dev;
    int is_emu;
    hn_sampling_opts sampling;
    int hot;
    double max_gflop;       /* emu budget; < 0 none */
    hn_csv *csv;
    FILE *samples_csv;
    compile_pool pool;
    pthread_t *threads;
    int n_threads;
    double peak_fp32, peak_fp64, peak_bw;
    /* summary */
    int *n_status;          /* [variant][status] */
    double *times;          /* [case][variant] median ms of ok rows, NAN otherwise */
    int64_t n_cases;
    double t_ref, t_transfer, t_check, t_kernel, t_gen;
    int progress;
    int any_failure;
    int n_skipped_budget;
    hn_baseline *baseline;
    int has_double;         /* some variant accumulates in double: measure DGEMM too */
    int row_ran;            /* the last run_variant downloaded its outputs */
} run_ctx;

enum { ST_OK = HN_ST_OK, ST_MISMATCH = HN_ST_MISMATCH, ST_COMPILE = HN_ST_COMPILE, ST_LAUNCH = HN_ST_LAUNCH,
       ST_SKIPPED = HN_ST_SKIPPED, ST_COUNT = HN_ST_COUNT };
const char *const hn_status_names[HN_ST_COUNT] = {"ok", "mismatch", "compile_error", "launch_error", "skipped"};
#define STATUS hn_status_names

static void build_columns(run_ctx *r, const char ***cols_out, int *n_out) {
    const hn_plan *p = r->plan;
    int cap = 96 + p->n_axes + p->n_define_names;
    const char **cols = xcalloc((size_t)cap, sizeof *cols);
    int n = 0;
    cols[n++] = "case";
    for (int a = 0; a < p->n_axes; a++) cols[n++] = p->axes[a].name;
    cols[n++] = "label";
    cols[n++] = "variant";
    cols[n++] = "kernel";
    for (int d = 0; d < p->n_define_names; d++) cols[n++] = p->define_names[d];
    static const char *const REST[] = {
        "backend", "device", "arch", "status", "reason", "grid", "block", "shared_bytes",
        "registers", "spill_bytes", "checked", "match_fraction", "max_abs_err", "max_rel_err",
        "nonfinite", "atol", "rtol", "timing", "samples", "discarded", "stop", "time_mean_ms",
        "time_median_ms", "time_min_ms", "time_max_ms", "time_q1_ms", "time_q3_ms",
        "time_noise_pct", "flop", "bytes", "gflops", "gbps", "peak_gflops", "peak_gbps",
        "flops_peak_pct", "bw_peak_pct", "speedup_vs_cublas", "clock_mhz", "sm_clock_mhz", "sms",
        "l2_bytes", "compile_s"};
    for (size_t i = 0; i < HN_ARRAY_LEN(REST); i++) cols[n++] = REST[i];
    *cols_out = cols;
    *n_out = n;
}

/* Fills the columns every row of a case shares. */
static void row_case(run_ctx *r, const hn_case *c, const hn_workload *w) {
    hn_csv *csv = r->csv;
    hn_csv_setf_named(csv, "case", "%lld", (long long)c->id);
    for (int a = 0; a < r->plan->n_axes; a++) {
        char buf[64];
        hn_value_format(&c->values[a], buf, sizeof buf);
        hn_csv_set_named(csv, r->plan->axes[a].name, buf);
    }
    if (w) {
        hn_csv_set_named(csv, "label", w->label);
        hn_csv_setf_named(csv, "flop", "%.0f", w->flop);
        hn_csv_setf_named(csv, "bytes", "%.0f", w->bytes);
    }
    hn_csv_set_named(csv, "backend", r->be->ops->name);
    hn_csv_set_named(csv, "device", r->dev.name);
    hn_csv_set_named(csv, "arch", r->dev.arch);
    hn_csv_setf_named(csv, "sms", "%d", r->dev.sm_count);
    if (r->dev.sm_clock_khz) hn_csv_setf_named(csv, "sm_clock_mhz", "%d", r->dev.sm_clock_khz / 1000);
    if (r->dev.l2_bytes) hn_csv_setf_named(csv, "l2_bytes", "%zu", r->dev.l2_bytes);
    if (r->peak_bw > 0) hn_csv_setf_named(csv, "peak_gbps", "%.1f", r->peak_bw);
}

static void row_variant(run_ctx *r, const hn_variant *v) {
    const hn_plan *p = r->plan;
    hn_csv_set_named(r->csv, "variant", v->label);
    hn_csv_set_named(r->csv, "kernel", p->specs[v->spec].kernel);
    for (int d = 0; d < p->n_define_names; d++) {
        const char *val = hn_variant_define(p, v, p->define_names[d]);
        if (val) hn_csv_set_named(r->csv, p->define_names[d], val);
    }
}

static void finish_row(run_ctx *r, int vi, int status, const char *reason) {
    hn_csv_set_named(r->csv, "status", STATUS[status]);
    if (reason && *reason) hn_csv_set_named(r->csv, "reason", reason);
    hn_err err;
    if (hn_csv_write_row(r->csv, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        r->any_failure = 1;
    }
    if (vi >= 0) r->n_status[vi * ST_COUNT + status]++;
    if (status == ST_MISMATCH || status == ST_COMPILE || status == ST_LAUNCH) r->any_failure = 1;
}

void hn_row_stats_columns(hn_csv *csv, const hn_sampler *s, const hn_measure_result *mr) {
    hn_stats st;
    hn_sampler_stats(s, &st);
    hn_csv_setf_named(csv, "samples", "%d", st.n);
    hn_csv_setf_named(csv, "discarded", "%d", hn_sampler_discarded(s));
    hn_csv_set_named(csv, "stop", mr->stop);
    if (mr->clock_mhz > 0) hn_csv_setf_named(csv, "clock_mhz", "%.0f", mr->clock_mhz);
    if (st.n == 0) return;
    hn_csv_setf_named(csv, "time_mean_ms", "%.6g", st.mean * 1e3);
    hn_csv_setf_named(csv, "time_median_ms", "%.6g", st.median * 1e3);
    hn_csv_setf_named(csv, "time_min_ms", "%.6g", st.min * 1e3);
    hn_csv_setf_named(csv, "time_max_ms", "%.6g", st.max * 1e3);
    hn_csv_setf_named(csv, "time_q1_ms", "%.6g", st.q1 * 1e3);
    hn_csv_setf_named(csv, "time_q3_ms", "%.6g", st.q3 * 1e3);
    hn_csv_setf_named(csv, "time_noise_pct", "%.3g", st.rel_stdev * 100.0);
}

typedef struct {
    hn_backend *be;
    hn_kernel *k;
    const hn_launch_dims *d;
    void **args;
} launch_ctx;

static int issue_launch(void *ctx, hn_err *err) {
    launch_ctx *l = ctx;
    return l->be->ops->launch(l->be, l->k, l->d, l->args, err);
}

/* Uploads the generated contents of every buffer a kernel both reads and writes,
 * so each sample starts from the same inputs. */
static int restore_inouts(void *ctx, hn_err *err) {
    hn_workload *w = ctx;
    const hn_op *op = w->plan->op;
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role != HN_BUF_INOUT) continue;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(op->buffers[i].dtype);
        if (w->be->ops->upload(w->be, w->dev[i], w->inout_copy[i], bytes, err) != 0) return -1;
    }
    return 0;
}

void hn_row_check_columns(hn_csv *csv, const hn_check_result *cr, const hn_ref *ref, double atol,
                          double rtol) {
    hn_csv_set_named(csv, "checked", ref->method);
    hn_csv_setf_named(csv, "match_fraction", "%.6f", cr->match_fraction);
    hn_csv_setf_named(csv, "max_abs_err", "%.3g", cr->max_abs_err);
    hn_csv_setf_named(csv, "max_rel_err", "%.3g", cr->max_rel_err);
    hn_csv_setf_named(csv, "nonfinite", "%lld", (long long)cr->nonfinite);
    hn_csv_setf_named(csv, "atol", "%.3g", atol);
    hn_csv_setf_named(csv, "rtol", "%.3g", rtol);
}

/* The reference of the first output buffer (for the "checked" column). */
const hn_ref *hn_workload_first_ref(const hn_workload *w) {
    for (int i = 0; i < w->plan->op->n_buffers; i++)
        if (w->plan->op->buffers[i].role != HN_BUF_IN) return &w->refs[i];
    return &w->refs[0];
}

static void mismatch_reason(const hn_check_result *cr, const char *when, double min_match, char *buf,
                            size_t size) {
    snprintf(buf, size, "%s: %.4f%% of %lld elements match (need %.4g%%), %lld NaN/Inf, max abs err %.3g",
             when, cr->match_fraction * 100.0, (long long)cr->checked, min_match * 100.0,
             (long long)cr->nonfinite, cr->max_abs_err);
}

/* One row with the same status and reason for every selected variant of a case
 * (a case that cannot be set up, or one over the emulator's budget). */
static void rows_for_all(run_ctx *r, const hn_case *c, const hn_workload *w, int status, const char *reason) {
    for (int v = 0; v < r->plan->n_variants; v++) {
        if (!r->pool.slots[v].selected) continue;
        row_case(r, c, w);
        row_variant(r, &r->plan->variants[v]);
        finish_row(r, v, status, reason);
    }
}

/* Runs variant vi on workload w and writes its row. */
static void run_variant(run_ctx *r, hn_workload *w, int ci, int vi, hn_sampler *sampler) {
    hn_plan *p = r->plan;
    hn_variant *v = &p->variants[vi];
    slot *sl = &r->pool.slots[vi];
    hn_csv *csv = r->csv;
    row_case(r, w->c, w);
    row_variant(r, v);
    hn_err err;
    char reason[1536];
    r->row_ran = 0;

    const char *failed = NULL;
    int applies = hn_sweep_variant_applies(p, v, w->c, w->params, &failed, &err);
    if (applies < 0) { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    if (applies == 0) {
        snprintf(reason, sizeof reason, "where '%s' is false", failed);
        { finish_row(r, vi, ST_SKIPPED, reason); return; }
    }

    pool_wait(&r->pool, vi);
    hn_csv_setf_named(csv, "compile_s", "%.3f", sl->img.seconds);
    if (!sl->ok) { finish_row(r, vi, ST_COMPILE, sl->reason); return; }
    if (sl->img.res && sl->img.res[0].registers >= 0) {
        hn_csv_setf_named(csv, "registers", "%d", sl->img.res[0].registers);
        hn_csv_setf_named(csv, "spill_bytes", "%d", sl->img.res[0].spill_stores + sl->img.res[0].spill_loads);
    }
    if (!sl->loaded) {
        sl->loaded = 1;
        if (r->be->ops->kernel_load(r->be, &sl->img, 0, &sl->kernel, &err) != 0 ||
            hn_check_signature(p, v, r->be, sl->kernel, 0, &err) != 0) {
            snprintf(sl->reason, sizeof sl->reason, "%s", err.msg);
        } else {
            sl->usable = 1;
        }
    }
    if (!sl->usable) { finish_row(r, vi, ST_LAUNCH, sl->reason); return; }

    hn_launch_dims d;
    if (hn_eval_geometry(p, v, w, &d, &err) != 0) { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    hn_csv_setf_named(csv, "grid", "%ux%ux%u", d.grid[0], d.grid[1], d.grid[2]);
    hn_csv_setf_named(csv, "block", "%ux%ux%u", d.block[0], d.block[1], d.block[2]);
    hn_csv_setf_named(csv, "shared_bytes", "%zu", d.shared_bytes);
    hn_argval vals[72];
    void *args[72];
    int n_args = 0;
    if (p->specs[v->spec].n_args > 64) { finish_row(r, vi, ST_LAUNCH, "more than 64 arguments"); return; }
    if (hn_pack_args(p, v, w, 0, 0, vals, args, &n_args, &err) != 0)
        { finish_row(r, vi, ST_LAUNCH, err.msg); return; }

    /* Warm-up launches, then the first check. */
    if (hn_poison_outputs(w, &err) != 0) { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    int warmup = r->sampling.warmup > 0 ? r->sampling.warmup : 1;
    for (int i = 0; i < warmup; i++)
        if (r->be->ops->launch(r->be, sl->kernel, &d, args, &err) != 0 || r->be->ops->sync(r->be, &err) != 0)
            { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    hn_check_result cr;
    double atol, rtol;
    double tc = hn_now();
    if (hn_check_outputs(w, v, &cr, &atol, &rtol, &err) != 0) { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    r->row_ran = 1;
    r->t_check += hn_now() - tc;
    hn_row_check_columns(csv, &cr, hn_workload_first_ref(w), atol, rtol);
    int status = cr.match_fraction >= p->min_match ? ST_OK : ST_MISMATCH;
    reason[0] = '\0';
    if (status == ST_MISMATCH) mismatch_reason(&cr, "first check", p->min_match, reason, sizeof reason);

    /* Timed samples (warm-up already done: the sampler keeps every add). */
    hn_csv_set_named(csv, "timing", r->is_emu ? "emu-wall" : r->hot ? "hot" : "cold");
    launch_ctx lc = {r->be, sl->kernel, &d, args};
    hn_measure_opts mo = {.hot = r->hot, .default_mhz = r->dev.sm_clock_khz / 1000.0,
                          .samples_csv = r->samples_csv};
    char row_name[256];
    snprintf(row_name, sizeof row_name, "case %d %s", ci, v->label);
    mo.row_name = row_name;
    for (int i = 0; i < p->op->n_buffers; i++)
        if (p->op->buffers[i].role == HN_BUF_INOUT) mo.restore = restore_inouts, mo.restore_ctx = w;
    hn_measure_result mr;
    if (hn_measure(r->be, &mo, sampler, issue_launch, &lc, &mr, &err) != 0)
        { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    hn_stats st;
    hn_sampler_stats(sampler, &st);
    r->t_kernel += hn_sampler_total(sampler);
    hn_row_stats_columns(csv, sampler, &mr);

    /* Check again: some kernels pass once and corrupt later. */
    hn_check_result cr2;
    tc = hn_now();
    if (hn_check_outputs(w, v, &cr2, &atol, &rtol, &err) != 0) { finish_row(r, vi, ST_LAUNCH, err.msg); return; }
    r->t_check += hn_now() - tc;
    if (status == ST_OK && cr2.match_fraction < p->min_match) {
        status = ST_MISMATCH;
        hn_row_check_columns(csv, &cr2, hn_workload_first_ref(w), atol, rtol);
        mismatch_reason(&cr2, "passed before timing, failed after", p->min_match, reason, sizeof reason);
    }

    if (st.n > 0) {
        double sec = st.median;
        double gflops = w->flop / sec * 1e-9, gbps = w->bytes / sec * 1e-9;
        hn_csv_setf_named(csv, "gflops", "%.4g", gflops);
        hn_csv_setf_named(csv, "gbps", "%.4g", gbps);
        const char *acc = hn_variant_define(p, v, "ACCUM_DTYPE");
        int dbl = acc && strcmp(acc, "double") == 0;
        double peak = dbl ? r->peak_fp64 : r->peak_fp32;
        if (peak > 0 && !r->is_emu) {
            hn_csv_setf_named(csv, "peak_gflops", "%.1f", peak);
            hn_csv_setf_named(csv, "flops_peak_pct", "%.3g", gflops / peak * 100.0);
        }
        if (r->peak_bw > 0 && !r->is_emu) hn_csv_setf_named(csv, "bw_peak_pct", "%.3g", gbps / r->peak_bw * 100.0);
        /* Against the baseline of the same precision. */
        double base = hn_baseline_last_ms(r->baseline, dbl ? HN_BASELINE_DGEMM : HN_BASELINE_SGEMM);
        if (base > 0) hn_csv_setf_named(csv, "speedup_vs_cublas", "%.4g", base / (sec * 1e3));
        if (status == ST_OK) r->times[(int64_t)ci * p->n_variants + vi] = sec * 1e3;
    }
    finish_row(r, vi, status, reason);
}

/* ---------------------------------------------------------------------- */

static void print_progress(run_ctx *r, int64_t ci, const char *label) {
    if (!r->progress) return;
    fprintf(stderr, "\r\033[K[%lld/%lld] %s", (long long)ci + 1, (long long)r->n_cases, label);
    fflush(stderr);
}

static void save_tensors(run_ctx *r, const hn_workload *w, int vi_or_minus1) {
    const hn_op *op = r->plan->op;
    char *dir = xasprintf("%s/case-%lld", r->cli->save_tensors, (long long)w->c->id);
    hn_err err;
    if (hn_mkdirs(dir, &err) != 0) {
        fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        free(dir);
        return;
    }
    for (int i = 0; i < op->n_buffers; i++) {
        int64_t shape[1] = {w->counts[i]};
        const char *descr = op->buffers[i].dtype == HN_DT_F64 ? "<f8" : op->buffers[i].dtype == HN_DT_I32 ? "<i4" : "<f4";
        char *path = NULL;
        if (vi_or_minus1 < 0 && op->buffers[i].role != HN_BUF_OUT) {
            path = xasprintf("%s/%s.npy", dir, op->buffers[i].name);
        } else if (vi_or_minus1 >= 0 && op->buffers[i].role != HN_BUF_IN) {
            char safe[256];
            hn_sanitize_name(r->plan->variants[vi_or_minus1].label, safe, sizeof safe);
            path = xasprintf("%s/%s.%s.npy", dir, op->buffers[i].name, safe);
            if (!r->row_ran) {
                /* A row that never ran has no output: not this run's, and not a
                 * stale file from an earlier run either. */
                unlink(path);
                free(path);
                continue;
            }
        } else if (vi_or_minus1 < 0) {
            /* The reference of an output buffer. */
            const hn_ref *ref = &w->refs[i];
            char *p1 = xasprintf("%s/%s.reference.npy", dir, op->buffers[i].name);
            int64_t n[1] = {ref->n};
            hn_npy_write(p1, "<f8", ref->index ? n : shape, 1, ref->values, 8, &err);
            free(p1);
            if (ref->index) {
                p1 = xasprintf("%s/%s.reference_index.npy", dir, op->buffers[i].name);
                hn_npy_write(p1, "<i8", n, 1, ref->index, 8, &err);
                free(p1);
            }
            continue;
        }
        if (path && hn_npy_write(path, descr, shape, 1, w->host[i], hn_dtype_size(op->buffers[i].dtype), &err) != 0)
            fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        free(path);
    }
    free(dir);
}

static double geomean(const double *x, int64_t n, int64_t stride) {
    double s = 0;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = x[i * stride];
        if (v > 0 && isfinite(v)) s += log(v), k++;
    }
    return k ? exp(s / (double)k) : NAN;
}

/* Opens <out>.best.csv: per case, the fastest correct variant (the autotuning
 * answer as data); NULL if it cannot be created. */
static hn_csv *open_best(run_ctx *r, const char *out_path) {
    const hn_plan *p = r->plan;
    const char **cols = xcalloc((size_t)(p->n_axes + p->n_define_names + 8), sizeof *cols);
    int n = 0;
    cols[n++] = "case";
    for (int a = 0; a < p->n_axes; a++) cols[n++] = p->axes[a].name;
    cols[n++] = "label";
    cols[n++] = "best_variant";
    cols[n++] = "kernel";
    for (int d = 0; d < p->n_define_names; d++) cols[n++] = p->define_names[d];
    cols[n++] = "time_median_ms";
    cols[n++] = "runner_up";
    cols[n++] = "margin";
    size_t len = strlen(out_path);
    char *path = len > 4 && strcmp(out_path + len - 4, ".csv") == 0
                     ? xasprintf("%.*s.best.csv", (int)(len - 4), out_path)
                     : xasprintf("%s.best.csv", out_path);
    hn_csv *csv = NULL;
    hn_err err;
    if (hn_csv_open(path, cols, n, &csv, &err) != 0) fprintf(stderr, "harness: %s\n", err.msg);
    else printf("best variant per case: %s\n", path);
    free(path);
    free(cols);
    return csv;
}

static void print_summary(run_ctx *r, double wall, const char *out_path) {
    double compile_wall = r->pool.wait_seconds;
    hn_plan *p = r->plan;
    int nv = p->n_variants;
    hn_csv *best_csv = open_best(r, out_path);
    int *wins = xcalloc((size_t)nv, sizeof *wins);
    printf("\n%-48s %5s %8s %8s %8s %8s %12s %5s\n", "variant", "ok", "mismatch", "compile", "launch",
           "skipped", "geomean ms", "wins");
    for (int64_t c = 0; c < r->n_cases; c++) {
        int best = -1;
        for (int v = 0; v < nv; v++) {
            double t = r->times[c * nv + v];
            if (isfinite(t) && (best < 0 || t < r->times[c * nv + best])) best = v;
        }
        if (best >= 0) wins[best]++;
    }
    for (int v = 0; v < nv; v++) {
        if (!r->pool.slots[v].selected) continue;
        int *st = &r->n_status[v * ST_COUNT];
        printf("%-48s %5d %8d %8d %8d %8d %12.4g %5d\n", p->variants[v].label, st[ST_OK], st[ST_MISMATCH],
               st[ST_COMPILE], st[ST_LAUNCH], st[ST_SKIPPED], geomean(&r->times[v], r->n_cases, nv), wins[v]);
    }
    /* The verdict: per case, the fastest correct variant and its margin. */
    printf("\nfastest correct variant per case%s:\n", r->is_emu ? " (CPU-emulated times: not GPU speed)" : "");
    int shown = 0;
    for (int64_t c = 0; c < r->n_cases; c++) {
        int best = -1, second = -1;
        for (int v = 0; v < nv; v++) {
            double t = r->times[c * nv + v];
            if (!isfinite(t)) continue;
            if (best < 0 || t < r->times[c * nv + best]) second = best, best = v;
            else if (second < 0 || t < r->times[c * nv + second]) second = v;
        }
        if (best < 0) continue;
        hn_workload w;
        hn_err err;
        char label[128] = "";
        if (hn_workload_shape(&w, p, &p->cases[c], &err) == 0) snprintf(label, sizeof label, "%s", w.label);
        double tb = r->times[c * nv + best];
        if (best_csv) {
            const hn_variant *v = &p->variants[best];
            hn_csv_setf_named(best_csv, "case", "%lld", (long long)c);
            for (int a = 0; a < p->n_axes; a++) {
                char buf[64];
                hn_value_format(&p->cases[c].values[a], buf, sizeof buf);
                hn_csv_set_named(best_csv, p->axes[a].name, buf);
            }
            hn_csv_set_named(best_csv, "label", label);
            hn_csv_set_named(best_csv, "best_variant", v->label);
            hn_csv_set_named(best_csv, "kernel", p->specs[v->spec].kernel);
            for (int d = 0; d < p->n_define_names; d++)
                hn_csv_set_named(best_csv, p->define_names[d], hn_variant_define(p, v, p->define_names[d]));
            hn_csv_setf_named(best_csv, "time_median_ms", "%.6g", tb);
            if (second >= 0) {
                hn_csv_set_named(best_csv, "runner_up", p->variants[second].label);
                hn_csv_setf_named(best_csv, "margin", "%.4g", r->times[c * nv + second] / tb);
            }
            hn_csv_write_row(best_csv, &err);
        }
        if (second >= 0)
            printf("  case %-4lld %-28s %-44s %10.4g ms  %.2fx faster than %s\n", (long long)c, label,
                   p->variants[best].label, tb, r->times[c * nv + second] / tb, p->variants[second].label);
        else
            printf("  case %-4lld %-28s %-44s %10.4g ms\n", (long long)c, label, p->variants[best].label, tb);
        shown++;
    }
    if (!shown) printf("  none (no variant ran correctly)\n");
    int top = -1;
    for (int v = 0; v < nv; v++)
        if (wins[v] && (top < 0 || wins[v] > wins[top])) top = v;
    if (top >= 0) printf("overall: %s is fastest in %d of %d cases\n", p->variants[top].label, wins[top], shown);
    printf("\ntime: %.1f s wall = waiting for compiles %.1f s (%.1f s of compiler work in %d threads) + reference %.1f s + "
           "inputs %.1f s + transfers %.1f s + checking %.1f s + measured kernels %.1f s + other %.1f s\n",
           wall, compile_wall, r->pool.busy_seconds, r->n_threads, r->t_ref, r->t_gen, r->t_transfer, r->t_check,
           r->t_kernel,
           wall - compile_wall - r->t_ref - r->t_gen - r->t_transfer - r->t_check - r->t_kernel);
    hn_csv_close(best_csv);
    free(wins);
}

/* Merges config and command line into sampling options. */
static int sampling_options(run_ctx *r, hn_err *err) {
    const hn_cli *cli = r->cli;
    const hn_timing_cfg *t = &r->plan->timing;
    hn_sampling_opts *o = &r->sampling;
    /* The base: --quick, else the emulator's quick preset (its times are CPU
     * times, worth few samples), else nvbench's rules. The config's timing
     * applies over the base on every backend, unless --quick asked for the
     * preset; single options on the command line win over both. */
    if (cli->quick || r->is_emu) hn_sampling_quick(o);
    else hn_sampling_defaults(o);
    if (!cli->quick) {
        if (t->warmup >= 0) o->warmup = t->warmup;
        if (t->repeat > 0) {
            o->min_samples = o->max_samples = t->repeat;
            o->min_time = 0;
        }
        if (t->min_samples > 0) o->min_samples = t->min_samples;
        if (t->max_samples > 0) o->max_samples = t->max_samples;
        if (t->min_time >= 0) o->min_time = t->min_time;
        if (t->max_noise >= 0) o->max_noise = t->max_noise;
        if (t->timeout >= 0) o->timeout = t->timeout;
    }
    if (cli->warmup >= 0) o->warmup = cli->warmup;
    if (cli->min_samples > 0) o->min_samples = cli->min_samples;
    if (cli->max_samples > 0) o->max_samples = cli->max_samples;
    if (cli->min_time >= 0) o->min_time = cli->min_time;
    if (cli->max_noise >= 0) o->max_noise = cli->max_noise;
    if (cli->timeout >= 0) o->timeout = cli->timeout;
    if (o->max_samples < o->min_samples) o->max_samples = o->min_samples;
    r->hot = cli->hot || (t->hot == 1);
    /* The loop runs warm-up launches itself, untimed. */
    int warmup = o->warmup;
    hn_sampling_opts check = *o;
    check.warmup = 0;
    if (hn_sampling_check(&check, err) != 0) return -1;
    r->sampling = check;
    r->sampling.warmup = warmup;
    return 0;
}

int hn_cmd_run(const hn_cli *cli) {
    hn_err err;
    run_ctx r;
    memset(&r, 0, sizeof r);
    r.cli = cli;
    double t_start = hn_now();
    if (hn_plan_load(cli->config, cli->seed, &r.plan, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    hn_plan *p = r.plan;
    int exit_code = 1;
    char *out_path = NULL, *cache_dir = NULL;
    hn_sampler *sampler = NULL;
    const char **cols = NULL;

    hn_backend_opts bo = {.device = 0,
                          .emu_threads = cli->emu_threads,
                          .kernel_timeout = cli->kernel_timeout >= 0 ? cli->kernel_timeout : 60,
                          .printf_fifo = 0};
    if (hn_backend_create(cli->backend, &bo, !cli->quiet, &r.be, &err) != 0) {
        if (strcmp(cli->backend, "cuda") == 0)
            fprintf(stderr, "harness: no CUDA device found: %s\n(use --backend emu to run on the CPU emulator)\n", err.msg);
        else
            fprintf(stderr, "harness: %s\n", err.msg);
        hn_plan_free(p);
        return 2;
    }
    r.be->ops->device_info(r.be, &r.dev);
    r.is_emu = strcmp(r.be->ops->name, "emu") == 0;
    if (sampling_options(&r, &err) != 0) {
        fprintf(stderr, "harness: timing options: %s\n", err.msg);
        exit_code = 2;
        goto done;
    }
    r.max_gflop = -1;
    if (r.is_emu && !cli->all) {
        r.max_gflop = HN_EMU_DEFAULT_MAX_GFLOP;
        if (p->emu_max_gflop >= 0) r.max_gflop = p->emu_max_gflop;
        if (cli->max_gflop >= 0) r.max_gflop = cli->max_gflop;
    }
    if (!r.is_emu) {
        r.peak_fp32 = hn_peak_gflops(r.dev.cc_major, r.dev.cc_minor, r.dev.sm_count, r.dev.sm_clock_khz, 0);
        r.peak_fp64 = hn_peak_gflops(r.dev.cc_major, r.dev.cc_minor, r.dev.sm_count, r.dev.sm_clock_khz, 1);
        r.peak_bw = hn_peak_gbps(r.dev.mem_clock_khz, r.dev.mem_bus_width);
    }

    /* Which variants run. */
    int nv = p->n_variants;
    r.pool.slots = xcalloc((size_t)nv, sizeof *r.pool.slots);
    r.pool.n = nv;
    int n_selected = 0;
    for (int v = 0; v < nv; v++) {
        int sel = cli->n_only == 0;
        for (int k = 0; k < cli->n_only; k++) {
            int f = hn_plan_find_variant(p, cli->only[k]);
            if (f < 0) {
                fprintf(stderr, "harness: --variant %s: no such variant in %s\n", cli->only[k], p->path);
                exit_code = 2;
                goto done;
            }
            const hn_variant *fv = &p->variants[f];
            sel |= f == v || (strcmp(p->specs[fv->spec].name, cli->only[k]) == 0 &&
                                  p->variants[v].spec == fv->spec);
        }
        r.pool.slots[v].selected = sel;
        n_selected += sel;
    }
    int64_t first_case = 0, last_case = p->n_cases;
    if (cli->case_id >= 0) {
        if (cli->case_id >= p->n_cases) {
            fprintf(stderr, "harness: --case %lld: the plan has %lld cases (0 to %lld)\n",
                    (long long)cli->case_id, (long long)p->n_cases, (long long)p->n_cases - 1);
            exit_code = 2;
            goto done;
        }
        first_case = cli->case_id;
        last_case = cli->case_id + 1;
    }
    r.n_cases = p->n_cases;

    printf("%s: %lld cases (of %lld combinations, seed %llu) x %d variants = %lld rows on %s [%s]\n", p->name,
           (long long)(last_case - first_case), (long long)p->n_total, (unsigned long long)p->seed, n_selected,
           (long long)(last_case - first_case) * n_selected, r.dev.name, r.be->ops->name);
    if (!r.is_emu)
        printf("device: %s (%s), %d SMs, SM clock %d MHz, L2 %.0f MiB, memory %d MHz x %d bit: peak %.0f GB/s, "
               "%.1f TFLOP/s fp32, %.1f TFLOP/s fp64; driver %s\n",
               r.dev.name, r.dev.arch, r.dev.sm_count, r.dev.sm_clock_khz / 1000, (double)r.dev.l2_bytes / (1 << 20),
               r.dev.mem_clock_khz / 1000, r.dev.mem_bus_width, r.peak_bw, r.peak_fp32 / 1e3, r.peak_fp64 / 1e3,
               r.dev.driver_version);
    if (r.is_emu)
        printf("emulator: times are CPU wall-clock times of emulated kernels, not GPU speed%s\n",
               r.max_gflop >= 0 ? "; cases above the GFLOP budget are skipped (--all runs them)" : "");
    fflush(stdout);

    /* Output. */
    out_path = cli->out ? xstrdup(cli->out) : xasprintf("results/%s.csv", p->name);
    {
        char *dir = hn_dirname(out_path);
        if (hn_mkdirs(dir, &err) != 0) {
            fprintf(stderr, "harness: %s\n", err.msg);
            free(dir);
            exit_code = 2;
            goto done;
        }
        free(dir);
    }
    int n_cols;
    build_columns(&r, &cols, &n_cols);
    if (hn_csv_open(out_path, cols, n_cols, &r.csv, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        exit_code = 2;
        goto done;
    }
    if (cli->save_samples) {
        char *sp = xasprintf("%s.samples.csv", out_path);
        r.samples_csv = fopen(sp, "w");
        if (r.samples_csv) fprintf(r.samples_csv, "row,time_ms,clock_mhz\n");
        free(sp);
    }

    /* Compile in the background. */
    cache_dir = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    for (int v = 0; v < nv; v++)
        hn_build_init(&r.pool.slots[v].build, p, &p->variants[v], NULL, 0, r.is_emu ? NULL : r.dev.arch, cache_dir);
    r.pool.target = r.be->ops->target;
    pthread_mutex_init(&r.pool.mu, NULL);
    pthread_cond_init(&r.pool.cv, NULL);
    r.n_threads = cli->jobs > 0 ? cli->jobs : hn_cpu_count();
    if (r.n_threads > n_selected) r.n_threads = n_selected > 0 ? n_selected : 1;
    r.threads = xcalloc((size_t)r.n_threads, sizeof *r.threads);
    for (int i = 0; i < r.n_threads; i++) pthread_create(&r.threads[i], NULL, compile_worker, &r.pool);

    r.n_status = xcalloc((size_t)nv * ST_COUNT, sizeof *r.n_status);
    r.times = xmalloc((size_t)(p->n_cases ? p->n_cases : 1) * nv * sizeof *r.times);
    for (int64_t i = 0; i < p->n_cases * nv; i++) r.times[i] = NAN;
    r.progress = isatty(2) && !cli->quiet;
    {
        /* Warm-up launches are run (untimed) by run_variant; the sampler keeps all. */
        hn_sampling_opts so = r.sampling;
        so.warmup = 0;
        sampler = hn_sampler_create(&so, &err);
    }
    if (!sampler) {
        fprintf(stderr, "harness: %s\n", err.msg);
        exit_code = 2;
        goto join;
    }
    if (!r.is_emu && !cli->no_baseline) r.baseline = hn_baseline_create(p, r.be, &r.dev);
    for (int v = 0; v < nv; v++) {
        const char *acc = hn_variant_define(p, &p->variants[v], "ACCUM_DTYPE");
        r.has_double |= r.pool.slots[v].selected && acc && strcmp(acc, "double") == 0;
    }

    for (int64_t ci = first_case; ci < last_case; ci++) {
        hn_case *c = &p->cases[ci];
        hn_workload w;
        if (hn_workload_shape(&w, p, c, &err) != 0) {
            rows_for_all(&r, c, NULL, ST_LAUNCH, err.msg);
            continue;
        }
        print_progress(&r, ci - first_case, w.label);
        if (r.max_gflop >= 0 && w.flop * 1e-9 > r.max_gflop) {
            char reason[256];
            snprintf(reason, sizeof reason, "%.3g GFLOP is over the emulator budget of %g GFLOP (--max-gflop X or --all)",
                     w.flop * 1e-9, r.max_gflop);
            rows_for_all(&r, c, &w, ST_SKIPPED, reason);
            r.n_skipped_budget++;
            continue;
        }
        if (hn_workload_create(&w, p, c, r.be, p->reference_gflop, &err) != 0) {
            rows_for_all(&r, c, NULL, ST_LAUNCH, err.msg);
            continue;
        }
        r.t_ref += w.ref_seconds;
        r.t_gen += w.gen_seconds;
        r.t_transfer += w.upload_seconds;
        if (cli->save_tensors) save_tensors(&r, &w, -1);
        for (int k = 0; r.baseline && k < 2; k++) {
            if (k == HN_BASELINE_DGEMM && !r.has_double) continue;
            char reason[sizeof(hn_err)];
            row_case(&r, c, &w);
            int st = hn_baseline_run(r.baseline, (hn_baseline_kind)k, &w, r.csv, &r.sampling, r.hot, reason,
                                     sizeof reason);
            double ms = hn_baseline_last_ms(r.baseline, (hn_baseline_kind)k);
            double peak = k == HN_BASELINE_DGEMM ? r.peak_fp64 : r.peak_fp32;
            if (ms > 0) {
                hn_csv_setf_named(r.csv, "gflops", "%.4g", w.flop / ms * 1e-6);
                hn_csv_setf_named(r.csv, "gbps", "%.4g", w.bytes / ms * 1e-6);
                if (peak > 0) {
                    hn_csv_setf_named(r.csv, "peak_gflops", "%.1f", peak);
                    hn_csv_setf_named(r.csv, "flops_peak_pct", "%.3g", w.flop / ms * 1e-6 / peak * 100);
                }
                if (r.peak_bw > 0) hn_csv_setf_named(r.csv, "bw_peak_pct", "%.3g", w.bytes / ms * 1e-6 / r.peak_bw * 100);
                hn_csv_set_named(r.csv, "speedup_vs_cublas", "1");
            }
            finish_row(&r, -1, st, reason);
        }
        for (int v = 0; v < nv; v++) {
            if (!r.pool.slots[v].selected) continue;
            run_variant(&r, &w, (int)ci, v, sampler);
            if (cli->save_tensors) save_tensors(&r, &w, v);
        }
        hn_workload_free(&w);
    }
    if (r.progress) fprintf(stderr, "\r\033[K");
    exit_code = r.any_failure ? 1 : 0;
join:
    {
        double t_join = hn_now();
        for (int i = 0; i < r.n_threads; i++) pthread_join(r.threads[i], NULL);
        r.pool.wait_seconds += hn_now() - t_join;
    }
    if (exit_code != 2) {
        print_summary(&r, hn_now() - t_start, out_path);
        printf("results: %s\n", out_path);
        if (r.n_skipped_budget)
            printf("%d case%s skipped as over the emulator's budget of %g GFLOP; run them all with --all "
                   "(or raise --max-gflop)\n",
                   r.n_skipped_budget, r.n_skipped_budget == 1 ? " was" : "s were", r.max_gflop);
    }
    for (int v = 0; v < nv; v++) {
        slot *s = &r.pool.slots[v];
        if (s->kernel) r.be->ops->kernel_free(r.be, s->kernel);
        hn_module_image_free(&s->img);
        hn_build_free(&s->build);
    }
    pthread_mutex_destroy(&r.pool.mu);
    pthread_cond_destroy(&r.pool.cv);
done:
    hn_baseline_destroy(r.baseline);
    hn_sampler_destroy(sampler);
    if (r.samples_csv) fclose(r.samples_csv);
    hn_csv_close(r.csv);
    free(cols);
    free(r.threads);
    free(r.pool.slots);
    free(r.n_status);
    free(r.times);
    free(out_path);
    free(cache_dir);
    hn_backend_destroy(r.be);
    hn_plan_free(p);
    return exit_code;
}
