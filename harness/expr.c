/*
 * expr.c: recursive-descent parser into a small tree, and a tree-walking
 * evaluator; see expr.h for the language and its limits.
 *
 * The parser counts nesting (parser.depth) and nodes (parser.terms) and stops at
 * HN_EXPR_MAX_DEPTH and HN_EXPR_MAX_TERMS; binary chains are built by a loop, so
 * the C stack grows only with nesting. Every tree walk (eval, walk_names,
 * node_free) recurses once per tree level, and a tree has at most
 * HN_EXPR_MAX_TERMS levels.
 */
#define _GNU_SOURCE
#include "expr.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    N_NUM,
    N_STR,
    N_NAME,
    N_CALL,
    N_UNARY,
    N_BINARY,
    N_TERNARY,
} node_kind;

typedef enum {
    OP_NEG, OP_POS, OP_NOT,
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
    OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE,
    OP_AND, OP_OR,
} op_kind;

#define MAX_ARGS 8

typedef struct node node;
struct node {
    node_kind kind;
    op_kind op;
    int column;        /* 1-based, for messages */
    hn_value val;      /* N_NUM, N_STR */
    char *name;        /* N_NAME, N_CALL */
    node *kid[MAX_ARGS];
    int n_kids;
};

struct hn_expr {
    char *text;
    node *root;
};

typedef struct {
    const char *text;
    const char *p;
    hn_err *err;
    int depth; /* open nesting levels (parentheses, calls, unary operators, ?:) */
    int terms; /* nodes made */
} parser;

static void node_free(node *n) {
    if (!n) return;
    for (int i = 0; i < n->n_kids; i++) node_free(n->kid[i]);
    free(n->name);
    if (n->kind == N_STR) free((char *)n->val.s);
    free(n);
}

static int column(const parser *ps) {
    return (int)(ps->p - ps->text) + 1;
}

/* A new node, or NULL (and the error) past HN_EXPR_MAX_TERMS. */
static node *node_new(parser *ps, node_kind kind, int column) {
    if (ps->terms == HN_EXPR_MAX_TERMS) {
        hn_errf(ps->err, "at column %d: expression has more than %d terms (numbers, names, "
                         "strings, operators and calls)",
                column, HN_EXPR_MAX_TERMS);
        return NULL;
    }
    ps->terms++;
    node *n = xcalloc(1, sizeof *n);
    n->kind = kind;
    n->column = column;
    return n;
}

/* Opens a nesting level at column col; -1 (and the error) past HN_EXPR_MAX_DEPTH.
 * Each successful enter is paired with a leave. */
static int enter(parser *ps, int col) {
    if (ps->depth == HN_EXPR_MAX_DEPTH)
        return hn_errf(ps->err, "at column %d: expression nested deeper than %d levels", col,
                       HN_EXPR_MAX_DEPTH);
    ps->depth++;
    return 0;
}

static void leave(parser *ps) {
    ps->depth--;
}

static void skip_ws(parser *ps) {
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int fail(parser *ps, const char *what) {
    if (*ps->p)
        return hn_errf(ps->err, "at column %d: expected %s, found '%.12s'", column(ps), what, ps->p);
    return hn_errf(ps->err, "at column %d: expected %s, found the end", column(ps), what);
}

static int accept(parser *ps, const char *tok) {
    skip_ws(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) != 0) return 0;
    /* Do not split "<=" into "<" "=", nor take "=" of "==". */
    if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!') && ps->p[1] == '=') return 0;
    if (n == 1 && (tok[0] == '&' || tok[0] == '|') && ps->p[1] == tok[0]) return 0;
    ps->p += n;
    return 1;
}

static node *parse_expr(parser *ps);

