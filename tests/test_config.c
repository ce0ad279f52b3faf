/*
 * test_config.c: sweep configs (harness/config.c, harness/sweep.c): the seed's
 * sweep, deterministic sampling, variant expansion, and every kind of bad input
 * with a message naming the file, the JSON path and what was expected.
 */
#include <stdint.h>
#include <unistd.h>

#include "config.h"
#include "hn_test.h"
#include "sweep.h"

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

/* A config text with KERNEL replaced by the absolute path of a real kernel. */
static char *with_kernel(const char *text) {
    char *kernel = xasprintf("%s/kernels/conv2d/conv2d_pad.cu", root());
    hn_sb sb;
    hn_sb_init(&sb);
    for (const char *p = text; *p;) {
        const char *hit = strstr(p, "KERNEL");
        if (!hit) {
            hn_sb_adds(&sb, p);
            break;
        }
        hn_sb_add(&sb, p, (size_t)(hit - p));
        hn_sb_adds(&sb, kernel);
        p = hit + 6;
    }
    free(kernel);
    return hn_sb_detach(&sb);
}

#define BASE_VARIANT                                                                              \
    "{\"file\": \"KERNEL\", \"kernel\": \"conv2d_pad\", \"block\": [16, 16], "                   \
    "\"grid\": [\"ceil_div(w, 16)\", \"ceil_div(h, 16)\"], \"args\": [\"in\", \"out\", \"filter\", " \
    "\"h\", \"w\", \"in_ch\", \"out_ch\", \"filter_size\", \"pad\"]}"

#define SMALL_CONFIG(extra_top, variant)                                                        \
    "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1, 2], \"out_ch\": [3], \"filter_size\": [3], " \
    "\"img_size\": [8, 9]}" extra_top ", \"variants\": [" variant "]}"

/* Parses text and returns the error message ("" on success). */
static const char *error_of(const char *text) {
    static hn_err err;
    char *full = with_kernel(text);
    hn_plan *p = NULL;
    err.msg[0] = '\0';
    if (hn_plan_parse(full, "cfg/test.json", -1, &p, &err) == 0) err.msg[0] = '\0';
    hn_plan_free(p);
    free(full);
    return err.msg;
}

static hn_plan *parse_ok(const char *text) {
    char *full = with_kernel(text);
    hn_plan *p = NULL;
    hn_err err;
    if (hn_plan_parse(full, "cfg/test.json", -1, &p, &err) != 0) {
        CHECK_MSG(0, "unexpected error: %s", err.msg); /* a test that cannot start fails */
        p = NULL;
    }
    free(full);
    return p;
}

static void test_seed_sweep(void) {
    char *path = xasprintf("%s/configs/conv2d_sweep.json", root());
    hn_plan *p;
    hn_err err;
    CHECK_MSG(hn_plan_load(path, -1, &p, &err) == 0, "%s", err.msg);
    if (!p) return;
    CHECK_INT(p->n_axes, 4);
    CHECK_INT(p->n_cases, 50);
    /* 6*6*4*5 = 720 combinations; in*out*img^2 < 2^30 keeps 580 of them. */
    CHECK_INT(p->n_total, 580);
    CHECK_INT(p->n_variants, 5);
    CHECK_STR(p->variants[4].label, "conv2d_pad_z_out_shared_halo[ACCUM_DTYPE=double]");
    /* Every sampled case satisfies the constraint, and no case repeats. */
    for (int64_t i = 0; i < p->n_cases; i++) {
        int64_t in = p->cases[i].values[0].i, out = p->cases[i].values[1].i, img = p->cases[i].values[3].i;
        CHECK(in * out * img * img < 1024LL * 1024 * 32 * 32);
        if (i) CHECK(p->cases[i].index > p->cases[i - 1].index);
    }
    /* Same seed, same cases; another seed, other cases. */
    hn_plan *again, *other;
    CHECK(hn_plan_load(path, -1, &again, &err) == 0);
    CHECK(hn_plan_load(path, 7, &other, &err) == 0);
    int same = 1, differ = 0;
    for (int64_t i = 0; i < p->n_cases; i++) {
        same &= p->cases[i].index == again->cases[i].index;
        differ |= p->cases[i].index != other->cases[i].index;
    }
    CHECK(same);
    CHECK(differ);
    CHECK_INT(other->seed, 7);
    hn_plan_free(again);
    hn_plan_free(other);
    hn_plan_free(p);
    free(path);
}

