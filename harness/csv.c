/* csv.c: see csv.h. */
#include "csv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct hn_csv {
    FILE *f;
    int owns;
    char **columns;
    char **fields;
    int n;
};

void hn_csv_quote(hn_sb *sb, const char *field) {
    if (!field) return;
    if (!strpbrk(field, ",\"\r\n")) {
        hn_sb_adds(sb, field);
        return;
    }
    hn_sb_addc(sb, '"');
    for (const char *p = field; *p; p++) {
        if (*p == '"') hn_sb_addc(sb, '"');
        hn_sb_addc(sb, *p);
    }
    hn_sb_addc(sb, '"');
}

/* A writer on f (NULL: detached); writes the header when header is set and
 * returns NULL if that write fails. */
static hn_csv *csv_new(FILE *f, int owns, const char *const *columns, int n, int header) {
    hn_csv *c = xcalloc(1, sizeof *c);
    c->f = f;
    c->owns = owns;
    c->n = n;
    c->columns = xcalloc((size_t)n, sizeof *c->columns);
    c->fields = xcalloc((size_t)n, sizeof *c->fields);
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) {
        c->columns[i] = xstrdup(columns[i]);
        if (i) hn_sb_addc(&sb, ',');
        hn_csv_quote(&sb, columns[i]);
    }
    hn_sb_addc(&sb, '\n');
    int ok = !f || !header || (fputs(sb.buf, f) >= 0 && fflush(f) == 0);
    hn_sb_free(&sb);
    if (!ok) {
        c->owns = 0;
        hn_csv_close(c);
        return NULL;
    }
    return c;
}

int hn_csv_open(const char *path, const char *const *columns, int n_columns, hn_csv **out,
                hn_err *err) {
    *out = NULL;
    FILE *f = fopen(path, "w");
    if (!f) return hn_errf(err, "%s: cannot create: %s", path, strerror(errno));
    *out = csv_new(f, 1, columns, n_columns, 1);
    if (!*out) {
        int e = errno;
        fclose(f);
        return hn_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

int hn_csv_append(const char *path, const char *const *columns, int n_columns, hn_csv **out,
                  hn_err *err) {
    *out = NULL;
    FILE *f = fopen(path, "a+");
    if (!f) return hn_errf(err, "%s: cannot open for appending: %s", path, strerror(errno));
    /* Rows go only under their own header: a file of other columns (another
     * config's results under the same name) is left as it is. An empty file
     * gets the header; a last row cut short (a process killed while writing
     * it) is ended, so the next row starts a line of its own. */
    hn_sb want;
    hn_sb_init(&want);
    for (int i = 0; i < n_columns; i++) {
        if (i) hn_sb_addc(&want, ',');
        hn_csv_quote(&want, columns[i]);
    }
    hn_sb_addc(&want, '\n');
    char *have = xmalloc(want.len + 1);
    rewind(f);
    size_t got = fread(have, 1, want.len, f);
    int rc = 0, header = got == 0;
    if (got > 0 && (got != want.len || memcmp(have, want.buf, want.len) != 0))
        rc = hn_errf(err, "%s: its header is not that of these results (other columns: another config's file of "
                          "the same name?); it is left as it is: remove it or write elsewhere",
                     path);
    int c = EOF;
    if (rc == 0 && got > 0 && fseek(f, -1, SEEK_END) == 0) c = fgetc(f);
    fseek(f, 0, SEEK_END); /* from reading to writing: a positioning call between them */
    if (rc == 0 && got > 0 && c != '\n' && (fputc('\n', f) == EOF || fflush(f) != 0))
        rc = hn_errf(err, "%s: cannot write: %s", path, strerror(errno));
    free(have);
    hn_sb_free(&want);
    if (rc != 0) {
        fclose(f);
        return -1;
    }
    *out = csv_new(f, 1, columns, n_columns, header);
    if (!*out) {
        int e = errno;
        fclose(f);
        return hn_errf(err, "%s: cannot write: %s", path, strerror(e));
    }
    return 0;
}

hn_csv *hn_csv_detached(const char *const *columns, int n_columns) {
    return csv_new(NULL, 0, columns, n_columns, 0);
}

hn_csv *hn_csv_wrap(FILE *f, const char *const *columns, int n_columns) {
    return csv_new(f, 0, columns, n_columns, 1);
}

int hn_csv_column(const hn_csv *c, const char *name) {
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->columns[i], name) == 0) return i;
    return -1;
}