static node *parse_primary(parser *ps) {
    skip_ws(ps);
    int col = column(ps);
    const char *p = ps->p;
    if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
        char *end;
        node *n = node_new(ps, N_NUM, col);
        if (!n) return NULL;
        int is_float = 0;
        for (const char *q = p; isalnum((unsigned char)*q) || *q == '.'; q++) {
            if (*q == '.' || ((*q == 'e' || *q == 'E') && !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))))
                is_float = 1;
        }
        if (is_float) {
            n->val.type = HN_VAL_FLOAT;
            n->val.f = strtod(p, &end);
        } else {
            n->val.type = HN_VAL_INT;
            errno = 0;
            unsigned long long v = strtoull(p, &end, 0);
            if (errno || v > INT64_MAX) {
                node_free(n);
                fail(ps, "an integer that fits in 64 bits");
                return NULL;
            }
            n->val.i = (int64_t)v;
        }
        if (end == p || isalpha((unsigned char)*end) || *end == '_') {
            node_free(n);
            fail(ps, "a number");
            return NULL;
        }
        ps->p = end;
        return n;
    }
    if (*p == '"' || *p == '\'') {
        char q = *p;
        const char *end = strchr(p + 1, q);
        if (!end) {
            fail(ps, "a closing quote");
            return NULL;
        }
        node *n = node_new(ps, N_STR, col);
        if (!n) return NULL;
        n->val.type = HN_VAL_STR;
        n->val.s = xstrndup(p + 1, (size_t)(end - p - 1));
        ps->p = end + 1;
        return n;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
        const char *q = p;
        while (isalnum((unsigned char)*q) || *q == '_') q++;
        ps->p = q;
        int call = accept(ps, "(");
        node *n = node_new(ps, call ? N_CALL : N_NAME, col);
        if (!n) return NULL;
        n->name = xstrndup(p, (size_t)(q - p));
        if (!call) return n;
        if (enter(ps, col) != 0) {
            node_free(n);
            return NULL;
        }
        int ok = accept(ps, ")");
        while (!ok) {
            if (n->n_kids == MAX_ARGS) {
                fail(ps, "at most 8 arguments");
                break;
            }
            node *a = parse_expr(ps);
            if (!a) break;
            n->kid[n->n_kids++] = a;
            if (accept(ps, ")")) ok = 1;
            else if (!accept(ps, ",")) {
                fail(ps, "',' or ')'");
                break;
            }
        }
        leave(ps);
        if (!ok) {
            node_free(n);
            return NULL;
        }
        return n;
    }
    if (accept(ps, "(")) {
        if (enter(ps, col) != 0) return NULL;
        node *n = parse_expr(ps);
        leave(ps);
        if (!n) return NULL;
        if (!accept(ps, ")")) {
            fail(ps, "')'");
            node_free(n);
            return NULL;
        }
        return n;
    }
    fail(ps, "a number, a name, a string or '('");
    return NULL;
}

static node *parse_unary(parser *ps) {
    skip_ws(ps);
    int col = column(ps);
    op_kind op;
    if (accept(ps, "-")) op = OP_NEG;
    else if (accept(ps, "+")) op = OP_POS;
    else if (accept(ps, "!")) op = OP_NOT;
    else return parse_primary(ps);
    if (enter(ps, col) != 0) return NULL;
    node *k = parse_unary(ps);
    leave(ps);
    if (!k) return NULL;
    node *n = node_new(ps, N_UNARY, col);
    if (!n) {
        node_free(k);
        return NULL;
    }
    n->op = op;
    n->kid[0] = k;
    n->n_kids = 1;
    return n;
}

typedef struct {
    const char *tok;
    op_kind op;
} binop;

