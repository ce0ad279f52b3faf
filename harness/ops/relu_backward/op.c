/*
 * relu_backward/op.c: the gradient of relu (what torch's autograd gives for
 * y = torch.relu(x) and an upstream gradient dy):
 *
 *   x   (n)  float32   the forward pass's input
 *   dy  (n)  float32   dL/dy
 *   dx  (n)  float32   dx[i] = x[i] > 0 ? dy[i] : 0
 *
 * At x = 0 (and -0) the gradient is 0, torch's convention (its threshold_backward
 * passes dy only where relu's output is above 0); x holds exact zeros at 1
 * element in 8 so every case checks it. dy is standard normal. The reference is
 * exact (dx is dy or 0).
 */
#include "../relu/eltwise.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', NULL, "elements", NULL},
};

enum { B_X, B_DY, B_DX, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(n)"},
    {"dy", HN_DT_F32, HN_BUF_IN, "(n)"},
    {"dx", HN_DT_F32, HN_BUF_OUT, "(n)"},
};

static int rb_shape(const double *p, int64_t *counts, hn_err *err) {
    return eltwise_shape("relu_backward", p, B_COUNT, counts, err);
}

/* One comparison (or multiply by the mask) per element. */
static double rb_flop(const double *p) {
    return p[ELT_N];
}

static double rb_bytes(const double *p) {
    return 4.0 * B_COUNT * p[ELT_N];
}

static void rb_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t n = (int64_t)p[ELT_N];
    eltwise_fill_x(bufs[B_X], n, 1.0f, 1, seed * 2 + 1);
    hn_fill_randn_f32(bufs[B_DY], n, seed * 2 + 2);
}

static void rb_ref(double *out, const float *x, const float *dy, int64_t n) {
    eltwise_relu(out, x, dy, n);
}

static int rb_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                        int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    eltwise_reference(rb_ref, bufs[B_X], bufs[B_DY], (int64_t)p[ELT_N], ELT_RELU_PER_THREAD, &refs[B_DX], threads);
    return 0;
}

static const char *const BENCH[] = {"n=2097152", "n=1000003", NULL};

const hn_op hn_op_relu_backward = {
    .name = "relu_backward",
    .doc = "relu's gradient: dx = dy where x > 0, else 0 (torch's autograd)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = rb_shape,
    .flop = rb_flop,
    .bytes = rb_bytes,
    .dims = eltwise_dims,
    .label = eltwise_label,
    .generate = rb_generate,
    .reference = rb_reference,
};