static void test_enumeration_and_params(void) {
    hn_plan *p = parse_ok(SMALL_CONFIG("", BASE_VARIANT));
    if (!p) return;
    CHECK_INT(p->n_cases, 4); /* no sample: every combination, first axis slowest */
    CHECK_INT(p->cases[0].values[0].i, 1);
    CHECK_INT(p->cases[0].values[3].i, 8);
    CHECK_INT(p->cases[1].values[3].i, 9);
    CHECK_INT(p->cases[2].values[0].i, 2);
    double params[32];
    hn_err err;
    CHECK(hn_plan_case_params(p, &p->cases[3], params, &err) == 0);
    CHECK_NEAR(params[hn_op_param_index(p->op, "in_ch")], 2, 0);
    CHECK_NEAR(params[hn_op_param_index(p->op, "h")], 9, 0); /* h defaults to img_size */
    CHECK_NEAR(params[hn_op_param_index(p->op, "pad")], 0, 0); /* pad defaults to 0 */
    CHECK_NEAR(params[hn_op_param_index(p->op, "n")], 1, 0); /* n defaults to 1 */
    CHECK_NEAR(params[hn_op_param_index(p->op, "padding")], -1, 0); /* "same" */
    CHECK_NEAR(p->min_match, 0.9, 0); /* the seed's default */
    hn_plan_free(p);
}

/* A float parameter ('f': conv2d's pad) is the float32 the kernels are given,
 * so the reference and the --save-tensors manifest use that value too (pad 0.1
 * as a double made im2col's exact check fail every correct kernel); one past
 * float's range is an error, not an infinity. */
static void test_float_params(void) {
    hn_plan *p = parse_ok(SMALL_CONFIG(", \"params\": {\"pad\": \"0.1 + in_ch\"}", BASE_VARIANT));
    if (!p) return;
    double params[32];
    hn_err err;
    int pad = hn_op_param_index(p->op, "pad");
    CHECK(hn_plan_case_params(p, &p->cases[0], params, &err) == 0);
    CHECK(params[pad] == (double)1.1f);
    CHECK(params[pad] != 1.1);
    CHECK(hn_plan_case_params(p, &p->cases[2], params, &err) == 0);
    CHECK(params[pad] == (double)2.1f);
    hn_plan_free(p);
    CHECK_CONTAINS(error_of(SMALL_CONFIG(", \"params\": {\"pad\": \"1e39 * in_ch\"}", BASE_VARIANT)),
                   "params.pad ('1e39 * in_ch') = 1e+39 is out of float range");
    /* an integer parameter is untouched: 2^25 + 1 is no float but an exact int */
    p = parse_ok(SMALL_CONFIG(", \"params\": {\"h\": 33554433}", BASE_VARIANT));
    if (!p) return;
    CHECK(hn_plan_case_params(p, &p->cases[0], params, &err) == 0);
    CHECK(params[hn_op_param_index(p->op, "h")] == 33554433.0);
    hn_plan_free(p);
}

