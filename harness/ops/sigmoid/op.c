/*
 * sigmoid/op.c: the logistic function, forward (torch.sigmoid):
 *
 *   x  (n)  float32
 *   y  (n)  float32   y[i] = 1 / (1 + exp(-x[i]))
 *
 * x is 4 N(0, 1), so cases reach well into both tails (|x| up to ~20, where
 * y is within 1e-9 of 0 or 1). The reference is fp64 (a vectorized exp, see
 * ../relu/eltwise.h) on threads.
 */
#include "../relu/eltwise.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', NULL, "elements", NULL},
};

enum { B_X, B_Y, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(n)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(n)"},
};

static int sigmoid_shape(const double *p, int64_t *counts, hn_err *err) {
    return eltwise_shape("sigmoid", p, B_COUNT, counts, err);
}

/* exp, add, divide: 3 per element (exp counted as one). */
static double sigmoid_flop(const double *p) {
    return 3.0 * p[ELT_N];
}

static double sigmoid_bytes(const double *p) {
    return 4.0 * B_COUNT * p[ELT_N];
}

static void sigmoid_generate(const double *p, void *const *bufs, uint64_t seed) {
    eltwise_fill_x(bufs[B_X], (int64_t)p[ELT_N], 4.0f, 0, seed * 2 + 1);
}

static void sigmoid_ref(double *out, const float *x, const float *dy, int64_t n) {
    (void)dy;
    eltwise_sigmoid(out, x, NULL, n);
}

static int sigmoid_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                             int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    eltwise_reference(sigmoid_ref, bufs[B_X], NULL, (int64_t)p[ELT_N], ELT_SIGMOID_PER_THREAD, &refs[B_Y], threads);
    return 0;
}

static const char *const BENCH[] = {"n=2097152", "n=1000003", NULL};

const hn_op hn_op_sigmoid = {
    .name = "sigmoid",
    .doc = "element-wise 1 / (1 + exp(-x)) (torch.sigmoid)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = sigmoid_shape,
    .flop = sigmoid_flop,
    .bytes = sigmoid_bytes,
    .dims = eltwise_dims,
    .label = eltwise_label,
    .generate = sigmoid_generate,
    .reference = sigmoid_reference,
};
