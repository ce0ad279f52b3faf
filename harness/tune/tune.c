/*
 * tune.c: `harness tune CONFIG`: search a variant's tunable space for the
 * fastest configuration, per case (the default) or one across all cases (--across:
 * the geometric mean of its times), with a strategy (strategy.h) within a budget
 * of evaluations, wall time or a fraction of the space; then the best few are
 * measured again with the full sampling rules and the winner is reported with its
 * margin over the runner-up and whether that margin exceeds the measured noise.
 *
 * Evaluations run in a worker process serving requests (exec/runner.c, serve
 * mode), which compiles the configurations a strategy proposes ahead of
 * measuring them; a crash, a hang or a sticky error costs one configuration (it
 * is recorded as failed) and a new worker. Every evaluation is appended to the
 * journal (journal.h) as soon as it is known, so a tune that is killed resumes
 * without repeating one; --replay evaluates from a recorded journal instead of a
 * device, so strategies can run anywhere (and be compared:
 * compare_strategies.c).
 *
 * Outputs: <out>.journal, <out>.csv (every evaluation as a row, as harness run
 * writes them), <out>.best.json, and a summary table.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "exec/runner.h"
#include "exec/worker.h"
#include "emu/emu_source.h"
#include "compare_strategies.h"
#include "export.h"
#include "journal.h"
#include "results/verdict.h"
#include "strategy.h"
#include "sweep.h"
#include "tune.h"

/* Configurations a strategy may propose at once (compiled ahead together). */
#define TUNE_BATCH 8
#define TUNE_DEFAULT_BUDGET 100
#define TUNE_DEFAULT_TOP 3
#define TUNE_MAX_SPACE 50000000LL
#define WATCHDOG_GRACE_S 3.0

typedef struct {
    const hn_cli *cli;
    hn_plan *plan;
    hn_variant base;           /* the tuned spec, its other defines' choices */
    const hn_strategy *strategy;
    hn_tune_budget budget;
    int64_t *cases;            /* the cases tuned */
    int n_cases;
    hn_journal *journal, *replay;
    char *prefix, *cache_dir;
    /* the device */
    hn_worker *wk;
    hn_run_shared *sh;
    hn_run_device dev;
    int have_dev;
    int tag;                   /* the next request's tag */
    hn_csv *csv;               /* <prefix>.csv, or NULL */
    int n_evals, n_failed, n_cached, n_missing;
    double t_start;
} tune_ctx;

/* ---------------------------------------------------------------------- */

int hn_tune_parse_budget(const char *text, hn_tune_budget *b, hn_err *err) {
    memset(b, 0, sizeof *b);
    if (!text) {
        b->evals = TUNE_DEFAULT_BUDGET;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    while (*end == ' ') end++;
    if (end == text || errno || !(v > 0) || !isfinite(v))
        return hn_errf(err, "--budget %s: expected a positive number of evaluations (100), seconds (60s) or a "
                            "percentage of the space (10%%)",
                       text);
    if (strcmp(end, "s") == 0) b->seconds = v;
    else if (strcmp(end, "%") == 0 && v <= 100) b->fraction = v / 100.0;
    else if (!*end && v == floor(v) && v <= 1e12) b->evals = (int64_t)v;
    else
        return hn_errf(err, "--budget %s: expected a positive number of evaluations (100), seconds (60s) or a "
                            "percentage of the space up to 100 (10%%)",
                       text);
    return 0;
}

/* The case's axis values as "a=1,b=2" (the journal's case key). */
static char *case_values(const hn_plan *p, const hn_case *c) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int a = 0; a < p->n_axes; a++) {
        char buf[64];
        hn_value_format(&c->values[a], buf, sizeof buf);
        hn_sb_addf(&sb, "%s%s=%s", a ? "," : "", p->axes[a].name, buf);
    }
    return hn_sb_detach(&sb);
}

/* ---------------------------------------------------------------------- */
/* the worker */

static int start_worker(tune_ctx *t, hn_err *err) {
    if (hn_worker_start_serve(t->cli, t->plan, t->sh, &t->wk, err) != 0) return -1;
    for (;;) {
        hn_msg m;
        int got = hn_worker_next(t->wk, 1.0, &m);
        if (got < 0) {
            int code, sig;
            hn_worker_wait(t->wk, &code, &sig);
            hn_worker_destroy(t->wk);
            t->wk = NULL;
            return hn_errf(err, "the worker process could not start (%s)", sig ? strsignal(sig) : "see above");
        }
        if (got == 0) continue;
        int dev = m.type == HN_MSG_DEVICE;
        if (dev && !t->have_dev) {
            t->dev = m.device;
            t->have_dev = 1;
        }
        hn_msg_free(&m);
        if (dev) return hn_worker_go(t->wk, 1) == 0 ? 0 : hn_errf(err, "the worker process went away");
    }
}

static void stop_worker(tune_ctx *t) {
    if (!t->wk) return;
    hn_run_request q = {.type = HN_REQ_STOP};
    hn_worker_request(t->wk, &q);
    hn_worker_destroy(t->wk);
    t->wk = NULL;
}

/* A request for configuration v (its defines' choices). */
static void fill_request(const tune_ctx *t, hn_run_request *q, const hn_variant *v) {
    const hn_variant_spec *spec = &t->plan->specs[v->spec];
    q->spec = v->spec;
    q->n = spec->n_defines;
    for (int d = 0; d < spec->n_defines && d < HN_RUN_MAX_DEFINES; d++) q->choice[d] = v->choice[d];
}

/* One evaluation on the device: status, median and noise; the row's CSV line
 * goes to <prefix>.csv. A worker that dies takes the configuration with it
 * (fault or timeout) and is replaced. */
/* Fields of a row's CSV line: its reason and compile time. */
static void row_fields(const hn_plan *p, const char *line, char *reason, size_t reason_size, double *compile_s) {
    int n_cols;
    const char **cols = hn_run_columns(p, &n_cols);
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n_cols; i++) {
        if (i) hn_sb_addc(&sb, ',');
        hn_csv_quote(&sb, cols[i]);
    }
    hn_sb_addf(&sb, "\n%s\n", line);
    free(cols);
    hn_table tb;
    hn_err e;
    if (hn_table_parse(sb.buf, "row", &tb, &e) == 0 && tb.n_rows == 1) {
        const char *r = hn_table_get(&tb, 0, "reason"), *c = hn_table_get(&tb, 0, "compile_s");
        if (*r) snprintf(reason, reason_size, "%s", r);
        if (*c) *compile_s = strtod(c, NULL);
        hn_table_free(&tb);
    }
    hn_sb_free(&sb);
}

