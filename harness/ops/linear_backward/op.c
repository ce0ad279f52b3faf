/*
 * linear_backward/op.c: the fully connected layer's gradients (PMPP chapter
 * 16's backward pass of the linear layer; what torch's autograd gives for
 * y = torch.nn.functional.linear(x, weight, bias) and an upstream gradient dy):
 *
 *   x        (batch, in_f)   float32   the layer's input, kept from forward
 *   weight   (out_f, in_f)   float32
 *   dy       (batch, out_f)  float32   dL/dy
 *   dx       (batch, in_f)   float32   dL/dx = dy W
 *   dweight  (out_f, in_f)   float32   dL/dW = dy^T x
 *   dbias    (out_f)         float32   dL/db = dy summed over the batch
 *
 *   dx[b][i]      = sum over o < out_f of dy[b][o] * weight[o][i]
 *   dweight[o][i] = sum over b < batch of dy[b][o] * x[b][i]
 *   dbias[o]      = sum over b < batch of dy[b][o]
 *
 * A variant is checked on the outputs its kernel is given, so each gradient can
 * have kernels of its own (kernels/linear/linear_backward_*.cu). Inputs are
 * standard normal. The reference is fp64 (linear_gemm_ref, shared with
 * linear); a case costing more than the budget is checked on seeded samples of
 * whole rows of dx (batch rows) and of dweight (out_f rows), each taking half
 * the budget, and always on all of dbias. Baseline: two cuBLAS SGEMMs and an
 * SGEMV (harness/ops/linear/cublas.c).
 */
#include <stdlib.h>
#include <string.h>

#include "../linear/linear.h"

static const hn_op_param PARAMS[] = {
    {"batch", 'i', NULL, "rows of x, dy and dx (samples)", NULL},
    {"in_f", 'i', NULL, "input features (columns of x, weight, dx, dweight)", NULL},
    {"out_f", 'i', NULL, "output features (rows of weight and dweight, columns of dy)", NULL},
};

enum { B_X, B_WEIGHT, B_DY, B_DX, B_DWEIGHT, B_DBIAS, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(batch, in_f)"},
    {"weight", HN_DT_F32, HN_BUF_IN, "(out_f, in_f)"},
    {"dy", HN_DT_F32, HN_BUF_IN, "(batch, out_f)"},
    {"dx", HN_DT_F32, HN_BUF_OUT, "(batch, in_f)"},
    {"dweight", HN_DT_F32, HN_BUF_OUT, "(out_f, in_f)"},
    {"dbias", HN_DT_F32, HN_BUF_OUT, "(out_f)"},
};

static int lb_shape(const double *p, int64_t *counts, hn_err *err) {
    if (linear_check("linear_backward", p, err) != 0) return -1;
    linear_dims d;
    linear_params(p, &d);
    counts[B_X] = counts[B_DX] = (int64_t)d.batch * d.in_f;
    counts[B_WEIGHT] = counts[B_DWEIGHT] = (int64_t)d.out_f * d.in_f;
    counts[B_DY] = (int64_t)d.batch * d.out_f;
    counts[B_DBIAS] = d.out_f;
    return 0;
}

/* Two GEMMs of batch * in_f * out_f FMAs each, and the column sums of dy. */
static double lb_flop(const double *p) {
    linear_dims d;
    linear_params(p, &d);
    return 4.0 * d.batch * d.in_f * (double)d.out_f + (double)d.batch * d.out_f;
}

/* dx and dweight: a GEMM each; dbias: the column sums of dy. */
static double lb_flop_of(const double *p, int b) {
    linear_dims d;
    linear_params(p, &d);
    return b == B_DBIAS ? (double)d.batch * d.out_f : 2.0 * d.batch * d.in_f * (double)d.out_f;
}

static double lb_bytes(const double *p) {
    linear_dims d;
    linear_params(p, &d);
    return 4.0 * (2.0 * d.batch * d.in_f + 2.0 * d.out_f * d.in_f + (double)d.batch * d.out_f + d.out_f);
}

static int lb_dims(const double *p, int buffer, int64_t dims[4]) {
    linear_dims d;
    linear_params(p, &d);
    switch (buffer) {
    case B_X:
    case B_DX: dims[0] = d.batch, dims[1] = d.in_f; return 2;
    case B_WEIGHT:
    case B_DWEIGHT: dims[0] = d.out_f, dims[1] = d.in_f; return 2;
    case B_DY: dims[0] = d.batch, dims[1] = d.out_f; return 2;
    default: dims[0] = d.out_f; return 1;
    }
}