static void test_sampling_properties(void) {
    /* 6 x 6 combinations, a constraint keeping 21, sample 10. */
    const char *text = "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1,2,3,4,5,6], \"out_ch\": [1,2,3,4,5,6], "
                       "\"filter_size\": 3, \"img_size\": 8}, \"where\": [\"in_ch <= out_ch\"], "
                       "\"sample\": {\"count\": 10, \"seed\": 42}, \"variants\": [" BASE_VARIANT "]}";
    hn_plan *p = parse_ok(text);
    if (!p) return;
    CHECK_INT(p->n_total, 21);
    CHECK_INT(p->n_cases, 10);
    for (int64_t i = 0; i < p->n_cases; i++) CHECK(p->cases[i].values[0].i <= p->cases[i].values[1].i);
    hn_plan_free(p);
    /* Asking for more than exist gives them all. */
    const char *all = "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1,2], \"out_ch\": 1, \"filter_size\": 3, "
                      "\"img_size\": 8}, \"sample\": {\"count\": 10, \"seed\": 1}, \"variants\": [" BASE_VARIANT "]}";
    p = parse_ok(all);
    if (p) CHECK_INT(p->n_cases, 2);
    hn_plan_free(p);
}

static void test_define_axes_and_where(void) {
    const char *text = SMALL_CONFIG(
        "", "{\"file\": \"KERNEL\", \"kernel\": \"conv2d_pad\", \"name\": \"v\", "
            "\"defines\": {\"TILE_SIZE\": [8, 16, 32], \"ACCUM_DTYPE\": [\"float\", \"double\"]}, "
            "\"where\": [\"TILE_SIZE <= 16\", \"TILE_SIZE >= filter_size\"], \"block\": [\"TILE_SIZE\", \"TILE_SIZE\"], "
            "\"grid\": [\"ceil_div(w, TILE_SIZE)\", 1, 1], \"args\": [\"in\", \"int: TILE_SIZE * 2\"]}");
    hn_plan *p = parse_ok(text);
    if (!p) return;
    /* 3 x 2 define combinations, TILE_SIZE 32 dropped by the defines-only constraint. */
    CHECK_INT(p->n_variants, 4);
    CHECK_STR(p->variants[0].label, "v[TILE_SIZE=8,ACCUM_DTYPE=float]");
    CHECK_STR(p->variants[3].label, "v[TILE_SIZE=16,ACCUM_DTYPE=double]");
    CHECK_STR(hn_variant_define(p, &p->variants[1], "ACCUM_DTYPE"), "double");
    int n;
    char **defs = hn_variant_define_args(p, &p->variants[2], &n);
    CHECK_INT(n, 2);
    CHECK_STR(defs[0], "TILE_SIZE=16");
    CHECK_STR(defs[1], "ACCUM_DTYPE=float");
    for (int i = 0; i < n; i++) free(defs[i]);
    free(defs);
    /* The case-dependent constraint is checked per case. */
    double params[32]; /* conv2d has 10 parameters; an operator at most 32 */
    hn_err err;
    hn_plan_case_params(p, &p->cases[0], params, &err);
    const char *failed = NULL;
    CHECK_INT(hn_sweep_variant_applies(p, &p->variants[0], &p->cases[0], params, &failed, &err), 1);
    CHECK_INT(hn_plan_find_variant(p, "v[TILE_SIZE=16,ACCUM_DTYPE=double]"), 3);
    CHECK_INT(hn_plan_find_variant(p, "v"), 0);
    CHECK_INT(hn_plan_find_variant(p, "nope"), -1);
    hn_case c;
    CHECK(hn_plan_make_case(p, "in_ch=2, out_ch=1,filter_size=3,img_size=5", &c, &err) == 0);
    CHECK_INT(c.values[3].i, 5);
    hn_case_release(&c);
    CHECK(hn_plan_make_case(p, "in_ch=2,out_ch=1", &c, &err) != 0);
    CHECK_CONTAINS(err.msg, "no value for axis 'img_size'"); /* filter_size has one value: taken */
    CHECK(hn_plan_make_case(p, "in_ch=2,out_ch=1,img_size=7", &c, &err) == 0);
    CHECK_INT(c.values[2].i, 3);
    hn_case_release(&c);
    CHECK(hn_plan_make_case(p, "in_ch=2,bogus=1", &c, &err) != 0);
    CHECK_CONTAINS(err.msg, "'bogus' is not an axis");
    hn_plan_free(p);
}