static int device_eval(tune_ctx *t, const hn_variant *v, int64_t case_id, int full, int *status, double *ms,
                       double *noise, double *compile_s, char *reason, size_t reason_size, hn_err *err) {
    if (!t->wk && start_worker(t, err) != 0) return -1;
    hn_run_request q = {.type = HN_REQ_EVAL, .case_id = case_id, .full = full, .tag = t->tag++};
    fill_request(t, &q, v);
    *status = HN_ST_FAULT;
    *ms = *noise = *compile_s = NAN;
    reason[0] = '\0';
    if (hn_worker_request(t->wk, &q) != 0) goto died;
    int killed = 0;
    for (;;) {
        hn_msg m;
        int got = hn_worker_next(t->wk, 0.2, &m);
        if (got < 0) break;
        if (got == 1) {
            int mine = m.type == HN_MSG_ROW && m.slot == q.tag;
            if (mine) {
                *status = m.row.status;
                *ms = m.row.median_ms;
                *noise = m.row.noise;
                if (t->csv) {
                    hn_err werr;
                    if (hn_csv_write_line(t->csv, m.row.line, &werr) != 0) fprintf(stderr, "harness: %s\n", werr.msg);
                }
                row_fields(t->plan, m.row.line, reason, reason_size, compile_s);
                if (*status != HN_ST_OK && !reason[0]) snprintf(reason, reason_size, "%s", hn_status_names[*status]);
            }
            hn_msg_free(&m);
            if (mine) return 0;
            continue;
        }
        double limit = (t->cli->kernel_timeout > 0 ? t->cli->kernel_timeout : 60.0) + WATCHDOG_GRACE_S;
        double climit = t->cli->compile_timeout > 0 ? t->cli->compile_timeout : 600.0;
        double since = t->sh->busy_since, csince = t->sh->compile_since;
        if (!killed && ((since > 0 && hn_now() - since > limit) || (csince > 0 && hn_now() - csince > climit))) {
            *status = since > 0 && hn_now() - since > limit ? HN_ST_TIMEOUT : HN_ST_COMPILE;
            snprintf(reason, reason_size, "%s", *status == HN_ST_TIMEOUT ? "a launch never returned" : "the compile never ended");
            hn_worker_kill(t->wk);
            killed = 1;
        }
    }
died:;
    int code = 0, sig = 0;
    hn_worker_wait(t->wk, &code, &sig);
    if (!reason[0])
        snprintf(reason, reason_size, "the worker process %s%s", sig ? "died of " : "exited with code ",
                 sig ? strsignal(sig) : "");
    if (!sig && !strstr(reason, "never")) snprintf(reason + strlen(reason), reason_size - strlen(reason), "%d", code);
    hn_worker_destroy(t->wk);
    t->wk = NULL;
    t->sh->busy_since = t->sh->compile_since = 0;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* evaluations, through the journal */

/* The compile key of configuration v on this device. */
static void config_compile_key(const tune_ctx *t, const hn_variant *v, char key[33]) {
    int emu = strcmp(t->dev.backend, "emu") == 0;
    hn_build b;
    hn_build_init(&b, t->plan, v, NULL, 0, emu ? NULL : t->dev.dev.arch, t->cache_dir);
    hn_compile_key(emu ? HN_TARGET_EMU : HN_TARGET_CUDA, &b.req, key);
    hn_build_free(&b);
}

/* The cost of configuration `raw` of space s on case case_id in phase
 * "search" or "final": from the journal when known, else replayed or measured
 * (and journaled). */
static double eval_case(tune_ctx *t, const hn_space *s, int64_t raw, int64_t case_id, int final, double *noise,
                        int *fresh, hn_err *err) {
    const hn_plan *p = t->plan;
    const char *phase = final ? "final" : "search";
    hn_variant v = t->base;
    int nd = p->specs[v.spec].n_defines;
    v.choice = xcalloc((size_t)nd + 1, sizeof *v.choice);
    memcpy(v.choice, t->base.choice, (size_t)nd * sizeof *v.choice);
    hn_space_apply(s, raw, &v);
    char *config = hn_space_describe(s, raw);
    char *cv = case_values(p, &p->cases[case_id]);
    double cost = INFINITY;
    *noise = NAN;
    *fresh = 0;
    const hn_journal_entry *e = NULL;
    char compile_key[33] = "", key[33] = "";
    if (t->replay) {
        e = hn_journal_find_config(t->replay, p->specs[v.spec].name, config, cv, phase);
        if (!e && final) e = hn_journal_find_config(t->replay, p->specs[v.spec].name, config, cv, "search");
        if (e) {
            cost = strcmp(e->status, "ok") == 0 && isfinite(e->time_ms) ? e->time_ms : INFINITY;
            *noise = e->noise;
        } else {
            t->n_missing++;
        }
        *fresh = 1; /* a replayed evaluation spends budget like a measured one */
        t->n_evals++;
        if (!isfinite(cost)) t->n_failed++;
        goto done;
    }
    config_compile_key(t, &v, compile_key);
    hn_journal_key(compile_key, t->dev.dev.name, t->dev.backend, cv, phase, key);
    e = hn_journal_find(t->journal, key);
    if (e) {
        cost = strcmp(e->status, "ok") == 0 && isfinite(e->time_ms) ? e->time_ms : INFINITY;
        *noise = e->noise;
        t->n_cached++;
        goto done;
    }
    {
        int status;
        double ms, nz, compile_s;
        char reason[512];
        if (device_eval(t, &v, case_id, final, &status, &ms, &nz, &compile_s, reason, sizeof reason, err) != 0) {
            cost = NAN; /* no device at all */
            goto done;
        }
        *fresh = 1;
        t->n_evals++;
        cost = status == HN_ST_OK && isfinite(ms) ? ms : INFINITY;
        if (!isfinite(cost)) t->n_failed++;
        *noise = nz;
        hn_workload w;
        hn_err serr;
        char label[128] = "";
        if (hn_workload_shape(&w, p, &p->cases[case_id], &serr) == 0) snprintf(label, sizeof label, "%s", w.label);
        char stamp[32];
        time_t now = time(NULL);
        struct tm tmv;
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
        hn_journal_entry je = {.key = key, .variant = p->specs[v.spec].name, .config = config, .case_values = cv,
                               .label = label, .compile_key = compile_key, .device = t->dev.dev.name,
                               .backend = t->dev.backend, .phase = (char *)phase,
                               .status = (char *)hn_status_names[status], .reason = reason, .timestamp = stamp,
                               .case_id = case_id, .time_ms = status == HN_ST_OK ? ms : NAN, .noise = nz,
                               .compile_s = compile_s};
        if (hn_journal_append(t->journal, &je, err) != 0) cost = NAN;
    }
done:
    free(config);
    free(cv);
    free(v.choice);
    return cost;
}

/* The cost of a configuration over the unit's cases: the time of its case, or
 * across cases the geometric mean (INFINITY if any failed). NAN: the tuning
 * cannot go on (err says why). */
static double eval_unit(tune_ctx *t, const hn_space *s, int64_t raw, const int64_t *cases, int n_cases, int final,
                        double *noise, int *fresh, hn_err *err) {
    double logsum = 0, worst_noise = 0;
    int any_fresh = 0, failed = 0;
    for (int i = 0; i < n_cases; i++) {
        double nz;
        int f;
        double c = eval_case(t, s, raw, cases[i], final, &nz, &f, err);
        if (isnan(c)) return NAN;
        any_fresh |= f;
        if (!isfinite(c) || c <= 0) failed = 1;
        else logsum += log(c);
        if (isfinite(nz) && nz > worst_noise) worst_noise = nz;
    }
    *noise = worst_noise;
    *fresh = any_fresh;
    return failed ? INFINITY : exp(logsum / n_cases);
}

/* ---------------------------------------------------------------------- */
/* a search */

typedef struct {
    int64_t pos;
    double cost, noise;
} scored;

static int by_cost(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->cost < y->cost) return -1;
    if (x->cost > y->cost) return 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Costs already known in this search, by position (open addressing). */
typedef struct {
    int64_t *pos;
    double *cost, *noise;
    int64_t size, n;
} cost_map;

static void cm_put(cost_map *m, int64_t pos, double cost, double noise);

static void cm_grow(cost_map *m) {
    cost_map old = *m;
    m->size = old.size ? 2 * old.size : 1024;
    m->pos = xmalloc((size_t)m->size * sizeof *m->pos);
    m->cost = xmalloc((size_t)m->size * sizeof *m->cost);
    m->noise = xmalloc((size_t)m->size * sizeof *m->noise);
    for (int64_t i = 0; i < m->size; i++) m->pos[i] = -1;
    m->n = 0;
    for (int64_t i = 0; i < old.size; i++)
        if (old.pos[i] >= 0) cm_put(m, old.pos[i], old.cost[i], old.noise[i]);
    free(old.pos), free(old.cost), free(old.noise);
}

static int64_t cm_slot(const cost_map *m, int64_t pos) {
    int64_t h = (int64_t)((uint64_t)pos * 0x9e3779b97f4a7c15ULL % (uint64_t)m->size);
    while (m->pos[h] >= 0 && m->pos[h] != pos) h = (h + 1) % m->size;
    return h;
}

static void cm_put(cost_map *m, int64_t pos, double cost, double noise) {
    if ((m->n + 1) * 2 > m->size) cm_grow(m);
    int64_t h = cm_slot(m, pos);
    if (m->pos[h] < 0) m->n++;
    m->pos[h] = pos;
    m->cost[h] = cost;
    m->noise[h] = noise;
}

static int cm_get(const cost_map *m, int64_t pos, double *cost, double *noise) {
    if (!m->size) return 0;
    int64_t h = cm_slot(m, pos);
    if (m->pos[h] != pos) return 0;
    *cost = m->cost[h];
    *noise = m->noise[h];
    return 1;
}

static void cm_free(cost_map *m) {
    free(m->pos), free(m->cost), free(m->noise);
}

int64_t hn_tune_max_evals(const hn_tune_budget *budget, const hn_space *s) {
    int64_t max_evals = budget->evals > 0 ? budget->evals : INT64_MAX;
    if (budget->fraction > 0) {
        int64_t f = (int64_t)ceil(budget->fraction * (double)s->n_valid);
        max_evals = f < 1 ? 1 : f;
    }
    return max_evals > s->n_valid ? s->n_valid : max_evals;
}

int hn_tune_search(const hn_strategy *st, const hn_space *s, uint64_t seed, const hn_tune_budget *budget,
                   hn_tune_eval_fn eval, void *ctx, hn_tune_trace *trace, hn_err *err) {
    memset(trace, 0, sizeof *trace);
    int64_t max_evals = hn_tune_max_evals(budget, s);
    double t0 = hn_now();
    void *state = st->create(s, seed);
    cost_map known = {0};
    trace->best_pos = -1;
    trace->best_cost = INFINITY;
    int rc = 0;
    int64_t repeats = 0;
    while (trace->evals < max_evals && (budget->seconds <= 0 || hn_now() - t0 < budget->seconds)) {
        int64_t batch[TUNE_BATCH];
        int room = max_evals - trace->evals < TUNE_BATCH ? (int)(max_evals - trace->evals) : TUNE_BATCH;
        int n = st->propose(state, batch, room);
        if (n <= 0) break; /* exhausted */
        if (eval.prefetch) eval.prefetch(ctx, s, batch, n);
        int new_ones = 0;
        for (int i = 0; i < n && trace->evals < max_evals; i++) {
            double cost, noise;
            if (!cm_get(&known, batch[i], &cost, &noise)) {
                int fresh = 0;
                cost = eval.fn(ctx, s, batch[i], &noise, &fresh, err);
                if (isnan(cost)) {
                    rc = -1;
                    goto out;
                }
                cm_put(&known, batch[i], cost, noise);
                trace->evals++;
                new_ones++;
                if (trace->n_curve < HN_TUNE_MAX_CURVE) trace->curve[trace->n_curve++] = cost < trace->best_cost ? cost : trace->best_cost;
                if (cost < trace->best_cost) trace->best_cost = cost, trace->best_pos = batch[i], trace->best_at = trace->evals;
            }
            st->observe(state, batch[i], cost);
        }
        /* a strategy that only proposes what it already knows is done */
        repeats = new_ones ? 0 : repeats + 1;
        if (repeats > 1000) break;
    }
out:
    trace->seconds = hn_now() - t0;
    /* the best few, for the final re-measure */
    trace->n_top = 0;
    if (known.size) {
        scored *all = xmalloc((size_t)known.n * sizeof *all);
        int64_t k = 0;
        for (int64_t i = 0; i < known.size; i++)
            if (known.pos[i] >= 0 && isfinite(known.cost[i])) all[k++] = (scored){known.pos[i], known.cost[i], known.noise[i]};
        qsort(all, (size_t)k, sizeof *all, by_cost);
        for (int64_t i = 0; i < k && trace->n_top < HN_TUNE_MAX_TOP; i++) {
            trace->top[trace->n_top] = all[i].pos;
            trace->top_cost[trace->n_top++] = all[i].cost;
        }
        free(all);
    }
    cm_free(&known);
    st->destroy(state);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* the command */

typedef struct {
    tune_ctx *t;
    const int64_t *cases;
    int n_cases;
    /* progress on stderr */
    const char *what;
    int64_t max_evals, done;
    double t0, best, printed;
    int tty;
} unit_ctx;

/* The search's evaluations so far, its best and the time left: at most once a
 * second (always the last), one line each, or one updated line on a terminal. */
static void unit_progress(unit_ctx *u) {
    const hn_cli *cli = u->t->cli;
    double now = hn_now(), el = now - u->t0;
    int last = u->done >= u->max_evals;
    if (cli->quiet || (!last && now - u->printed < 1.0)) return;
    u->printed = now;
    char left[48] = "", best[48] = "no correct configuration yet";
    double budget_s = u->t->budget.seconds;
    double rest = u->done ? el / (double)u->done * (double)(u->max_evals - u->done) : NAN;
    if (budget_s > 0 && (!isfinite(rest) || budget_s - el < rest)) rest = budget_s - el;
    if (!last && isfinite(rest) && rest >= 0) snprintf(left, sizeof left, ", about %.0f s left", rest);
    if (isfinite(u->best)) snprintf(best, sizeof best, "best %.5g ms", u->best);
    char total[24] = "?";
    if (u->max_evals < INT64_MAX) snprintf(total, sizeof total, "%lld", (long long)u->max_evals);
    fprintf(stderr, "%s[tune] %s: %lld/%s evaluations, %s, %.1f s%s%s", u->tty ? "\r\033[K" : "", u->what,
            (long long)u->done, total, best, el, left, u->tty && !last ? "" : "\n");
    fflush(stderr);
}

static double unit_eval(void *ctx, const hn_space *s, int64_t pos, double *noise, int *fresh, hn_err *err) {
    unit_ctx *u = ctx;
    double c = eval_unit(u->t, s, s->valid[pos], u->cases, u->n_cases, 0, noise, fresh, err);
    u->done++;
    if (c < u->best) u->best = c;
    unit_progress(u);
    return c;
}

/* Compiles a batch ahead: the worker queues the configurations it has not seen. */
static void unit_prefetch(void *ctx, const hn_space *s, const int64_t *pos, int n) {
    unit_ctx *u = ctx;
    tune_ctx *t = u->t;
    if (t->replay || !t->wk) return;
    const hn_plan *p = t->plan;
    int nd = p->specs[t->base.spec].n_defines;
    hn_variant v = t->base;
    v.choice = xcalloc((size_t)nd + 1, sizeof *v.choice);
    for (int i = 0; i < n; i++) {
        memcpy(v.choice, t->base.choice, (size_t)nd * sizeof *v.choice);
        hn_space_apply(s, s->valid[pos[i]], &v);
        hn_run_request q = {.type = HN_REQ_PREFETCH};
        fill_request(t, &q, &v);
        if (hn_worker_request(t->wk, &q) != 0) break;
    }
    free(v.choice);
}

/* The intersection of two spaces of the same spec (positions valid in both). */
static void intersect(hn_space *a, const hn_space *b) {
    int64_t i = 0, j = 0, k = 0;
    while (i < a->n_valid && j < b->n_valid) {
        if (a->valid[i] < b->valid[j]) i++;
        else if (a->valid[i] > b->valid[j]) j++;
        else a->valid[k++] = a->valid[i++], j++;
    }
    a->n_valid = k;
}

/* Whether the variant's source tree (its .cu and the headers it includes from
 * its folder and include folders) uses identifier name. */
static int source_uses(const hn_variant_spec *spec, const char *name) {
    char **files = xcalloc(2, sizeof *files);
    int n = 1, used = 0;
    files[0] = xstrdup(spec->file);
    for (int i = 0; i < n && !used; i++) { /* grows as headers include headers */
        char *text = NULL;
        if (hn_read_file(files[i], &text, NULL, NULL) != 0) {
            if (i == 0) used = 1; /* the compile will say */
            continue;
        }
        used = emu_src_uses_ident(text, name);
        char *dir = hn_dirname(files[i]);
        emu_src_quoted_includes(text, dir, (const char *const *)spec->include_dirs, spec->n_include_dirs, &files, &n);
        free(dir);
        free(text);
    }
    for (int i = 0; i < n; i++) free(files[i]);
    free(files);
    return used;
}

/* Journal entries of a unit, grouped by configuration and compile key. */
typedef struct {
    const char *config, *compile_key;
    int n;
    double logsum;
} known_cfg;

static int by_config(const void *a, const void *b) {
    const known_cfg *x = a, *y = b;
    int c = strcmp(x->config, y->config);
    return c ? c : strcmp(x->compile_key, y->compile_key);
}

static int by_logsum(const void *a, const void *b) {
    double x = ((const known_cfg *)a)->logsum, y = ((const known_cfg *)b)->logsum;
    return (x > y) - (x < y);
}

/* The best time the journal knows for the unit (its cases; across cases the
 * geometric mean of configurations known on all of them), INFINITY if none.
 * From a device journal only entries of this device whose compile key is still
 * the configuration's count: an edited kernel's old times are not "known". */
static double best_known(tune_ctx *t, const hn_space *s, const int64_t *cases, int n_cases) {
    const hn_journal *j = t->replay ? t->replay : t->journal;
    const hn_plan *p = t->plan;
    const char *variant = p->specs[t->base.spec].name;
    char **cvs = xcalloc((size_t)n_cases, sizeof *cvs);
    for (int i = 0; i < n_cases; i++) cvs[i] = case_values(p, &p->cases[cases[i]]);
    int n = hn_journal_count(j), k = 0;
    known_cfg *all = xcalloc((size_t)n + 1, sizeof *all);
    for (int i = 0; i < n; i++) {
        const hn_journal_entry *e = hn_journal_at(j, i);
        if (strcmp(e->variant, variant) != 0 || strcmp(e->phase, "search") != 0 || strcmp(e->status, "ok") != 0 ||
            !(e->time_ms > 0))
            continue;
        if (!t->replay && (strcmp(e->device, t->dev.dev.name) != 0 || strcmp(e->backend, t->dev.backend) != 0))
            continue;
        for (int c = 0; c < n_cases; c++)
            if (strcmp(e->case_values, cvs[c]) == 0)
                all[k++] = (known_cfg){e->config, t->replay ? "" : e->compile_key, 1, log(e->time_ms)};
    }
    qsort(all, (size_t)k, sizeof *all, by_config);
    /* each configuration's cases merged (the cases are distinct journal keys) */
    int m = 0;
    for (int i = 0; i < k;) {
        int e = i + 1;
        known_cfg g = all[i];
        for (; e < k && by_config(&all[e], &g) == 0; e++) g.n++, g.logsum += all[e].logsum;
        if (g.n >= n_cases) {
            g.logsum /= g.n;
            all[m++] = g;
        }
        i = e;
    }
    qsort(all, (size_t)m, sizeof *all, by_logsum);
    double best = INFINITY;
    int nd = p->specs[t->base.spec].n_defines;
    hn_variant v = t->base;
    v.choice = xcalloc((size_t)nd + 1, sizeof *v.choice);
    for (int i = 0; i < m && !isfinite(best); i++) {
        int64_t raw = hn_space_parse(s, all[i].config);
        if (raw < 0 || hn_space_find(s, raw) < 0) continue;
        if (!t->replay) { /* still the same kernel? */
            memcpy(v.choice, t->base.choice, (size_t)nd * sizeof *v.choice);
            hn_space_apply(s, raw, &v);
            char key[33];
            config_compile_key(t, &v, key);
            if (strcmp(key, all[i].compile_key) != 0) continue;
        }
        best = exp(all[i].logsum);
    }
    free(v.choice);
    free(all);
    for (int i = 0; i < n_cases; i++) free(cvs[i]);
    free(cvs);
    return best;
}

static cJSON *best_doc(tune_ctx *t, cJSON *units) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "config", t->plan->path);
    cJSON_AddStringToObject(root, "variant", t->plan->specs[t->base.spec].name);
    cJSON_AddStringToObject(root, "kernel", t->plan->specs[t->base.spec].kernel);
    cJSON_AddStringToObject(root, "mode", t->cli->across ? "across cases" : "per case");
    cJSON_AddStringToObject(root, "strategy", t->strategy->name);
    cJSON_AddStringToObject(root, "device", t->have_dev ? t->dev.dev.name : "");
    cJSON_AddStringToObject(root, "backend", t->have_dev ? t->dev.backend : "");
    cJSON_AddItemToObject(root, "results", units);
    return root;
}

