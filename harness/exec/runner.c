/*
 * runner.c: the rows of a plan on one backend (see runner.h): background
 * compiles, per case the workload, per row the warm-up, checks, samples and the
 * inputs' integrity, each row handed to the sink as a CSV line.
 *
 * A failing variant is a row, not a crash: compile errors, geometry over the
 * device's limits, faults, time-outs and mismatches get their status and
 * reason. After a fault the runner returns HN_RUN_RESTART, so the rest runs in
 * a fresh process (the device, or the emulated address space, may be damaged).
 */
#define _GNU_SOURCE
#include "runner.h"

#include "pool.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "npy.h"
#include "profile.h"
#include "peak.h"
#include "sweep.h"

/* Default budget of the emulator: cases above this many GFLOP are skipped unless
 * --all (keeps the README's main command near a minute on 2 cores). */
#define HN_EMU_DEFAULT_MAX_GFLOP 0.05

/* The emulator's budget in bytes a case moves (MB), for memory-bound operators
 * whose FLOP say nothing of their cost (the config's emu.max_mb). */
#define HN_EMU_DEFAULT_MAX_MB 256.0

/* Blocks of a launch the profile records by default (--profile-blocks). */
#define HN_PROFILE_BLOCKS 8

/* The GPU the emulator's variants are also compiled for with NVRTC (--arch
 * chooses another), to report code a GPU's compiler would refuse. */
#define HN_NVRTC_CHECK_ARCH "sm_90"

/* Lines of kernel printf a launch may print in a run (--printf-lines). */
#define HN_RUN_PRINTF_LINES 100

const char *const hn_status_names[HN_ST_COUNT] = {"ok",    "mismatch", "compile_error", "launch_error",
                                                  "fault", "timeout",  "skipped",       "race",
                                                  "memcheck", "initcheck", "synccheck"};

int hn_status_failed(int status) {
    return status != HN_ST_OK && status != HN_ST_SKIPPED;
}

/* ---------------------------------------------------------------------- */
/* shared memory */

hn_run_shared *hn_run_shared_create(int64_t n_cases, int n_variants, int n_baselines) {
    int n_slots = n_variants + n_baselines;
    size_t n_c = (size_t)(n_cases ? n_cases : 1);
    size_t cells = n_c * (size_t)n_slots;
    size_t head = (sizeof(hn_run_shared) + 63) & ~(size_t)63;
    size_t bytes = head + cells * sizeof(double) + (size_t)n_variants * sizeof(int64_t) + 2 * cells + 2 * n_c +
                   (size_t)n_variants * (1 + HN_COMPILE_WHY);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    hn_run_shared *s = m;
    s->n_cases = n_cases;
    s->n_variants = n_variants;
    s->n_slots = n_slots;
    s->n_lanes = 1;
    char *p = (char *)m + head;
    s->median_ms = (volatile double *)p;
    p += cells * sizeof(double);
    s->timed_out = (volatile int64_t *)p;
    p += (size_t)n_variants * sizeof(int64_t);
    s->done = (volatile unsigned char *)p;
    p += cells;
    s->claim = (volatile unsigned char *)p;
    p += cells;
    s->owner = (volatile unsigned char *)p;
    p += n_c;
    s->in_run = (volatile unsigned char *)p;
    p += n_c;
    s->compile_failed = (volatile unsigned char *)p;
    p += n_variants;
    s->compile_why = (volatile char *)p;
    for (size_t i = 0; i < cells; i++) s->median_ms[i] = NAN;
    for (int v = 0; v < n_variants; v++) s->timed_out[v] = -1;
    for (size_t c = 0; c < n_c; c++) s->in_run[c] = 1;
    s->map_bytes = bytes;
    return s;
}

void hn_run_shared_destroy(hn_run_shared *s) {
    if (s) munmap(s, s->map_bytes);
}

