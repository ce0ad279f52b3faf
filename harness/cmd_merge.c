/*
 * cmd_merge.c: `harness merge OUT.csv SHARD.csv...` combines the shards of a
 * run (--shard I/N) into one results file in plan order with its
 * <out>.best.csv and verdict, as a single run would have written them;
 * `harness merge OUT.journal A.journal B.journal...` combines the journals of
 * a tune's shards, each evaluation once (by its key).
 *
 * Before anything is written, every shard's sidecar (scale/meta.h) must agree:
 * the same harness, config file and kernel sources (a hash of them), seed,
 * variants and split. Then every row the split promised is looked for: rows
 * missing (a shard not given, or one that did not finish) are listed and the
 * exit code is 1; rows given twice are reported and the first kept. A merged
 * file is complete when the command exits 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "csv.h"
#include "exec/runner.h"
#include "results/rows.h"
#include "results/verdict.h"
#include "scale/meta.h"
#include "sweep.h"
#include "tune/journal.h"

typedef struct {
    const hn_cli *cli;
    const char *out;
    int n;                   /* shards given */
    const char *const *paths;
    hn_meta *metas;
    int *given;              /* per shard index: how many inputs are that shard */
    int *dup_of;             /* per input: the earlier input that is the same file, or -1 */
} merge_ctx;

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Loads every input's sidecar and checks they agree; 2 (refused) or 0. */
static int load_metas(merge_ctx *m, const char *kind) {
    hn_err err;
    for (int i = 0; i < m->n; i++) {
        char *mp = hn_meta_path(m->paths[i]);
        if (!hn_file_exists(m->paths[i])) {
            fprintf(stderr, "harness merge: %s: no such file\n", m->paths[i]);
            free(mp);
            return 2;
        }
        if (!hn_file_exists(mp)) {
            fprintf(stderr,
                    "harness merge: %s has no %s beside it: merge takes the shards of a %s made with --shard I/N\n",
                    m->paths[i], mp, kind);
            free(mp);
            return 2;
        }
        int rc = hn_meta_load(mp, &m->metas[i], &err);
        free(mp);
        if (rc != 0) {
            fprintf(stderr, "harness merge: %s\n", err.msg);
            return 2;
        }
        const hn_meta *x = &m->metas[i];
        if (strcmp(x->kind, kind) != 0) {
            fprintf(stderr, "harness merge: %s is a shard of a %s, not of a %s (%s takes %s)\n", m->paths[i],
                    x->kind, kind, m->out, strcmp(kind, "run") == 0 ? "CSV shards" : "journals");
            return 2;
        }
        if (x->shard_index < 0 || x->shard_index >= x->shard_count) {
            fprintf(stderr, "harness merge: %s is not a shard (already a merge?)\n", m->paths[i]);
            return 2;
        }
        if (i > 0 && hn_meta_same(&m->metas[0], m->paths[0], x, m->paths[i], &err) != 0) {
            fprintf(stderr, "harness merge: refusing to merge: %s\n", err.msg);
            return 2;
        }
    }
    int count = m->metas[0].shard_count;
    m->given = xcalloc((size_t)count, sizeof *m->given);
    for (int i = 0; i < m->n; i++) {
        int k = m->metas[i].shard_index;
        if (m->given[k]++)
            fprintf(stderr, "harness merge: shard %d/%d is given more than once (%s again); its rows count once\n", k,
                    count, m->paths[i]);
        if (!m->metas[i].finished)
            fprintf(stderr, "harness merge: %s: shard %d/%d did not finish (run it again with --resume)\n",
                    m->paths[i], k, count);
    }
    for (int i = 1; i < m->n; i++)
        if (strcmp(m->metas[i].device, m->metas[0].device) != 0 || strcmp(m->metas[i].backend, m->metas[0].backend) != 0)
            fprintf(stderr,
                    "harness merge: note: %s ran on %s [%s], %s on %s [%s]: each case's rows come from one device, "
                    "so per-case comparisons hold, but times across cases are not comparable\n",
                    m->paths[0], m->metas[0].device, m->metas[0].backend, m->paths[i], m->metas[i].device,
                    m->metas[i].backend);
    return 0;
}

