/* test_expr.c: the config expression language (harness/expr.c). */
#include <math.h>
#include <stdint.h>

#include "expr.h"
#include "hn_test.h"

static int lookup(void *ctx, const char *name, hn_value *out) {
    (void)ctx;
    if (strcmp(name, "w") == 0) return *out = (hn_value){.type = HN_VAL_INT, .i = 100}, 0;
    if (strcmp(name, "TILE_SIZE") == 0) return *out = (hn_value){.type = HN_VAL_INT, .i = 16}, 0;
    if (strcmp(name, "fs") == 0) return *out = (hn_value){.type = HN_VAL_INT, .i = 5}, 0;
    if (strcmp(name, "half") == 0) return *out = (hn_value){.type = HN_VAL_FLOAT, .f = 0.5}, 0;
    if (strcmp(name, "ACCUM_DTYPE") == 0)
        return *out = (hn_value){.type = HN_VAL_STR, .s = "double"}, 0;
    return -1;
}

static int64_t ival(const char *text) {
    hn_expr *e;
    hn_err err;
    int64_t v = -999999;
    if (hn_expr_parse(text, &e, &err) != 0) {
        fprintf(stderr, "parse '%s': %s\n", text, err.msg);
        return v;
    }
    if (hn_expr_eval_int(e, lookup, NULL, &v, &err) != 0) fprintf(stderr, "eval '%s': %s\n", text, err.msg);
    hn_expr_free(e);
    return v;
}

static double dval(const char *text) {
    hn_expr *e;
    hn_err err;
    double v = -999999;
    if (hn_expr_parse(text, &e, &err) != 0) return v;
    if (hn_expr_eval_double(e, lookup, NULL, &v, &err) != 0) fprintf(stderr, "eval '%s': %s\n", text, err.msg);
    hn_expr_free(e);
    return v;
}

/* Returns the error message of parsing+evaluating text ("" if it succeeded). */
static const char *error_of(const char *text) {
    static hn_err err;
    hn_expr *e;
    err.msg[0] = '\0';
    if (hn_expr_parse(text, &e, &err) != 0) return err.msg;
    hn_value v;
    if (hn_expr_eval(e, lookup, NULL, &v, &err) != 0) {
        hn_expr_free(e);
        return err.msg;
    }
    hn_expr_free(e);
    return "";
}

static void test_arithmetic(void) {
    CHECK_INT(ival("1 + 2 * 3"), 7);
    CHECK_INT(ival("(1 + 2) * 3"), 9);
    CHECK_INT(ival("7 / 2"), 3);
    CHECK_INT(ival("-7 / 2"), -3);   /* C truncation */
    CHECK_INT(ival("-7 % 3"), -1);
    CHECK_INT(ival("2 - 3 - 4"), -5); /* left associative */
    CHECK_INT(ival("0x20 + 1"), 33);
    CHECK_INT(ival("--3"), 3);
    CHECK_INT(ival("1024*1024*32*32"), 1073741824LL);
    CHECK_NEAR(dval("1e-4 * 2"), 2e-4, 1e-18);
    CHECK_NEAR(dval("1 / 4.0"), 0.25, 0);
    CHECK_NEAR(dval("half * w"), 50.0, 0);
}

static void test_names_and_functions(void) {
    CHECK_INT(ival("ceil_div(w, TILE_SIZE)"), 7);
    CHECK_INT(ival("ceil_div(96, 16)"), 6);
    CHECK_INT(ival("ceil_div(w, TILE_SIZE - fs + 1)"), 9);
    CHECK_INT(ival("round_up(w, 32)"), 128);
    CHECK_INT(ival("min(w, TILE_SIZE, 40)"), 16);
    CHECK_INT(ival("max(3, fs)"), 5);
    CHECK_INT(ival("abs(-4)"), 4);
    CHECK_INT(ival("TILE_SIZE * TILE_SIZE * 4"), 1024);
    CHECK_INT(ival("int(sqrt(w))"), 10);
    CHECK_NEAR(dval("pow(2, 10)"), 1024, 0);
    CHECK_NEAR(dval("log2(1024)"), 10, 0);
    CHECK_NEAR(dval("1e-5 * sqrt(w)"), 1e-4, 1e-18);
}