void hn_run_shared_release(hn_run_shared *s, int lane) {
    size_t cells = (size_t)(s->n_cases ? s->n_cases : 1) * (size_t)s->n_slots;
    for (size_t i = 0; i < cells; i++) {
        unsigned char mine = (unsigned char)(lane + 1);
        if (!s->done[i]) __atomic_compare_exchange_n(&s->claim[i], &mine, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
}

int hn_run_shared_claim(hn_run_shared *s, int lane, int64_t c, int slot) {
    size_t i = (size_t)c * (size_t)s->n_slots + (size_t)slot;
    if (s->done[i]) return 0;
    unsigned char want = 0;
    if (!__atomic_compare_exchange_n(&s->claim[i], &want, (unsigned char)(lane + 1), 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST) &&
        want != lane + 1)
        return 0;
    return !s->done[i];
}

/* ---------------------------------------------------------------------- */
/* columns */

void hn_emu_budget(const hn_cli *cli, const hn_plan *p, int is_emu, double *max_gflop, double *max_mb) {
    *max_gflop = *max_mb = -1;
    if (!is_emu || cli->all) return;
    *max_gflop = HN_EMU_DEFAULT_MAX_GFLOP;
    if (p->emu_max_gflop >= 0) *max_gflop = p->emu_max_gflop;
    if (cli->max_gflop >= 0) *max_gflop = cli->max_gflop;
    *max_mb = p->emu_max_mb >= 0 ? p->emu_max_mb : HN_EMU_DEFAULT_MAX_MB;
}

int hn_emu_over_budget(double max_gflop, double max_mb, const hn_workload *w, char *reason, size_t size) {
    if (max_gflop >= 0 && w->flop * 1e-9 > max_gflop) {
        snprintf(reason, size,
                 "%.3g GFLOP is over the emulator budget of %g GFLOP (the config's emu.max_gflop, --max-gflop X, or "
                 "--all)",
                 w->flop * 1e-9, max_gflop);
        return 1;
    }
    if (max_mb >= 0 && w->bytes * 1e-6 > max_mb) {
        snprintf(reason, size, "%.3g MB to move is over the emulator budget of %g MB (the config's emu.max_mb, or --all)",
                 w->bytes * 1e-6, max_mb);
        return 1;
    }
    return 0;
}

const char **hn_run_columns(const hn_plan *p, int *n_out) {
    static const char *const REST[] = {
        "backend", "device", "device_index", "arch", "status", "reason", "grid", "block", "shared_bytes",
        "registers", "spill_bytes", "checked", "match_fraction", "max_abs_err", "max_rel_err",
        "nonfinite", "atol", "rtol", "timing", "samples", "discarded", "stop", "time_mean_ms",
        "time_median_ms", "time_min_ms", "time_max_ms", "time_q1_ms", "time_q3_ms",
        "time_noise_pct", "flop", "bytes", "gflops", "gbps", "peak_gflops", "peak_gbps",
        "flops_peak_pct", "bw_peak_pct", "clock_mhz", "sm_clock_mhz", "sms", "l2_bytes", "compile_s",
        "compile_key", "worst_output", "precision"};
    const hn_op *op = p->op;
    int cap = (int)HN_ARRAY_LEN(REST) + 5 + p->n_axes + p->n_define_names + op->n_baselines;
    const char **cols = xcalloc((size_t)cap, sizeof *cols);
    int n = 0;
    cols[n++] = "case";
    for (int a = 0; a < p->n_axes; a++) cols[n++] = p->axes[a].name;
    cols[n++] = "label";
    cols[n++] = "variant";
    cols[n++] = "kernel";
    for (int d = 0; d < p->n_define_names; d++) cols[n++] = p->define_names[d];
    if (p->n_tuned) cols[n++] = "tuned"; /* a --tuned variant's row: whose configuration it runs */
    for (size_t i = 0; i < HN_ARRAY_LEN(REST); i++) cols[n++] = REST[i];
    /* speedup_vs_<family>, once per library among the operator's baselines */
    for (int b = 0; b < op->n_baselines; b++) {
        int seen = 0;
        for (int k = 0; k < b; k++) seen |= strcmp(op->baselines[k].family, op->baselines[b].family) == 0;
        if (!seen) cols[n++] = hn_run_speedup_column(op->baselines[b].family);
    }
    *n_out = n;
    return cols;
}

const char *hn_run_speedup_column(const char *family) {
    /* interned, so the pointers stay valid for the whole run */
    static char names[16][48];
    static int n;
    for (int i = 0; i < n; i++)
        if (strcmp(names[i] + 11, family) == 0) return names[i];
    if (n == 16) return "speedup_vs_other";
    snprintf(names[n], sizeof names[n], "speedup_vs_%s", family);
    return names[n++];
}

void hn_run_row_case(hn_csv *csv, const hn_plan *p, const hn_case *c, const hn_workload *w,
                     const hn_run_device *d) {
    hn_csv_setf_named(csv, "case", "%lld", (long long)c->id);
    for (int a = 0; a < p->n_axes; a++) {
        char buf[64];
        hn_value_format(&c->values[a], buf, sizeof buf);
        hn_csv_set_named(csv, p->axes[a].name, buf);
    }
    if (w) {
        hn_csv_set_named(csv, "label", w->label);
        hn_csv_setf_named(csv, "flop", "%.0f", w->flop);
        hn_csv_setf_named(csv, "bytes", "%.0f", w->bytes);
    }
    hn_csv_set_named(csv, "backend", d->backend);
    hn_csv_set_named(csv, "device", d->dev.name);
    hn_csv_setf_named(csv, "device_index", "%d", d->index);
    hn_csv_set_named(csv, "arch", d->dev.arch);
    hn_csv_setf_named(csv, "sms", "%d", d->dev.sm_count);
    if (d->dev.sm_clock_khz) hn_csv_setf_named(csv, "sm_clock_mhz", "%d", d->dev.sm_clock_khz / 1000);
    if (d->dev.l2_bytes) hn_csv_setf_named(csv, "l2_bytes", "%zu", d->dev.l2_bytes);
    if (d->peak_bw > 0) hn_csv_setf_named(csv, "peak_gbps", "%.1f", d->peak_bw);
}

const char *hn_run_slot_name(const hn_plan *p, int slot) {
    return slot < p->n_variants ? p->variants[slot].label : p->op->baselines[slot - p->n_variants].name;
}

void hn_run_row_slot(hn_csv *csv, const hn_plan *p, int slot) {
    if (slot >= p->n_variants) {
        hn_csv_set_named(csv, "variant", hn_run_slot_name(p, slot));
        return;
    }
    hn_run_row_variant(csv, p, &p->variants[slot]);
}

void hn_run_row_variant(hn_csv *csv, const hn_plan *p, const hn_variant *v) {
    hn_csv_set_named(csv, "variant", v->label);
    hn_csv_set_named(csv, "kernel", p->specs[v->spec].kernels_text);
    for (int d = 0; d < p->n_define_names; d++) {
        const char *val = hn_variant_define(p, v, p->define_names[d]);
        if (val) hn_csv_set_named(csv, p->define_names[d], val);
    }
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

void hn_row_check_columns(hn_csv *csv, const hn_workload *w, const hn_row_check *rc) {
    if (rc->worst_buffer < 0) return;
    const hn_check_result *cr = &rc->worst;
    hn_csv_set_named(csv, "checked", w->refs[rc->worst_buffer].method);
    hn_csv_setf_named(csv, "match_fraction", "%.6f", cr->match_fraction);
    hn_csv_setf_named(csv, "max_abs_err", "%.3g", cr->max_abs_err);
    hn_csv_setf_named(csv, "max_rel_err", "%.3g", cr->max_rel_err);
    hn_csv_setf_named(csv, "nonfinite", "%lld", (long long)cr->nonfinite);
    hn_csv_setf_named(csv, "atol", "%.3g", rc->atol);
    hn_csv_setf_named(csv, "rtol", "%.3g", rc->rtol);
    hn_csv_set_named(csv, "worst_output", w->plan->op->buffers[rc->worst_buffer].name);
}

/* ---------------------------------------------------------------------- */
/* the run */

typedef struct {
    const hn_cli *cli;
    const hn_plan *plan;
    hn_run_shared *sh;
    int lane;               /* this worker's lane in sh */
    const hn_run_sink *sink;
    hn_backend *be;
    hn_run_device d;
    int is_emu;
    hn_sampling_opts sampling;
    int hot;
    double max_gflop;       /* emu budget; < 0 none */
    double max_mb;          /* emu budget in bytes moved (MB); < 0 none */
    hn_csv *csv;            /* detached: builds row lines */
    FILE *samples_csv;
    hn_pool pool;
    hn_pool_job **jobs;     /* per plan variant (run mode): its compile, or NULL */
    int *job_index;         /* per plan variant: its index in the pool, or -1 */
    void **bstate;          /* per op baseline: its state, or NULL (bwhy says why) */
    char (*bwhy)[sizeof(hn_err)];
    double *base_ms;        /* per op baseline: its median in the current case, or NAN */
    hn_sampler *sampler;
    hn_run_stats stats;
    int restart;            /* a kernel faulted: finish the row, then leave */
    int row_ran;            /* the last variant downloaded its outputs */
    unsigned sanitize;      /* HN_SAN_* checks (--sanitize): rows are one instrumented launch */
    int profile;            /* --profile: rows are one profiled launch */
    int first_launch_done;  /* the row's first launch has run (printf windows) */
    const char *row_note;   /* appended to the next row's reason (then cleared) */
} runner;

static int is_done(const runner *r, int64_t c, int slot) {
    return r->sh->done[c * r->sh->n_slots + slot];
}

/* Whether row (c, slot) is for this lane: not done, and claimed by it now (or
 * before). A row another lane claimed is that lane's. */
static int take_row(runner *r, int64_t c, int slot) {
    return hn_run_shared_claim(r->sh, r->lane, c, slot);
}

/* Whether row (c, slot) is still to run and no other lane has it. */
static int row_open(const runner *r, int64_t c, int slot) {
    size_t i = (size_t)c * (size_t)r->sh->n_slots + (size_t)slot;
    unsigned char cl = r->sh->claim[i];
    return !r->sh->done[i] && (cl == 0 || cl == r->lane + 1);
}

/* Hands a finished row to the sink. */
static void emit_row(runner *r, int64_t c, int slot, int status, const char *reason, double median_ms,
                     double noise) {
    hn_csv_set_named(r->csv, "status", hn_status_names[status]);
    if (r->row_note && *r->row_note) { /* the variant's note (NVRTC's refusal) after the row's own reason */
        char *both = xasprintf("%s%s%s", reason && *reason ? reason : "", reason && *reason ? "; " : "", r->row_note);
        hn_csv_set_named(r->csv, "reason", both);
        free(both);
    } else if (reason && *reason) {
        hn_csv_set_named(r->csv, "reason", reason);
    }
    r->row_note = NULL;
    char *line = hn_csv_take_row(r->csv);
    hn_run_row row = {.case_id = c, .slot = slot, .status = status, .median_ms = median_ms, .noise = noise,
                      .line = line};
    r->sink->row(r->sink->ctx, &row);
    free(line);
}

/* The status of a failed launch, from the kind of error. */
static int launch_status(runner *r, const hn_err *err) {
    if (err->kind == HN_ERR_FAULT || err->kind == HN_ERR_TIMEOUT) r->restart = 1;
    return err->kind == HN_ERR_FAULT ? HN_ST_FAULT : err->kind == HN_ERR_TIMEOUT ? HN_ST_TIMEOUT : HN_ST_LAUNCH;
}

/* A row's launches, issued in order as one unit of measured work. */
typedef struct {
    hn_backend *be;
    int n;
    const char *name[HN_MAX_LAUNCHES];
    hn_kernel *k[HN_MAX_LAUNCHES];
    hn_launch_dims d[HN_MAX_LAUNCHES];
    hn_argval vals[HN_MAX_LAUNCHES][HN_MAX_ARGS + 1];
    void *args[HN_MAX_LAUNCHES][HN_MAX_ARGS + 1];
} launch_ctx;

static int issue_launch(void *ctx, hn_err *err) {
    launch_ctx *l = ctx;
    for (int i = 0; i < l->n; i++)
        if (l->be->ops->launch(l->be, l->k[i], &l->d[i], l->args[i], err) != 0)
            return l->n > 1 ? hn_err_prefix(err, "launch %d of %d (%s)", i + 1, l->n, l->name[i]) : -1;
    return 0;
}

/* What every launch of a row starts from: the generated contents of every
 * buffer a kernel both reads and writes, and 0 in the outputs of the variant's
 * "zero", so each sample starts from the same state. */
typedef struct {
    hn_workload *w;
    uint64_t zero;
} launch_state;

static int restore_state(void *ctx, hn_err *err) {
    const launch_state *ls = ctx;
    hn_workload *w = ls->w;
    const hn_op *op = w->plan->op;
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role != HN_BUF_INOUT) continue;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        if (w->be->ops->upload(w->be, w->dev[i], w->inout_copy[i], bytes, err) != 0) return -1;
    }
    return hn_zero_outputs(w, ls->zero, err);
}

/* Whether every checked element of integer output b is one less than its
 * reference: counts added to the poison (0xFF bytes, -1) an int32 output starts
 * from, as NaN is a float one's. */
static int all_one_short(const hn_workload *w, int b) {
    const hn_ref *ref = &w->refs[b];
    if (w->dtype[b] != HN_DT_I32 || ref->n == 0) return 0;
    const int32_t *out = w->host[b];
    for (int64_t k = 0; k < ref->n; k++)
        if ((double)out[ref->index ? ref->index[k] : k] != ref->values[k] - 1) return 0;
    return 1;
}

/* `s` is the row's variant spec (NULL for a baseline): a scratch buffer that
 * "zero" does not name starts as 0xFF bytes, so a block counter in one never
 * reaches its count and the output is never written; the hint names it. */
static void mismatch_reason(const hn_workload *w, const hn_row_check *rc, const hn_variant_spec *s, uint64_t zero,
                            const char *when, char *buf, size_t size) {
    if (rc->worst_buffer < 0) {
        hn_op_outputs_text(w->plan->op, buf, size);
        return;
    }
    const hn_check_result *cr = &rc->worst;
    const char *name = w->plan->op->buffers[rc->worst_buffer].name;
    char which[96] = "", hint[384] = "";
    if (rc->n_outputs > 1) snprintf(which, sizeof which, " of '%s'", name);
    /* all NaN where the poison was: never written, or accumulated into (atomics) */
    if (cr->checked > 0 && cr->nonfinite == cr->checked) {
        char scratch[256] = "";
        size_t k = 0;
        for (int i = 0; s && i < s->n_scratch && k < sizeof scratch; i++)
            if (!(zero & HN_ZERO_SCRATCH(i)))
                k += (size_t)snprintf(scratch + k, sizeof scratch - k, "%s'%s'", k ? ", " : "", s->scratch_names[i]);
        size_t n = 0;
        if (!(rc->worst_buffer < HN_ZERO_BUFFERS && zero >> rc->worst_buffer & 1))
            n = (size_t)snprintf(hint, sizeof hint,
                                 "; every element is NaN/Inf, as the poison the outputs start from: never written, or "
                                 "accumulated into (then give the variant \"zero\": [\"%s\"])",
                                 name);
        else
            n = (size_t)snprintf(hint, sizeof hint, "; every element is NaN/Inf: never written");
        if (*scratch && n < sizeof hint)
            snprintf(hint + n, sizeof hint - n,
                     "; or written only once a counter in scratch reaches its count: scratch %s starts as 0xFF bytes "
                     "unless \"zero\" names it",
                     scratch);
    }
    if (!*hint && !(rc->worst_buffer < HN_ZERO_BUFFERS && zero >> rc->worst_buffer & 1) &&
        all_one_short(w, rc->worst_buffer))
        snprintf(hint, sizeof hint,
                 "; every element is one less than its reference, as when counts are added to the poison (-1) the "
                 "integer outputs start from: give the variant \"zero\": [\"%s\"]",
                 name);
    /* part of the output still the poison: a grid or a loop that does not cover it */
    if (!*hint && cr->poisoned > 0 && cr->nonfinite < cr->checked)
        snprintf(hint, sizeof hint,
                 "; %lld of them still hold the poison the outputs start from: never written by the kernel (the "
                 "first at element %lld of '%s'; does the grid, or each thread's loop, cover every output?)",
                 (long long)cr->poisoned, (long long)cr->first_poisoned, name);
    snprintf(buf, size, "%s: %.4f%% of %lld elements%s match (need %.4g%%), %lld NaN/Inf, max abs err %.3g%s", when,
             cr->match_fraction * 100.0, (long long)cr->checked, which, rc->min_match * 100.0,
             (long long)cr->nonfinite, cr->max_abs_err, hint);
}

/* DIR/case-<id>/case.json: what a checker outside the harness needs to
 * recompute the case (torch.nn.functional on the saved inputs): the operator,
 * every parameter's value (defaults resolved; a choice by its name), and each
 * buffer's dtype, role and shape. */
static void save_case_manifest(runner *r, const hn_workload *w, const char *dir) {
    const hn_op *op = r->plan->op;
    cJSON *root = cJSON_CreateObject(), *params = cJSON_CreateObject(), *bufs = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "op", op->name);
    cJSON_AddNumberToObject(root, "case", (double)w->c->id);
    cJSON_AddStringToObject(root, "label", w->label);
    for (int i = 0; i < op->n_params; i++) {
        const hn_op_param *pa = &op->params[i];
        double v = w->params[i];
        if (pa->type == 'c' && pa->choices) {
            int k = 0;
            while (pa->choices[k] && k < (int)v) k++;
            cJSON_AddStringToObject(params, pa->name, pa->choices[k] ? pa->choices[k] : "?");
        } else {
            cJSON_AddNumberToObject(params, pa->name, v);
        }
    }
    static const char *const ROLES[] = {"in", "out", "inout"};
    for (int i = 0; i < op->n_buffers; i++) {
        cJSON *b = cJSON_CreateObject(), *shape = cJSON_CreateArray();
        int64_t dims[4];
        int nd = op->dims(w->params, i, dims);
        for (int d = 0; d < nd; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)dims[d]));
        cJSON_AddStringToObject(b, "dtype", hn_dtype_numpy(w->dtype[i]));
        /* the dtype on the device where the file's differs (bfloat16, saved as float32) */
        if (w->dtype[i] == HN_DT_BF16) cJSON_AddStringToObject(b, "device_dtype", hn_dtype_name(w->dtype[i]));
        cJSON_AddStringToObject(b, "role", (unsigned)op->buffers[i].role < 3 ? ROLES[op->buffers[i].role] : "?");
        cJSON_AddItemToObject(b, "shape", shape);
        if (op->buffers[i].role != HN_BUF_IN) {
            /* how the reference covers it ("full", "sampled ...", or "not checked
             * (...)": no value to compare, as avg pooling's argmax) and its file's dtype */
            const hn_ref *ref = &w->refs[i];
            cJSON_AddStringToObject(b, "reference", ref->method[0] ? ref->method : "full");
            cJSON_AddBoolToObject(b, "checked", !ref->index || ref->n > 0);
            cJSON_AddStringToObject(b, "reference_dtype", w->dtype[i] == HN_DT_I32 ? "<i4" : "<f8");
        }
        cJSON_AddItemToObject(bufs, op->buffers[i].name, b);
    }
    cJSON_AddItemToObject(root, "params", params);
    cJSON_AddItemToObject(root, "buffers", bufs);
    char *text = cJSON_Print(root), *path = xasprintf("%s/case.json", dir);
    hn_err err;
    if (!text || hn_write_file(path, text, strlen(text), &err) != 0)
        fprintf(stderr, "harness: --save-tensors: %s\n", text ? err.msg : "out of memory");
    cJSON_free(text);
    cJSON_Delete(root);
    free(path);
}

