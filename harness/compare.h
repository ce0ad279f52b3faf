/*
 * compare.h: `harness compare RESULTS.csv --by COLUMN`: the rows of a results
 * file that differ only in COLUMN, side by side in time and accuracy.
 *
 * Rows are grouped by the columns that say what was run: case, the axes,
 * label, variant, kernel, the defines, backend, device, arch. COLUMN and the
 * columns that follow from it are left out of the key:
 *
 *   --by variant                 variant, kernel and the defines (a variant
 *                                fixes them): the variants of each case pair up
 *   --by kernel                  kernel and variant
 *   --by a define (ACCUM_DTYPE)  the define and variant (the variant's name
 *                                spells its defines): float and double rows of
 *                                the same kernel and case pair up
 *   --by an axis (img_size)      the axis, case and label
 *   --by backend|device|arch     all three
 *
 * The measurement columns (status onwards) are never part of the key. In each
 * group every value of COLUMN has at most one row (a repeat is ignored and
 * counted). Rows with an empty COLUMN (the cuBLAS rows for a define) take no
 * part. Rows whose status is neither ok nor mismatch are kept in their group
 * but have no time; they are listed as excluded with their reason.
 *
 * ratio = a row's time_median_ms / the baseline value's in the same group.
 * Summaries cover the compared groups (those where at least two values have a
 * row): the geometric mean of the ratio over the groups where both have a
 * time, the worst max_abs_err and max_rel_err and the lowest match_fraction
 * over the rows with a time, and how often each value is the fastest (among
 * the ok rows of a group: a wrong result never wins).
 */
#ifndef HN_COMPARE_H
#define HN_COMPARE_H

#include <stdio.h>

#include "csv.h"
#include "plot.h"
#include "util.h"

/* The column naming each row's file when several runs are compared
 * (harness compare A.csv B.csv). */
#define HN_COMPARE_RUN_COL "run"

typedef struct {
    char *name;             /* the COLUMN value, e.g. "double" */
    int n_ratio;            /* groups where it and the baseline both have a time */
    double geomean_ratio;   /* geometric mean of the ratio over them; NAN when n_ratio == 0 */
    double worst_abs_err;   /* NAN when no row has one */
    double worst_rel_err;
    double min_match;       /* lowest match_fraction; NAN when none */
    int n_fastest;          /* compared groups where its ok row is the fastest */
    int n_timed;            /* rows with a time in compared groups */
    int n_mismatch;         /* ... of which status mismatch */
} hn_compare_value;

typedef struct {
    int *rows;              /* [n_values] table row, -1 when none */
    int first_row;          /* the group's first row in the file */
    int n_present;          /* values with a row */
    char *title;            /* "case 3: 128x128x32 -> 512, f:9x9" or the key axes */
    char *extra;            /* the rest of the key, e.g. "kernel=... TILE_SIZE=16"; "" when none */
    char *label;            /* x label of the chart */
    char *case_id;
} hn_compare_group;

typedef struct {
    const hn_table *t;      /* not owned; must outlive the comparison */
    char *by;
    int by_col;
    int baseline;           /* index into values */
    int n_values;
    hn_compare_value *values;
    int n_groups;           /* compared groups only (>= 2 values present), file order */
    hn_compare_group *groups;
    int n_single;           /* groups with one value only: not compared */
    int single_example;     /* a row of such a group, -1 when none */
    int n_novalue;          /* rows with an empty COLUMN */
    int novalue_example;    /* one of them, -1 when none */
    int n_duplicates;       /* rows repeating a (group, value) */
    int *excluded;          /* rows of compared groups with status neither ok nor mismatch */
    int *excluded_group;    /* [i]: the group of excluded[i] */
    int brief;              /* set by the caller (--quiet): hn_compare_print leaves out the
                             * per-group tables and the excluded rows' list */
    int n_excluded;
    const char *unit;       /* "case" when every group is a distinct case, else "group" */
} hn_compare;

/*
 * Builds the comparison of t by column `by`. baseline: a value of that column
 * (NULL: the first value in the file). Returns -1 with err (c left empty) when
 * t is not a results file, `by` is not a column that says what was run, or the
 * baseline is not one of its values.
 */
int hn_compare_build(hn_compare *c, const hn_table *t, const char *by, const char *baseline, hn_err *err);
void hn_compare_free(hn_compare *c); /* NULL-safe */

/* The median time of value v in group g (ms); NAN when there is none. */
double hn_compare_time(const hn_compare *c, int g, int v);
/* time(g, v) / time(g, baseline); NAN when either is missing. */
double hn_compare_ratio(const hn_compare *c, int g, int v);
/* exp(mean(log x)) over the finite positive x; NAN when there is none. */
double hn_compare_geomean(const double *x, int n);
/* One line: "double: 2.31x slower than float (geometric mean over 20 cases),
 * max abs error 3.1e-06 vs 1.2e-03" (no newline). */
void hn_compare_verdict(const hn_compare *c, int v, hn_sb *out);
/* The tables (of the groups where some row has a time), the summary, the
 * excluded rows (10, then counts per status) and the verdicts. */
void hn_compare_print(const hn_compare *c, const char *name, FILE *f);
/* The chart: time ratio, max_abs_err and max_rel_err per group, one bar per
 * value; the groups where some row has a time, ordered by the baseline's
 * time. Caller frees b. */
void hn_compare_chart(const hn_compare *c, const char *name, hn_plot_bars *b);

#endif
