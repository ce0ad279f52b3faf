/*
 * plot.c: `harness plot`: the charts of a results CSV (see plot.h and
 * docs/plots.md).
 *
 *   hn_cmd_plot        one CSV (or --all: every CSV under results/) into charts
 *   hn_plot_data_*     the table as cases x variants, sorted and split
 *   hn_plot_bars_*     bar charts: data file + plots/bars.gp
 *   plot_roofline      GFLOP/s against FLOP/byte: data file + plots/roofline.gp
 *   hn_plot_run        gnuplot as a child process (posix_spawnp, no shell)
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "plot.h"
#include "ops/op.h"


/* Chart sizes in pixels. */
#define MAIN_W 1600
#define MAIN_H 1800
#define ROOF_W 1400
#define ROOF_H 1000

/* ---------------------------------------------------------------------- */
/* marks and numbers */

static const char *const MARK_NAMES[HN_MARK_COUNT] = {"ok", "mismatch", "failed", "skipped", "none"};

const char *hn_plot_mark_name(hn_plot_mark m) {
    return (unsigned)m < HN_MARK_COUNT ? MARK_NAMES[m] : "none";
}

hn_plot_mark hn_plot_mark_of(const char *status, int has_time) {
    if (!status) return HN_MARK_NONE;
    if (strcmp(status, "ok") == 0) return has_time ? HN_MARK_OK : HN_MARK_FAILED;
    if (strcmp(status, "mismatch") == 0) return has_time ? HN_MARK_MISMATCH : HN_MARK_FAILED;
    if (strcmp(status, "skipped") == 0) return HN_MARK_SKIPPED;
    return HN_MARK_FAILED;
}

double hn_plot_num(const char *field) {
    if (!field || !*field) return NAN;
    char *end;
    errno = 0;
    double x = strtod(field, &end);
    while (*end == ' ') end++;
    if (end == field || *end || errno == ERANGE) return NAN;
    return x;
}

static int has_time(hn_plot_mark m) { return m == HN_MARK_OK || m == HN_MARK_MISMATCH; }

/* ---------------------------------------------------------------------- */
/* the table as cases x variants */

/* Index of s in list[0..n), or -1; tries *hint first (rows of a case are
 * contiguous, so this is usually a hit) and updates it. */
static int find_str(char *const *list, int n, const char *s, int *hint) {
    if (*hint >= 0 && *hint < n && strcmp(list[*hint], s) == 0) return *hint;
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0) return *hint = i;
    return -1;
}

static void push_str(char ***list, int *n, int *cap, const char *s) {
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        *list = xrealloc(*list, (size_t)*cap * sizeof **list);
    }
    (*list)[(*n)++] = xstrdup(s);
}

static char *join_names(char *const *names, int n) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) hn_sb_addf(&sb, "%s%s", i ? ", " : "", names[i]);
    return hn_sb_detach(&sb);
}

typedef struct {
    double key;
    int idx;
} sort_item;