/* Prints the shards not given, with their cases; returns how many. */
static int missing_shards(const merge_ctx *m) {
    const hn_meta *x = &m->metas[0];
    int missing = 0;
    for (int k = 0; k < x->shard_count; k++) {
        if (m->given[k]) continue;
        missing++;
        hn_sb sb;
        hn_sb_init(&sb);
        int n = 0;
        for (int64_t c = 0; c < x->n_cases; c++)
            if (x->case_shard[c] == k) hn_sb_addf(&sb, "%s%lld", n++ ? ", " : "", (long long)c);
        fprintf(stderr, "harness merge: shard %d/%d was not given: the evaluations of its case%s %s are missing\n", k,
                x->shard_count, n == 1 ? "" : "s", n ? sb.buf : "(none)");
        hn_sb_free(&sb);
    }
    return missing;
}

/* The merged output's sidecar: every shard, complete or not. */
static void write_merged_meta(const merge_ctx *m, int complete) {
    hn_meta x = m->metas[0];
    x.shard_index = -1;
    x.finished = complete;
    char *mp = hn_meta_path(m->out);
    hn_err err;
    if (hn_meta_write(mp, &x, &err) != 0) fprintf(stderr, "harness merge: %s\n", err.msg);
    free(mp);
}

static int merge_rows(merge_ctx *m) {
    const hn_meta *x = &m->metas[0];
    hn_err err;
    hn_plan *p = NULL;
    hn_table *tables = xcalloc((size_t)m->n, sizeof *tables);
    int n_loaded = 0, rc = 2;
    hn_table all = {0};
    int *rows = NULL, *slots = NULL;
    int64_t *cases = NULL;
    signed char *status = NULL;
    double *median = NULL, *noise = NULL;
    unsigned char *selected = NULL;
    int *seen = NULL;
    const char **cols = NULL;
    /* the plan the shards ran, to place rows and to write best.csv */
    if (hn_plan_load(x->config, x->seed, &p, &err) != 0) {
        fprintf(stderr, "harness merge: the shards ran %s, which is needed to merge them: %s\n", x->config, err.msg);
        goto done;
    }
    char hash[33] = "";
    if (hn_meta_config_hash(p, hash, &err) != 0 || strcmp(hash, x->config_hash) != 0) {
        fprintf(stderr,
                "harness merge: refusing to merge: %s or one of its kernels changed since the shards ran (hash %.12s "
                "then, %.12s now)\n",
                x->config, x->config_hash, hash);
        goto done;
    }
    if (p->n_cases != x->n_cases) {
        fprintf(stderr, "harness merge: refusing to merge: %s now has %lld cases, the shards %lld\n", x->config,
                (long long)p->n_cases, (long long)x->n_cases);
        goto done;
    }
    int nv = p->n_variants, n_slots = nv + p->op->n_baselines;
    selected = xcalloc((size_t)nv + 1, 1);
    for (int v = 0; v < nv; v++)
        for (int k = 0; k < x->n_variants; k++) selected[v] |= strcmp(p->variants[v].label, x->variants[k]) == 0;
    int n_cols;
    cols = hn_run_columns(p, &n_cols);
    int total = 0;
    for (int i = 0; i < m->n; i++, n_loaded++) {
        if (hn_table_load(m->paths[i], &tables[i], &err) != 0) {
            fprintf(stderr, "harness merge: %s\n", err.msg);
            goto done;
        }
        int same = tables[i].n_cols == n_cols;
        for (int k = 0; same && k < n_cols; k++) same = strcmp(tables[i].header[k], cols[k]) == 0;
        if (!same) {
            fprintf(stderr, "harness merge: refusing to merge: %s has other columns than %s's results\n", m->paths[i],
                    x->config);
            n_loaded++;
            goto done;
        }
        total += tables[i].n_rows;
        if (tables[i].cut_tail)
            fprintf(stderr, "harness merge: %s: its last row is cut short (inside a quoted field); left out\n",
                    m->paths[i]);
    }
    /* every row, once, at its (case, slot) */
    int64_t cells = p->n_cases * n_slots;
    seen = xcalloc((size_t)cells + 1, sizeof *seen);
    status = xmalloc((size_t)cells + 1);
    median = xmalloc(((size_t)cells + 1) * sizeof *median);
    noise = xmalloc(((size_t)cells + 1) * sizeof *noise);
    for (int64_t i = 0; i < cells; i++) status[i] = -1, median[i] = noise[i] = NAN;
    all.header = tables[0].header;
    all.n_cols = n_cols;
    all.rows = xcalloc((size_t)total + 1, sizeof *all.rows);
    rows = xcalloc((size_t)total + 1, sizeof *rows);
    slots = xcalloc((size_t)total + 1, sizeof *slots);
    cases = xcalloc((size_t)total + 1, sizeof *cases);
    int kept = 0, dups = 0, foreign = 0, cut = 0, n_files = 0;
    for (int i = 0; i < m->n; i++) {
        if (m->dup_of[i] >= 0) continue; /* the same file again: said by load_metas */
        n_files++;
        const hn_table *t = &tables[i];
        for (int r = 0; r < t->n_rows; r++) {
            int64_t c;
            int s;
            if (hn_table_row_cut(t, r)) { /* its shard was stopped while writing it: not a result */
                cut++;
                fprintf(stderr, "harness merge: %s: row %d (case %s, %s) is cut short (%d of %d fields); left out\n",
                        m->paths[i], r + 1, hn_table_get(t, r, "case"), hn_table_get(t, r, "variant"), t->n_read[r],
                        t->n_cols);
                continue;
            }
            if (hn_rows_locate(p, t, r, &c, &s) != 0 || hn_rows_status(t, r) < 0) {
                if (foreign++ < 10)
                    fprintf(stderr, "harness merge: %s: row %d (case %s, %s) is no row of %s; left out\n", m->paths[i],
                            r + 1, hn_table_get(t, r, "case"), hn_table_get(t, r, "variant"), x->config);
                continue;
            }
            int64_t cell = c * n_slots + s;
            if (seen[cell]) {
                if (dups++ < 10)
                    fprintf(stderr, "harness merge: case %lld %s is in %s and in %s; the first is kept\n", (long long)c,
                            hn_run_slot_name(p, s), m->paths[seen[cell] - 1], m->paths[i]);
                continue;
            }
            seen[cell] = i + 1;
            all.rows[kept] = t->rows[r];
            rows[kept] = kept;
            cases[kept] = c;
            slots[kept] = s;
            kept++;
            int st = hn_rows_status(t, r);
            status[cell] = (signed char)st;
            double med = strtod(hn_table_get(t, r, "time_median_ms"), NULL);
            const char *nz = hn_table_get(t, r, "time_noise_pct");
            median[cell] = st == HN_ST_OK && med > 0 ? med : NAN;
            noise[cell] = *nz ? strtod(nz, NULL) / 100.0 : NAN;
        }
    }
    all.n_rows = kept;
    if (dups > 10) fprintf(stderr, "harness merge: ... %d rows given twice in all\n", dups);
    if (foreign > 10) fprintf(stderr, "harness merge: ... %d rows that are no row of the plan in all\n", foreign);
    /* the rows the split promised, listed by shard where missing */
    for (int k = 0; k < x->shard_count; k++) {
        int header = 0;
        for (int64_t c = 0; c < p->n_cases; c++) {
            if (x->case_shard[c] != k) continue;
            for (int v = 0; v < nv; v++) {
                if (!selected[v] || seen[c * n_slots + v]) continue;
                if (!header) {
                    const char *path = NULL;
                    int finished = 0;
                    for (int i = 0; i < m->n; i++)
                        if (m->metas[i].shard_index == k) path = m->paths[i], finished |= m->metas[i].finished;
                    if (!path)
                        fprintf(stderr, "harness merge: shard %d/%d was not given; its rows are missing:\n", k,
                                x->shard_count);
                    else
                        fprintf(stderr, "harness merge: %s (shard %d/%d) lacks rows%s:\n", path, k, x->shard_count,
                                finished ? "" : " (it did not finish: run it again with --resume)");
                    header = 1;
                }
                fprintf(stderr, "  case %lld %s\n", (long long)c, p->variants[v].label);
            }
        }
    }
    int64_t promised = 0;
    for (int64_t c = 0; c < p->n_cases; c++)
        for (int v = 0; x->case_shard[c] >= 0 && v < nv; v++) promised += selected[v];
    int64_t have_variant_rows = 0;
    for (int k = 0; k < kept; k++) have_variant_rows += slots[k] < nv;
    if (hn_rows_write_sorted(m->out, p, &all, rows, cases, slots, kept, &err) != 0) {
        fprintf(stderr, "harness merge: %s\n", err.msg);
        goto done;
    }
    int complete = have_variant_rows == promised && !foreign && !cut;
    hn_verdict_in vin = {.plan = p, .selected = selected, .n_cases = p->n_cases, .n_slots = n_slots,
                         .status = status, .median_ms = median, .noise = noise,
                         .is_emu = strcmp(x->backend, "emu") == 0};
    char *best = hn_verdict_best_path(m->out);
    if (hn_verdict_write_best(&vin, best, &err) != 0) fprintf(stderr, "harness merge: %s\n", err.msg);
    write_merged_meta(m, complete);
    if (!m->cli->quiet) { /* --quiet: the merged line (and what is missing) only */
        hn_verdict_print(&vin, stdout);
        printf("\n");
    }
    printf("merged %d shard file%s of %d: %d rows into %s (best variant per case: %s)\n", n_files, n_files == 1 ? "" : "s",
           x->shard_count, kept, m->out, best);
    free(best);
    if (!complete)
        printf("incomplete: %lld of %lld variant rows; the missing ones are listed on stderr\n",
               (long long)have_variant_rows, (long long)promised);
    rc = complete ? 0 : 1;
done:
    for (int i = 0; i < n_loaded && i < m->n; i++) hn_table_free(&tables[i]);
    free(tables);
    free(all.rows);
    free(rows), free(slots), free(cases);
    free(status), free(median), free(noise), free(selected), free(seen);
    free(cols);
    hn_plan_free(p);
    return rc;
}