/* A reference's n values (fp64) as an .npy of the given shape: float64 for a
 * floating-point buffer (the reference is exact where the buffer is float32),
 * the buffer's own dtype for an integer one (the argmax: int32, compared
 * exactly, as torch's indices are integers). */
static int save_reference(const char *path, hn_dtype dt, const int64_t *shape, int nd, const double *vals,
                          int64_t n, hn_err *err) {
    if (dt != HN_DT_I32) return hn_npy_write(path, "<f8", shape, nd, vals, 8, err);
    int32_t *iv = xmalloc((size_t)(n ? n : 1) * sizeof *iv);
    for (int64_t k = 0; k < n; k++) iv[k] = (int32_t)vals[k];
    int rc = hn_npy_write(path, "<i4", shape, nd, iv, sizeof *iv, err);
    free(iv);
    return rc;
}

/* The reference of output buffer i as dir/<buffer>.reference.npy: in the
 * buffer's shape when complete, else the sampled values and their element
 * indices (<buffer>.reference_index.npy). */
static void save_case_reference(const hn_workload *w, int i, const char *dir, const int64_t *shape, int nd) {
    const hn_op *op = w->plan->op;
    hn_err err;
    char *p1 = xasprintf("%s/%s.reference.npy", dir, op->buffers[i].name);
    const hn_ref *ref = &w->refs[i];
    int64_t n[1] = {ref->n};
    double *vals = ref->values;
    hn_dtype dt = w->dtype[i];
    if (!ref->index || ref->n == w->counts[i]) {
        /* complete (perhaps in another order): values in element order */
        if (ref->index) {
            vals = xmalloc((size_t)(ref->n ? ref->n : 1) * sizeof *vals);
            for (int64_t k = 0; k < ref->n; k++) vals[ref->index[k]] = ref->values[k];
        }
        if (save_reference(p1, dt, shape, nd, vals, ref->n, &err) != 0)
            fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        if (vals != ref->values) free(vals);
    } else {
        if (save_reference(p1, dt, n, 1, ref->values, ref->n, &err) != 0)
            fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        free(p1);
        p1 = xasprintf("%s/%s.reference_index.npy", dir, op->buffers[i].name);
        if (hn_npy_write(p1, "<i8", n, 1, ref->index, 8, &err) != 0)
            fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
    }
    free(p1);
}

/* Writes the case's inputs, references and manifest (vi < 0) or variant vi's
 * outputs. */
static void save_tensors(runner *r, const hn_workload *w, int vi) {
    const hn_op *op = r->plan->op;
    char *dir = xasprintf("%s/case-%lld", r->cli->save_tensors, (long long)w->c->id);
    hn_err err;
    if (hn_mkdirs(dir, &err) != 0) {
        fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        free(dir);
        return;
    }
    if (vi < 0) save_case_manifest(r, w, dir);
    for (int i = 0; i < op->n_buffers; i++) {
        /* the buffer's logical shape and dtype, as numpy will read it */
        int64_t shape[4];
        int nd = op->dims(w->params, i, shape);
        const char *descr = hn_dtype_numpy(w->dtype[i]);
        char *path = NULL;
        const void *data = w->host[i];
        if (vi < 0 && op->buffers[i].role != HN_BUF_OUT) {
            /* an in-out buffer (gemm's c): its generated input, then its reference */
            path = xasprintf("%s/%s.npy", dir, op->buffers[i].name);
            if (op->buffers[i].role == HN_BUF_INOUT) {
                data = w->inout_copy[i];
                save_case_reference(w, i, dir, shape, nd);
            }
        } else if (vi >= 0 && op->buffers[i].role != HN_BUF_IN) {
            char safe[256];
            hn_sanitize_name(r->plan->variants[vi].label, safe, sizeof safe);
            path = xasprintf("%s/%s.%s.npy", dir, op->buffers[i].name, safe);
            if (!r->row_ran || !hn_variant_binds(r->plan, &r->plan->variants[vi], i)) {
                /* A row that never ran has no output, and a kernel not given a
                 * buffer wrote none of it: neither this run's values nor a stale
                 * file from an earlier run. */
                unlink(path);
                free(path);
                continue;
            }
        } else if (vi < 0) {
            save_case_reference(w, i, dir, shape, nd);
            continue;
        }
        float *wide = NULL; /* bfloat16, which numpy lacks, widened (exactly) to float32 */
        if (path && w->dtype[i] == HN_DT_BF16) {
            wide = xmalloc(sizeof *wide * (size_t)(w->counts[i] ? w->counts[i] : 1));
            for (int64_t e = 0; e < w->counts[i]; e++) wide[e] = hn_bf16_to_float(((const uint16_t *)data)[e]);
            data = wide;
        }
        const size_t elem = wide ? sizeof *wide : hn_dtype_size(w->dtype[i]);
        if (path && hn_npy_write(path, descr, shape, nd, data, elem, &err) != 0)
            fprintf(stderr, "harness: --save-tensors: %s\n", err.msg);
        free(wide);
        free(path);
    }
    free(dir);
}

/* Kernel printf: the lines a launch may print, and the one line that says how
 * many were held back (on stdout, where the kernel's output goes). */
static long printf_budget(const runner *r) {
    return r->cli->printf_lines >= 0 ? r->cli->printf_lines : HN_RUN_PRINTF_LINES;
}

/* Starts a new printf window allowing `next` lines per launch; reports the
 * lines the window that ends held back. `later`: it covered the row's launches
 * after the first. */
static void printf_window(runner *r, long next, int later) {
    long dropped = 0;
    hn_err err;
    if (!r->be->ops->printf_limit || r->be->ops->printf_limit(r->be, next, &dropped, &err) != 0) return;
    if (dropped <= 0) return;
    if (!later)
        printf("[harness: %ld more line%s of kernel printf from this launch not shown (--printf-lines N shows "
               "more)]\n",
               dropped, dropped == 1 ? "" : "s");
    else if (r->cli->printf_all)
        printf("[harness: %ld more line%s of kernel printf from the row's other launches not shown (at most %ld "
               "per launch; --printf-lines N)]\n",
               dropped, dropped == 1 ? "" : "s", printf_budget(r));
    else
        printf("[harness: %ld line%s of kernel printf from the row's other launches not shown (--printf-all "
               "shows them)]\n",
               dropped, dropped == 1 ? "" : "s");
    fflush(stdout);
}

/* Runs variant vi on workload w and reports its row. */
static void run_variant_row(runner *r, hn_workload *w, const hn_variant *v, int job, int slot);

/* Runs variant v (compiled by pool job `job`) on w and reports its row as
 * (case, slot). */
static void run_variant(runner *r, hn_workload *w, const hn_variant *v, int job, int slot) {
    printf_window(r, printf_budget(r), 0);
    r->first_launch_done = 0;
    r->row_ran = 0;
    run_variant_row(r, w, v, job, slot);
    printf_window(r, printf_budget(r), r->first_launch_done);
}

/* What a row measures: a variant's kernel or a baseline, behind one issue(). */
typedef struct {
    int slot;
    const hn_variant *v;    /* NULL for a baseline */
    hn_issue_fn issue;
    void *ctx;
    const char *timing;     /* the "timing" column */
} row_job;

/* The baseline a row measures (NULL for a variant's row). */
static const hn_op_baseline *row_baseline(const runner *r, const row_job *j) {
    return j->v ? NULL : &r->plan->op->baselines[j->slot - r->plan->n_variants];
}

/* The row's variant spec, NULL for a baseline. */
static const hn_variant_spec *row_spec(const runner *r, const row_job *j) {
    return j->v ? &r->plan->specs[j->v->spec] : NULL;
}

/* The buffers the row's variant has set to 0 before every launch (its "zero"). */
static uint64_t row_zero(const runner *r, const row_job *j) {
    const hn_variant_spec *s = row_spec(r, j);
    return s ? s->zero : 0;
}

/* The baseline of `family` that variants of `precision` are compared with:
 * the one of that precision, or -1. */
static int baseline_for(const hn_op *op, const char *family, const char *precision) {
    for (int b = 0; b < op->n_baselines; b++)
        if (strcmp(op->baselines[b].family, family) == 0 && strcmp(op->baselines[b].precision, precision) == 0)
            return b;
    return -1;
}

