/*
 * config.c: JSON -> hn_plan; see config.h. Sampling and enumeration of cases are
 * in sweep.c.
 */
#define _GNU_SOURCE
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "tune/strategy.h"
#include "tune/tune.h"

/* ---------------------------------------------------------------------- */
/* error helpers: every message is "<file>: <json path>: <problem>" */

typedef struct {
    const char *file;
    hn_err *err;
    const hn_op *op; /* once known: its choices make a hint for an unquoted one */
} ctx;

static int bad(ctx *c, const char *jpath, const char *fmt, ...) HN_PRINTF(3, 4);

/* A string from the config in a message: its start when it is long, so that the
 * message keeps its end (the problem). The buffer lives until the end of the
 * enclosing block. */
#define CUT(s) hn_excerpt((s), (char[96]){0}, 96)

/* Axes, and defines with tunables per variant: each is a column of the results
 * and a name every expression may use; far beyond a sweep's needs, there so that
 * a hostile config ends in an error, not in minutes of name matching. */
#define MAX_NAMES 16384

static int bad(ctx *c, const char *jpath, const char *fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char where[256]; /* a path holds the config's keys, which may be long */
    if (jpath && *jpath)
        return hn_errf(c->err, "%s: %s: %s", c->file, hn_excerpt(jpath, where, sizeof where), msg);
    return hn_errf(c->err, "%s: %s", c->file, msg);
}

static const char *json_type(const cJSON *j) {
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "something else";
}

static char *jp(const char *base, const char *key) {
    return base && *base ? xasprintf("%s.%s", base, key) : xstrdup(key);
}

static char *jpi(const char *base, int i) {
    return xasprintf("%s[%d]", base, i);
}

static int edit_distance(const char *a, const char *b) {
    int n = (int)strlen(a), m = (int)strlen(b);
    if (n > 40 || m > 40) return 99;
    int d[41][41];
    for (int i = 0; i <= n; i++) d[i][0] = i;
    for (int j = 0; j <= m; j++) d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
            d[i][j] = v;
        }
    return d[n][m];
}

typedef struct {
    const char *text;
    int at;
} text_at;

/* By text, then position. */
static int cmp_text_at(const void *a, const void *b) {
    const text_at *x = a, *y = b;
    int d = strcmp(x->text, y->text);
    return d ? d : (x->at > y->at) - (x->at < y->at);
}

/* The position of the first of texts[0..n) that repeats an earlier one, or n:
 * sorted, so that a hostile list of a million is checked in a second. */
static int first_repeat(const char *const *texts, int n) {
    text_at *sorted = xmalloc((size_t)(n ? n : 1) * sizeof *sorted);
    for (int i = 0; i < n; i++) sorted[i] = (text_at){texts[i], i};
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_text_at);
    int repeat = n;
    for (int k = 1; k < n; k++)
        if (strcmp(sorted[k].text, sorted[k - 1].text) == 0 && sorted[k].at < repeat) repeat = sorted[k].at;
    free(sorted);
    return repeat;
}

/* Fails on a key that obj gives twice (comments are gone by now). */
static int check_unique(ctx *c, const cJSON *obj, const char *jpath) {
    int n = cJSON_GetArraySize(obj);
    const char **keys = xmalloc((size_t)(n ? n : 1) * sizeof *keys);
    const cJSON *k = obj->child;
    for (int i = 0; i < n; i++, k = k->next) keys[i] = k->string;
    int repeat = first_repeat(keys, n);
    if (repeat < n) {
        char *where = jp(jpath, keys[repeat]);
        bad(c, where, "duplicate key (a JSON object may give a key only once)");
        free(where);
    }
    free(keys);
    return repeat < n ? -1 : 0;
}

/* Fails on a duplicate key, or on any key of obj not in allowed (NULL-terminated). */
static int check_keys(ctx *c, const cJSON *obj, const char *jpath, const char *const *allowed) {
    if (check_unique(c, obj, jpath) != 0) return -1;
    for (const cJSON *k = obj->child; k; k = k->next) {
        int ok = strncmp(k->string, "//", 2) == 0; /* "//": a comment */
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(k->string, *a) == 0) ok = 1;
        if (ok) continue;
        hn_sb list;
        hn_sb_init(&list);
        const char *best = NULL;
        int best_d = 3;
        for (const char *const *a = allowed; *a; a++) {
            hn_sb_addf(&list, "%s%s", a == allowed ? "" : ", ", *a);
            int d = edit_distance(k->string, *a);
            if (d < best_d) best_d = d, best = *a;
        }
        char *where = jp(jpath, k->string);
        if (best)
            bad(c, where, "unknown key (did you mean '%s'? expected one of: %s)", best, list.buf);
        else
            bad(c, where, "unknown key (expected one of: %s)", list.buf);
        free(where);
        hn_sb_free(&list);
        return -1;
    }
    return 0;
}

static int is_identifier(const char *s) {
    if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* A JSON number as an hn_value: integers stay exact. */
static hn_value number_value(const cJSON *j) {
    double d = j->valuedouble;
    hn_value v;
    if (d == floor(d) && fabs(d) < 9.0e15) {
        v.type = HN_VAL_INT;
        v.i = (int64_t)d;
    } else {
        v.type = HN_VAL_FLOAT;
        v.f = d;
    }
    return v;
}

/* Text of an expression given as a JSON number or string. */
static char *expr_text(ctx *c, const cJSON *j, const char *jpath) {
    if (cJSON_IsString(j)) return xstrdup(j->valuestring);
    if (cJSON_IsNumber(j)) {
        hn_value v = number_value(j);
        char buf[64];
        hn_value_format(&v, buf, sizeof buf);
        return xstrdup(buf);
    }
    bad(c, jpath, "expected a number or an expression string, got %s", json_type(j));
    return NULL;
}

/* Names an expression may use, for validation at load time. */
typedef struct {
    const char *const *sets[5];
    const int *counts[5];
    int n_sets;
    const char *bad_name;
} name_check;

const char *const hn_device_names[] = {"max_threads_per_block", "max_shared_per_block", "max_shared_per_block_optin",
                                       "warp_size", "sm_count", "max_block_dim_x", "max_block_dim_y", "max_block_dim_z",
                                       NULL};
static const int n_device_names = 8;

static int known_name(void *p, const char *name) {
    name_check *nc = p;
    for (int s = 0; s < nc->n_sets; s++)
        for (int i = 0; i < *nc->counts[s]; i++)
            if (strcmp(nc->sets[s][i], name) == 0) return 0;
    nc->bad_name = name;
    return -1;
}

typedef struct {
    const char **axis_names;
    int n_axes;
    const char **param_names;
    int n_params;
    const char **define_names; /* of the current spec (or all, for tolerances) */
    int n_defines;
} name_sets;

/* A hint for a name that is the value of one of the operator's choices (layout
 * NHWC): in an expression a string is quoted ("\"NHWC\"" in the JSON), so an
 * unquoted one is taken for a name. Static storage. */
static const char *choice_hint(const ctx *c, const char *name) {
    static char hint[160];
    for (int i = 0; c->op && i < c->op->n_params; i++) {
        const hn_op_param *prm = &c->op->params[i];
        for (int k = 0; prm->type == 'c' && prm->choices && prm->choices[k]; k++)
            if (strcmp(prm->choices[k], name) == 0) {
                snprintf(hint, sizeof hint, "; '%s' is a value of %s: a string in an expression is quoted, \"\\\"%s\\\"\"",
                         name, prm->name, name);
                return hint;
            }
    }
    return "";
}

/* Parses an expression field and checks its names; which: bit 1 axes, 2 params,
 * 4 defines, 8 the device's limits. */
static int parse_field(ctx *c, const cJSON *j, const char *jpath, const name_sets *ns, int which,
                       hn_expr **out) {
    *out = NULL;
    char *text = expr_text(c, j, jpath);
    if (!text) return -1;
    hn_err e;
    char quoted[128]; /* a hostile text may be long; the message keeps its start */
    hn_excerpt(text, quoted, sizeof quoted);
    if (hn_expr_parse(text, out, &e) != 0) {
        bad(c, jpath, "in '%s': %s", quoted, e.msg);
        free(text);
        return -1;
    }
    name_check nc = {.n_sets = 0};
    if (which & 1) nc.sets[nc.n_sets] = ns->axis_names, nc.counts[nc.n_sets++] = &ns->n_axes;
    if (which & 2) nc.sets[nc.n_sets] = ns->param_names, nc.counts[nc.n_sets++] = &ns->n_params;
    if (which & 4) nc.sets[nc.n_sets] = ns->define_names, nc.counts[nc.n_sets++] = &ns->n_defines;
    if (which & 8) nc.sets[nc.n_sets] = hn_device_names, nc.counts[nc.n_sets++] = &n_device_names;
    if (hn_expr_names(*out, known_name, &nc) != 0) {
        hn_sb names;
        hn_sb_init(&names);
        for (int s = 0; s < nc.n_sets; s++)
            for (int i = 0; i < *nc.counts[s]; i++) {
                /* once each: an axis and a parameter often share a name (in_ch) */
                int seen = 0;
                for (int t = 0; t <= s && !seen; t++)
                    for (int k = 0; k < (t < s ? *nc.counts[t] : i) && !seen; k++)
                        seen = strcmp(nc.sets[t][k], nc.sets[s][i]) == 0;
                if (!seen) hn_sb_addf(&names, "%s%s", names.len ? ", " : "", nc.sets[s][i]);
            }
        bad(c, jpath, "in '%s': unknown name '%s' (known here: %s)%s", quoted, CUT(nc.bad_name),
            names.len ? names.buf : "none", choice_hint(c, nc.bad_name));
        hn_sb_free(&names);
        hn_expr_free(*out);
        *out = NULL;
        free(text);
        return -1;
    }
    free(text);
    return 0;
}

/* A variant's precision: an expression over the names of the variant
 * ("ACCUM_DTYPE"), or a precision written as a plain word. "precision": "double"
 * reads naturally but, as an expression, names nothing; the words are taken as
 * the precision they spell (fp64 is "double", ...), and another word that names
 * nothing is refused with the accepted values. */
static int parse_precision(ctx *c, const cJSON *j, const char *jpath, const name_sets *ns, hn_expr **out) {
    static const struct {
        const char *word, *precision;
    } WORDS[] = {{"float", "float"},       {"fp32", "float"},     {"float32", "float"}, {"single", "float"},
                 {"double", "double"},     {"fp64", "double"},    {"float64", "double"},
                 {"half", "half"},         {"fp16", "half"},      {"float16", "half"},  {"__half", "half"},
                 {"bfloat16", "bfloat16"}, {"bf16", "bfloat16"},  {"__nv_bfloat16", "bfloat16"},
                 {"tf32", "tf32"}};
    if (cJSON_IsString(j)) {
        const char *w = j->valuestring;
        int is_name = 0;
        for (int i = 0; i < ns->n_axes; i++) is_name |= strcmp(ns->axis_names[i], w) == 0;
        for (int i = 0; i < ns->n_params; i++) is_name |= strcmp(ns->param_names[i], w) == 0;
        for (int i = 0; i < ns->n_defines; i++) is_name |= strcmp(ns->define_names[i], w) == 0;
        for (size_t k = 0; !is_name && k < HN_ARRAY_LEN(WORDS); k++)
            if (strcmp(w, WORDS[k].word) == 0) {
                char *lit = xasprintf("\"%s\"", WORDS[k].precision);
                hn_err e;
                int rc = hn_expr_parse(lit, out, &e);
                free(lit);
                if (rc != 0) return bad(c, jpath, "%s", e.msg);
                return 0;
            }
        int word = *w != 0;
        for (const char *q = w; *q; q++) word &= isalnum((unsigned char)*q) || *q == '_';
        if (word && !is_name)
            return bad(c, jpath,
                       "'%s' is not a precision: give float, double, half, bfloat16 or tf32 (fp32, fp64, fp16 and "
                       "bf16 are taken too), or an expression over the defines such as \"ACCUM_DTYPE\"",
                       CUT(w));
    }
    return parse_field(c, j, jpath, ns, 7, out);
}

static int names_something(void *ctx, const char *name) {
    (void)ctx, (void)name;
    return -1;
}
static int no_lookup(void *ctx, const char *name, hn_value *out) {
    (void)ctx, (void)name, (void)out;
    return -1;
}

/* A tolerance (check.atol, check.<output>.rtol ...): parse_field, and one that
 * names nothing ("-1e-4", "1 / 0") is evaluated now, so that a value no row
 * could use is an error of the config, not a mismatch in every row. One that
 * names the case or a define is checked per row (hn_check_outputs). */
static int parse_tol(ctx *c, const cJSON *j, const char *jpath, const name_sets *ns, hn_expr **out) {
    if (parse_field(c, j, jpath, ns, 7, out) != 0) return -1;
    if (hn_expr_names(*out, names_something, NULL) != 0) return 0;
    double v;
    hn_err e;
    char quoted[128];
    hn_excerpt(hn_expr_text(*out), quoted, sizeof quoted);
    if (hn_expr_eval_double(*out, no_lookup, NULL, &v, &e) != 0) return bad(c, jpath, "in '%s': %s", quoted, e.msg);
    if (!(v >= 0))
        return bad(c, jpath, "'%s' = %g: a tolerance must be at least 0 (an element matches when |out - ref| <= "
                             "atol + rtol * |ref|)",
                   quoted, v);
    return 0;
}

/* A list of expressions: one string/number, or an array of them. */
static int parse_expr_list(ctx *c, const cJSON *j, const char *jpath, const name_sets *ns,
                           int which, hn_expr ***out, int *n) {
    *out = NULL;
    *n = 0;
    if (!j) return 0;
    if (!cJSON_IsArray(j)) {
        *out = xcalloc(1, sizeof **out);
        if (parse_field(c, j, jpath, ns, which, &(*out)[0]) != 0) {
            free(*out);
            *out = NULL;
            return -1;
        }
        *n = 1;
        return 0;
    }
    int count = cJSON_GetArraySize(j);
    *out = xcalloc((size_t)(count ? count : 1), sizeof **out);
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char *p = jpi(jpath, i);
        int rc = parse_field(c, e, p, ns, which, &(*out)[i]);
        free(p);
        if (rc != 0) return -1;
        (*n)++;
    }
    return 0;
}