static void test_bad_input(void) {
    const char *e;
    e = error_of("{\"op\": \"conv2d\",");
    CHECK_CONTAINS(e, "cfg/test.json:1:");
    CHECK_CONTAINS(e, "invalid JSON");
    e = error_of(SMALL_CONFIG(", \"smaple\": {}", BASE_VARIANT));
    CHECK_CONTAINS(e, "cfg/test.json: smaple: unknown key (did you mean 'sample'?");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"gird\": [1], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].gird: unknown key (did you mean 'grid'?");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"block\": [1], "
                                  "\"grid\": [1, \"out_chan\"], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].grid[1]: in 'out_chan': unknown name 'out_chan'");
    CHECK(strstr(e, "is a value of") == NULL);
    /* a choice's value unquoted in an expression: the message says to quote it */
    e = error_of(SMALL_CONFIG(", \"params\": {\"layout\": \"NHWC\"}", BASE_VARIANT));
    CHECK_CONTAINS(e, "params.layout: in 'NHWC': unknown name 'NHWC'");
    CHECK_CONTAINS(e, "'NHWC' is a value of layout: a string in an expression is quoted, \"\\\"NHWC\\\"\"");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"block\": [1], "
                                  "\"grid\": [\"ceil_div(w, \"], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].grid[0]: in 'ceil_div(w, ': at column");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": 7, \"block\": [1], \"grid\": [1], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].kernel: expected the kernel's C++ name");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"nope/missing.cu\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].file: file 'nope/missing.cu' not found");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": [\"input\"]}"));
    CHECK_CONTAINS(e, "variants[0].args[0]: unknown argument 'input'");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": [\"short: 3\"]}"));
    CHECK_CONTAINS(e, "unknown argument type 'short'");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"block\": \"16\", \"grid\": [1], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].block: expected an array of 1 to 3 expressions");
    e = error_of(SMALL_CONFIG(", \"check\": {\"min_match\": \"high\"}", BASE_VARIANT));
    CHECK_CONTAINS(e, "check.min_match: expected a number, got a string");
    e = error_of(SMALL_CONFIG(", \"check\": {\"min_match\": 2}", BASE_VARIANT));
    CHECK_CONTAINS(e, "check.min_match: 2 is out of range");
    e = error_of("{\"op\": \"conv3d\", \"axes\": {\"a\": [1]}, \"variants\": []}");
    /* the list grows with every operator folder: check its start and one member only */
    CHECK_CONTAINS(e, "op: unknown operator 'conv3d' (known: ");
    CHECK_CONTAINS(e, " conv2d, ");
    /* a case the operator cannot pose: the file, "axes", the case and the op's reason */
    e = error_of("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": [3, 9], "
                 "\"img_size\": 8}, \"params\": {\"padding\": 0}, \"variants\": [" BASE_VARIANT "]}");
    CHECK_CONTAINS(e, "axes: case 1 (in_ch=1, out_ch=1, filter_size=9, img_size=8): conv2d: a 9x9 filter with padding "
                      "0 does not fit a 8x8 image");
    CHECK_CONTAINS(e, "(leave such cases out with \"where\")");
    e = error_of("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1, 1]}, \"variants\": []}");
    CHECK_CONTAINS(e, "axes.in_ch[1]: value 1 appears twice");
    e = error_of("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1], \"out_ch\": 1, \"filter_size\": 3}, \"variants\": [" BASE_VARIANT "]}");
    CHECK_CONTAINS(e, "params.h: not set, and its default 'img_size' does not fit");
    e = error_of(SMALL_CONFIG(", \"where\": \"in_ch / (out_ch - 3) > 0\"", BASE_VARIANT));
    CHECK_CONTAINS(e, "where[0]");
    CHECK_CONTAINS(e, "division by zero");
    e = error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"defines\": {\"img_size\": 3}, \"block\": [1], \"grid\": [1], \"args\": []}"));
    CHECK_CONTAINS(e, "variants[0].defines.img_size: define 'img_size' has the name of an axis");
    /* a define's value naming an axis or a parameter loads (it may name something
     * of the kernel's source: a macro alias of a parameter); a compile error it
     * causes is explained (test_user_configs.sh) */
    CHECK_STR(error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"defines\": {\"R\": [\"float\", \"pad\"]}, \"block\": [1], \"grid\": [1], \"args\": []}")), "");
    e = error_of(SMALL_CONFIG("", BASE_VARIANT ", " BASE_VARIANT));
    CHECK_CONTAINS(e, "appears twice");
    e = error_of(SMALL_CONFIG(", \"timing\": {\"repeat\": 0}", BASE_VARIANT));
    CHECK_CONTAINS(e, "timing.repeat: 0 is out of range");
    e = error_of(SMALL_CONFIG(", \"variants\": 3", BASE_VARIANT));
    CHECK_CONTAINS(e, "cfg/test.json: variants: duplicate key");
    /* Comments are allowed as "//" keys. */
    CHECK_STR(error_of(SMALL_CONFIG(", \"//\": \"a note\"", BASE_VARIANT)), "");
}

