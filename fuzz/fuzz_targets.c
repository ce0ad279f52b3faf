/* fuzz_targets.c: see fuzz_targets.h. */
#include "fuzz_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "expr.h"
#include "sweep.h"

/* How much of an accepted plan is exercised: enough to reach every expression,
 * few enough to keep an input fast. */
#define MAX_CASES 8
#define MAX_VARIANTS 8

static void broken(const char *what, const char *detail) {
    fprintf(stderr, "fuzz: invariant broken: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

/* An error must say what went wrong. */
static void need_message(const hn_err *e, const char *where) {
    if (!e->msg[0]) broken("an error without a message", where);
}

/* The input as a C string: the bytes before the first NUL; *rest: the bytes
 * after it (NULL when there is no NUL). Caller frees both. */
static char *split_input(const uint8_t *data, size_t size, char **rest) {
    const uint8_t *nul = memchr(data, '\0', size);
    size_t n = nul ? (size_t)(nul - data) : size;
    char *text = xmalloc(n + 1);
    memcpy(text, data, n);
    text[n] = '\0';
    *rest = NULL;
    if (nul) {
        size_t m = size - n - 1;
        *rest = xmalloc(m + 1);
        memcpy(*rest, nul + 1, m);
        (*rest)[m] = '\0';
    }
    return text;
}

/* ---------------------------------------------------------------------- */
/* configs */

static void eval_int_or_error(const hn_expr *e, hn_scope *s, const char *where) {
    int64_t v;
    hn_err err = {0};
    if (hn_expr_eval_int(e, hn_scope_lookup, s, &v, &err) != 0) need_message(&err, where);
}

static void eval_double_or_error(const hn_expr *e, hn_scope *s, const char *where) {
    double v;
    hn_err err = {0};
    if (hn_expr_eval_double(e, hn_scope_lookup, s, &v, &err) != 0) need_message(&err, where);
}

/* What `harness list` computes for a case, and what a run evaluates for each of
 * its variants before launching. */
static void exercise_case(const hn_plan *p, const hn_case *c) {
    const hn_op *op = p->op;
    double *params = xcalloc((size_t)op->n_params + 1, sizeof *params);
    hn_err err = {0};
    if (hn_plan_case_params(p, c, params, &err) != 0) {
        need_message(&err, "hn_plan_case_params");
        free(params);
        return;
    }
    int64_t counts[16];
    if (op->n_buffers <= 16) {
        if (op->shape(params, counts, &err) == 0) {
            char label[128];
            (void)op->flop(params);
            (void)op->bytes(params);
            op->label(params, label, sizeof label);
        } else {
            need_message(&err, "op->shape");
        }
    }
    hn_scope whole = {.plan = p, .c = c, .params = params};
    eval_double_or_error(p->atol, &whole, "check.atol without a variant");
    for (int i = 0; i < p->n_variants && i < MAX_VARIANTS; i++) {
        const hn_variant *v = &p->variants[i];
        const hn_variant_spec *s = &p->specs[v->spec];
        const char *failed = NULL;
        err.msg[0] = '\0';
        int applies = hn_sweep_variant_applies(p, v, c, params, &failed, &err);
        if (applies < 0) need_message(&err, "hn_sweep_variant_applies");
        if (applies == 0 && !failed) broken("a variant skipped without the constraint that failed", NULL);
        hn_scope scope = {.plan = p, .c = c, .v = v, .params = params};
        for (int d = 0; d < 3; d++) {
            eval_int_or_error(s->block[d], &scope, "block");
            eval_int_or_error(s->grid[d], &scope, "grid");
        }
        eval_int_or_error(s->shared, &scope, "shared_bytes");
        for (int a = 0; a < s->n_args; a++) {
            if (s->args[a].kind != HN_ARG_EXPR) continue;
            hn_value val;
            hn_err e = {0};
            if (hn_expr_eval(s->args[a].expr, hn_scope_lookup, &scope, &val, &e) != 0)
                need_message(&e, "args");
        }
        eval_double_or_error(p->atol, &scope, "check.atol");
        eval_double_or_error(p->rtol, &scope, "check.rtol");
    }
    free(params);
}

/* The plan's shape as config.h promises it. */
static void check_plan(const hn_plan *p) {
    if (!p->op) broken("a plan without an operator", NULL);
    if (p->n_cases < 1) broken("a plan without cases", NULL);
    if (p->n_variants < 1) broken("a plan without variants", NULL);
    if (p->sample_count > 0 && p->n_cases > p->sample_count) broken("more cases than the sample", NULL);
    if (p->n_cases > p->n_total) broken("more cases than combinations", NULL);
    for (int64_t i = 1; i < p->n_cases; i++)
        if (p->cases[i].index <= p->cases[i - 1].index) broken("cases out of order", NULL);
    for (int i = 0; i < p->n_variants; i++)
        if (p->variants[i].spec < 0 || p->variants[i].spec >= p->n_specs) broken("a variant without its spec", NULL);
}

/* "axis=value,..." for case 0, as --set takes it. */
static char *assignment_of(const hn_plan *p) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int a = 0; a < p->n_axes; a++) {
        char buf[64];
        hn_value_format(&p->cases[0].values[a], buf, sizeof buf);
        hn_sb_addf(&sb, "%s%s=%s", a ? "," : "", p->axes[a].name, buf);
    }
    return hn_sb_detach(&sb);
}