/* <prefix>.best.json, <prefix>.h (with --with-best's devices) and the T4 files;
 * takes units. 0, or 2 when one could not be written. */
static int write_outputs(tune_ctx *t, cJSON *units) {
    const char *variant = t->plan->specs[t->base.spec].name;
    int rc = 0, n_docs = 1;
    hn_err err;
    cJSON *docs[33] = {best_doc(t, units)};
    char *bpath = xasprintf("%s.best.json", t->prefix);
    char *text = cJSON_Print(docs[0]);
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_addf(&sb, "%s\n", text);
    free(text);
    if (hn_write_file(bpath, sb.buf, sb.len, &err) != 0) {
        fprintf(stderr, "harness tune: %s\n", err.msg);
        rc = 2;
    } else {
        printf("\nbest configurations: %s\n", bpath);
    }
    hn_sb_free(&sb);
    free(bpath);
    /* other devices' results for the header */
    char *list = t->cli->with_best ? xstrdup(t->cli->with_best) : NULL;
    for (char *save = NULL, *f = list ? strtok_r(list, ",", &save) : NULL; f && n_docs < 33;
         f = strtok_r(NULL, ",", &save)) {
        char *json = NULL;
        cJSON *d = NULL;
        if (hn_read_file(f, &json, NULL, &err) == 0) d = cJSON_Parse(json);
        free(json);
        const cJSON *v = d ? cJSON_GetObjectItemCaseSensitive(d, "variant") : NULL;
        if (!d || !cJSON_IsString(v) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, "results"))) {
            fprintf(stderr, "harness tune: --with-best %s: not a best.json written by harness tune\n", f);
            cJSON_Delete(d);
            rc = 2;
            continue;
        }
        if (strcmp(v->valuestring, variant) != 0) {
            fprintf(stderr, "harness tune: --with-best %s: tunes variant '%s', not '%s'\n", f, v->valuestring, variant);
            cJSON_Delete(d);
            rc = 2;
            continue;
        }
        docs[n_docs++] = d;
    }
    free(list);
    char *hpath = xasprintf("%s.h", t->prefix);
    if (hn_tune_write_header(hpath, variant, docs, n_docs, &err) != 0) {
        fprintf(stderr, "harness tune: %s\n", err.msg);
        rc = 2;
    } else {
        printf("C header: %s (%d device%s)\n", hpath, n_docs, n_docs == 1 ? "" : "s");
    }
    free(hpath);
    for (int i = 0; i < n_docs; i++) cJSON_Delete(docs[i]);
    /* T4: every evaluation of each case on this device */
    if (t->have_dev) {
        long long *ids = xcalloc((size_t)t->n_cases, sizeof *ids);
        char **cvs = xcalloc((size_t)t->n_cases, sizeof *cvs);
        for (int i = 0; i < t->n_cases; i++) {
            ids[i] = t->cases[i];
            cvs[i] = case_values(t->plan, &t->plan->cases[t->cases[i]]);
        }
        char *dir = xasprintf("%s.t4", t->prefix);
        int n = hn_tune_write_t4(dir, t->journal, variant, t->dev.dev.name, t->dev.backend, ids, cvs, t->n_cases, &err);
        if (n < 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            rc = 2;
        } else {
            printf("T4 results: %s/ (%d case%s)\n", dir, n, n == 1 ? "" : "s");
        }
        free(dir);
        for (int i = 0; i < t->n_cases; i++) free(cvs[i]);
        free(cvs);
        free(ids);
    }
    return rc;
}