static int cmp_sort_item(const void *pa, const void *pb) {
    const sort_item *a = pa, *b = pb;
    int na = isnan(a->key), nb = isnan(b->key);
    if (na != nb) return na - nb; /* no key last */
    if (!na && a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

static const char *first_field(const hn_table *t, const char *col) {
    int c = hn_table_col(t, col);
    if (c < 0) return "";
    for (int r = 0; r < t->n_rows; r++)
        if (*t->rows[r][c]) return t->rows[r][c];
    return "";
}

const hn_plot_cell *hn_plot_cell_at(const hn_plot_data *d, int c, int v) {
    return &d->cells[(size_t)c * d->n_variants + v];
}

static int variant_index(const hn_plot_data *d, const char *name) {
    for (int v = 0; v < d->n_variants; v++)
        if (strcmp(d->variants[v], name) == 0) return v;
    return -1;
}
/* The vendor baseline among the variants: the first that is a baseline of a
 * registered operator, a float one first (the speed-ups are against it). */
static int baseline_variant(const hn_plot_data *d) {
    int any = -1;
    for (int v = 0; v < d->n_variants; v++)
        for (int oi = 0; oi < hn_op_count(); oi++) {
            const hn_op *op = hn_op_at(oi);
            for (int b = 0; b < op->n_baselines; b++) {
                if (strcmp(op->baselines[b].name, d->variants[v]) != 0) continue;
                if (strcmp(op->baselines[b].precision, "float") == 0) return v;
                if (any < 0) any = v;
            }
        }
    return any;
}


int hn_plot_data_build(hn_plot_data *d, const hn_table *t, const char *sort, const char *baseline,
                       hn_err *err) {
    memset(d, 0, sizeof *d);
    int c_case = hn_table_col(t, "case"), c_label = hn_table_col(t, "label");
    int c_variant = hn_table_col(t, "variant"), c_status = hn_table_col(t, "status");
    int c_med = hn_table_col(t, "time_median_ms");
    int c_q1 = hn_table_col(t, "time_q1_ms"), c_q3 = hn_table_col(t, "time_q3_ms");
    const char *missing = c_variant < 0 ? "variant" : c_status < 0 ? "status" : c_med < 0 ? "time_median_ms"
                          : (c_case < 0 && c_label < 0) ? "case" : NULL;
    if (missing) return hn_errf(err, "not a results file: it has no '%s' column", missing);
    if (t->n_rows == 0) return hn_errf(err, "no rows: nothing to plot");
    int c_key = c_case >= 0 ? c_case : c_label;

    /* Cases and variants in file order. A case is its id and its label: files
     * of two configs joined into one reuse the ids for other cases. */
    int cap_c = 0, cap_v = 0, cap_k = 0, n_keys_c = 0, hint_c = -1, hint_v = -1;
    char **case_keys = NULL;
    int *row_case = xmalloc((size_t)t->n_rows * sizeof *row_case);
    for (int r = 0; r < t->n_rows; r++) {
        const char *id = t->rows[r][c_key];
        char *key = xasprintf("%s\037%s", id, c_label >= 0 ? t->rows[r][c_label] : "");
        int c = find_str(case_keys, n_keys_c, key, &hint_c);
        if (c < 0) {
            c = d->n_cases;
            push_str(&d->case_ids, &d->n_cases, &cap_c, id);
            push_str(&case_keys, &n_keys_c, &cap_k, key);
            hint_c = c;
        }
        free(key);
        row_case[r] = c;
        if (find_str(d->variants, d->n_variants, t->rows[r][c_variant], &hint_v) < 0) {
            push_str(&d->variants, &d->n_variants, &cap_v, t->rows[r][c_variant]);
            hint_v = d->n_variants - 1;
        }
    }
    for (int i = 0; i < n_keys_c; i++) free(case_keys[i]);
    free(case_keys);
    /* The vendor baseline goes last: it is the reference, not a contender. */
    int vb = baseline_variant(d);
    if (vb >= 0 && vb != d->n_variants - 1) {
        char *b = d->variants[vb];
        memmove(&d->variants[vb], &d->variants[vb + 1], (size_t)(d->n_variants - vb - 1) * sizeof(char *));
        d->variants[d->n_variants - 1] = b;
    }

    d->labels = xcalloc((size_t)d->n_cases, sizeof *d->labels);
    d->cells = xmalloc((size_t)d->n_cases * d->n_variants * sizeof *d->cells);
    for (int i = 0; i < d->n_cases * d->n_variants; i++)
        d->cells[i] = (hn_plot_cell){.row = -1, .mark = HN_MARK_NONE, .ms = NAN, .q1 = NAN, .q3 = NAN};
    hint_v = -1;
    for (int r = 0; r < t->n_rows; r++) {
        int c = row_case[r];
        if (!d->labels[c]) {
            const char *lab = c_label >= 0 ? t->rows[r][c_label] : "";
            d->labels[c] = xstrdup(*lab ? lab : d->case_ids[c]);
        }
        int v = find_str(d->variants, d->n_variants, t->rows[r][c_variant], &hint_v);
        hn_plot_cell *cell = &d->cells[(size_t)c * d->n_variants + v];
        if (cell->row >= 0) {
            d->n_duplicates++;
            continue;
        }
        cell->row = r;
        cell->ms = hn_plot_num(t->rows[r][c_med]);
        cell->mark = hn_plot_mark_of(t->rows[r][c_status], isfinite(cell->ms));
        if (!has_time(cell->mark)) cell->ms = NAN;
        if (has_time(cell->mark)) {
            cell->q1 = c_q1 >= 0 ? hn_plot_num(t->rows[r][c_q1]) : NAN;
            cell->q3 = c_q3 >= 0 ? hn_plot_num(t->rows[r][c_q3]) : NAN;
        }
    }
    free(row_case);

    /* The speed-up baseline. */
    if (baseline) {
        d->baseline = variant_index(d, baseline);
        if (d->baseline < 0) {
            char *names = join_names(d->variants, d->n_variants);
            hn_errf(err, "--baseline %s: no such variant (variants: %s)", baseline, names);
            free(names);
            goto fail;
        }
    } else {
        vb = baseline_variant(d);
        d->baseline = vb >= 0 ? vb : 0;
    }

    /* The sort key of every case. */
    sort_item *items = xmalloc((size_t)d->n_cases * sizeof *items);
    int sv = -1, sc = -1;
    if (!sort) {
        sv = baseline_variant(d) == 0 && d->n_variants > 1 ? 1 : 0;
    } else if ((sv = variant_index(d, sort)) < 0 && (sc = hn_table_col(t, sort)) < 0) {
        char *names = join_names(d->variants, d->n_variants);
        hn_errf(err, "--sort %s: neither a variant nor a column (variants: %s)", sort, names);
        free(names);
        free(items);
        goto fail;
    }
    /* Cases every variant skipped (over the emulator's budget, say) carry no
     * information worth a place on the x axis: they are counted, not drawn. */
    int n_keys = 0;
    for (int c = 0; c < d->n_cases; c++) {
        int skipped = 1;
        for (int v = 0; v < d->n_variants && skipped; v++) {
            hn_plot_mark m = hn_plot_cell_at(d, c, v)->mark;
            skipped = m == HN_MARK_SKIPPED || m == HN_MARK_NONE;
        }
        if (skipped) {
            d->n_all_skipped++;
            continue;
        }
        double key = NAN;
        if (sv >= 0) {
            key = hn_plot_cell_at(d, c, sv)->ms;
        } else {
            for (int v = 0; v < d->n_variants && isnan(key); v++) {
                int r = hn_plot_cell_at(d, c, v)->row;
                if (r >= 0) key = hn_plot_num(t->rows[r][sc]);
            }
        }
        n_keys += !isnan(key);
        items[d->n_shown++] = (sort_item){key, c};
    }
    if (sc >= 0 && n_keys == 0) {
        hn_errf(err, "--sort %s: the column holds no numbers", sort);
        free(items);
        goto fail;
    }
    for (int i = 0; i < d->n_shown; i++)
        for (int v = 0; v < d->n_variants; v++) d->n_marks[hn_plot_cell_at(d, items[i].idx, v)->mark]++;
    qsort(items, (size_t)d->n_shown, sizeof *items, cmp_sort_item);
    d->order = xmalloc(((size_t)d->n_shown + 1) * sizeof *d->order);
    for (int c = 0; c < d->n_shown; c++) d->order[c] = items[c].idx;
    free(items);
    /* cases without a key go last (one panel, in file order, when no case
     * has one) */
    d->n_keyed = n_keys;
    d->split = d->n_shown / 2;
    d->sort_is_variant = sv >= 0;
    d->sort_name = xstrdup(sv >= 0 ? d->variants[sv] : sort);

    d->device = xstrdup(first_field(t, "device"));
    d->backend = xstrdup(first_field(t, "backend"));
    d->arch = xstrdup(first_field(t, "arch"));
    d->timing = xstrdup(first_field(t, "timing"));
    return 0;
fail:
    hn_plot_data_free(d);
    return -1;
}

static void free_strs(char **list, int n) {
    if (!list) return;
    for (int i = 0; i < n; i++) free(list[i]);
    free(list);
}

void hn_plot_data_free(hn_plot_data *d) {
    if (!d) return;
    free_strs(d->case_ids, d->n_cases);
    free_strs(d->labels, d->n_cases);
    free_strs(d->variants, d->n_variants);
    free(d->cells);
    free(d->order);
    free(d->sort_name);
    free(d->device);
    free(d->backend);
    free(d->arch);
    free(d->timing);
    memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------------- */
/* bar charts */

int hn_plot_format_parse(const char *s, hn_plot_format *f) {
    static const char *const NAMES[] = {"png", "svg", "pdf"};
    for (int i = 0; i < 3; i++)
        if (s && strcasecmp(s, NAMES[i]) == 0) {
            *f = (hn_plot_format)i;
            return 0;
        }
    return -1;
}

const char *hn_plot_format_ext(hn_plot_format f) {
    return f == HN_FMT_SVG ? "svg" : f == HN_FMT_PDF ? "pdf" : "png";
}

void hn_plot_bars_init(hn_plot_bars *b, const char *const *series, int n_series) {
    memset(b, 0, sizeof *b);
    b->n_series = n_series;
    b->series = xcalloc((size_t)n_series + 1, sizeof *b->series);
    b->color = xcalloc((size_t)n_series + 1, sizeof *b->color);
    for (int s = 0; s < n_series; s++) {
        b->series[s] = xstrdup(series[s]);
        b->color[s] = s + 1;
    }
    b->width = MAIN_W;
    b->height = MAIN_H;
}

hn_plot_panel *hn_plot_bars_panel(hn_plot_bars *b, const char *title, const char *ylabel, int n_cases) {
    if (b->n_panels == HN_PLOT_MAX_PANELS) return NULL;
    hn_plot_panel *p = &b->panels[b->n_panels++];
    memset(p, 0, sizeof *p);
    p->title = xstrdup(title ? title : "");
    p->ylabel = xstrdup(ylabel ? ylabel : "");
    p->hline = NAN;
    p->n_cases = n_cases;
    size_t n = (size_t)n_cases * b->n_series + 1;
    p->case_ids = xcalloc((size_t)n_cases + 1, sizeof *p->case_ids);
    p->labels = xcalloc((size_t)n_cases + 1, sizeof *p->labels);
    p->value = xmalloc(n * sizeof *p->value);
    p->lo = xmalloc(n * sizeof *p->lo);
    p->hi = xmalloc(n * sizeof *p->hi);
    p->mark = xmalloc(n * sizeof *p->mark);
    for (size_t i = 0; i < n; i++) {
        p->value[i] = p->lo[i] = p->hi[i] = NAN;
        p->mark[i] = HN_MARK_NONE;
    }
    return p;
}

void hn_plot_panel_set_case(hn_plot_panel *p, int c, const char *case_id, const char *label) {
    free(p->case_ids[c]);
    free(p->labels[c]);
    p->case_ids[c] = xstrdup(case_id ? case_id : "");
    p->labels[c] = xstrdup(label ? label : "");
}

void hn_plot_bars_free(hn_plot_bars *b) {
    if (!b) return;
    free(b->title);
    free(b->subtitle);
    free(b->note);
    free(b->xlabel);
    free_strs(b->series, b->n_series);
    free(b->color);
    for (int i = 0; i < b->n_panels; i++) {
        hn_plot_panel *p = &b->panels[i];
        free(p->title);
        free(p->ylabel);
        free(p->hline_title);
        free_strs(p->case_ids, p->n_cases);
        free_strs(p->labels, p->n_cases);
        free(p->value);
        free(p->lo);
        free(p->hi);
        free(p->mark);
    }
    memset(b, 0, sizeof *b);
}

/* A field of a data file: no tabs, line breaks or double quotes (gnuplot would
 * read them as separators or quoting). */
static void add_field(hn_sb *sb, const char *s) {
    if (!s || !*s) {
        hn_sb_adds(sb, "-");
        return;
    }
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        hn_sb_addc(sb, ch == '"' ? '\'' : (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch);
    }
}

static void add_num(hn_sb *sb, double x) {
    if (isfinite(x)) hn_sb_addf(sb, "%.6g", x);
    else hn_sb_adds(sb, "NaN");
}

int hn_plot_bars_write_data(const hn_plot_bars *b, const char *dat_path, hn_err *err) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "# ");
    add_field(&sb, b->title);
    hn_sb_adds(&sb, "\n# ");
    add_field(&sb, b->subtitle);
    if (b->note) {
        hn_sb_adds(&sb, "\n# ");
        add_field(&sb, b->note);
    }
    hn_sb_adds(&sb, "\n# written by harness plot for plots/bars.gp: tab-separated; one block per panel\n"
                    "# (gnuplot index 0, 1, ...); columns: pos, case, label, then for each series:\n"
                    "# value, lo, hi, mark (ok | mismatch | failed | skipped | none)\n");
    for (int s = 0; s < b->n_series; s++) {
        hn_sb_addf(&sb, "# series %d (columns %d-%d): ", s + 1, 4 + 4 * s, 7 + 4 * s);
        add_field(&sb, b->series[s]);
        hn_sb_addc(&sb, '\n');
    }
    for (int i = 0; i < b->n_panels; i++) {
        const hn_plot_panel *p = &b->panels[i];
        if (i) hn_sb_adds(&sb, "\n\n");
        hn_sb_addf(&sb, "# panel %d: ", i + 1);
        add_field(&sb, p->title);
        hn_sb_addc(&sb, '\n');
        for (int c = 0; c < p->n_cases; c++) {
            hn_sb_addf(&sb, "%d\t", c);
            add_field(&sb, p->case_ids[c]);
            hn_sb_addc(&sb, '\t');
            add_field(&sb, p->labels[c]);
            for (int s = 0; s < b->n_series; s++) {
                size_t k = (size_t)c * b->n_series + s;
                hn_sb_addc(&sb, '\t');
                add_num(&sb, p->value[k]);
                hn_sb_addc(&sb, '\t');
                add_num(&sb, p->lo[k]);
                hn_sb_addc(&sb, '\t');
                add_num(&sb, p->hi[k]);
                hn_sb_addf(&sb, "\t%s", hn_plot_mark_name(p->mark[k]));
            }
            hn_sb_addc(&sb, '\n');
        }
    }
    int rc = hn_write_file(dat_path, sb.buf, sb.len, err);
    hn_sb_free(&sb);
    return rc;
}

/* The y range of a panel: its values (positive ones on a log axis) and its
 * reference line, with room above for the bars and below on a log axis so the
 * smallest bar is still visible. */
static void panel_range(const hn_plot_bars *b, const hn_plot_panel *p, double *lo, double *hi) {
    double mn = INFINITY, mx = -INFINITY;
    size_t n = (size_t)p->n_cases * b->n_series;
    for (size_t i = 0; i < n + 1; i++) {
        double x = i < n ? p->value[i] : p->hline;
        if (i < n && p->whiskers && isfinite(p->hi[i]) && p->hi[i] > x) x = p->hi[i];
        if (!isfinite(x) || (p->log_y && x <= 0)) continue;
        if (x < mn) mn = x;
        if (x > mx) mx = x;
    }
    if (p->log_y) {
        if (!isfinite(mn)) mn = 0.1, mx = 10;
        *lo = mn / 2.5;
        *hi = mx * 2.5;
    } else {
        if (!isfinite(mn)) mn = 0, mx = 1;
        *lo = mn < 0 ? mn * 1.1 : 0;
        *hi = mx > 0 ? mx * 1.1 : 1;
    }
}

int hn_plot_bars_draw(const hn_plot_bars *b, const char *dat_path, const char *chart_path,
                      hn_plot_format f, int verbose, hn_err *err) {
    if (hn_plot_bars_write_data(b, dat_path, err) != 0) return -1;
    hn_plot_vars v;
    hn_plot_vars_init(&v);
    hn_plot_var_str(&v, "datafile", dat_path);
    hn_plot_var_str(&v, "title", b->title ? b->title : "");
    hn_plot_var_str(&v, "subtitle", b->subtitle ? b->subtitle : "");
    hn_plot_var_str(&v, "note", b->note ? b->note : "");
    hn_plot_var_str(&v, "xlabel", b->xlabel ? b->xlabel : "");
    hn_plot_var_num(&v, "ns", b->n_series);
    hn_plot_var_strs(&v, "sname", (const char *const *)b->series, b->n_series);
    double *dbl = xmalloc(((size_t)b->n_series + HN_PLOT_MAX_PANELS) * sizeof *dbl);
    for (int s = 0; s < b->n_series; s++) dbl[s] = b->color[s];
    hn_plot_var_nums(&v, "scolor", dbl, b->n_series);
    free(dbl);

    int np = b->n_panels, max_n = 1;
    int seen[HN_MARK_COUNT] = {0};
    double plog[HN_PLOT_MAX_PANELS], pymin[HN_PLOT_MAX_PANELS], pymax[HN_PLOT_MAX_PANELS];
    double phas[HN_PLOT_MAX_PANELS], phval[HN_PLOT_MAX_PANELS], pwhisk[HN_PLOT_MAX_PANELS];
    double pn[HN_PLOT_MAX_PANELS];
    const char *ptitle[HN_PLOT_MAX_PANELS], *pylabel[HN_PLOT_MAX_PANELS], *phtitle[HN_PLOT_MAX_PANELS];
    for (int i = 0; i < np; i++) {
        const hn_plot_panel *p = &b->panels[i];
        ptitle[i] = p->title;
        pylabel[i] = p->ylabel;
        plog[i] = p->log_y;
        panel_range(b, p, &pymin[i], &pymax[i]);
        phas[i] = isfinite(p->hline);
        phval[i] = isfinite(p->hline) ? p->hline : 0;
        phtitle[i] = p->hline_title ? p->hline_title : "";
        pwhisk[i] = p->whiskers;
        pn[i] = p->n_cases;
        if (p->n_cases > max_n) max_n = p->n_cases;
        for (size_t k = 0; k < (size_t)p->n_cases * b->n_series; k++) seen[p->mark[k]] = 1;
    }
    hn_plot_var_num(&v, "np", np);
    hn_plot_var_strs(&v, "ptitle", ptitle, np);
    hn_plot_var_strs(&v, "pylabel", pylabel, np);
    hn_plot_var_strs(&v, "phtitle", phtitle, np);
    hn_plot_var_nums(&v, "plog", plog, np);
    hn_plot_var_nums(&v, "pymin", pymin, np);
    hn_plot_var_nums(&v, "pymax", pymax, np);
    hn_plot_var_nums(&v, "phas", phas, np);
    hn_plot_var_nums(&v, "phval", phval, np);
    hn_plot_var_nums(&v, "pwhisk", pwhisk, np);
    hn_plot_var_nums(&v, "pn", pn, np);
    hn_plot_var_num(&v, "has_mis", seen[HN_MARK_MISMATCH]);
    hn_plot_var_num(&v, "has_fail", seen[HN_MARK_FAILED]);
    hn_plot_var_num(&v, "has_skip", seen[HN_MARK_SKIPPED] || seen[HN_MARK_NONE]);
    /* Rotated labels: smaller type when a panel holds many cases, and a wider
     * chart beyond what 1600 px can hold. */
    hn_plot_var_num(&v, "xfont", max_n <= 40 ? 10 : max_n <= 80 ? 8 : 7);
    int width = b->width;
    if (200 + 10 * max_n > width) width = 200 + 10 * max_n;
    int rc = hn_plot_run("bars.gp", &v, chart_path, f, width, b->height, verbose, err);
    hn_plot_vars_free(&v);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* the charts of a results file */

char *hn_plot_context(const char *device, const char *backend, const char *arch, const char *timing) {
    int emu = backend && strcmp(backend, "emu") == 0;
    hn_sb sb;
    hn_sb_init(&sb);
    if (emu) hn_sb_adds(&sb, "CPU-emulated times (backend emu): not GPU performance");
    else hn_sb_adds(&sb, device && *device ? device : "unknown device");
    if (!emu && backend && *backend) hn_sb_addf(&sb, ", backend %s", backend);
    if (!emu && arch && *arch) hn_sb_addf(&sb, ", %s", arch);
    if (timing && *timing && strcmp(timing, "emu-wall") != 0) hn_sb_addf(&sb, ", %s L2", timing);
    return hn_sb_detach(&sb);
}

static char *context_line(const hn_plot_data *d) {
    return hn_plot_context(d->device, d->backend, d->arch, d->timing);
}

/* "; 40 cases skipped by every variant not drawn" or "". Static buffer. */
static const char *skipped_note(const hn_plot_data *d) {
    static char buf[96];
    if (!d->n_all_skipped) return "";
    snprintf(buf, sizeof buf, "; %d case%s skipped by every variant not drawn", d->n_all_skipped,
             d->n_all_skipped == 1 ? "" : "s");
    return buf;
}

static void set_case(hn_plot_panel *p, int pc, const hn_plot_data *d, int c, const char *suffix) {
    char *lab = xasprintf("%s%s", d->labels[c], suffix ? suffix : "");
    hn_plot_panel_set_case(p, pc, d->case_ids[c], lab);
    free(lab);
}

/* The halves as (first, count) ranges of d->order. */
static int halves(const hn_plot_data *d, int first[2], int count[2]) {
    if (d->n_shown < 2 || d->n_keyed == 0) {
        first[0] = 0;
        count[0] = d->n_shown;
        return 1;
    }
    first[0] = 0;
    count[0] = d->split;
    first[1] = d->split;
    count[1] = d->n_shown - d->split;
    return 2;
}

/* The title of the panel of order[first .. first + n). */
static char *half_title(const hn_plot_data *d, int half, int n_halves, int first, int n) {
    const char *by = d->sort_name;
    const char *what = d->sort_is_variant ? " time" : "";
    int keyed = d->n_keyed - first; /* the cases of this panel with a key, which come first */
    if (keyed < 0) keyed = 0;
    if (keyed > n) keyed = n;
    if (n_halves == 1 && d->n_keyed == 0)
        return xasprintf("%d case%s, none with a %s%s: in file order", n, n == 1 ? "" : "s", by, what);
    if (keyed == 0)
        return xasprintf("%s%d case%s without a %s%s", n_halves == 1 ? "" : half == 0 ? "Faster half: " : "Slower half: ",
                         n, n == 1 ? "" : "s", by, what);
    hn_sb sb;
    hn_sb_init(&sb);
    if (n_halves == 1) hn_sb_addf(&sb, "%d case%s, sorted by %s", keyed, keyed == 1 ? "" : "s", by);
    else
        hn_sb_addf(&sb, "%s half: the %d case%s with the %s %s%s", half == 0 ? "Faster" : "Slower", keyed,
                   keyed == 1 ? "" : "s", half == 0 ? "lowest" : "highest", by, what);
    if (keyed < n) hn_sb_addf(&sb, ", then %d without one", n - keyed);
    return hn_sb_detach(&sb);
}

int hn_plot_times_chart(const hn_plot_data *d, const char *name, int log_y, hn_plot_bars *b, hn_err *err) {
    (void)err;
    hn_plot_bars_init(b, (const char *const *)d->variants, d->n_variants);
    int k = 1;
    for (int v = 0; v < d->n_variants; v++)
        b->color[v] = v == baseline_variant(d) ? 0 : k++;
    char *ctx = context_line(d);
    b->title = xasprintf("Performance comparison: %s", name);
    b->subtitle = ctx;
    b->note = xasprintf("median time per case, whiskers from q1 to q3; sorted by %s%s%s", d->sort_name,
                        d->sort_is_variant ? "'s time" : "", skipped_note(d));
    b->xlabel = xstrdup("Case");
    int first[2], count[2];
    int nh = halves(d, first, count);
    for (int h = 0; h < nh; h++) {
        char *title = half_title(d, h, nh, first[h], count[h]);
        hn_plot_panel *p = hn_plot_bars_panel(b, title, log_y ? "Time (ms, log scale)" : "Time (ms)", count[h]);
        free(title);
        p->log_y = log_y;
        p->whiskers = 1;
        for (int i = 0; i < count[h]; i++) {
            int c = d->order[first[h] + i];
            set_case(p, i, d, c, NULL);
            for (int v = 0; v < d->n_variants; v++) {
                const hn_plot_cell *cell = hn_plot_cell_at(d, c, v);
                size_t j = (size_t)i * d->n_variants + v;
                p->value[j] = cell->ms;
                p->lo[j] = cell->q1;
                p->hi[j] = cell->q3;
                p->mark[j] = cell->mark;
            }
        }
    }
    return 0;
}

int hn_plot_speedup_chart(const hn_plot_data *d, const char *name, hn_plot_bars *b, hn_err *err) {
    if (d->n_variants < 2) return hn_errf(err, "only one variant (%s): no speed-up to show", d->variants[0]);
    int bv = d->baseline;
    int base_timed = 0, other_timed = 0;
    for (int i = 0; i < d->n_shown; i++)
        for (int v = 0; v < d->n_variants; v++) {
            int t = has_time(hn_plot_cell_at(d, d->order[i], v)->mark);
            if (v == bv) base_timed += t;
            else other_timed += t;
        }
    if (!base_timed)
        return hn_errf(err, "the baseline %s has no time in any case: no speed-up to show (--baseline VARIANT picks "
                            "another)", d->variants[bv]);
    if (!other_timed) return hn_errf(err, "no variant but the baseline %s has a time", d->variants[bv]);
    /* Series: every variant but the baseline, in the colors of the time chart. */
    const char **names = xmalloc((size_t)d->n_variants * sizeof *names);
    int *vmap = xmalloc((size_t)d->n_variants * sizeof *vmap);
    int *colors = xmalloc((size_t)d->n_variants * sizeof *colors);
    int ns = 0, k = 1;
    for (int v = 0; v < d->n_variants; v++) {
        int color = v == baseline_variant(d) ? 0 : k++;
        if (v == bv) continue;
        names[ns] = d->variants[v];
        colors[ns] = color;
        vmap[ns++] = v;
    }
    hn_plot_bars_init(b, names, ns);
    memcpy(b->color, colors, (size_t)ns * sizeof *colors);
    free(colors);
    char *ctx = context_line(d);
    b->title = xasprintf("Speed-up over %s: %s", d->variants[bv], name);
    b->subtitle = ctx;
    b->note = xasprintf("%s's median time / each variant's (higher is faster); cases in the order of the time "
                        "chart%s",
                        d->variants[bv], skipped_note(d));
    b->xlabel = xstrdup("Case");
    int first[2], count[2];
    int nh = halves(d, first, count);
    for (int h = 0; h < nh; h++) {
        char *title = half_title(d, h, nh, first[h], count[h]);
        char *ylabel = xasprintf("Speed-up over %s (x, log scale)", d->variants[bv]);
        hn_plot_panel *p = hn_plot_bars_panel(b, title, ylabel, count[h]);
        free(title);
        free(ylabel);
        p->log_y = 1;
        p->hline = 1.0;
        p->hline_title = xasprintf("1x = %s", d->variants[bv]);
        for (int i = 0; i < count[h]; i++) {
            int c = d->order[first[h] + i];
            const hn_plot_cell *base = hn_plot_cell_at(d, c, bv);
            int no_base = !has_time(base->mark);
            set_case(p, i, d, c, no_base ? " (no baseline time)" : NULL);
            for (int s = 0; s < ns; s++) {
                const hn_plot_cell *cell = hn_plot_cell_at(d, c, vmap[s]);
                size_t j = (size_t)i * ns + s;
                p->mark[j] = cell->mark;
                if (!has_time(cell->mark)) continue;
                if (no_base) {
                    p->mark[j] = HN_MARK_NONE;
                    continue;
                }
                p->value[j] = base->ms / cell->ms;
            }
        }
    }
    free(names);
    free(vmap);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* roofline */

#define MAX_ROOFS 4

/* Returns 0 drawn, 1 nothing to draw (reason in err), -1 error. */
static int plot_roofline(const hn_plot_data *d, const hn_table *t, const char *name, const char *dat,
                         const char *chart, hn_plot_format f, int verbose, hn_err *err) {
    static const char *const COLS[] = {"gflops", "flop", "bytes", "peak_gflops", "peak_gbps"};
    int col[5];
    for (int i = 0; i < 5; i++)
        if ((col[i] = hn_table_col(t, COLS[i])) < 0) {
            hn_errf(err, "no '%s' column", COLS[i]);
            return 1;
        }
    double roofs[MAX_ROOFS];
    int n_roofs = 0;
    double bw = NAN;
    for (int r = 0; r < t->n_rows; r++) {
        double pk = hn_plot_num(t->rows[r][col[3]]), pb = hn_plot_num(t->rows[r][col[4]]);
        if (pb > 0 && !(pb <= bw)) bw = pb;
        if (!(pk > 0)) continue;
        int known = 0;
        for (int i = 0; i < n_roofs; i++) known |= fabs(roofs[i] - pk) <= 1e-6 * pk;
        if (!known && n_roofs < MAX_ROOFS) roofs[n_roofs++] = pk;
    }
    if (n_roofs == 0 && !(bw > 0)) {
        hn_errf(err, "no peak_gflops or peak_gbps values (a CPU-emulated run records none)");
        return 1;
    }

    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "# roofline data written by harness plot for plots/roofline.gp: tab-separated;\n"
                    "# one block per variant (gnuplot index 0, 1, ...); columns: intensity (FLOP/byte),\n"
                    "# GFLOP/s, mark (ok | mismatch), case, label\n");
    const char **names = xmalloc((size_t)d->n_variants * sizeof *names);
    double *colors = xmalloc((size_t)d->n_variants * sizeof *colors);
    int ns = 0, k = 1, n_points = 0, n_unplaced = 0;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (int v = 0; v < d->n_variants; v++) {
        int color = v == baseline_variant(d) ? 0 : k++;
        int in_block = 0;
        for (int c = 0; c < d->n_shown; c++) {
            const hn_plot_cell *cell = hn_plot_cell_at(d, d->order[c], v);
            if (cell->mark == HN_MARK_NONE) continue;
            double g = NAN, ai = NAN;
            if (has_time(cell->mark)) {
                char **row = t->rows[cell->row];
                g = hn_plot_num(row[col[0]]);
                double fl = hn_plot_num(row[col[1]]), by = hn_plot_num(row[col[2]]);
                ai = fl > 0 && by > 0 ? fl / by : NAN;
            }
            if (!(g > 0) || !isfinite(ai)) {
                n_unplaced++;
                continue;
            }
            if (!in_block) {
                if (ns) hn_sb_adds(&sb, "\n\n");
                hn_sb_adds(&sb, "# ");
                add_field(&sb, d->variants[v]);
                hn_sb_addc(&sb, '\n');
                names[ns] = d->variants[v];
                colors[ns++] = color;
                in_block = 1;
            }
            add_num(&sb, ai);
            hn_sb_addc(&sb, '\t');
            add_num(&sb, g);
            hn_sb_addf(&sb, "\t%s\t", hn_plot_mark_name(cell->mark));
            add_field(&sb, d->case_ids[d->order[c]]);
            hn_sb_addc(&sb, '\t');
            add_field(&sb, d->labels[d->order[c]]);
            hn_sb_addc(&sb, '\n');
            n_points++;
            if (ai < xmin) xmin = ai;
            if (ai > xmax) xmax = ai;
            if (g < ymin) ymin = g;
            if (g > ymax) ymax = g;
        }
    }
    int rc = 1;
    if (n_points == 0) {
        hn_errf(err, "no row has a time with gflops, flop and bytes");
        goto done;
    }
    /* The ranges hold the points, the ridge points and the roofs. */
    for (int i = 0; i < n_roofs; i++) {
        if (roofs[i] > ymax) ymax = roofs[i];
        if (bw > 0) {
            double ridge = roofs[i] / bw;
            if (ridge < xmin) xmin = ridge;
            if (ridge > xmax) xmax = ridge;
        }
    }
    xmin /= 4, xmax *= 4, ymin /= 4, ymax *= 2;
    rc = -1;
    if (hn_write_file(dat, sb.buf, sb.len, err) != 0) goto done;

    hn_plot_vars v;
    hn_plot_vars_init(&v);
    char *ctx = context_line(d);
    char *title = xasprintf("Roofline: %s", name);
    hn_sb note;
    hn_sb_init(&note);
    hn_sb_adds(&note, "one point per timed row; intensity = flop / bytes (the ideal traffic)");
    if (n_unplaced)
        hn_sb_addf(&note, "; %d row%s without a time (failed or skipped) not shown", n_unplaced,
                   n_unplaced == 1 ? "" : "s");
    hn_plot_var_str(&v, "datafile", dat);
    hn_plot_var_str(&v, "title", title);
    hn_plot_var_str(&v, "subtitle", ctx);
    hn_plot_var_str(&v, "note", note.buf);
    hn_plot_var_num(&v, "ns", ns);
    hn_plot_var_strs(&v, "sname", names, ns);
    hn_plot_var_nums(&v, "scolor", colors, ns);
    hn_plot_var_num(&v, "npk", n_roofs);
    hn_plot_var_nums(&v, "pk", roofs, n_roofs);
    hn_plot_var_num(&v, "bw", bw > 0 ? bw : NAN);
    hn_plot_var_num(&v, "xmin", xmin);
    hn_plot_var_num(&v, "xmax", xmax);
    hn_plot_var_num(&v, "ymin", ymin);
    hn_plot_var_num(&v, "ymax", ymax);
    hn_plot_var_num(&v, "has_mis", d->n_marks[HN_MARK_MISMATCH] > 0);
    rc = hn_plot_run("roofline.gp", &v, chart, f, ROOF_W, ROOF_H, verbose, err);
    hn_plot_vars_free(&v);
    hn_sb_free(&note);
    free(ctx);
    free(title);
done:
    hn_sb_free(&sb);
    free(names);
    free(colors);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* gnuplot */

void hn_plot_vars_init(hn_plot_vars *v) { hn_sb_init(&v->code); }
void hn_plot_vars_free(hn_plot_vars *v) {
    if (v) hn_sb_free(&v->code);
}

void hn_plot_quote(hn_sb *out, const char *s) {
    hn_sb_addc(out, '\'');
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\'') hn_sb_adds(out, "''");
        else hn_sb_addc(out, (ch < 0x20 || ch == 0x7f) ? ' ' : (char)ch);
    }
    hn_sb_addc(out, '\'');
}

static void add_gp_num(hn_sb *sb, double x) {
    if (isfinite(x)) hn_sb_addf(sb, "%.17g", x);
    else hn_sb_adds(sb, "NaN");
}

void hn_plot_var_str(hn_plot_vars *v, const char *name, const char *value) {
    hn_sb_addf(&v->code, "%s = ", name);
    hn_plot_quote(&v->code, value);
    hn_sb_adds(&v->code, "; ");
}

void hn_plot_var_num(hn_plot_vars *v, const char *name, double x) {
    hn_sb_addf(&v->code, "%s = ", name);
    add_gp_num(&v->code, x);
    hn_sb_adds(&v->code, "; ");
}

/* gnuplot arrays have at least one element; an empty list declares one
 * unused element. */
void hn_plot_var_strs(hn_plot_vars *v, const char *name, const char *const *values, int n) {
    hn_sb_addf(&v->code, "array %s[%d] = [", name, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        if (i) hn_sb_addc(&v->code, ',');
        hn_plot_quote(&v->code, values[i]);
    }
    if (n <= 0) hn_sb_adds(&v->code, "''");
    hn_sb_adds(&v->code, "]; ");
}

void hn_plot_var_nums(hn_plot_vars *v, const char *name, const double *x, int n) {
    hn_sb_addf(&v->code, "array %s[%d] = [", name, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) {
        if (i) hn_sb_addc(&v->code, ',');
        add_gp_num(&v->code, x[i]);
    }
    if (n <= 0) hn_sb_adds(&v->code, "0");
    hn_sb_adds(&v->code, "]; ");
}

const char *hn_plot_gnuplot(void) {
    const char *g = getenv("HARNESS_GNUPLOT");
    return g && *g ? g : "gnuplot";
}

char *hn_plot_script(const char *name) {
    const char *root = getenv("HARNESS_ROOT");
    if (!root || !*root) root = HN_SOURCE_DIR;
    return xasprintf("%s/plots/%s", root, name);
}

static int spawn_capture(char *const argv[], hn_sb *output, hn_err *err) {
    return hn_spawn(argv, HN_SPAWN_STDOUT | HN_SPAWN_STDERR, output, err);
}

int hn_plot_have_gnuplot(void) {
    char *argv[] = {(char *)hn_plot_gnuplot(), "--version", NULL};
    return spawn_capture(argv, NULL, NULL) == 0;
}

int hn_plot_run(const char *script, const hn_plot_vars *vars, const char *chart_path, hn_plot_format f,
                int width, int height, int verbose, hn_err *err) {
    char *path = hn_plot_script(script);
    char *dir = hn_dirname(path);
    int rc = -1;
    hn_sb code, out;
    hn_sb_init(&code);
    hn_sb_init(&out);
    if (!hn_file_exists(path)) {
        hn_errf(err, "gnuplot script %s not found (set HARNESS_ROOT to the harness source folder)", path);
        goto done;
    }
    hn_sb_add(&code, vars->code.buf, vars->code.len);
    hn_sb_addf(&code, "term = '%s'; width = %d; height = %d; ", hn_plot_format_ext(f), width, height);
    hn_sb_adds(&code, "outfile = ");
    hn_plot_quote(&code, chart_path);
    hn_sb_adds(&code, "; gpdir = ");
    hn_plot_quote(&code, dir);
    hn_unlink_regular(chart_path);
    char *argv[] = {(char *)hn_plot_gnuplot(), "-d", "-e", code.buf, path, NULL};
    int status = spawn_capture(argv, &out, err);
    if (status < 0) {
        hn_err_prefix(err, "gnuplot not available (install gnuplot, e.g. apt-get install gnuplot-nox)");
        goto done;
    }
    if (status != 0) {
        hn_errf(err, "gnuplot failed on %s (exit %d):\n%s", path, status, out.buf);
        hn_unlink_regular(chart_path); /* a half-drawn chart would pass for a chart */
        goto done;
    }
    struct stat st;
    if (stat(chart_path, &st) != 0 || st.st_size == 0) {
        hn_errf(err, "gnuplot wrote no %s:\n%s", chart_path, out.buf);
        goto done;
    }
    if (verbose && out.len) fprintf(stderr, "gnuplot (%s):\n%s", script, out.buf);
    rc = 0;
done:
    hn_sb_free(&code);
    hn_sb_free(&out);
    free(path);
    free(dir);
    return rc;
}

/* The length of path without its extension (a '.' after the last '/'). */
static size_t stem_len(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (dot && (!slash || dot > slash + 1)) return (size_t)(dot - path);
    return strlen(path);
}

char *hn_plot_dat_path(const char *chart_path) {
    return xasprintf("%.*s.dat", (int)stem_len(chart_path), chart_path);
}

int hn_plot_out_path(const char *out, const char *default_name, int explicit_format, hn_plot_format *fmt,
                     char **chart, hn_err *err) {
    struct stat st;
    size_t n = strlen(out);
    *chart = NULL;
    if (n == 0) return hn_errf(err, "--out: empty path");
    if (out[n - 1] == '/' || (stat(out, &st) == 0 && S_ISDIR(st.st_mode))) {
        *chart = xasprintf("%s%s%s.%s", out, out[n - 1] == '/' ? "" : "/", default_name, hn_plot_format_ext(*fmt));
        return 0;
    }
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) { /* the name as given (and its siblings' too) */
        *chart = xstrdup(out);
        return 0;
    }
    hn_plot_format ext;
    if (hn_plot_format_parse(dot + 1, &ext) != 0)
        return hn_errf(err, "--out %s: a chart ends in .png, .svg or .pdf (or has no extension: the format's is "
                            "added)", out);
    if (explicit_format && ext != *fmt)
        return hn_errf(err, "--out %s does not end in .%s (--format %s)", out, hn_plot_format_ext(*fmt),
                       hn_plot_format_ext(*fmt));
    *fmt = ext;
    *chart = xstrdup(out);
    return 0;
}

