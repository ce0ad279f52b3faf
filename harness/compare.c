/*
 * compare.c: `harness compare RESULTS.csv --by COLUMN [--baseline VALUE]`
 * (see compare.h for the grouping rules and docs/plots.md for the output).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "compare.h"

/* Roles of the columns that say what was run. */
enum { K_NONE, K_CASE, K_AXIS, K_LABEL, K_VARIANT, K_KERNEL, K_DEFINE, K_PLACE, K_RUN };

typedef struct {
    int n_cols;
    int *role;      /* [n_cols] K_* */
    int *in_key;    /* [n_cols] */
    int c_case, c_label, c_variant, c_kernel, c_status, c_med, c_reason;
    int c_abs, c_rel, c_match;
} layout;

static void layout_free(layout *l) {
    free(l->role);
    free(l->in_key);
}

/* Finds the columns by name and the axes and defines by position: axes lie
 * between case and label, defines between kernel and backend. */
static int layout_build(layout *l, const hn_table *t, const char *by, int *by_col, hn_err *err) {
    memset(l, 0, sizeof *l);
    static const char *const NEED[] = {"case", "label", "variant", "kernel", "backend", "status", "time_median_ms"};
    for (size_t i = 0; i < HN_ARRAY_LEN(NEED); i++)
        if (hn_table_col(t, NEED[i]) < 0) return hn_errf(err, "not a results file: it has no '%s' column", NEED[i]);
    l->n_cols = t->n_cols;
    l->role = xcalloc((size_t)t->n_cols, sizeof *l->role);
    l->in_key = xcalloc((size_t)t->n_cols, sizeof *l->in_key);
    l->c_case = hn_table_col(t, "case");
    l->c_label = hn_table_col(t, "label");
    l->c_variant = hn_table_col(t, "variant");
    l->c_kernel = hn_table_col(t, "kernel");
    l->c_status = hn_table_col(t, "status");
    l->c_med = hn_table_col(t, "time_median_ms");
    l->c_reason = hn_table_col(t, "reason");
    l->c_abs = hn_table_col(t, "max_abs_err");
    l->c_rel = hn_table_col(t, "max_rel_err");
    l->c_match = hn_table_col(t, "match_fraction");
    int c_backend = hn_table_col(t, "backend");
    l->role[l->c_case] = K_CASE;
    for (int i = l->c_case + 1; i < l->c_label; i++) l->role[i] = K_AXIS;
    l->role[l->c_label] = K_LABEL;
    l->role[l->c_variant] = K_VARIANT;
    l->role[l->c_kernel] = K_KERNEL;
    for (int i = l->c_kernel + 1; i < c_backend; i++) l->role[i] = K_DEFINE;
    static const char *const PLACE[] = {"backend", "device", "arch"};
    for (size_t i = 0; i < HN_ARRAY_LEN(PLACE); i++) {
        int c = hn_table_col(t, PLACE[i]);
        if (c >= 0) l->role[c] = K_PLACE;
    }

    /* the file a row came from, when several runs are compared */
    int c_run = hn_table_col(t, HN_COMPARE_RUN_COL);
    if (c_run >= 0) l->role[c_run] = K_RUN;

    int bc = hn_table_col(t, by);
    if (bc < 0 || l->role[bc] == K_NONE || l->role[bc] == K_CASE || l->role[bc] == K_LABEL) {
        hn_sb names;
        hn_sb_init(&names);
        for (int i = 0; i < t->n_cols; i++)
            if (l->role[i] != K_NONE && l->role[i] != K_CASE && l->role[i] != K_LABEL)
                hn_sb_addf(&names, "%s%s", names.len ? ", " : "", t->header[i]);
        if (bc < 0) hn_errf(err, "--by %s: no such column (compare by one of: %s)", by, names.buf);
        else if (l->c_label < l->c_case || c_backend < l->c_kernel)
            /* a file whose columns were reordered by hand: the positions that
             * make a column an axis or a define are lost */
            hn_errf(err,
                    "--by %s: the columns are not in the order harness run writes them (axes between case and "
                    "label, defines between kernel and backend), which is how compare tells axes and defines "
                    "from other columns; put them back in that order (compare by one of: %s)",
                    by, names.buf);
        else hn_errf(err, "--by %s: not a column that says what was run (compare by one of: %s)", by, names.buf);
        hn_sb_free(&names);
        layout_free(l);
        return -1;
    }
    *by_col = bc;
    for (int i = 0; i < t->n_cols; i++) l->in_key[i] = l->role[i] != K_NONE;
    l->in_key[bc] = 0;
    switch (l->role[bc]) {
    case K_VARIANT:
        for (int i = 0; i < t->n_cols; i++)
            if (l->role[i] == K_KERNEL || l->role[i] == K_DEFINE) l->in_key[i] = 0;
        break;
    case K_KERNEL:
    case K_DEFINE: l->in_key[l->c_variant] = 0; break;
    case K_AXIS: l->in_key[l->c_case] = l->in_key[l->c_label] = 0; break;
    case K_PLACE:
        for (int i = 0; i < t->n_cols; i++)
            if (l->role[i] == K_PLACE) l->in_key[i] = 0;
        break;
    }
    return 0;
}

static double num(const hn_table *t, int row, int col) {
    return row >= 0 && col >= 0 ? hn_plot_num(t->rows[row][col]) : NAN;
}