static void test_logic(void) {
    CHECK_INT(ival("TILE_SIZE >= fs && fs % 2 == 1"), 1);
    CHECK_INT(ival("TILE_SIZE < fs || 0"), 0);
    CHECK_INT(ival("!0"), 1);
    CHECK_INT(ival("3 <= 3"), 1);
    CHECK_INT(ival("3 < 3"), 0);
    CHECK_INT(ival("2 != 2"), 0);
    CHECK_INT(ival("fs > 3 ? 10 : 20"), 10);
    CHECK_INT(ival("ACCUM_DTYPE == \"double\""), 1);
    CHECK_INT(ival("ACCUM_DTYPE != 'float'"), 1);
    /* && short-circuits, so the division by zero is never evaluated. */
    CHECK_INT(ival("0 && 1 / 0"), 0);
    CHECK_INT(ival("1 || 1 / 0"), 1);
}

static void test_errors(void) {
    CHECK_CONTAINS(error_of("1 +"), "column 4");
    CHECK_CONTAINS(error_of("1 +"), "expected");
    CHECK_CONTAINS(error_of("(1 + 2"), "expected ')'");
    CHECK_CONTAINS(error_of("1 / 0"), "division by zero");
    CHECK_CONTAINS(error_of("9223372036854775807 + 1"), "integer overflow");
    CHECK_CONTAINS(error_of("nope * 2"), "unknown name 'nope'");
    CHECK_CONTAINS(error_of("frobnicate(2)"), "unknown function 'frobnicate'");
    CHECK_CONTAINS(error_of("ceil_div(1)"), "takes 2 arguments");
    CHECK_CONTAINS(error_of("ACCUM_DTYPE + 1"), "strings only compare");
    CHECK_CONTAINS(error_of("ACCUM_DTYPE < 'z'"), "strings only compare");
    CHECK_CONTAINS(error_of("2 3"), "expected an operator or the end");
    CHECK_CONTAINS(error_of("\"open"), "closing quote");
    CHECK_CONTAINS(error_of("12abc"), "expected a number");
    CHECK_CONTAINS(error_of("$(rm -rf /)"), "expected a number, a name");
    hn_expr *e;
    hn_err err;
    int64_t v;
    CHECK(hn_expr_parse("half", &e, &err) == 0);
    CHECK(hn_expr_eval_int(e, lookup, NULL, &v, &err) != 0);
    CHECK_CONTAINS(err.msg, "expected an integer");
    hn_expr_free(e);
}

/* s repeated n times, then mid, then e repeated n times; caller frees. */
static char *repeat(const char *s, int n, const char *mid, const char *e) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, s);
    hn_sb_adds(&sb, mid);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, e);
    return hn_sb_detach(&sb);
}

/* "1+1+...+1" with n terms (2n - 1 nodes); caller frees. */
static char *ones(int n) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, i ? "+1" : "1");
    return hn_sb_detach(&sb);
}