static int merge_journals(merge_ctx *m) {
    hn_err err;
    char *tmp = xasprintf("%s.merge.tmp", m->out);
    unlink(tmp);
    hn_journal *out = NULL;
    if (hn_journal_open(tmp, &out, &err) != 0) {
        fprintf(stderr, "harness merge: %s\n", err.msg);
        free(tmp);
        return 2;
    }
    int kept = 0, dups = 0, rc = 0;
    for (int i = 0; i < m->n && rc == 0; i++) {
        hn_journal *j = NULL;
        if (hn_journal_load(m->paths[i], &j, &err) != 0) {
            fprintf(stderr, "harness merge: %s\n", err.msg);
            rc = 2;
            break;
        }
        if (hn_journal_skipped(j))
            fprintf(stderr, "harness merge: %s: %d incomplete line(s) skipped\n", m->paths[i], hn_journal_skipped(j));
        for (int k = 0; k < hn_journal_count(j) && rc == 0; k++) {
            const hn_journal_entry *e = hn_journal_at(j, k);
            /* in a journal a later entry of a key replaces the earlier (a
             * resumed shard measured again what a worker's end left) */
            if (hn_journal_find(j, e->key) != e) continue;
            /* across journals the first is kept, unless it only records a
             * worker process that ended and this one is a verdict: appended
             * after it, it replaces it */
            const hn_journal_entry *had = hn_journal_find(out, e->key);
            if (had && !(hn_journal_worker_ended(had) && !hn_journal_worker_ended(e))) {
                dups++;
                continue;
            }
            if (hn_journal_append(out, e, &err) != 0) {
                fprintf(stderr, "harness merge: %s\n", err.msg);
                rc = 2;
            }
            kept += !had;
        }
        hn_journal_close(j);
    }
    hn_journal_close(out);
    if (rc == 0 && rename(tmp, m->out) != 0) {
        fprintf(stderr, "harness merge: cannot replace %s: %s\n", m->out, strerror(errno));
        rc = 2;
    }
    if (rc != 0) unlink(tmp);
    free(tmp);
    if (rc != 0) return rc;
    int missing = missing_shards(m);
    write_merged_meta(m, !missing);
    printf("merged %d journal%s of %d shards: %d evaluations into %s", m->n, m->n == 1 ? "" : "s",
           m->metas[0].shard_count, kept, m->out);
    if (dups) printf(" (%d given more than once, kept once)", dups);
    printf("\n");
    return missing ? 1 : 0;
}