/* Where the sanitizer's full report of a row goes: stderr, and --report. */
static void print_report(runner *r, const hn_workload *w, const row_job *j, const hn_san_findings *f) {
    long total = 0;
    for (int k = 0; k < HN_SAN_NCLASS; k++) total += f->n[k];
    char *text = xasprintf("harness: sanitizer: variant %s, case %lld (%s): %ld finding%s\n%s",
                           j->v ? j->v->label : hn_run_slot_name(r->plan, j->slot), (long long)w->c->id, w->label,
                           total, total == 1 ? "" : "s", f->report ? f->report : "");
    fputs(text, stderr);
    fflush(stderr);
    if (r->cli->report) {
        FILE *out = fopen(r->cli->report, "a");
        int ok = out && fputs(text, out) >= 0;
        if (out && fclose(out) != 0) ok = 0;
        if (!ok) fprintf(stderr, "harness: --report %s: cannot append: %s\n", r->cli->report, strerror(errno));
    }
    free(text);
}

/* An initcheck of an atomic on an output or scratch buffer that "zero" does not
 * name is a kernel accumulating into memory it expects to start at 0: say so
 * after the finding in `reason` (what the CSV's reason column shows). */
static void zero_hint(const runner *r, const row_job *j, char *reason, size_t size) {
    if (!j->v || strncmp(reason, "initcheck:", 10) != 0) return;
    const char *at = strstr(reason, "device buffer '");
    const char *what = strstr(reason, "): atomic");
    if (!at || !what || what > at) return;
    at += strlen("device buffer '");
    const char *end = strchr(at, '\'');
    if (!end) return;
    size_t len = (size_t)(end - at);
    const hn_variant_spec *s = &r->plan->specs[j->v->spec];
    const hn_op *op = r->plan->op;
    const char *name = NULL;
    for (int i = 0; i < op->n_buffers && !name; i++)
        if (op->buffers[i].role != HN_BUF_IN && strlen(op->buffers[i].name) == len && strncmp(op->buffers[i].name, at, len) == 0 &&
            !(s->zero & (1ull << i)))
            name = op->buffers[i].name;
    for (int i = 0; i < s->n_scratch && !name; i++)
        if (strncmp(at, s->scratch_names[i], strlen(s->scratch_names[i])) == 0 &&
            strncmp(at + strlen(s->scratch_names[i]), " (scratch)", 10) == 0 && !(s->zero & HN_ZERO_SCRATCH(i)))
            name = s->scratch_names[i];
    if (!name) return;
    size_t n = strlen(reason);
    snprintf(reason + n, size - n, " (an atomic on '%s', which starts as poison: give the variant \"zero\": [\"%s\"] "
             "to start it at 0)", name, name);
}

/* A row under the sanitizer: one launch of the instrumented kernel on
 * poisoned outputs, its findings, the check of its outputs and inputs; no
 * timing (an instrumented kernel's time says nothing). */
static void sanitize_row(runner *r, hn_workload *w, const row_job *j) {
    const hn_op *op = r->plan->op;
    int64_t ci = w->c->id;
    hn_err err;
    char reason[sizeof err.msg] = "";
    int status = HN_ST_OK;
    hn_san_findings f = {.first_class = -1};
    if (hn_poison_outputs(w, row_zero(r, j), &err) != 0) {
        emit_row(r, ci, j->slot, HN_ST_LAUNCH, err.msg, NAN, NAN);
        return;
    }
    int launched = j->issue(j->ctx, &err) == 0 && r->be->ops->sync(r->be, &err) == 0;
    r->first_launch_done = 1;
    if (r->be->ops->sanitizer_take) r->be->ops->sanitizer_take(r->be, &f);
    static const int class_status[HN_SAN_NCLASS] = {HN_ST_RACE, HN_ST_MEMCHECK, HN_ST_INITCHECK, HN_ST_SYNCCHECK};
    if (f.first_class >= 0) {
        print_report(r, w, j, &f);
        status = class_status[f.first_class];
        snprintf(reason, sizeof reason, "%s", f.first);
        zero_hint(r, j, reason, sizeof reason);
        if (!launched) (void)launch_status(r, &err); /* a fault: the next rows run in a fresh process */
    } else if (!launched) {
        status = launch_status(r, &err);
        snprintf(reason, sizeof reason, "%s", err.msg);
    }
    if (f.note) {
        /* a check skipped (the global race cells' limits) is said, never silent */
        fprintf(stderr, "harness: sanitizer: %s", f.note);
        if (status == HN_ST_OK) {
            snprintf(reason, sizeof reason, "%s", f.note);
            reason[strcspn(reason, "\n")] = 0;
        }
    }
    hn_san_findings_free(&f);
    if (launched) {
        hn_row_check rc;
        if (hn_check_outputs(w, j->v, row_baseline(r, j), &rc, &err) != 0) {
            emit_row(r, ci, j->slot, launch_status(r, &err), err.msg, NAN, NAN);
            return;
        }
        r->row_ran = 1;
        hn_row_check_columns(r->csv, w, &rc);
        if (status == HN_ST_OK && !rc.passed) {
            status = HN_ST_MISMATCH;
            mismatch_reason(w, &rc, row_spec(r, j), row_zero(r, j), "check", reason, sizeof reason);
        }
        size_t n_diff = 0;
        int clobbered = hn_verify_inputs(w, &n_diff, &err);
        if (clobbered >= 0 && status == HN_ST_OK) {
            status = HN_ST_MISMATCH;
            snprintf(reason, sizeof reason, "wrote into its input '%s' (%zu bytes changed; restored for the next variant)",
                     op->buffers[clobbered].name, n_diff);
        }
    }
    emit_row(r, ci, j->slot, status, reason, NAN, NAN);
}

/* ---------------------------------------------------------------------- */
/* profiles */

static const char *const PROFILE_TAIL[] = {"label", "variant", "kernel", "file", "line", "function", "space",
                                           "kind", "requests", "sectors_per_request", "bank_conflicts_per_request",
                                           "accesses", "share_pct", "blocks_profiled", "blocks"};

/* The columns of x.lines.csv: the case's axes, then PROFILE_TAIL. */
static const char **profile_columns(const hn_plan *p, int *n) {
    const char **cols = xcalloc((size_t)p->n_axes + HN_ARRAY_LEN(PROFILE_TAIL) + 1, sizeof *cols);
    int k = 0;
    cols[k++] = "case";
    for (int a = 0; a < p->n_axes; a++) cols[k++] = p->axes[a].name;
    for (size_t i = 0; i < HN_ARRAY_LEN(PROFILE_TAIL); i++) cols[k++] = PROFILE_TAIL[i];
    *n = k;
    return cols;
}

static char *profile_file(const char *out, const char *suffix) {
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".csv") == 0) n -= 4;
    return xasprintf("%.*s%s", (int)n, out, suffix);
}

int hn_runner_profile_files(const hn_plan *p, const char *out, hn_err *err) {
    int n;
    const char **cols = profile_columns(p, &n);
    char *lines = profile_file(out, ".lines.csv"), *text = profile_file(out, ".txt");
    hn_csv *csv = NULL;
    int rc = hn_csv_open(lines, cols, n, &csv, err);
    hn_csv_close(csv);
    if (rc == 0) rc = hn_write_file(text, "", 0, err);
    free(cols);
    free(lines);
    free(text);
    return rc;
}

/* Appends a row's profile to x.lines.csv and x.txt, and prints its table. */
static void write_profile(runner *r, const hn_workload *w, const row_job *j, const hn_profile *prof) {
    const hn_plan *p = r->plan;
    const char *out = r->cli->results ? r->cli->results : r->cli->out;
    if (!out) return;
    char *lines = profile_file(out, ".lines.csv"), *text = profile_file(out, ".txt");
    char title[512];
    snprintf(title, sizeof title, "profile of variant %s, case %lld (%s)", j->v->label, (long long)w->c->id, w->label);
    if (!r->cli->quiet) {
        hn_profile_print_table(stdout, prof, title);
        fflush(stdout);
    }
    FILE *f = fopen(text, "a");
    if (f) {
        hn_profile_print_table(f, prof, title);
        hn_profile_print_listing(f, prof);
        fprintf(f, "\n");
        fclose(f);
    } else {
        fprintf(stderr, "harness: %s: cannot append the profile\n", text);
    }
    int n;
    const char **cols = profile_columns(p, &n);
    hn_csv *csv = NULL;
    hn_err err;
    if (hn_csv_append(lines, cols, n, &csv, &err) == 0) {
        for (int i = 0; i < prof->n; i++) {
            const hn_prof_row *row = &prof->rows[i];
            hn_csv_setf_named(csv, "case", "%lld", (long long)w->c->id);
            for (int a = 0; a < p->n_axes; a++) {
                char buf[64];
                hn_value_format(&w->c->values[a], buf, sizeof buf);
                hn_csv_set_named(csv, p->axes[a].name, buf);
            }
            hn_csv_set_named(csv, "label", w->label);
            hn_csv_set_named(csv, "variant", j->v->label);
            hn_csv_set_named(csv, "kernel", prof->kernel);
            hn_csv_set_named(csv, "file", row->file);
            hn_csv_setf_named(csv, "line", "%d", row->line);
            hn_csv_set_named(csv, "function", row->func);
            hn_csv_set_named(csv, "space", hn_profile_space_name(row->space));
            hn_csv_set_named(csv, "kind", hn_profile_kind_name(row->kind));
            hn_csv_setf_named(csv, "requests", "%.6g", row->requests);
            double sp = hn_profile_sectors_per_request(row), cp = hn_profile_conflicts_per_request(row);
            if (!isnan(sp)) hn_csv_setf_named(csv, "sectors_per_request", "%.4g", sp);
            if (!isnan(cp)) hn_csv_setf_named(csv, "bank_conflicts_per_request", "%.4g", cp);
            hn_csv_setf_named(csv, "accesses", "%.6g", row->accesses);
            hn_csv_setf_named(csv, "share_pct", "%.4g", hn_profile_share(prof, row));
            hn_csv_setf_named(csv, "blocks_profiled", "%llu", prof->blocks_profiled);
            hn_csv_setf_named(csv, "blocks", "%llu", prof->blocks);
            if (hn_csv_write_row(csv, &err) != 0) {
                fprintf(stderr, "harness: %s: %s\n", lines, err.msg);
                break;
            }
        }
        hn_csv_close(csv);
    } else {
        fprintf(stderr, "harness: %s\n", err.msg);
    }
    free(cols);
    free(lines);
    free(text);
}

/* A row whose launch failed has no profile: said on stdout and in x.txt
 * (otherwise its table is just missing), with the status and the reason. */
static void write_profile_failed(runner *r, const hn_workload *w, const row_job *j, int status, const char *why) {
    const char *out = r->cli->results ? r->cli->results : r->cli->out;
    char *line = xasprintf("profile of variant %s, case %lld (%s): none, the launch failed (%s: %s)\n",
                           j->v->label, (long long)w->c->id, w->label, hn_status_names[status], why);
    if (!r->cli->quiet) {
        fputs(line, stdout);
        fflush(stdout);
    }
    if (out) {
        char *text = profile_file(out, ".txt");
        FILE *f = fopen(text, "a");
        if (f) {
            fprintf(f, "%s\n", line);
            fclose(f);
        }
        free(text);
    }
    free(line);
}