static void test_limits(void) {
    char *t;
    /* Nesting: exactly at the limit parses and evaluates; one more names the limit
     * and the column where it was passed. Parentheses, unary operators, calls and
     * ?: branches each open a level. */
    t = repeat("(", HN_EXPR_MAX_DEPTH, "7", ")");
    CHECK_INT(ival(t), 7);
    free(t);
    t = repeat("(", HN_EXPR_MAX_DEPTH + 1, "7", ")");
    CHECK_STR(error_of(t), "at column 257: expression nested deeper than 256 levels");
    free(t);
    t = repeat("-", HN_EXPR_MAX_DEPTH, "7", ""); /* 256 minus signs: even */
    CHECK_INT(ival(t), 7);
    free(t);
    t = repeat("-", HN_EXPR_MAX_DEPTH + 1, "7", "");
    CHECK_CONTAINS(error_of(t), "at column 257: expression nested deeper than 256 levels");
    free(t);
    t = repeat("!", HN_EXPR_MAX_DEPTH, "0", "");
    CHECK_INT(ival(t), 0);
    free(t);
    t = repeat("!", HN_EXPR_MAX_DEPTH + 1, "0", "");
    CHECK_CONTAINS(error_of(t), "nested deeper than 256 levels");
    free(t);
    t = repeat("abs(", HN_EXPR_MAX_DEPTH, "-7", ")"); /* the argument's minus is level 257 */
    CHECK_CONTAINS(error_of(t), "at column 1025: expression nested deeper than 256 levels");
    free(t);
    t = repeat("abs(", HN_EXPR_MAX_DEPTH, "7", ")");
    CHECK_INT(ival(t), 7);
    free(t);
    t = repeat("0 ? 1 : ", HN_EXPR_MAX_DEPTH, "9", "");
    CHECK_INT(ival(t), 9);
    free(t);
    t = repeat("0 ? 1 : ", HN_EXPR_MAX_DEPTH + 1, "9", "");
    CHECK_CONTAINS(error_of(t), "nested deeper than 256 levels");
    free(t);
    /* Terms: a flat sum of 512 ones is 1023 nodes and a left spine as tall;
     * 1025 nodes are refused. */
    t = ones(512);
    CHECK_INT(ival(t), 512);
    free(t);
    t = ones(513);
    CHECK_CONTAINS(error_of(t), "expression has more than 1024 terms");
    free(t);
    /* 1024 nodes made before the ?: node itself (511 ones, 510 '+', 1, - and 1):
     * refused there, and everything made so far freed (the ASan build's leak check). */
    t = ones(511);
    char *te = xmalloc(strlen(t) + 16);
    sprintf(te, "%s ? 1 : -1", t);
    CHECK_STR(error_of(te), "at column 1023: expression has more than 1024 terms (numbers, names, "
                            "strings, operators and calls)");
    free(te);
    free(t);
    /* Length: 4096 characters parse; 4097 do not, whatever they hold. */
    t = repeat(" ", 4095, "1", "");
    CHECK_INT(ival(t), 1);
    free(t);
    t = repeat(" ", 4096, "1", "");
    CHECK_STR(error_of(t), "expression longer than 4096 characters (4097)");
    free(t);
    /* What crashed (a stack overflow) now ends in a clean error. */
    t = repeat("-", 30000, "1", "");
    CHECK_CONTAINS(error_of(t), "longer than 4096 characters");
    free(t);
    t = repeat("!", 30000, "1", "");
    CHECK_CONTAINS(error_of(t), "longer than 4096 characters");
    free(t);
    t = ones(30000);
    CHECK_CONTAINS(error_of(t), "longer than 4096 characters");
    free(t);
    t = repeat("(", 20000, "1", ")");
    CHECK_CONTAINS(error_of(t), "longer than 4096 characters");
    free(t);
    /* Within the length, a deep chain fails on depth, not on the stack. */
    t = repeat("-", 4000, "1", "");
    CHECK_CONTAINS(error_of(t), "nested deeper than 256 levels");
    free(t);
    t = repeat("(", 2000, "1", ")");
    CHECK_CONTAINS(error_of(t), "nested deeper than 256 levels");
    free(t);
}

/* Depth counts the levels open at a point, not the levels ever opened: a long sum
 * of closed calls, parentheses, unary operators and ?: branches, then 200 nested
 * parentheses, stays within 256 levels. */
static void test_depth_is_given_back(void) {
    static const char *const CLOSED[] = {"abs(1)+", "(1)+", "-1+", "!0+", "(0?0:1)+"};
    for (size_t i = 0; i < HN_ARRAY_LEN(CLOSED); i++) {
        hn_sb sb;
        hn_sb_init(&sb);
        for (int j = 0; j < 100; j++) hn_sb_adds(&sb, CLOSED[i]);
        char *deep = repeat("(", 200, "7", ")");
        hn_sb_adds(&sb, deep);
        free(deep);
        char *t = hn_sb_detach(&sb);
        CHECK_MSG(ival(t) == (i == 2 ? -93 : 107), "100 x %s then 200 levels", CLOSED[i]);
        free(t);
    }
}

static void test_integer_corners(void) {
    /* These trapped (SIGFPE) or overflowed before. */
    CHECK_CONTAINS(error_of("ceil_div(-9223372036854775807 - 1, -1)"), "integer overflow");
    CHECK_CONTAINS(error_of("round_up(9223372036854775807, 2)"), "integer overflow");
    CHECK_CONTAINS(error_of("abs(-9223372036854775807 - 1)"), "integer overflow");
    CHECK_INT(ival("abs(-9223372036854775807)"), INT64_MAX);
    CHECK_INT(ival("round_up(9223372036854775806, 2)"), 9223372036854775806LL);
    CHECK_INT(ival("ceil_div(-9223372036854775807 - 1, 1)"), INT64_MIN);
}

