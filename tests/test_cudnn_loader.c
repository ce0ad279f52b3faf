/*
 * test_cudnn_loader.c: cuDNN loaded at run time (harness/cuda/cudnn.c), without
 * a GPU:
 *   - where libcudnn.so.9 is installed: every entry point resolved, version 9,
 *     and handle creation failing with a clear reason when no GPU is there (or
 *     succeeding where one is);
 *   - a library that is not there (HARNESS_CUDNN=/nonexistent/...): "cuDNN not
 *     found (...)", every entry point NULL, and the same reason from acquire;
 *   - a library that is not cuDNN (libm), and a cuDNN 8 (a stand-in library
 *     built here whose cudnnGetVersion says 8.9.7): named as such;
 *   - the emulator backend: "cuDNN runs on the cuda backend only";
 *   - the binary has no link dependency on cuDNN (it must start without it);
 *   - how conv2d and pooling cases are posed (descriptors need no GPU): cuDNN's
 *     output sizes against the operators', and the cases declined, with why;
 *   - the cuDNN baselines of conv2d and of its gradients (conv2d_backward_data,
 *     _filter, _bias): both precisions, family cudnn, writing the operator's
 *     output; every baseline name unique across the operators;
 *   - how the gradients' cases are posed (the forward convolution they differ
 *     from): asymmetric padding declined for data and filter, never for bias.
 * Every reason here is what a baseline's `skipped` rows would carry.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda/cudnn.h"
#include "hn_test.h"
#include "ops/conv2d/conv2d_cudnn.h"
#include "ops/op.h"
#include "ops/pool2d/pool2d_cudnn.h"

static const char *tmp_dir(void) {
    const char *t = getenv("HARNESS_TMP");
    return t && *t ? t : "/tmp";
}

/* Loads with HARNESS_CUDNN = name (NULL: unset); 0 or -1 with err. */
static int load_as(const char *name, hn_err *err) {
    hn_cudnn_unload();
    if (name) setenv("HARNESS_CUDNN", name, 1);
    else unsetenv("HARNESS_CUDNN");
    return hn_cudnn_load(err);
}