/* A name or a value that goes into results and onto command lines: not empty,
 * and no control character (a newline would split a -D option or a CSV row). */
static int printable_line(const char *text) {
    if (!*text) return 0;
    for (const unsigned char *q = (const unsigned char *)text; *q; q++)
        if (*q < 0x20 || *q == 0x7f) return 0;
    return 1;
}

static int parse_axis_values(ctx *c, const cJSON *j, const char *jpath, hn_axis *ax) {
    const cJSON *arr = j;
    if (cJSON_IsNumber(j) || cJSON_IsString(j)) arr = NULL; /* a single value */
    else if (!cJSON_IsArray(j))
        return bad(c, jpath, "expected a value or an array of values, got %s%s", json_type(j),
                   cJSON_GetObjectItemCaseSensitive(j, "range") || cJSON_GetObjectItemCaseSensitive(j, "pow2")
                       ? " ({\"range\": ...} and {\"pow2\": ...} are for a variant's tunables, \"tune\"; list "
                         "the values here)"
                       : "");
    int n = arr ? cJSON_GetArraySize(arr) : 1;
    if (n == 0) return bad(c, jpath, "expected at least one value, got an empty array");
    ax->values = xcalloc((size_t)n, sizeof *ax->values);
    ax->texts = xcalloc((size_t)n, sizeof *ax->texts);
    const cJSON *e = arr ? arr->child : j;
    for (int i = 0; i < n; i++, e = e->next) {
        char *p = arr ? jpi(jpath, i) : xstrdup(jpath);
        if (cJSON_IsNumber(e)) {
            ax->values[i] = number_value(e);
            char buf[64];
            hn_value_format(&ax->values[i], buf, sizeof buf);
            ax->texts[i] = xstrdup(buf);
        } else if (cJSON_IsString(e) && printable_line(e->valuestring)) {
            ax->texts[i] = xstrdup(e->valuestring);
            ax->values[i].type = HN_VAL_STR;
            ax->values[i].s = ax->texts[i];
        } else {
            if (cJSON_IsString(e) && e->valuestring[0])
                bad(c, p, "a string with a control character (a newline, a tab ...): a value is one line of text");
            else
                bad(c, p, "expected a number or a non-empty string, got %s", json_type(e));
            free(p);
            ax->n = i;
            return -1;
        }
        free(p);
        ax->n = i + 1;
    }
    int repeat = first_repeat((const char *const *)ax->texts, n); /* a value given twice */
    if (repeat < n) {
        char *p = arr ? jpi(jpath, repeat) : xstrdup(jpath);
        bad(c, p, "value %s appears twice", CUT(ax->texts[repeat]));
        free(p);
        return -1;
    }
    return 0;
}

static void axis_free(hn_axis *ax) {
    for (int i = 0; i < ax->n; i++) free(ax->texts[i]);
    free(ax->texts);
    free(ax->values);
    free(ax->name);
}

/* ---------------------------------------------------------------------- */
/* variants */

/* A kernel name is pasted into generated C++ (the emulator's launch wrappers)
 * and handed to NVRTC as a name expression, so it must be a name and nothing
 * else:
 *   kernel := name [ '<' arg { ',' arg } '>' ]
 *   name   := [ '::' ] ident { '::' ident }
 *   arg    := number | name [ '<' arg { ',' arg } '>' ]
 * (spaces allowed between tokens). Returns NULL when text is one, else why not. */
static const char *kname_args(const char **p, int depth);

static void kname_space(const char **p) {
    while (**p == ' ') (*p)++;
}

static const char *kname_name(const char **p) {
    kname_space(p);
    if ((*p)[0] == ':' && (*p)[1] == ':') *p += 2;
    for (;;) {
        if (!(isalpha((unsigned char)**p) || **p == '_')) return "a name must start with a letter or '_'";
        while (isalnum((unsigned char)**p) || **p == '_') (*p)++;
        if ((*p)[0] == ':' && (*p)[1] == ':') {
            *p += 2;
            continue;
        }
        return NULL;
    }
}

static const char *kname_arg(const char **p, int depth) {
    kname_space(p);
    const char *s = *p;
    if (*s == '-' || *s == '+' || isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
        if (*s == '-' || *s == '+') s++;
        if (!isdigit((unsigned char)*s) && *s != '.') return "a template argument must be a name or a number";
        while (isalnum((unsigned char)*s) || *s == '.' ||
               ((*s == '+' || *s == '-') && (s[-1] == 'e' || s[-1] == 'E')))
            s++; /* 12, 0x1f, 1.5e-3f, 7u */
        *p = s;
        return NULL;
    }
    const char *why = kname_name(p);
    if (why) return "a template argument must be a name or a number";
    kname_space(p);
    if (**p == '<' && (why = kname_args(p, depth + 1)) != NULL) return why;
    /* a type of several words ("unsigned int", "long long", "const float *") */
    for (;;) {
        kname_space(p);
        if (**p == '*' || **p == '&') {
            (*p)++;
            continue;
        }
        if (!(isalpha((unsigned char)**p) || **p == '_')) return NULL;
        if ((why = kname_name(p)) != NULL) return why;
    }
}

static const char *kname_args(const char **p, int depth) {
    if (depth > 8) return "template arguments nested too deeply";
    (*p)++; /* '<' */
    kname_space(p);
    if (**p == '>') { /* "relu<>": every template argument its default */
        (*p)++;
        return NULL;
    }
    for (;;) {
        const char *why = kname_arg(p, depth);
        if (why) return why;
        kname_space(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p == '>') {
            (*p)++;
            return NULL;
        }
        return "expected ',' or '>' in the template arguments";
    }
}

static const char *kernel_name_error(const char *text) {
    if (strlen(text) > 512) return "longer than 512 characters";
    const char *p = text;
    const char *why = kname_name(&p);
    if (why) return why;
    kname_space(&p);
    if (*p == '<') {
        why = kname_args(&p, 0);
        if (why) return why;
        kname_space(&p);
    }
    return *p ? "unexpected characters after the name" : NULL;
}

static const char *const VARIANT_KEYS[] = {"name", "file", "kernel", "defines", "block", "grid",
                                           "shared_bytes", "where", "args", "include_dirs",
                                           "options", "precision", "tune", "restrict", "zero", "scratch", "constants",
                                           "launches", NULL};

/* The keys of one of "launches", and those the variant then leaves to them. */
static const char *const LAUNCH_KEYS[] = {"kernel", "block", "grid", "shared_bytes", "args", "//", NULL};

/* Looks a key up in the variant, then in the config's "defaults". */
static const cJSON *vget(const cJSON *v, const cJSON *defaults, const char *key) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, key);
    if (!j && defaults) j = cJSON_GetObjectItemCaseSensitive(defaults, key);
    return j;
}

static int parse_string_list(ctx *c, const cJSON *j, const char *jpath, char ***out, int *n) {
    *out = NULL;
    *n = 0;
    if (!j) return 0;
    if (!cJSON_IsArray(j)) return bad(c, jpath, "expected an array of strings, got %s", json_type(j));
    *out = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof **out);
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        if (!cJSON_IsString(e)) {
            char *p = jpi(jpath, i);
            bad(c, p, "expected a string, got %s", json_type(e));
            free(p);
            return -1;
        }
        (*out)[(*n)++] = xstrdup(e->valuestring);
    }
    return 0;
}

/* The index of the scratch buffer of s that j (a string) names, or -1. */
static int scratch_index(const hn_variant_spec *s, const cJSON *j) {
    for (int k = 0; cJSON_IsString(j) && k < s->n_scratch; k++)
        if (strcmp(s->scratch_names[k], j->valuestring) == 0) return k;
    return -1;
}

/* "zero": the output buffers (and scratch buffers) the harness sets to 0 before
 * every launch, by name. */
static int parse_zero(ctx *c, const hn_op *op, const hn_variant_spec *s, const cJSON *j, const char *jpath,
                      uint64_t *mask) {
    *mask = 0;
    if (!j) return 0;
    const int one = cJSON_IsString(j); /* "zero": "loss" is ["loss"] */
    if (!one && !cJSON_IsArray(j))
        return bad(c, jpath, "expected an array of the output buffers to set to 0 before every launch, got %s",
                   json_type(j));
    int i = 0;
    for (const cJSON *e = one ? j : j->child; e; e = one ? NULL : e->next, i++) {
        char *p = one ? xstrdup(jpath) : jpi(jpath, i);
        const int sc = scratch_index(s, e);
        if (sc >= 0) {
            *mask |= HN_ZERO_SCRATCH(sc);
            free(p);
            continue;
        }
        const int b = cJSON_IsString(e) ? hn_op_buffer_index(op, e->valuestring) : -1;
        int rc = 0;
        if (b < 0 || op->buffers[b].role != HN_BUF_OUT) {
            hn_sb outs;
            hn_sb_init(&outs);
            for (int k = 0; k < op->n_buffers; k++)
                if (op->buffers[k].role == HN_BUF_OUT) hn_sb_addf(&outs, "%s%s", outs.len ? ", " : "", op->buffers[k].name);
            for (int k = 0; k < s->n_scratch; k++) hn_sb_addf(&outs, ", scratch %s", s->scratch_names[k]);
            if (!cJSON_IsString(e))
                rc = bad(c, p, "expected the name of an output buffer, got %s (%s's outputs: %s)", json_type(e),
                         op->name, outs.buf);
            else if (b < 0)
                rc = bad(c, p, "'%s' is not a buffer of %s (its outputs: %s)", CUT(e->valuestring), op->name,
                         outs.buf);
            else if (op->buffers[b].role == HN_BUF_INOUT)
                rc = bad(c, p, "'%s' is an input and output of %s: its generated input is restored before every "
                               "launch, so it cannot be set to 0 (outputs that can: %s)",
                         CUT(e->valuestring), op->name, outs.len ? outs.buf : "none");
            else
                rc = bad(c, p, "'%s' is an input of %s: only outputs are set to 0 (%s)", CUT(e->valuestring),
                         op->name, outs.len ? outs.buf : "none");
            hn_sb_free(&outs);
        } else if (b >= HN_ZERO_BUFFERS) {
            rc = bad(c, p, "'%s' is buffer %d of %s: zero takes the first %d only", CUT(e->valuestring), b, op->name,
                     HN_ZERO_BUFFERS);
        }
        free(p);
        if (rc != 0) return -1;
        *mask |= (uint64_t)1 << b;
    }
    return 0;
}

/* "scratch": {"name": bytes expression, ...}: buffers of the variant that its
 * args may bind by name. */