static int collect(void *ctx, const char *name) {
    char *buf = ctx;
    strcat(buf, name);
    strcat(buf, ";");
    return 0;
}

/* The value of text, its type checked (evaluated by hn_expr_eval_text, so no string). */
static hn_value val(const char *text) {
    hn_err err;
    hn_value v = {.type = HN_VAL_STR, .s = "(failed)"};
    if (hn_expr_eval_text(text, lookup, NULL, &v, &err) != 0) fprintf(stderr, "'%s': %s\n", text, err.msg);
    return v;
}

#define CHECK_FLOAT(text, want)                                         \
    do {                                                                \
        hn_value v_ = val(text);                                        \
        CHECK_MSG(v_.type == HN_VAL_FLOAT, "%s: not a float", text);    \
        if (v_.type == HN_VAL_FLOAT) CHECK_NEAR(v_.f, (want), 0);       \
    } while (0)

#define CHECK_INTV(text, want)                                          \
    do {                                                                \
        hn_value v_ = val(text);                                        \
        CHECK_MSG(v_.type == HN_VAL_INT, "%s: not an integer", text);   \
        if (v_.type == HN_VAL_INT) CHECK_INT(v_.i, (want));             \
    } while (0)

/* Every relation on both paths (integers compare exactly, anything with a float in
 * it as doubles), at the boundary and on either side of it. */
static void test_relations(void) {
    static const struct { const char *op; int lt, eq, gt; } REL[] = {
        {"<", 1, 0, 0}, {"<=", 1, 1, 0}, {">", 0, 0, 1},
        {">=", 0, 1, 1}, {"==", 0, 1, 0}, {"!=", 1, 0, 1},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(REL); i++) {
        char t[64];
        snprintf(t, sizeof t, "2 %s 3", REL[i].op);
        CHECK_INTV(t, REL[i].lt);
        snprintf(t, sizeof t, "3 %s 3", REL[i].op);
        CHECK_INTV(t, REL[i].eq);
        snprintf(t, sizeof t, "4 %s 3", REL[i].op);
        CHECK_INTV(t, REL[i].gt);
        snprintf(t, sizeof t, "2.5 %s 3", REL[i].op);
        CHECK_INTV(t, REL[i].lt);
        snprintf(t, sizeof t, "3.0 %s 3", REL[i].op);
        CHECK_INTV(t, REL[i].eq);
        snprintf(t, sizeof t, "3 %s 2.5", REL[i].op);
        CHECK_INTV(t, REL[i].gt);
    }
    /* Integers past 2^53 differ although their doubles are equal. */
    CHECK_INTV("9007199254740993 > 9007199254740992", 1);
    CHECK_INTV("9007199254740993 == 9007199254740992", 0);
}

static void test_float_arithmetic(void) {
    CHECK_FLOAT("1.5 + 0.25", 1.75);
    CHECK_FLOAT("1.5 - 0.25", 1.25);
    CHECK_FLOAT("1.5 * 4", 6.0);
    CHECK_FLOAT("3 / 2.0", 1.5);
    CHECK_FLOAT("7.5 % 2", 1.5);
    CHECK_FLOAT("-7.5 % 2", -1.5); /* fmod keeps the dividend's sign */
    CHECK_FLOAT("-half", -0.5);
    CHECK_FLOAT("+half", 0.5);
    CHECK_FLOAT(".5 + 1", 1.5);
    CHECK_FLOAT("1e3", 1000.0);
    CHECK_FLOAT("2E-1", 0.2);
    CHECK_INTV("0x1e", 30); /* a hex digit e, not an exponent */
    CHECK_INTV("0X1E + 0", 30);
    CHECK_INTV("+5", 5);
    CHECK_INTV("8 % 3", 2);
    CHECK_INTV("8 / 3", 2);
    CHECK_INTV("9223372036854775807", INT64_MAX);
    CHECK_CONTAINS(error_of("9223372036854775808"), "an integer that fits in 64 bits");
    CHECK_CONTAINS(error_of("99999999999999999999"), "an integer that fits in 64 bits");
    CHECK_CONTAINS(error_of("1.5 / 0"), "at column 5: division by zero");
    CHECK_CONTAINS(error_of("1.5 % 0.0"), "at column 5: division by zero");
    CHECK_CONTAINS(error_of("5 % 0"), "at column 3: division by zero");
    CHECK_CONTAINS(error_of("-9223372036854775807 - 2"), "integer overflow");
    CHECK_CONTAINS(error_of("4611686018427387904 * 2"), "integer overflow");
    CHECK_CONTAINS(error_of("(-9223372036854775807 - 1) / -1"), "integer overflow");
    CHECK_CONTAINS(error_of("(-9223372036854775807 - 1) % -1"), "integer overflow");
    CHECK_CONTAINS(error_of("-(-9223372036854775807 - 1)"), "at column 1: integer overflow");
    CHECK_INTV("-9223372036854775807 - 1", INT64_MIN);
    CHECK_INTV("4611686018427387903 * 2", 9223372036854775806LL);
}