/* Precedence levels from loosest to tightest. */
static const binop LEVELS[][5] = {
    {{"||", OP_OR}},
    {{"&&", OP_AND}},
    {{"==", OP_EQ}, {"!=", OP_NE}},
    {{"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT}},
    {{"+", OP_ADD}, {"-", OP_SUB}},
    {{"*", OP_MUL}, {"/", OP_DIV}, {"%", OP_MOD}},
};
#define N_LEVELS ((int)HN_ARRAY_LEN(LEVELS))

static node *parse_level(parser *ps, int level) {
    if (level == N_LEVELS) return parse_unary(ps);
    node *left = parse_level(ps, level + 1);
    while (left) {
        skip_ws(ps);
        int col = column(ps);
        const binop *hit = NULL;
        for (int i = 0; i < 5 && LEVELS[level][i].tok; i++)
            if (accept(ps, LEVELS[level][i].tok)) {
                hit = &LEVELS[level][i];
                break;
            }
        if (!hit) break;
        node *right = parse_level(ps, level + 1);
        node *n = right ? node_new(ps, N_BINARY, col) : NULL;
        if (!n) {
            node_free(left);
            node_free(right);
            return NULL;
        }
        n->op = hit->op;
        n->kid[0] = left;
        n->kid[1] = right;
        n->n_kids = 2;
        left = n;
    }
    return left;
}

static node *parse_expr(parser *ps) {
    node *cond = parse_level(ps, 0);
    if (!cond) return NULL;
    skip_ws(ps);
    int col = column(ps);
    if (!accept(ps, "?")) return cond;
    /* The branches are one level deeper (a chain of ?: nests to the right). */
    if (enter(ps, col) != 0) {
        node_free(cond);
        return NULL;
    }
    node *a = parse_expr(ps), *b = NULL;
    if (a && !accept(ps, ":")) fail(ps, "':'");
    else if (a) b = parse_expr(ps);
    leave(ps);
    node *n = b ? node_new(ps, N_TERNARY, col) : NULL;
    if (!n) {
        node_free(cond);
        node_free(a);
        node_free(b);
        return NULL;
    }
    n->kid[0] = cond;
    n->kid[1] = a;
    n->kid[2] = b;
    n->n_kids = 3;
    return n;
}

int hn_expr_parse(const char *text, hn_expr **out, hn_err *err) {
    *out = NULL;
    size_t len = strlen(text);
    if (len > HN_EXPR_MAX_CHARS)
        return hn_errf(err, "expression longer than %d characters (%zu)", HN_EXPR_MAX_CHARS, len);
    parser ps = {.text = text, .p = text, .err = err};
    node *root = parse_expr(&ps);
    if (!root) return -1;
    skip_ws(&ps);
    if (*ps.p) {
        fail(&ps, "an operator or the end");
        node_free(root);
        return -1;
    }
    hn_expr *e = xmalloc(sizeof *e);
    e->text = xstrdup(text);
    e->root = root;
    *out = e;
    return 0;
}

void hn_expr_free(hn_expr *e) {
    if (!e) return;
    node_free(e->root);
    free(e->text);
    free(e);
}

const char *hn_expr_text(const hn_expr *e) {
    return e->text;
}

typedef struct {
    const char *seen[64];
    int n;
    int (*fn)(void *, const char *);
    void *ctx;
} names_walk;

static int walk_names(const node *n, names_walk *w) {
    if (n->kind == N_NAME) {
        for (int i = 0; i < w->n; i++)
            if (strcmp(w->seen[i], n->name) == 0) return 0;
        if (w->n < 64) w->seen[w->n++] = n->name;
        return w->fn(w->ctx, n->name);
    }
    for (int i = 0; i < n->n_kids; i++)
        if (walk_names(n->kid[i], w) != 0) return -1;
    return 0;
}

int hn_expr_names(const hn_expr *e, int (*fn)(void *ctx, const char *name), void *ctx) {
    names_walk w = {.n = 0, .fn = fn, .ctx = ctx};
    return walk_names(e->root, &w);
}

/* ---------------------------------------------------------------------- */
/* evaluation */

typedef struct {
    hn_expr_lookup lookup;
    void *ctx;
    hn_err *err;
} evaluator;

static double as_double(const hn_value *v) {
    return v->type == HN_VAL_INT ? (double)v->i : v->f;
}

static hn_value mk_int(int64_t i) {
    hn_value v = {.type = HN_VAL_INT, .i = i};
    return v;
}

static hn_value mk_float(double f) {
    hn_value v = {.type = HN_VAL_FLOAT, .f = f};
    return v;
}

int hn_value_truthy(const hn_value *v) {
    switch (v->type) {
    case HN_VAL_INT: return v->i != 0;
    case HN_VAL_FLOAT: return v->f != 0.0;
    case HN_VAL_STR: return v->s && v->s[0];
    }
    return 0;
}

static const char *type_name(const hn_value *v) {
    return v->type == HN_VAL_STR ? "a string" : "a number";
}

static int eval(const node *n, evaluator *ev, hn_value *out);

static int need_number(const node *n, evaluator *ev, const hn_value *v, const char *what) {
    if (v->type != HN_VAL_STR) return 0;
    return hn_errf(ev->err, "at column %d: %s needs a number, got the string \"%s\"", n->column,
                   what, v->s);
}

static int eval_call(const node *n, evaluator *ev, hn_value *out) {
    hn_value a[MAX_ARGS];
    for (int i = 0; i < n->n_kids; i++) {
        if (eval(n->kid[i], ev, &a[i]) != 0) return -1;
        if (need_number(n, ev, &a[i], n->name) != 0) return -1;
    }
    const char *f = n->name;
    int argc = n->n_kids;
#define ARGS(k)                                                                                  \
    if (argc != (k))                                                                             \
        return hn_errf(ev->err, "at column %d: %s() takes %d argument%s, got %d", n->column, f, \
                       (k), (k) == 1 ? "" : "s", argc)
    if (strcmp(f, "ceil_div") == 0 || strcmp(f, "round_up") == 0) {
        ARGS(2);
        if (a[0].type == HN_VAL_INT && a[1].type == HN_VAL_INT) {
            if (a[1].i == 0) return hn_errf(ev->err, "at column %d: %s by zero", n->column, f);
            if (a[0].i == INT64_MIN && a[1].i == -1)
                return hn_errf(ev->err, "at column %d: integer overflow", n->column);
            int64_t q = a[0].i / a[1].i;
            if ((a[0].i % a[1].i != 0) && ((a[0].i < 0) == (a[1].i < 0))) q++;
            if (strcmp(f, "round_up") == 0 && __builtin_mul_overflow(q, a[1].i, &q))
                return hn_errf(ev->err, "at column %d: integer overflow", n->column);
            *out = mk_int(q);
        } else {
            double q = ceil(as_double(&a[0]) / as_double(&a[1]));
            *out = mk_float(strcmp(f, "round_up") == 0 ? q * as_double(&a[1]) : q);
        }
        return 0;
    }
    if (strcmp(f, "min") == 0 || strcmp(f, "max") == 0) {
        if (argc < 1) return hn_errf(ev->err, "at column %d: %s() needs arguments", n->column, f);
        int want_max = f[1] == 'a';
        hn_value best = a[0];
        for (int i = 1; i < argc; i++) {
            int better = want_max ? as_double(&a[i]) > as_double(&best)
                                  : as_double(&a[i]) < as_double(&best);
            if (a[i].type == HN_VAL_INT && best.type == HN_VAL_INT)
                better = want_max ? a[i].i > best.i : a[i].i < best.i;
            if (better) best = a[i];
        }
        int any_float = 0;
        for (int i = 0; i < argc; i++) any_float |= a[i].type == HN_VAL_FLOAT;
        *out = any_float ? mk_float(as_double(&best)) : best;
        return 0;
    }
    if (strcmp(f, "abs") == 0) {
        ARGS(1);
        if (a[0].type == HN_VAL_INT && a[0].i == INT64_MIN)
            return hn_errf(ev->err, "at column %d: integer overflow", n->column);
        *out = a[0].type == HN_VAL_INT ? mk_int(a[0].i < 0 ? -a[0].i : a[0].i) : mk_float(fabs(a[0].f));
        return 0;
    }
    if (strcmp(f, "int") == 0) {
        ARGS(1);
        double d = as_double(&a[0]);
        if (!(d > -9.2e18 && d < 9.2e18))
            return hn_errf(ev->err, "at column %d: int() of a value out of range", n->column);
        *out = a[0].type == HN_VAL_INT ? a[0] : mk_int((int64_t)d);
        return 0;
    }
    if (strcmp(f, "float") == 0) {
        ARGS(1);
        *out = mk_float(as_double(&a[0]));
        return 0;
    }
    double (*fn1)(double) = NULL;
    if (strcmp(f, "sqrt") == 0) fn1 = sqrt;
    else if (strcmp(f, "log2") == 0) fn1 = log2;
    else if (strcmp(f, "floor") == 0) fn1 = floor;
    else if (strcmp(f, "ceil") == 0) fn1 = ceil;
    if (fn1) {
        ARGS(1);
        *out = mk_float(fn1(as_double(&a[0])));
        return 0;
    }
    if (strcmp(f, "pow") == 0) {
        ARGS(2);
        *out = mk_float(pow(as_double(&a[0]), as_double(&a[1])));
        return 0;
    }
#undef ARGS
    return hn_errf(ev->err,
                   "at column %d: unknown function '%s' (known: ceil_div, round_up, min, max, abs, "
                   "sqrt, pow, log2, floor, ceil, int, float)",
                   n->column, f);
}

static int eval_binary(const node *n, evaluator *ev, hn_value *out) {
    hn_value a, b;
    if (eval(n->kid[0], ev, &a) != 0) return -1;
    /* Short-circuit && and || so guards like `x != 0 && 8 / x > 1` work. */
    if (n->op == OP_AND || n->op == OP_OR) {
        int ta = hn_value_truthy(&a);
        if (n->op == OP_AND && !ta) return *out = mk_int(0), 0;
        if (n->op == OP_OR && ta) return *out = mk_int(1), 0;
        if (eval(n->kid[1], ev, &b) != 0) return -1;
        *out = mk_int(hn_value_truthy(&b));
        return 0;
    }
    if (eval(n->kid[1], ev, &b) != 0) return -1;
    if (a.type == HN_VAL_STR || b.type == HN_VAL_STR) {
        if ((n->op != OP_EQ && n->op != OP_NE) || a.type != b.type)
            return hn_errf(ev->err,
                           "at column %d: cannot apply this operator to %s and %s (strings only "
                           "compare with == and != to strings)",
                           n->column, type_name(&a), type_name(&b));
        int eq = strcmp(a.s, b.s) == 0;
        *out = mk_int(n->op == OP_EQ ? eq : !eq);
        return 0;
    }
    if (a.type == HN_VAL_INT && b.type == HN_VAL_INT) {
        int64_t x = a.i, y = b.i, r = 0;
        int overflow = 0;
        switch (n->op) {
        case OP_ADD: overflow = __builtin_add_overflow(x, y, &r); break;
        case OP_SUB: overflow = __builtin_sub_overflow(x, y, &r); break;
        case OP_MUL: overflow = __builtin_mul_overflow(x, y, &r); break;
        case OP_DIV:
        case OP_MOD:
            if (y == 0) return hn_errf(ev->err, "at column %d: division by zero", n->column);
            if (x == INT64_MIN && y == -1) overflow = 1;
            else r = n->op == OP_DIV ? x / y : x % y;
            break;
        case OP_LT: r = x < y; break;
        case OP_LE: r = x <= y; break;
        case OP_GT: r = x > y; break;
        case OP_GE: r = x >= y; break;
        case OP_EQ: r = x == y; break;
        case OP_NE: r = x != y; break;
        default: break;
        }
        if (overflow) return hn_errf(ev->err, "at column %d: integer overflow", n->column);
        *out = mk_int(r);
        return 0;
    }
    double x = as_double(&a), y = as_double(&b);
    /* a float32 parameter compared with a number: both in float32, the
     * parameter's precision (alpha == 0.1 for the config's alpha: 0.1) */
    if (n->op >= OP_LT && n->op <= OP_NE && (a.f32 || b.f32)) x = (float)x, y = (float)y;
    switch (n->op) {
    case OP_ADD: *out = mk_float(x + y); break;
    case OP_SUB: *out = mk_float(x - y); break;
    case OP_MUL: *out = mk_float(x * y); break;
    case OP_DIV:
        if (y == 0.0) return hn_errf(ev->err, "at column %d: division by zero", n->column);
        *out = mk_float(x / y);
        break;
    case OP_MOD:
        if (y == 0.0) return hn_errf(ev->err, "at column %d: division by zero", n->column);
        *out = mk_float(fmod(x, y));
        break;
    case OP_LT: *out = mk_int(x < y); break;
    case OP_LE: *out = mk_int(x <= y); break;
    case OP_GT: *out = mk_int(x > y); break;
    case OP_GE: *out = mk_int(x >= y); break;
    case OP_EQ: *out = mk_int(x == y); break;
    case OP_NE: *out = mk_int(x != y); break;
    default: break;
    }
    return 0;
}

static int eval(const node *n, evaluator *ev, hn_value *out) {
    switch (n->kind) {
    case N_NUM:
    case N_STR:
        *out = n->val;
        return 0;
    case N_NAME:
        if (!ev->lookup || ev->lookup(ev->ctx, n->name, out) != 0)
            return hn_errf(ev->err, "at column %d: unknown name '%s'", n->column, n->name);
        return 0;
    case N_CALL:
        return eval_call(n, ev, out);
    case N_UNARY: {
        hn_value v;
        if (eval(n->kid[0], ev, &v) != 0) return -1;
        if (n->op == OP_NOT) {
            *out = mk_int(!hn_value_truthy(&v));
            return 0;
        }
        if (need_number(n, ev, &v, n->op == OP_NEG ? "unary -" : "unary +") != 0) return -1;
        if (n->op == OP_POS) *out = v;
        else if (v.type == HN_VAL_INT) {
            if (v.i == INT64_MIN) return hn_errf(ev->err, "at column %d: integer overflow", n->column);
            *out = mk_int(-v.i);
        } else {
            *out = mk_float(-v.f);
            out->f32 = v.f32; /* -alpha is as float32 as alpha */
        }
        return 0;
    }
    case N_BINARY:
        return eval_binary(n, ev, out);
    case N_TERNARY: {
        hn_value c;
        if (eval(n->kid[0], ev, &c) != 0) return -1;
        return eval(n->kid[hn_value_truthy(&c) ? 1 : 2], ev, out);
    }
    }
    return hn_errf(ev->err, "internal error: bad expression node");
}

int hn_expr_eval(const hn_expr *e, hn_expr_lookup lookup, void *ctx, hn_value *out, hn_err *err) {
    evaluator ev = {lookup, ctx, err};
    return eval(e->root, &ev, out);
}

int hn_expr_eval_int(const hn_expr *e, hn_expr_lookup lookup, void *ctx, int64_t *out,
                     hn_err *err) {
    hn_value v;
    if (hn_expr_eval(e, lookup, ctx, &v, err) != 0) return -1;
    if (v.type == HN_VAL_INT) {
        *out = v.i;
        return 0;
    }
    if (v.type == HN_VAL_FLOAT && v.f == floor(v.f) && fabs(v.f) < 9e18) {
        *out = (int64_t)v.f;
        return 0;
    }
    if (v.type == HN_VAL_STR) /* a define's text ("64 * 2") is a string, not arithmetic */
        return hn_errf(err, "expected an integer, got the string \"%s\"", v.s);
    char buf[64];
    hn_value_format(&v, buf, sizeof buf);
    return hn_errf(err, "expected an integer, got %s", buf);
}

int hn_expr_eval_double(const hn_expr *e, hn_expr_lookup lookup, void *ctx, double *out,
                        hn_err *err) {
    hn_value v;
    if (hn_expr_eval(e, lookup, ctx, &v, err) != 0) return -1;
    if (v.type == HN_VAL_STR) return hn_errf(err, "expected a number, got the string \"%s\"", v.s);
    *out = as_double(&v);
    return 0;
}

int hn_expr_eval_text(const char *text, hn_expr_lookup lookup, void *ctx, hn_value *out,
                      hn_err *err) {
    hn_expr *e;
    if (hn_expr_parse(text, &e, err) != 0) return -1;
    int rc = hn_expr_eval(e, lookup, ctx, out, err);
    /* A string result would point into the freed tree. */
    if (rc == 0 && out->type == HN_VAL_STR) {
        rc = hn_errf(err, "a string result cannot outlive its expression; use hn_expr_eval");
    }
    hn_expr_free(e);
    return rc;
}

void hn_value_format(const hn_value *v, char *buf, size_t size) {
    switch (v->type) {
    case HN_VAL_INT: snprintf(buf, size, "%" PRId64, v->i); break;
    case HN_VAL_FLOAT: snprintf(buf, size, "%.17g", v->f);
        /* Prefer the short form when it reads back exactly. */
        {
            char s[64];
            snprintf(s, sizeof s, "%g", v->f);
            if (strtod(s, NULL) == v->f) snprintf(buf, size, "%s", s);
        }
        break;
    case HN_VAL_STR: snprintf(buf, size, "%s", v->s); break;
    }
}