static int parse_scratch(ctx *c, const hn_plan *plan, hn_variant_spec *s, const cJSON *j, const char *jpath,
                         const name_sets *ns) {
    if (!j) return 0;
    if (!cJSON_IsObject(j))
        return bad(c, jpath, "expected an object of scratch buffers, name: bytes (an expression), got %s",
                   json_type(j));
    for (const cJSON *e = j->child; e; e = e->next) {
        char *p = jp(jpath, e->string);
        const char *name = e->string;
        int rc = 0;
        if (s->n_scratch == HN_MAX_SCRATCH)
            rc = bad(c, p, "more than %d scratch buffers", HN_MAX_SCRATCH);
        else if (!is_identifier(name))
            rc = bad(c, p, "'%s' is not a valid name (letters, digits and _)", CUT(name));
        else if (hn_op_buffer_index(plan->op, name) >= 0)
            rc = bad(c, p, "'%s' is already a buffer of %s", CUT(name), plan->op->name);
        else if (hn_op_param_index(plan->op, name) >= 0)
            rc = bad(c, p, "'%s' is already a parameter of %s", CUT(name), plan->op->name);
        else if (strcmp(name, "debug_counter") == 0)
            rc = bad(c, p, "'debug_counter' is the harness's own argument");
        for (int i = 0; rc == 0 && i < ns->n_axes; i++)
            if (strcmp(ns->axis_names[i], name) == 0) rc = bad(c, p, "'%s' is already an axis", CUT(name));
        for (int i = 0; rc == 0 && i < ns->n_defines; i++)
            if (strcmp(ns->define_names[i], name) == 0) rc = bad(c, p, "'%s' is already a define", CUT(name));
        for (int i = 0; rc == 0 && i < s->n_scratch; i++)
            if (strcmp(s->scratch_names[i], name) == 0) rc = bad(c, p, "'%s' is given twice", CUT(name));
        if (rc == 0) rc = parse_field(c, e, p, ns, 7, &s->scratch_bytes[s->n_scratch]);
        free(p);
        if (rc != 0) return -1;
        s->scratch_names[s->n_scratch++] = xstrdup(name);
    }
    return 0;
}

static int parse_value(ctx *c, const hn_plan *plan, const hn_variant_spec *s, const cJSON *j, const char *p,
                       const name_sets *ns, hn_arg *a, int depth);
static const char *kname_name(const char **p);

/* Frees what an argument owns (a struct's fields too) and empties it. */
static void arg_free(hn_arg *a) {
    for (int i = 0; i < a->n_fields; i++) arg_free(&a->fields[i]);
    free(a->fields);
    hn_expr_free(a->expr);
    free(a->text);
    free(a->where);
    memset(a, 0, sizeof *a);
}

/* "constants": {"SYMBOL": binding, ...}: module-scope variables of the
 * variant's file (a __constant__ filter, a __device__ scalar) written before a
 * row's first launch, as cudaMemcpyToSymbol did in the author's host code. A
 * binding is an input buffer of the operator (its contents), a parameter or a
 * typed expression (its value, "int: K / 2"). */
static int parse_constants(ctx *c, const hn_plan *plan, hn_variant_spec *s, const cJSON *j, const char *jpath,
                           const name_sets *ns) {
    if (!j) return 0;
    if (!cJSON_IsObject(j))
        return bad(c, jpath,
                   "expected an object of module variables, \"SYMBOL\": an input buffer, a parameter or a typed "
                   "expression (\"int: K / 2\"), got %s",
                   json_type(j));
    for (const cJSON *e = j->child; e; e = e->next) {
        char *p = jp(jpath, e->string);
        const char *name = e->string, *end = name;
        const char *why = kname_name(&end);
        int rc = 0;
        if (!why && *end) why = "unexpected characters after the name";
        if (s->n_constants == HN_MAX_CONSTANTS)
            rc = bad(c, p, "more than %d constants", HN_MAX_CONSTANTS);
        else if (why)
            rc = bad(c, p, "'%s' is not the C++ name of a variable (such as \"F\" or \"ns::F\"): %s", CUT(name),
                     why);
        for (int i = 0; rc == 0 && i < s->n_constants; i++)
            if (strcmp(s->const_names[i], name) == 0) rc = bad(c, p, "'%s' is given twice", CUT(name));
        char *val = cJSON_IsString(e) ? xstrdup(e->valuestring) : NULL;
        for (int i = 0; rc == 0 && val && i < s->n_scratch; i++)
            if (strcmp(hn_trim(val), s->scratch_names[i]) == 0)
                rc = bad(c, p,
                         "'%s' is a scratch buffer of the variant, which holds nothing before the launches: a "
                         "constant gets an input buffer's contents, a parameter or a typed expression",
                         s->scratch_names[i]);
        free(val);
        hn_arg *a = &s->const_vals[s->n_constants];
        memset(a, 0, sizeof *a);
        if (rc == 0) rc = parse_value(c, plan, s, e, p, ns, a, 0);
        if (rc == 0 && a->kind == HN_ARG_BUFFER && a->expr)
            rc = bad(c, p, "'%s': a constant gets a whole buffer's contents; an offset into a buffer is for args",
                     CUT(a->text));
        if (rc == 0 && a->kind == HN_ARG_SCRATCH)
            rc = bad(c, p, "'%s' is a scratch buffer: a constant gets an input buffer's contents or a value (a struct "
                           "with a scratch buffer as a field passes its address)",
                     CUT(a->text));
        if (rc == 0 && a->kind == HN_ARG_DEBUG_COUNTER)
            rc = bad(c, p, "debug_counter is a kernel argument of debug runs, not a constant");
        if (rc == 0 && a->kind == HN_ARG_BUFFER && plan->op->buffers[a->index].role != HN_BUF_IN)
            rc = bad(c, p,
                     "'%s' is an output of %s: a constant gets an input's contents before the launches (a kernel "
                     "cannot write __constant__ memory)",
                     CUT(a->text), plan->op->name);
        free(p);
        if (rc != 0) {
            arg_free(a);
            return -1;
        }
        s->const_names[s->n_constants++] = xstrdup(name);
    }
    return 0;
}

static int parse_dims(ctx *c, const cJSON *j, const char *jpath, const name_sets *ns,
                      hn_expr *dims[3]) {
    if (!j) return bad(c, jpath, "missing (expected an array of 1 to 3 expressions, x first)");
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > 3)
        return bad(c, jpath, "expected an array of 1 to 3 expressions (x, y, z), got %s",
                   json_type(j));
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char *p = jpi(jpath, i);
        int rc = parse_field(c, e, p, ns, 7, &dims[i]);
        free(p);
        if (rc != 0) return -1;
    }
    for (; i < 3; i++) hn_expr_parse("1", &dims[i], NULL);
    return 0;
}

/* The typed arguments' names ("int: K / 2"), the first of each code its own. */
static const struct {
    const char *name;
    char code;
} TYPES[] = {{"int", 'i'}, {"int32", 'i'}, {"unsigned", 'u'}, {"uint32", 'u'}, {"long", 'l'},
             {"int64", 'l'}, {"float", 'f'}, {"double", 'd'}, {"bool", 'b'}};

const char *hn_arg_type_name(char type) {
    for (size_t i = 0; i < HN_ARRAY_LEN(TYPES); i++)
        if (TYPES[i].code == type) return TYPES[i].name;
    return type == 'o' ? "struct" : type == 'p' ? "pointer" : "?";
}

int hn_arg_type_size(char type) {
    return type == 'p' || type == 'l' || type == 'd' ? 8 : type == 'b' ? 1 : 4;
}

static int parse_arg(ctx *c, const hn_op *op, const hn_variant_spec *spec, const cJSON *j, const char *jpath,
                     const name_sets *ns, hn_arg *a) {
    if (!cJSON_IsString(j))
        return bad(c, jpath, "expected a string (a buffer, a parameter, or 'type: expression'), got %s",
                   json_type(j));
    const char *s = j->valuestring;
    a->text = xstrdup(s);
    const char *colon = strchr(s, ':');
    if (colon) {
        char *type = xstrndup(s, (size_t)(colon - s));
        char *t = hn_trim(type);
        a->type = 0;
        for (size_t i = 0; i < HN_ARRAY_LEN(TYPES); i++)
            if (strcmp(t, TYPES[i].name) == 0) a->type = TYPES[i].code;
        if (!a->type) {
            bad(c, jpath, "unknown argument type '%s' (expected int, unsigned, long, float, double or bool)", CUT(t));
            free(type);
            return -1;
        }
        free(type);
        a->kind = HN_ARG_EXPR;
        cJSON tmp = {0};
        tmp.type = cJSON_String;
        tmp.valuestring = (char *)(colon + 1);
        return parse_field(c, &tmp, jpath, ns, 7, &a->expr);
    }
    if (strcmp(s, "debug_counter") == 0) {
        a->kind = HN_ARG_DEBUG_COUNTER;
        a->type = 'p';
        return 0;
    }
    const char *plus = strchr(s, '+');
    if (plus) { /* "y + 256": a pointer into buffer y, an expression of elements on */
        char *name = xstrndup(s, (size_t)(plus - s));
        const int bi = hn_op_buffer_index(op, hn_trim(name));
        free(name);
        if (bi >= 0) {
            a->kind = HN_ARG_BUFFER;
            a->index = bi;
            a->type = 'p';
            a->where = xasprintf("%s: %s", c->file, jpath);
            cJSON tmp = {0};
            tmp.type = cJSON_String;
            tmp.valuestring = (char *)(plus + 1);
            return parse_field(c, &tmp, jpath, ns, 7, &a->expr);
        }
    }
    int b = hn_op_buffer_index(op, s);
    if (b >= 0) {
        a->kind = HN_ARG_BUFFER;
        a->index = b;
        a->type = 'p';
        return 0;
    }
    int p = hn_op_param_index(op, s);
    if (p >= 0) {
        a->kind = HN_ARG_PARAM;
        a->index = p;
        a->type = op->params[p].type;
        return 0;
    }
    hn_sb names;
    hn_sb_init(&names);
    for (int i = 0; i < op->n_buffers; i++) hn_sb_addf(&names, "%s%s", i ? ", " : "", op->buffers[i].name);
    hn_sb_adds(&names, "; parameters: ");
    for (int i = 0; i < op->n_params; i++) hn_sb_addf(&names, "%s%s", i ? ", " : "", op->params[i].name);
    if (spec && spec->n_scratch) {
        hn_sb_adds(&names, "; the variant's scratch buffers: ");
        for (int i = 0; i < spec->n_scratch; i++) hn_sb_addf(&names, "%s%s", i ? ", " : "", spec->scratch_names[i]);
    }
    bad(c, jpath,
        "unknown argument '%s' (%s buffers: %s; or debug_counter; or a typed expression such as "
        "'int: TILE_SIZE * 2')",
        CUT(s), op->name, names.buf);
    hn_sb_free(&names);
    return -1;
}

/* Adds an include folder, resolved from the config's folder (as every path in a
 * config is) and made absolute, so compiles and cache keys do not depend on
 * where harness was started. */
static int add_include_dir(ctx *c, const hn_plan *plan, hn_variant_spec *s, const char *dir,
                           const char *jpath) {
    char *joined = hn_path_join(plan->dir, dir);
    char *abs = realpath(joined, NULL);
    if (!abs) {
        bad(c, jpath, "include folder '%s' not found (looked for %s)", CUT(dir), CUT(joined));
        free(joined);
        return -1;
    }
    struct stat st;
    if (stat(abs, &st) != 0 || !S_ISDIR(st.st_mode)) {
        bad(c, jpath, "'%s' is not a folder (looked at %s): an include path names the folder that holds headers",
            CUT(dir), CUT(abs));
        free(joined);
        free(abs);
        return -1;
    }
    free(joined);
    s->include_dirs = xrealloc(s->include_dirs, (size_t)(s->n_include_dirs + 2) * sizeof *s->include_dirs);
    s->include_dirs[s->n_include_dirs++] = abs;
    s->include_dirs[s->n_include_dirs] = NULL;
    return 0;
}

/* The NVRTC options of a variant. Include folders (-I<dir>, -I <dir>,
 * --include-path=<dir>) join include_dirs, resolved from the config's folder
 * like every other path, so both backends use them and their headers are part
 * of the cache key; the other options are kept in order (the emulator honours
 * -D and -U among them and ignores the rest). Takes ownership of opts. */
