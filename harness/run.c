/*
 * run.c: `harness run CONFIG`, the parent of a run.
 *
 * The parent owns the results file and never touches the device: a worker
 * process (exec/worker.c) compiles, runs and checks, and sends each finished row
 * back. When a worker dies (a kernel crashed it, a sticky CUDA error, an OOM
 * kill) or a launch never returns (the parent's watchdog, --kernel-timeout), the
 * row in progress is written as `fault` or `timeout` with the reason and a new
 * worker carries on from the next row; after a time-out the variant's later
 * cases are skipped unless --retry-timeouts.
 *
 * The results file: rows are written and flushed as they arrive. While a run is
 * going, <out>.unfinished exists; a later run refuses to overwrite such a file
 * unless --force, and --resume keeps every row of it that matches the plan (same
 * case, variant and defines, kernel source as compiled, device) and runs the
 * rest. A write error stops the run at once (exit 2).
 *
 * Interrupts: the first SIGINT lets the current row finish, then stops; a second
 * stops at once; SIGTERM stops at once. Either way the rows done stay in the file
 * and the summary says how to resume (exit 130 or 143).
 *
 * Several devices (--devices): one worker per device (a lane), each taking the
 * next case nobody has taken yet, then helping with the rows left in cases
 * still running, so the rows go where a device is free (exec/runner.c). Every
 * lane has its own watchdog and is restarted on its own after a crash; the
 * parent holds the lanes until each has named its device (all must be the same
 * kind) and resumes once. A finished file is rewritten in plan order, so it
 * reads as a single worker's.
 *
 * A shard (--shard I/N) runs the cases scale/shard.c assigns to I, and writes
 * <out>.meta.json for `harness merge` (scale/meta.h).
 *
 * Progress goes to stderr, a line per case (an updating line on a terminal),
 * unless --quiet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "csv.h"
#include "exec/runner.h"
#include "exec/worker.h"
#include "interrupt.h"
#include "results/rows.h"
#include "results/verdict.h"
#include "scale/devices.h"
#include "scale/meta.h"
#include "scale/shard.h"
#include "sweep.h"
#include "tuned.h"

/* Extra time the watchdog gives a launch over --kernel-timeout before it kills
 * the worker (the emulator stops its own launches at the limit, more politely). */
#define WATCHDOG_GRACE_S 3.0

/* How long the run waits for one variant's compile (--compile-timeout). */
#define HN_COMPILE_TIMEOUT_S 600.0

/* One worker process and what the parent knows of it. */
enum { LANE_START, LANE_RUNNING, LANE_DONE, LANE_RETIRED };
typedef struct {
    int state;
    hn_lane_place place;
    hn_worker *wk;
    hn_run_device dev;    /* as its worker reported it */
    int have_dev;
    int held;             /* reported its device, waits for the go */
    int replan;           /* the first lane, started before the backend was known: start it again */
    int64_t cur_case;     /* the case being set up or run, or -1 */
    int cur_slot;         /* the row in progress, or -1 */
    int cur_helping;      /* cur_case is another lane's */
    int rows_this_worker;
    int watchdog_killed;  /* 1: a launch never returned; 2: a compile never ended */
    int killed_now;
} lane_ctx;

typedef struct {
    const hn_cli *cli;
    hn_plan *plan;
    int nv, n_slots;
    unsigned char *selected;
    hn_run_shared *sh;
    /* what the file holds, per (case, slot) */
    signed char *status;
    double *median, *noise;
    /* the results file */
    char *out_path, *marker_path, *meta_path;
    char *previous_path; /* the file --out held before this run started it over, kept until a row is
                            written (NULL: none): a run that fails before running anything puts it back */
    char *previous_of;   /* the file previous_path was, when --out is a symbolic link to it (NULL: --out) */
    const char **cols;
    int n_cols;
    hn_csv *csv;        /* the writer (NULL until the file is open) */
    hn_csv *builder;    /* rows the parent writes itself */
    hn_table old;       /* --resume: the rows the file held */
    int have_old, resumed;
    /* the workers */
    hn_devices devs;
    int resolved;       /* the lanes are known (the backend is) */
    lane_ctx lanes[HN_MAX_LANES];
    int n_lanes;
    hn_run_device dev;  /* the device every lane runs on (the first lane's report) */
    int have_dev;
    char **keys;        /* per variant, from the first worker */
    hn_run_stats stats;
    /* --shard */
    hn_shard shard;
    hn_meta meta;
    /* progress */
    double t_start;
    unsigned char *seen;  /* per case: its first CASE message came */
    int64_t cases_seen, cases_total;
    int n_ok, n_failed, n_rows;
    int n_by_status[HN_ST_COUNT]; /* rows this run wrote, by status: the reasons behind n_failed */
    char *first_why[HN_ST_COUNT]; /* the first failed row of each status: "variant, case N: reason" */
    int tty;
    int write_failed;
    int any_failure;
    int fatal;
    int bad_devices;    /* --devices named devices of different kinds, or none that exist (exit 2) */
} run_ctx;

/* ---------------------------------------------------------------------- */
/* progress */

/* " (2 mismatch, 1 timeout)": the statuses of the failed rows this run wrote, or
 * "" when none failed. */
static void failure_reasons(const run_ctx *r, char *out, size_t size) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int st = 0; st < HN_ST_COUNT; st++)
        if (r->n_by_status[st] && hn_status_failed(st))
            hn_sb_addf(&sb, "%s%d %s", sb.len ? ", " : " (", r->n_by_status[st], hn_status_names[st]);
    if (sb.len) hn_sb_addf(&sb, ")");
    snprintf(out, size, "%s", sb.len ? sb.buf : "");
    hn_sb_free(&sb);
}

static void progress(run_ctx *r, int64_t c, const char *label, const lane_ctx *ln) {
    if (r->cli->quiet) return;
    double el = hn_now() - r->t_start;
    char eta[64] = "", where[48] = "";
    if (r->cases_seen > 1 && r->cases_total > r->cases_seen) {
        double left = el / (double)(r->cases_seen - 1) * (double)(r->cases_total - r->cases_seen + 1);
        if (left < 120) snprintf(eta, sizeof eta, ", about %.0f s left", left);
        else snprintf(eta, sizeof eta, ", about %.0f min left", left / 60);
    }
    if (r->n_lanes > 1)
        snprintf(where, sizeof where, " [device %d%s]", ln->dev.index, ln->cur_helping ? ", helping" : "");
    /* printed as a case starts: the counts are of the cases before it ("so far"),
     * which a log of one line per case would otherwise read as this case's */
    char why[256];
    failure_reasons(r, why, sizeof why);
    fprintf(stderr, "%s[%lld/%lld] case %lld %s%s: %d rows ok, %d failed%s so far, %.1f s%s%s", r->tty ? "\r\033[K" : "",
            (long long)r->cases_seen, (long long)r->cases_total, (long long)c, label, where, r->n_ok, r->n_failed, why,
            el, eta, r->tty ? "" : "\n");
    fflush(stderr);
}

static void progress_end(run_ctx *r) {
    if (r->tty && !r->cli->quiet && r->cases_seen) fprintf(stderr, "\r\033[K");
}

