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
 * Progress goes to stderr, a line per case (an updating line on a terminal),
 * unless --quiet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "csv.h"
#include "exec/runner.h"
#include "exec/worker.h"
#include "results/verdict.h"
#include "sweep.h"

/* Extra time the watchdog gives a launch over --kernel-timeout before it kills
 * the worker (the emulator stops its own launches at the limit, more politely). */
#define WATCHDOG_GRACE_S 3.0

/* How long the run waits for one variant's compile (--compile-timeout). */
#define HN_COMPILE_TIMEOUT_S 600.0

static volatile sig_atomic_t n_interrupts, got_term;

static void on_signal(int sig) {
    if (sig == SIGINT) n_interrupts++;
    else got_term = 1;
}

typedef struct {
    const hn_cli *cli;
    hn_plan *plan;
    int nv, n_slots;
    unsigned char *selected;
    int64_t first_case, last_case;
    hn_run_shared *sh;
    /* what the file holds, per (case, slot) */
    signed char *status;
    double *median, *noise;
    /* the results file */
    char *out_path, *marker_path;
    const char **cols;
    int n_cols;
    hn_csv *csv;        /* the writer (NULL until the file is open) */
    hn_csv *builder;    /* rows the parent writes itself */
    hn_table old;       /* --resume: the rows the file held */
    int have_old;
    /* the worker */
    hn_run_device dev;
    int have_dev;
    char **keys;        /* per variant, from the first worker */
    hn_run_stats stats;
    int64_t cur_case;   /* the case being set up or run, or -1 */
    int cur_slot;       /* the row in progress, or -1 */
    int rows_this_worker;
    int watchdog_killed;  /* 1: a launch never returned; 2: a compile never ended */
    /* progress */
    double t_start;
    int64_t cases_seen, cases_total, last_case_seen;
    int n_ok, n_failed, n_rows;
    int tty;
    int write_failed;
    int any_failure;
} run_ctx;

/* ---------------------------------------------------------------------- */
/* progress */

