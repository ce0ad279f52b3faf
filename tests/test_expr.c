/* test_expr.c: the config expression language (harness/expr.c). */
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

static void test_names_listing(void) {
    hn_expr *e;
    hn_err err;
    CHECK(hn_expr_parse("ceil_div(w, TILE_SIZE) * w + max(fs, TILE_SIZE)", &e, &err) == 0);
    char buf[256] = "";
    hn_expr_names(e, collect, buf);
    CHECK_STR(buf, "w;TILE_SIZE;fs;");
    CHECK_STR(hn_expr_text(e), "ceil_div(w, TILE_SIZE) * w + max(fs, TILE_SIZE)");
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
    return hn_test_exit();
}