/* A row under the profile: one launch of the instrumented kernel on poisoned
 * outputs (the blocks the profile does not record run the plain one), its
 * profile, the check of its outputs; no timing. */
static void profile_row(runner *r, hn_workload *w, const row_job *j) {
    int64_t ci = w->c->id;
    hn_err err;
    char reason[sizeof err.msg] = "";
    if (hn_poison_outputs(w, row_zero(r, j), &err) != 0) {
        emit_row(r, ci, j->slot, HN_ST_LAUNCH, err.msg, NAN, NAN);
        return;
    }
    int launched = j->issue(j->ctx, &err) == 0 && r->be->ops->sync(r->be, &err) == 0;
    r->first_launch_done = 1;
    hn_profile prof;
    memset(&prof, 0, sizeof prof);
    if (r->be->ops->profile_take) r->be->ops->profile_take(r->be, &prof);
    if (!launched) {
        hn_profile_free(&prof);
        write_profile_failed(r, w, j, launch_status(r, &err), err.msg);
        emit_row(r, ci, j->slot, launch_status(r, &err), err.msg, NAN, NAN);
        return;
    }
    write_profile(r, w, j, &prof);
    hn_profile_free(&prof);
    hn_row_check rc;
    if (hn_check_outputs(w, j->v, row_baseline(r, j), &rc, &err) != 0) {
        emit_row(r, ci, j->slot, launch_status(r, &err), err.msg, NAN, NAN);
        return;
    }
    r->row_ran = 1;
    hn_row_check_columns(r->csv, w, &rc);
    int status = HN_ST_OK;
    if (!rc.passed) {
        status = HN_ST_MISMATCH;
        mismatch_reason(w, &rc, row_spec(r, j), row_zero(r, j), "check", reason, sizeof reason);
    }
    size_t n_diff = 0;
    int clobbered = hn_verify_inputs(w, &n_diff, &err);
    if (clobbered >= 0 && status == HN_ST_OK) {
        status = HN_ST_MISMATCH;
        snprintf(reason, sizeof reason, "wrote into its input '%s' (%zu bytes changed; restored for the next variant)",
                 r->plan->op->buffers[clobbered].name, n_diff);
    }
    emit_row(r, ci, j->slot, status, reason, NAN, NAN);
}

/* The one execution path of a row, variants and baselines alike: poison the
 * outputs, warm up, check, take samples, check again, make sure the inputs are
 * intact, then the row's figures. */
static void measure_row(runner *r, hn_workload *w, const row_job *j) {
    const hn_plan *p = r->plan;
    const hn_op *op = p->op;
    hn_csv *csv = r->csv;
    int64_t ci = w->c->id;
    hn_err err;
    char reason[1536] = "";
    r->row_ran = 0;
    char precision[32];
    hn_variant_precision(p, j->v, w, precision, sizeof precision);
    const hn_op_baseline *bl = row_baseline(r, j);
    if (bl) snprintf(precision, sizeof precision, "%s", bl->precision);
    hn_csv_set_named(csv, "precision", precision);
    if (r->sanitize && j->v) {
        sanitize_row(r, w, j);
        return;
    }
    if (r->profile && j->v) {
        profile_row(r, w, j);
        return;
    }

#define FAIL(st, why)                                                                             \
    do {                                                                                          \
        emit_row(r, ci, j->slot, (st), (why), NAN, NAN);                                          \
        return;                                                                                   \
    } while (0)

    /* Warm-up launches; the first check is of the first launch's outputs (a
     * kernel right only from its second launch on, one that relies on a scratch
     * counter the launch before left behind, is wrong on a GPU's first call). */
    const uint64_t zero = row_zero(r, j);
    if (hn_poison_outputs(w, zero, &err) != 0) FAIL(HN_ST_LAUNCH, err.msg);
    int warmup = r->sampling.warmup > 0 ? r->sampling.warmup : 1;
    hn_row_check rc;
    int status = HN_ST_OK;
    for (int i = 0; i < warmup; i++) {
        if (i > 0 && hn_zero_outputs(w, zero, &err) != 0) FAIL(HN_ST_LAUNCH, err.msg);
        if (j->issue(j->ctx, &err) != 0 || r->be->ops->sync(r->be, &err) != 0) FAIL(launch_status(r, &err), err.msg);
        if (i > 0) continue;
        /* the row's first launch printed; the others print only if asked */
        printf_window(r, r->cli->printf_all ? printf_budget(r) : 0, 0);
        r->first_launch_done = 1;
        double tc = hn_now();
        if (hn_check_outputs(w, j->v, bl, &rc, &err) != 0) FAIL(launch_status(r, &err), err.msg);
        r->row_ran = 1;
        r->stats.check += hn_now() - tc;
        hn_row_check_columns(csv, w, &rc);
        status = rc.passed ? HN_ST_OK : HN_ST_MISMATCH;
        if (!rc.passed) mismatch_reason(w, &rc, row_spec(r, j), zero, "first check", reason, sizeof reason);
    }

    /* Timed samples (warm-up already done: the sampler keeps every add). */
    hn_csv_set_named(csv, "timing", j->timing);
    hn_measure_opts mo = {.hot = r->hot, .default_mhz = r->d.dev.sm_clock_khz / 1000.0,
                          .samples_csv = r->samples_csv};
    char row_name[256];
    snprintf(row_name, sizeof row_name, "case %lld %s", (long long)ci,
             j->v ? j->v->label : hn_run_slot_name(p, j->slot));
    mo.row_name = row_name;
    launch_state ls = {w, zero};
    int restores = zero != 0;
    for (int i = 0; i < op->n_buffers; i++) restores |= op->buffers[i].role == HN_BUF_INOUT;
    if (restores) mo.restore = restore_state, mo.restore_ctx = &ls;
    hn_measure_result mr;
    if (hn_measure(r->be, &mo, r->sampler, j->issue, j->ctx, &mr, &err) != 0) FAIL(launch_status(r, &err), err.msg);
    /* Hot samples launch in batches from one restored state: the check after
     * timing then wants one more launch from a fresh one. */
    if (restores && r->hot &&
        (restore_state(&ls, &err) != 0 || j->issue(j->ctx, &err) != 0 || r->be->ops->sync(r->be, &err) != 0))
        FAIL(launch_status(r, &err), err.msg);
    hn_stats st;
    hn_sampler_stats(r->sampler, &st);
    r->stats.kernel += hn_sampler_total(r->sampler);
    hn_row_stats_columns(csv, r->sampler, &mr);

    /* Check again: some kernels pass once and corrupt later. */
    hn_row_check rc2;
    double tc = hn_now();
    if (hn_check_outputs(w, j->v, bl, &rc2, &err) != 0) FAIL(launch_status(r, &err), err.msg);
    r->stats.check += hn_now() - tc;
    if (status == HN_ST_OK && !rc2.passed) {
        status = HN_ST_MISMATCH;
        hn_row_check_columns(csv, w, &rc2);
        mismatch_reason(w, &rc2, row_spec(r, j), zero, "passed before timing, failed after", reason, sizeof reason);
    }
    /* A kernel that writes into its inputs is wrong, and would corrupt the
     * inputs of every later variant: restore them and say so. */
    size_t n_diff = 0;
    int clobbered = hn_verify_inputs(w, &n_diff, &err);
    if (clobbered == -2) FAIL(launch_status(r, &err), err.msg);
    if (clobbered >= 0) {
        status = HN_ST_MISMATCH;
        snprintf(reason, sizeof reason, "wrote into its input '%s' (%zu bytes changed; restored for the next variant)",
                 op->buffers[clobbered].name, n_diff);
    }

    double median = NAN, noise = NAN;
    if (st.n > 0) {
        double sec = st.median, flop, bytes;
        hn_row_work(r->plan, w, j->v, &flop, &bytes);
        hn_csv_setf_named(csv, "flop", "%.0f", flop);
        hn_csv_setf_named(csv, "bytes", "%.0f", bytes);
        double gflops = flop / sec * 1e-9, gbps = bytes / sec * 1e-9;
        hn_csv_setf_named(csv, "gflops", "%.4g", gflops);
        hn_csv_setf_named(csv, "gbps", "%.4g", gbps);
        double peak = strcmp(precision, "double") == 0 ? r->d.peak_fp64 : r->d.peak_fp32;
        if (peak > 0 && !r->is_emu) {
            hn_csv_setf_named(csv, "peak_gflops", "%.1f", peak);
            hn_csv_setf_named(csv, "flops_peak_pct", "%.3g", gflops / peak * 100.0);
        }
        if (r->d.peak_bw > 0 && !r->is_emu) hn_csv_setf_named(csv, "bw_peak_pct", "%.3g", gbps / r->d.peak_bw * 100.0);
        /* Against each library's baseline of the same precision. */
        for (int b = 0; b < op->n_baselines; b++) {
            int k = baseline_for(op, op->baselines[b].family, precision);
            if (k != b) continue;
            double base = j->v ? r->base_ms[b] : sec * 1e3;
            if (base > 0 && (j->v || j->slot == p->n_variants + b))
                hn_csv_setf_named(csv, hn_run_speedup_column(op->baselines[b].family), "%.4g", base / (sec * 1e3));
        }
        median = sec * 1e3;
        noise = st.rel_stdev;
    }
    emit_row(r, ci, j->slot, status, reason, status == HN_ST_OK ? median : NAN, noise);
#undef FAIL
}

