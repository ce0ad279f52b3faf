/*
 * csv.h: writing and reading results files.
 *
 * Writer: the header is fixed at open; each row is filled by column and written
 * and flushed as soon as it is complete, so a crash leaves a valid file of the
 * rows done. Fields are quoted (RFC 4180) only when they hold a comma, a quote, or
 * a line break; empty means "not applicable".
 *
 * Reader: loads a whole file into a table of strings (header + rows); every row
 * has exactly the header's number of fields (short rows are padded with "",
 * long ones are an error naming the line).
 */
#ifndef HN_CSV_H
#define HN_CSV_H

#include <stdio.h>

#include "util.h"

typedef struct hn_csv hn_csv;

/* Creates path and writes the header (an error if it cannot be written). */
int hn_csv_open(const char *path, const char *const *columns, int n_columns, hn_csv **out,
                hn_err *err);
/* Opens path to append rows under a header it already has. */
int hn_csv_append(const char *path, const char *const *columns, int n_columns, hn_csv **out,
                  hn_err *err);
/* A row builder without a file: rows come out of hn_csv_take_row. */
hn_csv *hn_csv_detached(const char *const *columns, int n_columns);
/* Wraps an already open stream (not closed by hn_csv_close). */
hn_csv *hn_csv_wrap(FILE *f, const char *const *columns, int n_columns);
int hn_csv_column(const hn_csv *c, const char *name); /* index or -1 */
void hn_csv_set(hn_csv *c, int column, const char *value);
void hn_csv_setf(hn_csv *c, int column, const char *fmt, ...) HN_PRINTF(3, 4);
/* Sets by column name; ignored if there is no such column. */
void hn_csv_set_named(hn_csv *c, const char *name, const char *value);
void hn_csv_setf_named(hn_csv *c, const char *name, const char *fmt, ...) HN_PRINTF(3, 4);
/* Writes the row, flushes, and clears every field. */
int hn_csv_write_row(hn_csv *c, hn_err *err);
/* The row as one line (no newline), clearing every field; caller frees. */
char *hn_csv_take_row(hn_csv *c);
/* Writes a line made by hn_csv_take_row (with the same columns) and flushes. */
int hn_csv_write_line(hn_csv *c, const char *line, hn_err *err);
void hn_csv_close(hn_csv *c);

/* Appends field to sb, quoted if needed. */
void hn_csv_quote(hn_sb *sb, const char *field);

typedef struct {
    char **header;
    int n_cols;
    char ***rows;   /* rows[r][c], never NULL */
    int n_rows;
    int *n_read;    /* [r]: the fields row r had; fewer than n_cols when it was cut short (padded with "") */
    int cut_tail;   /* 1: the file ended inside a quoted field of a last row, which is left out */
    int n_headers;  /* lines that repeated the header exactly (files joined with cat), left out */
} hn_table;

int hn_table_load(const char *path, hn_table *t, hn_err *err);
int hn_table_parse(const char *text, const char *name, hn_table *t, hn_err *err);
void hn_table_free(hn_table *t);
int hn_table_col(const hn_table *t, const char *name);
/* Whether row r had fewer fields than the header (a writer killed mid-row). */
int hn_table_row_cut(const hn_table *t, int row); /* index or -1 */
/* The field, or "" when the column does not exist. */
const char *hn_table_get(const hn_table *t, int row, const char *name);

#endif
