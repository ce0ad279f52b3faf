/*
 * pool2d_backward/op.c: the gradient of pool2d (harness/ops/pool2d/) with
 * respect to its input: given dout = dL/dout, din = dL/din.
 *
 *   in      (n, channels, h, w)    float32  the forward input (generated)
 *   argmax  (n, channels, oh, ow)  int32    the forward's argmax of `in`, computed
 *                                           by the generator with pool2d's own
 *                                           reference code (in both modes)
 *   dout    (n, channels, oh, ow)  float32  generated
 *   din     (n, channels, h, w)    float32  the output
 *
 *   max: din[b][c][y][x] = dout[b][c][y/k][x/k] where y * w + x is
 *        argmax[b][c][y/k][x/k], else 0;
 *   avg: din[b][c][y][x] = dout[b][c][y/k][x/k] / k^2;
 * and 0 in the last h % k rows and w % k columns, which no window covers.
 * Windows do not overlap (stride k), so every input element gets the gradient
 * of one output element at most: nothing is summed. This is torch's autograd of
 * max_pool2d(in, k) / avg_pool2d(in, k) (stride k, no padding, ceil_mode False)
 * with grad_output dout. `layout` orders every tensor as in pool2d.
 *
 * The reference is complete and fp64 (max: exact; avg: dout / k^2 in double),
 * one input row at a time from the output row above it. It fails when an
 * argmax is not a position in its own window (the generator's always are).
 *
 * Baseline (cudnn.c): cudnnPoolingBackward, which takes the forward's input and
 * output rather than the argmax (it finds each maximum again).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "ops/pool2d/pool2d.h"

static const char *const OP = "pool2d_backward";

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(n, channels, h, w) in `layout` order: the forward input"},
    {"argmax", HN_DT_I32, HN_BUF_IN, "(n, channels, h / k, w / k) in `layout` order: the forward argmax of in"},
    {"dout", HN_DT_F32, HN_BUF_IN, "(n, channels, h / k, w / k) in `layout` order: the gradient of out"},
    {"din", HN_DT_F32, HN_BUF_OUT, "(n, channels, h, w) in `layout` order: the gradient of in"},
};

static int bwd_shape(const double *p, int64_t *counts, hn_err *err) {
    pool2d_dims d;
    int64_t n_in, n_out;
    if (pool2d_decode(OP, p, &d, &n_in, &n_out, err) != 0) return -1;
    counts[P2B_IN] = counts[P2B_DIN] = n_in;
    counts[P2B_ARGMAX] = counts[P2B_DOUT] = n_out;
    return 0;
}

/* One operation per input element under a window: a selection (max) or a
 * scaling (avg). */
static double bwd_flop(const double *p) {
    pool2d_dims d;
    if (pool2d_decode(OP, p, &d, NULL, NULL, NULL) != 0) return 0;
    return (double)d.n * d.channels * d.oh * d.ow * d.k * d.k;
}

/* dout read (and argmax in max mode), din written; the forward input is not
 * needed. */
static double bwd_bytes(const double *p) {
    pool2d_dims d;
    if (pool2d_decode(OP, p, &d, NULL, NULL, NULL) != 0) return 0;
    const double outs = (double)d.n * d.channels * d.oh * d.ow;
    return 4.0 * ((double)d.n * d.channels * d.h * d.w + outs * (d.mode == P2_MAX ? 2 : 1));
}

static int bwd_dims(const double *p, int buffer, int64_t dims[4]) {
    pool2d_dims d;
    pool2d_decode(OP, p, &d, NULL, NULL, NULL);
    return buffer == P2B_IN || buffer == P2B_DIN ? pool2d_layout_dims(&d, d.h, d.w, dims)
                                                 : pool2d_layout_dims(&d, d.oh, d.ow, dims);
}

typedef struct {
    const pool2d_dims *d;
    const float *in, *dout;
    int32_t *argmax;
    double *din;
    _Atomic int64_t hits; /* max: argmax elements found in their windows */
} bwd_job;

static void argmax_part(void *ctx, int64_t begin, int64_t end) {
    bwd_job *j = ctx;
    pool2d_forward_rows(j->d, j->in, NULL, NULL, j->argmax, begin, end);
}

/* The same seed as pool2d's input, so a case's `in` is pool2d's. */
static void bwd_generate(const double *p, void *const *bufs, uint64_t seed) {
    pool2d_dims d;
    int64_t n_out;
    pool2d_decode(OP, p, &d, NULL, &n_out, NULL);
    pool2d_fill_input(&d, bufs[P2B_IN], seed * 2 + 1);
    pool2d_dims as_max = d;
    as_max.mode = P2_MAX;
    bwd_job job = {&as_max, bufs[P2B_IN], NULL, bufs[P2B_ARGMAX], NULL, 0};
    hn_ref_parallel((int64_t)d.outer * d.oh, 1 + ((int64_t)1 << 16) / ((int64_t)d.k * d.w * d.inner), 0, argmax_part,
                    &job);
    hn_fill_randn_f32(bufs[P2B_DOUT], n_out, seed * 2 + 2);
}