static int split_options(ctx *c, const hn_plan *plan, hn_variant_spec *s, char **opts, int n,
                         const char *jpath) {
    int rc = 0;
    s->options = xcalloc((size_t)n + 1, sizeof *s->options);
    for (int i = 0; i < n && rc == 0; i++) {
        const char *o = opts[i], *dir = NULL;
        int at = i; /* the entry that names the folder, for messages */
        if (strcmp(o, "-I") == 0 || strcmp(o, "--include-path") == 0) {
            if (i + 1 == n) {
                char *ip = jpi(jpath, i);
                rc = bad(c, ip, "'%s' needs a folder after it", CUT(o));
                free(ip);
                break;
            }
            dir = opts[++i];
            at = i;
        } else if (strncmp(o, "-I", 2) == 0) {
            dir = o + 2;
        } else if (strncmp(o, "--include-path=", 15) == 0) {
            dir = o + 15;
        } else {
            s->options[s->n_options++] = xstrdup(o);
            continue;
        }
        char *ip = jpi(jpath, at);
        rc = *dir ? add_include_dir(c, plan, s, dir, ip) : bad(c, ip, "'%s' names no folder", CUT(o));
        free(ip);
    }
    for (int i = 0; i < n; i++) free(opts[i]);
    free(opts);
    return rc;
}

/* The most values one tunable may have. */
#define HN_TUNE_MAX_VALUES 4096

/* One tunable's values: a list, {"range": [lo, hi, step]} (hi included), or
 * {"pow2": [lo, hi]} (the powers of two from lo to hi); numbers or strings. */
static int tune_values(ctx *c, const cJSON *j, const char *jpath, hn_axis *ax) {
    if (!cJSON_IsObject(j)) return parse_axis_values(c, j, jpath, ax);
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "range");
    const cJSON *p2 = cJSON_GetObjectItemCaseSensitive(j, "pow2");
    static const char *const KEYS[] = {"range", "pow2", NULL};
    if (check_keys(c, j, jpath, KEYS) != 0) return -1;
    const cJSON *a = r ? r : p2;
    int want = r ? 3 : 2;
    if (!a || (r && p2) || !cJSON_IsArray(a) || cJSON_GetArraySize(a) != want)
        return bad(c, jpath, "expected a list of values, {\"range\": [lo, hi, step]} or {\"pow2\": [lo, hi]}");
    double v[3] = {0, 0, 1};
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || fabs(e->valuedouble) > 1e15)
            return bad(c, jpath, "%s[%d]: expected a whole number", r ? "range" : "pow2", i);
        v[i] = e->valuedouble;
    }
    double count;
    if (r) {
        if (v[2] <= 0 || v[1] < v[0]) return bad(c, jpath, "range [%g, %g, %g]: expected lo <= hi and a step > 0", v[0], v[1], v[2]);
        count = floor((v[1] - v[0]) / v[2]) + 1;
    } else {
        if (v[0] < 1 || v[1] < v[0] || (int64_t)v[0] & ((int64_t)v[0] - 1) || (int64_t)v[1] & ((int64_t)v[1] - 1))
            return bad(c, jpath, "pow2 [%g, %g]: expected powers of two, 1 <= lo <= hi", v[0], v[1]);
        count = log2(v[1]) - log2(v[0]) + 1;
    }
    if (count > HN_TUNE_MAX_VALUES) return bad(c, jpath, "%.0f values is too many (at most %d)", count, HN_TUNE_MAX_VALUES);
    int n = (int)count;
    ax->values = xcalloc((size_t)n, sizeof *ax->values);
    ax->texts = xcalloc((size_t)n, sizeof *ax->texts);
    for (int k = 0; k < n; k++) {
        int64_t x = r ? (int64_t)(v[0] + k * v[2]) : (int64_t)v[0] << k;
        ax->values[k] = (hn_value){.type = HN_VAL_INT, .i = x};
        ax->texts[k] = xasprintf("%lld", (long long)x);
        ax->n = k + 1;
    }
    return 0;
}

/* "tune": {NAME: values, ...}: defines of the variant whose values `harness
 * tune` searches (restricted by "restrict"); `harness run` uses one point of the
 * space (the first valid one, or a tuned one). */
static int parse_tune(ctx *c, const hn_plan *plan, hn_variant_spec *s, const cJSON *j, const char *jpath,
                      const name_sets *ns, int defines_from_defaults) {
    if (!cJSON_IsObject(j) || !j->child)
        return bad(c, jpath, "expected an object of NAME: values with at least one tunable, got %s", json_type(j));
    if (s->n_defines + cJSON_GetArraySize(j) > MAX_NAMES)
        return bad(c, jpath, "%d tunables and %d defines: at most %d in all", cJSON_GetArraySize(j), s->n_defines,
                   MAX_NAMES);
    if (check_unique(c, j, jpath) != 0) return -1;
    s->defines = xrealloc(s->defines, (size_t)(s->n_defines + cJSON_GetArraySize(j) + 1) * sizeof *s->defines);
    for (const cJSON *d = j->child; d; d = d->next) {
        char *dp = jp(jpath, d->string);
        hn_axis *ax = &s->defines[s->n_defines];
        memset(ax, 0, sizeof *ax);
        int rc = is_identifier(d->string) ? 0 : bad(c, dp, "'%s' is not a valid macro name", d->string);
        for (int i = 0; rc == 0 && i < s->n_defines; i++)
            if (strcmp(s->defines[i].name, d->string) == 0)
                rc = defines_from_defaults
                         ? bad(c, dp,
                               "'%s' is also in defines (the config's \"defaults\", which this variant takes): a "
                               "tunable cannot be a define too; drop it from defaults.defines or give the variant "
                               "defines of its own",
                               d->string)
                         : bad(c, dp,
                               "'%s' is also in defines: a tunable cannot be a define too (run takes the first valid "
                               "point of its space, tune searches it); drop it from this variant's defines",
                               d->string);
        for (int i = 0; rc == 0 && i < ns->n_axes; i++)
            if (strcmp(ns->axis_names[i], d->string) == 0) rc = bad(c, dp, "tunable '%s' has the name of an axis", d->string);
        for (int i = 0; rc == 0 && i < ns->n_params; i++)
            if (strcmp(ns->param_names[i], d->string) == 0)
                rc = bad(c, dp, "tunable '%s' has the name of a %s parameter", d->string, plan->op->name);
        for (int i = 0; rc == 0 && hn_device_names[i]; i++)
            if (strcmp(hn_device_names[i], d->string) == 0)
                rc = bad(c, dp, "tunable '%s' has the name of a device limit", d->string);
        if (rc == 0) rc = tune_values(c, d, dp, ax);
        free(dp);
        ax->name = xstrdup(d->string);
        ax->tunable = 1;
        s->n_defines++;
        if (rc != 0) return -1;
    }
    return 0;
}

static void spec_free(hn_variant_spec *s) {
    free(s->name);
    free(s->file);
    free(s->kernel);
    for (int i = 0; i < s->n_defines; i++) axis_free(&s->defines[i]);
    free(s->defines);
    for (int i = 0; i < 3; i++) {
        hn_expr_free(s->block[i]);
        hn_expr_free(s->grid[i]);
    }
    hn_expr_free(s->shared);
    hn_expr_free(s->precision);
    for (int i = 0; i < s->n_restrict; i++) hn_expr_free(s->restrict_[i]);
    free(s->restrict_);
    for (int i = 0; i < s->n_where; i++) hn_expr_free(s->where[i]);
    free(s->where);
    for (int i = 0; i < s->n_args; i++) arg_free(&s->args[i]);
    free(s->args);
    for (int i = 0; i < s->n_include_dirs; i++) free(s->include_dirs[i]);
    free(s->include_dirs);
    for (int i = 0; i < s->n_options; i++) free(s->options[i]);
    free(s->options);
    for (int i = 0; i < s->n_scratch; i++) {
        free(s->scratch_names[i]);
        hn_expr_free(s->scratch_bytes[i]);
    }
    for (int i = 0; i < s->n_constants; i++) {
        free(s->const_names[i]);
        arg_free(&s->const_vals[i]);
    }
    free(s->kernels_text);
    for (int i = 0; i < s->n_more; i++) {
        hn_launch_spec *L = &s->more[i];
        free(L->kernel);
        for (int d = 0; d < 3; d++) {
            hn_expr_free(L->block[d]);
            hn_expr_free(L->grid[d]);
        }
        hn_expr_free(L->shared);
        for (int a = 0; a < L->n_args; a++) arg_free(&L->args[a]);
        free(L->args);
    }
    free(s->more);
}

/* Where launch 0's kernel, block, grid, shared_bytes and args come from: the
 * first of "launches" when the variant has them, else the variant (and the
 * config's defaults). */
static const cJSON *lget(const cJSON *l0, const cJSON *v, const cJSON *defaults, const char *key) {
    return l0 ? cJSON_GetObjectItemCaseSensitive(l0, key) : vget(v, defaults, key);
}

static int parse_kernel_name(ctx *c, const cJSON *j, const char *p, char **out) {
    if (!cJSON_IsString(j) || !j->valuestring[0])
        return bad(c, p, "expected the kernel's C++ name (a string)%s", j ? "" : "; it is missing");
    const char *why = kernel_name_error(j->valuestring);
    if (why)
        return bad(c, p,
                   "'%s' is not a kernel's C++ name: %s (expected a name such as "
                   "\"conv2d\", \"ns::conv2d\" or \"reduce<256, TILE_SIZE>\": names, numbers "
                   "and defines as template arguments)",
                   CUT(j->valuestring), why);
    *out = xstrdup(j->valuestring);
    return 0;
}

/* One argument (or struct field): a scratch buffer of s, a struct (an array
 * of fields, nested up to 4 deep), or what parse_arg takes. */
static int parse_value(ctx *c, const hn_plan *plan, const hn_variant_spec *s, const cJSON *j, const char *p,
                       const name_sets *ns, hn_arg *a, int depth) {
    const int sc = scratch_index(s, j);
    if (sc >= 0) {
        *a = (hn_arg){.kind = HN_ARG_SCRATCH, .index = sc, .type = 'p', .text = xstrdup(j->valuestring)};
        return 0;
    }
    if (!cJSON_IsArray(j)) return parse_arg(c, plan->op, s, j, p, ns, a);
    a->kind = HN_ARG_STRUCT;
    a->type = 'o';
    const int n = cJSON_GetArraySize(j);
    if (depth >= 4) return bad(c, p, "a struct nested more than 4 deep");
    a->fields = xcalloc(n ? (size_t)n : 1, sizeof *a->fields);
    hn_sb text;
    hn_sb_init(&text);
    hn_sb_addc(&text, '[');
    int off = 0, align = 1, rc = 0, i = 0;
    for (const cJSON *e = j->child; e && rc == 0; e = e->next, i++) {
        char *fp = jpi(p, i);
        hn_arg *f = &a->fields[a->n_fields++];
        rc = parse_value(c, plan, s, e, fp, ns, f, depth + 1);
        if (rc == 0 && f->kind == HN_ARG_DEBUG_COUNTER)
            rc = bad(c, fp, "debug_counter is a kernel parameter of its own, not a struct field");
        free(fp);
        if (rc != 0) break;
        const int fa = f->kind == HN_ARG_STRUCT ? f->align : hn_arg_type_size(f->type);
        const int fs = f->kind == HN_ARG_STRUCT ? f->size : fa;
        off = (off + fa - 1) / fa * fa;
        f->offset = off;
        off += fs;
        if (fa > align) align = fa;
        hn_sb_addf(&text, "%s%s", i ? ", " : "", f->text);
    }
    hn_sb_addc(&text, ']');
    a->text = hn_sb_detach(&text);
    a->align = align;
    /* an empty struct ([], a tag such as "struct Empty {}") is one byte, as in C++ */
    a->size = off ? (off + align - 1) / align * align : 1;
    if (rc == 0 && a->size > HN_MAX_STRUCT_BYTES)
        rc = bad(c, p, "a struct of %d bytes (at most %d)", a->size, HN_MAX_STRUCT_BYTES);
    return rc;
}

/* args: each an operator buffer or parameter, a scratch buffer of s, a typed
 * expression, or a struct of those (an array). */
