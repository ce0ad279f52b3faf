/*
 * test_train_kernels.c: the training config (harness/train/tkernels.c) without a
 * GPU: every slot of configs/train/default.json and tests/configs/train_emu.json
 * compiles with NVRTC for sm_80 and sm_90 (what a GPU run would load) and for the
 * emulator; binding evaluates the launch geometry and packs the arguments for
 * the values given; a --tuned best.json replaces the defines of the slots that
 * run its kernel; bad configs fail with the file and the JSON path.
 */
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "hn_test.h"
#include "train/tkernels.h"

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

static char *tmp_path(const char *name) {
    const char *base = getenv("HARNESS_TMP") ? getenv("HARNESS_TMP") : "/tmp";
    hn_mkdirs(base, NULL);
    return xasprintf("%s/%s.%d", base, name, (int)getpid());
}

static void test_compile_all(const char *rel) {
    char *path = xasprintf("%s/%s", root(), rel);
    hn_tk *t = NULL;
    hn_err err;
    CHECK_MSG(hn_tk_load(path, NULL, &t, &err) == 0, "%s", err.msg);
    if (t) {
        char *cache = tmp_path("train-kernels-cache");
        int have_nvrtc = strcmp(hn_nvrtc_version(), "unavailable") != 0;
        const char *archs[] = {"sm_80", "sm_90"};
        for (int a = 0; have_nvrtc && a < 2; a++) {
            printf("%s, NVRTC %s:\n", rel, archs[a]);
            CHECK_INT(hn_tk_compile_all(t, 1, archs[a], cache, stdout, &err), 0);
        }
        if (!have_nvrtc) printf("%s: NVRTC unavailable, the cuda compiles are not checked\n", rel);
        printf("%s, emulator:\n", rel);
        CHECK_INT(hn_tk_compile_all(t, 0, NULL, getenv("HARNESS_CACHE_DIR"), stdout, &err), 0);
        free(cache);
    }
    hn_tk_destroy(t);
    free(path);
}

static void test_bind(void) {
    char *path = xasprintf("%s/configs/train/default.json", root());
    hn_tk *t = NULL;
    hn_backend *be = NULL;
    hn_err err;
    hn_backend_opts bo = {.emu_threads = 1, .kernel_timeout = 60};
    CHECK_MSG(hn_backend_create("emu", &bo, 0, &be, &err) == 0, "%s", err.msg);
    CHECK_MSG(hn_tk_load(path, NULL, &t, &err) == 0, "%s", err.msg);
    if (t && be) {
        hn_tk_set_backend(t, be, NULL, getenv("HARNESS_CACHE_DIR"), 0);
        CHECK(hn_tk_has(t, "linear.forward"));
        CHECK(!hn_tk_has(t, "linear.sideways"));
        hn_tk_val v[] = {HN_TK_BUF("x", 0x1000), HN_TK_BUF("weight", 0x2000), HN_TK_BUF("bias", 0x3000),
                         HN_TK_BUF("y", 0x4000), HN_TK_INT("batch", 64),      HN_TK_INT("in_f", 1568),
                         HN_TK_INT("out_f", 128)};
        hn_tk_call c;
        CHECK_MSG(hn_tk_bind(t, "linear.forward", v, 7, &c, &err) == 0, "%s", err.msg);
        /* TILE 16: grid (ceil(128/16), ceil(64/16)), block 16 x 16 */
        CHECK_INT(c.dims.grid[0], 8);
        CHECK_INT(c.dims.grid[1], 4);
        CHECK_INT(c.dims.block[0], 16);
        CHECK_INT(c.n_args, 7);
        CHECK_INT(c.vals[1].p, 0x2000);
        CHECK_INT(c.vals[5].i, 1568);
        /* a value the slot needs and the model did not give */
        CHECK(hn_tk_bind(t, "linear.forward", v, 6, &c, &err) != 0);
        CHECK_CONTAINS(err.msg, "out_f");
        /* Adam's bias corrections, evaluated from the step */
        hn_tk_val a[] = {HN_TK_BUF("param", 1), HN_TK_BUF("grad", 2), HN_TK_BUF("m", 3), HN_TK_BUF("v", 4),
                         HN_TK_INT("n", 1000),  HN_TK_FLT("lr", 1e-3), HN_TK_FLT("beta1", 0.9), HN_TK_FLT("beta2", 0.999),
                         HN_TK_FLT("eps", 1e-8), HN_TK_FLT("weight_decay", 0), HN_TK_INT("step", 2)};
        CHECK_MSG(hn_tk_bind(t, "adam.update", a, 11, &c, &err) == 0, "%s", err.msg);
        CHECK(fabsf(c.vals[10].f - 0.19f) < 1e-6f);
        CHECK(fabsf(c.vals[11].f - (float)(1 - 0.999 * 0.999)) < 1e-9f);
        CHECK_INT(c.dims.grid[0], 4);
    }
    hn_tk_destroy(t);
    hn_backend_destroy(be);
    free(path);
}