int hn_fuzz_config(const uint8_t *data, size_t size, hn_err *err) {
    char *set;
    char *text = split_input(data, size, &set);
    hn_plan *p = NULL;
    err->msg[0] = '\0';
    int rc = hn_plan_parse(text, HN_FUZZ_CONFIG_PATH, -1, &p, err);
    if (rc != 0) {
        need_message(err, "hn_plan_parse");
        if (p) broken("a plan returned with an error", NULL);
    } else {
        check_plan(p);
        for (int64_t i = 0; i < p->n_cases && i < MAX_CASES; i++) exercise_case(p, &p->cases[i]);
        char *assign = set ? set : assignment_of(p);
        hn_case made;
        hn_err e = {0};
        if (hn_plan_make_case(p, assign, &made, &e) == 0) {
            exercise_case(p, &made);
            hn_case_release(&made);
        } else {
            /* Refusals are fine: a string value may hold ',' or '='. */
            need_message(&e, "hn_plan_make_case");
        }
        if (assign != set) free(assign);
        hn_plan_free(p);
    }
    free(text);
    free(set);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* expressions */

static int lookup(void *ctx, const char *name, hn_value *out) {
    (void)ctx;
    static const struct {
        const char *name;
        hn_value v;
    } NAMES[] = {
        {"w", {.type = HN_VAL_INT, .i = 100}},
        {"TILE_SIZE", {.type = HN_VAL_INT, .i = 16}},
        {"fs", {.type = HN_VAL_INT, .i = 5}},
        {"half", {.type = HN_VAL_FLOAT, .f = 0.5}},
        {"big", {.type = HN_VAL_INT, .i = INT64_MAX}},
        {"small", {.type = HN_VAL_INT, .i = INT64_MIN}},
        {"ACCUM_DTYPE", {.type = HN_VAL_STR, .s = "double"}},
        {"empty", {.type = HN_VAL_STR, .s = ""}},
    };
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (strcmp(NAMES[i].name, name) == 0) {
            *out = NAMES[i].v;
            return 0;
        }
    return -1;
}

static int check_name(void *ctx, const char *name) {
    int *n = ctx;
    if (!name[0]) broken("an empty name", NULL);
    ++*n;
    return 0;
}

int hn_fuzz_expr(const uint8_t *data, size_t size, hn_err *err) {
    char *rest;
    char *text = split_input(data, size, &rest);
    free(rest);
    hn_expr *e = NULL;
    err->msg[0] = '\0';
    int rc = hn_expr_parse(text, &e, err);
    if (rc != 0) {
        need_message(err, "hn_expr_parse");
        if (e) broken("an expression returned with an error", NULL);
    } else {
        if (strcmp(hn_expr_text(e), text) != 0) broken("the text is not the input", NULL);
        int n_names = 0;
        hn_expr_names(e, check_name, &n_names);
        hn_value v;
        rc = hn_expr_eval(e, lookup, NULL, &v, err);
        if (rc == 0) {
            char buf[64];
            hn_value_format(&v, buf, sizeof buf);
            (void)hn_value_truthy(&v);
        } else {
            need_message(err, "hn_expr_eval");
        }
        int64_t i;
        double d;
        hn_err e2 = {0};
        if (hn_expr_eval_int(e, lookup, NULL, &i, &e2) != 0) need_message(&e2, "hn_expr_eval_int");
        e2.msg[0] = '\0';
        if (hn_expr_eval_double(e, lookup, NULL, &d, &e2) != 0) need_message(&e2, "hn_expr_eval_double");
        hn_expr_free(e);
    }
    char small[16];
    if (strlen(hn_excerpt(text, small, sizeof small)) >= sizeof small) broken("an excerpt too long", NULL);
    free(text);
    return rc;
}