char *hn_plot_sibling(const char *chart_path, const char *suffix, hn_plot_format f) {
    size_t n = stem_len(chart_path);
    if (n == strlen(chart_path)) /* a chart named without an extension: its siblings too */
        return xasprintf("%s%s", chart_path, suffix);
    return xasprintf("%.*s%s.%s", (int)n, chart_path, suffix, hn_plot_format_ext(f));
}

/* ---------------------------------------------------------------------- */
/* the command */

typedef struct {
    const hn_cli *cli;
    hn_plot_format format;
    int have_gnuplot;
} plot_ctx;

/* Draws one bar chart and prints its path; returns 0 or 1. */
static int draw_bars(const plot_ctx *pc, const hn_plot_bars *b, const char *chart, const char *what) {
    char *dat = hn_plot_dat_path(chart);
    hn_err err;
    int rc = hn_plot_bars_draw(b, dat, chart, pc->format, pc->cli->verbose, &err);
    if (rc != 0) fprintf(stderr, "harness plot: %s: %s\n", chart, err.msg);
    else if (pc->cli->quiet) printf("%s\n", chart);
    else printf("%s: %s\n", chart, what);
    free(dat);
    return rc != 0;
}

/* Prints what the charts mark, with a few of the reasons. */
static void print_marks(const hn_plot_data *d, const hn_table *t) {
    const int *m = d->n_marks;
    if (!m[HN_MARK_MISMATCH] && !m[HN_MARK_FAILED] && !m[HN_MARK_SKIPPED] && !m[HN_MARK_NONE]) return;
    printf("  marked: %d mismatch (hatched bar, red outline), %d failed (red x at the axis), "
           "%d skipped or not run (grey o at the axis)\n",
           m[HN_MARK_MISMATCH], m[HN_MARK_FAILED], m[HN_MARK_SKIPPED] + m[HN_MARK_NONE]);
    int shown = 0, total = m[HN_MARK_MISMATCH] + m[HN_MARK_FAILED];
    for (int c = 0; c < d->n_shown; c++)
        for (int v = 0; v < d->n_variants; v++) {
            const hn_plot_cell *cell = hn_plot_cell_at(d, d->order[c], v);
            if (cell->mark != HN_MARK_MISMATCH && cell->mark != HN_MARK_FAILED) continue;
            if (shown++ >= 5) continue;
            const char *reason = hn_table_get(t, cell->row, "reason");
            const char *status = hn_table_get(t, cell->row, "status");
            if (cell->mark == HN_MARK_FAILED && (strcmp(status, "ok") == 0 || strcmp(status, "mismatch") == 0)) {
                /* marked failed for want of a time, not for its status */
                const char *ms = hn_table_get(t, cell->row, "time_median_ms");
                printf("    case %s %s: %s but no time (time_median_ms %s%s%s)\n", d->case_ids[d->order[c]],
                       d->variants[v], status, *ms ? "'" : "empty", ms, *ms ? "'" : "");
                continue;
            }
            printf("    case %s %s: %s%s%s\n", d->case_ids[d->order[c]], d->variants[v], status,
                   *reason ? ": " : "", reason);
        }
    if (total > 5) printf("    ... and %d more (the CSV's reason column)\n", total - 5);
}