int hn_cmd_merge(const hn_cli *cli) {
    merge_ctx m = {.cli = cli, .out = cli->config, .n = cli->n_inputs, .paths = cli->inputs};
    int journal = ends_with(m.out, ".journal");
    if (!journal && !ends_with(m.out, ".csv")) {
        fprintf(stderr, "harness merge: %s: the output is a .csv (the shards of a run) or a .journal (of a tune)\n",
                m.out);
        return 2;
    }
    /* the same file under another spelling (./s0.csv for s0.csv) too: the
     * merge would replace that shard and its sidecar */
    struct stat so, si;
    int out_exists = stat(m.out, &so) == 0;
    for (int i = 0; i < m.n; i++)
        if (strcmp(m.paths[i], m.out) == 0 ||
            (out_exists && stat(m.paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)) {
            fprintf(stderr, "harness merge: %s is both the output and a shard (%s)\n", m.out, m.paths[i]);
            return 2;
        }
    /* one file given twice (under any spelling) is read once: its rows would
     * otherwise each be reported as given twice (load_metas says the shard
     * is given more than once) */
    int *dup_of = xcalloc((size_t)m.n + 1, sizeof *dup_of);
    for (int i = 0; i < m.n; i++) {
        dup_of[i] = -1;
        for (int j = 0; j < i && dup_of[i] < 0; j++) {
            struct stat sa, sb;
            if (dup_of[j] < 0 && (strcmp(m.paths[j], m.paths[i]) == 0 ||
                                  (stat(m.paths[j], &sa) == 0 && stat(m.paths[i], &sb) == 0 &&
                                   sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)))
                dup_of[i] = j;
        }
    }
    m.dup_of = dup_of;
    m.metas = xcalloc((size_t)m.n, sizeof *m.metas);
    int rc = load_metas(&m, journal ? "tune" : "run");
    if (rc == 0) {
        /* the output's folder is made, as run --out's is */
        char *dir = hn_dirname(m.out);
        hn_err err;
        if (hn_mkdirs(dir, &err) != 0) {
            fprintf(stderr, "harness merge: %s\n", err.msg);
            rc = 2;
        }
        free(dir);
    }
    if (rc == 0) rc = journal ? merge_journals(&m) : merge_rows(&m);
    for (int i = 0; i < m.n; i++) hn_meta_free(&m.metas[i]);
    free(m.metas);
    free(m.given);
    free(dup_of);
    return rc;
}