/* Input no editor would write: a NUL byte, JSON nested past cJSON's limit,
 * names given twice, more define names than used to fit. */
static void test_hostile_input(void) {
    const char *tmp = getenv("HARNESS_TMP");
    if (!tmp) tmp = "/tmp";
    hn_mkdirs(tmp, NULL);
    char *path = xasprintf("%s/test_config_nul.%d.json", tmp, (int)getpid());
    static const char text[] = "{\"op\": \"conv2d\",\n \"axes\": {}\0, \"junk\"}";
    hn_plan *p = NULL;
    hn_err err;
    CHECK(hn_write_file(path, text, sizeof text - 1, NULL) == 0);
    CHECK(hn_plan_load(path, -1, &p, &err) != 0);
    CHECK_CONTAINS(err.msg, "test_config_nul.");
    CHECK_CONTAINS(err.msg, ".json:2:12: a NUL byte");
    unlink(path);
    free(path);
    hn_sb sb;
    hn_sb_init(&sb);
    for (int i = 0; i < 1001; i++) hn_sb_addc(&sb, '[');
    CHECK_STR(error_of(sb.buf), "cfg/test.json:1:1001: JSON nested deeper than 1000 levels");
    hn_sb_free(&sb);
    CHECK_CONTAINS(error_of("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"in_ch\": 2}}"),
                   "cfg/test.json: axes.in_ch: duplicate key");
    CHECK_CONTAINS(error_of(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"k\", \"defines\": "
                                             "{\"A\": 1, \"A\": 2}, \"block\": [1], \"grid\": [1], \"args\": []}")),
                   "variants[0].defines.A: duplicate key");
    /* A tolerance may name any define (the union of names was cut at 64). */
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "{\"op\": \"conv2d\", \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 1, "
                    "\"img_size\": 8}, \"check\": {\"atol\": \"D99 * 1e-6\"}, \"variants\": [{\"file\": "
                    "\"KERNEL\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": [], \"defines\": {");
    for (int i = 0; i < 100; i++) hn_sb_addf(&sb, "%s\"D%d\": %d", i ? ", " : "", i, i);
    hn_sb_adds(&sb, "}}]}");
    CHECK_STR(error_of(sb.buf), "");
    hn_sb_free(&sb);
}

/* ---- sweep.c: sampling, where filters, variants --------------------------------- */

/* A config over in_ch 1..6 x out_ch 1..6 with the given top-level extras. */
static char *grid_config(const char *extra) {
    return xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1,2,3,4,5,6], \"out_ch\": [1,2,3,4,5,6], "
                     "\"filter_size\": 3, \"img_size\": 8}%s, \"variants\": [" BASE_VARIANT "]}",
                     extra);
}