static int parse_args(ctx *c, const hn_plan *plan, const hn_variant_spec *s, const cJSON *j, const char *p,
                      const name_sets *ns, hn_arg **args, int *n_args) {
    *args = NULL;
    *n_args = 0;
    if (!cJSON_IsArray(j))
        return bad(c, p, "expected an array binding each kernel parameter in order%s", j ? "" : "; it is missing");
    *args = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof **args);
    int i = 0;
    for (const cJSON *a = j->child; a; a = a->next, i++) {
        char *ap = jpi(p, i);
        const int arc = parse_value(c, plan, s, a, ap, ns, &(*args)[(*n_args)++], 0);
        free(ap);
        if (arc != 0) return -1;
    }
    return 0;
}

/* block, grid and shared_bytes of one launch, from src (lget's). */
static int parse_geometry(ctx *c, const cJSON *l0, const cJSON *v, const cJSON *defaults, const char *lpath,
                          const name_sets *ns, hn_expr *block[3], hn_expr *grid[3], hn_expr **shared) {
    char *p = jp(lpath, "block");
    int rc = parse_dims(c, lget(l0, v, defaults, "block"), p, ns, block);
    free(p);
    if (rc != 0) return -1;
    p = jp(lpath, "grid");
    rc = parse_dims(c, lget(l0, v, defaults, "grid"), p, ns, grid);
    free(p);
    if (rc != 0) return -1;
    p = jp(lpath, "shared_bytes");
    const cJSON *j = lget(l0, v, defaults, "shared_bytes");
    if (j)
        rc = parse_field(c, j, p, ns, 7, shared);
    else
        hn_expr_parse("0", shared, NULL);
    free(p);
    return rc;
}

/* Whether the variant itself gives a key of a launch (kernel, block, ...). */
static int gives_launch_key(const cJSON *v) {
    for (int k = 0; LAUNCH_KEYS[k + 1]; k++)
        if (cJSON_GetObjectItemCaseSensitive(v, LAUNCH_KEYS[k])) return 1;
    return 0;
}

/* "launches": 1 to HN_MAX_LAUNCHES objects of LAUNCH_KEYS; the variant then
 * has none of those keys itself. The config's defaults.launches applies to a
 * variant that gives neither launches nor a key of a launch (one that gives its
 * own kernel is a single launch); a variant with launches takes none of the
 * launch keys of the defaults. Returns the array (NULL: none), its JSON path in
 * *path (the caller frees it), or sets *failed. */
static const cJSON *launches_of(ctx *c, const cJSON *v, const cJSON *defaults, const char *jpath, char **path,
                                int *failed) {
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(v, "launches");
    *failed = 0;
    *path = NULL;
    char *p;
    if (l) {
        p = jp(jpath, "launches");
    } else if (defaults && !gives_launch_key(v) &&
               (l = cJSON_GetObjectItemCaseSensitive(defaults, "launches")) != NULL) {
        p = xstrdup("defaults.launches");
    } else {
        return NULL;
    }
    int n = cJSON_GetArraySize(l);
    if (!cJSON_IsArray(l) || n < 1 || n > HN_MAX_LAUNCHES)
        *failed = bad(c, p, "expected an array of 1 to %d launches, each {kernel, block, grid, args, shared_bytes}, "
                            "got %s",
                      HN_MAX_LAUNCHES, cJSON_IsArray(l) ? (n ? "more" : "an empty array") : json_type(l));
    for (int k = 0; !*failed && LAUNCH_KEYS[k + 1]; k++)
        if (cJSON_GetObjectItemCaseSensitive(v, LAUNCH_KEYS[k]))
            *failed = bad(c, p, "the variant gives '%s' and launches: with launches, each launch gives its own "
                                "kernel, block, grid, shared_bytes and args",
                          LAUNCH_KEYS[k]);
    int i = 0;
    for (const cJSON *e = cJSON_IsArray(l) ? l->child : NULL; !*failed && e; e = e->next, i++) {
        char *ep = jpi(p, i);
        if (!cJSON_IsObject(e))
            *failed = bad(c, ep, "expected a launch {kernel, block, grid, args, shared_bytes}, got %s", json_type(e));
        else if (check_keys(c, e, ep, LAUNCH_KEYS) != 0)
            *failed = -1;
        free(ep);
    }
    if (*failed) {
        free(p);
        return NULL;
    }
    *path = p;
    return l;
}

/* The JSON path of launch 0: "<lpath>[0]" (lpath: launches_of's), or the variant's own. */
static char *launch0_path(const char *jpath, const char *lpath) {
    return lpath ? jpi(lpath, 0) : xstrdup(jpath);
}

static int parse_variant(ctx *c, hn_plan *plan, const cJSON *v, const cJSON *defaults,
                         const char *jpath, name_sets ns, hn_variant_spec *s) {
    if (!cJSON_IsObject(v)) return bad(c, jpath, "expected an object, got %s", json_type(v));
    if (check_keys(c, v, jpath, VARIANT_KEYS) != 0) return -1;
    char *p;
    const cJSON *j;
    int failed;
    char *lpath_owned, lpath_buf[256], *lpath = NULL; /* a copy: the returns below would leak it */
    const cJSON *launches = launches_of(c, v, defaults, jpath, &lpath_owned, &failed);
    if (failed) return -1;
    if (lpath_owned) {
        snprintf(lpath_buf, sizeof lpath_buf, "%s", lpath_owned);
        free(lpath_owned);
        lpath = lpath_buf;
    }
    /* launch 0: the first of launches (l0, at l0path), or the variant itself */
    const cJSON *l0 = launches ? launches->child : NULL;
    char *l0path = launch0_path(jpath, lpath);

    /* kernel and name (default: the kernels' names, joined by +) */
    p = jp(l0path, "kernel");
    int krc = parse_kernel_name(c, lget(l0, v, defaults, "kernel"), p, &s->kernel);
    free(p);
    free(l0path); /* made again for the geometry: the returns between would leak it */
    l0path = NULL;
    if (krc != 0) return -1;
    j = vget(v, defaults, "name");
    if (j && (!cJSON_IsString(j) || !printable_line(j->valuestring))) {
        p = cJSON_GetObjectItemCaseSensitive(v, "name") ? jp(jpath, "name") : xstrdup("defaults.name");
        if (!cJSON_IsString(j)) bad(c, p, "expected a string, got %s", json_type(j));
        else bad(c, p, "expected the variant's name in results: some text, on one line");
        free(p);
        return -1;
    }
    if (j) {
        s->name = xstrdup(j->valuestring);
    } else {
        hn_sb nm;
        hn_sb_init(&nm);
        hn_sb_adds(&nm, s->kernel);
        for (const cJSON *e = l0 ? l0->next : NULL; e; e = e->next) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kernel");
            hn_sb_addf(&nm, "+%s", cJSON_IsString(k) ? k->valuestring : "?");
        }
        s->name = nm.buf; /* owned by the spec now */
    }

    /* file */
    j = vget(v, defaults, "file");
    p = jp(jpath, "file");
    if (!cJSON_IsString(j)) {
        bad(c, p, "expected the path of the .cu file, relative to the config%s",
            j ? "" : "; it is missing");
        free(p);
        return -1;
    }
    s->file = hn_path_join(plan->dir, j->valuestring);
    struct stat st;
    if (stat(s->file, &st) != 0) {
        bad(c, p, "file '%s' not found (looked for %s)", CUT(j->valuestring), CUT(s->file));
        free(p);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        bad(c, p, "'%s' is %s, not a kernel's source file (looked at %s)", CUT(j->valuestring),
            S_ISDIR(st.st_mode)                            ? "a folder"
            : S_ISFIFO(st.st_mode)                         ? "a FIFO"
            : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)   ? "a device"
                                                           : "a special file",
            CUT(s->file));
        free(p);
        return -1;
    }
    {
        /* Absolute, so cache keys and messages do not depend on the working folder. */
        char *abs = realpath(s->file, NULL);
        if (abs) {
            free(s->file);
            s->file = abs;
        }
    }
    free(p);

    /* defines */
    j = vget(v, defaults, "defines");
    if (j) {
        p = jp(jpath, "defines");
        if (!cJSON_IsObject(j)) {
            bad(c, p, "expected an object of NAME: value or NAME: [values], got %s", json_type(j));
            free(p);
            return -1;
        }
        if (cJSON_GetArraySize(j) > MAX_NAMES) {
            bad(c, p, "%d defines: at most %d", cJSON_GetArraySize(j), MAX_NAMES);
            free(p);
            return -1;
        }
        if (check_unique(c, j, p) != 0) {
            free(p);
            return -1;
        }
        s->defines = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof *s->defines);
        for (const cJSON *d = j->child; d; d = d->next) {
            char *dp = jp(p, d->string);
            hn_axis *ax = &s->defines[s->n_defines++];
            ax->name = xstrdup(d->string);
            int rc = 0;
            if (!is_identifier(d->string))
                rc = bad(c, dp, "'%s' is not a valid macro name", CUT(d->string));
            for (int i = 0; rc == 0 && i < ns.n_axes; i++)
                if (strcmp(ns.axis_names[i], d->string) == 0)
                    rc = bad(c, dp, "define '%s' has the name of an axis", CUT(d->string));
            for (int i = 0; rc == 0 && i < ns.n_params; i++)
                if (strcmp(ns.param_names[i], d->string) == 0)
                    rc = bad(c, dp, "define '%s' has the name of a %s parameter", CUT(d->string),
                             plan->op->name);
            if (rc == 0) rc = parse_axis_values(c, d, dp, ax);
            free(dp);
            if (rc != 0) {
                free(p);
                return -1;
            }
        }
        free(p);
    }
    /* tune: defines whose values are a search space */
    j = vget(v, defaults, "tune");
    if (j) {
        p = jp(jpath, "tune");
        int trc = parse_tune(c, plan, s, j, p, &ns,
                             !cJSON_GetObjectItemCaseSensitive(v, "defines") && defaults &&
                                 cJSON_GetObjectItemCaseSensitive(defaults, "defines"));
        free(p);
        if (trc != 0) return -1;
    }
    const char **dnames = xcalloc((size_t)s->n_defines + 1, sizeof *dnames);
    for (int i = 0; i < s->n_defines; i++) dnames[i] = s->defines[i].name;
    ns.define_names = dnames;
    ns.n_defines = s->n_defines;

    int rc = -1;
    p = NULL;
    l0path = launch0_path(jpath, lpath);
    if (parse_geometry(c, l0, v, defaults, l0path, &ns, s->block, s->grid, &s->shared) != 0) goto done;
    p = jp(jpath, "where");
    if (parse_expr_list(c, vget(v, defaults, "where"), p, &ns, 7, &s->where, &s->n_where) != 0)
        goto done;
    free(p);
    p = jp(jpath, "restrict");
    if (parse_expr_list(c, vget(v, defaults, "restrict"), p, &ns, 15, &s->restrict_, &s->n_restrict) != 0) goto done;
    free(p);
    p = jp(jpath, "scratch");
    if (parse_scratch(c, plan, s, vget(v, defaults, "scratch"), p, &ns) != 0) goto done;
    free(p);
    p = jp(jpath, "constants");
    if (parse_constants(c, plan, s, vget(v, defaults, "constants"), p, &ns) != 0) goto done;
    free(p);
    p = jp(jpath, "zero");
    if (parse_zero(c, plan->op, s, vget(v, defaults, "zero"), p, &s->zero) != 0) goto done;
    free(p);
    p = jp(jpath, "precision");
    j = vget(v, defaults, "precision");
    if (j && parse_precision(c, j, p, &ns, &s->precision) != 0) goto done;
    free(p);
    p = NULL;

    /* args, then the launches after the first */
    p = jp(l0path, "args");
    if (parse_args(c, plan, s, lget(l0, v, defaults, "args"), p, &ns, &s->args, &s->n_args) != 0) goto done;
    free(p);
    p = NULL;
    if (launches) {
        s->more = xcalloc((size_t)cJSON_GetArraySize(launches), sizeof *s->more);
        const char *lp = lpath;
        int i = 1;
        for (const cJSON *e = l0->next; e; e = e->next, i++) {
            hn_launch_spec *L = &s->more[s->n_more++];
            char *ep = jpi(lp, i), *kp = jp(ep, "kernel"), *ap = jp(ep, "args");
            int lrc = parse_kernel_name(c, cJSON_GetObjectItemCaseSensitive(e, "kernel"), kp, &L->kernel);
            if (lrc == 0) lrc = parse_geometry(c, e, NULL, NULL, ep, &ns, L->block, L->grid, &L->shared);
            if (lrc == 0)
                lrc = parse_args(c, plan, s, cJSON_GetObjectItemCaseSensitive(e, "args"), ap, &ns, &L->args,
                                 &L->n_args);
            free(ep), free(kp), free(ap);
            if (lrc != 0) goto done;
        }
    }

    p = jp(jpath, "include_dirs");
    {
        char **dirs;
        int n;
        if (parse_string_list(c, vget(v, defaults, "include_dirs"), p, &dirs, &n) != 0) goto done;
        s->include_dirs = xcalloc((size_t)n + 1, sizeof *s->include_dirs);
        int bad_dir = 0;
        for (int i = 0; i < n; i++) {
            char *ip = jpi(p, i);
            if (!bad_dir && add_include_dir(c, plan, s, dirs[i], ip) != 0) bad_dir = 1;
            free(ip);
            free(dirs[i]);
        }
        free(dirs);
        if (bad_dir) goto done;
    }
    free(p);
    p = jp(jpath, "options");
    {
        char **opts;
        int n;
        if (parse_string_list(c, vget(v, defaults, "options"), p, &opts, &n) != 0) goto done;
        if (split_options(c, plan, s, opts, n, p) != 0) goto done;
    }
    {
        hn_sb kt;
        hn_sb_init(&kt);
        for (int li = 0; li < hn_spec_launches(s); li++) hn_sb_addf(&kt, "%s%s", li ? ";" : "", hn_spec_launch(s, li).kernel);
        s->kernels_text = kt.buf;
    }
    rc = 0;
