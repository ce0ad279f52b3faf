/*
 * expr.h: the harness's own small expression language, used by configs for launch
 * geometry, constraints, operator parameters and tolerances. Nothing in a config
 * is ever handed to a shell or an interpreter: text is parsed here into a tree and
 * evaluated here.
 *
 * Values are 64-bit integers, doubles or strings (string literals in "double" or
 * 'single' quotes, and define values such as ACCUM_DTYPE=float).
 *
 *   literals     42  0x20  1.5  1e-4  "float"
 *   names        any identifier; resolved by the caller's lookup function
 *   operators    ?:  ||  &&  == !=  < <= > >=  + -  * / %  unary - + !
 *                (C precedence; integer / and % truncate as in C; division by
 *                zero and integer overflow are errors; an int meeting a double
 *                becomes a double; a comparison with a float32 value (f32
 *                below) is made in float32; strings only compare with == and !=)
 *   functions    ceil_div(a,b) round_up(a,b) min(a,b,...) max(a,b,...) abs(a)
 *                sqrt(a) pow(a,b) log2(a) floor(a) ceil(a) int(a) float(a)
 *
 * Limits, generous for configs (whose expressions are a line or two) and there so
 * that hostile text ends in an error, never in a stack overflow:
 *   HN_EXPR_MAX_CHARS  characters of text
 *   HN_EXPR_MAX_DEPTH  levels of nesting: each parenthesis, function call, unary
 *                      operator and ?: branch opens one ("(1)" is 1, "--1" is 2)
 *   HN_EXPR_MAX_TERMS  terms: the numbers, strings, names, operators and calls of
 *                      the tree ("1+2" has 3)
 *
 * Invariants: a parsed hn_expr is immutable; evaluating it does not allocate
 * except for the error message; its tree is at most HN_EXPR_MAX_TERMS nodes tall
 * (a flat chain such as 1+1+...+1 makes a left spine as tall as it is long), which
 * bounds the recursion of evaluation, hn_expr_names and hn_expr_free; parsing
 * recurses at most a fixed number of frames per nesting level.
 */
#ifndef HN_EXPR_H
#define HN_EXPR_H

#include <stdint.h>

#include "util.h"

#define HN_EXPR_MAX_CHARS 4096
#define HN_EXPR_MAX_DEPTH 256
#define HN_EXPR_MAX_TERMS 1024

typedef enum { HN_VAL_INT, HN_VAL_FLOAT, HN_VAL_STR } hn_val_type;

typedef struct {
    hn_val_type type;
    int64_t i;
    double f;
    const char *s; /* borrowed: points into the expression or the lookup's storage */
    /* f holds a float32 (an operator's float parameter, as the kernels get it):
     * a comparison (== != < <= > >=) with it is made in float32, so that
     * `alpha == 0.1` holds for the 0.1f the config's alpha: 0.1 became (unary
     * - and + keep the mark; arithmetic gives plain doubles) */
    unsigned char f32;
} hn_value;

typedef struct hn_expr hn_expr;

/* Resolves a name; returns 0 and fills *out, or -1 if the name is unknown. */
typedef int (*hn_expr_lookup)(void *ctx, const char *name, hn_value *out);

/* Parses text. On error returns -1 with a message giving the column and what was
 * expected, e.g. "at column 7: expected ')'", or the limit exceeded:
 * "expression longer than 4096 characters (5000)", "at column 257: expression
 * nested deeper than 256 levels", "at column 2049: expression has more than 1024
 * terms". */
int hn_expr_parse(const char *text, hn_expr **out, hn_err *err);
void hn_expr_free(hn_expr *e);

/* The original text. */
const char *hn_expr_text(const hn_expr *e);

/* Calls fn(ctx, name) for every distinct name the expression refers to (function
 * names excluded), in order of first appearance. Stops early and returns -1 if fn
 * does. */
int hn_expr_names(const hn_expr *e, int (*fn)(void *ctx, const char *name), void *ctx);

int hn_expr_eval(const hn_expr *e, hn_expr_lookup lookup, void *ctx, hn_value *out, hn_err *err);

/* Evaluates and converts: integer results only (a double that is a whole number is
 * accepted), or any number as a double. */
int hn_expr_eval_int(const hn_expr *e, hn_expr_lookup lookup, void *ctx, int64_t *out,
                     hn_err *err);
int hn_expr_eval_double(const hn_expr *e, hn_expr_lookup lookup, void *ctx, double *out,
                        hn_err *err);

/* Convenience: parse and evaluate in one go (for tests and one-off uses). */
int hn_expr_eval_text(const char *text, hn_expr_lookup lookup, void *ctx, hn_value *out,
                      hn_err *err);

/* Writes a value as text (integers exactly, doubles with %.17g trimmed by %g when
 * exact). */
void hn_value_format(const hn_value *v, char *buf, size_t size);

/* Whether a value is "true" (non-zero number, non-empty string). */
int hn_value_truthy(const hn_value *v);

#endif