/* Each function on integers and on floats, against values worked out by hand. */
static void test_functions(void) {
    /* ceil_div is the ceiling of the exact quotient, whatever the signs. */
    CHECK_INTV("ceil_div(-7, 2)", -3);
    CHECK_INTV("ceil_div(7, -2)", -3);
    CHECK_INTV("ceil_div(-7, -2)", 4);
    CHECK_INTV("ceil_div(8, 2)", 4);
    CHECK_INTV("ceil_div(0, 5)", 0);
    CHECK_INTV("round_up(-7, 2)", -6);
    CHECK_INTV("round_up(8, 4)", 8);
    CHECK_FLOAT("ceil_div(7, 2.0)", 4.0);
    CHECK_FLOAT("round_up(7, 2.0)", 8.0);
    CHECK_CONTAINS(error_of("ceil_div(1, 0)"), "ceil_div by zero");
    CHECK_CONTAINS(error_of("round_up(5, 0)"), "round_up by zero");
    CHECK_STR(error_of("abs(1, 2)"), "at column 1: abs() takes 1 argument, got 2");
    CHECK_STR(error_of("pow(1)"), "at column 1: pow() takes 2 arguments, got 1");
    /* min and max: any float makes the result a float; integers compare exactly. */
    CHECK_INTV("min(3)", 3);
    CHECK_INTV("max(2, 7, 5)", 7);
    CHECK_INTV("min(4, 2, 3)", 2);
    CHECK_INTV("max(-3, -8)", -3);
    CHECK_FLOAT("max(1, half)", 1.0);
    CHECK_FLOAT("min(1, half)", 0.5);
    CHECK_FLOAT("max(half, 2)", 2.0);
    CHECK_FLOAT("min(2.5, 3)", 2.5);
    CHECK_FLOAT("max(2.5, 1)", 2.5); /* an integer against a float: compared as doubles */
    CHECK_FLOAT("max(1, 1.5)", 1.5);
    CHECK_INTV("max(9007199254740992, 9007199254740993)", 9007199254740993LL);
    CHECK_INTV("min(9007199254740993, 9007199254740992)", 9007199254740992LL);
    CHECK_INTV("max(1, 2, 3, 4, 5, 6, 7, 8)", 8);
    CHECK_CONTAINS(error_of("max(1, 2, 3, 4, 5, 6, 7, 8, 9)"), "at most 8 arguments");
    CHECK_CONTAINS(error_of("min()"), "min() needs arguments");
    CHECK_CONTAINS(error_of("max(1 2)"), "expected ',' or ')'");
    CHECK_FLOAT("abs(-2.5)", 2.5);
    CHECK_FLOAT("abs(2.5)", 2.5);
    CHECK_INTV("abs(3)", 3);
    CHECK_INTV("int(2.7)", 2);
    CHECK_INTV("int(-2.7)", -2);
    CHECK_INTV("int(5)", 5);
    CHECK_CONTAINS(error_of("int(1e19)"), "int() of a value out of range");
    CHECK_CONTAINS(error_of("int(-1e19)"), "int() of a value out of range");
    CHECK_FLOAT("float(3)", 3.0);
    CHECK_FLOAT("floor(2.5)", 2.0);
    CHECK_FLOAT("floor(-2.5)", -3.0);
    CHECK_FLOAT("ceil(2.5)", 3.0);
    CHECK_FLOAT("sqrt(2.25)", 1.5);
    CHECK_FLOAT("log2(8)", 3.0);
    CHECK_FLOAT("pow(2, 0.5)", sqrt(2.0));
    CHECK_STR(error_of("sqrt(ACCUM_DTYPE)"),
              "at column 1: sqrt needs a number, got the string \"double\"");
}