/* Whether t is the curve of `harness train` (its CSV's columns). */
static int is_train_curve(const hn_table *t) {
    return hn_table_col(t, "split") >= 0 && hn_table_col(t, "step") >= 0 && hn_table_col(t, "loss") >= 0 &&
           hn_table_col(t, "accuracy") >= 0;
}

/* The chart of a training curve: loss and accuracy against the step
 * (plots/train.gp). Returns the exit code. */
static int plot_train(const plot_ctx *pc, const hn_table *t, const char *csv_path, const char *chart) {
    hn_err err;
    hn_sb data[2];
    int n[2] = {0, 0};
    for (int k = 0; k < 2; k++) hn_sb_init(&data[k]);
    for (int r = 0; r < t->n_rows; r++) {
        int k = strcmp(hn_table_get(t, r, "split"), "test") == 0;
        double step = hn_plot_num(hn_table_get(t, r, "step")), loss = hn_plot_num(hn_table_get(t, r, "loss")),
               acc = hn_plot_num(hn_table_get(t, r, "accuracy"));
        if (isnan(step) || isnan(loss)) continue;
        hn_sb_addf(&data[k], "%.17g\t%.9g\t%.6g\n", step, loss > 0 ? loss : NAN, 100 * acc);
        n[k]++;
    }
    int rc = 0;
    char *dat = hn_plot_dat_path(chart), *dir = hn_dirname(chart), *name = hn_stem(csv_path);
    if (n[0] == 0) {
        fprintf(stderr, "harness plot: %s: no training rows to draw\n", csv_path);
        rc = 1;
        goto done;
    }
    hn_sb all;
    hn_sb_init(&all);
    hn_sb_add(&all, data[0].buf, data[0].len);
    hn_sb_adds(&all, "\n\n");
    hn_sb_add(&all, data[1].buf, data[1].len);
    if (hn_mkdirs(dir, &err) != 0 || hn_write_file(dat, all.buf, all.len, &err) != 0) {
        fprintf(stderr, "harness plot: %s\n", err.msg);
        hn_sb_free(&all);
        rc = 1;
        goto done;
    }
    hn_sb_free(&all);
    if (!pc->have_gnuplot) {
        fprintf(stderr, "harness plot: cannot start %s: install gnuplot (e.g. apt-get install gnuplot-nox) "
                        "or set HARNESS_GNUPLOT\n", hn_plot_gnuplot());
        rc = 1;
        goto done;
    }
    hn_plot_vars v;
    hn_plot_vars_init(&v);
    hn_plot_var_str(&v, "datafile", dat);
    hn_plot_var_num(&v, "ntest", n[1]);
    char *title = xasprintf("%s: loss and accuracy against the step", name);
    char *sub = xasprintf("%d training points%s", n[0], n[1] ? ", test set as points" : "");
    hn_plot_var_str(&v, "title", title);
    hn_plot_var_str(&v, "subtitle", sub);
    if (hn_plot_run("train.gp", &v, chart, pc->format, 900, 700, pc->cli->verbose, &err) != 0) {
        fprintf(stderr, "harness plot: %s: %s\n", chart, err.msg);
        rc = 1;
    } else {
        printf(pc->cli->quiet ? "%s\n" : "%s: training loss and accuracy against the step\n", chart);
    }
    free(title);
    free(sub);
    hn_plot_vars_free(&v);
done:
    for (int k = 0; k < 2; k++) hn_sb_free(&data[k]);
    free(dat);
    free(dir);
    free(name);
    return rc;
}