void hn_csv_set(hn_csv *c, int column, const char *value) {
    if (column < 0 || column >= c->n) return;
    free(c->fields[column]);
    c->fields[column] = value ? xstrdup(value) : NULL;
}

static void csv_vsetf(hn_csv *c, int column, const char *fmt, va_list ap) {
    if (column < 0 || column >= c->n) return;
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_vaddf(&sb, fmt, ap);
    free(c->fields[column]);
    c->fields[column] = hn_sb_detach(&sb);
}

void hn_csv_setf(hn_csv *c, int column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    csv_vsetf(c, column, fmt, ap);
    va_end(ap);
}

void hn_csv_set_named(hn_csv *c, const char *name, const char *value) {
    hn_csv_set(c, hn_csv_column(c, name), value);
}

void hn_csv_setf_named(hn_csv *c, const char *name, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    csv_vsetf(c, hn_csv_column(c, name), fmt, ap);
    va_end(ap);
}

char *hn_csv_take_row(hn_csv *c) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < c->n; i++) {
        if (i) hn_sb_addc(&sb, ',');
        hn_csv_quote(&sb, c->fields[i]);
        free(c->fields[i]);
        c->fields[i] = NULL;
    }
    return hn_sb_detach(&sb);
}

int hn_csv_write_line(hn_csv *c, const char *line, hn_err *err) {
    if (!c->f) return hn_errf(err, "cannot write a CSV row: the writer has no file");
    size_t n = strlen(line);
    int ok = fwrite(line, 1, n, c->f) == n && fputc('\n', c->f) != EOF && fflush(c->f) == 0;
    return ok ? 0 : hn_errf(err, "cannot write a CSV row: %s", strerror(errno));
}

int hn_csv_write_row(hn_csv *c, hn_err *err) {
    char *line = hn_csv_take_row(c);
    int rc = hn_csv_write_line(c, line, err);
    free(line);
    return rc;
}

void hn_csv_close(hn_csv *c) {
    if (!c) return;
    if (c->owns && c->f) fclose(c->f);
    for (int i = 0; i < c->n; i++) {
        free(c->columns[i]);
        free(c->fields[i]);
    }
    free(c->columns);
    free(c->fields);
    free(c);
}

/* ---------------------------------------------------------------------- */
/* reader */

typedef struct {
    char **v;
    int n, cap;
} strvec;

static void strvec_push(strvec *s, char *x) {
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = xrealloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x;
}

/* Parses one record starting at *p; advances past its line end. */
static int parse_record(const char **p, strvec *fields, int *line, const char *name, hn_err *err) {
    const char *s = *p;
    hn_sb f;
    hn_sb_init(&f);
    for (;;) {
        hn_sb_reset(&f);
        if (*s == '"') {
            const char *open = s++;
            for (;;) {
                if (!*s) {
                    hn_sb_free(&f);
                    hn_errf(err, "%s:%d: unterminated quoted field", name, *line);
                    /* -2: the field opened on the file's last line, which a
                     * writer killed mid-row leaves (not a stray quote) */
                    return strchr(open, '\n') ? -1 : -2;
                }
                if (*s == '"') {
                    if (s[1] == '"') {
                        hn_sb_addc(&f, '"');
                        s += 2;
                        continue;
                    }
                    s++;
                    break;
                }
                if (*s == '\n') (*line)++;
                hn_sb_addc(&f, *s++);
            }
        } else {
            while (*s && *s != ',' && *s != '\n' && *s != '\r') hn_sb_addc(&f, *s++);
        }
        strvec_push(fields, xstrdup(f.buf));
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r') s++;
        if (*s == '\n') s++;
        break;
    }
    hn_sb_free(&f);
    (*line)++;
    *p = s;
    return 0;
}