static void test_installed(void) {
    hn_err err;
    if (load_as(NULL, &err) != 0) {
        /* absent here: the rows would be skipped with this reason */
        printf("cuDNN is not installed here (%s): the resolution test is skipped\n", err.msg);
        CHECK_CONTAINS(err.msg, "cuDNN not found (");
        return;
    }
    CHECK_STR(hn_cudnn_library(), "libcudnn.so.9");
    int n = hn_cudnn_symbol_count(), resolved = 0;
    CHECK(n >= 30);
    for (int i = 0; i < n; i++) {
        if (hn_cudnn_symbol(i)) resolved++;
        else CHECK_MSG(!hn_cudnn_symbol_required(i), "%s not resolved", hn_cudnn_symbol_names[i]);
    }
    CHECK(hn_dnn.cudnnGetVersion && hn_dnn.cudnnConvolutionForward && hn_dnn.cudnnPoolingBackward &&
          hn_dnn.cudnnFindConvolutionBackwardFilterAlgorithm && hn_dnn.cudnnConvolutionBackwardBias &&
          hn_dnn.cudnnOpTensor);
    size_t v = hn_dnn.cudnnGetVersion();
    CHECK_INT(v / 10000, 9);
    printf("cuDNN %zu.%zu.%zu: %d of %d entry points resolved\n", v / 10000, v / 100 % 100, v % 100, resolved, n);
    CHECK_STR(hn_dnn.cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");

    /* a handle needs a GPU */
    cudnnHandle_t h = NULL;
    char why[512];
    int gpu = hn_cuda_available(why, sizeof why);
    int rc = hn_cudnn_handle_create(NULL, &h, &err);
    if (gpu) {
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc == 0) CHECK(hn_dnn.cudnnDestroy(h) == CUDNN_STATUS_SUCCESS);
    } else {
        CHECK(rc != 0 && h == NULL);
        CHECK_CONTAINS(err.msg, "cuDNN could not create a handle: CUDNN_STATUS_");
        printf("without a GPU: %s\n", err.msg);
    }

    /* descriptors need no GPU: the layouts' strides, and the convolution's math type */
    cudnnTensorDescriptor_t t;
    CHECK(hn_dnn.cudnnCreateTensorDescriptor(&t) == CUDNN_STATUS_SUCCESS);
    cudnnDataType_t dt;
    int dims[4], strides[4];
    CHECK(hn_cudnn_tensor4d(t, HN_CUDNN_CHWN, CUDNN_DATA_FLOAT, 2, 3, 5, 7, &err) == 0);
    CHECK(hn_dnn.cudnnGetTensor4dDescriptor(t, &dt, &dims[0], &dims[1], &dims[2], &dims[3], &strides[0], &strides[1],
                                            &strides[2], &strides[3]) == CUDNN_STATUS_SUCCESS);
    CHECK(strides[0] == 1 && strides[1] == 5 * 7 * 2 && strides[2] == 7 * 2 && strides[3] == 2);
    CHECK(hn_cudnn_tensor4d(t, HN_CUDNN_NHWC, CUDNN_DATA_FLOAT, 2, 3, 5, 7, &err) == 0);
    CHECK(hn_dnn.cudnnGetTensor4dDescriptor(t, &dt, &dims[0], &dims[1], &dims[2], &dims[3], &strides[0], &strides[1],
                                            &strides[2], &strides[3]) == CUDNN_STATUS_SUCCESS);
    CHECK(strides[0] == 5 * 7 * 3 && strides[1] == 1 && strides[2] == 7 * 3 && strides[3] == 3);
    CHECK(hn_cudnn_tensor4d(t, HN_CUDNN_NCHW, CUDNN_DATA_FLOAT, 0, 3, 5, 7, &err) != 0);
    CHECK_CONTAINS(err.msg, "cudnnSetTensor4dDescriptor");
    CHECK_CONTAINS(err.msg, "CUDNN_STATUS_BAD_PARAM");
    hn_dnn.cudnnDestroyTensorDescriptor(t);
    cudnnConvolutionDescriptor_t c;
    cudnnMathType_t m;
    CHECK(hn_cudnn_conv_desc(&c, 1, CUDNN_DATA_FLOAT, &err) == 0);
    CHECK(hn_dnn.cudnnGetConvolutionMathType(c, &m) == CUDNN_STATUS_SUCCESS && m == CUDNN_FMA_MATH);
    hn_dnn.cudnnDestroyConvolutionDescriptor(c);
    CHECK(hn_cudnn_conv_desc(&c, 0, CUDNN_DATA_DOUBLE, &err) == 0);
    CHECK(hn_dnn.cudnnGetConvolutionMathType(c, &m) == CUDNN_STATUS_SUCCESS && m == CUDNN_DEFAULT_MATH);
    hn_dnn.cudnnDestroyConvolutionDescriptor(c);
}

/* How cases are posed to cuDNN, which needs no GPU: conv2d's descriptors (the
 * output sizes cuDNN computes against the operator's, and the cases it cannot
 * pose, with their reasons) and pooling's (every layout, odd sizes). */
static void conv_case(double *p, int layout, int n, int fs, int h, int w, int padding, double pad) {
    memset(p, 0, 16 * sizeof *p);
    p[C2_N] = n, p[C2_IN_CH] = 3, p[C2_OUT_CH] = 5, p[C2_FS] = fs, p[C2_H] = h, p[C2_W] = w;
    p[C2_PADDING] = padding, p[C2_PAD] = pad, p[C2_USE_BIAS] = 1, p[C2_LAYOUT] = layout;
}

