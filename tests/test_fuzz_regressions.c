/*
 * test_fuzz_regressions.c: hostile input ends in an error message, never in a
 * crash. Every input under tests/fuzz_regressions/<target>/ (inputs that once
 * crashed the harness or tripped a sanitizer: the hostile user's, and what
 * scripts/fuzz.sh finds, which it adds there) and the seed corpus go through the
 * fuzzers' own entry points (fuzz/fuzz_targets.c) in this process: a crash, a
 * sanitizer report or a leak fails the test, and the line printed just before
 * names the input (CTest shows it on failure). Then hand-written cases at and
 * past every limit: nesting, length and size of expressions in every config field, JSON nesting, axis and define products,
 * huge numbers, sample.count, long strings, thousands of axes and variants, a
 * --set after a NUL byte.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>

#include "hn_test.h"

#include "config.h"
#include "expr.h"
#include "fuzz_targets.h"
#include "sweep.h"

typedef int (*target_fn)(const uint8_t *data, size_t size, hn_err *err);

/* Runs fn on one input; returns 0 (accepted) or -1 (refused, with the message). */
static int run(const char *name, int line, target_fn fn, const void *data, size_t size, hn_err *err) {
    if (name) fprintf(stderr, "input %s\n", name);
    else fprintf(stderr, "input of line %d\n", line);
    return fn(data, size, err);
}

/* Every file in dir through fn: no crash; when want_accepted, each must load.
 * Returns how many files there were. */
static int replay_folder(const char *dir, target_fn fn, int want_accepted) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        char *path = xasprintf("%s/%s", dir, de->d_name);
        char *data;
        size_t size;
        if (hn_read_file(path, &data, &size, NULL) == 0) {
            hn_err err;
            int rc = run(path, 0, fn, data, size, &err);
            if (want_accepted) CHECK_MSG(rc == 0, "%s: refused: %s", path, err.msg);
            free(data);
            n++;
        }
        free(path);
    }
    closedir(d);
    return n;
}

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

static void test_replay(void) {
    const char *targets[] = {"config", "expr"};
    target_fn fns[] = {hn_fuzz_config, hn_fuzz_expr};
    for (int t = 0; t < 2; t++) {
        char *dir = xasprintf("%s/tests/fuzz_regressions/%s", root(), targets[t]);
        int n = replay_folder(dir, fns[t], 0);
        CHECK_MSG(n > 0, "no inputs in %s", dir);
        free(dir);
        /* The seeds are valid configs, so the fuzzer starts from what loads. */
        dir = xasprintf("%s/fuzz/corpus/%s", root(), targets[t]);
        n = replay_folder(dir, fns[t], t == 0);
        CHECK_MSG(n > 0, "no seeds in %s", dir);
        free(dir);
    }
}

/* ---------------------------------------------------------------------- */
/* hand-written hostile cases */

/* Expects fn(text) to be refused with needle in the message (or accepted when
 * needle is NULL), without a crash. */
#define EXPECT(fn, text, needle) expect_at(__LINE__, fn, text, needle)

static void expect_at(int line, target_fn fn, const char *text, const char *needle) {
    hn_err err;
    int rc = run(NULL, line, fn, text, strlen(text), &err);
    if (!needle) {
        if (rc != 0) {
            fprintf(stderr, "line %d: expected acceptance, got: %s\n", line, err.msg);
            hn_test_failures++;
        }
    } else if (rc == 0 || !strstr(err.msg, needle)) {
        fprintf(stderr, "line %d: expected a refusal with \"%s\", got %s\n", line, needle,
                rc == 0 ? "acceptance" : err.msg);
        hn_test_failures++;
    }
}

/* s repeated n times, then mid, then e repeated n times. */
static char *nest(const char *s, int n, const char *mid, const char *e) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, s);
    hn_sb_adds(&sb, mid);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, e);
    return hn_sb_detach(&sb);
}

/* "1+1+...+1" with n terms. */
static char *sum(int n) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < n; i++) hn_sb_adds(&sb, i ? "+1" : "1");
    return hn_sb_detach(&sb);
}