/* ---------------------------------------------------------------------- */
/* rows */

static void record(run_ctx *r, int64_t c, int slot, int status, double median, double noise) {
    int64_t i = c * r->n_slots + slot;
    r->status[i] = (signed char)status;
    r->median[i] = median;
    r->noise[i] = noise;
    r->sh->median_ms[i] = median;
    r->sh->done[i] = 1;
    if (status == HN_ST_TIMEOUT && slot < r->nv && r->sh->timed_out[slot] < 0) r->sh->timed_out[slot] = c;
}

/* Writes one row line; on failure stops everything (exit 2). */
static int write_line(run_ctx *r, const char *line) {
    hn_err err;
    if (hn_csv_write_line(r->csv, line, &err) != 0) {
        fprintf(stderr, "harness: %s: %s; stopping (the rows written so far are in the file)\n", r->out_path,
                err.msg);
        r->write_failed = 1;
        return -1;
    }
    return 0;
}

/* The row line with its "tuned" column set to what a --tuned variant's row
 * runs (whose configuration); caller frees. */
static char *tuned_line(run_ctx *r, const char *line, const char *note) {
    hn_sb text;
    hn_sb_init(&text);
    for (int k = 0; k < r->n_cols; k++) {
        if (k) hn_sb_addc(&text, ',');
        hn_csv_quote(&text, r->cols[k]);
    }
    hn_sb_addf(&text, "\n%s\n", line);
    hn_table t;
    hn_err err;
    char *out = NULL;
    int parsed = hn_table_parse(text.buf, r->out_path, &t, &err) == 0;
    if (parsed && t.n_rows == 1 && t.n_cols == r->n_cols) {
        for (int k = 0; k < r->n_cols; k++) hn_csv_set(r->builder, k, t.rows[0][k]);
        hn_csv_set_named(r->builder, "tuned", note);
        out = hn_csv_take_row(r->builder);
    }
    if (parsed) hn_table_free(&t);
    hn_sb_free(&text);
    return out ? out : xstrdup(line);
}

/* "variant, case N: reason" of a row line, from its columns; caller frees. */
static char *row_why(run_ctx *r, const char *line) {
    hn_sb text;
    hn_sb_init(&text);
    for (int k = 0; k < r->n_cols; k++) {
        if (k) hn_sb_addc(&text, ',');
        hn_csv_quote(&text, r->cols[k]);
    }
    hn_sb_addf(&text, "\n%s\n", line);
    hn_table t;
    hn_err err;
    char *out = NULL;
    if (hn_table_parse(text.buf, r->out_path, &t, &err) == 0) {
        if (t.n_rows == 1) {
            const char *variant = NULL, *case_id = NULL, *reason = NULL;
            for (int k = 0; k < t.n_cols; k++) {
                if (strcmp(t.header[k], "variant") == 0) variant = t.rows[0][k];
                if (strcmp(t.header[k], "case") == 0) case_id = t.rows[0][k];
                if (strcmp(t.header[k], "reason") == 0) reason = t.rows[0][k];
            }
            if (reason && *reason)
                out = xasprintf("%s%s%s: %s", variant ? variant : "", case_id ? ", case " : "",
                                case_id ? case_id : "", reason);
        }
        hn_table_free(&t);
    }
    hn_sb_free(&text);
    return out;
}

static void take_row(run_ctx *r, lane_ctx *ln, const hn_run_row *row) {
    if (r->write_failed) return;
    if (r->sh->done[row->case_id * r->n_slots + row->slot]) return; /* never twice (cannot happen with claims) */
    const hn_tuned_group *tg = row->slot < r->nv ? hn_tuned_group_of(r->plan, row->slot) : NULL;
    char *patched = tg ? tuned_line(r, row->line, tg->note[row->case_id]) : NULL;
    int wrc = write_line(r, patched ? patched : row->line);
    free(patched);
    if (wrc != 0) return;
    record(r, row->case_id, row->slot, row->status, row->median_ms, row->noise);
    r->n_rows++;
    if (row->status == HN_ST_OK) r->n_ok++;
    if (row->status >= 0 && row->status < HN_ST_COUNT) r->n_by_status[row->status]++;
    if (hn_status_failed(row->status)) r->n_failed++, r->any_failure = 1;
    if (hn_status_failed(row->status) && row->status < HN_ST_COUNT && !r->first_why[row->status])
        r->first_why[row->status] = row_why(r, row->line);
    ln->rows_this_worker++;
}

/* A row the parent writes itself: for the row a dead worker was running. */
static void parent_row(run_ctx *r, lane_ctx *ln, int64_t c, int slot, int status, const char *reason) {
    hn_workload w;
    hn_err err;
    int shaped = hn_workload_shape(&w, r->plan, &r->plan->cases[c], &err) == 0;
    hn_run_row_case(r->builder, r->plan, &r->plan->cases[c], shaped ? &w : NULL, ln->have_dev ? &ln->dev : &r->dev);
    hn_run_row_slot(r->builder, r->plan, slot);
    if (slot < r->nv && r->keys) hn_csv_set_named(r->builder, "compile_key", r->keys[slot]);
    hn_csv_set_named(r->builder, "status", hn_status_names[status]);
    hn_csv_set_named(r->builder, "reason", reason);
    char *line = hn_csv_take_row(r->builder);
    hn_run_row row = {.case_id = c, .slot = slot, .status = status, .median_ms = NAN, .noise = NAN, .line = line};
    take_row(r, ln, &row);
    free(line);
}

/* Why the worker ended, in words. */
static void death_reason(run_ctx *r, const lane_ctx *ln, int code, int sig, char *out, size_t size) {
    char where[48] = "";
    if (r->n_lanes > 1) snprintf(where, sizeof where, " (device %d)", ln->place.device);
    if (ln->watchdog_killed == 2)
        snprintf(out, size,
                 "the compile did not finish in %g s (--compile-timeout); the worker process%s and its "
                 "compiler were killed and the sweep goes on in a new one",
                 r->cli->compile_timeout > 0 ? r->cli->compile_timeout : HN_COMPILE_TIMEOUT_S, where);
    else if (ln->watchdog_killed)
        snprintf(out, size,
                 "timed out: a launch ran longer than the kernel time-out (%g s) and never returned; the "
                 "worker process%s was killed and the sweep goes on in a new one",
                 r->cli->kernel_timeout > 0 ? r->cli->kernel_timeout : 60.0, where);
    else if (sig == SIGKILL)
        snprintf(out, size, "the worker process%s was killed (SIGKILL: out of memory?) while running this", where);
    else if (sig)
        snprintf(out, size, "the worker process%s died of %s while running this (the sweep goes on in a new one)",
                 where, strsignal(sig));
    else
        snprintf(out, size, "the worker process%s exited with code %d while running this", where, code);
}

/* ---------------------------------------------------------------------- */
/* the results file */

/* --resume of a shard's file as another shard (or without --shard, or of an
 * unsharded file with --shard) would drop every row of the other split as "not
 * in the plan": refused, naming both splits. A sidecar that cannot be read
 * is the merge's business, not this check's. */
