/*
 * sigmoid_backward/op.c: the gradient of sigmoid (what torch's autograd gives
 * for y = torch.sigmoid(x) and an upstream gradient dy):
 *
 *   x   (n)  float32   the forward pass's input
 *   dy  (n)  float32   dL/dy
 *   dx  (n)  float32   dx[i] = dy[i] * s * (1 - s),  s = 1 / (1 + exp(-x[i]))
 *
 * x is 4 N(0, 1) (both tails, where 1 - s cancels in float), dy standard
 * normal. The reference is fp64 and computes s (1 - s) as (e s) s with
 * e = exp(-x), which does not cancel; a kernel working in float (as torch
 * does: grad * (1 - y) * y) loses relative accuracy in the tail x >> 0, but not
 * absolute: see configs/sigmoid_backward_sweep.json.
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

static int sb_shape(const double *p, int64_t *counts, hn_err *err) {
    return eltwise_shape("sigmoid_backward", p, B_COUNT, counts, err);
}

/* sigmoid's 3 (exp counted as one), then 1 - s and two multiplies. */
static double sb_flop(const double *p) {
    return 6.0 * p[ELT_N];
}

static double sb_bytes(const double *p) {
    return 4.0 * B_COUNT * p[ELT_N];
}

static void sb_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t n = (int64_t)p[ELT_N];
    eltwise_fill_x(bufs[B_X], n, 4.0f, 0, seed * 2 + 1);
    hn_fill_randn_f32(bufs[B_DY], n, seed * 2 + 2);
}

static void sb_ref(double *out, const float *x, const float *dy, int64_t n) {
    eltwise_sigmoid(out, x, dy, n);
}

static int sb_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                        int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    eltwise_reference(sb_ref, bufs[B_X], bufs[B_DY], (int64_t)p[ELT_N], ELT_SIGMOID_PER_THREAD, &refs[B_DX], threads);
    return 0;
}

static const char *const BENCH[] = {"n=2097152", "n=1000003", NULL};

const hn_op hn_op_sigmoid_backward = {
    .name = "sigmoid_backward",
    .doc = "sigmoid's gradient: dx = dy * s * (1 - s), s = sigmoid(x) (torch's autograd)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = sb_shape,
    .flop = sb_flop,
    .bytes = sb_bytes,
    .dims = eltwise_dims,
    .label = eltwise_label,
    .generate = sb_generate,
    .reference = sb_reference,
};