/* Truthiness of every type, the unary operators on strings, and ?: errors. */
static void test_truth_and_strings(void) {
    CHECK_INTV("half ? 1 : 2", 1);
    CHECK_INTV("0.0 ? 1 : 2", 2);
    CHECK_INTV("'' ? 1 : 2", 2);
    CHECK_INTV("'x' ? 1 : 2", 1);
    CHECK_INTV("!half", 0);
    CHECK_INTV("!0.0", 1);
    CHECK_INTV("!''", 1);
    CHECK_INTV("!ACCUM_DTYPE", 0);
    CHECK_INTV("ACCUM_DTYPE == ''", 0);
    CHECK_INTV("'' == \"\"", 1);
    CHECK_INTV("'ab' != 'ab'", 0);
    CHECK_INTV("half && 2", 1);  /* && and || give 0 or 1 */
    CHECK_INTV("0 || 'x'", 1);
    CHECK_INTV("0 || ''", 0);
    CHECK_INTV("1 && 0.0", 0);
    CHECK_CONTAINS(error_of("ACCUM_DTYPE == 1"), "strings only compare");
    CHECK_CONTAINS(error_of("1 != ACCUM_DTYPE"), "strings only compare");
    CHECK_STR(error_of("-ACCUM_DTYPE"), "at column 1: unary - needs a number, got the string \"double\"");
    CHECK_STR(error_of("+ACCUM_DTYPE"), "at column 1: unary + needs a number, got the string \"double\"");
    CHECK_CONTAINS(error_of("1 ? 2"), "expected ':'");
    CHECK_STR(error_of("1 + nope"), "at column 5: unknown name 'nope'");
    CHECK_STR(error_of("nope ? 1 : 2"), "at column 1: unknown name 'nope'");
    CHECK_STR(error_of("-nope"), "at column 2: unknown name 'nope'"); /* an operand's error propagates */
    CHECK_STR(error_of("!(1 / 0)"), "at column 5: division by zero");
    /* "!=" where an operand should be is not a "!" followed by "=". */
    CHECK_CONTAINS(error_of("!= 1"), "at column 1: expected a number");
    CHECK_CONTAINS(error_of("1 & 2"), "expected an operator or the end, found '& 2'");
    CHECK_CONTAINS(error_of("1 | 2"), "expected an operator or the end, found '| 2'");

    hn_value v;
    hn_err err;
    CHECK(hn_value_truthy(&(hn_value){.type = HN_VAL_STR, .s = NULL}) == 0);
    CHECK(hn_value_truthy(&(hn_value){.type = HN_VAL_FLOAT, .f = -0.25}) == 1);
    CHECK(hn_expr_eval_text("ACCUM_DTYPE", lookup, NULL, &v, &err) != 0);
    CHECK_CONTAINS(err.msg, "cannot outlive");
    CHECK(hn_expr_eval_text("1 +", lookup, NULL, &v, &err) != 0);
    CHECK(hn_expr_eval_text("nope", lookup, NULL, &v, &err) != 0);
    CHECK(hn_expr_eval_text("w", NULL, NULL, &v, &err) != 0); /* no lookup: every name unknown */
    CHECK_CONTAINS(err.msg, "unknown name 'w'");
}