static int resume_same_split(const run_ctx *r) {
    hn_meta old = {0};
    hn_err err;
    int had = hn_file_exists(r->meta_path) && hn_meta_load(r->meta_path, &old, &err) == 0;
    int old_index = had ? old.shard_index : -1, old_count = had ? old.shard_count : 0;
    if (had) hn_meta_free(&old);
    if (old_count == r->shard.count && (!old_count || old_index == r->shard.index)) return 0;
    char was[48] = "no --shard", now[48] = "no --shard";
    if (old_count) snprintf(was, sizeof was, "--shard %d/%d", old_index, old_count);
    if (r->shard.count) snprintf(now, sizeof now, "--shard %d/%d", r->shard.index, r->shard.count);
    fprintf(stderr,
            "harness: --resume: %s holds the rows of %s (%s), not of %s: resuming would drop them; give the same "
            "--shard, another --out, or --force to start over\n",
            r->out_path, was, had ? r->meta_path : "no sidecar", now);
    return -1;
}

static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether a file the run writes (the results, its .unfinished marker, sidecar,
 * best.csv, samples) is the config or a variant's source: --out config.json
 * would replace the config with results, --force or not. */
static int clobbers_input(const run_ctx *r) {
    const hn_plan *p = r->plan;
    char *best = hn_verdict_best_path(r->out_path), *samples = xasprintf("%s.samples.csv", r->out_path);
    const char *ours[] = {r->out_path, r->marker_path, r->meta_path, best, samples};
    int hit = 0;
    for (size_t i = 0; !hit && i < sizeof ours / sizeof *ours; i++) {
        const char *input = same_file(ours[i], p->path) ? p->path : NULL;
        for (int s = 0; !input && s < p->n_specs; s++)
            if (same_file(ours[i], p->specs[s].file)) input = p->specs[s].file;
        if (input) {
            fprintf(stderr, "harness: %s would be written over %s, an input of this run; give another --out\n",
                    ours[i], input);
            hit = 1;
        }
    }
    free(best);
    free(samples);
    return hit;
}

/* Puts back the file --out held before this run, when the run wrote no row of
 * its own (it failed before running anything): an earlier run's results are
 * never lost to a run that did nothing. */
static void restore_previous(run_ctx *r) {
    if (!r->previous_path) return;
    if (r->csv) {
        hn_csv_close(r->csv);
        r->csv = NULL;
    }
    const char *to = r->previous_of ? r->previous_of : r->out_path;
    if (rename(r->previous_path, to) != 0)
        fprintf(stderr, "harness: the earlier %s is in %s (cannot put it back: %s)\n", to, r->previous_path,
                strerror(errno));
    free(r->previous_path);
    free(r->previous_of);
    r->previous_path = r->previous_of = NULL;
}

/* Removes the results file a run started and wrote nothing into: a regular
 * file, or the one a symbolic link --out names (never the link, and never a
 * device such as --out /dev/null, which root could otherwise delete). */
static void remove_results(run_ctx *r) {
    char *target = realpath(r->out_path, NULL);
    struct stat st;
    if (target && stat(target, &st) == 0 && S_ISREG(st.st_mode)) unlink(target);
    free(target);
}

/* Drops the file set aside by open_results, once this run's rows replace it. */
static void drop_previous(run_ctx *r) {
    if (!r->previous_path) return;
    if (unlink(r->previous_path) != 0 && errno != ENOENT)
        fprintf(stderr, "harness: cannot remove %s: %s\n", r->previous_path, strerror(errno));
    free(r->previous_path);
    free(r->previous_of);
    r->previous_path = r->previous_of = NULL;
}

/* Refuses to overwrite an unfinished run or an input; opens the file fresh, or
 * (--resume) loads what it holds for matching once the worker names its device. */
