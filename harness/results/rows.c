/* rows.c: results rows located in a plan (see rows.h). */
#define _GNU_SOURCE
#include "rows.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/runner.h"
#include "tuned.h"

int hn_rows_locate(const hn_plan *p, const hn_table *t, int i, int64_t *c_out, int *slot_out) {
    char *end;
    const char *cs = hn_table_get(t, i, "case");
    long long c = strtoll(cs, &end, 10);
    if (!*cs || *end || c < 0 || c >= p->n_cases) return -1;
    for (int a = 0; a < p->n_axes; a++) {
        char buf[64];
        hn_value_format(&p->cases[c].values[a], buf, sizeof buf);
        if (strcmp(hn_table_get(t, i, p->axes[a].name), buf) != 0) return -1;
    }
    const char *vname = hn_table_get(t, i, "variant");
    int n_slots = p->n_variants + p->op->n_baselines;
    for (int s = 0; s < n_slots; s++)
        /* a --tuned variant's instances share its name: the one that runs c */
        if (strcmp(hn_run_slot_name(p, s), vname) == 0 && (s >= p->n_variants || hn_tuned_runs(p, s, c))) {
            *c_out = c;
            *slot_out = s;
            return 0;
        }
    return -1;
}

int hn_rows_status(const hn_table *t, int i) {
    const char *st = hn_table_get(t, i, "status");
    for (int k = 0; k < HN_ST_COUNT; k++)
        if (strcmp(st, hn_status_names[k]) == 0) return k;
    return -1;
}

typedef struct {
    int row;
    int64_t key;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

int hn_rows_write_sorted(const char *path, const hn_plan *p, const hn_table *t, const int *rows, const int64_t *cases,
                         const int *slots, int n, hn_err *err) {
    int nv = p->n_variants, nb = p->op->n_baselines;
    keyed *k = xcalloc((size_t)n + 1, sizeof *k);
    for (int i = 0; i < n; i++) {
        int order = slots[i] >= nv ? slots[i] - nv : nb + slots[i]; /* baselines first, as a worker writes them */
        k[i] = (keyed){rows[i], cases[i] < 0 ? INT64_MAX : cases[i] * (nv + nb) + order};
    }
    qsort(k, (size_t)n, sizeof *k, by_key);
    char *tmp = xasprintf("%s.sort.tmp", path);
    hn_csv *w = NULL;
    int rc = hn_csv_open(tmp, (const char *const *)t->header, t->n_cols, &w, err);
    for (int i = 0; rc == 0 && i < n; i++) {
        for (int c = 0; c < t->n_cols; c++) hn_csv_set(w, c, t->rows[k[i].row][c]);
        rc = hn_csv_write_row(w, err);
    }
    hn_csv_close(w);
    if (rc == 0 && rename(tmp, path) != 0) rc = hn_errf(err, "cannot replace %s: %s", path, strerror(errno));
    if (rc != 0) unlink(tmp);
    free(tmp);
    free(k);
    return rc;
}

int hn_rows_sort_file(const char *path, const hn_plan *p, hn_err *err) {
    hn_table t;
    if (hn_table_load(path, &t, err) != 0) return -1;
    int *rows = xcalloc((size_t)t.n_rows + 1, sizeof *rows), *slots = xcalloc((size_t)t.n_rows + 1, sizeof *slots);
    int64_t *cases = xcalloc((size_t)t.n_rows + 1, sizeof *cases);
    for (int i = 0; i < t.n_rows; i++) {
        rows[i] = i;
        if (hn_rows_locate(p, &t, i, &cases[i], &slots[i]) != 0) cases[i] = -1, slots[i] = 0;
    }
    int rc = hn_rows_write_sorted(path, p, &t, rows, cases, slots, t.n_rows, err);
    free(rows), free(slots), free(cases);
    hn_table_free(&t);
    return rc;
}