static void test_expressions(void) {
    char *t;
    t = nest("(", HN_EXPR_MAX_DEPTH, "1", ")");
    EXPECT(hn_fuzz_expr, t, NULL);
    free(t);
    t = nest("(", HN_EXPR_MAX_DEPTH + 1, "1", ")");
    EXPECT(hn_fuzz_expr, t, "at column 257: expression nested deeper than 256 levels");
    free(t);
    t = nest("(", 20000, "1", ")");
    EXPECT(hn_fuzz_expr, t, "expression longer than 4096 characters (40001)");
    free(t);
    t = nest("-", HN_EXPR_MAX_DEPTH + 1, "1", "");
    EXPECT(hn_fuzz_expr, t, "nested deeper than 256 levels");
    free(t);
    t = nest("!", HN_EXPR_MAX_DEPTH + 1, "0", "");
    EXPECT(hn_fuzz_expr, t, "nested deeper than 256 levels");
    free(t);
    t = nest("-", 30000, "1", "");
    EXPECT(hn_fuzz_expr, t, "longer than 4096 characters");
    free(t);
    t = nest("!", 30000, "1", "");
    EXPECT(hn_fuzz_expr, t, "longer than 4096 characters");
    free(t);
    t = nest("min(", HN_EXPR_MAX_DEPTH + 1, "1", ")");
    EXPECT(hn_fuzz_expr, t, "nested deeper than 256 levels");
    free(t);
    t = nest("1 ? 2 : ", HN_EXPR_MAX_DEPTH + 1, "3", "");
    EXPECT(hn_fuzz_expr, t, "nested deeper than 256 levels");
    free(t);
    /* 512 ones and 511 '+': 1023 terms; then 1025. */
    t = sum(512);
    EXPECT(hn_fuzz_expr, t, NULL);
    free(t);
    t = sum(513);
    EXPECT(hn_fuzz_expr, t, "more than 1024 terms");
    free(t);
    t = sum(30000);
    EXPECT(hn_fuzz_expr, t, "longer than 4096 characters");
    free(t);
    /* Integer corners that used to trap (SIGFPE) or overflow. */
    EXPECT(hn_fuzz_expr, "ceil_div(small, -1)", "integer overflow");
    EXPECT(hn_fuzz_expr, "round_up(big, 2)", "integer overflow");
    EXPECT(hn_fuzz_expr, "abs(small)", "integer overflow");
    EXPECT(hn_fuzz_expr, "small / -1", "integer overflow");
    EXPECT(hn_fuzz_expr, "small % -1", "integer overflow");
    EXPECT(hn_fuzz_expr, "-small", "integer overflow");
    EXPECT(hn_fuzz_expr, "int(1e300)", "out of range");
    EXPECT(hn_fuzz_expr, "99999999999999999999", "fits in 64 bits");
}

/* A valid config with `top` spliced into the top level and `variant` into its
 * one variant (which may override kernel, block, grid and args: they are
 * defaults); caller frees. */
static char *config(const char *top, const char *variant) {
    return xasprintf(
        "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1, 2], \"out_ch\": [3], \"filter_size\": [3], "
        "\"img_size\": [8]}%s, \"defaults\": {\"kernel\": \"conv2d_pad\", \"block\": [16, 16], "
        "\"grid\": [\"ceil_div(w, 16)\", 1], \"args\": [\"in\", \"out\", \"filter\", \"h\", \"w\", "
        "\"in_ch\", \"out_ch\", \"filter_size\", \"pad\"]}, "
        "\"variants\": [{\"file\": \"../kernels/conv2d/conv2d_pad.cu\"%s}]}",
        top, variant);
}

/* EXPECT on a config with one expression field: where = "top" or "variant". */
static void expect_field(int line, const char *where, const char *fmt, const char *expr,
                         const char *needle) {
    char *field = xasprintf(fmt, expr);
    char *text = strcmp(where, "top") == 0 ? config(field, "") : config("", field);
    expect_at(line, hn_fuzz_config, text, needle);
    free(text);
    free(field);
}

static void test_config_expressions(void) {
    char *deep = nest("(", HN_EXPR_MAX_DEPTH + 1, "1", ")");
    char *at_limit = nest("(", HN_EXPR_MAX_DEPTH, "1", ")");
    char *minus = nest("-", 30000, "1", "");
    char *terms = sum(513);
    const char *nested = "nested deeper than 256 levels";
    /* Every field that takes an expression, with its JSON path in the message. */
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", deep, "configs/fuzz.json: where: in '((((");
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", deep, nested);
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", at_limit, NULL);
    expect_field(__LINE__, "top", ", \"where\": [\"1\", \"%s\"]", minus, "where[1]: in '-----");
    expect_field(__LINE__, "top", ", \"where\": [\"1\", \"%s\"]", minus, "longer than 4096 characters");
    expect_field(__LINE__, "top", ", \"params\": {\"pad\": \"%s\"}", terms, "params.pad: in '1+1+1");
    expect_field(__LINE__, "top", ", \"params\": {\"pad\": \"%s\"}", terms, "more than 1024 terms");
    expect_field(__LINE__, "top", ", \"check\": {\"atol\": \"%s\"}", deep, "check.atol: in '((((");
    expect_field(__LINE__, "top", ", \"check\": {\"rtol\": \"%s\"}", minus, "check.rtol: in '----");
    expect_field(__LINE__, "variant", ", \"grid\": [\"%s\"]", deep, "variants[0].grid[0]: in '((((");
    expect_field(__LINE__, "variant", ", \"block\": [1, \"%s\"]", terms, "variants[0].block[1]: in '1+1");
    expect_field(__LINE__, "variant", ", \"shared_bytes\": \"%s\"", deep, "variants[0].shared_bytes: in");
    expect_field(__LINE__, "variant", ", \"where\": \"%s\"", minus, "variants[0].where: in '---");
    expect_field(__LINE__, "variant", ", \"args\": [\"int: %s\"]", deep, "variants[0].args[0]: in ' ((((");
    expect_field(__LINE__, "variant", ", \"defaults\": 1, \"where\": \"%s\"", deep, "unknown key");
    /* The quoted text is cut, so the message still ends with the problem. */
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", minus, "...': expression longer than");
    free(deep);
    free(at_limit);
    free(minus);
    free(terms);
    /* A where that leaves no case, and one that cannot be evaluated. */
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", "0", "none of the 2 combinations");
    expect_field(__LINE__, "top", ", \"where\": \"%s\"", "in_ch * 9223372036854775807 > 0",
                 "where[0] ('in_ch * 9223372036854775807 > 0'): at column 7: integer overflow");
}