static int row_has_time(const hn_table *t, const layout *l, int r) {
    const char *st = t->rows[r][l->c_status];
    return (strcmp(st, "ok") == 0 || strcmp(st, "mismatch") == 0) && isfinite(num(t, r, l->c_med));
}

static int row_is_ok(const hn_table *t, const layout *l, int r) {
    return strcmp(t->rows[r][l->c_status], "ok") == 0 && row_has_time(t, l, r);
}

/* The key of row r: the key columns' fields joined by a unit separator. */
static char *row_key(const hn_table *t, const layout *l, int r) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < l->n_cols; i++)
        if (l->in_key[i]) {
            hn_sb_adds(&sb, t->rows[r][i]);
            hn_sb_addc(&sb, '\x1f');
        }
    return hn_sb_detach(&sb);
}

/* A chart label: the case's label and the values of the group's other key
 * columns without their names ("conv2d_pad 16", not "kernel=conv2d_pad
 * TILE_SIZE=16"), at most 44 characters (cut in the middle), so 100 labels
 * still leave room for bars. */
static char *chart_label(const char *label, const char *extra) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, label);
    hn_sb_adds(&sb, " [");
    int first = 1;
    for (const char *p = extra; *p;) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        const char *v = eq ? eq + 1 : p;
        if (!first) hn_sb_addc(&sb, ' ');
        hn_sb_add(&sb, v, len - (size_t)(v - p));
        first = 0;
        p += len;
        while (*p == ' ') p++;
    }
    hn_sb_addc(&sb, ']');
    if (sb.len > 44) {
        /* cut in the middle: the end holds the kernel and defines that tell
         * the groups of one case apart */
        char *cut = xasprintf("%.20s...%s", sb.buf, sb.buf + sb.len - 21);
        hn_sb_free(&sb);
        return cut;
    }
    return hn_sb_detach(&sb);
}

/* Title, extra and chart label of a group, from its first row. */
static void describe_group(hn_compare_group *g, const hn_table *t, const layout *l, int r) {
    char **row = t->rows[r];
    hn_sb title, extra;
    hn_sb_init(&title);
    hn_sb_init(&extra);
    if (l->in_key[l->c_case]) {
        hn_sb_addf(&title, "case %s: %s", row[l->c_case], row[l->c_label]);
        g->label = xstrdup(*row[l->c_label] ? row[l->c_label] : row[l->c_case]);
    } else {
        for (int i = 0; i < l->n_cols; i++)
            if (l->in_key[i] && l->role[i] == K_AXIS)
                hn_sb_addf(&title, "%s%s=%s", title.len ? " " : "", t->header[i], row[i]);
        g->label = xstrdup(title.buf);
    }
    g->case_id = xstrdup(l->in_key[l->c_case] ? row[l->c_case] : "-");
    /* The variant names its kernel and defines: show it alone when it is in the key. */
    int by_variant = l->in_key[l->c_variant];
    for (int i = 0; i < l->n_cols; i++) {
        if (!l->in_key[i] || !*row[i]) continue;
        int role = l->role[i];
        if (role == K_VARIANT || (!by_variant && (role == K_KERNEL || role == K_DEFINE)))
            hn_sb_addf(&extra, "%s%s=%s", extra.len ? " " : "", t->header[i], row[i]);
    }
    g->title = hn_sb_detach(&title);
    g->extra = hn_sb_detach(&extra);
}

double hn_compare_geomean(const double *x, int n) {
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]) && x[i] > 0) {
            s += log(x[i]);
            k++;
        }
    return k ? exp(s / k) : NAN;
}

typedef struct {
    char *key;
    int *rows;
    int first_row;
} raw_group;