done:
    free(p);
    free(l0path);
    free(dnames);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* the plan */

/* A parameter's expression may use the axes and the parameters before it in
 * the operator's order; one naming a later parameter (pool2d's "h": "w + 1")
 * gets "unknown name 'w'", which reads as a typo: say why. */
typedef struct {
    const hn_plan *plan;
    int index;
    const char *later;
} later_param;

static int find_later_param(void *ctx, const char *name) {
    later_param *l = ctx;
    for (int a = 0; a < l->plan->n_axes; a++)
        if (strcmp(l->plan->axes[a].name, name) == 0) return 0;
    int k = hn_op_param_index(l->plan->op, name);
    if (k < l->index) return 0;
    l->later = name;
    return -1;
}

static void later_param_hint(ctx *c, const hn_plan *plan, int i, const cJSON *pj) {
    hn_expr *e;
    hn_err pe;
    if (!cJSON_IsString(pj) || hn_expr_parse(pj->valuestring, &e, &pe) != 0) return;
    later_param l = {plan, i, NULL};
    hn_expr_names(e, find_later_param, &l);
    if (l.later) {
        hn_sb order;
        hn_sb_init(&order);
        for (int k = 0; k < plan->op->n_params; k++)
            hn_sb_addf(&order, "%s%s", k ? ", " : "", plan->op->params[k].name);
        size_t n = strlen(c->err->msg);
        const char *self = plan->op->params[i].name;
        if (strcmp(l.later, self) == 0)
            snprintf(c->err->msg + n, sizeof c->err->msg - n,
                     "; '%s' is this parameter itself, and no axis has its name: a parameter's expression may use "
                     "the axes and the parameters before it (%s's order: %s)",
                     self, plan->op->name, order.buf);
        else
            snprintf(c->err->msg + n, sizeof c->err->msg - n,
                     "; '%s' is a parameter of %s that comes after '%s' (their order: %s): a parameter's "
                     "expression may use the axes and the parameters before it",
                     l.later, plan->op->name, self, order.buf);
        hn_sb_free(&order);
    }
    hn_expr_free(e);
}

static const char *const TOP_KEYS[] = {"name", "description", "op", "params", "axes", "where",
                                       "sample", "check", "timing", "emu", "defaults",
                                       "variants", "tuning", NULL};

void hn_plan_free(hn_plan *p) {
    if (!p) return;
    free(p->notice);
    free(p->path);
    free(p->dir);
    free(p->name);
    free(p->description);
    free(p->tuning.strategy);
    free(p->tuning.budget);
    if (p->params && p->op)
        for (int i = 0; i < p->op->n_params; i++) hn_expr_free(p->params[i]);
    free(p->params);
    for (int i = 0; i < p->n_axes; i++) axis_free(&p->axes[i]);
    free(p->axes);
    for (int i = 0; i < p->n_where; i++) hn_expr_free(p->where[i]);
    free(p->where);
    hn_expr_free(p->atol);
    hn_expr_free(p->rtol);
    if (p->out_check && p->op)
        for (int b = 0; b < p->op->n_buffers; b++) {
            hn_expr_free(p->out_check[b].atol);
            hn_expr_free(p->out_check[b].rtol);
        }
    free(p->out_check);
    for (int i = 0; i < p->n_specs; i++) spec_free(&p->specs[i]);
    free(p->specs);
    for (int i = 0; i < p->n_variants; i++) {
        free(p->variants[i].choice);
        free(p->variants[i].label);
    }
    free(p->variants);
    for (int g = 0; g < p->n_tuned; g++) {
        hn_tuned_group *t = &p->tuned[g];
        for (int64_t c = 0; t->note && c < p->n_cases; c++) free(t->note[c]);
        free(t->note);
        free(t->of_case);
        free(t->file);
    }
    free(p->tuned);
    for (int64_t i = 0; i < p->n_cases; i++) hn_case_release(&p->cases[i]);
    free(p->cases);
    for (int i = 0; i < p->n_define_names; i++) free(p->define_names[i]);
    free(p->define_names);
    free(p);
}

static int get_number(ctx *c, const cJSON *obj, const char *key, const char *base, double lo,
                      double hi, double *out) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!j) return 0;
    char *p = jp(base, key);
    int rc = 0;
    if (!cJSON_IsNumber(j)) rc = bad(c, p, "expected a number, got %s", json_type(j));
    else if (!(j->valuedouble >= lo && j->valuedouble <= hi))
        rc = bad(c, p, "%g is out of range (expected %g to %g)", j->valuedouble, lo, hi);
    else *out = j->valuedouble;
    free(p);
    return rc;
}

static int get_int(ctx *c, const cJSON *obj, const char *key, const char *base, int lo, int hi,
                   int *out) {
    double d = *out;
    if (get_number(c, obj, key, base, lo, hi, &d) != 0) return -1;
    if (d != floor(d)) {
        char *p = jp(base, key);
        bad(c, p, "expected a whole number, got %g", d);
        free(p);
        return -1;
    }
    *out = (int)d;
    return 0;
}

static int parse_timing(ctx *c, const cJSON *t, hn_timing_cfg *tc) {
    static const char *const KEYS[] = {"warmup", "repeat", "min_samples", "max_samples",
                                       "min_time", "max_noise", "timeout", "hot", NULL};
    tc->warmup = tc->repeat = tc->min_samples = tc->max_samples = -1;
    tc->min_time = tc->max_noise = tc->timeout = -1;
    tc->hot = -1;
    if (!t) return 0;
    if (!cJSON_IsObject(t)) return bad(c, "timing", "expected an object, got %s", json_type(t));
    if (check_keys(c, t, "timing", KEYS) != 0) return -1;
    if (get_int(c, t, "warmup", "timing", 0, 1000, &tc->warmup) != 0) return -1;
    if (get_int(c, t, "repeat", "timing", 1, 1000000, &tc->repeat) != 0) return -1;
    if (get_int(c, t, "min_samples", "timing", 1, 1000000, &tc->min_samples) != 0) return -1;
    if (get_int(c, t, "max_samples", "timing", 1, 100000000, &tc->max_samples) != 0) return -1;
    if (get_number(c, t, "min_time", "timing", 0, 3600, &tc->min_time) != 0) return -1;
    if (get_number(c, t, "max_noise", "timing", 0, 1, &tc->max_noise) != 0) return -1;
    if (get_number(c, t, "timeout", "timing", 0, 86400, &tc->timeout) != 0) return -1;
    /* repeat is exactly N samples: a count beside it that says another N
     * contradicts it (min_time and max_noise have nothing left to decide) */
    if (tc->repeat > 0 && tc->min_samples > 0 && tc->min_samples != tc->repeat)
        return bad(c, "timing", "'repeat' (exactly %d samples) and 'min_samples' (%d) are given together; give one of them",
                   tc->repeat, tc->min_samples);
    if (tc->repeat > 0 && tc->max_samples > 0 && tc->max_samples != tc->repeat)
        return bad(c, "timing", "'repeat' (exactly %d samples) and 'max_samples' (%d) are given together; give one of them",
                   tc->repeat, tc->max_samples);
    if (tc->min_samples > 0 && tc->max_samples > 0 && tc->max_samples < tc->min_samples)
        return bad(c, "timing.max_samples", "%d is less than min_samples (%d)", tc->max_samples, tc->min_samples);
    const cJSON *hot = cJSON_GetObjectItemCaseSensitive(t, "hot");
    if (hot) {
        if (!cJSON_IsBool(hot)) return bad(c, "timing.hot", "expected true or false, got %s", json_type(hot));
        tc->hot = cJSON_IsTrue(hot);
    }
    return 0;
}

