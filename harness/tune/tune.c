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
 * Interrupts (interrupt.h), from the first evaluation: the first SIGINT lets
 * the evaluations in flight finish and starts no other; a second, or SIGTERM,
 * kills the workers and drops theirs (not journaled: a resumed tune makes them).
 * Either way the summary gives each unit's best so far, marked interrupted, and
 * how to resume (exit 130 / 143); best.json and the other outputs are left to
 * the tune that finishes.
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
#include "interrupt.h"
#include "journal.h"
#include "results/verdict.h"
#include "scale/devices.h"
#include "scale/meta.h"
#include "scale/shard.h"
#include "strategy.h"
#include "sweep.h"
#include "tune.h"

/* Configurations a strategy may propose at once (compiled ahead together). */
#define TUNE_BATCH 8
#define TUNE_DEFAULT_BUDGET 100
#define TUNE_DEFAULT_TOP 3
#define TUNE_MAX_SPACE 50000000LL
#define WATCHDOG_GRACE_S 3.0

/* One worker process (a lane: one device) and the evaluation it runs. */
typedef struct {
    hn_worker *wk;             /* NULL until started, and after it died */
    int job;                   /* the job it runs (run_jobs), or -1 */
    int killed;                /* the watchdog killed it */
    int watchdog;
    int dead;                  /* could not be started: left out */
    int began;                 /* the worker said it began its job (ROW_BEGIN) */
} tune_lane;

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
    /* the devices */
    hn_devices devs;
    hn_lane_place places[HN_MAX_LANES];
    tune_lane lanes[HN_MAX_LANES];
    int n_lanes;
    int prefetch_next;         /* the lane the next prefetch goes to */
    hn_shard shard;
    hn_run_shared *sh;
    hn_run_device dev;
    int have_dev;
    int tag;                   /* the next request's tag */
    hn_csv *csv;               /* <prefix>.csv, or NULL */
    int csv_fresh;             /* this tune made it: evaluations the journal answers get their rows too */
    int csv_cols;              /* its columns (harness run's for this config), counted once */
    char *journal_path;        /* NULL with --replay */
    int n_evals, n_failed, n_cached, n_missing;
    int interrupt_said;        /* the first interrupt's notice is printed */
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
/* the workers: one per device (--devices), each evaluation handed to the first
 * that is free */

/* Starts lane i's worker and waits for its device, which must be the kind
 * every lane has. */
static int start_lane(tune_ctx *t, int i, hn_err *err) {
    tune_lane *ln = &t->lanes[i];
    t->sh->lane[i].device = t->places[i].device;
    t->sh->lane[i].emu_threads = t->places[i].emu_threads;
    if (hn_worker_start_serve(t->cli, t->plan, t->sh, i, &ln->wk, err) != 0) return -1;
    ln->job = -1;
    ln->killed = ln->watchdog = 0;
    for (;;) {
        hn_msg m;
        int got = hn_worker_next(ln->wk, 1.0, &m);
        if (got < 0) {
            int code, sig;
            hn_worker_wait(ln->wk, &code, &sig);
            hn_worker_destroy(ln->wk);
            ln->wk = NULL;
            return hn_errf(err, "the worker process could not start (%s)", sig ? strsignal(sig) : "see above");
        }
        if (got == 0) continue;
        int dev = m.type == HN_MSG_DEVICE, same = 1;
        if (dev && !t->have_dev) {
            t->dev = m.device;
            t->have_dev = 1;
        } else if (dev) {
            same = strcmp(m.device.dev.name, t->dev.dev.name) == 0 && strcmp(m.device.backend, t->dev.backend) == 0;
            if (!same)
                hn_errf(err, "--devices: device %d is %s [%s] but device %d is %s [%s]; a tune compares configurations "
                             "on one kind of device",
                        m.device.index, m.device.dev.name, m.device.backend, t->dev.index, t->dev.dev.name,
                        t->dev.backend);
        }
        hn_msg_free(&m);
        if (!dev) continue;
        if (!same) {
            hn_worker_go(ln->wk, 0);
            hn_worker_destroy(ln->wk);
            ln->wk = NULL;
            return -1;
        }
        return hn_worker_go(ln->wk, 1) == 0 ? 0 : hn_errf(err, "the worker process went away");
    }
}

static void stop_lane(tune_ctx *t, int i) {
    tune_lane *ln = &t->lanes[i];
    if (!ln->wk) return;
    hn_run_request q = {.type = HN_REQ_STOP};
    hn_worker_request(ln->wk, &q);
    hn_worker_destroy(ln->wk);
    ln->wk = NULL;
}

/* The lanes of --devices: the first, then, once it named the backend, the
 * others (the first again where its place changed). */
static int start_lanes(tune_ctx *t, hn_err *err) {
    int threads = t->cli->emu_threads > 0 ? t->cli->emu_threads : hn_cpu_count();
    t->n_lanes = 1;
    t->places[0] = hn_devices_first(&t->devs, t->cli->backend, threads);
    if (start_lane(t, 0, err) != 0) return -1;
    if (!t->devs.given) return 0;
    hn_lane_place pl[HN_MAX_LANES];
    int n;
    if (hn_devices_resolve(&t->devs, t->dev.backend, t->dev.n_devices, threads, pl, &n, err) != 0) return -1;
    t->sh->n_lanes = n;
    int again = pl[0].device != t->places[0].device || pl[0].emu_threads != t->places[0].emu_threads;
    memcpy(t->places, pl, (size_t)n * sizeof *pl);
    t->n_lanes = n;
    if (again) {
        stop_lane(t, 0);
        t->have_dev = 0;
        if (start_lane(t, 0, err) != 0) return -1;
    }
    for (int i = 1; i < n; i++)
        if (start_lane(t, i, err) != 0) return -1;
    char what[256];
    hn_devices_describe(t->places, n, t->dev.backend, what, sizeof what);
    printf("devices: %s, evaluations handed out as they free up\n", what);
    return 0;
}

static void stop_lanes(tune_ctx *t) {
    for (int i = 0; i < t->n_lanes; i++) stop_lane(t, i);
}

/* A request for configuration v (its defines' choices). */
static void fill_request(const tune_ctx *t, hn_run_request *q, const hn_variant *v) {
    const hn_variant_spec *spec = &t->plan->specs[v->spec];
    q->spec = v->spec;
    q->n = spec->n_defines;
    for (int d = 0; d < spec->n_defines && d < HN_RUN_MAX_DEFINES; d++) q->choice[d] = v->choice[d];
}

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

