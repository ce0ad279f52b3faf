/*
 * rows.h: the rows of a results file as (case, slot) of a plan, for the readers
 * that must know which row is which: --resume, the row order of a run with
 * several devices, and `harness merge`.
 *
 * A row belongs to (case, slot) when its case column is a case of the plan, its
 * axis columns hold that case's values, and its variant names the slot (a
 * variant's label or a baseline's name). The plan order of rows is the order a
 * single worker writes them: by case, then the baselines, then the variants.
 */
#ifndef HN_ROWS_H
#define HN_ROWS_H

#include <stdint.h>

#include "config.h"
#include "csv.h"

/* Finds row i of t in p: 0 with *c and *slot, -1 when it is no row of p. */
int hn_rows_locate(const hn_plan *p, const hn_table *t, int i, int64_t *c, int *slot);

/* The status word of row i as an hn_status, or -1. */
int hn_rows_status(const hn_table *t, int i);

/* Writes the header of t and its rows rows[0..n) to path (atomically: a
 * temporary file renamed over it), in plan order: rows[k] is at (cases[k],
 * slots[k]). */
int hn_rows_write_sorted(const char *path, const hn_plan *p, const hn_table *t, const int *rows, const int64_t *cases,
                         const int *slots, int n, hn_err *err);

/* Rewrites the results file at path in plan order (a run with several devices
 * writes rows as they finish). Rows that are no row of p keep their place at the
 * end. */
int hn_rows_sort_file(const char *path, const hn_plan *p, hn_err *err);

#endif