static int open_results(run_ctx *r) {
    hn_err err;
    const hn_cli *cli = r->cli;
    if (clobbers_input(r)) return -1;
    int exists = hn_file_exists(r->out_path);
    if (exists && cli->resume) {
        if (resume_same_split(r) != 0) return -1;
        if (hn_table_load(r->out_path, &r->old, &err) != 0) {
            fprintf(stderr, "harness: --resume: %s\n", err.msg);
            return -1;
        }
        r->have_old = 1;
        int same = r->old.n_cols == r->n_cols;
        for (int i = 0; same && i < r->n_cols; i++) same = strcmp(r->old.header[i], r->cols[i]) == 0;
        if (!same) {
            fprintf(stderr,
                    "harness: --resume: %s has other columns than %s's results (its axes, defines or the "
                    "harness changed); --force starts it over\n",
                    r->out_path, r->plan->path);
            return -1;
        }
        return 0;
    }
    if (exists && hn_file_exists(r->marker_path) && !cli->force) {
        fprintf(stderr,
                "harness: %s holds an unfinished run (%s exists); --resume continues it, --force starts it over\n",
                r->out_path, r->marker_path);
        return -1;
    }
    char *dir = hn_dirname(r->out_path);
    int rc = hn_mkdirs(dir, &err);
    free(dir);
    struct stat st;
    /* only a regular file is set aside: a device (--out /dev/full, /dev/null) is
     * written through, never renamed; a symbolic link stays a link, and the file
     * it names is set aside (and is what a run that wrote nothing puts back) */
    if (rc == 0 && exists && lstat(r->out_path, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
        if (S_ISLNK(st.st_mode)) {
            char *target = realpath(r->out_path, NULL);
            if (target && stat(target, &st) == 0 && S_ISREG(st.st_mode)) r->previous_of = target;
            else free(target);
        }
        const char *of = r->previous_of ? r->previous_of : S_ISREG(st.st_mode) ? r->out_path : NULL;
        if (of) {
            r->previous_path = xasprintf("%s.previous", of);
            if (rename(of, r->previous_path) != 0) {
                fprintf(stderr, "harness: cannot set %s aside before starting it over: %s\n", of, strerror(errno));
                free(r->previous_path);
                free(r->previous_of);
                r->previous_path = r->previous_of = NULL;
                return -1;
            }
        }
    }
    if (rc != 0 || hn_csv_open(r->out_path, r->cols, r->n_cols, &r->csv, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        restore_previous(r);
        return -1;
    }
    /* a fresh unsharded file: a shard's sidecar left beside it by an earlier
     * run no longer describes it (merge and --resume would read it) */
    if (!r->shard.count && unlink(r->meta_path) != 0 && errno != ENOENT)
        fprintf(stderr, "harness: cannot remove %s: %s\n", r->meta_path, strerror(errno));
    if (cli->save_samples) { /* a fresh results file gets a fresh samples file (workers append) */
        char *sp = xasprintf("%s.samples.csv", r->out_path);
        if (unlink(sp) != 0 && errno != ENOENT) fprintf(stderr, "harness: cannot remove %s: %s\n", sp, strerror(errno));
        free(sp);
    }
    return 0;
}

/* --resume, once the device and compile keys are known: keeps the old rows
 * that match, rewrites the file with them (atomically), and appends after. */
static int resume_rows(run_ctx *r) {
    hn_err err;
    const hn_plan *p = r->plan;
    char *tmp = xasprintf("%s.resume.tmp", r->out_path);
    hn_csv *w = NULL;
    if (hn_csv_open(tmp, r->cols, r->n_cols, &w, &err) != 0) {
        fprintf(stderr, "harness: --resume: %s\n", err.msg);
        free(tmp);
        return -1;
    }
    int kept = 0, dropped = 0, rc = 0;
    for (int i = 0; i < r->old.n_rows && rc == 0; i++) {
        int64_t c = -1;
        int slot = -1;
        /* a row cut short (the run killed while writing it) is run again */
        int match = !hn_table_row_cut(&r->old, i) && hn_rows_locate(p, &r->old, i, &c, &slot) == 0 && r->sh->in_run[c];
        match = match && (slot >= r->nv || r->selected[slot]);
        match = match && strcmp(hn_table_get(&r->old, i, "backend"), r->dev.backend) == 0 &&
                strcmp(hn_table_get(&r->old, i, "device"), r->dev.dev.name) == 0;
        if (match && slot < r->nv) match = strcmp(hn_table_get(&r->old, i, "compile_key"), r->keys[slot]) == 0;
        if (match && r->sh->done[c * r->n_slots + slot]) match = 0; /* a duplicate: keep the first */
        int status = hn_rows_status(&r->old, i);
        if (!match || status < 0) {
            dropped++;
            continue;
        }
        for (int k = 0; k < r->n_cols; k++) hn_csv_set(w, k, r->old.rows[i][k]);
        rc = hn_csv_write_row(w, &err);
        double med = strtod(hn_table_get(&r->old, i, "time_median_ms"), NULL);
        const char *nz = hn_table_get(&r->old, i, "time_noise_pct");
        record(r, c, slot, status, status == HN_ST_OK && med > 0 ? med : NAN, *nz ? strtod(nz, NULL) / 100.0 : NAN);
        if (hn_status_failed(status)) r->any_failure = 1;
        kept++;
    }
    hn_csv_close(w);
    if (rc == 0 && rename(tmp, r->out_path) != 0) rc = hn_errf(&err, "cannot replace %s: %s", r->out_path, strerror(errno));
    if (rc != 0) {
        fprintf(stderr, "harness: --resume: %s\n", err.msg);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    if (hn_csv_append(r->out_path, r->cols, r->n_cols, &r->csv, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
    }
    printf("resume: %d rows of %s kept%s", kept, r->out_path, dropped ? "" : "\n");
    if (dropped)
        printf(", %d dropped (another case, variant, kernel source, device, or a duplicate)\n", dropped);
    fflush(stdout);
    return 0;
}

/* --shard: <out>.meta.json, written before the first row and again at the end. */
static void write_meta(run_ctx *r, int finished) {
    if (!r->shard.count) return;
    hn_err err;
    r->meta.finished = finished;
    free(r->meta.device), free(r->meta.backend);
    r->meta.device = xstrdup(r->have_dev ? r->dev.dev.name : "");
    r->meta.backend = xstrdup(r->have_dev ? r->dev.backend : "");
    if (hn_meta_write(r->meta_path, &r->meta, &err) != 0) fprintf(stderr, "harness: %s\n", err.msg);
}

/* ---------------------------------------------------------------------- */
/* messages from the workers */

static void print_device(run_ctx *r) {
    const hn_device_info *d = &r->dev.dev;
    const hn_plan *p = r->plan;
    int n_sel = hn_tuned_distinct(p, r->selected); /* a --tuned variant once: one row per case */
    printf("%s: %lld cases (of %lld combinations, seed %llu) x %d variants = %lld rows on %s [%s]\n", p->name,
           (long long)r->cases_total, (long long)p->n_total, (unsigned long long)p->seed, n_sel,
           (long long)r->cases_total * n_sel, d->name, r->dev.backend);
    if (r->n_lanes > 1) {
        hn_lane_place pl[HN_MAX_LANES];
        for (int i = 0; i < r->n_lanes; i++) pl[i] = r->lanes[i].place;
        char what[256];
        hn_devices_describe(pl, r->n_lanes, r->dev.backend, what, sizeof what);
        printf("devices: %s, rows handed out as they free up\n", what);
    }
    if (strcmp(r->dev.backend, "emu") != 0)
        printf("device: %s (%s), %d SMs, SM clock %d MHz, L2 %.0f MiB, memory %d MHz x %d bit: peak %.0f GB/s, "
               "%.1f TFLOP/s fp32, %.1f TFLOP/s fp64; driver %s\n",
               d->name, d->arch, d->sm_count, d->sm_clock_khz / 1000, (double)d->l2_bytes / (1 << 20),
               d->mem_clock_khz / 1000, d->mem_bus_width, r->dev.peak_bw, r->dev.peak_fp32 / 1e3,
               r->dev.peak_fp64 / 1e3, d->driver_version);
    else
        printf("emulator: times are CPU wall-clock times of emulated kernels, not GPU speed; cases above the "
               "GFLOP budget are skipped (--all runs them)\n");
    fflush(stdout);
}

static int emu_threads_total(const hn_cli *cli) {
    return cli->emu_threads > 0 ? cli->emu_threads : hn_cpu_count();
}

/* The first DEVICE message: now the backend is known, so are the lanes. The
 * first lane is started again when its place changed. -1: bad --devices. */
static int resolve_lanes(run_ctx *r, lane_ctx *first, const hn_run_device *d) {
    hn_lane_place pl[HN_MAX_LANES];
    int n;
    hn_err err;
    if (hn_devices_resolve(&r->devs, d->backend, d->n_devices, emu_threads_total(r->cli), pl, &n, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
    }
    r->resolved = 1;
    if (pl[0].device != first->place.device || pl[0].emu_threads != first->place.emu_threads) first->replan = 1;
    first->place = pl[0];
    r->sh->lane[0].device = pl[0].device;
    r->sh->lane[0].emu_threads = pl[0].emu_threads;
    for (int i = 1; i < n; i++) {
        r->lanes[i] = (lane_ctx){.state = LANE_START, .place = pl[i], .cur_case = -1, .cur_slot = -1};
        r->sh->lane[i].device = pl[i].device;
        r->sh->lane[i].emu_threads = pl[i].emu_threads;
    }
    r->n_lanes = n;
    r->sh->n_lanes = n;
    return 0;
}

/* Lets the held lanes go once every running lane has named its device (the
 * first time: after --resume decided what is done). -1 to stop the run. */
static int release_lanes(run_ctx *r) {
    for (int i = 0; i < r->n_lanes; i++) {
        const lane_ctx *ln = &r->lanes[i];
        if (ln->state == LANE_START || (ln->state == LANE_RUNNING && !ln->held && !ln->have_dev)) return 0;
    }
    if (r->have_old && !r->resumed) {
        r->resumed = 1;
        if (resume_rows(r) != 0) return -1;
    }
    for (int i = 0; i < r->n_lanes; i++)
        if (r->lanes[i].held) {
            r->lanes[i].held = 0;
            hn_worker_go(r->lanes[i].wk, 1); /* a worker that is gone shows up as one */
        }
    return 0;
}

/* Handles one message of lane ln; returns -1 to stop the run. */
static int on_message(run_ctx *r, lane_ctx *ln, hn_msg *m) {
    switch (m->type) {
    case HN_MSG_DEVICE:
        ln->have_dev = 1;
        ln->dev = m->device;
        if (!r->resolved && resolve_lanes(r, ln, &m->device) != 0) {
            hn_worker_go(ln->wk, 0);
            r->bad_devices = 1;
            return -1;
        }
        if (ln->replan) { /* the first lane, started before the backend was known */
            hn_worker_go(ln->wk, 0);
            return 0;
        }
        if (!r->have_dev) {
            r->dev = m->device;
            r->have_dev = 1;
            r->keys = m->keys;
            m->keys = NULL;
            m->n_keys = 0;
            print_device(r);
        } else if (strcmp(m->device.dev.name, r->dev.dev.name) != 0 || strcmp(m->device.backend, r->dev.backend) != 0) {
            fprintf(stderr,
                    "harness: --devices: device %d is %s [%s] but device %d is %s [%s]; a run compares variants on one "
                    "kind of device (run each kind on its own, e.g. a --shard per kind)\n",
                    m->device.index, m->device.dev.name, m->device.backend, r->dev.index, r->dev.dev.name,
                    r->dev.backend);
            hn_worker_go(ln->wk, 0);
            r->bad_devices = 1;
            return -1;
        }
        ln->held = 1;
        return release_lanes(r);
    case HN_MSG_CASE:
        ln->cur_case = m->case_id;
        ln->cur_slot = -1;
        ln->cur_helping = m->helping;
        if (!r->seen[m->case_id]) {
            r->seen[m->case_id] = 1;
            r->cases_seen++;
        }
        progress(r, m->case_id, m->label, ln);
        return 0;
    case HN_MSG_ROW_BEGIN:
        ln->cur_case = m->case_id;
        ln->cur_slot = m->slot;
        return 0;
    case HN_MSG_ROW:
        take_row(r, ln, &m->row);
        ln->cur_slot = -1;
        return r->write_failed ? -1 : 0;
    case HN_MSG_STATS:
        r->stats.compile_wait += m->stats.compile_wait;
        r->stats.compile_busy += m->stats.compile_busy;
        r->stats.ref += m->stats.ref;
        r->stats.gen += m->stats.gen;
        r->stats.transfer += m->stats.transfer;
        r->stats.check += m->stats.check;
        r->stats.kernel += m->stats.kernel;
        if (m->stats.compile_threads > r->stats.compile_threads) r->stats.compile_threads = m->stats.compile_threads;
        return 0;
    }
    return 0;
}

/* After a worker died: writes the row it was running (or, when it died setting
 * up a case of its own, every row of that case no other lane has) so the next
 * worker goes past it. */
static void after_death(run_ctx *r, lane_ctx *ln, int lane, int code, int sig) {
    char why[512];
    death_reason(r, ln, code, sig, why, sizeof why);
    int status = ln->watchdog_killed == 2 ? HN_ST_COMPILE : ln->watchdog_killed ? HN_ST_TIMEOUT : HN_ST_FAULT;
    if (ln->cur_slot >= 0) {
        parent_row(r, ln, ln->cur_case, ln->cur_slot, status, why);
        /* a compile that never ends would not end in the next case either */
        if (ln->watchdog_killed == 2 && ln->cur_slot < r->nv && r->sh->timed_out[ln->cur_slot] < 0)
            r->sh->timed_out[ln->cur_slot] = ln->cur_case;
    } else if (ln->cur_case >= 0 && !ln->cur_helping) {
        char reason[640];
        snprintf(reason, sizeof reason, "%s (while the case was being set up)", why);
        for (int s = 0; s < r->n_slots; s++) {
            int wanted = s < r->nv ? r->selected[s] : 0;
            if (wanted && hn_run_shared_claim(r->sh, lane, ln->cur_case, s)) parent_row(r, ln, ln->cur_case, s, status, reason);
        }
    }
    fprintf(stderr, "harness: %s\n", why);
    ln->cur_slot = -1;
    ln->cur_case = -1;
}

/* Variant rows of the run not in the file yet. */
static int64_t rows_left(const run_ctx *r) {
    int64_t n = 0;
    for (int64_t c = 0; c < r->plan->n_cases; c++)
        for (int v = 0; r->sh->in_run[c] && v < r->nv; v++) n += r->selected[v] && !r->sh->done[c * r->n_slots + v];
    return n;
}

/* ---------------------------------------------------------------------- */

static void print_time_split(run_ctx *r, double wall) {
    const hn_run_stats *s = &r->stats;
    printf("\ntime: %.1f s wall = waiting for compiles %.1f s (%.1f s of compiler work in %d thread%s) + reference "
           "%.1f s + inputs %.1f s + transfers %.1f s + checking %.1f s + measured kernels %.1f s + other %.1f s\n",
           wall, s->compile_wait, s->compile_busy, s->compile_threads, s->compile_threads == 1 ? "" : "s", s->ref, s->gen, s->transfer, s->check, s->kernel,
           wall - s->compile_wait - s->ref - s->gen - s->transfer - s->check - s->kernel);
    if (r->n_lanes > 1)
        printf("(with %d devices the parts add up over the workers, which ran at the same time)\n", r->n_lanes);
}

/* Which variants run (--variant), and the cases (--case, --shard); -1 on bad usage. */
static int select_rows(run_ctx *r) {
    const hn_cli *cli = r->cli;
    const hn_plan *p = r->plan;
    for (int v = 0; v < r->nv; v++) {
        int sel = cli->n_only == 0;
        for (int k = 0; k < cli->n_only; k++) {
            int f = hn_plan_find_variant(p, cli->only[k]);
            if (f < 0) {
                fprintf(stderr, "harness: --variant %s: no such variant in %s\n", cli->only[k], p->path);
                return -1;
            }
            const hn_variant *fv = &p->variants[f];
            sel |= f == v || (strcmp(p->specs[fv->spec].name, cli->only[k]) == 0 && p->variants[v].spec == fv->spec);
        }
        r->selected[v] = (unsigned char)sel;
    }
    hn_err cerr;
    unsigned char *listed_mask = xcalloc((size_t)p->n_cases + 1, 1);
    if (hn_cli_cases(cli, p->n_cases, listed_mask, &cerr) != 0) {
        fprintf(stderr, "harness: %s\n", cerr.msg);
        free(listed_mask);
        return -1;
    }
    int64_t listed = 0; /* the cases --case leaves (all without it) */
    for (int64_t c = 0; c < p->n_cases; c++) listed += r->sh->in_run[c] = listed_mask[c];
    free(listed_mask);
    if (r->shard.count) {
        hn_err err;
        hn_shard_model m = hn_shard_model_of(cli, p);
        unsigned char *in = xcalloc((size_t)p->n_cases + 1, 1);
        for (int64_t c = 0; c < p->n_cases; c++) in[c] = r->sh->in_run[c];
        r->meta.case_shard = xcalloc((size_t)p->n_cases + 1, sizeof *r->meta.case_shard);
        r->meta.estimate = xcalloc((size_t)r->shard.count, sizeof *r->meta.estimate);
        r->meta.n_cases = p->n_cases;
        hn_shard_assign(p, r->selected, in, r->shard.count, &m, r->meta.case_shard, r->meta.estimate);
        free(in);
        int64_t mine = 0;
        double total = 0;
        for (int64_t c = 0; c < p->n_cases; c++) {
            r->sh->in_run[c] = r->meta.case_shard[c] == r->shard.index;
            mine += r->sh->in_run[c];
        }
        for (int s = 0; s < r->shard.count; s++) total += r->meta.estimate[s];
        char *abs = realpath(p->path, NULL);
        r->meta.harness = xstrdup(HN_VERSION);
        r->meta.kind = xstrdup("run");
        r->meta.config = xstrdup(abs ? abs : p->path);
        free(abs);
        r->meta.seed = (long long)p->seed;
        r->meta.shard_index = r->shard.index;
        r->meta.shard_count = r->shard.count;
        r->meta.variants = xcalloc((size_t)r->nv + 1, sizeof *r->meta.variants);
        for (int v = 0; v < r->nv; v++)
            if (r->selected[v]) r->meta.variants[r->meta.n_variants++] = xstrdup(p->variants[v].label);
        if (hn_meta_config_hash(p, r->meta.config_hash, &err) != 0) {
            fprintf(stderr, "harness: %s\n", err.msg);
            return -1;
        }
        printf("shard %d/%d: %lld of the %lld cases, an estimated %.0f%% of the work (by the operator's FLOP and "
               "bytes)\n",
               r->shard.index, r->shard.count, (long long)mine, (long long)listed,
               total > 0 ? 100.0 * r->meta.estimate[r->shard.index] / total : 0.0);
    }
    r->cases_total = 0;
    for (int64_t c = 0; c < p->n_cases; c++) r->cases_total += r->sh->in_run[c];
    return 0;
}

/* Starts lane i's worker; -1 when the process cannot be started. */
static int start_lane(run_ctx *r, int i) {
    hn_err err;
    lane_ctx *ln = &r->lanes[i];
    ln->have_dev = ln->held = ln->replan = 0;
    ln->rows_this_worker = ln->watchdog_killed = ln->killed_now = 0;
    ln->cur_case = -1;
    ln->cur_slot = -1;
    /* Workers see the results path chosen here (the default too): --save-samples
     * writes beside it. */
    hn_cli wcli = *r->cli;
    wcli.out = r->out_path;
    if (hn_worker_start(&wcli, r->plan, r->selected, r->sh, i, &ln->wk, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
    }
    ln->state = LANE_RUNNING;
    return 0;
}

static void kill_all(run_ctx *r) {
    for (int i = 0; i < r->n_lanes; i++)
        if (r->lanes[i].wk && !r->lanes[i].killed_now) {
            hn_worker_kill(r->lanes[i].wk);
            r->lanes[i].killed_now = 1;
        }
}

/* A lane's worker ended: reap it and decide what comes next for the lane. */
static void lane_ended(run_ctx *r, int i, int *stopped) {
    lane_ctx *ln = &r->lanes[i];
    int code, sig;
    hn_worker_wait(ln->wk, &code, &sig);
    hn_worker_destroy(ln->wk);
    ln->wk = NULL;
    r->sh->lane[i].busy_since = 0;
    r->sh->lane[i].compile_since = 0;
    int live_before = 0;
    for (int k = 0; k < r->n_lanes; k++) live_before += k != i && r->lanes[k].state != LANE_RETIRED;
    if (r->write_failed || r->fatal) {
        ln->state = LANE_DONE;
    } else if (hn_interrupt_now()) {
        *stopped = 1;
        ln->state = LANE_DONE;
    } else if (ln->replan && !sig) {
        ln->state = LANE_START; /* started again on its resolved device */
    } else if (code == HN_RUN_DONE && !sig) {
        ln->state = LANE_DONE;
    } else if (code == HN_RUN_STOPPED && !sig) {
        *stopped = 1;
        ln->state = LANE_DONE;
    } else if (code == HN_RUN_RESTART && !sig) {
        ln->state = LANE_START; /* a kernel faulted; the row is written: go on in a fresh process */
    } else if ((code == HN_RUN_FAILED && !sig && !ln->have_dev) || !ln->have_dev ||
               (ln->cur_case < 0 && ln->rows_this_worker == 0)) {
        if (!(code == HN_RUN_FAILED && !sig && !ln->have_dev)) {
            char why[512];
            death_reason(r, ln, code, sig, why, sizeof why);
            fprintf(stderr, "harness: %s, before running any row; %s\n", why,
                    live_before ? "its device is left out, the others go on" : "giving up");
        } else if (live_before) {
            fprintf(stderr, "harness: device %d could not start; the others go on without it\n", ln->place.device);
        }
        ln->state = LANE_RETIRED;
        for (int64_t c = 0; c < r->plan->n_cases; c++) /* its cases are anybody's now */
            if (r->sh->owner[c] == i + 1) r->sh->owner[c] = 0;
        if (!live_before) r->fatal = 1;
    } else {
        after_death(r, ln, i, code, sig);
        ln->state = hn_interrupted() ? LANE_DONE : LANE_START;
        if (hn_interrupted()) *stopped = 1;
    }
    hn_run_shared_release(r->sh, i);
    ln->held = 0;
    if (ln->state != LANE_START && !r->fatal && release_lanes(r) != 0) r->fatal = 1;
}

/* Runs the lanes until every one is done (or the run stops); 1 when every row
 * of the run was reported. */
static int run_lanes(run_ctx *r, int *stopped) {
    const hn_cli *cli = r->cli;
    int stop_sent = 0;
    int64_t left_at_sweep = -1;
    for (;;) {
        if (hn_interrupt_now() && !*stopped) {
            kill_all(r);
            *stopped = 1;
        } else if (hn_interrupt_count() == 1 && !stop_sent) {
            r->sh->stop = 1;
            stop_sent = 1;
            progress_end(r);
            fprintf(stderr, "harness: interrupted: stopping after the current row (Ctrl-C again to stop now)\n");
        }
        int running = 0, stopping = *stopped || stop_sent || r->fatal;
        for (int i = 0; i < r->n_lanes; i++) {
            lane_ctx *ln = &r->lanes[i];
            if (ln->state == LANE_START && stopping) ln->state = LANE_DONE; /* not started again */
            if (ln->held && stopping) { /* waiting for a lane that will not come */
                ln->held = 0;
                hn_worker_go(ln->wk, 0);
            }
            if (ln->state == LANE_START && start_lane(r, i) != 0) {
                ln->state = LANE_RETIRED;
                r->fatal = 1;
            }
            running += ln->state == LANE_RUNNING;
        }
        if (r->fatal) kill_all(r);
        if (!running) {
            /* every lane ended: rows a retired lane left behind get a second pass */
            int64_t left = r->n_lanes > 1 && !*stopped && !r->fatal && !stop_sent ? rows_left(r) : 0;
            int spare = -1;
            for (int i = 0; i < r->n_lanes && spare < 0; i++)
                if (r->lanes[i].state == LANE_DONE) spare = i;
            if (!left || spare < 0 || left == left_at_sweep) {
                if (left) {
                    fprintf(stderr, "harness: %lld rows could not be run by any device\n", (long long)left);
                    r->fatal = 1;
                }
                break;
            }
            left_at_sweep = left;
            for (int64_t c = 0; c < r->plan->n_cases; c++) r->sh->owner[c] = 0; /* nobody runs anything now */
            r->lanes[spare].state = LANE_START;
            continue;
        }
        hn_worker *ws[HN_MAX_LANES];
        for (int i = 0; i < r->n_lanes; i++) ws[i] = r->lanes[i].wk;
        hn_worker_wait_any(ws, r->n_lanes, 0.2);
        for (int i = 0; i < r->n_lanes; i++) {
            lane_ctx *ln = &r->lanes[i];
            if (!ln->wk) continue;
            hn_msg m;
            int got;
            while ((got = hn_worker_next(ln->wk, 0, &m)) == 1) {
                int rc = on_message(r, ln, &m);
                hn_msg_free(&m);
                if (rc != 0) {
                    r->fatal = 1;
                    kill_all(r);
                }
            }
            if (got < 0) {
                lane_ended(r, i, stopped);
                continue;
            }
            double since = r->sh->lane[i].busy_since;
            double limit = (cli->kernel_timeout > 0 ? cli->kernel_timeout : 60.0) + WATCHDOG_GRACE_S;
            if (since > 0 && hn_now() - since > limit && !ln->killed_now) {
                ln->watchdog_killed = 1;
                hn_worker_kill(ln->wk);
                ln->killed_now = 1;
            }
            double csince = r->sh->lane[i].compile_since;
            double climit = cli->compile_timeout > 0 ? cli->compile_timeout : HN_COMPILE_TIMEOUT_S;
            if (csince > 0 && hn_now() - csince > climit && !ln->killed_now) {
                ln->watchdog_killed = 2;
                hn_worker_kill(ln->wk);
                ln->killed_now = 1;
            }
        }
    }
    int all_done = !*stopped && !r->fatal && !stop_sent;
    for (int i = 0; i < r->n_lanes; i++) all_done = all_done && r->lanes[i].state != LANE_START;
    return all_done && rows_left(r) == 0;
}

/* `harness check CONFIG`: `run` with every check of the sanitizer (or those of
 * --sanitize), on the emulator, into results/<name>.check.csv. */
int hn_cmd_check(const hn_cli *cli) {
    hn_cli c = *cli;
    if (!c.sanitize) c.sanitize = "all";
    c.backend = "emu";
    return hn_cmd_run(&c);
}

/* `harness profile CONFIG`: `run --profile` on the emulator, into
 * results/<name>.profile.csv (+ .lines.csv, .txt). */
int hn_cmd_profile(const hn_cli *cli) {
    hn_cli c = *cli;
    c.profile = 1;
    c.backend = "emu";
    return hn_cmd_run(&c);
}

/* A profile's other files, beside the results: base.lines.csv and base.txt
 * (base: the results path without .csv). Caller frees. */
static char *profile_path(const char *out, const char *suffix) {
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".csv") == 0) n -= 4;
    return xasprintf("%.*s%s", (int)n, out, suffix);
}

int hn_cmd_run(const hn_cli *cli_in) {
    hn_cli cli_copy = *cli_in;
    const hn_cli *cli = &cli_copy;
    if (cli_copy.sanitize && cli_copy.profile) {
        fprintf(stderr, "harness: --sanitize and --profile are two runs (harness check, harness profile)\n");
        return 2;
    }
    if (cli_copy.profile) {
        if (strcmp(cli_copy.backend, "cuda") == 0) {
            fprintf(stderr, "harness: --profile runs kernels on the CPU emulator (--backend emu)\n");
            return 2;
        }
        cli_copy.backend = "emu";
    }
    if (cli_copy.sanitize) {
        /* the sanitizer instruments emulated kernels: it runs on the emulator */
        unsigned bits;
        hn_err e;
        if (hn_san_parse(cli_copy.sanitize, &bits, &e) != 0) {
            fprintf(stderr, "harness: --sanitize: %s\n", e.msg);
            return 2;
        }
        if (strcmp(cli_copy.backend, "cuda") == 0) {
            fprintf(stderr, "harness: --sanitize runs kernels on the CPU emulator (--backend emu)\n");
            return 2;
        }
        cli_copy.backend = "emu";
    }
    /* --report is the sanitizer's: without it nothing would go there (never
     * ignored in silence); with it, a place that cannot take the report is
     * found before anything runs, not once per row after the findings */
    if (cli_copy.report) {
        hn_err e;
        if (!cli_copy.sanitize) {
            fprintf(stderr, "harness: --report %s: the sanitizer's report, which needs --sanitize (or harness check)\n",
                    cli_copy.report);
            return 2;
        }
        if (hn_check_appendable(cli_copy.report, &e) != 0) {
            fprintf(stderr, "harness: --report: %s\n", e.msg);
            return 2;
        }
    }
    run_ctx r;
    memset(&r, 0, sizeof r);
    r.cli = cli;
    r.t_start = hn_now();
    r.tty = isatty(2);
    hn_err err;
    if (hn_devices_parse(cli->devices, &r.devs, &err) != 0 || hn_shard_parse(cli->shard, &r.shard, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    if (cli->n_tuned && r.shard.count) {
        fprintf(stderr, "harness: --tuned and --shard: not together (harness merge does not take --tuned); run the "
                        "tuned variant without --shard\n");
        return 2;
    }
    if (hn_plan_load_tuned(cli->config, cli->seed, cli->tuned, cli->n_tuned, &r.plan, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    hn_plan_print_notice(r.plan);
    hn_plan *p = r.plan;
    r.nv = p->n_variants;
    r.n_slots = r.nv + p->op->n_baselines;
    int64_t cells = p->n_cases * r.n_slots;
    r.selected = xcalloc((size_t)r.nv, 1);
    r.status = xmalloc((size_t)cells);
    r.median = xmalloc((size_t)cells * sizeof *r.median);
    r.noise = xmalloc((size_t)cells * sizeof *r.noise);
    r.seen = xcalloc((size_t)p->n_cases + 1, 1);
    for (int64_t i = 0; i < cells; i++) r.status[i] = -1, r.median[i] = r.noise[i] = NAN;
    int exit_code = 2;
    hn_interrupt_saved handlers = {0};
    r.sh = hn_run_shared_create(p->n_cases, r.nv, p->op->n_baselines);
    if (!r.sh) {
        fprintf(stderr, "harness: cannot map memory shared with the worker process\n");
        goto done;
    }
    if (select_rows(&r) != 0) goto done;
    /* a --tuned variant's instances: each has rows only in the cases it runs */
    for (int v = 0; v < r.nv; v++)
        for (int64_t c = 0; p->n_tuned && c < p->n_cases; c++)
            if (!hn_tuned_runs(p, v, c)) r.sh->done[c * r.n_slots + v] = 1;
    r.out_path = cli->out ? xstrdup(cli->out)
                          : xasprintf("results/%s%s.csv", p->name,
                                      cli->sanitize ? ".check" : cli->profile ? ".profile" : "");
    cli_copy.results = r.out_path; /* the worker writes a profile's files beside it */
    r.marker_path = xasprintf("%s.unfinished", r.out_path);
    r.meta_path = hn_meta_path(r.out_path);
    r.cols = hn_run_columns(p, &r.n_cols);
    r.builder = hn_csv_detached(r.cols, r.n_cols);
    if (open_results(&r) != 0) goto done;
    if (hn_write_file(r.marker_path, "", 0, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        goto done;
    }
    write_meta(&r, 0);
    if (cli->profile && !cli->resume && hn_runner_profile_files(p, r.out_path, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        goto done;
    }

    hn_interrupt_install(&handlers, HN_INTERRUPT_WORKERS);

    /* The first lane; the others once it has named the backend (--devices),
     * or at once where the backend is known (--backend emu). */
    r.n_lanes = 1;
    r.lanes[0] = (lane_ctx){.state = LANE_START, .place = hn_devices_first(&r.devs, cli->backend, emu_threads_total(cli)),
                            .cur_case = -1, .cur_slot = -1};
    r.resolved = !r.devs.given;
    r.sh->lane[0].device = r.lanes[0].place.device;
    r.sh->lane[0].emu_threads = r.lanes[0].place.emu_threads;
    if (r.devs.given && strcmp(cli->backend, "emu") == 0) {
        hn_run_device emu = {.backend = "emu"};
        if (resolve_lanes(&r, &r.lanes[0], &emu) != 0) goto done;
    }
    int stopped = 0;
    int finished = run_lanes(&r, &stopped);
    progress_end(&r);
    if (r.write_failed || r.bad_devices || (r.fatal && !r.have_dev)) {
        /* Nothing ran (the worker could not start: --emu-threads past the
         * limit, a timing option it refused): the fresh file holds only a
         * header, and with its unfinished marker it made the next run refuse
         * without --force. Neither is left. */
        if (r.fatal && !r.have_dev && !r.have_old && r.n_rows == 0 && !r.write_failed) {
            hn_csv_close(r.csv);
            r.csv = NULL;
            remove_results(&r);
            unlink(r.marker_path);
            if (r.shard.count) unlink(r.meta_path);
            restore_previous(&r);
        }
        exit_code = 2;
        goto done;
    }
    if (finished && r.n_lanes > 1) {
        hn_csv_close(r.csv);
        r.csv = NULL;
        if (hn_rows_sort_file(r.out_path, p, &err) != 0) fprintf(stderr, "harness: %s\n", err.msg);
    }
    hn_verdict_in vin = {.plan = p,
                         .selected = r.selected,
                         .n_cases = p->n_cases,
                         .n_slots = r.n_slots,
                         .status = r.status,
                         .median_ms = r.median,
                         .noise = r.noise,
                         .is_emu = r.have_dev && strcmp(r.dev.backend, "emu") == 0,
                         .untimed = cli->sanitize != NULL || cli->profile};
    if (finished && !vin.untimed) {
        char *best = hn_verdict_best_path(r.out_path);
        if (hn_verdict_write_best(&vin, best, &err) == 0) printf("best variant per case: %s\n", best);
        else fprintf(stderr, "harness: %s\n", err.msg);
        free(best);
    }
    hn_verdict_print(&vin, stdout);
    print_time_split(&r, hn_now() - r.t_start);
    int said = 0;
    for (int st = 0; st < HN_ST_COUNT; st++) {
        if (!r.first_why[st]) continue;
        if (!said++) printf("why rows failed (the first of each status; the reason column has every row's):\n");
        char line[320];
        hn_excerpt(r.first_why[st], line, sizeof line);
        printf("  %-14s %s\n", hn_status_names[st], line);
    }
    char why[256];
    failure_reasons(&r, why, sizeof why);
    if (r.n_failed)
        printf("results: %s (%d rows written by this run: %d ok, %d failed%s)\n", r.out_path, r.n_rows, r.n_ok,
               r.n_failed, why);
    else
        printf("results: %s (%d rows written by this run)\n", r.out_path, r.n_rows);
    write_meta(&r, finished);
    if (cli->profile) {
        char *lines = profile_path(r.out_path, ".lines.csv"), *text = profile_path(r.out_path, ".txt");
        printf("profile: %s (a table and the annotated source per row), %s (a row per source line)\n", text, lines);
        free(lines);
        free(text);
    }
    if (cli->sanitize) {
        int64_t flagged = 0;
        for (int64_t i = 0; i < p->n_cases * r.n_slots; i++) flagged += r.status[i] >= HN_ST_RACE;
        printf("sanitizer (%s): %lld row%s with findings%s%s%s\n", cli->sanitize, (long long)flagged,
               flagged == 1 ? "" : "s", flagged ? "; each row's full report went to stderr" : "",
               flagged && cli->report ? " and " : "", flagged && cli->report ? cli->report : "");
    }
    if (finished) {
        unlink(r.marker_path);
        exit_code = r.fatal ? 1 : r.any_failure ? 1 : 0;
    } else {
        if (hn_interrupted())
            printf("interrupted: the rows done are in %s; run the same command with --resume to finish it\n",
                   r.out_path);
        else /* no Ctrl-C: a worker stopped without running them (a kernel's stray write into its state) */
            printf("stopped before every row ran: the rows done are in %s; run the same command with --resume to "
                   "finish it\n", r.out_path);
        exit_code = hn_interrupted() ? hn_interrupt_exit_code() : 1;
    }
done:
    /* a run that stopped before its first row (its file holds only the header)
     * gives the earlier file back; one that wrote rows replaces it */
    if (r.previous_path && r.n_rows == 0 && !r.have_dev) {
        unlink(r.marker_path);
        restore_previous(&r);
    }
    drop_previous(&r);
    hn_interrupt_restore(&handlers);
    for (int st = 0; st < HN_ST_COUNT; st++) free(r.first_why[st]);
    for (int i = 0; i < r.n_lanes; i++) hn_worker_destroy(r.lanes[i].wk);
    hn_csv_close(r.csv);
    hn_csv_close(r.builder);
    if (r.have_old) hn_table_free(&r.old);
    if (r.keys)
        for (int v = 0; v < r.nv; v++) free(r.keys[v]);
    free(r.keys);
    free(r.cols);
    free(r.out_path);
    free(r.marker_path);
    free(r.meta_path);
    free(r.selected);
    free(r.status);
    free(r.median);
    free(r.noise);
    free(r.seen);
    hn_meta_free(&r.meta);
    hn_run_shared_destroy(r.sh);
    hn_plan_free(p);
    return exit_code;
}

int hn_cli_cases(const hn_cli *cli, int64_t n_cases, unsigned char *mask, hn_err *err) {
    if (cli->cases) {
        memset(mask, 0, (size_t)n_cases);
        return hn_case_list_parse(cli->cases, n_cases, mask, NULL, NULL, err);
    }
    if (cli->case_id >= n_cases)
        return hn_errf(err, "--case %lld: the plan has %lld cases (0 to %lld)", (long long)cli->case_id,
                       (long long)n_cases, (long long)n_cases - 1);
    for (int64_t c = 0; c < n_cases; c++) mask[c] = cli->case_id < 0 || c == cli->case_id;
    return 0;
}