static int parse_top(ctx *c, const cJSON *root, hn_plan *plan, int64_t seed_override) {
    if (!cJSON_IsObject(root)) return bad(c, "", "expected a JSON object at the top, got %s", json_type(root));
    if (check_keys(c, root, "", TOP_KEYS) != 0) return -1;
    const cJSON *j;

    j = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (j && !cJSON_IsString(j)) return bad(c, "name", "expected a string, got %s", json_type(j));
    if (j) {
        /* The name becomes results/<name>.csv: a file name, nothing more. */
        const char *n = j->valuestring;
        size_t len = strlen(n), ok = len > 0 && len <= 128 && strcmp(n, ".") && strcmp(n, "..");
        for (const char *q = n; ok && *q; q++)
            ok = isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-';
        if (!ok)
            return bad(c, "name", "'%s' is not a file name (expected 1 to 128 letters, digits, '.', '_' "
                                  "or '-'; it names results/<name>.csv)",
                       CUT(n));
        plan->name = xstrdup(n);
    } else {
        /* The config's file name, made safe the same way. */
        plan->name = hn_stem(plan->path);
        for (char *q = plan->name; *q; q++)
            if (!(isalnum((unsigned char)*q) || *q == '.' || *q == '_' || *q == '-')) *q = '_';
        if (!plan->name[0] || strcmp(plan->name, ".") == 0 || strcmp(plan->name, "..") == 0) {
            free(plan->name);
            plan->name = xstrdup("results");
        }
    }
    j = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (j && !cJSON_IsString(j)) return bad(c, "description", "expected a string, got %s", json_type(j));
    plan->description = xstrdup(j ? j->valuestring : "");

    j = cJSON_GetObjectItemCaseSensitive(root, "op");
    if (!cJSON_IsString(j))
        return bad(c, "op", "expected the operator's name (one of: %s)%s", hn_op_names(),
                   j ? "" : "; it is missing");
    plan->op = hn_op_find(j->valuestring);
    if (!plan->op)
        return bad(c, "op", "unknown operator '%s' (known: %s)", CUT(j->valuestring), hn_op_names());
    const hn_op *op = plan->op;
    c->op = op;

    /* axes */
    j = cJSON_GetObjectItemCaseSensitive(root, "axes");
    if (!cJSON_IsObject(j) || !j->child)
        return bad(c, "axes", "expected an object of axis: [values] with at least one axis%s",
                   j ? "" : "; it is missing");
    if (cJSON_GetArraySize(j) > MAX_NAMES)
        return bad(c, "axes", "%d axes: at most %d", cJSON_GetArraySize(j), MAX_NAMES);
    if (check_unique(c, j, "axes") != 0) return -1;
    plan->axes = xcalloc((size_t)cJSON_GetArraySize(j), sizeof *plan->axes);
    for (const cJSON *a = j->child; a; a = a->next) {
        char *p = jp("axes", a->string);
        hn_axis *ax = &plan->axes[plan->n_axes++];
        ax->name = xstrdup(a->string);
        int rc = is_identifier(a->string) ? parse_axis_values(c, a, p, ax)
                                          : bad(c, p, "'%s' is not a valid name", CUT(a->string));
        free(p);
        if (rc != 0) return -1;
    }

    name_sets ns = {0};
    const char **axis_names = xcalloc((size_t)plan->n_axes, sizeof *axis_names);
    for (int i = 0; i < plan->n_axes; i++) axis_names[i] = plan->axes[i].name;
    const char **param_names = xcalloc((size_t)op->n_params, sizeof *param_names);
    for (int i = 0; i < op->n_params; i++) param_names[i] = op->params[i].name;
    ns.axis_names = axis_names;
    ns.n_axes = plan->n_axes;
    ns.param_names = param_names;
    ns.n_params = op->n_params;
    int rc = -1;

    /* operator parameters */
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(root, "params");
    if (params && !cJSON_IsObject(params)) {
        bad(c, "params", "expected an object of parameter: expression, got %s", json_type(params));
        goto out;
    }
    if (params) {
        const char **allowed = xcalloc((size_t)op->n_params + 1, sizeof *allowed);
        for (int i = 0; i < op->n_params; i++) allowed[i] = op->params[i].name;
        int krc = check_keys(c, params, "params", allowed);
        free(allowed);
        if (krc != 0) goto out;
    }
    plan->params = xcalloc((size_t)op->n_params, sizeof *plan->params);
    for (int i = 0; i < op->n_params; i++) {
        const hn_op_param *pd = &op->params[i];
        const cJSON *pj = params ? cJSON_GetObjectItemCaseSensitive(params, pd->name) : NULL;
        char *p = jp("params", pd->name);
        /* A parameter's expression may use the axes and the parameters before it. */
        name_sets pns = ns;
        pns.n_params = i;
        int prc;
        int has_axis = 0;
        for (int a = 0; a < plan->n_axes; a++) has_axis |= strcmp(plan->axes[a].name, pd->name) == 0;
        if (pj) {
            prc = parse_field(c, pj, p, &pns, 3, &plan->params[i]);
            if (prc != 0) later_param_hint(c, plan, i, pj);
        } else {
            /* Not set: the axis of its name if there is one, else its default. */
            const char *dflt = has_axis || !pd->dflt ? pd->name : pd->dflt;
            cJSON tmp = {0};
            tmp.type = cJSON_String;
            tmp.valuestring = (char *)dflt;
            hn_err inner;
            ctx quiet = {c->file, &inner, c->op};
            prc = parse_field(&quiet, &tmp, p, &pns, 3, &plan->params[i]);
            if (prc != 0)
                bad(c, p, "not set, and its default '%s' does not fit this config's axes (%s); set "
                          "it, e.g. \"params\": {\"%s\": \"<expression over the axes>\"}",
                    dflt, pd->doc, pd->name);
        }
        free(p);
        if (prc != 0) goto out;
    }

    /* constraints, sampling */
    if (parse_expr_list(c, cJSON_GetObjectItemCaseSensitive(root, "where"), "where", &ns, 3,
                        &plan->where, &plan->n_where) != 0)
        goto out;
    plan->seed = 0;
    j = cJSON_GetObjectItemCaseSensitive(root, "sample");
    if (j) {
        static const char *const KEYS[] = {"count", "seed", NULL};
        if (!cJSON_IsObject(j)) {
            bad(c, "sample", "expected an object {\"count\": N, \"seed\": S}, got %s", json_type(j));
            goto out;
        }
        if (check_keys(c, j, "sample", KEYS) != 0) goto out;
        if (get_int(c, j, "count", "sample", 1, 100000000, &plan->sample_count) != 0) goto out;
        double seed = 0;
        if (get_number(c, j, "seed", "sample", 0, 9007199254740991.0, &seed) != 0) goto out;
        if (seed != floor(seed)) {
            bad(c, "sample.seed", "expected a whole number, got %g", seed);
            goto out;
        }
        plan->seed = (uint64_t)seed;
    }
    if (seed_override >= 0) plan->seed = (uint64_t)seed_override;

    /* checking */
    plan->min_match = 0.9;
    plan->reference_gflop = 50.0;
    j = cJSON_GetObjectItemCaseSensitive(root, "check");
    {
        /* check's keys: the tolerances, and an object per output buffer */
        const char **keys = xcalloc((size_t)op->n_buffers + 5, sizeof *keys);
        int nk = 0;
        keys[nk++] = "atol", keys[nk++] = "rtol", keys[nk++] = "min_match", keys[nk++] = "reference_gflop";
        for (int b = 0; b < op->n_buffers; b++)
            if (op->buffers[b].role != HN_BUF_IN) keys[nk++] = op->buffers[b].name;
        if (j && !cJSON_IsObject(j)) {
            free(keys);
            bad(c, "check", "expected an object, got %s", json_type(j));
            goto out;
        }
        int krc = j ? check_keys(c, j, "check", keys) : 0;
        free(keys);
        if (krc != 0) goto out;
    }
    /* Tolerances may depend on the case and on defines (any variant's). */
    name_sets tol_ns = ns;
    {
        /* filled after variants are parsed; parse tolerances at the end */
    }
    if (j && get_number(c, j, "min_match", "check", 0, 1, &plan->min_match) != 0) goto out;
    if (j && get_number(c, j, "reference_gflop", "check", 0, 1e9, &plan->reference_gflop) != 0) goto out;

    if (parse_timing(c, cJSON_GetObjectItemCaseSensitive(root, "timing"), &plan->timing) != 0) goto out;
    plan->emu_max_gflop = -1;
    plan->emu_max_mb = -1;
    {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "emu");
        static const char *const KEYS[] = {"max_gflop", "max_mb", NULL};
        if (e && !cJSON_IsObject(e)) {
            bad(c, "emu", "expected an object, got %s", json_type(e));
            goto out;
        }
        if (e && check_keys(c, e, "emu", KEYS) != 0) goto out;
        if (e && get_number(c, e, "max_gflop", "emu", 0, 1e9, &plan->emu_max_gflop) != 0) goto out;
        if (e && get_number(c, e, "max_mb", "emu", 0, 1e9, &plan->emu_max_mb) != 0) goto out;
    }

    /* tuning defaults */
    plan->tuning.top = plan->tuning.across = -1;
    {
        const cJSON *tj = cJSON_GetObjectItemCaseSensitive(root, "tuning");
        static const char *const KEYS[] = {"strategy", "budget", "top", "across", NULL};
        if (tj && !cJSON_IsObject(tj)) {
            bad(c, "tuning", "expected an object, got %s", json_type(tj));
            goto out;
        }
        if (tj && check_keys(c, tj, "tuning", KEYS) != 0) goto out;
        const cJSON *st = tj ? cJSON_GetObjectItemCaseSensitive(tj, "strategy") : NULL;
        const cJSON *bu = tj ? cJSON_GetObjectItemCaseSensitive(tj, "budget") : NULL;
        const cJSON *ac = tj ? cJSON_GetObjectItemCaseSensitive(tj, "across") : NULL;
        if (st && !cJSON_IsString(st)) {
            bad(c, "tuning.strategy", "expected a strategy's name, got %s", json_type(st));
            goto out;
        }
        if (st && !hn_strategy_find(st->valuestring)) {
            bad(c, "tuning.strategy", "unknown strategy '%s' (known: %s)", CUT(st->valuestring), hn_strategy_names());
            goto out;
        }
        if (st) plan->tuning.strategy = xstrdup(st->valuestring);
        if (bu && !cJSON_IsString(bu) && !cJSON_IsNumber(bu)) {
            bad(c, "tuning.budget", "expected evaluations (100), seconds (\"60s\") or a fraction (\"10%%\"), got %s",
                json_type(bu));
            goto out;
        }
        if (bu && cJSON_IsNumber(bu) && !(bu->valuedouble >= 1)) {
            bad(c, "tuning.budget", "%g: a budget must allow at least one evaluation", bu->valuedouble);
            goto out;
        }
        /* a count of evaluations, as --budget takes one: never rounded in silence */
        if (bu && cJSON_IsNumber(bu) && (bu->valuedouble != floor(bu->valuedouble) || bu->valuedouble > 1e12)) {
            bad(c, "tuning.budget", "%g: expected a whole number of evaluations up to 1e12 (or \"60s\", \"10%%\")",
                bu->valuedouble);
            goto out;
        }
        if (bu) plan->tuning.budget = cJSON_IsString(bu) ? xstrdup(bu->valuestring) : xasprintf("%.0f", bu->valuedouble);
        hn_tune_budget tb;
        hn_err be;
        if (bu && hn_tune_parse_budget(plan->tuning.budget, &tb, &be) != 0) {
            const char *why = strstr(be.msg, ": "); /* after the option's "--budget TEXT" */
            bad(c, "tuning.budget", "'%s': %s", CUT(plan->tuning.budget), why ? why + 2 : be.msg);
            goto out;
        }
        if (ac && !cJSON_IsBool(ac)) {
            bad(c, "tuning.across", "expected true or false, got %s", json_type(ac));
            goto out;
        }
        if (ac) plan->tuning.across = cJSON_IsTrue(ac);
        if (tj && get_int(c, tj, "top", "tuning", 0, 16, &plan->tuning.top) != 0) goto out;
    }

    /* variants */
    const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(root, "defaults");
    if (defaults) {
        if (!cJSON_IsObject(defaults)) {
            bad(c, "defaults", "expected an object of variant keys, got %s", json_type(defaults));
            goto out;
        }
        if (check_keys(c, defaults, "defaults", VARIANT_KEYS) != 0) goto out;
    }
    j = cJSON_GetObjectItemCaseSensitive(root, "variants");
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) == 0) {
        bad(c, "variants", "expected a non-empty array of kernel variants%s", j ? "" : "; it is missing");
        goto out;
    }
    plan->specs = xcalloc((size_t)cJSON_GetArraySize(j), sizeof *plan->specs);
    {
        int i = 0;
        for (const cJSON *v = j->child; v; v = v->next, i++) {
            char *p = jpi("variants", i);
            int vrc = parse_variant(c, plan, v, defaults, p, ns, &plan->specs[plan->n_specs++]);
            free(p);
            if (vrc != 0) goto out;
        }
    }

    /* Union of define names, for CSV columns and tolerance expressions. */
    {
        /* in order of first appearance; sorted to find the first of each name */
        int n_all = 0;
        for (int s = 0; s < plan->n_specs; s++) n_all += plan->specs[s].n_defines;
        plan->define_names = xcalloc((size_t)n_all + 1, sizeof *plan->define_names);
        text_at *all = xmalloc((size_t)(n_all ? n_all : 1) * sizeof *all);
        int k = 0;
        for (int s = 0; s < plan->n_specs; s++)
            for (int d = 0; d < plan->specs[s].n_defines; d++, k++)
                all[k] = (text_at){plan->specs[s].defines[d].name, k};
        qsort(all, (size_t)n_all, sizeof *all, cmp_text_at);
        unsigned char *first = xcalloc((size_t)n_all + 1, 1);
        for (int i = 0; i < n_all; i++) first[all[i].at] = i == 0 || strcmp(all[i].text, all[i - 1].text) != 0;
        k = 0;
        for (int s = 0; s < plan->n_specs; s++)
            for (int d = 0; d < plan->specs[s].n_defines; d++, k++)
                if (first[k]) plan->define_names[plan->n_define_names++] = xstrdup(plan->specs[s].defines[d].name);
        free(first);
        free(all);
    }
    tol_ns.define_names = (const char **)plan->define_names;
    tol_ns.n_defines = plan->n_define_names;
    {
        const cJSON *chk = cJSON_GetObjectItemCaseSensitive(root, "check");
        const cJSON *a = chk ? cJSON_GetObjectItemCaseSensitive(chk, "atol") : NULL;
        const cJSON *r = chk ? cJSON_GetObjectItemCaseSensitive(chk, "rtol") : NULL;
        cJSON dflt = {0};
        dflt.type = cJSON_Number;
        dflt.valuedouble = 1e-4;
        if (parse_tol(c, a ? a : &dflt, "check.atol", &tol_ns, &plan->atol) != 0) goto out;
        if (parse_tol(c, r ? r : &dflt, "check.rtol", &tol_ns, &plan->rtol) != 0) goto out;
        /* per output: its own tolerances, or the ones above */
        plan->out_check = xcalloc((size_t)op->n_buffers, sizeof *plan->out_check);
        for (int b = 0; b < op->n_buffers; b++) {
            hn_out_check *oc = &plan->out_check[b];
            oc->min_match = -1;
            const cJSON *o = chk ? cJSON_GetObjectItemCaseSensitive(chk, op->buffers[b].name) : NULL;
            if (!o || op->buffers[b].role == HN_BUF_IN) continue;
            char *bp = jp("check", op->buffers[b].name);
            static const char *const OKEYS[] = {"atol", "rtol", "min_match", NULL};
            int orc = cJSON_IsObject(o) ? check_keys(c, o, bp, OKEYS)
                                        : bad(c, bp, "expected an object {\"atol\": ..., \"rtol\": ..., \"min_match\": ...}, got %s",
                                              json_type(o));
            const cJSON *oa = orc == 0 ? cJSON_GetObjectItemCaseSensitive(o, "atol") : NULL;
            const cJSON *orr = orc == 0 ? cJSON_GetObjectItemCaseSensitive(o, "rtol") : NULL;
            char *ap = jp(bp, "atol"), *rp = jp(bp, "rtol");
            if (orc == 0 && oa) orc = parse_tol(c, oa, ap, &tol_ns, &oc->atol);
            if (orc == 0 && orr) orc = parse_tol(c, orr, rp, &tol_ns, &oc->rtol);
            if (orc == 0) orc = get_number(c, o, "min_match", bp, 0, 1, &oc->min_match);
            free(ap);
            free(rp);
            free(bp);
            if (orc != 0) goto out;
        }
    }

    rc = 0;