/* --compare-strategies: the units' names and case values for compare_strategies.c. */
static int compare(tune_ctx *t, hn_space **spaces, int n_units, int across) {
    const hn_plan *p = t->plan;
    char **names = xcalloc((size_t)n_units, sizeof *names);
    int *n_cases = xcalloc((size_t)n_units, sizeof *n_cases);
    char ***cvs = xcalloc((size_t)n_units, sizeof *cvs);
    for (int u = 0; u < n_units; u++) {
        n_cases[u] = across ? t->n_cases : 1;
        names[u] = across ? xasprintf("across %d cases", t->n_cases) : xasprintf("case %lld", (long long)t->cases[u]);
        cvs[u] = xcalloc((size_t)n_cases[u], sizeof *cvs[u]);
        for (int c = 0; c < n_cases[u]; c++) cvs[u][c] = case_values(p, &p->cases[t->cases[across ? c : u]]);
    }
    hn_tune_compare_in in = {.variant = p->specs[t->base.spec].name, .journal = t->replay,
                             .journal_path = t->cli->replay, .n_units = n_units, .spaces = spaces,
                             .unit_names = (const char *const *)names, .unit_n_cases = n_cases,
                             .unit_case_values = (char *const *const *)cvs, .budget = &t->budget,
                             .repeats = t->cli->repeats,
                             .seed = t->cli->seed >= 0 ? (uint64_t)t->cli->seed : p->seed, .prefix = t->prefix};
    hn_err err;
    int rc = hn_tune_compare(&in, &err) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "harness tune: %s\n", err.msg);
    for (int u = 0; u < n_units; u++) {
        for (int c = 0; c < n_cases[u]; c++) free(cvs[u][c]);
        free(cvs[u]);
        free(names[u]);
    }
    free(cvs);
    free(names);
    free(n_cases);
    return rc;
}