static int64_t combo(const hn_case *c) {
    return (c->values[0].i - 1) * 6 + (c->values[1].i - 1);
}

/* Cases carry their position (id) and their combination (index, first axis
 * slowest); a sample is the same set for the same seed on every machine (the
 * generator is ours), kept in enumeration order. */
static void test_sample_exact(void) {
    char *text = grid_config(", \"where\": [\"in_ch <= out_ch\"], \"sample\": {\"count\": 10, \"seed\": 42}");
    hn_plan *p = parse_ok(text);
    free(text);
    if (!p) return;
    /* recorded from the generator: a change here changes which cases every
     * sampled sweep runs, and so what results files recorded before mean */
    static const int64_t want[10] = {1, 3, 4, 5, 7, 14, 15, 16, 22, 29};
    CHECK_INT(p->n_cases, 10);
    for (int64_t i = 0; i < p->n_cases && i < 10; i++) {
        CHECK_INT(p->cases[i].id, i);
        CHECK_INT(p->cases[i].index, want[i]);
        CHECK_INT(combo(&p->cases[i]), p->cases[i].index);
    }
    hn_plan_free(p);

    /* a sample of one is one case, not all of them */
    text = grid_config(", \"sample\": {\"count\": 1, \"seed\": 42}");
    p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_total, 36);
        CHECK_INT(p->n_cases, 1);
        CHECK_INT(p->cases[0].id, 0);
    }
    hn_plan_free(p);

    /* no sample: every case, ids and indices in order */
    text = grid_config(", \"where\": \"in_ch * out_ch == 6\"");
    p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_total, 4); /* 1x6, 2x3, 3x2, 6x1 */
        CHECK_INT(p->n_cases, 4);
        static const int64_t idx[4] = {5, 8, 13, 30};
        for (int64_t i = 0; i < p->n_cases && i < 4; i++) {
            CHECK_INT(p->cases[i].id, i);
            CHECK_INT(p->cases[i].index, idx[i]);
            CHECK_INT(combo(&p->cases[i]), idx[i]);
        }
    }
    hn_plan_free(p);
}

/* where: several constraints must all hold; exactly one survivor is a sweep of
 * one; none is an error naming the count. */
static void test_where_filter(void) {
    char *text = grid_config(", \"where\": [\"in_ch >= 3\", \"out_ch == in_ch + 3\"]");
    hn_plan *p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_total, 1); /* 24 and 3 pass one of them, only (3, 6) both */
        CHECK_INT(p->cases[0].index, 2 * 6 + 5);
    }
    hn_plan_free(p);

    text = grid_config(", \"where\": [\"in_ch == 4\", \"out_ch == 2\"]");
    p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_total, 1);
        CHECK_INT(p->n_cases, 1);
        CHECK_INT(p->cases[0].values[0].i, 4);
        CHECK_INT(p->cases[0].values[1].i, 2);
    }
    hn_plan_free(p);

    text = grid_config(", \"where\": [\"in_ch > 6\"]");
    CHECK_CONTAINS(error_of(text), "where: none of the 36 combinations of the axes passes it; nothing would run");
    free(text);

    /* a combination too long to name in full is cut short, not overrun */
    hn_sb axes;
    hn_sb_init(&axes);
    for (int i = 0; i < 20; i++) hn_sb_addf(&axes, ", \"a_rather_long_axis_name_number_%02d\": [%d]", i, i);
    text = xasprintf("{\"op\": \"conv2d\", \"axes\": {\"in_ch\": [1], \"out_ch\": [2], \"filter_size\": 3, "
                     "\"img_size\": 8%s}, \"params\": {\"h\": \"img_size / (in_ch - 1)\"}, \"variants\": [" BASE_VARIANT
                     "]}",
                     axes.buf);
    hn_sb_free(&axes);
    const char *long_e = error_of(text);
    CHECK_CONTAINS(long_e, "(for in_ch=1,out_ch=2,filter_size=3,img_size=8,a_rather_long_axis_name_number_00=0,");
    CHECK(!strstr(long_e, "number_19=19")); /* 20 x 38 characters do not fit */
    free(text);

    /* a parameter that cannot be computed for a combination names it */
    text = grid_config(", \"params\": {\"h\": \"img_size / (in_ch - 2)\"}");
    const char *e = error_of(text);
    CHECK_CONTAINS(e, "division by zero");
    CHECK_CONTAINS(e, "(for in_ch=2,out_ch=1,filter_size=3,img_size=8)");
    free(text);
}