out:
    free(axis_names);
    free(param_names);
    return rc;
}

/* Line and column (1-based) of at in text. */
static void line_col(const char *text, const char *at, int *line, int *col) {
    *line = 1, *col = 1;
    for (const char *p = text; at && p < at && *p; p++) {
        if (*p == '\n') ++*line, *col = 1;
        else ++*col;
    }
}

/* How many arrays and objects are open at `at` (strings skipped): cJSON stops at
 * CJSON_NESTING_LIMIT, and that deserves its own message. */
static int json_depth_at(const char *text, const char *at) {
    int depth = 0, in_string = 0;
    for (const char *p = text; *p && p < at; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') {
            in_string = 1;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            depth--;
        }
    }
    return depth;
}

/* Removes every "//" key (a comment: "//", "// why ...") from every object under
 * j, so that no part of the parser sees one: a comment is allowed in any object,
 * the name maps (axes, defines, tune, scratch, constants) included. */
static void strip_comments(cJSON *j) {
    for (cJSON *k = j ? j->child : NULL, *next; k; k = next) {
        next = k->next;
        if (cJSON_IsObject(j) && k->string && strncmp(k->string, "//", 2) == 0)
            cJSON_Delete(cJSON_DetachItemViaPointer(j, k));
        else
            strip_comments(k);
    }
}

int hn_config_parse(const char *text, const char *path, int64_t seed_override, hn_plan **out,
                  hn_err *err) {
    *out = NULL;
    ctx c = {path, err, NULL};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        const char *at = end ? end : cJSON_GetErrorPtr();
        int line, col;
        line_col(text, at, &line, &col);
        if (at && json_depth_at(text, at) >= CJSON_NESTING_LIMIT)
            return hn_errf(err, "%s:%d:%d: JSON nested deeper than %d levels", path, line, col,
                           CJSON_NESTING_LIMIT);
        return hn_errf(err, "%s:%d:%d: invalid JSON near '%.20s'", path, line, col, at ? at : "");
    }
    strip_comments(root);
    hn_plan *plan = xcalloc(1, sizeof *plan);
    plan->path = xstrdup(path);
    plan->dir = hn_dirname(path);
    int rc = parse_top(&c, root, plan, seed_override);
    cJSON_Delete(root);
    if (rc != 0) {
        hn_plan_free(plan);
        return -1;
    }
    *out = plan;
    return 0;
}

int hn_config_load(const char *path, int64_t seed_override, hn_plan **out, hn_err *err) {
    char *text;
    size_t size;
    *out = NULL;
    if (hn_read_file(path, &text, &size, err) != 0) return -1;
    const char *nul = memchr(text, '\0', size);
    if (nul) {
        /* JSON is text; the parser would stop there and never see the rest. */
        int line, col;
        line_col(text, nul, &line, &col);
        free(text);
        return hn_errf(err, "%s:%d:%d: a NUL byte (a config is JSON text)", path, line, col);
    }
    int rc = hn_config_parse(text, path, seed_override, out, err);
    free(text);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* scopes */

int hn_scope_lookup(void *scope, const char *name, hn_value *out) {
    const hn_scope *s = scope;
    const hn_plan *p = s->plan;
    if (s->v) {
        const hn_variant_spec *spec = &p->specs[s->v->spec];
        for (int d = 0; d < spec->n_defines; d++)
            if (strcmp(spec->defines[d].name, name) == 0) {
                *out = spec->defines[d].values[s->v->choice[d]];
                return 0;
            }
    }
    if (s->params) {
        int i = hn_op_param_index(p->op, name);
        if (i >= 0 && (s->params_limit <= 0 || i < s->params_limit)) {
            const hn_op_param *pd = &p->op->params[i];
            double v = s->params[i];
            if (pd->type == 'c') *out = (hn_value){.type = HN_VAL_STR, .s = pd->choices[(int)v]};
            else if (pd->type == 'i') *out = (hn_value){.type = HN_VAL_INT, .i = (int64_t)v};
            else *out = (hn_value){.type = HN_VAL_FLOAT, .f = v, .f32 = pd->type == 'f'};
            return 0;
        }
    }
    if (s->dev) {
        const hn_device_info *d = s->dev;
        long long v = -1;
        if (strcmp(name, "max_threads_per_block") == 0) v = d->max_threads_per_block;
        else if (strcmp(name, "max_shared_per_block") == 0) v = (long long)d->shared_per_block;
        else if (strcmp(name, "max_shared_per_block_optin") == 0) v = (long long)d->shared_per_block_optin;
        else if (strcmp(name, "warp_size") == 0) v = d->warp_size;
        else if (strcmp(name, "sm_count") == 0) v = d->sm_count;
        else if (strncmp(name, "max_block_dim_", 14) == 0 && name[14] >= 'x' && name[14] <= 'z' && !name[15])
            v = d->max_block_dim[name[14] - 'x'];
        if (v >= 0) {
            *out = (hn_value){.type = HN_VAL_INT, .i = v};
            return 0;
        }
    }
    if (s->c)
        for (int a = 0; a < p->n_axes; a++)
            if (strcmp(p->axes[a].name, name) == 0) {
                *out = s->c->values[a];
                return 0;
            }
    return -1;
}

#define HN_PARAM_INT_MAX 9007199254740992LL /* 2^53 */

int hn_plan_case_params(const hn_plan *p, const hn_case *c, double *params, hn_err *err) {
    hn_scope s = {p, c, NULL, NULL, 0, NULL};
    for (int i = 0; i < p->op->n_params; i++) {
        const hn_op_param *pd = &p->op->params[i];
        const char *text = hn_expr_text(p->params[i]);
        /* the parameters before this one are known */
        s.params = i ? params : NULL;
        s.params_limit = i;
        if (pd->type == 'c') {
            hn_value v;
            if (hn_expr_eval(p->params[i], hn_scope_lookup, &s, &v, err) != 0)
                return hn_err_prefix(err, "params.%s ('%s')", pd->name, CUT(text));
            int k = v.type == HN_VAL_STR ? hn_op_choice_index(pd, v.s) : -1;
            if (k < 0) {
                char buf[64];
                hn_value_format(&v, buf, sizeof buf);
                hn_sb list;
                hn_sb_init(&list);
                for (int q = 0; pd->choices && pd->choices[q]; q++) hn_sb_addf(&list, "%s%s", q ? ", " : "", pd->choices[q]);
                hn_errf(err, "params.%s ('%s') = %s: not one of %s", pd->name, CUT(text), buf,
                        list.buf);
                hn_sb_free(&list);
                return -1;
            }
            params[i] = k;
        } else if (pd->type == 'i') {
            int64_t v;
            if (hn_expr_eval_int(p->params[i], hn_scope_lookup, &s, &v, err) != 0)
                return hn_err_prefix(err, "params.%s ('%s')", pd->name, CUT(text));
            /* Kept as a double and read back as an integer: it must be exact. */
            if (v < -HN_PARAM_INT_MAX || v > HN_PARAM_INT_MAX)
                return hn_errf(err, "params.%s ('%s') = %lld is out of range (at most 2^53 in "
                                    "magnitude)",
                               pd->name, CUT(text), (long long)v);
            params[i] = (double)v;
        } else if (hn_expr_eval_double(p->params[i], hn_scope_lookup, &s, &params[i], err) != 0) {
            return hn_err_prefix(err, "params.%s ('%s')", pd->name, CUT(text));
        } else if (pd->type == 'f') {
            /* A float parameter is the float32 the kernels are given (pad = 0.1 is
             * 0.100000001490116...): the references, the manifest of --save-tensors
             * and the kernels all use that one value. */
            if (isfinite(params[i]) && !isfinite((float)params[i]))
                return hn_errf(err, "params.%s ('%s') = %g is out of float range", pd->name, CUT(text), params[i]);
            params[i] = (double)(float)params[i];
        }
    }
    return 0;
}

const char *hn_variant_define(const hn_plan *p, const hn_variant *v, const char *name) {
    const hn_variant_spec *spec = &p->specs[v->spec];
    for (int d = 0; d < spec->n_defines; d++)
        if (strcmp(spec->defines[d].name, name) == 0) return spec->defines[d].texts[v->choice[d]];
    return NULL;
}

char **hn_variant_define_args(const hn_plan *p, const hn_variant *v, int *n) {
    const hn_variant_spec *spec = &p->specs[v->spec];
    char **out = xcalloc((size_t)spec->n_defines + 1, sizeof *out);
    for (int d = 0; d < spec->n_defines; d++)
        out[d] = xasprintf("%s=%s", spec->defines[d].name, spec->defines[d].texts[v->choice[d]]);
    *n = spec->n_defines;
    return out;
}

int hn_plan_find_variant(const hn_plan *p, const char *name) {
    for (int i = 0; i < p->n_variants; i++)
        if (strcmp(p->variants[i].label, name) == 0) return i;
    for (int i = 0; i < p->n_variants; i++)
        if (strcmp(p->specs[p->variants[i].spec].name, name) == 0) return i;
    for (int i = 0; i < p->n_variants; i++)
        if (strcmp(p->specs[p->variants[i].spec].kernel, name) == 0) return i;
    return -1;
}

int hn_plan_make_case(const hn_plan *p, const char *assign, hn_case *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    out->id = -1;
    out->index = -1;
    out->values = xcalloc((size_t)p->n_axes, sizeof *out->values);
    out->strings = xstrdup(assign);
    int *given = xcalloc((size_t)p->n_axes, sizeof *given);
    char *save = NULL;
    for (char *tok = strtok_r(out->strings, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            hn_errf(err, "--set: '%s' is not name=value", CUT(tok));
            goto fail;
        }
        *eq = '\0';
        char *name = hn_trim(tok), *val = hn_trim(eq + 1);
        int a = 0;
        while (a < p->n_axes && strcmp(p->axes[a].name, name) != 0) a++;
        if (a == p->n_axes) {
            hn_sb names;
            hn_sb_init(&names);
            for (int i = 0; i < p->n_axes; i++) hn_sb_addf(&names, "%s%s", i ? ", " : "", p->axes[i].name);
            hn_errf(err, "--set: '%s' is not an axis of %s (axes: %s)", CUT(name), p->name, names.buf);
            hn_sb_free(&names);
            goto fail;
        }
        if (given[a]) {
            hn_errf(err, "--set: axis '%s' is given twice", p->axes[a].name);
            goto fail;
        }
        char *end;
        long long iv = strtoll(val, &end, 0);
        if (*val && !*end) {
            out->values[a] = (hn_value){.type = HN_VAL_INT, .i = iv};
        } else {
            double dv = strtod(val, &end);
            if (*val && !*end) out->values[a] = (hn_value){.type = HN_VAL_FLOAT, .f = dv};
            else out->values[a] = (hn_value){.type = HN_VAL_STR, .s = val};
        }
        given[a] = 1;
    }
    /* an axis of one value needs no --set: it can have no other */
    for (int a = 0; a < p->n_axes; a++)
        if (!given[a] && p->axes[a].n == 1) out->values[a] = p->axes[a].values[0];
        else if (!given[a]) {
            hn_errf(err, "--set: no value for axis '%s' (every axis with several values must be given)",
                    p->axes[a].name);
            goto fail;
        }
    free(given);
    return 0;
fail:
    free(given);
    hn_case_release(out);
    return -1;
}

void hn_case_release(hn_case *c) {
    if (!c) return;
    free(c->values);
    free(c->strings);
    c->values = NULL;
    c->strings = NULL;
}