static void test_tuned(void) {
    char *path = xasprintf("%s/configs/train/default.json", root());
    char *best = tmp_path("train-best.json");
    const char *text = "{\"kernel\": \"linear_backward_dx_tiled\", \"results\": [{\"defines\": \"TILE=32\"}]}";
    hn_err err;
    CHECK(hn_write_file(best, text, strlen(text), &err) == 0);
    hn_tk *t = NULL;
    CHECK_MSG(hn_tk_load(path, best, &t, &err) == 0, "%s", err.msg);
    if (t) {
        hn_tk_val v[] = {HN_TK_BUF("dy", 1), HN_TK_BUF("weight", 2), HN_TK_BUF("dx", 3), HN_TK_INT("batch", 64),
                         HN_TK_INT("in_f", 1568), HN_TK_INT("out_f", 128)};
        hn_backend *be = NULL;
        hn_backend_opts bo = {.emu_threads = 1};
        CHECK(hn_backend_create("emu", &bo, 0, &be, &err) == 0);
        hn_tk_set_backend(t, be, NULL, getenv("HARNESS_CACHE_DIR"), 0);
        hn_tk_call c;
        CHECK_MSG(hn_tk_bind(t, "linear.backward_data", v, 6, &c, &err) == 0, "%s", err.msg);
        CHECK_INT(c.dims.block[0], 32); /* block ["TILE", "TILE"] with the tuned TILE */
        CHECK_INT(c.dims.grid[0], 49);  /* ceil(1568 / 32) */
        hn_tk_destroy(t);
        t = NULL;
        hn_backend_destroy(be);
    }
    unlink(best);
    free(best);
    free(path);
}

static void expect_error(const char *text, const char *needle) {
    char *p = tmp_path("train-bad.json");
    hn_err err;
    hn_write_file(p, text, strlen(text), &err);
    hn_tk *t = NULL;
    CHECK_MSG(hn_tk_load(p, NULL, &t, &err) != 0, "%s loaded", text);
    if (!t) CHECK_CONTAINS(err.msg, needle);
    hn_tk_destroy(t);
    unlink(p);
    free(p);
}

static void test_bad_configs(void) {
    expect_error("{\"layers\": []}", "layers: expected an object");
    expect_error("{\"layrs\": {}}", "layrs: unknown key");
    expect_error("{\"layers\": {\"relu\": {\"forward\": 3}}}", "layers.relu.forward: expected an object");
    char *t = xasprintf("{\"layers\": {\"relu\": {\"forward\": {\"file\": \"%s/kernels/activation/relu.cu\", \"kernel\": "
                        "\"relu_grid_stride\", \"block\": [256], \"grid\": [\"ceil_div(m, 256)\"], \"args\": [\"x\", \"y\", "
                        "\"n\"]}}}}",
                        root());
    expect_error(t, "layers.relu.forward.grid[0]: in 'ceil_div(m, 256)': unknown name 'm'");
    free(t);
    t = xasprintf("{\"layers\": {\"relu\": {\"forward\": {\"file\": \"%s/kernels/activation/relu.cu\", \"kernel\": "
                  "\"relu_grid_stride\", \"block\": [256], \"grid\": [1], \"args\": [\"x\", \"out\", \"n\"]}}}}",
                  root());
    expect_error(t, "layers.relu.forward.args[1]: unknown argument 'out'");
    free(t);
    t = xasprintf("{\"layers\": {\"maxpool2d\": {\"forward\": {\"file\": \"%s/kernels/pool2d/pool2d_naive.cu\", \"kernel\": "
                  "\"pool2d_naive\", \"block\": [256], \"grid\": [1], \"args\": [\"in\", \"mode\"]}}}}",
                  root());
    expect_error(t, "'mode' is a string; pass it as a typed expression");
    free(t);
}

int main(void) {
    test_bad_configs();
    test_bind();
    test_tuned();
    test_compile_all("configs/train/default.json");
    test_compile_all("tests/configs/train_emu.json");
    return hn_test_exit();
}