/* The din rows under output rows [begin, end), r = o * oh + oy: input rows oy * k
 * .. oy * k + k - 1 of plane o, contiguous in every layout (and, under the last
 * output row of a plane, the h % k rows no window covers). Max: every
 * din element of a window compares its plane position with the window's argmax
 * and takes the gradient where they match, 0 elsewhere (no branch on the data,
 * vectorized); the matches are counted, so the caller knows whether every
 * argmax was a position in its own window. Avg: dout / k^2 of each output,
 * repeated over its window. The loops are in din_rows.h, once per instruction
 * set. */
typedef int32_t b_v8i __attribute__((vector_size(32)));
typedef float b_v8f __attribute__((vector_size(32)));
typedef double b_v8d __attribute__((vector_size(64)));
typedef long long b_v8l __attribute__((vector_size(64)));

#if defined(__GNUC__) && defined(__x86_64__)
#define B_X86 1
#define B_FN(name) name##_avx512
#define B_TARGET __attribute__((target("avx512f")))
#include "din_rows.h"
#undef B_FN
#undef B_TARGET
#define B_FN(name) name##_avx2
#define B_TARGET __attribute__((target("avx2")))
#include "din_rows.h"
#undef B_FN
#undef B_TARGET
#endif
#define B_FN(name) name##_generic
#define B_TARGET
#include "din_rows.h"
#undef B_FN
#undef B_TARGET

static void din_part(void *ctx, int64_t begin, int64_t end) {
    bwd_job *j = ctx;
    const pool2d_dims *d = j->d;
    const int64_t len = (int64_t)d->w * d->inner, covered = (int64_t)d->ow * d->k * d->inner;
    int32_t *aexp = xmalloc(sizeof(int32_t) * (size_t)covered);
    double *gexp = xmalloc(sizeof(double) * (size_t)(covered > len ? covered : len));
    int64_t hits;
#if defined(B_X86)
    if (__builtin_cpu_supports("avx512f"))
        hits = din_rows_avx512(d, j->dout, j->argmax, j->din, begin, end, aexp, gexp);
    else if (__builtin_cpu_supports("avx2"))
        hits = din_rows_avx2(d, j->dout, j->argmax, j->din, begin, end, aexp, gexp);
    else
#endif
        hits = din_rows_generic(d, j->dout, j->argmax, j->din, begin, end, aexp, gexp);
    free(aexp), free(gexp);
    atomic_fetch_add(&j->hits, hits);
}

/* The first argmax element that is not a position in its own window, or -1. */
static int64_t argmax_outside(const pool2d_dims *d, const int32_t *argmax) {
    int64_t e = 0;
    for (int64_t o = 0; o < d->outer; o++)
        for (int oy = 0; oy < d->oh; oy++)
            for (int ox = 0; ox < d->ow; ox++)
                for (int i = 0; i < d->inner; i++, e++) {
                    const int32_t a = argmax[e];
                    if (a < 0 || a / d->w / d->k != oy || a % d->w / d->k != ox || a / d->w >= d->h) return e;
                }
    return -1;
}

static int bwd_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                         int threads, hn_err *err) {
    (void)budget_gflop, (void)seed; /* always complete: it costs a write of din */
    pool2d_dims d;
    int64_t n_in, n_out;
    if (pool2d_decode(OP, p, &d, &n_in, &n_out, err) != 0) return -1;
    hn_ref *din = &refs[P2B_DIN];
    bwd_job job = {&d, bufs[P2B_IN], bufs[P2B_DOUT], bufs[P2B_ARGMAX], hn_ref_alloc_values(n_in), 0};
    hn_ref_parallel((int64_t)d.outer * d.oh, 1 + ((int64_t)1 << 16) / ((int64_t)d.k * d.w * d.inner), threads, din_part,
                    &job);
    if (d.mode == P2_MAX && atomic_load(&job.hits) != n_out) {
        /* some argmax is not in its window: say which */
        hn_ref_values_free(job.din);
        int64_t e = argmax_outside(&d, job.argmax);
        return hn_errf(err, "%s: argmax element %lld = %d is not a position in its own %dx%d window", OP,
                       (long long)e, e >= 0 ? job.argmax[e] : -1, d.k, d.k);
    }
    din->n = n_in;
    din->values = job.din;
    snprintf(din->method, sizeof din->method, "full");
    return 0;
}

static const char *const BENCH[] = {
    "n=8,channels=64,h=128,w=128,k=2",
    "n=8,channels=64,h=127,w=129,k=3,mode=avg",
    "n=8,channels=64,h=128,w=128,k=2,layout=NHWC",
    NULL,
};

const hn_op hn_op_pool2d_backward = {
    .name = "pool2d_backward",
    .doc = "the gradient of pool2d (max: to each argmax; avg: dout / k^2 over the window), NCHW/NHWC/CHWN",
    .params = pool2d_param_table,
    .n_params = P2_N_PARAMS,
    .buffers = BUFFERS,
    .n_buffers = P2B_COUNT,
    .baselines = pool2d_backward_baselines,
    .n_baselines = POOL2D_BACKWARD_N_BASELINES,
    .bench_cases = BENCH,
    .shape = bwd_shape,
    .flop = bwd_flop,
    .bytes = bwd_bytes,
    .dims = bwd_dims,
    .label = pool2d_case_label,
    .generate = bwd_generate,
    .reference = bwd_reference,
};