static void test_config_sizes(void) {
    char *t, *field;
    /* JSON nested past cJSON's limit, and just inside it (in a "//" comment). */
    t = nest("[", 1001, "1", "]");
    EXPECT(hn_fuzz_config, t, "configs/fuzz.json:1:1001: JSON nested deeper than 1000 levels");
    free(t);
    char *inner = nest("[", 998, "1", "]");
    field = xasprintf(", \"//\": %s", inner);
    t = config(field, "");
    EXPECT(hn_fuzz_config, t, NULL);
    free(t);
    free(field);
    free(inner);
    /* Axis products past the limit (every step is checked, so none overflows). */
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < 80; i++) hn_sb_addf(&sb, ", \"a%d\": [1, 2, 3]", i);
    field = xasprintf("%s", sb.buf);
    hn_sb_free(&sb);
    t = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 1, "
                  "\"img_size\": 8%s}, \"variants\": []}",
                  field);
    EXPECT(hn_fuzz_config, t, "variants: expected a non-empty array");
    free(t);
    t = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 1, "
                  "\"img_size\": 8%s}, \"variants\": [{\"file\": \"../kernels/conv2d/conv2d_pad.cu\", "
                  "\"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": []}]}",
                  field);
    EXPECT(hn_fuzz_config, t, "axes: more than"); /* 100000 in the fuzzing build, else 20 million */
    free(t);
    free(field);
    /* Define products past the limit: 2^70 used to overflow. */
    hn_sb_init(&sb);
    hn_sb_adds(&sb, ", \"defines\": {");
    for (int i = 0; i < 70; i++) hn_sb_addf(&sb, "%s\"D%d\": [1, 2]", i ? ", " : "", i);
    hn_sb_adds(&sb, "}");
    t = config("", sb.buf);
    EXPECT(hn_fuzz_config, t, "variants[0].defines: more than 100000 combinations");
    free(t);
    hn_sb_free(&sb);
    /* 100 single-valued defines: a tolerance may use the last (the union of
     * define names was cut at 64). */
    hn_sb_init(&sb);
    hn_sb_adds(&sb, ", \"defines\": {");
    for (int i = 0; i < 100; i++) hn_sb_addf(&sb, "%s\"D%d\": %d", i ? ", " : "", i, i);
    hn_sb_adds(&sb, "}");
    t = config(", \"check\": {\"atol\": \"D99 * 1e-6\"}", sb.buf);
    EXPECT(hn_fuzz_config, t, NULL);
    free(t);
    hn_sb_free(&sb);
    /* Duplicate names. */
    t = config("", ", \"defines\": {\"D\": [1, 2], \"D\": [3, 4]}");
    EXPECT(hn_fuzz_config, t, "variants[0].defines.D: duplicate key");
    free(t);
    EXPECT(hn_fuzz_config, "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"in_ch\": 2}}",
           "axes.in_ch: duplicate key");
    /* Thousands of axes, and thousands of variants. */
    hn_sb_init(&sb);
    for (int i = 0; i < 3000; i++) hn_sb_addf(&sb, ", \"extra%d\": %d", i, i);
    t = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 1, "
                  "\"img_size\": 8%s}, \"variants\": [{\"file\": \"../kernels/conv2d/conv2d_pad.cu\", "
                  "\"kernel\": \"k\", \"block\": [1], \"grid\": [\"extra2999\"], \"args\": []}]}",
                  sb.buf);
    EXPECT(hn_fuzz_config, t, NULL);
    free(t);
    hn_sb_free(&sb);
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 1, "
                    "\"img_size\": 8}, \"defaults\": {\"file\": \"../kernels/conv2d/conv2d_pad.cu\", "
                    "\"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": []}, \"variants\": [");
    for (int i = 0; i < 3000; i++) hn_sb_addf(&sb, "%s{\"name\": \"v%d\"}", i ? ", " : "", i);
    hn_sb_adds(&sb, "]}");
    EXPECT(hn_fuzz_config, sb.buf, NULL);
    hn_sb_free(&sb);
    /* Huge numbers. */
    t = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1, 1e999], \"out_ch\": 1, "
                  "\"filter_size\": 1, \"img_size\": 8}, \"variants\": [{\"file\": "
                  "\"../kernels/conv2d/conv2d_pad.cu\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], "
                  "\"args\": []}]}");
    EXPECT(hn_fuzz_config, t, "params.in_ch ('in_ch'): expected an integer, got inf (for in_ch=inf,");
    free(t);
    t = config(", \"params\": {\"in_ch\": \"9223372036854775807\"}", "");
    EXPECT(hn_fuzz_config, t, "params.in_ch ('9223372036854775807') = 9223372036854775807 is out of range");
    free(t);
    t = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1073741824, \"out_ch\": 1073741824, "
                  "\"filter_size\": 1073741824, \"img_size\": 1073741824}, \"variants\": [{\"file\": "
                  "\"../kernels/conv2d/conv2d_pad.cu\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], "
                  "\"args\": []}]}");
    EXPECT(hn_fuzz_config, t, NULL); /* loads; list shows the shape error per case */
    free(t);
    t = config(", \"check\": {\"atol\": 1e999}", "");
    EXPECT(hn_fuzz_config, t, "check.atol: in 'inf': unknown name 'inf'");
    free(t);
    /* sample.count at and past its ends. */
    t = config(", \"sample\": {\"count\": 0}", "");
    EXPECT(hn_fuzz_config, t, "sample.count: 0 is out of range");
    free(t);
    t = config(", \"sample\": {\"count\": 1e300, \"seed\": -1}", "");
    EXPECT(hn_fuzz_config, t, "sample.count: 1e+300 is out of range");
    free(t);
    t = config(", \"sample\": {\"count\": 100000000, \"seed\": 9007199254740991}", "");
    EXPECT(hn_fuzz_config, t, NULL);
    free(t);
    t = config(", \"sample\": {\"count\": 1, \"seed\": 9007199254740992}", "");
    EXPECT(hn_fuzz_config, t, "sample.seed");
    free(t);
    /* Long strings. */
    char *big = xmalloc(1 << 20);
    memset(big, 'x', (1 << 20) - 1);
    big[(1 << 20) - 1] = '\0';
    field = xasprintf(", \"description\": \"%s\"", big);
    t = config(field, "");
    EXPECT(hn_fuzz_config, t, NULL);
    free(t);
    free(field);
    field = xasprintf(", \"where\": \"%s\"", big);
    t = config(field, "");
    EXPECT(hn_fuzz_config, t, "longer than 4096 characters (1048575)");
    free(t);
    free(field);
    field = xasprintf(", \"name\": \"%s\"", big);
    t = config(field, "");
    EXPECT(hn_fuzz_config, t, "name: 'xxxx");
    EXPECT(hn_fuzz_config, t, "is not a file name");
    free(t);
    free(field);
    field = xasprintf(", \"kernel\": \"%s\"", big);
    t = config("", field);
    EXPECT(hn_fuzz_config, t, "variants[0].kernel: 'xxxx");
    EXPECT(hn_fuzz_config, t, "longer than 512 characters");
    free(t);
    free(field);
    field = xasprintf(", \"defines\": {\"-%s\": 1}", big);
    t = config("", field);
    EXPECT(hn_fuzz_config, t, "variants[0].defines.-xxxx");
    EXPECT(hn_fuzz_config, t, "...: '-xxx");
    EXPECT(hn_fuzz_config, t, "...' is not a valid macro name");
    free(t);
    free(field);
    free(big);
}

/* The bytes after a NUL are a --set assignment for hn_plan_make_case; hostile
 * values there are refused or taken, never a crash. */
static void test_make_case(void) {
    static const char tail[] = "\0in_ch=99999999999999999999999,out_ch=-1,filter_size=nan,img_size=";
    char *good = config("", "");
    size_t n = strlen(good);
    char *data = xmalloc(n + sizeof tail);
    memcpy(data, good, n);
    memcpy(data + n, tail, sizeof tail - 1);
    hn_err err;
    CHECK(run(NULL, __LINE__, hn_fuzz_config, data, n + sizeof tail - 1, &err) == 0);
    memcpy(data + n, "\0junk", 5);
    CHECK(run(NULL, __LINE__, hn_fuzz_config, data, n + 5, &err) == 0);
    free(data);
    free(good);
}

int main(void) {
    test_replay();
    test_expressions();
    test_config_expressions();
    test_config_sizes();
    test_make_case();
    return hn_test_exit();
}