int hn_compare_build(hn_compare *c, const hn_table *t, const char *by, const char *baseline, hn_err *err) {
    memset(c, 0, sizeof *c);
    c->single_example = -1;
    c->novalue_example = -1;
    layout l;
    int bc = -1;
    if (layout_build(&l, t, by, &bc, err) != 0) return -1;
    c->t = t;
    c->by = xstrdup(by);
    c->by_col = bc;

    /* Values in file order. */
    for (int r = 0; r < t->n_rows; r++) {
        const char *v = t->rows[r][bc];
        if (!*v) {
            if (c->novalue_example < 0) c->novalue_example = r;
            c->n_novalue++;
            continue;
        }
        int known = 0;
        for (int i = 0; i < c->n_values && !known; i++) known = strcmp(c->values[i].name, v) == 0;
        if (known) continue;
        c->values = xrealloc(c->values, ((size_t)c->n_values + 1) * sizeof *c->values);
        c->values[c->n_values++] = (hn_compare_value){.name = xstrdup(v)};
    }
    if (t->n_rows == 0) {
        hn_errf(err, "no rows (a header only): nothing to compare");
        goto fail;
    }
    if (c->n_values == 0) {
        hn_errf(err, "--by %s: the column is empty in every row", by);
        goto fail;
    }
    c->baseline = 0;
    if (baseline) {
        c->baseline = -1;
        for (int i = 0; i < c->n_values; i++)
            if (strcmp(c->values[i].name, baseline) == 0) c->baseline = i;
        if (c->baseline < 0) {
            hn_sb names;
            hn_sb_init(&names);
            for (int i = 0; i < c->n_values; i++) hn_sb_addf(&names, "%s%s", i ? ", " : "", c->values[i].name);
            hn_errf(err, "--baseline %s: not a value of %s (its values: %s)", baseline, by, names.buf);
            hn_sb_free(&names);
            goto fail;
        }
    }

    /* Groups in file order. */
    raw_group *raw = NULL;
    int n_raw = 0, hint = -1;
    int nv = c->n_values;
    for (int r = 0; r < t->n_rows; r++) {
        const char *val = t->rows[r][bc];
        if (!*val) continue;
        int v = 0;
        while (strcmp(c->values[v].name, val) != 0) v++;
        char *key = row_key(t, &l, r);
        int g = -1;
        if (hint >= 0 && strcmp(raw[hint].key, key) == 0) g = hint;
        for (int i = 0; i < n_raw && g < 0; i++)
            if (strcmp(raw[i].key, key) == 0) g = i;
        if (g < 0) {
            raw = xrealloc(raw, ((size_t)n_raw + 1) * sizeof *raw);
            raw[n_raw].key = key;
            raw[n_raw].rows = xmalloc((size_t)nv * sizeof(int));
            for (int i = 0; i < nv; i++) raw[n_raw].rows[i] = -1;
            raw[n_raw].first_row = r;
            g = n_raw++;
        } else {
            free(key);
        }
        hint = g;
        if (raw[g].rows[v] >= 0) c->n_duplicates++;
        else raw[g].rows[v] = r;
    }

    /* Keep the groups with two values or more. */
    int distinct_cases = 1;
    c->groups = xcalloc((size_t)n_raw + 1, sizeof *c->groups);
    for (int i = 0; i < n_raw; i++) {
        int present = 0;
        for (int v = 0; v < nv; v++) present += raw[i].rows[v] >= 0;
        if (present < 2) {
            c->n_single++;
            if (c->single_example < 0) c->single_example = raw[i].first_row;
            free(raw[i].rows);
            free(raw[i].key);
            continue;
        }
        hn_compare_group *g = &c->groups[c->n_groups++];
        g->rows = raw[i].rows;
        g->first_row = raw[i].first_row;
        g->n_present = present;
        describe_group(g, t, &l, g->first_row);
        free(raw[i].key);
        for (int j = 0; j < c->n_groups - 1 && distinct_cases; j++)
            distinct_cases = strcmp(c->groups[j].case_id, g->case_id) != 0;
    }
    free(raw);
    c->unit = l.in_key[l.c_case] && distinct_cases ? "case" : "group";

    /* Keep the values that take part in a comparison; the default baseline is
     * the first of them. */
    if (c->n_groups > 0) {
        int *map = xmalloc((size_t)nv * sizeof *map);
        int kept = 0;
        for (int v = 0; v < nv; v++) {
            int used = 0;
            for (int g = 0; g < c->n_groups && !used; g++) used = c->groups[g].rows[v] >= 0;
            map[v] = used ? kept : -1;
            if (used) c->values[kept++] = c->values[v];
            else free(c->values[v].name);
        }
        for (int g = 0; g < c->n_groups; g++) {
            int *rows = c->groups[g].rows;
            for (int v = 0; v < nv; v++)
                if (map[v] >= 0) rows[map[v]] = rows[v];
        }
        int b = baseline ? map[c->baseline] : 0;
        free(map);
        c->n_values = nv = kept;
        if (b < 0) {
            hn_errf(err, "--baseline %s: none of its rows has a partner with another %s value", baseline, by);
            goto fail;
        }
        c->baseline = b;
    }

    /* Excluded rows and the per-value summary. */
    double *ratios = xmalloc(((size_t)c->n_groups + 1) * sizeof *ratios);
    for (int v = 0; v < nv; v++) {
        hn_compare_value *val = &c->values[v];
        int n = 0;
        val->worst_abs_err = val->worst_rel_err = val->min_match = NAN;
        for (int g = 0; g < c->n_groups; g++) {
            int r = c->groups[g].rows[v];
            if (r < 0) continue;
            if (!row_has_time(t, &l, r)) continue;
            val->n_timed++;
            val->n_mismatch += strcmp(t->rows[r][l.c_status], "mismatch") == 0;
            double a = num(t, r, l.c_abs), e = num(t, r, l.c_rel), m = num(t, r, l.c_match);
            if (isfinite(a) && !(a <= val->worst_abs_err)) val->worst_abs_err = a;
            if (isfinite(e) && !(e <= val->worst_rel_err)) val->worst_rel_err = e;
            if (isfinite(m) && !(m >= val->min_match)) val->min_match = m;
            double ratio = hn_compare_ratio(c, g, v);
            if (isfinite(ratio)) ratios[n++] = ratio;
        }
        val->n_ratio = n;
        val->geomean_ratio = hn_compare_geomean(ratios, n);
    }
    free(ratios);
    for (int g = 0; g < c->n_groups; g++) {
        int best = -1;
        for (int v = 0; v < nv; v++) {
            int r = c->groups[g].rows[v];
            if (r < 0) continue;
            if (!row_is_ok(t, &l, r)) {
                const char *st = t->rows[r][l.c_status];
                if (strcmp(st, "ok") != 0 && strcmp(st, "mismatch") != 0) {
                    c->excluded = xrealloc(c->excluded, ((size_t)c->n_excluded + 1) * sizeof *c->excluded);
                    c->excluded_group =
                        xrealloc(c->excluded_group, ((size_t)c->n_excluded + 1) * sizeof *c->excluded_group);
                    c->excluded_group[c->n_excluded] = g;
                    c->excluded[c->n_excluded++] = r;
                }
                continue;
            }
            if (best < 0 || num(t, r, l.c_med) < hn_compare_time(c, g, best)) best = v;
        }
        if (best >= 0) c->values[best].n_fastest++;
    }
    layout_free(&l);
    return 0;
fail:
    layout_free(&l);
    hn_compare_free(c);
    return -1;
}