/* Every chart of one results file; chart is the main chart's path. Returns the
 * exit code. */
static int plot_file(const plot_ctx *pc, const char *csv_path, const char *chart) {
    const hn_cli *cli = pc->cli;
    hn_table t;
    hn_err err;
    if (hn_table_load(csv_path, &t, &err) != 0) {
        fprintf(stderr, "harness plot: %s\n", err.msg);
        return 2;
    }
    if (is_train_curve(&t)) {
        /* --sort and --baseline are about cases and variants, which a curve
         * has none of: said, not silently ignored */
        if (cli->sort || cli->baseline) {
            fprintf(stderr, "harness plot: %s is a training curve (harness train): --%s applies to a results file\n",
                    csv_path, cli->sort ? "sort" : "baseline");
            hn_table_free(&t);
            return 2;
        }
        if (cli->log_scale && !cli->quiet)
            printf("  --log: the loss axis of a training curve is always logarithmic, the accuracy's linear\n");
        int trc = plot_train(pc, &t, csv_path, chart);
        hn_table_free(&t);
        return trc;
    }
    hn_plot_data d;
    if (hn_plot_data_build(&d, &t, cli->sort, cli->baseline, &err) != 0) {
        fprintf(stderr, "harness plot: %s: %s\n", csv_path, err.msg);
        hn_table_free(&t);
        return 2;
    }
    if (!pc->have_gnuplot) {
        fprintf(stderr, "harness plot: cannot start %s: install gnuplot (e.g. apt-get install gnuplot-nox) "
                        "or set HARNESS_GNUPLOT\n", hn_plot_gnuplot());
        hn_plot_data_free(&d);
        hn_table_free(&t);
        return 1;
    }
    int rc = 0;
    char *name = hn_stem(csv_path);
    char *dir = hn_dirname(chart);
    char *speedup = hn_plot_sibling(chart, "-speedup", pc->format);
    char *roof = hn_plot_sibling(chart, "-roofline", pc->format);
    hn_plot_bars b;
    if (hn_mkdirs(dir, &err) != 0) {
        fprintf(stderr, "harness plot: %s\n", err.msg);
        rc = 1;
        goto done;
    }
    if (t.n_headers)
        fprintf(stderr, "harness plot: %s: %d line%s repeating the header left out (files joined?)\n", csv_path,
                t.n_headers, t.n_headers == 1 ? "" : "s");
    if (d.n_duplicates)
        fprintf(stderr, "harness plot: %s: %d row%s repeat a (case, variant) seen before: the first is plotted\n",
                csv_path, d.n_duplicates, d.n_duplicates == 1 ? "" : "s");

    if (d.n_shown == 0) {
        printf("%s: nothing to draw: every variant skipped every one of its %d case%s\n", csv_path, d.n_cases,
               d.n_cases == 1 ? "" : "s");
        goto done;
    }
    hn_plot_times_chart(&d, name, cli->log_scale, &b, &err);
    char *what = xasprintf("median time per case%s (%d case%s x %d variant%s, sorted by %s)",
                           halves(&d, (int[2]){0}, (int[2]){0}) < 2 ? "" : ", faster and slower half", d.n_shown, d.n_shown == 1 ? "" : "s",
                           d.n_variants, d.n_variants == 1 ? "" : "s", d.sort_name);
    rc |= draw_bars(pc, &b, chart, what);
    free(what);
    hn_plot_bars_free(&b);

    if (hn_plot_speedup_chart(&d, name, &b, &err) == 0) {
        what = xasprintf("speed-up over %s", d.variants[d.baseline]);
        rc |= draw_bars(pc, &b, speedup, what);
        free(what);
        hn_plot_bars_free(&b);
    } else if (!cli->quiet) {
        printf("  no speed-up chart: %s\n", err.msg);
    }

    char *dat = hn_plot_dat_path(roof);
    int rr = plot_roofline(&d, &t, name, dat, roof, pc->format, cli->verbose, &err);
    free(dat);
    if (rr == 0) printf(cli->quiet ? "%s\n" : "%s: GFLOP/s against arithmetic intensity, with the roofs\n", roof);
    else if (rr > 0 && !cli->quiet) printf("  no roofline: %s\n", err.msg);
    else if (rr < 0) {
        fprintf(stderr, "harness plot: %s: %s\n", roof, err.msg);
        rc = 1;
    }
    if (!cli->quiet) print_marks(&d, &t);
    if (!cli->quiet && d.n_all_skipped)
        printf("  not drawn: %d case%s that every variant skipped (the CSV's reason column says why)\n",
               d.n_all_skipped, d.n_all_skipped == 1 ? "" : "s");
done:
    free(name);
    free(dir);
    free(speedup);
    free(roof);
    hn_plot_data_free(&d);
    hn_table_free(&t);
    return rc;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The CSVs the harness writes beside results that are not results themselves:
 * plot --all passes over them (a check or a profile times nothing; the others
 * have other columns). */
static const char *const NOT_RESULTS[] = {".samples.csv", ".best.csv", ".check.csv", ".profile.csv",
                                          ".lines.csv", ".strategies.csv"};

static int is_results_csv(const char *path) {
    if (!ends_with(path, ".csv")) return 0;
    for (size_t i = 0; i < HN_ARRAY_LEN(NOT_RESULTS); i++)
        if (ends_with(path, NOT_RESULTS[i])) return 0;
    return 1;
}

/* Every results *.csv under dir (is_results_csv), recursively, and the count of the
 * other CSVs passed over in *skipped; symbolic links to folders are not followed. */
static void find_csvs(const char *dir, char ***list, int *n, int *cap, int *skipped) {
    DIR *dp = opendir(dir);
    if (!dp) return;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            find_csvs(path, list, n, cap, skipped);
        } else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && ends_with(path, ".csv")) {
            if (is_results_csv(path)) push_str(list, n, cap, path);
            else if (!ends_with(path, ".samples.csv") && !ends_with(path, ".best.csv")) (*skipped)++;
        }
        free(path);
    }
    closedir(dp);
}

