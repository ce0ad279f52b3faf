/*
 * linear/op.c: the fully connected layer, forward (PMPP chapter 16's linear
 * layer; torch.nn.functional.linear):
 *
 *   x       (batch, in_f)   float32
 *   weight  (out_f, in_f)   float32
 *   bias    (out_f)         float32
 *   y       (batch, out_f)  float32
 *
 *   y[b][o] = bias[o] + sum over i < in_f of x[b][i] * weight[o][i]   (y = x W^T + b)
 *
 * Inputs are standard normal (so y's scale is sqrt(in_f)). The reference is
 * fp64 (linear_gemm_ref); a case costing more than the budget is checked on a
 * seeded sample of whole rows of y (the first, the last and random ones).
 * Baselines (cublas.c): cuBLAS SGEMM and a rank-1 update for the bias.
 */
#include <stdlib.h>
#include <string.h>

#include "linear.h"

static const hn_op_param PARAMS[] = {
    {"batch", 'i', NULL, "rows of x and y (samples)", NULL},
    {"in_f", 'i', NULL, "input features (columns of x and weight)", NULL},
    {"out_f", 'i', NULL, "output features (rows of weight, columns of y)", NULL},
};

enum { B_X, B_WEIGHT, B_BIAS, B_Y, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(batch, in_f)"},
    {"weight", HN_DT_F32, HN_BUF_IN, "(out_f, in_f)"},
    {"bias", HN_DT_F32, HN_BUF_IN, "(out_f)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(batch, out_f)"},
};

static int linear_shape(const double *p, int64_t *counts, hn_err *err) {
    if (linear_check("linear", p, err) != 0) return -1;
    linear_dims d;
    linear_params(p, &d);
    counts[B_X] = (int64_t)d.batch * d.in_f;
    counts[B_WEIGHT] = (int64_t)d.out_f * d.in_f;
    counts[B_BIAS] = d.out_f;
    counts[B_Y] = (int64_t)d.batch * d.out_f;
    return 0;
}

/* The GEMM (an FMA counts 2) and the bias additions. */
static double linear_flop(const double *p) {
    linear_dims d;
    linear_params(p, &d);
    return 2.0 * d.batch * d.in_f * (double)d.out_f + (double)d.batch * d.out_f;
}

static double linear_bytes(const double *p) {
    linear_dims d;
    linear_params(p, &d);
    return 4.0 * ((double)d.batch * d.in_f + (double)d.out_f * d.in_f + d.out_f + (double)d.batch * d.out_f);
}

static int linear_dims_of(const double *p, int buffer, int64_t dims[4]) {
    linear_dims d;
    linear_params(p, &d);
    switch (buffer) {
    case B_X: dims[0] = d.batch, dims[1] = d.in_f; return 2;
    case B_WEIGHT: dims[0] = d.out_f, dims[1] = d.in_f; return 2;
    case B_BIAS: dims[0] = d.out_f; return 1;
    default: dims[0] = d.batch, dims[1] = d.out_f; return 2;
    }
}

static void linear_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[B_COUNT];
    if (linear_shape(p, counts, NULL) != 0) return;
    hn_fill_randn_f32(bufs[B_X], counts[B_X], seed * 3 + 1);
    hn_fill_randn_f32(bufs[B_WEIGHT], counts[B_WEIGHT], seed * 3 + 2);
    hn_fill_randn_f32(bufs[B_BIAS], counts[B_BIAS], seed * 3 + 3);
}

static int linear_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                            int threads, hn_err *err) {
    (void)err;
    linear_dims d;
    linear_params(p, &d);
    const float *x = bufs[B_X], *weight = bufs[B_WEIGHT], *bias = bufs[B_BIAS];
    hn_ref *ref = &refs[B_Y];
    int64_t n_rows;
    int64_t *rows = linear_sample_rows(d.batch, 2.0 * d.in_f * d.out_f, budget_gflop, seed, &n_rows);
    /* The checked rows of x, where the multiply wants them. */
    float *xs = NULL;
    if (rows) {
        xs = xmalloc(sizeof *xs * (size_t)(n_rows * d.in_f));
        for (int64_t r = 0; r < n_rows; r++)
            memcpy(xs + r * d.in_f, x + rows[r] * d.in_f, sizeof *xs * (size_t)d.in_f);
    }
    ref->n = n_rows * d.out_f;
    ref->values = hn_ref_alloc_values(ref->n);
    linear_gemm_ref(ref->values, xs ? xs : x, 0, weight, 1, (int)n_rows, d.out_f, d.in_f, threads);
    for (int64_t r = 0; r < n_rows; r++)
        for (int o = 0; o < d.out_f; o++) ref->values[r * d.out_f + o] += (double)bias[o];
    linear_ref_rows(ref, rows, n_rows, d.out_f, d.batch);
    free(xs);
    free(rows);
    return 0;
}

static const char *const BENCH[] = {
    "batch=256,in_f=1024,out_f=1024",
    "batch=1024,in_f=512,out_f=256",
    "batch=128,in_f=784,out_f=500",
    NULL,
};

const hn_op hn_op_linear = {
    .name = "linear",
    .doc = "fully connected layer, forward: y = x W^T + b (torch.nn.functional.linear)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = linear_baselines,
    .n_baselines = LINEAR_N_BASELINES,
    .bench_cases = BENCH,
    .shape = linear_shape,
    .flop = linear_flop,
    .bytes = linear_bytes,
    .dims = linear_dims_of,
    .label = linear_label,
    .generate = linear_generate,
    .reference = linear_reference,
};
