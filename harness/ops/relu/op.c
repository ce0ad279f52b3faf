/*
 * relu/op.c: the rectified linear unit, forward (torch.relu, torch.nn.functional.relu):
 *
 *   x  (n)  float32
 *   y  (n)  float32   y[i] = max(x[i], 0)   (0 for -0 too; NaN stays NaN, as torch's)
 *
 * x is standard normal with exact zeros (+0 and -0) at 1 element in 8. The
 * reference (exact: y is x or 0) is fp64 on threads. This folder also holds what
 * the element-wise operators share (eltwise.h).
 */
#include "eltwise.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', NULL, "elements", NULL},
};

enum { B_X, B_Y, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(n)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(n)"},
};

static int relu_shape(const double *p, int64_t *counts, hn_err *err) {
    return eltwise_shape("relu", p, B_COUNT, counts, err);
}

/* One comparison per element. */
static double relu_flop(const double *p) {
    return p[ELT_N];
}

static double relu_bytes(const double *p) {
    return 4.0 * B_COUNT * p[ELT_N];
}

static void relu_generate(const double *p, void *const *bufs, uint64_t seed) {
    eltwise_fill_x(bufs[B_X], (int64_t)p[ELT_N], 1.0f, 1, seed * 2 + 1);
}

static void relu_ref(double *out, const float *x, const float *dy, int64_t n) {
    (void)dy;
    eltwise_relu(out, x, NULL, n);
}

static int relu_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                          int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    eltwise_reference(relu_ref, bufs[B_X], NULL, (int64_t)p[ELT_N], ELT_RELU_PER_THREAD, &refs[B_Y], threads);
    return 0;
}

static const char *const BENCH[] = {"n=2097152", "n=1000003", NULL};

const hn_op hn_op_relu = {
    .name = "relu",
    .doc = "element-wise max(x, 0) (torch.relu)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = relu_shape,
    .flop = relu_flop,
    .bytes = relu_bytes,
    .dims = eltwise_dims,
    .label = eltwise_label,
    .generate = relu_generate,
    .reference = relu_reference,
};