static void test_describe(void) {
    if (!hn_dnn.cudnnCreateTensorDescriptor) return; /* not installed */
    hn_err err;
    conv2d_dnn_desc dd = {0};
    CHECK(hn_dnn.cudnnCreateTensorDescriptor(&dd.x) == 0 && hn_dnn.cudnnCreateTensorDescriptor(&dd.y) == 0 &&
          hn_dnn.cudnnCreateTensorDescriptor(&dd.bias) == 0 && hn_dnn.cudnnCreateFilterDescriptor(&dd.f) == 0);
    static const struct {
        int layout, n, fs, h, w, padding;
        double pad;
        const char *declined; /* NULL: posed */
    } CONV[] = {
        {0, 2, 3, 7, 9, -1, 0, NULL},   {1, 2, 5, 1, 1, -1, 0, NULL},  {0, 1, 3, 7, 9, 0, 0, NULL},
        {1, 3, 3, 8, 5, 2, 0, NULL},    {0, 1, 4, 9, 9, 1, 0, NULL},   {0, 1, 1, 4, 4, -1, 7, NULL},
        {0, 1, 3, 7, 9, 0, 0.5, NULL},  /* padding 0: the pad value is never read */
        {0, 1, 4, 9, 9, -1, 0, "cuDNN pads symmetrically; this case pads 1 pixel before and 2 after"},
        {1, 1, 2, 9, 9, -1, 0, "pads 0 pixels before and 1 after"},
        {2, 1, 3, 9, 9, -1, 0, "no CHWN tensor format"},
        {0, 1, 3, 9, 9, -1, 0.5, "cuDNN pads with zeros; this case pads with 0.5"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(CONV); i++) {
        double p[16];
        conv_case(p, CONV[i].layout, CONV[i].n, CONV[i].fs, CONV[i].h, CONV[i].w, CONV[i].padding, CONV[i].pad);
        conv2d_dims d;
        conv2d_params(p, &d);
        for (int dbl = 0; dbl < 2; dbl++) {
            int rc = conv2d_cudnn_describe(&dd, &d, dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, &err);
            if (CONV[i].declined) {
                CHECK_MSG(rc != 0, "conv case %zu", i);
                CHECK_CONTAINS(err.msg, CONV[i].declined);
            } else {
                CHECK_MSG(rc == 0, "conv case %zu: %s", i, err.msg);
            }
        }
    }
    /* The gradients' cases, posed as the forward convolution they differ from
     * (NCHW, no bias; the filter baseline poses its case with pad 0 and adds the
     * pad's terms itself). */
    static const struct {
        int fs, h, w, padding;
        const char *declined; /* NULL: posed */
    } BWD[] = {
        {3, 7, 16, -1, NULL}, {5, 19, 33, 1, NULL}, {1, 1, 3, 0, NULL}, {5, 7, 7, 3, NULL}, {1, 1, 1, -1, NULL},
        {2, 9, 9, -1, "cuDNN pads symmetrically; this case pads 0 pixels before and 1 after"},
        {4, 9, 9, -1, "cuDNN pads symmetrically; this case pads 1 pixel before and 2 after"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(BWD); i++) {
        conv2d_bwd_dims b = {.n = 2, .in_ch = 3, .out_ch = 5, .padding = BWD[i].padding};
        conv2d_ref_shape(&b.s, BWD[i].h, BWD[i].w, BWD[i].fs, BWD[i].padding);
        conv2d_dims d;
        conv2d_cudnn_forward_of(&d, &b, 0.0f);
        CHECK(d.layout == 0 && d.use_bias == 0 && d.n == 2 && d.in_ch == 3 && d.out_ch == 5);
        for (int dbl = 0; dbl < 2; dbl++) {
            int rc = conv2d_cudnn_describe(&dd, &d, dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT, &err);
            if (BWD[i].declined) {
                CHECK_MSG(rc != 0, "backward case %zu", i);
                CHECK_CONTAINS(err.msg, BWD[i].declined);
            } else {
                CHECK_MSG(rc == 0, "backward case %zu: %s", i, err.msg);
            }
        }
    }
    if (dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(dd.conv);
    hn_dnn.cudnnDestroyTensorDescriptor(dd.x);
    hn_dnn.cudnnDestroyTensorDescriptor(dd.y);
    hn_dnn.cudnnDestroyTensorDescriptor(dd.bias);
    hn_dnn.cudnnDestroyFilterDescriptor(dd.f);

    pool2d_dnn ps = {0};
    CHECK(hn_dnn.cudnnCreatePoolingDescriptor(&ps.pool) == 0 && hn_dnn.cudnnCreateTensorDescriptor(&ps.x) == 0 &&
          hn_dnn.cudnnCreateTensorDescriptor(&ps.y) == 0);
    static const int POOL[][6] = {/* n, channels, h, w, k, mode */
                                  {1, 1, 1, 1, 1, P2_MAX}, {2, 3, 7, 11, 3, P2_MAX}, {3, 16, 65, 64, 5, P2_AVG},
                                  {1, 2, 9, 9, 9, P2_AVG}, {2, 1, 32, 31, 2, P2_MAX}};
    for (size_t i = 0; i < HN_ARRAY_LEN(POOL); i++)
        for (int layout = P2_NCHW; layout <= P2_CHWN; layout++) {
            hn_workload w;
            memset(&w, 0, sizeof w);
            w.params[P2_N] = POOL[i][0], w.params[P2_CHANNELS] = POOL[i][1], w.params[P2_H] = POOL[i][2];
            w.params[P2_W] = POOL[i][3], w.params[P2_K] = POOL[i][4], w.params[P2_MODE] = POOL[i][5];
            w.params[P2_LAYOUT] = layout;
            char what[96];
            CHECK_MSG(pool2d_dnn_describe(&ps, &w, "pool2d", what, sizeof what, &err) == 0, "pool case %zu %s: %s", i,
                      pool2d_layout_names[layout], err.msg);
            CHECK_CONTAINS(what, pool2d_layout_names[layout]);
        }
    hn_dnn.cudnnDestroyPoolingDescriptor(ps.pool);
    hn_dnn.cudnnDestroyTensorDescriptor(ps.x);
    hn_dnn.cudnnDestroyTensorDescriptor(ps.y);
}

static void test_missing(void) {
    hn_err err;
    CHECK(load_as("/nonexistent/libcudnn.so.9", &err) != 0);
    CHECK_CONTAINS(err.msg, "cuDNN not found (/nonexistent/libcudnn.so.9");
    for (int i = 0; i < hn_cudnn_symbol_count(); i++) CHECK(hn_cudnn_symbol(i) == NULL);
    CHECK_STR(hn_cudnn_library(), "");
    /* asked again: the same answer, without trying again */
    hn_err again;
    CHECK(hn_cudnn_load(&again) != 0);
    CHECK_STR(again.msg, err.msg);
    cudnnHandle_t h;
    CHECK(hn_cudnn_handle_create(NULL, &h, &again) != 0);
    CHECK_STR(again.msg, err.msg);
}

static void test_not_cudnn(void) {
    hn_err err;
    CHECK(load_as("libm.so.6", &err) != 0);
    CHECK_STR(err.msg, "libm.so.6 is not a usable cuDNN: it lacks cudnnGetVersion");
}

/* A library whose cudnnGetVersion says 8.9.7 (cuDNN 8's encoding). */
static void test_old_version(void) {
    char *src = xasprintf("%s/hn_fake_dnn8.c", tmp_dir());
    char *lib = xasprintf("%s/hn_fake_dnn8.so", tmp_dir());
    const char *text = "#include <stddef.h>\nsize_t cudnnGetVersion(void) { return 8907; }\n";
    hn_err err;
    CHECK(hn_mkdirs(tmp_dir(), &err) == 0);
    CHECK(hn_write_file(src, text, strlen(text), &err) == 0);
    char *cmd = xasprintf("cc -shared -fPIC -o '%s' '%s' 2>/dev/null", lib, src);
    if (system(cmd) != 0) {
        printf("no C compiler to build a stand-in cuDNN 8: the version test is skipped\n");
    } else {
        CHECK(load_as(lib, &err) != 0);
        char *want = xasprintf("cuDNN 8.9.7 found (%s); the harness needs cuDNN 9", lib);
        CHECK_STR(err.msg, want);
        free(want);
    }
    unlink(src);
    unlink(lib);
    free(cmd);
    free(src);
    free(lib);
}

static void test_emulator_backend(void) {
    hn_backend *be = NULL;
    hn_err err;
    hn_backend_opts o = {.emu_threads = 1};
    CHECK(hn_backend_emu_create(&o, &be, &err) == 0);
    if (!be) return;
    cudnnHandle_t h;
    CHECK(hn_cudnn_acquire(be, &h, &err) != 0);
    CHECK_STR(err.msg, "cuDNN runs on the cuda backend only");
    hn_backend_destroy(be);
}

/* The harness must start where cuDNN is absent: nothing of it in NEEDED. */
static void test_no_link_dependency(void) {
    const char *bin = getenv("HARNESS_BIN");
    if (!bin || !*bin) return;
    char *cmd = xasprintf("readelf -d '%s' 2>/dev/null | grep NEEDED", bin);
    hn_sb out;
    hn_sb_init(&out);
    FILE *f = popen(cmd, "r");
    if (f) {
        char buf[512];
        while (fgets(buf, sizeof buf, f)) hn_sb_adds(&out, buf);
        pclose(f);
    }
    if (out.len == 0) {
        printf("readelf unavailable: the link-dependency test is skipped\n");
    } else {
        CHECK_CONTAINS(out.buf, "libc.so");
        CHECK_MSG(!strstr(out.buf, "cudnn"), "the binary links cuDNN:\n%s", out.buf);
    }
    hn_sb_free(&out);
    free(cmd);
}

static void test_conv2d_baselines(void) {
    const hn_op *op = hn_op_find("conv2d");
    CHECK(op != NULL);
    if (!op) return;
    int floats = 0, doubles = 0;
    for (int b = 0; b < op->n_baselines; b++) {
        const hn_op_baseline *bl = &op->baselines[b];
        if (strcmp(bl->family, "cudnn") != 0) continue;
        floats += strcmp(bl->precision, "float") == 0;
        doubles += strcmp(bl->precision, "double") == 0;
        CHECK(hn_op_baseline_writes(op, bl, hn_op_buffer_index(op, "out")));
        CHECK(bl->open && bl->close && bl->prepare && bl->issue && bl->release);
    }
    CHECK_INT(floats, 1);
    CHECK_INT(doubles, 1);
    /* cuBLAS first, as the charts take the first float baseline */
    CHECK_STR(op->baselines[0].family, "cublas");
}

/* The gradients' cuDNN baselines: a float and a double one each, family cudnn,
 * checked on the operator's one output. */
static void test_backward_baselines(void) {
    static const struct {
        const char *op, *output, *name;
    } OPS[] = {
        {"conv2d_backward_data", "din", "cudnn_conv_bwd_data"},
        {"conv2d_backward_filter", "dfilter", "cudnn_conv_bwd_filter"},
        {"conv2d_backward_bias", "dbias", "cudnn_conv_bwd_bias"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(OPS); i++) {
        const hn_op *op = hn_op_find(OPS[i].op);
        CHECK_MSG(op != NULL, "%s", OPS[i].op);
        if (!op) continue;
        CHECK_INT(op->n_baselines, 2);
        int floats = 0, doubles = 0;
        for (int b = 0; b < op->n_baselines; b++) {
            const hn_op_baseline *bl = &op->baselines[b];
            CHECK_STR(bl->family, "cudnn");
            CHECK_MSG(strncmp(bl->name, OPS[i].name, strlen(OPS[i].name)) == 0, "%s", bl->name);
            floats += strcmp(bl->precision, "float") == 0;
            doubles += strcmp(bl->precision, "double") == 0;
            CHECK(hn_op_baseline_writes(op, bl, hn_op_buffer_index(op, OPS[i].output)));
            CHECK(bl->open && bl->close && bl->prepare && bl->issue && bl->release);
        }
        CHECK_INT(floats, 1);
        CHECK_INT(doubles, 1);
        CHECK_STR(op->baselines[0].name, OPS[i].name); /* the float one first: the charts take it */
    }
}

/* A baseline's name is its rows' variant name: unique across every operator, so
 * that a name says which library call was measured. */
static void test_baseline_names_unique(void) {
    int n = 0;
    for (int i = 0; i < hn_op_count(); i++) {
        const hn_op *a = hn_op_at(i);
        for (int b = 0; b < a->n_baselines; b++, n++)
            for (int j = i; j < hn_op_count(); j++) {
                const hn_op *o = hn_op_at(j);
                for (int c = j == i ? b + 1 : 0; c < o->n_baselines; c++)
                    CHECK_MSG(strcmp(a->baselines[b].name, o->baselines[c].name) != 0, "%s: in %s and %s",
                              a->baselines[b].name, a->name, o->name);
            }
    }
    CHECK(n >= 10);
}

int main(void) {
    test_missing();
    test_not_cudnn();
    test_old_version();
    test_installed(); /* last of the loads: leaves the real library loaded */
    test_describe();
    test_emulator_backend();
    test_no_link_dependency();
    test_conv2d_baselines();
    test_backward_baselines();
    test_baseline_names_unique();
    return hn_test_exit();
}
