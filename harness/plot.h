/*
 * plot.h: charts of a results CSV, drawn by gnuplot (`harness plot`).
 *
 * Three layers:
 *
 *   hn_plot_data   the results table seen as a grid of cases x variants: one
 *                  cell per (case, variant) with its median time and a mark
 *                  (ok, mismatch, failed, skipped, none), the cases sorted by
 *                  one variant's time (or a numeric column) and split at the
 *                  midpoint into a faster and a slower half.
 *   hn_plot_bars   a bar chart in 1-3 panels stacked vertically: per panel a
 *                  list of cases (x labels), per case one bar per series. It
 *                  is written as a tab-separated data file (one gnuplot
 *                  "index" block per panel) and drawn by plots/bars.gp. The
 *                  main chart, the speed-up chart and `harness compare`'s chart
 *                  are all hn_plot_bars.
 *   hn_plot_run    runs gnuplot on a script from plots/ with variables set by
 *                  -e assignments. gnuplot is started with posix_spawnp, never
 *                  through a shell; every string handed to it is a single-quoted
 *                  gnuplot literal (no substitution happens inside those) and
 *                  labels travel in the data file, not in code.
 *
 * Marks: a bar is drawn for "ok" (solid) and "mismatch" (the time of a wrong
 * result: hatched, red outline); "failed" (compile or launch error: no time) is
 * a red x at the axis, "skipped" (the variant does not apply, or over the
 * emulator's budget) and "none" (no row for this case) a grey circle at the
 * axis. Nothing is dropped silently.
 *
 * The scripts are found in $HARNESS_ROOT/plots, else <source dir>/plots.
 * Data files are kept next to the charts (<chart stem>.dat) so a chart can be
 * checked or redrawn by hand.
 */
#ifndef HN_PLOT_H
#define HN_PLOT_H

#include "csv.h"
#include "util.h"


typedef enum {
    HN_MARK_OK,        /* a time, output matched */
    HN_MARK_MISMATCH,  /* a time, output wrong */
    HN_MARK_FAILED,    /* no time: compile_error, launch_error, anything unknown */
    HN_MARK_SKIPPED,   /* no time: status skipped */
    HN_MARK_NONE,      /* no row at all */
    HN_MARK_COUNT
} hn_plot_mark;

/* "ok", "mismatch", "failed", "skipped", "none": the words in the data files. */
const char *hn_plot_mark_name(hn_plot_mark m);
/* The mark of a row from its status column and whether it has a time. */
hn_plot_mark hn_plot_mark_of(const char *status, int has_time);

/* Parses a number field; NAN when empty or not a number. */
double hn_plot_num(const char *field);

/* ---------------------------------------------------------------------- */
/* a results table as cases x variants */

typedef struct {
    int row;            /* table row, -1 when there is none */
    hn_plot_mark mark;
    double ms;          /* time_median_ms; NAN when none */
    double q1, q3;      /* time_q1_ms, time_q3_ms; NAN when none */
} hn_plot_cell;

typedef struct {
    int n_cases, n_variants;
    char **case_ids;        /* [n_cases] the "case" field (the label when there is no case column) */
    char **labels;          /* [n_cases] the "label" field (the case id when empty) */
    char **variants;        /* [n_variants] file order, except the vendor baseline, which is last */
    hn_plot_cell *cells;    /* [n_cases * n_variants], cell (c, v) at c * n_variants + v */
    int n_shown;            /* cases drawn: all but those every variant skipped */
    int n_all_skipped;      /* cases where every cell is skipped or none: counted, not drawn */
    int *order;             /* [n_shown] case indices, ascending by sort key, no key last */
    int split;              /* order[0 .. split) is the faster half, order[split ..) the slower */
    int n_keyed;            /* order[0 .. n_keyed) have a sort key (the others have no time, last) */
    char *sort_name;        /* the variant or column sorted by */
    int sort_is_variant;
    int baseline;           /* variant index of the speed-up baseline */
    int n_duplicates;       /* rows repeating a (case, variant) already seen: ignored */
    int n_marks[HN_MARK_COUNT]; /* over the cells of the drawn cases */
    char *device, *backend, *arch, *timing; /* from the first row having each; "" when none */
} hn_plot_data;

/*
 * Builds d from a results table. sort: a variant name or a numeric column (NULL:
 * the first variant in the file that is not the vendor baseline). baseline: the
 * variant the speed-up chart divides by (NULL: the vendor baseline rows when
 * present, else the first variant). A numeric column's key for a case is its
 * value in the row of the first variant, else the first row of the case that
 * has one. Cases that every variant skipped are left out of order (and
 * counted). Split: n_shown / 2 (the seed notebook's midpoint); with one case
 * there is one panel. d owns copies of every string; t can be
 * freed afterwards. Returns -1 with err (nothing to free) on a table that is
 * not a results file or an unknown sort/baseline.
 */
int hn_plot_data_build(hn_plot_data *d, const hn_table *t, const char *sort, const char *baseline,
                       hn_err *err);
void hn_plot_data_free(hn_plot_data *d); /* NULL-safe; leaves d zeroed */
const hn_plot_cell *hn_plot_cell_at(const hn_plot_data *d, int c, int v);

/* The second title line of a chart: "NVIDIA H200, backend cuda, sm_90, cold
 * L2", or "CPU-emulated times (backend emu): not GPU performance" for the
 * emulator. Any argument may be NULL or "". Caller frees. */
char *hn_plot_context(const char *device, const char *backend, const char *arch, const char *timing);

/* ---------------------------------------------------------------------- */
/* bar charts */

typedef enum { HN_FMT_PNG, HN_FMT_SVG, HN_FMT_PDF } hn_plot_format;