static void lb_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[B_COUNT];
    if (lb_shape(p, counts, NULL) != 0) return;
    hn_fill_randn_f32(bufs[B_X], counts[B_X], seed * 3 + 1);
    hn_fill_randn_f32(bufs[B_WEIGHT], counts[B_WEIGHT], seed * 3 + 2);
    hn_fill_randn_f32(bufs[B_DY], counts[B_DY], seed * 3 + 3);
}

/* The index and method of a reference holding rows `rows` (NULL: all n_rows)
 * of a (n_rows, cols) output, in order. */
static void set_rows(hn_ref *ref, const int64_t *rows, int64_t n_sel, int64_t n_rows, int64_t cols) {
    if (rows) {
        ref->index = xmalloc(sizeof(int64_t) * (size_t)ref->n);
        for (int64_t r = 0; r < n_sel; r++)
            for (int64_t j = 0; j < cols; j++) ref->index[r * cols + j] = rows[r] * cols + j;
        snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld rows (first, last + random)",
                 (long long)n_sel, (long long)n_rows);
    } else {
        snprintf(ref->method, sizeof ref->method, "full");
    }
}

static int lb_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                        int threads, hn_err *err) {
    (void)err;
    linear_dims d;
    linear_params(p, &d);
    const int batch = d.batch, in_f = d.in_f, out_f = d.out_f;
    const float *x = bufs[B_X], *weight = bufs[B_WEIGHT], *dy = bufs[B_DY];
    const double gemm_flop = 2.0 * batch * in_f * (double)out_f;

    /* dx (batch, in_f) = dy (batch, out_f) W (out_f, in_f), rows of the batch. */
    int64_t n_sel;
    int64_t *rows = linear_sample_rows(batch, gemm_flop / batch, budget_gflop / 2, seed, &n_sel);
    float *a = NULL;
    if (rows) {
        a = xmalloc(sizeof *a * (size_t)(n_sel * out_f));
        for (int64_t r = 0; r < n_sel; r++) memcpy(a + r * out_f, dy + rows[r] * out_f, sizeof *a * (size_t)out_f);
    }
    hn_ref *ref = &refs[B_DX];
    ref->n = n_sel * in_f;
    ref->values = hn_ref_alloc_values(ref->n);
    linear_gemm_ref(ref->values, a ? a : dy, 0, weight, 0, (int)n_sel, in_f, out_f, threads);
    set_rows(ref, rows, n_sel, batch, in_f);
    free(a);
    free(rows);

    /* dweight (out_f, in_f) = dy^T (out_f, batch) x (batch, in_f), rows of out_f:
     * sampled, the multiply takes the gathered columns of dy as rows of dy^T. */
    rows = linear_sample_rows(out_f, gemm_flop / out_f, budget_gflop / 2, seed + 1, &n_sel);
    a = NULL;
    if (rows) {
        a = xmalloc(sizeof *a * (size_t)(n_sel * batch));
        for (int64_t r = 0; r < n_sel; r++)
            for (int b = 0; b < batch; b++) a[r * batch + b] = dy[(int64_t)b * out_f + rows[r]];
    }
    ref = &refs[B_DWEIGHT];
    ref->n = n_sel * in_f;
    ref->values = hn_ref_alloc_values(ref->n);
    if (a)
        linear_gemm_ref(ref->values, a, 0, x, 0, (int)n_sel, in_f, batch, threads);
    else
        linear_gemm_ref(ref->values, dy, 1, x, 0, out_f, in_f, batch, threads);
    set_rows(ref, rows, n_sel, out_f, in_f);
    free(a);
    free(rows);

    /* dbias (out_f): the column sums of dy, all of them (batch * out_f adds). */
    ref = &refs[B_DBIAS];
    ref->n = out_f;
    ref->values = xcalloc((size_t)out_f, sizeof(double));
    for (int b = 0; b < batch; b++)
        for (int o = 0; o < out_f; o++) ref->values[o] += (double)dy[(int64_t)b * out_f + o];
    snprintf(ref->method, sizeof ref->method, "full");
    return 0;
}

static const char *const BENCH[] = {
    "batch=256,in_f=1024,out_f=1024",
    "batch=1024,in_f=512,out_f=256",
    "batch=128,in_f=784,out_f=500",
    NULL,
};

const hn_op hn_op_linear_backward = {
    .name = "linear_backward",
    .doc = "fully connected layer, backward: dx = dy W, dweight = dy^T x, dbias = dy summed over the batch",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = linear_backward_baselines,
    .n_baselines = LINEAR_BACKWARD_N_BASELINES,
    .bench_cases = BENCH,
    .shape = lb_shape,
    .flop = lb_flop,
    .bytes = lb_bytes,
    .flop_of = lb_flop_of,
    .dims = lb_dims,
    .label = linear_label,
    .generate = lb_generate,
    .reference = lb_reference,
};