/* A variant spec with DEFINES text ("\"defines\": {...}") and extra keys. */
static char *variant_config(const char *defines_and_where) {
    return xasprintf(SMALL_CONFIG("", "{\"file\": \"KERNEL\", \"kernel\": \"conv2d_pad\", \"name\": \"v\", %s, "
                                      "\"block\": [16, 16], \"grid\": [1, 1], \"args\": [\"in\"]}"),
                     defines_and_where);
}

static void test_variant_expansion(void) {
    /* 5 x 4 = 20 define combinations (more than the first allocation), first
     * define slowest; a defines-only where keeps 17 */
    char *text = variant_config("\"defines\": {\"A\": [0, 1, 2, 3, 4], \"B\": [10, 20, 30, 40]}, "
                                "\"where\": [\"A * 10 + B / 10 < 42\"]");
    hn_plan *p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_variants, 17); /* 4 + 4 + 4 + 4 + 1 (A=4, B=10) */
        int k = 0;
        for (int a = 0; a < 5; a++)
            for (int b = 1; b <= 4; b++) {
                if (a * 10 + b >= 42) continue;
                char want[64];
                snprintf(want, sizeof want, "v[A=%d,B=%d]", a, b * 10);
                if (k < p->n_variants) CHECK_STR(p->variants[k].label, want);
                if (k < p->n_variants) CHECK_INT(p->variants[k].choice[0], a);
                if (k < p->n_variants) CHECK_INT(p->variants[k].choice[1], b - 1);
                k++;
            }
        CHECK_INT(k, 17);
    }
    hn_plan_free(p);

    /* 40 variants: the array grows twice (16, 32, 64) and keeps them all in order */
    hn_sb vals;
    hn_sb_init(&vals);
    for (int i = 0; i < 40; i++) hn_sb_addf(&vals, "%s%d", i ? ", " : "", i);
    char *defs = xasprintf("\"defines\": {\"A\": [%s]}", vals.buf);
    hn_sb_free(&vals);
    text = variant_config(defs);
    free(defs);
    p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_variants, 40);
        for (int i = 0; i < p->n_variants; i++) CHECK_INT(p->variants[i].choice[0], i);
        if (p->n_variants == 40) CHECK_STR(p->variants[39].label, "v[A=39]");
    }
    hn_plan_free(p);

    /* a single-valued define is not in the label; a later multi-valued one is */
    text = variant_config("\"defines\": {\"ONE\": 7, \"B\": [1, 2]}");
    p = parse_ok(text);
    free(text);
    if (p) {
        CHECK_INT(p->n_variants, 2);
        CHECK_STR(p->variants[0].label, "v[B=1]");
        CHECK_STR(p->variants[1].label, "v[B=2]");
        CHECK_STR(hn_variant_define(p, &p->variants[1], "ONE"), "7");
    }
    hn_plan_free(p);

    /* where constraints that exclude every combination, or fail to evaluate */
    text = variant_config("\"defines\": {\"A\": [1, 2]}, \"where\": [\"A > 2\"]");
    CHECK_CONTAINS(error_of(text), "variants[0] ('v'): its where constraints exclude every define combination");
    free(text);
    text = variant_config("\"defines\": {\"A\": [1, 2]}, \"where\": [\"A / (A - 2) >= 0\"]");
    const char *e = error_of(text);
    CHECK_CONTAINS(e, "variants[0].where[0] ('A / (A - 2) >= 0'): ");
    CHECK_CONTAINS(e, "division by zero");
    free(text);
}

