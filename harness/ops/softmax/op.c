/*
 * softmax/op.c: softmax over the last dimension, forward (torch.softmax(x, -1)):
 * the row operation of attention and of every classifier's output layer.
 *
 *   x  (rows, cols)  float32
 *   y  (rows, cols)  float32   y[r][c] = exp(x[r][c] - m_r) / sum_c' exp(x[r][c'] - m_r),
 *                              m_r = max_c x[r][c]
 *
 * x is 3 N(0, 1) plus a per-row offset cycling through -96, 96, -32, 32 (row 0
 * first), as softmax_cross_entropy's logits: exp of a row's values overflows
 * float (e^96 > FLT_MAX) or underflows without the max subtracted, so only a
 * numerically stable kernel (two passes, or the online max-and-sum of flash
 * attention) passes. The reference is fp64 (../relu/eltwise.h's vectorized exp)
 * on threads over blocks of rows.
 */
#include <stdlib.h>

#include "../relu/eltwise.h"

static const hn_op_param PARAMS[] = {
    {"rows", 'i', NULL, "rows (softmax is taken over each)", NULL},
    {"cols", 'i', NULL, "columns (the softmax dimension)", NULL},
};

enum { P_ROWS, P_COLS };
enum { B_X, B_Y };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(rows, cols)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(rows, cols)"},
};

static int softmax_shape(const double *p, int64_t *counts, hn_err *err) {
    int64_t n;
    if (hn_op_check_2d("softmax", PARAMS, p, P_ROWS, P_COLS, &n, err) != 0) return -1;
    counts[B_X] = counts[B_Y] = n;
    return 0;
}

/* Per element: the max, the subtraction, exp (counted as one), the sum and the
 * scaling. */
static double softmax_flop(const double *p) {
    return 5.0 * p[P_ROWS] * p[P_COLS];
}

static double softmax_bytes(const double *p) {
    return 8.0 * p[P_ROWS] * p[P_COLS];
}

static int softmax_dims(const double *p, int buffer, int64_t dims[4]) {
    (void)buffer;
    dims[0] = (int64_t)p[P_ROWS], dims[1] = (int64_t)p[P_COLS];
    return 2;
}

static void softmax_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "%dx%d", (int)p[P_ROWS], (int)p[P_COLS]);
}

static void softmax_generate(const double *p, void *const *bufs, uint64_t seed) {
    static const float OFFSETS[4] = {-96.0f, 96.0f, -32.0f, 32.0f};
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    float *x = bufs[B_X];
    hn_fill_randn_f32(x, rows * cols, seed * 2 + 1);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) x[r * cols + c] = 3.0f * x[r * cols + c] + OFFSETS[r % 4];
}

typedef struct {
    const float *x;
    double *y;
    int64_t cols;
} softmax_job;

/* Rows [begin, end): per row the max (in float), exp(x - max) and its sum in one
 * pass (eltwise_exp_sum), then the scaling. */
static void softmax_rows(void *ctx, int64_t begin, int64_t end) {
    const softmax_job *j = ctx;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * j->cols;
        double *y = j->y + r * j->cols;
        const float m = eltwise_max(x, j->cols);
        const double s = eltwise_exp_sum(y, x, m, j->cols);
        eltwise_scale(y, y, 1.0 / s, j->cols);
    }
}

static int softmax_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                             int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    hn_ref *ref = &refs[B_Y];
    ref->n = rows * cols;
    ref->values = hn_ref_alloc_values(ref->n);
    snprintf(ref->method, sizeof ref->method, "full");
    softmax_job job = {bufs[B_X], ref->values, cols};
    /* a thread takes 2^18 elements at least (0.2 ms of exp) */
    hn_ref_parallel(rows, 1 + ((int64_t)1 << 18) / cols, threads, softmax_rows, &job);
    return 0;
}

static const char *const BENCH[] = {"rows=1024,cols=1000", "rows=4096,cols=257", "rows=64,cols=32000", NULL};

const hn_op hn_op_softmax = {
    .name = "softmax",
    .doc = "softmax over the last dimension, forward (torch.softmax(x, -1))",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = softmax_shape,
    .flop = softmax_flop,
    .bytes = softmax_bytes,
    .dims = softmax_dims,
    .label = softmax_label,
    .generate = softmax_generate,
    .reference = softmax_reference,
};