void hn_compare_free(hn_compare *c) {
    if (!c) return;
    for (int i = 0; i < c->n_values; i++) free(c->values[i].name);
    free(c->values);
    for (int g = 0; g < c->n_groups; g++) {
        free(c->groups[g].rows);
        free(c->groups[g].title);
        free(c->groups[g].extra);
        free(c->groups[g].label);
        free(c->groups[g].case_id);
    }
    free(c->groups);
    free(c->excluded);
    free(c->excluded_group);
    free(c->by);
    memset(c, 0, sizeof *c);
}

double hn_compare_time(const hn_compare *c, int g, int v) {
    int r = c->groups[g].rows[v];
    if (r < 0) return NAN;
    const char *st = hn_table_get(c->t, r, "status");
    if (strcmp(st, "ok") != 0 && strcmp(st, "mismatch") != 0) return NAN;
    double ms = hn_plot_num(hn_table_get(c->t, r, "time_median_ms"));
    return ms > 0 ? ms : NAN;
}

double hn_compare_ratio(const hn_compare *c, int g, int v) {
    return hn_compare_time(c, g, v) / hn_compare_time(c, g, c->baseline);
}

/* ---------------------------------------------------------------------- */
/* output */

/* The number of values with a time in group g. */
static int group_timed(const hn_compare *c, int g) {
    int n = 0;
    for (int v = 0; v < c->n_values; v++) n += isfinite(hn_compare_time(c, g, v));
    return n;
}

/* Excluded rows listed one by one; the rest are counted. */
#define MAX_LISTED 10

static void add_err(hn_sb *sb, double x) {
    if (isfinite(x)) hn_sb_addf(sb, "%.1e", x);
    else hn_sb_adds(sb, "n/a");
}

void hn_compare_verdict(const hn_compare *c, int v, hn_sb *out) {
    const hn_compare_value *val = &c->values[v], *base = &c->values[c->baseline];
    hn_sb_addf(out, "%s: ", val->name);
    double gm = val->geomean_ratio;
    if (val->n_ratio == 0) {
        hn_sb_addf(out, "no %s where both %s and %s have a time", c->unit, val->name, base->name);
        return;
    }
    if (fabs(log(gm)) < 0.005) hn_sb_addf(out, "as fast as %s", base->name);
    else if (gm > 1) hn_sb_addf(out, "%.2fx slower than %s", gm, base->name);
    else hn_sb_addf(out, "%.2fx faster than %s", 1.0 / gm, base->name);
    hn_sb_addf(out, " (geometric mean over %d %s%s), max abs error ", val->n_ratio, c->unit,
               val->n_ratio == 1 ? "" : "s");
    add_err(out, val->worst_abs_err);
    hn_sb_adds(out, " vs ");
    add_err(out, base->worst_abs_err);
    if (val->n_mismatch || base->n_mismatch)
        hn_sb_addf(out, "; mismatches: %d vs %d", val->n_mismatch, base->n_mismatch);
}

static void fmt_num(char *buf, size_t size, const char *fmt, double x) {
    if (isfinite(x)) snprintf(buf, size, fmt, x);
    else snprintf(buf, size, "-");
}