/* "png" | "svg" | "pdf" (case-insensitive); -1 when s is none of them. */
int hn_plot_format_parse(const char *s, hn_plot_format *f);
const char *hn_plot_format_ext(hn_plot_format f); /* "png", "svg", "pdf" */
/* The chart path of `--out OUT` (plot, compare): OUT itself when it ends in
 * .png, .svg or .pdf (which sets *fmt; one that contradicts an explicit
 * --format is refused); OUT as given when it has no extension (the sibling
 * charts then have none either); DEFAULT_NAME.<ext> inside OUT when OUT is a folder (ends in '/' or is
 * one). Another extension is refused. *fmt holds --format's value (or png) on
 * entry; explicit_format says whether --format was given. 0, or -1 with err. */
int hn_plot_out_path(const char *out, const char *default_name, int explicit_format, hn_plot_format *fmt,
                     char **chart, hn_err *err);

#define HN_PLOT_MAX_PANELS 3

typedef struct {
    char *title;
    char *ylabel;
    int log_y;
    double hline;           /* a dashed reference line at this y; NAN: none */
    char *hline_title;
    int whiskers;           /* draw lo..hi as whiskers */
    int n_cases;
    char **case_ids;        /* [n_cases] */
    char **labels;          /* [n_cases] x labels */
    double *value;          /* [n_cases * n_series]; NAN: no bar */
    double *lo, *hi;        /* [n_cases * n_series]; NAN: no whisker */
    hn_plot_mark *mark;     /* [n_cases * n_series] */
} hn_plot_panel;

typedef struct {
    char *title;            /* first title line */
    char *subtitle;         /* second title line: device, backend (hn_plot_context) */
    char *note;             /* third title line: what is drawn; NULL for none */
    char *xlabel;           /* under the last panel */
    int n_series;
    char **series;          /* [n_series] legend names */
    int *color;             /* [n_series] palette index: 0 grey (a baseline), 1.. colors */
    int n_panels;
    hn_plot_panel panels[HN_PLOT_MAX_PANELS];
    int width, height;      /* pixels (png, svg); pdf is 1 inch per 100 px */
} hn_plot_bars;

/* Sets up b with n_series series (names copied, colors 1..n) and no panels. */
void hn_plot_bars_init(hn_plot_bars *b, const char *const *series, int n_series);
/* Adds a panel of n_cases cases, every cell NAN/none; returns it. At most
 * HN_PLOT_MAX_PANELS. Strings are copied. */
hn_plot_panel *hn_plot_bars_panel(hn_plot_bars *b, const char *title, const char *ylabel, int n_cases);
void hn_plot_panel_set_case(hn_plot_panel *p, int c, const char *case_id, const char *label);
void hn_plot_bars_free(hn_plot_bars *b); /* NULL-safe */

/* Writes b's data file (tab-separated, a commented header naming the columns,
 * one index block per panel: pos, case, label, then per series value, lo, hi,
 * mark). */
int hn_plot_bars_write_data(const hn_plot_bars *b, const char *dat_path, hn_err *err);
/* Writes the data file and draws the chart with plots/bars.gp. */
int hn_plot_bars_draw(const hn_plot_bars *b, const char *dat_path, const char *chart_path,
                      hn_plot_format f, int verbose, hn_err *err);

/* The time chart of d (faster and slower half; always succeeds) and the
 * speed-up chart (the baseline's time / each other variant's; -1 with err, and
 * nothing to free, when the file has one variant only). name goes into the
 * titles. On success the caller frees b with hn_plot_bars_free. */
int hn_plot_times_chart(const hn_plot_data *d, const char *name, int log_y, hn_plot_bars *b, hn_err *err);
int hn_plot_speedup_chart(const hn_plot_data *d, const char *name, hn_plot_bars *b, hn_err *err);

/* ---------------------------------------------------------------------- */
/* gnuplot */

/* Variable assignments for a script, rendered as gnuplot code for -e. */
typedef struct {
    hn_sb code;
} hn_plot_vars;

void hn_plot_vars_init(hn_plot_vars *v);
void hn_plot_vars_free(hn_plot_vars *v);
/* name = 'value' (quotes doubled, control characters as spaces). */
void hn_plot_var_str(hn_plot_vars *v, const char *name, const char *value);
void hn_plot_var_num(hn_plot_vars *v, const char *name, double x); /* NaN for a NAN */
void hn_plot_var_strs(hn_plot_vars *v, const char *name, const char *const *values, int n);
void hn_plot_var_nums(hn_plot_vars *v, const char *name, const double *x, int n);
/* Appends s to out as a single-quoted gnuplot string literal. */
void hn_plot_quote(hn_sb *out, const char *s);

/* The gnuplot program: $HARNESS_GNUPLOT, else "gnuplot" on the PATH. */
const char *hn_plot_gnuplot(void);
/* 1 if gnuplot can be started (it answers --version), else 0. */
int hn_plot_have_gnuplot(void);
/* The full path of plots/<name>; caller frees. */
char *hn_plot_script(const char *name);
/*
 * Runs gnuplot -d -e "<vars> term=...; outfile=...; width=...; height=...;
 * gpdir=..." plots/<script>. Its output is kept and printed on failure, or
 * always when verbose. Fails when gnuplot cannot be started, exits non-zero,
 * or leaves chart_path missing or empty.
 */
int hn_plot_run(const char *script, const hn_plot_vars *vars, const char *chart_path, hn_plot_format f,
                int width, int height, int verbose, hn_err *err);

/* The chart path with its extension replaced by ".dat" (or ".dat" appended);
 * caller frees. */
char *hn_plot_dat_path(const char *chart_path);
/* chart_path less its extension, + suffix + "." + ext; caller frees. */
char *hn_plot_sibling(const char *chart_path, const char *suffix, hn_plot_format f);

#endif