/* The typed entry points: what converts, what is refused, and that errors propagate. */
static void test_typed_eval(void) {
    hn_expr *e;
    hn_err err;
    int64_t i = 0;
    double d = 0;
    CHECK(hn_expr_parse("4.0 * w", &e, &err) == 0);
    CHECK(hn_expr_eval_int(e, lookup, NULL, &i, &err) == 0);
    CHECK_INT(i, 400);
    hn_expr_free(e);
    CHECK(hn_expr_parse("-1e18", &e, &err) == 0);
    CHECK(hn_expr_eval_int(e, lookup, NULL, &i, &err) == 0);
    CHECK_INT(i, -1000000000000000000LL);
    hn_expr_free(e);
    CHECK(hn_expr_parse("9.5e18", &e, &err) == 0);
    CHECK(hn_expr_eval_int(e, lookup, NULL, &i, &err) != 0);
    CHECK_CONTAINS(err.msg, "expected an integer, got 9.5e+18");
    hn_expr_free(e);
    CHECK(hn_expr_parse("ACCUM_DTYPE", &e, &err) == 0);
    CHECK(hn_expr_eval_int(e, lookup, NULL, &i, &err) != 0);
    CHECK_STR(err.msg, "expected an integer, got the string \"double\"");
    CHECK(hn_expr_eval_double(e, lookup, NULL, &d, &err) != 0);
    CHECK_STR(err.msg, "expected a number, got the string \"double\"");
    hn_expr_free(e);
    CHECK(hn_expr_parse("nope + 1", &e, &err) == 0);
    i = 7, d = 7;
    CHECK(hn_expr_eval_int(e, lookup, NULL, &i, &err) != 0);
    CHECK(hn_expr_eval_double(e, lookup, NULL, &d, &err) != 0);
    CHECK_INT(i, 7); /* untouched on error */
    CHECK_NEAR(d, 7, 0);
    hn_expr_free(e);
    CHECK(hn_expr_parse("w / 8", &e, &err) == 0);
    CHECK(hn_expr_eval_double(e, lookup, NULL, &d, &err) == 0);
    CHECK_NEAR(d, 12.0, 0); /* integer division, then widened */
    hn_expr_free(e);
}

static void test_format(void) {
    char buf[64];
    hn_value_format(&(hn_value){.type = HN_VAL_INT, .i = -42}, buf, sizeof buf);
    CHECK_STR(buf, "-42");
    hn_value_format(&(hn_value){.type = HN_VAL_FLOAT, .f = 0.1}, buf, sizeof buf);
    CHECK_STR(buf, "0.1"); /* %g reads back exactly */
    hn_value_format(&(hn_value){.type = HN_VAL_FLOAT, .f = 1.0 / 3}, buf, sizeof buf);
    CHECK_STR(buf, "0.33333333333333331"); /* %g does not: all 17 digits */
    hn_value_format(&(hn_value){.type = HN_VAL_STR, .s = "fp32"}, buf, sizeof buf);
    CHECK_STR(buf, "fp32");
}

static int count_calls(void *ctx, const char *name) {
    (void)name;
    (*(int *)ctx)++;
    return 0;
}

static int stop_at_first(void *ctx, const char *name) {
    collect(ctx, name);
    return -1;
}

static void test_names_listing(void) {
    hn_expr *e;
    hn_err err;
    CHECK(hn_expr_parse("ceil_div(w, TILE_SIZE) * w + max(fs, TILE_SIZE)", &e, &err) == 0);
    char buf[256] = "";
    hn_expr_names(e, collect, buf);
    CHECK_STR(buf, "w;TILE_SIZE;fs;");
    CHECK_STR(hn_expr_text(e), "ceil_div(w, TILE_SIZE) * w + max(fs, TILE_SIZE)");
    hn_expr_free(e);
    /* Names under unary operators and ?: count too. */
    CHECK(hn_expr_parse("-w + !fs ? half : +TILE_SIZE", &e, &err) == 0);
    buf[0] = '\0';
    hn_expr_names(e, collect, buf);
    CHECK_STR(buf, "w;fs;half;TILE_SIZE;");
    hn_expr_free(e);
    /* 64 distinct names, each twice: each reported once. */
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < 64; i++) hn_sb_addf(&sb, "%sn%d + n%d", i ? " + " : "", i, i);
    char *t = hn_sb_detach(&sb);
    CHECK(hn_expr_parse(t, &e, &err) == 0);
    free(t);
    int calls = 0;
    hn_expr_names(e, count_calls, &calls);
    CHECK_INT(calls, 64);
    hn_expr_free(e);
    CHECK(hn_expr_parse("-w + !fs ? half : +TILE_SIZE", &e, &err) == 0);
    buf[0] = '\0';
    CHECK_INT(hn_expr_names(e, stop_at_first, buf), -1); /* fn's refusal stops the walk */
    CHECK_STR(buf, "w;");
    hn_expr_free(e);
}

int main(void) {
    test_arithmetic();
    test_names_and_functions();
    test_logic();
    test_errors();
    test_names_listing();
    test_limits();
    test_integer_corners();
    test_depth_is_given_back();
    test_relations();
    test_float_arithmetic();
    test_functions();
    test_truth_and_strings();
    test_typed_eval();
    test_format();
    return hn_test_exit();
}