/* One evaluation to measure: a configuration on a case, and its result. */
typedef struct {
    hn_variant v;            /* choice owned */
    int64_t case_id;
    int full;
    char *config, *cv;       /* owned */
    char key[33], compile_key[33];
    int status;
    double ms, noise, compile_s;
    char reason[512];
    int done;                /* its result is known (and journaled) */
    int handed;              /* times handed to a worker that ended before it began it */
    char *row;               /* its CSV row (owned), or NULL */
} tune_job;

/* A job's result is known: journal it at once (so a killed tune loses none). */
static int finish_job(tune_ctx *t, tune_job *j, hn_err *err) {
    const hn_plan *p = t->plan;
    j->done = 1;
    t->n_evals++;
    if (!(j->status == HN_ST_OK && isfinite(j->ms))) t->n_failed++;
    hn_workload w;
    hn_err serr;
    char label[128] = "";
    if (hn_workload_shape(&w, p, &p->cases[j->case_id], &serr) == 0) snprintf(label, sizeof label, "%s", w.label);
    char stamp[32];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
    hn_journal_entry je = {.key = j->key, .variant = p->specs[j->v.spec].name, .config = j->config,
                           .case_values = j->cv, .label = label, .compile_key = j->compile_key,
                           .device = t->dev.dev.name, .backend = t->dev.backend,
                           .phase = (char *)(j->full ? "final" : "search"),
                           .status = (char *)hn_status_names[j->status], .reason = j->reason, .timestamp = stamp,
                           .case_id = j->case_id, .time_ms = j->status == HN_ST_OK ? j->ms : NAN, .noise = j->noise,
                           .compile_s = j->compile_s, .row = j->row};
    if (hn_journal_append(t->journal, &je, err) != 0) return -1;
    const hn_journal_entry *e = t->csv && j->row ? hn_journal_find(t->journal, j->key) : NULL;
    if (e) hn_journal_mark_written(t->journal, e); /* its row is in the CSV already */
    return 0;
}

/* The job lane ln ran is over, its worker gone: a fault or time-out, and a new
 * worker for the lane's next job. */
static int lane_died(tune_ctx *t, int i, tune_job *j) {
    tune_lane *ln = &t->lanes[i];
    int code = 0, sig = 0;
    hn_worker_wait(ln->wk, &code, &sig);
    /* A worker whose kernel faulted or timed out reports that row and exits for a
     * fresh process (HN_RUN_RESTART): the job handed to it meanwhile never began,
     * and is handed out again rather than blamed for the exit. */
    int again = j && !ln->began && !ln->killed && !sig && code == HN_RUN_RESTART && j->handed++ < 3;
    if (j && !again) {
        if (!j->reason[0])
            snprintf(j->reason, sizeof j->reason, "the worker process %s%s", sig ? "died of " : "exited with code ",
                     sig ? strsignal(sig) : "");
        if (!sig && !strstr(j->reason, "never"))
            snprintf(j->reason + strlen(j->reason), sizeof j->reason - strlen(j->reason), "%d", code);
    }
    hn_worker_destroy(ln->wk);
    ln->wk = NULL;
    ln->job = -1;
    t->sh->lane[i].busy_since = t->sh->lane[i].compile_since = 0;
    return again;
}

/* Says once that an interrupt came (and again when it turns to stopping now). */
static void say_interrupt(tune_ctx *t) {
    int level = hn_interrupt_now() ? 2 : hn_interrupted() ? 1 : 0;
    if (level <= t->interrupt_said) return;
    t->interrupt_said = level;
    fprintf(stderr, "%sharness tune: interrupted: %s\n", isatty(2) ? "\n" : "",
            level == 2 ? "stopping now (the configurations being measured are dropped, not journaled)"
                       : "stopping after the configurations being measured (Ctrl-C again to stop now)");
    fflush(stderr);
}

/* Stopping at once: every worker is killed with what it runs (and its
 * compilers, its process group), so no kernel runs on without a parent; the
 * evaluations in flight are not journaled, and a resumed tune makes them. */
static void abandon_jobs(tune_ctx *t) {
    for (int i = 0; i < t->n_lanes; i++) {
        tune_lane *ln = &t->lanes[i];
        hn_worker_destroy(ln->wk);
        ln->wk = NULL;
        ln->job = -1;
        t->sh->lane[i].busy_since = t->sh->lane[i].compile_since = 0;
    }
}

/* Measures jobs[0..n) on the lanes, each handed to the first lane free, each
 * journaled as it finishes. A worker that dies takes its job with it (fault
 * or timeout) and is replaced. -1 with err when no lane can run at all; 1 when
 * an interrupt stopped it first (no new job starts after the first, the jobs
 * in flight are dropped after a second): the jobs not done have done == 0. */