int hn_cmd_tune(const hn_cli *cli) {
    hn_err err;
    tune_ctx t;
    memset(&t, 0, sizeof t);
    t.cli = cli;
    t.t_start = hn_now();
    if (hn_plan_load(cli->config, cli->seed, &t.plan, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    hn_plan *p = t.plan;
    int rc = 2;
    hn_space **spaces = NULL;
    int n_units = 0;
    hn_tune_trace *trace = NULL;
    cJSON *units = NULL;

    /* the variant: --variant NAME, else the first with tunables */
    int spec = -1;
    for (int i = 0; i < p->n_specs && spec < 0; i++) {
        int tunables = 0;
        for (int d = 0; d < p->specs[i].n_defines; d++) tunables += p->specs[i].defines[d].tunable;
        int named = cli->n_only == 0 || strcmp(p->specs[i].name, cli->only[0]) == 0;
        if (tunables && named) spec = i;
    }
    if (spec < 0) {
        fprintf(stderr, "harness tune: %s: %s\n", p->path,
                cli->n_only ? "no variant of that name has tunables (\"tune\")"
                            : "no variant has tunables (a \"tune\" object of NAME: values)");
        goto done;
    }
    for (int v = 0; v < p->n_variants; v++)
        if (p->variants[v].spec == spec) {
            t.base = p->variants[v];
            break;
        }
    /* every tunable must appear in the kernel's source */
    for (int d = 0; d < p->specs[spec].n_defines; d++) {
        const hn_axis *ax = &p->specs[spec].defines[d];
        if (ax->tunable && !source_uses(&p->specs[spec], ax->name)) {
            fprintf(stderr,
                    "harness tune: %s: variants[%d].tune.%s: the kernel's source (%s) never uses %s, so tuning it "
                    "would change nothing\n",
                    p->path, spec, ax->name, p->specs[spec].file, ax->name);
            goto done;
        }
    }
    const char *budget_text = cli->budget ? cli->budget : p->tuning.budget;
    if (hn_tune_parse_budget(budget_text, &t.budget, &err) != 0) {
        fprintf(stderr, "harness tune: %s%s%s\n", cli->budget ? "" : p->path, cli->budget ? "" : ": tuning.budget: ",
                err.msg);
        goto done;
    }
    const char *sname = cli->strategy ? cli->strategy : p->tuning.strategy ? p->tuning.strategy : "bandit";
    t.strategy = hn_strategy_find(sname);
    if (!t.strategy) {
        fprintf(stderr, "harness tune: %s%s: unknown strategy '%s' (known: %s)\n", cli->strategy ? "--strategy" : p->path,
                cli->strategy ? "" : ": tuning.strategy", sname, hn_strategy_names());
        goto done;
    }
    if (cli->compare_strategies && !cli->replay) {
        fprintf(stderr, "harness tune: --compare-strategies needs --replay JOURNAL (a recorded journal, best a "
                        "brute-force one: --strategy brute_force --budget 100%%)\n");
        goto done;
    }
    if (cli->compare_strategies && t.budget.seconds > 0) {
        fprintf(stderr, "harness tune: --compare-strategies: the budget must be evaluations or a fraction of the "
                        "space (a replayed evaluation takes no time)\n");
        goto done;
    }
    int across = cli->across || p->tuning.across == 1;
    /* the cases */
    if (cli->case_id >= 0) {
        if (cli->case_id >= p->n_cases) {
            fprintf(stderr, "harness tune: --case %lld: the plan has %lld cases\n", (long long)cli->case_id,
                    (long long)p->n_cases);
            goto done;
        }
        t.n_cases = 1;
        t.cases = xcalloc(1, sizeof *t.cases);
        t.cases[0] = cli->case_id;
    } else {
        t.n_cases = (int)p->n_cases;
        t.cases = xcalloc((size_t)t.n_cases + 1, sizeof *t.cases);
        for (int i = 0; i < t.n_cases; i++) t.cases[i] = i;
    }
    t.prefix = cli->out ? xstrdup(cli->out) : xasprintf("results/%s.tune", p->name);
    t.cache_dir = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();

    /* the evaluator: a recorded journal, or a device */
    if (cli->replay) {
        if (hn_journal_load(cli->replay, &t.replay, &err) != 0) {
            fprintf(stderr, "harness tune: --replay: %s\n", err.msg);
            goto done;
        }
    } else {
        t.sh = hn_run_shared_create(p->n_cases, p->n_variants, p->op->n_baselines);
        if (!t.sh || start_worker(&t, &err) != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            goto done;
        }
    }

    /* on the emulator, the cases within its budget, as harness run */
    if (t.have_dev && strcmp(t.dev.backend, "emu") == 0) {
        double max_gflop, max_mb;
        hn_emu_budget(cli, p, 1, &max_gflop, &max_mb);
        int kept = 0;
        for (int i = 0; i < t.n_cases; i++) {
            hn_workload w;
            char why[256];
            if (hn_workload_shape(&w, p, &p->cases[t.cases[i]], &err) == 0 &&
                hn_emu_over_budget(max_gflop, max_mb, &w, why, sizeof why)) {
                fprintf(stderr, "harness tune: case %lld (%s) left out: %s\n", (long long)t.cases[i], w.label, why);
                continue;
            }
            t.cases[kept++] = t.cases[i];
        }
        if (!kept) {
            fprintf(stderr, "harness tune: %s: no case is within the emulator's budget\n", p->path);
            goto done;
        }
        t.n_cases = kept;
    }

    /* the spaces: one per case, or their intersection across cases */
    n_units = across ? 1 : t.n_cases;
    spaces = xcalloc((size_t)n_units, sizeof *spaces);
    for (int i = 0; i < t.n_cases; i++) {
        const hn_case *c = &p->cases[t.cases[i]];
        double params[HN_MAX_PARAMS];
        if (hn_plan_case_params(p, c, params, &err) != 0) {
            fprintf(stderr, "harness tune: %s: case %lld: %s\n", p->path, (long long)c->id, err.msg);
            goto done;
        }
        hn_space *s = NULL;
        if (hn_space_build(p, &t.base, c, params, t.have_dev ? &t.dev.dev : NULL, TUNE_MAX_SPACE, &s, &err) != 0) {
            fprintf(stderr, "harness tune: %s: %s\n", p->path, err.msg);
            goto done;
        }
        if (!across) spaces[i] = s;
        else if (!spaces[0]) spaces[0] = s;
        else {
            intersect(spaces[0], s);
            spaces[0]->build_seconds += s->build_seconds;
            hn_space_free(s);
        }
    }
    for (int u = 0; u < n_units; u++) {
        hn_space *s = spaces[u];
        char what[96];
        if (across) snprintf(what, sizeof what, "across %d cases", t.n_cases);
        else snprintf(what, sizeof what, "case %lld", (long long)t.cases[u]);
        printf("space of %s, %s: %.6g raw configurations, %lld valid (%.3g%%), built in %.3f s (%lld restriction "
               "evaluations)\n",
               p->specs[spec].name, what, s->n_raw, (long long)s->n_valid, 100.0 * (double)s->n_valid / s->n_raw,
               s->build_seconds, (long long)s->evaluations);
        if (s->n_valid == 0) {
            fprintf(stderr, "harness tune: %s: variants[%d].restrict: no configuration satisfies the restrictions for %s "
                            "(the space is empty)\n",
                    p->path, spec, what);
            goto done;
        }
    }
    if (cli->space_only) {
        rc = 0;
        goto done;
    }
    if (cli->compare_strategies) {
        rc = compare(&t, spaces, n_units, across);
        goto done;
    }

    /* the results file and the journal */
    if (!t.replay) {
        char *jpath = cli->journal ? xstrdup(cli->journal) : xasprintf("%s.journal", t.prefix);
        int jrc = hn_journal_open(jpath, &t.journal, &err);
        if (jrc == 0 && hn_journal_skipped(t.journal))
            fprintf(stderr, "harness tune: %s: %d incomplete line(s) skipped (a tuning killed while writing)\n", jpath,
                    hn_journal_skipped(t.journal));
        if (jrc == 0) printf("journal: %s (%d evaluations known)\n", jpath, hn_journal_count(t.journal));
        free(jpath);
        if (jrc != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            goto done;
        }
        int n_cols;
        const char **cols = hn_run_columns(p, &n_cols);
        char *cpath = xasprintf("%s.csv", t.prefix);
        int exists = hn_file_exists(cpath);
        int crc = exists ? hn_csv_append(cpath, cols, n_cols, &t.csv, &err) : hn_csv_open(cpath, cols, n_cols, &t.csv, &err);
        free(cpath);
        free(cols);
        if (crc != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            goto done;
        }
    } else {
        hn_journal_open(NULL, &t.journal, &err);
    }
    printf("tuning %s (%s) %s with %s, budget %s, on %s\n", p->specs[spec].name, p->specs[spec].kernel,
           across ? "across cases (one configuration, geometric mean of the times)" : "per case",
           t.strategy->name, budget_text ? budget_text : "100", t.replay ? "a replayed journal" : t.dev.dev.name);
    fflush(stdout);

    trace = xmalloc(sizeof *trace);
    units = cJSON_CreateArray();
    printf("\n%-26s %-14s %6s %11s %8s %11s %11s %9s  %s\n", "unit", "strategy", "evals", "search ms", "of best",
           "final ms", "runner-up", "margin", "configuration");
    int top_k = cli->top >= 0 ? cli->top : p->tuning.top >= 0 ? p->tuning.top : TUNE_DEFAULT_TOP;
    if (top_k > HN_TUNE_MAX_TOP) top_k = HN_TUNE_MAX_TOP;
    rc = 0;
    for (int u = 0; u < n_units; u++) {
        hn_space *s = spaces[u];
        char what[96];
        if (across) snprintf(what, sizeof what, "across %d cases", t.n_cases);
        else snprintf(what, sizeof what, "case %lld", (long long)t.cases[u]);
        unit_ctx uc = {&t, across ? t.cases : &t.cases[u], across ? t.n_cases : 1, what,
                       hn_tune_max_evals(&t.budget, s), 0, hn_now(), INFINITY, 0, isatty(2)};
        hn_tune_eval_fn ev = {unit_eval, unit_prefetch};
        uint64_t seed = cli->seed >= 0 ? (uint64_t)cli->seed : p->seed;
        if (hn_tune_search(t.strategy, s, seed, &t.budget, ev, &uc, trace, &err) != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            rc = 1;
            break;
        }
        /* the best few again, with the full sampling rules */
        int64_t win = -1, second = -1;
        double win_ms = INFINITY, second_ms = INFINITY, win_noise = NAN, second_noise = NAN;
        for (int k = 0; k < trace->n_top && k < (top_k > 0 ? top_k : 1); k++) {
            double nz;
            int fresh;
            double c = top_k > 0 ? eval_unit(&t, s, s->valid[trace->top[k]], uc.cases, uc.n_cases, 1, &nz, &fresh, &err)
                                 : trace->top_cost[k];
            if (isnan(c)) break;
            if (c < win_ms) {
                second = win, second_ms = win_ms, second_noise = win_noise;
                win = trace->top[k], win_ms = c, win_noise = nz;
            } else if (c < second_ms) {
                second = trace->top[k], second_ms = c, second_noise = nz;
            }
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "unit", what);
        if (!across) {
            cJSON_AddNumberToObject(o, "case", (double)t.cases[u]);
            char *cv = case_values(p, &p->cases[t.cases[u]]);
            cJSON_AddStringToObject(o, "case_values", cv);
            free(cv);
        }
        cJSON_AddNumberToObject(o, "evaluations", (double)trace->evals);
        cJSON_AddNumberToObject(o, "valid_configurations", (double)s->n_valid);
        if (win < 0) {
            printf("%-26s %-14s %6lld  %s\n", what, t.strategy->name, (long long)trace->evals,
                   "no configuration ran correctly");
            cJSON_AddStringToObject(o, "result", "no configuration ran correctly");
            cJSON_AddItemToArray(units, o);
            rc = 1;
            continue;
        }
        char *cfg = hn_space_describe(s, s->valid[win]);
        int within = second >= 0 && hn_verdict_within_noise(win_ms, win_noise, second_ms, second_noise);
        char margin[32] = "-";
        if (second >= 0) snprintf(margin, sizeof margin, "%.3fx%s", second_ms / win_ms, within ? "~" : "");
        double known = best_known(&t, s, uc.cases, uc.n_cases);
        if (!(known < trace->best_cost)) known = trace->best_cost;
        char of_best[16];
        snprintf(of_best, sizeof of_best, "%.1f%%", 100.0 * known / trace->best_cost);
        printf("%-26s %-14s %6lld %11.5g %8s %11.5g %11.5g %9s  %s\n", what, t.strategy->name, (long long)trace->evals,
               trace->best_cost, of_best, win_ms, second_ms, margin, cfg);
        cJSON *conf = cJSON_CreateObject();
        const hn_variant_spec *sp = &p->specs[spec];
        for (int ti = 0; ti < s->n_tunables; ti++) {
            const hn_axis *ax = &sp->defines[s->define_index[ti]];
            const hn_value *val = &ax->values[hn_space_value(s, s->valid[win], ti)];
            if (val->type == HN_VAL_STR) cJSON_AddStringToObject(conf, ax->name, val->s);
            else if (val->type == HN_VAL_INT) cJSON_AddNumberToObject(conf, ax->name, (double)val->i);
            else cJSON_AddNumberToObject(conf, ax->name, val->f);
        }
        cJSON_AddItemToObject(o, "config", conf);
        cJSON_AddStringToObject(o, "defines", cfg);
        cJSON_AddNumberToObject(o, "time_ms", win_ms);
        if (isfinite(win_noise)) cJSON_AddNumberToObject(o, "noise", win_noise);
        if (second >= 0) {
            char *rcfg = hn_space_describe(s, s->valid[second]);
            cJSON_AddStringToObject(o, "runner_up", rcfg);
            cJSON_AddNumberToObject(o, "runner_up_ms", second_ms);
            cJSON_AddNumberToObject(o, "margin", second_ms / win_ms);
            cJSON_AddBoolToObject(o, "within_noise", within);
            free(rcfg);
        }
        cJSON_AddNumberToObject(o, "found_at_evaluation", (double)trace->best_at);
        cJSON_AddNumberToObject(o, "search_ms", trace->best_cost);
        cJSON_AddNumberToObject(o, "best_known_ms", known);
        cJSON_AddNumberToObject(o, "fraction_of_best_known", known / trace->best_cost);
        cJSON_AddItemToArray(units, o);
        free(cfg);
    }
    if (!t.replay) {
        int wrc = write_outputs(&t, units);
        units = NULL;
        if (wrc) rc = wrc;
    }
    printf("evaluations: %d %s (%d failed), %d from the journal; %.1f s\n", t.n_evals,
           t.replay ? "replayed" : "measured", t.n_failed, t.n_cached, hn_now() - t.t_start);
    if (t.replay && t.n_missing)
        printf("%d configuration(s) proposed are not in %s (counted as failed)\n", t.n_missing, cli->replay);
    printf("(of best: the best search time known for the unit, in the journal, over this search's best; ~ after a "
           "margin: within the measured noise)\n");
done:
    cJSON_Delete(units);
    free(trace);
    for (int u = 0; spaces && u < n_units; u++) hn_space_free(spaces[u]);
    free(spaces);
    stop_worker(&t);
    hn_run_shared_destroy(t.sh);
    hn_csv_close(t.csv);
    hn_journal_close(t.journal);
    hn_journal_close(t.replay);
    free(t.cases);
    free(t.prefix);
    free(t.cache_dir);
    hn_plan_free(p);
    return rc;
}