void hn_compare_print(const hn_compare *c, const char *name, FILE *f) {
    const hn_table *t = c->t;
    const char *base = c->values[c->baseline].name;
    int w = (int)strlen(c->by);
    for (int v = 0; v < c->n_values; v++)
        if ((int)strlen(c->values[v].name) > w) w = (int)strlen(c->values[v].name);
    if (w > 60) w = 60;

    char *ctx = hn_plot_context(hn_table_get(t, 0, "device"), hn_table_get(t, 0, "backend"),
                                hn_table_get(t, 0, "arch"), hn_table_get(t, 0, "timing"));
    fprintf(f, "compare %s by %s (baseline %s): %d %s%s\n%s\n", name, c->by, base, c->n_groups, c->unit,
            c->n_groups == 1 ? "" : "s", ctx);
    free(ctx);
    fprintf(f, "ratio = median time / %s's median time in the same %s (> 1: slower); "
               "errors are against the fp64 reference\n",
            base, c->unit);
    int n_untimed = 0;
    for (int g = 0; g < c->n_groups; g++) {
        const hn_compare_group *gr = &c->groups[g];
        if (!group_timed(c, g)) {
            n_untimed++;
            continue;
        }
        if (c->brief) continue;
        fprintf(f, "\n%s", gr->title);
        if (*gr->extra) fprintf(f, "  [%s]", gr->extra);
        fprintf(f, "\n  %-*s  %-13s %10s %9s %12s %12s %15s\n", w, c->by, "status", "median_ms", "ratio",
                "max_abs_err", "max_rel_err", "match_fraction");
        for (int v = 0; v < c->n_values; v++) {
            int r = gr->rows[v];
            if (r < 0) continue;
            char ms[32], ratio[32], ae[32], re[32], mf[32];
            double tm = hn_compare_time(c, g, v);
            fmt_num(ms, sizeof ms, "%.4g", tm);
            double rt = hn_compare_ratio(c, g, v);
            if (isfinite(rt)) snprintf(ratio, sizeof ratio, "%.3fx", rt);
            else snprintf(ratio, sizeof ratio, "-");
            int timed = isfinite(tm);
            fmt_num(ae, sizeof ae, "%.3g", timed ? hn_plot_num(hn_table_get(t, r, "max_abs_err")) : NAN);
            fmt_num(re, sizeof re, "%.3g", timed ? hn_plot_num(hn_table_get(t, r, "max_rel_err")) : NAN);
            fmt_num(mf, sizeof mf, "%.6f", timed ? hn_plot_num(hn_table_get(t, r, "match_fraction")) : NAN);
            fprintf(f, "  %-*s  %-13s %10s %9s %12s %12s %15s\n", w, c->values[v].name,
                    hn_table_get(t, r, "status"), ms, ratio, ae, re, mf);
        }
    }

    if (n_untimed && !c->brief)
        fprintf(f, "\n(%d %s%s where no row has a time not shown: their rows are listed as excluded)\n", n_untimed,
                c->unit, n_untimed == 1 ? "" : "s");

    fprintf(f, "\nsummary over %d %s%s", c->n_groups, c->unit, c->n_groups == 1 ? "" : "s");
    if (n_untimed) fprintf(f, ", %d with a time", c->n_groups - n_untimed);
    fprintf(f, " (geomean_ratio over the %ss where both have a time; fastest among ok rows)\n", c->unit);
    fprintf(f, "  %-*s %6s %14s %8s %14s %14s %10s %11s\n", w, c->by, "timed", "geomean_ratio", "fastest",
            "worst_abs_err", "worst_rel_err", "min_match", "mismatches");
    for (int v = 0; v < c->n_values; v++) {
        const hn_compare_value *val = &c->values[v];
        char gm[32], ae[32], re[32], mm[32];
        if (isfinite(val->geomean_ratio)) snprintf(gm, sizeof gm, "%.3fx", val->geomean_ratio);
        else snprintf(gm, sizeof gm, "-");
        fmt_num(ae, sizeof ae, "%.3g", val->worst_abs_err);
        fmt_num(re, sizeof re, "%.3g", val->worst_rel_err);
        fmt_num(mm, sizeof mm, "%.6f", val->min_match);
        fprintf(f, "  %-*s %6d %14s %8d %14s %14s %10s %11d\n", w, val->name, val->n_timed, gm, val->n_fastest, ae,
                re, mm, val->n_mismatch);
    }

    if (c->n_excluded) {
        fprintf(f, "\nexcluded (status neither ok nor mismatch): %d row%s\n", c->n_excluded,
                c->n_excluded == 1 ? "" : "s");
        for (int i = 0; i < c->n_excluded && i < (c->brief ? 0 : MAX_LISTED); i++) {
            int r = c->excluded[i];
            const char *reason = hn_table_get(t, r, "reason");
            /* the rest of the group, as in its table's bracket: without it,
             * the rows of the kernels of one case read as one row repeated */
            const char *extra = c->groups[c->excluded_group[i]].extra;
            fprintf(f, "  case %s (%s)%s%s%s %s: %s%s%s\n", hn_table_get(t, r, "case"), hn_table_get(t, r, "label"),
                    *extra ? " [" : "", extra, *extra ? "]" : "", t->rows[r][c->by_col], hn_table_get(t, r, "status"),
                    *reason ? ": " : "", reason);
        }
        if (c->brief) {
            /* counts per status only */
            fprintf(f, " ");
            for (int i = 0; i < c->n_excluded; i++) {
                const char *st = hn_table_get(t, c->excluded[i], "status");
                int seen = 0, n = 0;
                for (int j = 0; j < c->n_excluded; j++) {
                    int same = strcmp(hn_table_get(t, c->excluded[j], "status"), st) == 0;
                    if (j < i) seen |= same;
                    n += same;
                }
                if (!seen) fprintf(f, " %d %s", n, st);
            }
            fprintf(f, " (the CSV's reason column)\n");
        } else if (c->n_excluded > MAX_LISTED) {
            /* The rest as counts per status, in order of first appearance. */
            fprintf(f, "  ... and %d more:", c->n_excluded - MAX_LISTED);
            for (int i = MAX_LISTED; i < c->n_excluded; i++) {
                const char *st = hn_table_get(t, c->excluded[i], "status");
                int seen = 0, n = 0;
                for (int j = MAX_LISTED; j < c->n_excluded; j++) {
                    int same = strcmp(hn_table_get(t, c->excluded[j], "status"), st) == 0;
                    if (j < i) seen |= same;
                    n += same;
                }
                if (!seen) fprintf(f, " %d %s", n, st);
            }
            fprintf(f, " (the CSV's reason column)\n");
        }
    }
    /* ok or mismatch rows with no usable time: shown as '-', said here */
    int n_notime = 0, notime_example = -1;
    for (int g = 0; g < c->n_groups; g++)
        for (int v = 0; v < c->n_values; v++) {
            int r = c->groups[g].rows[v];
            if (r < 0) continue;
            const char *st = hn_table_get(t, r, "status");
            if ((strcmp(st, "ok") == 0 || strcmp(st, "mismatch") == 0) && !isfinite(hn_compare_time(c, g, v))) {
                n_notime++;
                if (notime_example < 0) notime_example = r;
            }
        }
    if (n_notime) {
        const char *ms = hn_table_get(t, notime_example, "time_median_ms");
        fprintf(f, "\nno time: %d ok or mismatch row%s without a median time above 0 (e.g. case %s %s: "
                   "time_median_ms %s%s%s); they count in no ratio\n",
                n_notime, n_notime == 1 ? "" : "s", hn_table_get(t, notime_example, "case"),
                t->rows[notime_example][c->by_col], *ms ? "'" : "empty", ms, *ms ? "'" : "");
    }
    if (c->n_single) {
        int r = c->single_example;
        fprintf(f, "\nnot compared: %d group%s with a single %s value (e.g. case %s, variant %s)\n", c->n_single,
                c->n_single == 1 ? "" : "s", c->by, hn_table_get(t, r, "case"), hn_table_get(t, r, "variant"));
    }
    if (c->n_novalue)
        fprintf(f, "not compared: %d row%s with no %s (e.g. %s)\n", c->n_novalue, c->n_novalue == 1 ? "" : "s", c->by,
                hn_table_get(t, c->novalue_example, "variant"));
    if (c->n_duplicates)
        fprintf(f, "ignored: %d row%s repeating a (%s, %s) pair seen before\n", c->n_duplicates,
                c->n_duplicates == 1 ? "" : "s", c->unit, c->by);

    fprintf(f, "\n");
    hn_sb sb;
    hn_sb_init(&sb);
    for (int v = 0; v < c->n_values; v++) {
        if (v == c->baseline) continue;
        hn_sb_reset(&sb);
        hn_compare_verdict(c, v, &sb);
        fprintf(f, "verdict: %s\n", sb.buf);
    }
    hn_sb_free(&sb);
}