static void run_variant_row(runner *r, hn_workload *w, const hn_variant *v, int job, int vi) {
    const hn_plan *p = r->plan;
    hn_pool_job *sl = r->pool.jobs[job];
    hn_csv *csv = r->csv;
    int64_t ci = w->c->id;
    hn_run_row_case(csv, p, w->c, w, &r->d);
    hn_run_row_variant(csv, p, v);
    hn_err err;
    char reason[1536];

#define FAIL(st, why)                                                                             \
    do {                                                                                          \
        emit_row(r, ci, vi, (st), (why), NAN, NAN);                                               \
        return;                                                                                   \
    } while (0)

    const char *failed = NULL;
    int applies = hn_sweep_variant_applies(p, v, w->c, w->params, &failed, &err);
    if (applies < 0) FAIL(HN_ST_LAUNCH, err.msg);
    if (applies == 0) {
        snprintf(reason, sizeof reason, "where '%s' is false", failed);
        FAIL(HN_ST_SKIPPED, reason);
    }
    r->sh->lane[r->lane].compile_slot = vi;
    hn_pool_wait(&r->pool, job, &r->sh->lane[r->lane].compile_since);
    hn_csv_setf_named(csv, "compile_s", "%.3f", sl->img.seconds);
    hn_csv_set_named(csv, "compile_key", sl->key);
    if (!sl->ok) {
        char hint[512];
        hn_define_value_hint(p, v, sl->reason, hint, sizeof hint);
        snprintf(reason, sizeof reason, "%.1000s%s", sl->reason, hint);
        /* kept for the workers after this one (a fault restarts the worker) */
        unsigned char none = 0;
        if (__atomic_compare_exchange_n(&r->sh->compile_failed[vi], &none, 1, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
            snprintf((char *)r->sh->compile_why + (size_t)vi * HN_COMPILE_WHY, HN_COMPILE_WHY, "%s", reason);
            __atomic_store_n(&r->sh->compile_failed[vi], 2, __ATOMIC_SEQ_CST);
        }
        FAIL(HN_ST_COMPILE, reason);
    }
    r->row_note = sl->nvrtc_note;
    const hn_variant_spec *spec = &p->specs[v->spec];
    const int n_launches = hn_spec_launches(spec);
    if (sl->img.res) { /* the most registers of any launch, and every launch's spills */
        int regs = -1, spills = 0;
        for (int li = 0; li < n_launches; li++) {
            if (sl->img.res[li].registers > regs) regs = sl->img.res[li].registers;
            spills += sl->img.res[li].spill_stores + sl->img.res[li].spill_loads;
        }
        if (regs >= 0) {
            hn_csv_setf_named(csv, "registers", "%d", regs);
            hn_csv_setf_named(csv, "spill_bytes", "%d", spills);
        }
    }
    if (!sl->loaded) {
        sl->loaded = 1;
        sl->usable = 1;
        for (int li = 0; li < n_launches && sl->usable; li++)
            if (r->be->ops->kernel_load(r->be, &sl->img, li, &sl->kernels[li], &err) != 0 ||
                hn_check_signature(p, v, li, r->be, sl->kernels[li], 0, &err) != 0) {
                if (n_launches > 1) hn_err_prefix(&err, "launches[%d] (%s)", li, hn_spec_launch(spec, li).kernel);
                snprintf(sl->reason, sizeof sl->reason, "%s", err.msg);
                sl->usable = 0;
            }
    }
    if (!sl->usable) FAIL(HN_ST_LAUNCH, sl->reason);

    if (r->max_mb >= 0) { /* the emulator fills scratch before every row: it counts in the bytes budget */
        double scratch_bytes;
        if (hn_workload_scratch_total(w, v, &scratch_bytes, &err) != 0) FAIL(HN_ST_LAUNCH, err.msg);
        if ((w->bytes + scratch_bytes) * 1e-6 > r->max_mb) {
            snprintf(reason, sizeof reason,
                     "%.3g MB of scratch buffers and %.3g MB to move are over the emulator budget of %g MB (the "
                     "config's emu.max_mb, or --all)",
                     scratch_bytes * 1e-6, w->bytes * 1e-6, r->max_mb);
            FAIL(HN_ST_SKIPPED, reason);
        }
    }
    if (hn_workload_scratch(w, v, &err) != 0) FAIL(HN_ST_LAUNCH, err.msg);
    if (hn_workload_constants(w, v, &sl->img, sl->kernels[0], &err) != 0) FAIL(HN_ST_LAUNCH, err.msg);
    launch_ctx *lc = xcalloc(1, sizeof *lc); /* big (the argument arrays): not on the stack */
    lc->be = r->be;
    lc->n = n_launches;
    hn_sb grid, block, shared;
    hn_sb_init(&grid), hn_sb_init(&block), hn_sb_init(&shared);
    int bad_launch = 0;
    for (int li = 0; li < n_launches && !bad_launch; li++) {
        hn_launch_dims *d = &lc->d[li];
        int n_args = 0;
        lc->k[li] = sl->kernels[li];
        lc->name[li] = hn_spec_launch(spec, li).kernel;
        const char *sep = li ? ";" : "";
        if (hn_eval_geometry(p, v, li, w, d, &err) != 0) { /* names the launch itself */
            /* the row says what the geometry was (a grid of 0 blocks: "0x1x1") */
            bad_launch = -1;
            hn_sb_adds(&grid, sep), hn_sb_adds(&block, sep);
            hn_geometry_text(p, v, li, w, &grid, &block);
            break;
        }
        if (hn_pack_args(p, v, li, w, 0, 0, lc->vals[li], lc->args[li], &n_args, &err) != 0)
            bad_launch = n_launches > 1 ? hn_err_prefix(&err, "launches[%d]", li) : -1;
        hn_sb_addf(&grid, "%s%ux%ux%u", sep, d->grid[0], d->grid[1], d->grid[2]);
        hn_sb_addf(&block, "%s%ux%ux%u", sep, d->block[0], d->block[1], d->block[2]);
        hn_sb_addf(&shared, "%s%zu", sep, d->shared_bytes);
    }
    /* one launch: "32x1x1"; several: each, in order, separated by ';' (as far
     * as the launches could be set up) */
    hn_csv_set_named(csv, "grid", grid.buf);
    hn_csv_set_named(csv, "block", block.buf);
    if (!bad_launch) hn_csv_set_named(csv, "shared_bytes", shared.buf);
    hn_sb_free(&grid), hn_sb_free(&block), hn_sb_free(&shared);
    if (bad_launch) {
        free(lc);
        FAIL(HN_ST_LAUNCH, err.msg);
    }
#undef FAIL
    row_job j = {.slot = vi, .v = v, .issue = issue_launch, .ctx = lc,
                 .timing = r->is_emu ? "emu-wall" : r->hot ? "hot" : "cold"};
    measure_row(r, w, &j);
    free(lc);
}

/* A baseline's state and issue, for hn_measure. */
typedef struct {
    const hn_op_baseline *b;
    void *state;
} baseline_ctx;

static int issue_baseline(void *ctx, hn_err *err) {
    baseline_ctx *bc = ctx;
    return bc->b->issue(bc->state, err);
}

/* Which baselines a case measures: those of a precision some selected variant
 * has in it, and always the float ones. */
static int baseline_wanted(runner *r, const unsigned char *selected, hn_workload *w, int b) {
    const hn_plan *p = r->plan;
    const char *bp = p->op->baselines[b].precision;
    if (strcmp(bp, "float") == 0) return 1;
    for (int v = 0; v < p->n_variants; v++) {
        if (!selected[v]) continue;
        char prec[32];
        hn_variant_precision(p, &p->variants[v], w, prec, sizeof prec);
        if (strcmp(prec, bp) == 0) return 1;
    }
    return 0;
}

/* The baselines of a case: rows not done yet are measured; the medians of all
 * (measured now or earlier) are kept for the speed-ups of the variant rows. */
static void run_baselines(runner *r, const unsigned char *selected, hn_workload *w) {
    const hn_plan *p = r->plan;
    const hn_op *op = p->op;
    int nv = p->n_variants;
    hn_err ignored;
    hn_workload_scratch(w, NULL, &ignored); /* no variant's scratch is poisoned for a baseline */
    for (int b = 0; b < op->n_baselines; b++) {
        int slot = nv + b;
        r->base_ms[b] = r->sh->median_ms[w->c->id * r->sh->n_slots + slot];
        if (r->is_emu || r->cli->no_baseline || !row_open(r, w->c->id, slot) || !baseline_wanted(r, selected, w, b) ||
            !take_row(r, w->c->id, slot))
            continue;
        r->sink->row_begin(r->sink->ctx, w->c->id, slot);
        hn_run_row_case(r->csv, p, w->c, w, &r->d);
        hn_run_row_slot(r->csv, p, slot);
        if (!r->bstate[b]) {
            emit_row(r, w->c->id, slot, HN_ST_SKIPPED, r->bwhy[b], NAN, NAN);
            continue;
        }
        hn_err err;
        char what[256] = "";
        if (op->baselines[b].prepare(r->bstate[b], w, what, sizeof what, &err) != 0) {
            hn_csv_set_named(r->csv, "kernel", what);
            emit_row(r, w->c->id, slot, err.kind ? launch_status(r, &err) : HN_ST_SKIPPED, err.msg, NAN, NAN);
            op->baselines[b].release(r->bstate[b]);
            continue;
        }
        hn_csv_set_named(r->csv, "kernel", what);
        baseline_ctx bc = {&op->baselines[b], r->bstate[b]};
        row_job j = {.slot = slot, .v = NULL, .issue = issue_baseline, .ctx = &bc, .timing = r->hot ? "hot" : "cold"};
        measure_row(r, w, &j);
        op->baselines[b].release(r->bstate[b]);
        r->base_ms[b] = r->sh->median_ms[w->c->id * r->sh->n_slots + slot];
    }
}

/* One row with the same status and reason for every selected variant of a case
 * not done yet (a case that cannot be set up, or one over the emulator's budget). */
static void rows_for_all(runner *r, const unsigned char *selected, const hn_case *c, const hn_workload *w,
                         int status, const char *reason) {
    for (int v = 0; v < r->plan->n_variants; v++) {
        if (!selected[v] || !take_row(r, c->id, v)) continue;
        r->sink->row_begin(r->sink->ctx, c->id, v);
        hn_run_row_case(r->csv, r->plan, c, w, &r->d);
        hn_run_row_slot(r->csv, r->plan, v);
        emit_row(r, c->id, v, status, reason, NAN, NAN);
    }
}

/* Merges config and command line into sampling options. */
static int sampling_options(runner *r, hn_err *err) {
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
        if (t->repeat > 0) { /* exactly that many: the count stops it, never the noise */
            o->min_samples = o->max_samples = t->repeat;
            o->min_time = 0;
            o->max_noise = 0;
        }
        else { /* repeat's exactly N leaves the other rules nothing to decide */
            if (t->min_samples > 0) o->min_samples = t->min_samples;
            if (t->max_samples > 0) o->max_samples = t->max_samples;
            if (t->min_time >= 0) o->min_time = t->min_time;
            if (t->max_noise >= 0) o->max_noise = t->max_noise;
        }
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

/* The compile key of every variant (without compiling); keys[v] is "" for a
 * variant not selected. */
static void compile_keys(runner *r, char **keys) {
    for (int v = 0; v < r->plan->n_variants; v++) {
        hn_pool_job *s = r->jobs[v];
        if (s) hn_compile_key(r->be->ops->target, &s->build.req, s->key);
        keys[v] = s ? s->key : (char *)"";
    }
}

/* The backend, the device's description, the sampling rules and the
 * emulator's budget: what both modes start with. Returns 0, or -1 having said
 * why on stderr (r->be then NULL or to be destroyed by the caller). */
static int runner_open(runner *r, const hn_cli *cli, const hn_plan *p, hn_run_shared *sh, int lane,
                       const hn_run_sink *sink) {
    memset(r, 0, sizeof *r);
    r->cli = cli;
    r->plan = p;
    r->sh = sh;
    r->lane = lane;
    r->sink = sink;
    hn_err err;
    if (cli->sanitize && hn_san_parse(cli->sanitize, &r->sanitize, &err) != 0) {
        fprintf(stderr, "harness: --sanitize: %s\n", err.msg);
        return -1;
    }
    const hn_run_lane *ln = &sh->lane[lane];
    hn_backend_opts bo = {.device = ln->device,
                          .emu_threads = ln->emu_threads > 0 ? ln->emu_threads : cli->emu_threads,
                          .kernel_timeout = cli->kernel_timeout > 0 ? cli->kernel_timeout : 60,
                          .printf_fifo = 0,
                          .busy_since = &sh->lane[lane].busy_since,
                          .sanitize = r->sanitize,
                          .profile = cli->profile,
                          .profile_blocks = cli->profile_blocks >= 0 ? cli->profile_blocks : HN_PROFILE_BLOCKS};
    r->profile = cli->profile;
    if (hn_backend_create(cli->backend, &bo, !cli->quiet, &r->be, &err) != 0) {
        if (strcmp(cli->backend, "cuda") == 0)
            fprintf(stderr, "harness: no CUDA device found: %s\n(use --backend emu to run on the CPU emulator)\n", err.msg);
        else
            fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
    }
    r->be->ops->device_info(r->be, &r->d.dev);
    snprintf(r->d.backend, sizeof r->d.backend, "%s", r->be->ops->name);
    r->is_emu = strcmp(r->be->ops->name, "emu") == 0;
    r->d.index = r->is_emu ? lane : ln->device;
    r->d.n_devices = r->is_emu ? 0 : hn_cuda_device_count();
    if (!r->is_emu) {
        const hn_device_info *dv = &r->d.dev;
        r->d.peak_fp32 = hn_peak_gflops(dv->cc_major, dv->cc_minor, dv->sm_count, dv->sm_clock_khz, 0);
        r->d.peak_fp64 = hn_peak_gflops(dv->cc_major, dv->cc_minor, dv->sm_count, dv->sm_clock_khz, 1);
        r->d.peak_bw = hn_peak_gbps(dv->mem_clock_khz, dv->mem_bus_width);
    }
    if (sampling_options(r, &err) != 0) {
        fprintf(stderr, "harness: timing options: %s\n", err.msg);
        return -1;
    }
    hn_emu_budget(cli, p, r->is_emu, &r->max_gflop, &r->max_mb);
    /* the baselines' states (opened by the run mode) and medians (0: none) */
    r->bstate = xcalloc((size_t)p->op->n_baselines + 1, sizeof *r->bstate);
    r->bwhy = xcalloc((size_t)p->op->n_baselines + 1, sizeof *r->bwhy);
    r->base_ms = xcalloc((size_t)p->op->n_baselines + 1, sizeof *r->base_ms);
    int n_cols;
    const char **cols = hn_run_columns(p, &n_cols);
    r->csv = hn_csv_detached(cols, n_cols);
    free(cols);
    hn_sampling_opts so = r->sampling;
    so.warmup = 0; /* warm-up launches are run (untimed) by measure_row; the sampler keeps all */
    r->sampler = hn_sampler_create(&so, &err);
    if (!r->sampler) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void runner_close_jobs(runner *r);
static void runner_close(runner *r);

/* Whether case c has a row this lane could run: a selected variant's row, or
 * (on a GPU) a wanted baseline's, not done and not another lane's. *w gets the
 * case's shape; *shaped whether that worked. */
static int case_open(runner *r, const unsigned char *selected, int64_t c, hn_workload *w, int *shaped) {
    const hn_plan *p = r->plan;
    int nv = p->n_variants, todo = 0;
    hn_err err;
    for (int v = 0; v < nv && !todo; v++) todo = selected[v] && row_open(r, c, v);
    *shaped = hn_workload_shape(w, p, &p->cases[c], &err) == 0;
    for (int b = 0; *shaped && !todo && !r->is_emu && !r->cli->no_baseline && b < p->op->n_baselines; b++)
        todo = row_open(r, c, nv + b) && baseline_wanted(r, selected, w, b);
    return todo;
}

/* Helping: the case (of another lane) with the most variant rows nobody has
 * claimed yet, at least two (with one left, its owner gets there before a
 * helper has the case set up), whose baselines are done (the variant rows'
 * speed-ups need their medians). -1 when there is none. */
static int64_t case_to_help(runner *r, const unsigned char *selected) {
    const hn_plan *p = r->plan;
    const hn_run_shared *sh = r->sh;
    int nv = p->n_variants;
    int64_t best = -1;
    int best_n = 1;
    for (int64_t c = 0; c < p->n_cases; c++) {
        if (!sh->in_run[c] || sh->owner[c] == 0) continue;
        int n = 0;
        for (int v = 0; v < nv; v++) {
            size_t i = (size_t)c * (size_t)sh->n_slots + (size_t)v;
            n += selected[v] && !sh->done[i] && sh->claim[i] == 0;
        }
        if (n <= best_n) continue;
        hn_workload w;
        hn_err err;
        int ready = 1;
        if (!r->is_emu && !r->cli->no_baseline && hn_workload_shape(&w, p, &p->cases[c], &err) == 0)
            for (int b = 0; b < p->op->n_baselines && ready; b++)
                ready = is_done(r, c, nv + b) || !baseline_wanted(r, selected, &w, b);
        if (ready) best = c, best_n = n;
    }
    return best;
}

/* The rows of case ci this lane can take: set up the workload, then (unless
 * helping) the baselines, then the variants in order (helping: from the last,
 * away from the owner). Returns HN_RUN_DONE, or RESTART / STOPPED. */
static int run_case(runner *r, const unsigned char *selected, int64_t ci, hn_workload *w, int shaped, int helping) {
    const hn_cli *cli = r->cli;
    const hn_plan *p = r->plan;
    const hn_run_sink *sink = r->sink;
    const hn_case *c = &p->cases[ci];
    int nv = p->n_variants;
    hn_err err;
    if (!shaped) {
        hn_workload_shape(w, p, c, &err);
        sink->case_begin(sink->ctx, ci, "", helping);
        rows_for_all(r, selected, c, NULL, HN_ST_LAUNCH, err.msg);
        return HN_RUN_DONE;
    }
    sink->case_begin(sink->ctx, ci, w->label, helping);
    char over[256];
    if (hn_emu_over_budget(r->max_gflop, r->max_mb, w, over, sizeof over)) {
        rows_for_all(r, selected, c, w, HN_ST_SKIPPED, over);
        return HN_RUN_DONE;
    }
    if (hn_workload_create(w, p, c, r->be, p->reference_gflop, &err) != 0) {
        rows_for_all(r, selected, c, NULL, HN_ST_LAUNCH, err.msg);
        return HN_RUN_DONE;
    }
    r->stats.ref += w->ref_seconds;
    r->stats.gen += w->gen_seconds;
    r->stats.transfer += w->upload_seconds;
    if (cli->save_tensors && !helping) save_tensors(r, w, -1);
    if (!helping) run_baselines(r, selected, w);
    else
        for (int b = 0; b < p->op->n_baselines; b++) r->base_ms[b] = r->sh->median_ms[ci * r->sh->n_slots + nv + b];
    int rc = HN_RUN_DONE;
    for (int k = 0; k < nv && rc == HN_RUN_DONE; k++) {
        int v = helping ? nv - 1 - k : k;
        if (!selected[v] || !row_open(r, ci, v)) continue;
        if (r->sh->stop) {
            rc = HN_RUN_STOPPED;
            break;
        }
        if (!take_row(r, ci, v)) continue;
        sink->row_begin(sink->ctx, ci, v);
        if (r->sh->timed_out[v] >= 0 && !cli->retry_timeouts) {
            char reason[256];
            snprintf(reason, sizeof reason, "timed out in case %lld, so not run again (--retry-timeouts runs it anyway)",
                     (long long)r->sh->timed_out[v]);
            hn_run_row_case(r->csv, p, c, w, &r->d);
            hn_run_row_slot(r->csv, p, v);
            emit_row(r, ci, v, HN_ST_SKIPPED, reason, NAN, NAN);
            continue;
        }
        if (r->job_index[v] < 0 && __atomic_load_n(&r->sh->compile_failed[v], __ATOMIC_SEQ_CST) == 2) {
            /* an earlier worker of this run found it does not compile */
            hn_run_row_case(r->csv, p, c, w, &r->d);
            hn_run_row_slot(r->csv, p, v);
            if (r->jobs[v]) hn_csv_set_named(r->csv, "compile_key", r->jobs[v]->key);
            emit_row(r, ci, v, HN_ST_COMPILE, (const char *)r->sh->compile_why + (size_t)v * HN_COMPILE_WHY, NAN, NAN);
            continue;
        }
        run_variant(r, w, &p->variants[v], r->job_index[v], v);
        if (cli->save_tensors) save_tensors(r, w, v);
        if (r->restart) rc = HN_RUN_RESTART;
        else if (r->sh->stop) rc = HN_RUN_STOPPED;
    }
    hn_workload_free(w);
    return rc;
}

int hn_runner_run(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *sh, int lane,
                  const hn_run_sink *sink) {
    runner r;
    hn_err err;
    int rc = HN_RUN_FAILED;
    int nv = p->n_variants;
    char *cache_dir = NULL;
    char **keys = xcalloc((size_t)nv + 1, sizeof *keys);
    if (runner_open(&r, cli, p, sh, lane, sink) != 0) goto out;

    /* The compile requests and their keys; the parent decides what is done. */
    cache_dir = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    r.jobs = xcalloc((size_t)nv + 1, sizeof *r.jobs);
    r.job_index = xcalloc((size_t)nv + 1, sizeof *r.job_index);
    for (int v = 0; v < nv; v++) {
        r.job_index[v] = -1;
        if (!selected[v]) continue;
        r.jobs[v] = xcalloc(1, sizeof *r.jobs[v]);
        hn_build_init(&r.jobs[v]->build, p, &p->variants[v], NULL, 0, r.is_emu ? NULL : r.d.dev.arch, cache_dir);
        if (r.sanitize && r.is_emu) r.jobs[v]->build.req.instrument = HN_INSTRUMENT_ACCESSES;
        if (r.profile && r.is_emu) r.jobs[v]->build.req.instrument = HN_INSTRUMENT_PROFILE;
    }
    compile_keys(&r, keys);
    if (sink->device(sink->ctx, &r.d, keys) != 0) {
        rc = HN_RUN_STOPPED;
        goto join;
    }
    /* Compile only what still has rows to run, in the order the rows need them;
     * lanes share the cores between their compile threads. */
    unsigned char *needed = xcalloc((size_t)nv + 1, 1);
    int n_compile = 0;
    for (int v = 0; v < nv; v++) {
        for (int64_t c = 0; selected[v] && sh->compile_failed[v] != 2 && c < p->n_cases && !needed[v]; c++)
            needed[v] = sh->in_run[c] && !is_done(&r, c, v);
        n_compile += needed[v];
    }
    int threads = cli->jobs > 0 ? cli->jobs : hn_cpu_count();
    if (sh->n_lanes > 1) threads = threads / sh->n_lanes > 0 ? threads / sh->n_lanes : 1;
    r.stats.compile_threads = threads > n_compile ? (n_compile > 0 ? n_compile : 1) : threads;
    /* the emulator's variants also through NVRTC */
    hn_pool_start(&r.pool, r.stats.compile_threads, r.be->ops->target,
                  r.is_emu ? (cli->arch ? cli->arch : HN_NVRTC_CHECK_ARCH) : NULL);
    for (int v = 0; v < nv; v++)
        if (needed[v]) r.job_index[v] = hn_pool_add(&r.pool, r.jobs[v]); /* the pool owns it now */
    free(needed);
    hn_pool_seal(&r.pool);

    if (cli->save_samples && cli->out) {
        char *sp = xasprintf("%s.samples.csv", cli->out);
        int fresh = !hn_file_exists(sp);
        r.samples_csv = fopen(sp, "a");
        if (r.samples_csv && fresh) fprintf(r.samples_csv, "row,time_ms,clock_mhz\n");
        free(sp);
    }
    /* The operator's baselines, on the GPU: opened once; one that cannot run
     * here (no library, no device support) has its rows skipped with the reason. */
    const hn_op *op = p->op;
    for (int b = 0; !r.is_emu && !cli->no_baseline && b < op->n_baselines; b++) {
        r.bstate[b] = op->baselines[b].open(r.be, &r.d.dev, &err);
        if (!r.bstate[b]) {
            snprintf(r.bwhy[b], sizeof r.bwhy[b], "%s", err.msg);
            fprintf(stderr, "harness: no %s baseline: %s\n", op->baselines[b].name, err.msg);
        }
    }

    /* The cases in plan order: those this lane owns (it restarted in one), then
     * those nobody owns yet, each claimed before it is set up; once every case
     * has an owner, help with the rows of the case that has most left. */
    rc = HN_RUN_DONE;
    for (int64_t ci = 0; ci < p->n_cases && rc == HN_RUN_DONE; ci++) {
        if (!sh->in_run[ci] || (sh->owner[ci] != 0 && sh->owner[ci] != lane + 1)) continue;
        hn_workload w;
        int shaped;
        if (!case_open(&r, selected, ci, &w, &shaped)) continue;
        unsigned char free_owner = 0;
        if (sh->owner[ci] != lane + 1 &&
            !__atomic_compare_exchange_n(&sh->owner[ci], &free_owner, (unsigned char)(lane + 1), 0, __ATOMIC_SEQ_CST,
                                         __ATOMIC_SEQ_CST))
            continue;
        rc = run_case(&r, selected, ci, &w, shaped, 0);
    }
    while (rc == HN_RUN_DONE && sh->n_lanes > 1 && !sh->stop) {
        int64_t ci = case_to_help(&r, selected);
        if (ci < 0) break;
        hn_workload w;
        int shaped;
        if (!case_open(&r, selected, ci, &w, &shaped)) continue;
        rc = run_case(&r, selected, ci, &w, shaped, 1);
    }
join:
    hn_pool_close(&r.pool);
    r.stats.compile_wait = r.pool.wait_seconds;
    r.stats.compile_busy = r.pool.busy_seconds;
    if (rc != HN_RUN_FAILED) sink->stats(sink->ctx, &r.stats);
    runner_close_jobs(&r);
    for (int v = 0; r.jobs && v < nv; v++) {
        hn_pool_job *s = r.jobs[v];
        if (s && r.job_index[v] < 0) { /* never given to the pool */
            hn_build_free(&s->build);
            free(s);
        }
    }

out:
    free(r.jobs);
    free(r.job_index);
    runner_close(&r);
    free(cache_dir);
    free(keys);
    return rc;
}

/* Frees the kernels of every compiled job and the pool. */
static void runner_close_jobs(runner *r) {
    for (int i = 0; i < r->pool.n; i++)
        for (int li = 0; li < HN_MAX_LAUNCHES; li++)
            if (r->pool.jobs[i]->kernels[li]) r->be->ops->kernel_free(r->be, r->pool.jobs[i]->kernels[li]);
    hn_pool_destroy(&r->pool);
}

/* Everything runner_open made, and the baselines. */
static void runner_close(runner *r) {
    const hn_plan *p = r->plan;
    for (int b = 0; r->bstate && b < p->op->n_baselines; b++)
        if (r->bstate[b]) p->op->baselines[b].close(r->bstate[b]);
    free(r->bstate);
    free(r->bwhy);
    free(r->base_ms);
    hn_sampler_destroy(r->sampler);
    if (r->samples_csv) fclose(r->samples_csv);
    hn_csv_close(r->csv);
    hn_backend_destroy(r->be);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------- */
/* serve mode: configurations on demand (harness tune) */

typedef struct {
    hn_variant v;        /* the configuration (its choice array owned here) */
    int job;             /* its compile in the pool */
} served;

/* The job of configuration (spec, choice), added to the pool if new. */
static int served_job(runner *r, served **list, int *n, int *cap, const hn_run_request *q, const char *cache_dir) {
    const hn_plan *p = r->plan;
    for (int i = 0; i < *n; i++)
        if ((*list)[i].v.spec == q->spec && memcmp((*list)[i].v.choice, q->choice, (size_t)q->n * sizeof(int)) == 0)
            return i;
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *list = xrealloc(*list, (size_t)*cap * sizeof **list);
    }
    served *sv = &(*list)[(*n)++];
    memset(sv, 0, sizeof *sv);
    sv->v.spec = q->spec;
    sv->v.choice = xcalloc((size_t)q->n + 1, sizeof *sv->v.choice);
    memcpy(sv->v.choice, q->choice, (size_t)q->n * sizeof(int));
    /* the label: the spec's name and every define with several values */
    const hn_variant_spec *spec = &p->specs[q->spec];
    hn_sb label;
    hn_sb_init(&label);
    hn_sb_adds(&label, spec->name);
    int multi = 0;
    for (int d = 0; d < spec->n_defines; d++) {
        if (spec->defines[d].n < 2) continue;
        hn_sb_addf(&label, "%s%s=%s", multi ? "," : "[", spec->defines[d].name, spec->defines[d].texts[sv->v.choice[d]]);
        multi = 1;
    }
    if (multi) hn_sb_addc(&label, ']');
    sv->v.label = hn_sb_detach(&label);
    hn_pool_job *job = xcalloc(1, sizeof *job);
    hn_build_init(&job->build, p, &sv->v, NULL, 0, r->is_emu ? NULL : r->d.dev.arch, cache_dir);
    hn_compile_key(r->be->ops->target, &job->build.req, job->key);
    sv->job = hn_pool_add(&r->pool, job);
    return *n - 1;
}

int hn_runner_serve(const hn_cli *cli, const hn_plan *p, hn_run_shared *sh, int lane, const hn_run_sink *sink) {
    runner r;
    int rc = HN_RUN_FAILED;
    char *cache_dir = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    served *list = NULL;
    int n = 0, cap = 0;
    hn_workload w;
    int have_w = 0;
    hn_sampling_opts full, search;
    if (runner_open(&r, cli, p, sh, lane, sink) != 0) goto out;
    /* the search measures with the quick rules (unless the rules are already
     * the quick ones); the final re-measure with the run's */
    full = search = r.sampling;
    if (!cli->quick && !r.is_emu) {
        hn_sampling_quick(&search);
        search.warmup = full.warmup;
    }
    {
        /* no fixed variants here: an empty key for each of the plan's */
        char **none = xcalloc((size_t)p->n_variants + 1, sizeof *none);
        for (int v = 0; v < p->n_variants; v++) none[v] = (char *)"";
        int go = sink->device(sink->ctx, &r.d, none);
        free(none);
        if (go != 0) {
            rc = HN_RUN_STOPPED;
            goto out;
        }
    }
    int threads = cli->jobs > 0 ? cli->jobs : hn_cpu_count();
    if (sh->n_lanes > 1) threads = threads / sh->n_lanes > 0 ? threads / sh->n_lanes : 1;
    hn_pool_start(&r.pool, threads, r.be->ops->target, NULL);
    r.stats.compile_threads = threads;
    rc = HN_RUN_DONE;
    hn_run_request q;
    while (rc == HN_RUN_DONE && sink->request(sink->ctx, &q) == 0 && q.type != HN_REQ_STOP) {
        if (q.spec < 0 || q.spec >= p->n_specs || q.n != p->specs[q.spec].n_defines) continue;
        int k = served_job(&r, &list, &n, &cap, &q, cache_dir);
        if (q.type != HN_REQ_EVAL) continue;
        if (q.case_id < 0 || q.case_id >= p->n_cases) continue;
        hn_err err;
        if (!have_w || w.c->id != q.case_id) {
            if (have_w) hn_workload_free(&w);
            have_w = 0;
            const hn_case *c = &p->cases[q.case_id];
            if (hn_workload_create(&w, p, c, r.be, p->reference_gflop, &err) != 0) {
                hn_run_row_case(r.csv, p, c, NULL, &r.d);
                hn_run_row_variant(r.csv, p, &list[k].v);
                emit_row(&r, q.case_id, q.tag, HN_ST_LAUNCH, err.msg, NAN, NAN);
                continue;
            }
            have_w = 1;
            r.stats.ref += w.ref_seconds;
            r.stats.gen += w.gen_seconds;
            r.stats.transfer += w.upload_seconds;
        }
        r.sampling = q.full ? full : search;
        hn_sampling_opts so = r.sampling;
        so.warmup = 0;
        hn_sampler_destroy(r.sampler);
        r.sampler = hn_sampler_create(&so, &err);
        sink->row_begin(sink->ctx, q.case_id, q.tag);
        run_variant(&r, &w, &list[k].v, list[k].job, q.tag);
        if (r.restart) rc = HN_RUN_RESTART;
    }
    r.stats.compile_wait = r.pool.wait_seconds;
    r.stats.compile_busy = r.pool.busy_seconds;
    sink->stats(sink->ctx, &r.stats);
out:
    if (have_w) hn_workload_free(&w);
    if (r.be) runner_close_jobs(&r);
    for (int i = 0; i < n; i++) {
        free(list[i].v.choice);
        free(list[i].v.label);
    }
    free(list);
    runner_close(&r);
    free(cache_dir);
    return rc;
}