static int run_jobs(tune_ctx *t, tune_job *jobs, int n, hn_err *err) {
    int next = 0, left = n;
    int tags[HN_MAX_LANES];
    /* Jobs handed to a worker that ended before it began them, to hand out again:
     * a worker whose kernel faulted or timed out reports that row and exits
     * (HN_RUN_RESTART), and the job the lane was given meanwhile never ran. */
    int requeue[HN_MAX_LANES], n_requeue = 0;
    for (int i = 0; i < n; i++) {
        jobs[i].status = HN_ST_FAULT;
        jobs[i].ms = jobs[i].noise = jobs[i].compile_s = NAN;
        jobs[i].reason[0] = '\0';
        jobs[i].done = 0;
    }
    for (int i = 0; i < t->n_lanes; i++) t->lanes[i].job = -1;
    while (left > 0) {
        say_interrupt(t);
        if (hn_interrupt_now()) {
            abandon_jobs(t);
            return 1;
        }
        int busy = 0;
        for (int i = 0; i < t->n_lanes; i++) {
            tune_lane *ln = &t->lanes[i];
            if (ln->job < 0 && (next < n || n_requeue > 0) && !ln->dead && !hn_interrupted()) {
                if (!ln->wk && start_lane(t, i, err) != 0) {
                    ln->dead = 1; /* the others go on; with none left, the tune stops */
                    fprintf(stderr, "harness tune: device %d: %s\n", t->places[i].device, err->msg);
                    continue;
                }
                int at = n_requeue > 0 ? requeue[--n_requeue] : next++;
                tune_job *j = &jobs[at];
                hn_run_request q = {.type = HN_REQ_EVAL, .case_id = j->case_id, .full = j->full, .tag = t->tag++};
                fill_request(t, &q, &j->v);
                ln->job = at;
                ln->began = 0;
                tags[i] = q.tag;
                if (hn_worker_request(ln->wk, &q) != 0) { /* gone already: reaped below */
                }
            }
            busy += ln->job >= 0;
        }
        if (!busy) {
            int pending = next < n || n_requeue > 0;
            if (pending && hn_interrupted()) return 1;
            if (pending) return hn_errf(err, "no device is left to evaluate on (each failed to start)");
            break;
        }
        hn_worker *ws[HN_MAX_LANES];
        for (int i = 0; i < t->n_lanes; i++) ws[i] = t->lanes[i].wk;
        hn_worker_wait_any(ws, t->n_lanes, 0.2);
        for (int i = 0; i < t->n_lanes; i++) {
            tune_lane *ln = &t->lanes[i];
            if (!ln->wk) continue;
            tune_job *j = ln->job >= 0 ? &jobs[ln->job] : NULL;
            hn_msg m;
            int got;
            while ((got = hn_worker_next(ln->wk, 0, &m)) == 1) {
                if (j && m.type == HN_MSG_ROW_BEGIN && m.slot == tags[i]) ln->began = 1;
                int mine = j && m.type == HN_MSG_ROW && m.slot == tags[i];
                if (mine) {
                    j->status = m.row.status;
                    j->ms = m.row.median_ms;
                    j->noise = m.row.noise;
                    if (t->csv) {
                        hn_err werr;
                        if (hn_csv_write_line(t->csv, m.row.line, &werr) != 0) fprintf(stderr, "harness: %s\n", werr.msg);
                    }
                    row_fields(t->plan, m.row.line, j->reason, sizeof j->reason, &j->compile_s);
                    free(j->row);
                    j->row = xstrdup(m.row.line);
                    if (j->status != HN_ST_OK && !j->reason[0])
                        snprintf(j->reason, sizeof j->reason, "%s", hn_status_names[j->status]);
                    ln->job = -1;
                    left--;
                    int frc = finish_job(t, j, err);
                    j = NULL;
                    if (frc != 0) {
                        hn_msg_free(&m);
                        return -1;
                    }
                }
                hn_msg_free(&m);
            }
            if (got < 0) {
                int at = ln->job;
                if (lane_died(t, i, j)) {
                    requeue[n_requeue++] = at;
                } else if (j) {
                    left--;
                    if (finish_job(t, j, err) != 0) return -1;
                }
                continue;
            }
            if (!j || ln->killed) continue;
            double limit = (t->cli->kernel_timeout > 0 ? t->cli->kernel_timeout : 60.0) + WATCHDOG_GRACE_S;
            double climit = t->cli->compile_timeout > 0 ? t->cli->compile_timeout : 600.0;
            double since = t->sh->lane[i].busy_since, csince = t->sh->lane[i].compile_since;
            if ((since > 0 && hn_now() - since > limit) || (csince > 0 && hn_now() - csince > climit)) {
                j->status = since > 0 && hn_now() - since > limit ? HN_ST_TIMEOUT : HN_ST_COMPILE;
                snprintf(j->reason, sizeof j->reason, "%s",
                         j->status == HN_ST_TIMEOUT ? "a launch never returned" : "the compile never ended");
                hn_worker_kill(ln->wk);
                ln->killed = 1;
            }
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* evaluations, through the journal */

/* An evaluation the journal answered: its row goes into a CSV this tune made
 * (deleted, or another --out sharing a --journal), once, so <out>.csv holds
 * every evaluation of the tune as docs/tuning.md says. A CSV that was there
 * (a resumed tune) holds the rows already. Entries of older journals carry no
 * row; one with another number of columns (another config's) is left out. */
static void csv_from_journal(tune_ctx *t, const hn_journal_entry *e) {
    if (!t->csv || !t->csv_fresh || !e->row || !*e->row || hn_journal_mark_written(t->journal, e)) return;
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_addf(&sb, "%s\n", e->row);
    hn_table tb;
    hn_err werr;
    if (hn_table_parse(sb.buf, "row", &tb, &werr) == 0) {
        if (tb.n_cols == t->csv_cols && hn_csv_write_line(t->csv, e->row, &werr) != 0)
            fprintf(stderr, "harness: %s\n", werr.msg);
        hn_table_free(&tb);
    }
    hn_sb_free(&sb);
}

/* The compile key of configuration v on this device. */
static void config_compile_key(const tune_ctx *t, const hn_variant *v, char key[33]) {
    int emu = strcmp(t->dev.backend, "emu") == 0;
    hn_build b;
    hn_build_init(&b, t->plan, v, NULL, 0, emu ? NULL : t->dev.dev.arch, t->cache_dir);
    hn_compile_key(emu ? HN_TARGET_EMU : HN_TARGET_CUDA, &b.req, key);
    hn_build_free(&b);
}

/* The costs of configurations raws[0..n) of space s over a unit's cases, in
 * phase "search" or "final": per configuration its case's time, or across
 * cases the geometric mean of its times (INFINITY if any failed), with the
 * worst noise. Each (configuration, case) comes from the journal when known,
 * else is replayed, or measured (all of the batch at once, on every lane) and
 * journaled. -1 with err when the tuning cannot go on; 1 when an interrupt
 * stopped the measuring: cost NAN for the configurations not measured on every
 * case. */
static int eval_configs(tune_ctx *t, const hn_space *s, const int64_t *raws, int n, const int64_t *cases,
                        int n_cases, int final, double *cost, double *noise, hn_err *err) {
    const hn_plan *p = t->plan;
    const char *phase = final ? "final" : "search";
    int m = n * n_cases, n_jobs = 0, rc = 0;
    double *cc = xcalloc((size_t)m + 1, sizeof *cc), *cn = xcalloc((size_t)m + 1, sizeof *cn);
    int *job_of = xcalloc((size_t)m + 1, sizeof *job_of);
    tune_job *jobs = xcalloc((size_t)m + 1, sizeof *jobs);
    int nd = p->specs[t->base.spec].n_defines;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n_cases; k++) {
            int at = i * n_cases + k;
            job_of[at] = -1;
            cc[at] = INFINITY;
            cn[at] = NAN;
            hn_variant v = t->base;
            v.choice = xcalloc((size_t)nd + 1, sizeof *v.choice);
            memcpy(v.choice, t->base.choice, (size_t)nd * sizeof *v.choice);
            hn_space_apply(s, raws[i], &v);
            char *config = hn_space_describe(s, raws[i]);
            char *cv = case_values(p, &p->cases[cases[k]]);
            const hn_journal_entry *e = NULL;
            if (t->replay) {
                e = hn_journal_find_config(t->replay, p->specs[v.spec].name, config, cv, phase);
                if (!e && final) e = hn_journal_find_config(t->replay, p->specs[v.spec].name, config, cv, "search");
                if (!e) t->n_missing++;
                t->n_evals++;
            } else {
                char compile_key[33], key[33];
                config_compile_key(t, &v, compile_key);
                hn_journal_key(compile_key, t->dev.dev.name, t->dev.backend, cv, phase, key);
                e = hn_journal_find(t->journal, key);
                /* an older tune's record of a worker that ended (a restart, a
                 * kill), not a verdict on this configuration: measured again */
                if (e && hn_journal_worker_ended(e) && hn_journal_from_file(t->journal, e)) e = NULL;
                if (e) {
                    t->n_cached++;
                    csv_from_journal(t, e);
                }
                for (int q = 0; !e && q < n_jobs && job_of[at] < 0; q++)
                    if (strcmp(jobs[q].key, key) == 0) job_of[at] = q; /* asked twice in one batch */
                if (!e && job_of[at] < 0) {
                    tune_job *j = &jobs[n_jobs];
                    job_of[at] = n_jobs++;
                    j->v = v;
                    v.choice = NULL; /* the job owns it */
                    j->case_id = cases[k];
                    j->full = final;
                    j->config = config;
                    j->cv = cv;
                    config = cv = NULL;
                    memcpy(j->key, key, sizeof key);
                    memcpy(j->compile_key, compile_key, sizeof compile_key);
                }
            }
            if (e) {
                cc[at] = strcmp(e->status, "ok") == 0 && isfinite(e->time_ms) ? e->time_ms : INFINITY;
                cn[at] = e->noise;
                if (t->replay && !isfinite(cc[at])) t->n_failed++;
            }
            free(v.choice);
            free(config);
            free(cv);
        }
    if (n_jobs) rc = run_jobs(t, jobs, n_jobs, err);
    for (int i = 0; rc >= 0 && i < n; i++) {
        double logsum = 0, worst_noise = 0;
        int failed = 0, unmeasured = 0;
        for (int k = 0; k < n_cases; k++) {
            int at = i * n_cases + k;
            if (job_of[at] >= 0) {
                const tune_job *j = &jobs[job_of[at]];
                unmeasured |= !j->done;
                cc[at] = j->status == HN_ST_OK && isfinite(j->ms) ? j->ms : INFINITY;
                cn[at] = j->noise;
            }
            if (!isfinite(cc[at]) || cc[at] <= 0) failed = 1;
            else logsum += log(cc[at]);
            if (isfinite(cn[at]) && cn[at] > worst_noise) worst_noise = cn[at];
        }
        noise[i] = worst_noise;
        cost[i] = unmeasured ? NAN : failed ? INFINITY : exp(logsum / n_cases);
    }
    for (int q = 0; q < n_jobs; q++) {
        free(jobs[q].row);
        free(jobs[q].v.choice);
        free(jobs[q].config);
        free(jobs[q].cv);
    }
    free(jobs);
    free(job_of);
    free(cc);
    free(cn);
    return rc;
}

/* One configuration's cost over the unit's cases; NAN: the tuning cannot go on
 * (err says why). */
static double eval_unit(tune_ctx *t, const hn_space *s, int64_t raw, const int64_t *cases, int n_cases, int final,
                        double *noise, int *fresh, hn_err *err) {
    double cost;
    *fresh = 1;
    int rc = eval_configs(t, s, &raw, 1, cases, n_cases, final, &cost, noise, err);
    if (rc == 1) hn_errf(err, "interrupted");
    return rc == 0 ? cost : NAN;
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
        if (eval.stop && eval.stop(ctx)) {
            trace->stopped = 1;
            break;
        }
        int64_t batch[TUNE_BATCH];
        int room = max_evals - trace->evals < TUNE_BATCH ? (int)(max_evals - trace->evals) : TUNE_BATCH;
        int n = st->propose(state, batch, room);
        if (n <= 0) break; /* exhausted */
        if (eval.prefetch) eval.prefetch(ctx, s, batch, n);
        /* with a batch evaluator: the positions the loop below will evaluate,
         * all at once */
        int64_t ask[TUNE_BATCH];
        double ask_cost[TUNE_BATCH], ask_noise[TUNE_BATCH];
        int n_ask = 0;
        for (int i = 0; eval.batch && i < n && trace->evals + n_ask < max_evals; i++) {
            double c, nz;
            int dup = cm_get(&known, batch[i], &c, &nz);
            for (int k = 0; k < n_ask && !dup; k++) dup = ask[k] == batch[i];
            if (!dup) ask[n_ask++] = batch[i];
        }
        int brc = n_ask ? eval.batch(ctx, s, ask, n_ask, ask_cost, ask_noise, err) : 0;
        if (brc < 0) {
            rc = -1;
            goto out;
        }
        int partial = brc == 1; /* interrupted: keep what was measured, then end */
        int new_ones = 0;
        for (int i = 0; i < n && trace->evals < max_evals; i++) {
            double cost, noise;
            if (!cm_get(&known, batch[i], &cost, &noise)) {
                int fresh = 0;
                int k = 0;
                while (k < n_ask && ask[k] != batch[i]) k++;
                if (k < n_ask) cost = ask_cost[k], noise = ask_noise[k];
                else if (partial) continue;
                else cost = eval.fn(ctx, s, batch[i], &noise, &fresh, err);
                if (partial && isnan(cost)) continue; /* never measured */
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
        if (partial) {
            trace->stopped = 1;
            break;
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

/* A batch of evaluations at once, on every lane. */
static int unit_batch(void *ctx, const hn_space *s, const int64_t *pos, int n, double *cost, double *noise,
                      hn_err *err) {
    unit_ctx *u = ctx;
    int64_t raws[TUNE_BATCH] = {0};
    if (n > TUNE_BATCH) n = TUNE_BATCH;
    for (int i = 0; i < n; i++) raws[i] = s->valid[pos[i]];
    int rc = eval_configs(u->t, s, raws, n, u->cases, u->n_cases, 0, cost, noise, err);
    if (rc < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (isnan(cost[i])) continue; /* interrupted before it was measured */
        u->done++;
        if (cost[i] < u->best) u->best = cost[i];
    }
    unit_progress(u);
    return rc;
}

/* An interrupt ends the search before its next batch. */
static int unit_stop(void *ctx) {
    unit_ctx *u = ctx;
    say_interrupt(u->t);
    return hn_interrupted();
}

/* Compiles a batch ahead: each configuration is queued by one lane (in turn),
 * whose worker compiles what it has not seen into the shared cache. */
static void unit_prefetch(void *ctx, const hn_space *s, const int64_t *pos, int n) {
    unit_ctx *u = ctx;
    tune_ctx *t = u->t;
    if (t->replay) return;
    const hn_plan *p = t->plan;
    int nd = p->specs[t->base.spec].n_defines;
    hn_variant v = t->base;
    v.choice = xcalloc((size_t)nd + 1, sizeof *v.choice);
    for (int i = 0; i < n; i++) {
        memcpy(v.choice, t->base.choice, (size_t)nd * sizeof *v.choice);
        hn_space_apply(s, s->valid[pos[i]], &v);
        hn_run_request q = {.type = HN_REQ_PREFETCH};
        fill_request(t, &q, &v);
        tune_lane *ln = &t->lanes[t->prefetch_next++ % t->n_lanes];
        if (ln->wk) hn_worker_request(ln->wk, &q);
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

static int names_stop_at(void *ctx, const char *name) {
    return strcmp(name, (const char *)ctx) == 0 ? -1 : 0;
}

static int expr_uses(const hn_expr *e, const char *name) {
    return e && hn_expr_names(e, names_stop_at, (void *)name) != 0;
}

/* Whether an argument's expression (or one of a struct's fields') uses name. */
static int arg_uses(const hn_arg *a, const char *name) {
    if (a->kind == HN_ARG_EXPR && expr_uses(a->expr, name)) return 1;
    for (int i = 0; i < a->n_fields; i++)
        if (arg_uses(&a->fields[i], name)) return 1;
    return 0;
}

/* Whether the variant's launch uses name: its kernel name expression (a template
 * argument, "reduce<BLOCK>") or its geometry, shared memory or typed arguments. A
 * tunable used only there (a block size the kernel reads from blockDim) still
 * changes what runs, so it is as good a tunable as one the source names. */
static int launch_uses(const hn_variant_spec *spec, const char *name) {
    for (int li = 0; li < hn_spec_launches(spec); li++) {
        const hn_launch_spec l = hn_spec_launch(spec, li);
        if (emu_src_uses_ident(l.kernel, name) || expr_uses(l.shared, name)) return 1;
        for (int i = 0; i < 3; i++)
            if (expr_uses(l.block[i], name) || expr_uses(l.grid[i], name)) return 1;
        for (int i = 0; i < l.n_args; i++)
            if (arg_uses(&l.args[i], name)) return 1;
    }
    for (int i = 0; i < spec->n_constants; i++)
        if (arg_uses(&spec->const_vals[i], name)) return 1;
    for (int i = 0; i < spec->n_scratch; i++)
        if (expr_uses(spec->scratch_bytes[i], name)) return 1;
    return 0;
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
    cJSON_AddStringToObject(root, "kernel", t->plan->specs[t->base.spec].kernels_text); /* every launch's, joined by ; */
    cJSON_AddStringToObject(root, "mode", t->cli->across ? "across cases" : "per case");
    cJSON_AddStringToObject(root, "strategy", t->strategy->name);
    cJSON_AddStringToObject(root, "device", t->have_dev ? t->dev.dev.name : "");
    cJSON_AddStringToObject(root, "backend", t->have_dev ? t->dev.backend : "");
    cJSON_AddItemToObject(root, "results", units);
    return root;
}

static const char *str_or_empty(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* --with-best's files (comma-separated) that are best.json files of `variant`
 * into docs[*n ..] (up to max in all; with docs NULL only checked). -1 when one
 * is not, each said on stderr. */
static int load_with_best(const char *with_best, const char *variant, cJSON **docs, int *n, int max) {
    int rc = 0;
    char *list = with_best ? xstrdup(with_best) : NULL;
    for (char *save = NULL, *f = list ? strtok_r(list, ",", &save) : NULL; f; f = strtok_r(NULL, ",", &save)) {
        char *json = NULL;
        cJSON *d = NULL;
        hn_err err;
        if (hn_read_file(f, &json, NULL, &err) == 0) d = cJSON_Parse(json);
        free(json);
        const cJSON *v = d ? cJSON_GetObjectItemCaseSensitive(d, "variant") : NULL;
        if (!d || !cJSON_IsString(v) || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, "results"))) {
            fprintf(stderr, "harness tune: --with-best %s: not a best.json written by harness tune\n", f);
            rc = -1;
        } else if (strcmp(v->valuestring, variant) != 0) {
            fprintf(stderr, "harness tune: --with-best %s: tunes variant '%s', not '%s'\n", f, v->valuestring, variant);
            rc = -1;
        } else if (docs && *n < max) {
            /* a device already in the header (this tune's own, as when the tune's
             * previous best.json is given back, or a file given twice) would be an
             * #elif branch no target can reach: the first stands */
            const char *dev = str_or_empty(d, "device"), *be = str_or_empty(d, "backend");
            int dup = -1;
            for (int i = 0; i < *n && dup < 0; i++)
                if (strcmp(dev, str_or_empty(docs[i], "device")) == 0 && strcmp(be, str_or_empty(docs[i], "backend")) == 0)
                    dup = i;
            if (dup >= 0) {
                printf("--with-best %s: %s (%s) is in the header already (%s): left out\n", f, dev, be,
                       dup == 0 ? "this tune's result" : "an earlier --with-best file");
            } else {
                docs[(*n)++] = d;
                d = NULL;
            }
        } else if (docs) {
            fprintf(stderr, "harness tune: --with-best %s: more than %d devices for one header\n", f, max - 1);
            rc = -1;
        }
        cJSON_Delete(d);
    }
    free(list);
    return rc;
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
    if (load_with_best(t->cli->with_best, variant, docs, &n_docs, 33) != 0) rc = 2;
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

/* An interrupted unit's line of the summary: the search's best so far, not
 * measured again (its final and runner-up columns are "-"). */
static void print_interrupted_unit(tune_ctx *t, const hn_space *s, const char *what, const hn_tune_trace *trace,
                                   const int64_t *cases, int n_cases) {
    if (trace->best_pos < 0) {
        printf("%-26s %-14s %6lld  interrupted before a configuration ran correctly\n", what, t->strategy->name,
               (long long)trace->evals);
        return;
    }
    char *cfg = hn_space_describe(s, s->valid[trace->best_pos]);
    double known = best_known(t, s, cases, n_cases);
    if (!(known < trace->best_cost)) known = trace->best_cost;
    char of_best[16];
    snprintf(of_best, sizeof of_best, "%.1f%%", 100.0 * known / trace->best_cost);
    printf("%-26s %-14s %6lld %11.5g %8s %11s %11s %9s  %s (interrupted: best so far, not re-measured)\n", what,
           t->strategy->name, (long long)trace->evals, trace->best_cost, of_best, "-", "-", "-", cfg);
    free(cfg);
}

/* After an interrupt: what is kept and how to go on. */
static void print_resume(const tune_ctx *t) {
    if (t->replay) {
        printf("interrupted: the replay stopped early; run it again for the whole search\n");
        return;
    }
    printf("interrupted: every evaluation made is in %s (and %s.csv); run the same command again to resume: the "
           "journal answers them, and the tune ends as an uninterrupted one would\n",
           t->journal_path, t->prefix);
    printf("(%s.best.json, .h and .t4/ are written when the tune finishes)\n", t->prefix);
}

/* --compare-strategies: the units' names and case values for compare_strategies.c. */
static int compare(tune_ctx *t, hn_space **spaces, int n_units, int across) {
    const hn_plan *p = t->plan;
    /* the folder of --out, made before the comparison rather than found
     * missing when its files are written */
    hn_err derr;
    char *dir = hn_dirname(t->prefix);
    int drc = hn_mkdirs(dir, &derr);
    free(dir);
    if (drc != 0) {
        fprintf(stderr, "harness tune: --out: %s\n", derr.msg);
        return 2;
    }
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

/* --shard: keeps the cases assigned to this shard (balanced by the cost of
 * the tuned variant's rows) and fills the sidecar written beside the journal. */
static int shard_cases(tune_ctx *t, hn_meta *meta) {
    const hn_plan *p = t->plan;
    hn_err err;
    unsigned char *in = xcalloc((size_t)p->n_cases + 1, 1), *sel = xcalloc((size_t)p->n_variants + 1, 1);
    for (int i = 0; i < t->n_cases; i++) in[t->cases[i]] = 1;
    for (int v = 0; v < p->n_variants; v++) sel[v] = p->variants[v].spec == t->base.spec && p->variants[v].choice == t->base.choice;
    hn_shard_model m = hn_shard_model_of(t->cli, p);
    meta->n_cases = p->n_cases;
    meta->case_shard = xcalloc((size_t)p->n_cases + 1, sizeof *meta->case_shard);
    meta->estimate = xcalloc((size_t)t->shard.count, sizeof *meta->estimate);
    hn_shard_assign(p, sel, in, t->shard.count, &m, meta->case_shard, meta->estimate);
    int k = 0;
    for (int i = 0; i < t->n_cases; i++)
        if (meta->case_shard[t->cases[i]] == t->shard.index) t->cases[k++] = t->cases[i];
    printf("shard %d/%d: %d of the %d cases\n", t->shard.index, t->shard.count, k, t->n_cases);
    t->n_cases = k;
    free(in);
    free(sel);
    char *abs = realpath(p->path, NULL);
    meta->harness = xstrdup(HN_VERSION);
    meta->kind = xstrdup("tune");
    meta->config = xstrdup(abs ? abs : p->path);
    free(abs);
    meta->seed = (long long)p->seed;
    meta->shard_index = t->shard.index;
    meta->shard_count = t->shard.count;
    meta->variants = xcalloc(2, sizeof *meta->variants);
    meta->variants[meta->n_variants++] = xstrdup(p->specs[t->base.spec].name);
    if (hn_meta_config_hash(p, meta->config_hash, &err) != 0) {
        fprintf(stderr, "harness tune: %s\n", err.msg);
        return -1;
    }
    if (k == 0) printf("(fewer cases than shards: this one has nothing to tune)\n");
    return 0;
}

int hn_cmd_tune(const hn_cli *cli) {
    hn_err err;
    tune_ctx t;
    memset(&t, 0, sizeof t);
    t.cli = cli;
    t.t_start = hn_now();
    /* --seed seeds the search, never the cases: a sampled config tunes its own
     * sample (its "sample" seed) whatever the search's seed, so two seeds tune
     * the same problem sizes and their results compare. */
    if (hn_plan_load(cli->config, -1, &t.plan, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    hn_plan *p = t.plan;
    int rc = 2;
    hn_space **spaces = NULL;
    hn_space_unevaluable *unev = NULL; /* [n_restrict] */
    int n_units = 0;
    hn_tune_trace *trace = NULL;
    cJSON *units = NULL;
    hn_meta meta;
    memset(&meta, 0, sizeof meta);
    char *meta_path = NULL;
    hn_interrupt_saved handlers = {0};
    int stopped = 0; /* an interrupt ended the tune before its last unit */

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
    /* one space is tuned, around one choice of the variant's other defines: a
     * define of several values would be tuned at its first alone (and its other
     * values' cases could find nothing that runs) */
    for (int d = 0; d < p->specs[spec].n_defines; d++) {
        const hn_axis *ax = &p->specs[spec].defines[d];
        if (!ax->tunable && ax->n > 1) {
            fprintf(stderr,
                    "harness tune: %s: variants[%d].defines.%s has %d values, and harness tune searches one space "
                    "around one value of each define: move %s into \"tune\" (a \"restrict\" or \"where\" such as "
                    "\"%s == n\" ties it to the case), or give it one value\n",
                    p->path, spec, ax->name, ax->n, ax->name, ax->name);
            goto done;
        }
    }
    for (int v = 0; v < p->n_variants; v++)
        if (p->variants[v].spec == spec) {
            t.base = p->variants[v];
            break;
        }
    /* every tunable must appear in the kernel's source or its launch */
    for (int d = 0; d < p->specs[spec].n_defines; d++) {
        const hn_axis *ax = &p->specs[spec].defines[d];
        if (ax->tunable && !source_uses(&p->specs[spec], ax->name) && !launch_uses(&p->specs[spec], ax->name)) {
            fprintf(stderr,
                    "harness tune: %s: variants[%d].tune.%s: neither the kernel's source (%s) nor its name, launch "
                    "geometry, shared memory or arguments use %s, so tuning it would change nothing\n",
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
    /* options that would do nothing here are errors, never ignored in silence */
    if (cli->repeats >= 0 && !cli->compare_strategies) {
        fprintf(stderr, "harness tune: --repeats is the number of runs of --compare-strategies\n");
        goto done;
    }
    if (cli->repeats == 0 || cli->repeats > 100000) {
        fprintf(stderr, "harness tune: --repeats %d: expected 1 to 100000 runs per strategy\n", cli->repeats);
        goto done;
    }
    if (cli->replay && (cli->journal || cli->with_best)) {
        fprintf(stderr, "harness tune: %s: --replay evaluates from a recorded journal and writes no journal or "
                        "header\n",
                cli->journal ? "--journal" : "--with-best");
        goto done;
    }
    /* --with-best's files, before any work (they are read again at the end) */
    if (load_with_best(cli->with_best, p->specs[spec].name, NULL, NULL, 0) != 0) goto done;
    if (cli->compare_strategies && t.budget.seconds > 0) {
        fprintf(stderr, "harness tune: --compare-strategies: the budget must be evaluations or a fraction of the "
                        "space (a replayed evaluation takes no time)\n");
        goto done;
    }
    int across = cli->across || p->tuning.across == 1;
    /* the cases */
    {
        unsigned char *in = xcalloc((size_t)p->n_cases + 1, 1);
        if (hn_cli_cases(cli, p->n_cases, in, &err) != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            free(in);
            goto done;
        }
        t.cases = xcalloc((size_t)p->n_cases + 1, sizeof *t.cases);
        for (int64_t c = 0; c < p->n_cases; c++)
            if (in[c]) t.cases[t.n_cases++] = c;
        free(in);
    }
    if (hn_devices_parse(cli->devices, &t.devs, &err) != 0 || hn_shard_parse(cli->shard, &t.shard, &err) != 0) {
        fprintf(stderr, "harness tune: %s\n", err.msg);
        goto done;
    }
    if (t.shard.count && (across || cli->replay)) {
        fprintf(stderr, "harness tune: --shard splits the cases between jobs; %s\n",
                across ? "--across tunes one configuration over all of them, which cannot be split"
                       : "--replay needs no device, so there is nothing to split");
        goto done;
    }
    if (t.shard.count && shard_cases(&t, &meta) != 0) goto done;
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
        if (!t.sh || start_lanes(&t, &err) != 0) {
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
        if (!kept && !t.shard.count) {
            fprintf(stderr, "harness tune: %s: no case is within the emulator's budget\n", p->path);
            goto done;
        }
        t.n_cases = kept;
    }
    /* A shard with no case to tune (more shards than cases, or all of its
     * cases above the emulator's budget) is done at once: its empty journal and
     * finished sidecar let the merge of all the shards be complete, where an
     * error here left the merge forever missing this shard. */
    if (t.shard.count && t.n_cases == 0) {
        char *jpath = cli->journal ? xstrdup(cli->journal) : xasprintf("%s.journal", t.prefix);
        meta_path = hn_meta_path(jpath);
        meta.device = xstrdup(t.dev.dev.name);
        meta.backend = xstrdup(t.dev.backend);
        meta.finished = 1;
        int jrc = hn_journal_open(jpath, &t.journal, &err);
        if (jrc == 0 && hn_meta_write(meta_path, &meta, &err) == 0) {
            printf("shard %d/%d: no case to tune; %s and its sidecar say so, for harness merge\n", t.shard.index,
                   t.shard.count, jpath);
            rc = 0;
        } else {
            fprintf(stderr, "harness tune: %s\n", err.msg);
        }
        free(jpath);
        goto done;
    }

    /* the spaces: one per case, or their intersection across cases */
    n_units = across ? 1 : t.n_cases;
    spaces = xcalloc((size_t)n_units, sizeof *spaces);
    /* restrictions that could not be evaluated for some configurations, summed
     * over the cases for one notice each */
    int n_restrict = p->specs[spec].n_restrict;
    unev = xcalloc((size_t)n_restrict + 1, sizeof *unev);
    double raw_total = 0;
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
        raw_total += s->n_raw;
        for (int r = 0; r < n_restrict; r++) {
            const hn_space_unevaluable *u = &s->unevaluable[r];
            if (u->failed && !unev[r].failed)
                snprintf(unev[r].first, sizeof unev[r].first, "%.200s (case %lld)", u->first, (long long)c->id);
            unev[r].failed += u->failed;
            unev[r].excluded += u->excluded;
        }
        if (!across) spaces[i] = s;
        else if (!spaces[0]) spaces[0] = s;
        else {
            intersect(spaces[0], s);
            spaces[0]->build_seconds += s->build_seconds;
            hn_space_free(s);
        }
    }
    for (int r = 0; r < n_restrict; r++)
        if (unev[r].failed) {
            char text[128];
            fprintf(stderr,
                    "harness tune: %s: variants[%d].restrict[%d] ('%s') could not be evaluated for %.6g of the %.6g raw "
                    "configurations of %d case%s, which are excluded as not satisfying it; the first: %s\n",
                    p->path, spec, r, hn_excerpt(hn_expr_text(p->specs[spec].restrict_[r]), text, sizeof text),
                    unev[r].excluded, raw_total, t.n_cases, t.n_cases == 1 ? "" : "s", unev[r].first);
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
        if (t.shard.count) {
            meta_path = hn_meta_path(jpath);
            meta.device = xstrdup(t.dev.dev.name);
            meta.backend = xstrdup(t.dev.backend);
            if (hn_meta_write(meta_path, &meta, &err) != 0) fprintf(stderr, "harness tune: %s\n", err.msg);
        }
        int jrc = hn_journal_open(jpath, &t.journal, &err);
        if (jrc == 0 && hn_journal_skipped(t.journal))
            fprintf(stderr, "harness tune: %s: %d incomplete line(s) skipped (a tuning killed while writing)\n", jpath,
                    hn_journal_skipped(t.journal));
        if (jrc == 0) {
            int n_ended = 0, n = hn_journal_count(t.journal);
            for (int i = 0; i < n; i++) {
                const hn_journal_entry *e = hn_journal_at(t.journal, i);
                n_ended += hn_journal_find(t.journal, e->key) == e && hn_journal_worker_ended(e);
            }
            printf("journal: %s (%d evaluations known", jpath, n);
            if (n_ended)
                printf("; %d record a worker process that ended, not a verdict on the configuration, and are "
                       "measured again when the search asks for them",
                       n_ended);
            printf(")\n");
        }
        t.journal_path = jpath;
        if (jrc != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            goto done;
        }
        int n_cols;
        const char **cols = hn_run_columns(p, &n_cols);
        char *cpath = xasprintf("%s.csv", t.prefix);
        int exists = hn_file_exists(cpath);
        char *cdir = hn_dirname(cpath); /* --out's folder, which a --journal elsewhere did not make */
        int crc = hn_mkdirs(cdir, &err);
        free(cdir);
        t.csv_fresh = !exists;
        t.csv_cols = n_cols;
        if (crc == 0)
            crc = exists ? hn_csv_append(cpath, cols, n_cols, &t.csv, &err) : hn_csv_open(cpath, cols, n_cols, &t.csv, &err);
        free(cpath);
        free(cols);
        if (crc != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            goto done;
        }
    } else {
        hn_journal_open(NULL, &t.journal, &err);
    }
    printf("tuning %s (%s) %s with %s, budget %s, on %s\n", p->specs[spec].name, p->specs[spec].kernels_text,
           across ? "across cases (one configuration, geometric mean of the times)" : "per case",
           t.strategy->name, budget_text ? budget_text : "100", t.replay ? "a replayed journal" : t.dev.dev.name);
    fflush(stdout);

    /* from here an interrupt leaves a summary: the journal and the CSV are
     * complete up to the last evaluation, and the same command resumes */
    hn_interrupt_install(&handlers, HN_INTERRUPT_WORKERS);
    trace = xmalloc(sizeof *trace);
    units = cJSON_CreateArray();
    int top_k = cli->top >= 0 ? cli->top : p->tuning.top >= 0 ? p->tuning.top : TUNE_DEFAULT_TOP;
    if (top_k > HN_TUNE_MAX_TOP) {
        printf("top %d: the final re-measure takes the best %d (at most %d)\n", top_k, HN_TUNE_MAX_TOP, HN_TUNE_MAX_TOP);
        top_k = HN_TUNE_MAX_TOP;
    }
    printf("\n%-26s %-14s %6s %11s %8s %11s %11s %9s  %s\n", "unit", "strategy", "evals", "search ms", "of best",
           "final ms", "runner-up", "margin", "configuration");
    rc = 0;
    for (int u = 0; u < n_units; u++) {
        hn_space *s = spaces[u];
        char what[96];
        if (across) snprintf(what, sizeof what, "across %d cases", t.n_cases);
        else snprintf(what, sizeof what, "case %lld", (long long)t.cases[u]);
        if (stopped || hn_interrupted()) {
            printf("%-26s %-14s %6d  not tuned (interrupted)\n", what, t.strategy->name, 0);
            stopped = 1;
            continue;
        }
        unit_ctx uc = {&t, across ? t.cases : &t.cases[u], across ? t.n_cases : 1, what,
                       hn_tune_max_evals(&t.budget, s), 0, hn_now(), INFINITY, 0, isatty(2)};
        hn_tune_eval_fn ev = {unit_eval, unit_prefetch, t.replay ? NULL : unit_batch, unit_stop};
        uint64_t seed = cli->seed >= 0 ? (uint64_t)cli->seed : p->seed;
        int src = hn_tune_search(t.strategy, s, seed, &t.budget, ev, &uc, trace, &err);
        if (src != 0 && !hn_interrupted()) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            rc = 1;
            break;
        }
        if (src != 0 || trace->stopped) {
            print_interrupted_unit(&t, s, what, trace, uc.cases, uc.n_cases);
            stopped = 1;
            continue;
        }
        /* the best few again, with the full sampling rules */
        int64_t win = -1, second = -1;
        double win_ms = INFINITY, second_ms = INFINITY, win_noise = NAN, second_noise = NAN;
        int n_final = trace->n_top < (top_k > 0 ? top_k : 1) ? trace->n_top : (top_k > 0 ? top_k : 1);
        int64_t final_raw[HN_TUNE_MAX_TOP];
        double final_ms[HN_TUNE_MAX_TOP], final_noise[HN_TUNE_MAX_TOP];
        for (int k = 0; k < n_final; k++) {
            final_raw[k] = s->valid[trace->top[k]];
            final_ms[k] = trace->top_cost[k];
            final_noise[k] = NAN;
        }
        int frc = top_k > 0 && n_final > 0
                      ? eval_configs(&t, s, final_raw, n_final, uc.cases, uc.n_cases, 1, final_ms, final_noise, &err)
                      : 0;
        if (frc == 1) { /* interrupted in the re-measure: the search's best stands */
            print_interrupted_unit(&t, s, what, trace, uc.cases, uc.n_cases);
            stopped = 1;
            continue;
        }
        if (frc != 0) {
            fprintf(stderr, "harness tune: %s\n", err.msg);
            n_final = 0;
        }
        for (int k = 0; k < n_final; k++) {
            double nz = final_noise[k], c = final_ms[k];
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
        char runner_up[32] = "-"; /* none with --top 1, or when the others failed the re-measure */
        if (second >= 0) snprintf(runner_up, sizeof runner_up, "%.5g", second_ms);
        printf("%-26s %-14s %6lld %11.5g %8s %11.5g %11s %9s  %s\n", what, t.strategy->name, (long long)trace->evals,
               trace->best_cost, of_best, win_ms, runner_up, margin, cfg);
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
    if (!t.replay && !stopped) {
        int wrc = write_outputs(&t, units);
        units = NULL;
        if (wrc) rc = wrc;
    }
    if (meta_path && !stopped) {
        meta.finished = 1;
        if (hn_meta_write(meta_path, &meta, &err) != 0) fprintf(stderr, "harness tune: %s\n", err.msg);
    }
    /* a configuration the replayed journal lacks counts as failed: in the total too */
    printf("evaluations: %d %s (%d failed), %d from the journal; %.1f s\n", t.n_evals,
           t.replay ? "replayed" : "measured", t.n_failed + (t.replay ? t.n_missing : 0), t.n_cached,
           hn_now() - t.t_start);
    if (t.replay && t.n_missing)
        printf("%d configuration(s) proposed are not in %s (counted as failed)\n", t.n_missing, cli->replay);
    printf("(of best: the best search time known for the unit, in the journal, over this search's best; ~ after a "
           "margin: within the measured noise)\n");
    if (stopped) {
        print_resume(&t);
        rc = hn_interrupt_exit_code();
    }
done:
    hn_interrupt_restore(&handlers);
    cJSON_Delete(units);
    free(trace);
    for (int u = 0; spaces && u < n_units; u++) hn_space_free(spaces[u]);
    free(spaces);
    free(unev);
    stop_lanes(&t);
    hn_meta_free(&meta);
    free(meta_path);
    hn_run_shared_destroy(t.sh);
    hn_csv_close(t.csv);
    hn_journal_close(t.journal);
    hn_journal_close(t.replay);
    free(t.cases);
    free(t.prefix);
    free(t.cache_dir);
    free(t.journal_path);
    hn_plan_free(p);
    return rc;
}