static void progress(run_ctx *r, int64_t c, const char *label) {
    if (r->cli->quiet) return;
    double el = hn_now() - r->t_start;
    char eta[64] = "";
    if (r->cases_seen > 1 && r->cases_total > r->cases_seen) {
        double left = el / (double)(r->cases_seen - 1) * (double)(r->cases_total - r->cases_seen + 1);
        if (left < 120) snprintf(eta, sizeof eta, ", about %.0f s left", left);
        else snprintf(eta, sizeof eta, ", about %.0f min left", left / 60);
    }
    fprintf(stderr, "%s[%lld/%lld] case %lld %s: %d rows ok, %d failed, %.1f s%s%s", r->tty ? "\r\033[K" : "",
            (long long)r->cases_seen, (long long)r->cases_total, (long long)c, label, r->n_ok, r->n_failed, el, eta,
            r->tty ? "" : "\n");
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

static void take_row(run_ctx *r, const hn_run_row *row) {
    if (r->write_failed || write_line(r, row->line) != 0) return;
    record(r, row->case_id, row->slot, row->status, row->median_ms, row->noise);
    r->n_rows++;
    if (row->status == HN_ST_OK) r->n_ok++;
    if (hn_status_failed(row->status)) r->n_failed++, r->any_failure = 1;
    r->rows_this_worker++;
}

/* A row the parent writes itself: for the row a dead worker was running. */
static void parent_row(run_ctx *r, int64_t c, int slot, int status, const char *reason) {
    hn_workload w;
    hn_err err;
    int shaped = hn_workload_shape(&w, r->plan, &r->plan->cases[c], &err) == 0;
    hn_run_row_case(r->builder, r->plan, &r->plan->cases[c], shaped ? &w : NULL, &r->dev);
    hn_run_row_slot(r->builder, r->plan, slot);
    if (slot < r->nv && r->keys) hn_csv_set_named(r->builder, "compile_key", r->keys[slot]);
    hn_csv_set_named(r->builder, "status", hn_status_names[status]);
    hn_csv_set_named(r->builder, "reason", reason);
    char *line = hn_csv_take_row(r->builder);
    hn_run_row row = {.case_id = c, .slot = slot, .status = status, .median_ms = NAN, .noise = NAN, .line = line};
    take_row(r, &row);
    free(line);
}

/* Why the worker ended, in words. */
static void death_reason(run_ctx *r, int code, int sig, char *out, size_t size) {
    if (r->watchdog_killed == 2)
        snprintf(out, size,
                 "the compile did not finish in %g s (--compile-timeout); the worker process and its "
                 "compiler were killed and the sweep goes on in a new one",
                 r->cli->compile_timeout > 0 ? r->cli->compile_timeout : HN_COMPILE_TIMEOUT_S);
    else if (r->watchdog_killed)
        snprintf(out, size,
                 "timed out: a launch ran longer than the kernel time-out (%g s) and never returned; the "
                 "worker process was killed and the sweep goes on in a new one",
                 r->cli->kernel_timeout > 0 ? r->cli->kernel_timeout : 60.0);
    else if (sig == SIGKILL)
        snprintf(out, size, "the worker process was killed (SIGKILL: out of memory?) while running this");
    else if (sig)
        snprintf(out, size, "the worker process died of %s while running this (the sweep goes on in a new one)",
                 strsignal(sig));
    else
        snprintf(out, size, "the worker process exited with code %d while running this", code);
}

/* ---------------------------------------------------------------------- */
/* the results file */

/* Refuses to overwrite an unfinished run; opens the file fresh, or (--resume)
 * loads what it holds for matching once the worker names its device. */
static int open_results(run_ctx *r) {
    hn_err err;
    const hn_cli *cli = r->cli;
    int exists = hn_file_exists(r->out_path);
    if (exists && cli->resume) {
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
    if (rc != 0 || hn_csv_open(r->out_path, r->cols, r->n_cols, &r->csv, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return -1;
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
        char *end;
        const char *cs = hn_table_get(&r->old, i, "case");
        long long c = strtoll(cs, &end, 10);
        int slot = -1, match = *cs && !*end && c >= 0 && c < p->n_cases;
        for (int a = 0; match && a < p->n_axes; a++) {
            char buf[64];
            hn_value_format(&p->cases[c].values[a], buf, sizeof buf);
            match = strcmp(hn_table_get(&r->old, i, p->axes[a].name), buf) == 0;
        }
        const char *vname = hn_table_get(&r->old, i, "variant");
        for (int s = 0; match && s < r->n_slots && slot < 0; s++)
            if (strcmp(hn_run_slot_name(p, s), vname) == 0) slot = s;
        match = match && slot >= 0 && (slot >= r->nv || r->selected[slot]);
        match = match && strcmp(hn_table_get(&r->old, i, "backend"), r->dev.backend) == 0 &&
                strcmp(hn_table_get(&r->old, i, "device"), r->dev.dev.name) == 0;
        if (match && slot < r->nv) match = strcmp(hn_table_get(&r->old, i, "compile_key"), r->keys[slot]) == 0;
        if (match && r->sh->done[c * r->n_slots + slot]) match = 0; /* a duplicate: keep the first */
        const char *st = hn_table_get(&r->old, i, "status");
        int status = -1;
        for (int k = 0; k < HN_ST_COUNT; k++)
            if (strcmp(st, hn_status_names[k]) == 0) status = k;
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

/* ---------------------------------------------------------------------- */
/* messages from the worker */

static void print_device(run_ctx *r) {
    const hn_device_info *d = &r->dev.dev;
    int n_sel = 0;
    for (int v = 0; v < r->nv; v++) n_sel += r->selected[v];
    const hn_plan *p = r->plan;
    printf("%s: %lld cases (of %lld combinations, seed %llu) x %d variants = %lld rows on %s [%s]\n", p->name,
           (long long)(r->last_case - r->first_case), (long long)p->n_total, (unsigned long long)p->seed, n_sel,
           (long long)(r->last_case - r->first_case) * n_sel, d->name, r->dev.backend);
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

/* Handles one message; returns -1 to stop the run. */
static int on_message(run_ctx *r, hn_worker *wk, hn_msg *m) {
    switch (m->type) {
    case HN_MSG_DEVICE:
        if (!r->have_dev) {
            r->dev = m->device;
            r->have_dev = 1;
            r->keys = m->keys;
            m->keys = NULL;
            m->n_keys = 0;
            print_device(r);
            if (r->have_old && resume_rows(r) != 0) {
                hn_worker_go(wk, 0);
                return -1;
            }
        }
        hn_worker_go(wk, 1); /* a worker that is gone shows up as one */
        return 0;
    case HN_MSG_CASE:
        r->cur_case = m->case_id;
        r->cur_slot = -1;
        if (m->case_id > r->last_case_seen) { /* a new worker announces its first case again */
            r->cases_seen++;
            r->last_case_seen = m->case_id;
        }
        progress(r, m->case_id, m->label);
        return 0;
    case HN_MSG_ROW_BEGIN:
        r->cur_case = m->case_id;
        r->cur_slot = m->slot;
        return 0;
    case HN_MSG_ROW:
        take_row(r, &m->row);
        r->cur_slot = -1;
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
 * up a case, every row of that case) so the next worker goes past it. */
static void after_death(run_ctx *r, int code, int sig) {
    char why[512];
    death_reason(r, code, sig, why, sizeof why);
    int status = r->watchdog_killed == 2 ? HN_ST_COMPILE : r->watchdog_killed ? HN_ST_TIMEOUT : HN_ST_FAULT;
    if (r->cur_slot >= 0) {
        parent_row(r, r->cur_case, r->cur_slot, status, why);
        /* a compile that never ends would not end in the next case either */
        if (r->watchdog_killed == 2 && r->cur_slot < r->nv && r->sh->timed_out[r->cur_slot] < 0)
            r->sh->timed_out[r->cur_slot] = r->cur_case;
    } else if (r->cur_case >= 0) {
        char reason[640];
        snprintf(reason, sizeof reason, "%s (while the case was being set up)", why);
        for (int s = 0; s < r->n_slots; s++) {
            int wanted = s < r->nv ? r->selected[s] : 0;
            if (wanted && !r->sh->done[r->cur_case * r->n_slots + s]) parent_row(r, r->cur_case, s, status, reason);
        }
    }
    fprintf(stderr, "harness: %s\n", why);
    r->cur_slot = -1;
    r->cur_case = -1;
}

/* ---------------------------------------------------------------------- */

static void print_time_split(run_ctx *r, double wall) {
    const hn_run_stats *s = &r->stats;
    printf("\ntime: %.1f s wall = waiting for compiles %.1f s (%.1f s of compiler work in %d threads) + reference "
           "%.1f s + inputs %.1f s + transfers %.1f s + checking %.1f s + measured kernels %.1f s + other %.1f s\n",
           wall, s->compile_wait, s->compile_busy, s->compile_threads, s->ref, s->gen, s->transfer, s->check, s->kernel,
           wall - s->compile_wait - s->ref - s->gen - s->transfer - s->check - s->kernel);
}

/* Which variants run (--variant), and the case range (--case); -1 on bad usage. */
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
    r->first_case = 0;
    r->last_case = p->n_cases;
    if (cli->case_id >= 0) {
        if (cli->case_id >= p->n_cases) {
            fprintf(stderr, "harness: --case %lld: the plan has %lld cases (0 to %lld)\n", (long long)cli->case_id,
                    (long long)p->n_cases, (long long)p->n_cases - 1);
            return -1;
        }
        r->first_case = cli->case_id;
        r->last_case = cli->case_id + 1;
    }
    r->cases_total = r->last_case - r->first_case;
    return 0;
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
    run_ctx r;
    memset(&r, 0, sizeof r);
    r.cli = cli;
    r.t_start = hn_now();
    r.cur_case = -1;
    r.cur_slot = -1;
    r.last_case_seen = -1;
    r.tty = isatty(2);
    hn_err err;
    if (hn_plan_load(cli->config, cli->seed, &r.plan, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    hn_plan *p = r.plan;
    r.nv = p->n_variants;
    r.n_slots = r.nv + p->op->n_baselines;
    int64_t cells = p->n_cases * r.n_slots;
    r.selected = xcalloc((size_t)r.nv, 1);
    r.status = xmalloc((size_t)cells);
    r.median = xmalloc((size_t)cells * sizeof *r.median);
    r.noise = xmalloc((size_t)cells * sizeof *r.noise);
    for (int64_t i = 0; i < cells; i++) r.status[i] = -1, r.median[i] = r.noise[i] = NAN;
    int exit_code = 2;
    hn_worker *wk = NULL;
    struct sigaction old_int, old_term;
    int handlers = 0;
    if (select_rows(&r) != 0) goto done;
    r.sh = hn_run_shared_create(p->n_cases, r.nv, p->op->n_baselines);
    if (!r.sh) {
        fprintf(stderr, "harness: cannot map memory shared with the worker process\n");
        goto done;
    }
    r.out_path = cli->out ? xstrdup(cli->out)
                          : xasprintf("results/%s%s.csv", p->name,
                                      cli->sanitize ? ".check" : cli->profile ? ".profile" : "");
    cli_copy.results = r.out_path; /* the worker writes a profile's files beside it */
    r.marker_path = xasprintf("%s.unfinished", r.out_path);
    r.cols = hn_run_columns(p, &r.n_cols);
    r.builder = hn_csv_detached(r.cols, r.n_cols);
    if (open_results(&r) != 0) goto done;
    if (hn_write_file(r.marker_path, "", 0, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        goto done;
    }
    if (cli->profile && !cli->resume && hn_runner_profile_files(p, r.out_path, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        goto done;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    handlers = 1;

    int finished = 0, stopped = 0, fatal = 0, stop_sent = 0;
    while (!finished && !stopped && !fatal) {
        if (hn_worker_start(cli, p, r.selected, r.first_case, r.last_case, r.sh, &wk, &err) != 0) {
            fprintf(stderr, "harness: %s\n", err.msg);
            fatal = 1;
            break;
        }
        r.rows_this_worker = 0;
        r.watchdog_killed = 0;
        int killed_now = 0;
        for (;;) {
            if ((got_term || n_interrupts >= 2) && !killed_now) {
                hn_worker_kill(wk);
                killed_now = 1;
            } else if (n_interrupts == 1 && !stop_sent) {
                r.sh->stop = 1;
                stop_sent = 1;
                progress_end(&r);
                fprintf(stderr, "harness: interrupted: stopping after the current row (Ctrl-C again to stop now)\n");
            }
            hn_msg m;
            int got = hn_worker_next(wk, 0.2, &m);
            if (got == 1) {
                int rc = on_message(&r, wk, &m);
                hn_msg_free(&m);
                if (rc != 0) {
                    hn_worker_kill(wk);
                    killed_now = 1;
                }
                continue;
            }
            if (got < 0) break;
            double since = r.sh->busy_since;
            double limit = (cli->kernel_timeout > 0 ? cli->kernel_timeout : 60.0) + WATCHDOG_GRACE_S;
            if (since > 0 && hn_now() - since > limit && !killed_now) {
                r.watchdog_killed = 1;
                hn_worker_kill(wk);
                killed_now = 1;
            }
            double csince = r.sh->compile_since;
            double climit = cli->compile_timeout > 0 ? cli->compile_timeout : HN_COMPILE_TIMEOUT_S;
            if (csince > 0 && hn_now() - csince > climit && !killed_now) {
                r.watchdog_killed = 2;
                hn_worker_kill(wk);
                killed_now = 1;
            }
        }
        int code, sig;
        hn_worker_wait(wk, &code, &sig);
        hn_worker_destroy(wk);
        wk = NULL;
        r.sh->busy_since = 0;
        r.sh->compile_since = 0;
        if (r.write_failed) {
            fatal = 1;
        } else if (got_term || n_interrupts >= 2) {
            stopped = 1;
        } else if (code == HN_RUN_DONE && !sig) {
            finished = 1;
        } else if (code == HN_RUN_STOPPED && !sig) {
            stopped = 1;
        } else if (code == HN_RUN_FAILED && !sig && !r.have_dev) {
            fatal = 1; /* could not start (it said why) */
        } else if (code == HN_RUN_RESTART && !sig) {
            /* a kernel faulted; the row is written: go on in a fresh process */
        } else if (!r.have_dev || (r.cur_case < 0 && r.rows_this_worker == 0)) {
            char why[512];
            death_reason(&r, code, sig, why, sizeof why);
            fprintf(stderr, "harness: %s, before running any row; giving up\n", why);
            fatal = 1;
        } else {
            after_death(&r, code, sig);
            if (n_interrupts) stopped = 1;
        }
    }
    progress_end(&r);
    if (r.write_failed || (fatal && !r.have_dev)) {
        exit_code = 2;
        goto done;
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
    printf("results: %s (%d rows written by this run)\n", r.out_path, r.n_rows);
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
        exit_code = fatal ? 1 : r.any_failure ? 1 : 0;
    } else {
        printf("interrupted: the rows done are in %s; run the same command with --resume to finish it\n",
               r.out_path);
        exit_code = got_term ? 143 : n_interrupts ? 130 : 1;
    }
done:
    if (handlers) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    hn_worker_destroy(wk);
    hn_csv_close(r.csv);
    hn_csv_close(r.builder);
    if (r.have_old) hn_table_free(&r.old);
    if (r.keys)
        for (int v = 0; v < r.nv; v++) free(r.keys[v]);
    free(r.keys);
    free(r.cols);
    free(r.out_path);
    free(r.marker_path);
    free(r.selected);
    free(r.status);
    free(r.median);
    free(r.noise);
    hn_run_shared_destroy(r.sh);
    hn_plan_free(p);
    return exit_code;
}