int hn_table_parse(const char *text, const char *name, hn_table *t, hn_err *err) {
    memset(t, 0, sizeof *t);
    const char *p = text;
    int line = 1;
    strvec header = {0};
    /* a UTF-8 byte-order mark (spreadsheets write one) is not part of the
     * first column's name */
    if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
        p += 3;
    if (!*p) return hn_errf(err, "%s: empty file (no header)", name);
    if (parse_record(&p, &header, &line, name, err) != 0) return -1;
    t->header = header.v;
    t->n_cols = header.n;
    int cap = 0;
    while (*p) {
        if (*p == '\n' || (*p == '\r' && p[1] == '\n')) { /* blank line */
            p += *p == '\r' ? 2 : 1;
            line++;
            continue;
        }
        int at = line;
        strvec fields = {0};
        int prc = parse_record(&p, &fields, &line, name, err);
        if (prc != 0) {
            for (int i = 0; i < fields.n; i++) free(fields.v[i]);
            free(fields.v);
            if (prc == -2) { /* a last row cut short inside a quoted field: not a row */
                t->cut_tail = 1;
                break;
            }
            hn_table_free(t);
            return -1;
        }
        /* The header again: CSV files joined with cat. The same header is
         * left out (and counted); another one would put every later field
         * under the wrong name, so it is refused. */
        if (fields.n > 0 && header.n > 0 && *header.v[0] && strcmp(fields.v[0], header.v[0]) == 0) {
            int same = fields.n == header.n;
            for (int i = 0; same && i < fields.n; i++) same = strcmp(fields.v[i], header.v[i]) == 0;
            for (int i = 0; i < fields.n; i++) free(fields.v[i]);
            free(fields.v);
            if (same) {
                t->n_headers++;
                continue;
            }
            hn_table_free(t);
            return hn_errf(err,
                           "%s:%d: a second header, with other columns than the first (CSV files of different "
                           "configs joined?): plot or compare each file on its own",
                           name, at);
        }
        if (fields.n > t->n_cols) {
            for (int i = 0; i < fields.n; i++) free(fields.v[i]);
            free(fields.v);
            hn_table_free(t);
            return hn_errf(err, "%s:%d: %d fields, but the header has %d", name, at, fields.n,
                           header.n);
        }
        int n_read = fields.n;
        while (fields.n < t->n_cols) strvec_push(&fields, xstrdup(""));
        if (t->n_rows == cap) {
            cap = cap ? cap * 2 : 64;
            t->rows = xrealloc(t->rows, (size_t)cap * sizeof *t->rows);
            t->n_read = xrealloc(t->n_read, (size_t)cap * sizeof *t->n_read);
        }
        t->n_read[t->n_rows] = n_read;
        t->rows[t->n_rows++] = fields.v;
    }
    return 0;
}

int hn_table_load(const char *path, hn_table *t, hn_err *err) {
    char *text;
    memset(t, 0, sizeof *t);
    if (hn_read_file(path, &text, NULL, err) != 0) return -1;
    int rc = hn_table_parse(text, path, t, err);
    free(text);
    return rc;
}

void hn_table_free(hn_table *t) {
    if (!t) return;
    for (int r = 0; r < t->n_rows; r++) {
        for (int c = 0; c < t->n_cols; c++) free(t->rows[r][c]);
        free(t->rows[r]);
    }
    for (int c = 0; c < t->n_cols; c++) free(t->header[c]);
    free(t->rows);
    free(t->n_read);
    free(t->header);
    memset(t, 0, sizeof *t);
}

int hn_table_row_cut(const hn_table *t, int row) {
    return t->n_read && row >= 0 && row < t->n_rows && t->n_read[row] < t->n_cols;
}

int hn_table_col(const hn_table *t, const char *name) {
    for (int c = 0; c < t->n_cols; c++)
        if (strcmp(t->header[c], name) == 0) return c;
    return -1;
}

const char *hn_table_get(const hn_table *t, int row, const char *name) {
    int c = hn_table_col(t, name);
    return c < 0 || row < 0 || row >= t->n_rows ? "" : t->rows[row][c];
}