static int plot_all(const plot_ctx *pc) {
    struct stat st;
    if (stat("results", &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "harness plot --all: no results/ folder here (run it from the project root)\n");
        return 2;
    }
    char **list = NULL;
    int n = 0, cap = 0;
    int skipped = 0;
    find_csvs("results", &list, &n, &cap, &skipped);
    if (skipped && !pc->cli->quiet)
        printf("harness plot --all: %d CSV%s of harness check, profile or tune passed over (not results: "
               "plot one by name to draw it)\n", skipped, skipped == 1 ? "" : "s");
    if (n == 0) {
        printf("harness plot --all: no results CSV under results/\n");
        free(list);
        return 0;
    }
    qsort(list, (size_t)n, sizeof *list, cmp_str);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *rel = list[i] + strlen("results/");
        char *chart = xasprintf("plots/%.*s.%s", (int)(strlen(rel) - 4), rel, hn_plot_format_ext(pc->format));
        int r = plot_file(pc, list[i], chart);
        if (r > rc) rc = r;
        free(chart);
    }
    free_strs(list, n);
    return rc == 2 ? 1 : rc; /* some files did plot */
}

int hn_cmd_plot(const hn_cli *cli) {
    plot_ctx pc = {.cli = cli, .format = HN_FMT_PNG, .have_gnuplot = hn_plot_have_gnuplot()};
    if (cli->format && hn_plot_format_parse(cli->format, &pc.format) != 0) {
        fprintf(stderr, "harness plot: --format %s: expected png, svg or pdf\n", cli->format);
        return 2;
    }
    if (cli->all) {
        if (cli->config || cli->out) {
            fprintf(stderr, "harness plot: --all plots every CSV under results/ into plots/; "
                            "it takes no file and no --out\n");
            return 2;
        }
        return plot_all(&pc);
    }
    if (!cli->config) {
        fprintf(stderr, "harness plot: missing the results file (harness plot RESULTS.csv, or harness plot --all)\n");
        return 2;
    }
    if (!hn_file_exists(cli->config)) {
        fprintf(stderr, "harness plot: %s: no such file\n", cli->config);
        return 2;
    }
    if (hn_file_is_json(cli->config)) {
        fprintf(stderr, "harness plot: %s is a config, not a results CSV: harness run %s writes its results "
                        "(results/<name>.csv), which plot draws\n", cli->config, cli->config);
        return 2;
    }
    char *chart;
    char *stem = hn_stem(cli->config);
    if (cli->out) {
        /* The format follows --out's extension unless --format says otherwise. */
        hn_err err;
        int orc = hn_plot_out_path(cli->out, stem, cli->format != NULL, &pc.format, &chart, &err);
        if (orc != 0) {
            fprintf(stderr, "harness plot: %s\n", err.msg);
            free(stem);
            return 2;
        }
    } else {
        chart = xasprintf("plots/%s.%s", stem, hn_plot_format_ext(pc.format));
    }
    free(stem);
    int rc = plot_file(&pc, cli->config, chart);
    free(chart);
    return rc;
}