/* At most 100000 define combinations per spec: 100000 is accepted (a where
 * keeps one of them), 100001 (11 x 9091) is not. */
static void test_define_limit(void) {
    hn_sb vals;
    hn_sb_init(&vals);
    for (int i = 0; i < 10000; i++) hn_sb_addf(&vals, "%s%d", i ? "," : "", i);
    char *defs = xasprintf("\"defines\": {\"A\": [0,1,2,3,4,5,6,7,8,9], \"B\": [%s]}, "
                           "\"where\": [\"A == 3 && B == 77\"]", vals.buf);
    char *text = variant_config(defs);
    hn_plan *p = parse_ok(text);
    if (p) {
        CHECK_INT(p->n_variants, 1);
        if (p->n_variants == 1) CHECK_STR(p->variants[0].label, "v[A=3,B=77]");
    }
    hn_plan_free(p);
    free(text);
    free(defs);
    hn_sb_reset(&vals);
    for (int i = 0; i < 9091; i++) hn_sb_addf(&vals, "%s%d", i ? "," : "", i);
    defs = xasprintf("\"defines\": {\"A\": [0,1,2,3,4,5,6,7,8,9,10], \"B\": [%s]}", vals.buf);
    text = variant_config(defs);
    CHECK_CONTAINS(error_of(text), "variants[0].defines: more than 100000 combinations");
    free(text);
    free(defs);
    hn_sb_free(&vals);
}

/* hn_sweep_variant_applies: every where must hold, the first that fails is
 * named, an evaluation error is -1 with the constraint in the message. */
static void test_variant_applies(void) {
    char *text = variant_config("\"defines\": {\"T\": [4, 8]}, "
                                "\"where\": [\"T <= in_ch * 4\", \"out_ch / (in_ch - 1) > 0\", \"T >= 4\"]");
    hn_plan *p = parse_ok(text);
    free(text);
    if (!p) return;
    CHECK_INT(p->n_variants, 2);
    hn_err err;
    double params[32];
    for (int64_t ci = 0; ci < p->n_cases; ci++) {
        const hn_case *c = &p->cases[ci];
        CHECK(hn_plan_case_params(p, c, params, &err) == 0);
        int64_t in = c->values[0].i;
        for (int v = 0; v < 2; v++) {
            const char *failed = "untouched";
            int want_T = v ? 8 : 4;
            int rc = hn_sweep_variant_applies(p, &p->variants[v], c, params, &failed, &err);
            if (want_T > in * 4) {
                CHECK_INT(rc, 0);
                CHECK_STR(failed, "T <= in_ch * 4");
                CHECK_INT(hn_sweep_variant_applies(p, &p->variants[v], c, params, NULL, &err), 0);
            } else if (in == 1) {
                CHECK_INT(rc, -1);
                CHECK_CONTAINS(err.msg, "where 'out_ch / (in_ch - 1) > 0'");
                CHECK_CONTAINS(err.msg, "division by zero");
                CHECK_STR(failed, "untouched");
            } else {
                CHECK_INT(rc, 1);
                CHECK_STR(failed, "untouched");
            }
        }
    }
    hn_plan_free(p);
}

int main(void) {
    test_seed_sweep();
    test_enumeration_and_params();
    test_float_params();
    test_sampling_properties();
    test_define_axes_and_where();
    test_bad_input();
    test_hostile_input();
    test_sample_exact();
    test_where_filter();
    test_variant_expansion();
    test_define_limit();
    test_variant_applies();
    return hn_test_exit();
}