/* ---------------------------------------------------------------------- */
/* chart */

typedef struct {
    double key;
    int idx;
} order_item;

static int cmp_order(const void *pa, const void *pb) {
    const order_item *a = pa, *b = pb;
    int na = isnan(a->key), nb = isnan(b->key);
    if (na != nb) return na - nb;
    if (!na && a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

void hn_compare_chart(const hn_compare *c, const char *name, hn_plot_bars *b) {
    const hn_table *t = c->t;
    const char **names = xmalloc((size_t)c->n_values * sizeof *names);
    for (int v = 0; v < c->n_values; v++) names[v] = c->values[v].name;
    hn_plot_bars_init(b, names, c->n_values);
    free(names);
    for (int v = 0, k = 1; v < c->n_values; v++) b->color[v] = v == c->baseline ? 0 : k++;
    const char *base = c->values[c->baseline].name;
    b->title = xasprintf("%s compared by %s (baseline %s)", name, c->by, c->values[c->baseline].name);
    char *ctx = hn_plot_context(hn_table_get(t, 0, "device"), hn_table_get(t, 0, "backend"),
                                hn_table_get(t, 0, "arch"), hn_table_get(t, 0, "timing"));
    b->subtitle = ctx;
    b->note = xasprintf("%ss ordered by %s's median time; errors against the fp64 reference", c->unit, base);
    b->xlabel = xstrdup(c->unit[0] == 'c' ? "Case" : "Group");
    b->height = 1800;
    /* Many groups: widen the chart so bars stay readable (about 14 px a group). */
    if (c->n_groups > 100) b->width = 200 + 14 * c->n_groups;
    /* Long labels under each of three panels: give the bars room too. */
    if (c->n_groups > 40) b->height = 2600;

    /* The groups with a time, by the baseline's time. */
    order_item *order = xmalloc(((size_t)c->n_groups + 1) * sizeof *order);
    int n = 0;
    for (int g = 0; g < c->n_groups; g++)
        if (group_timed(c, g)) order[n++] = (order_item){hn_compare_time(c, g, c->baseline), g};
    qsort(order, (size_t)n, sizeof *order, cmp_order);

    static const char *const ERR_COLS[2] = {"max_abs_err", "max_rel_err"};
    char *title = xasprintf("Time ratio: median time / %s's (> 1: slower than %s)", base, base);
    char *ylabel = xasprintf("Time / %s's time (x, log scale)", base);
    hn_plot_panel *panels[3];
    panels[0] = hn_plot_bars_panel(b, title, ylabel, n);
    panels[0]->hline = 1.0;
    panels[0]->hline_title = xasprintf("1x = %s", base);
    free(title);
    free(ylabel);
    panels[1] = hn_plot_bars_panel(b, "Largest absolute error against the fp64 reference (max_abs_err)",
                                   "max_abs_err (log scale)", n);
    panels[2] = hn_plot_bars_panel(b, "Largest relative error against the fp64 reference (max_rel_err)",
                                   "max_rel_err (log scale)", n);
    for (int p = 0; p < 3; p++) panels[p]->log_y = 1;
    for (int i = 0; i < n; i++) {
        int g = order[i].idx;
        const hn_compare_group *gr = &c->groups[g];
        int multi = 0; /* another group of the same case: tell them apart */
        for (int j = 0; j < c->n_groups; j++) multi |= j != g && strcmp(c->groups[j].case_id, gr->case_id) == 0;
        char *label = multi && *gr->extra ? chart_label(gr->label, gr->extra) : xstrdup(gr->label);
        for (int p = 0; p < 3; p++) hn_plot_panel_set_case(panels[p], i, gr->case_id, label);
        free(label);
        for (int v = 0; v < c->n_values; v++) {
            int r = gr->rows[v];
            size_t k = (size_t)i * c->n_values + v;
            double tm = hn_compare_time(c, g, v);
            hn_plot_mark m = r < 0 ? HN_MARK_NONE : hn_plot_mark_of(hn_table_get(t, r, "status"), isfinite(tm));
            for (int p = 0; p < 3; p++) panels[p]->mark[k] = m;
            panels[0]->value[k] = hn_compare_ratio(c, g, v);
            if (!isfinite(tm)) continue;
            for (int p = 1; p < 3; p++) panels[p]->value[k] = hn_plot_num(hn_table_get(t, r, ERR_COLS[p - 1]));
        }
    }
    free(order);
}

/* ---------------------------------------------------------------------- */
/* the command */

/* A column name made safe for a file name. */
static char *safe_name(const char *s) {
    char *out = xstrdup(s);
    for (char *p = out; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            *p = '_';
    return out;
}

/* Several results files, runs of one config, as one table with a column
 * "run" that names each row's file (its stem; the path where stems repeat;
 * "#2" added where a file is given twice). The columns that say what was run
 * (those before status) must be the same in every file; the others are taken
 * by name. 0, or -1 with err (exit 2). */
static int join_runs(const char *const *paths, int n, hn_table *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    hn_table *tabs = xcalloc((size_t)n, sizeof *tabs);
    char **names = xcalloc((size_t)n, sizeof *names);
    int rc = -1, loaded = 0;
    for (; loaded < n; loaded++) {
        if (!hn_file_exists(paths[loaded])) {
            hn_errf(err, "%s: no such file", paths[loaded]);
            goto done;
        }
        if (hn_table_load(paths[loaded], &tabs[loaded], err) != 0) goto done;
        if (tabs[loaded].n_headers)
            fprintf(stderr, "harness compare: %s: %d line%s repeating the header left out (files joined?)\n",
                    paths[loaded], tabs[loaded].n_headers, tabs[loaded].n_headers == 1 ? "" : "s");
    }
    int c_status = hn_table_col(&tabs[0], "status");
    if (c_status < 0) {
        hn_errf(err, "%s: not a results file: it has no 'status' column", paths[0]);
        goto done;
    }
    if (hn_table_col(&tabs[0], HN_COMPARE_RUN_COL) >= 0) {
        hn_errf(err, "%s already has a '%s' column: compare it on its own", paths[0], HN_COMPARE_RUN_COL);
        goto done;
    }
    for (int i = 1; i < n; i++) {
        const hn_table *t = &tabs[i];
        int same = hn_table_col(t, "status") == c_status;
        int k = 0;
        for (; same && k < c_status; k++) same = strcmp(t->header[k], tabs[0].header[k]) == 0;
        if (!same) {
            hn_sb a, b;
            hn_sb_init(&a);
            hn_sb_init(&b);
            for (int j = 0; j < c_status; j++) hn_sb_addf(&a, "%s%s", j ? "," : "", tabs[0].header[j]);
            int cs = hn_table_col(t, "status");
            for (int j = 0; j < (cs < 0 ? t->n_cols : cs); j++) hn_sb_addf(&b, "%s%s", j ? "," : "", t->header[j]);
            hn_errf(err,
                    "%s and %s are not runs of one config: the columns that say what was run differ (%s vs %s)",
                    paths[0], paths[i], a.buf, b.buf);
            hn_sb_free(&a);
            hn_sb_free(&b);
            goto done;
        }
    }
    /* a file's stem; its path where another file has the same stem; "#k"
     * for the k-th time the same file is given */
    for (int i = 0; i < n; i++) names[i] = hn_stem(paths[i]);
    int stems_clash = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            stems_clash |= strcmp(names[i], names[j]) == 0 && strcmp(paths[i], paths[j]) != 0;
    for (int i = 0; i < n; i++) {
        int copy = 1;
        for (int j = 0; j < i; j++) copy += strcmp(paths[j], paths[i]) == 0;
        char *x = stems_clash ? xstrdup(paths[i]) : xstrdup(names[i]);
        if (copy > 1) {
            char *y = xasprintf("%s#%d", x, copy);
            free(x);
            x = y;
        }
        free(names[i]);
        names[i] = x;
    }
    /* the joined table: the first file's columns, then run */
    int nc = tabs[0].n_cols + 1;
    out->n_cols = nc;
    out->header = xcalloc((size_t)nc, sizeof *out->header);
    for (int c = 0; c < nc - 1; c++) out->header[c] = xstrdup(tabs[0].header[c]);
    out->header[nc - 1] = xstrdup(HN_COMPARE_RUN_COL);
    int total = 0;
    for (int i = 0; i < n; i++) total += tabs[i].n_rows;
    out->rows = xcalloc((size_t)total + 1, sizeof *out->rows);
    int *map = xmalloc((size_t)nc * sizeof *map);
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < nc - 1; c++) map[c] = hn_table_col(&tabs[i], out->header[c]);
        for (int r = 0; r < tabs[i].n_rows; r++) {
            char **row = xcalloc((size_t)nc, sizeof *row);
            for (int c = 0; c < nc - 1; c++) row[c] = xstrdup(map[c] >= 0 ? tabs[i].rows[r][map[c]] : "");
            row[nc - 1] = xstrdup(names[i]);
            out->rows[out->n_rows++] = row;
        }
    }
    free(map);
    rc = 0;
done:
    for (int i = 0; i < loaded && i < n; i++) hn_table_free(&tabs[i]);
    if (loaded < n) hn_table_free(&tabs[loaded]);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    free(tabs);
    return rc;
}

int hn_cmd_compare(const hn_cli *cli) {
    if (!cli->config) {
        fprintf(stderr, "harness compare: missing the results file (harness compare RESULTS.csv --by COLUMN)\n");
        return 2;
    }
    int several = cli->n_inputs > 0;
    for (int i = -1; i < cli->n_inputs; i++) {
        const char *path = i < 0 ? cli->config : cli->inputs[i];
        if (!hn_file_exists(path)) {
            fprintf(stderr, "harness compare: %s: no such file\n", path);
            return 2;
        }
        if (hn_file_is_json(path)) {
            fprintf(stderr, "harness compare: %s is a config, not a results CSV: harness run %s writes its results "
                            "(results/<name>.csv), which compare reads\n", path, path);
            return 2;
        }
    }
    const char *by = cli->by ? cli->by : several ? HN_COMPARE_RUN_COL : NULL;
    if (!by) {
        fprintf(stderr, "harness compare: --by COLUMN is required (e.g. --by ACCUM_DTYPE, --by variant)\n");
        return 2;
    }
    hn_plot_format fmt = HN_FMT_PNG;
    if (cli->format && hn_plot_format_parse(cli->format, &fmt) != 0) {
        fprintf(stderr, "harness compare: --format %s: expected png, svg or pdf\n", cli->format);
        return 2;
    }
    hn_table t;
    hn_err err;
    char *stem;
    if (several) {
        const char *paths[HN_ARRAY_LEN(cli->inputs) + 1];
        paths[0] = cli->config;
        for (int i = 0; i < cli->n_inputs; i++) paths[i + 1] = cli->inputs[i];
        if (join_runs(paths, cli->n_inputs + 1, &t, &err) != 0) {
            fprintf(stderr, "harness compare: %s\n", err.msg);
            return 2;
        }
        /* the charts' name: the stems joined, for two or three files */
        hn_sb sb;
        hn_sb_init(&sb);
        for (int i = 0; i <= cli->n_inputs && i < 3; i++) {
            char *st = hn_stem(paths[i]);
            hn_sb_addf(&sb, "%s%s", i ? "-vs-" : "", st);
            free(st);
        }
        if (cli->n_inputs >= 3) hn_sb_addf(&sb, "-and-%d-more", cli->n_inputs - 2);
        stem = hn_sb_detach(&sb);
    } else {
        if (!hn_file_exists(cli->config)) {
            fprintf(stderr, "harness compare: %s: no such file\n", cli->config);
            return 2;
        }
        if (hn_table_load(cli->config, &t, &err) != 0) {
            fprintf(stderr, "harness compare: %s\n", err.msg);
            return 2;
        }
        if (t.n_headers)
            fprintf(stderr, "harness compare: %s: %d line%s repeating the header left out (files joined?)\n",
                    cli->config, t.n_headers, t.n_headers == 1 ? "" : "s");
        stem = hn_stem(cli->config);
    }
    hn_compare c;
    if (hn_compare_build(&c, &t, by, cli->baseline, &err) != 0) {
        fprintf(stderr, "harness compare: %s: %s\n", several ? stem : cli->config, err.msg);
        hn_table_free(&t);
        free(stem);
        return 2;
    }
    int rc = 0;
    char *chart = NULL, *dat = NULL, *dir = NULL;
    if (c.n_groups == 0) {
        fprintf(stderr, "harness compare: %s: nothing to compare: no group of rows has two %s values "
                        "(%d group%s with a single value)\n",
                several ? stem : cli->config, c.by, c.n_single, c.n_single == 1 ? "" : "s");
        if (several && strcmp(c.by, HN_COMPARE_RUN_COL) == 0)
            fprintf(stderr, "  (the runs have no case and variant in common: runs of other variants or other cases "
                            "do not pair up)\n");
        rc = 2;
        goto done;
    }
    if (cli->out) {
        char *by = safe_name(c.by);
        char *name = xasprintf("%s-by-%s", stem, by);
        int orc = hn_plot_out_path(cli->out, name, cli->format != NULL, &fmt, &chart, &err);
        free(name);
        free(by);
        if (orc != 0) {
            fprintf(stderr, "harness compare: %s\n", err.msg);
            rc = 2;
            goto done;
        }
    } else {
        char *by = safe_name(c.by);
        chart = xasprintf("plots/%s-by-%s.%s", stem, by, hn_plot_format_ext(fmt));
        free(by);
    }
    c.brief = cli->quiet;
    hn_compare_print(&c, stem, stdout);
    int n_timed = 0;
    for (int g = 0; g < c.n_groups; g++) n_timed += group_timed(&c, g) > 0;
    if (n_timed == 0) {
        printf("chart: none (no row has a time)\n");
        goto done;
    }
    dat = hn_plot_dat_path(chart);
    dir = hn_dirname(chart);
    hn_plot_bars b;
    hn_compare_chart(&c, stem, &b);
    if (hn_mkdirs(dir, &err) != 0 || hn_plot_bars_draw(&b, dat, chart, fmt, cli->verbose, &err) != 0) {
        fprintf(stderr, "harness compare: chart not drawn: %s\n", err.msg);
        rc = 1;
    } else {
        printf("chart: %s\n", chart);
    }
    hn_plot_bars_free(&b);
done:
    free(chart);
    free(dat);
    free(dir);
    free(stem);
    hn_compare_free(&c);
    hn_table_free(&t);
    return rc;
}
