/*
 * pool2d/op.c: 2D pooling, forward: PMPP chapter 16's poolingLayer_forward
 * (max or average over k x k windows, stride k, no padding) with a batch, the
 * position of each maximum, and three memory layouts.
 *
 *   in      (n, channels, h, w)    float32
 *   out     (n, channels, oh, ow)  float32, oh = h / k, ow = w / k (rounded down)
 *   argmax  (n, channels, oh, ow)  int32
 *
 *   max: out[b][c][i][j] = max over p, q < k of in[b][c][i*k + p][j*k + q],
 *        argmax = (i*k + p) * w + (j*k + q) of that maximum (its position in the
 *        input plane), the first in row-major (p, q) order on ties; a NaN wins
 *        (torch's rule). Exactly torch.nn.functional.max_pool2d(in, k,
 *        return_indices=True) (stride k, ceil_mode False).
 *   avg: out = the window's sum / k^2, torch.nn.functional.avg_pool2d(in, k).
 *        argmax is neither written by the kernels nor checked (its reference has
 *        no elements).
 *
 * The last h % k rows and w % k columns are in no window. `layout` orders in,
 * out and argmax in memory (NCHW, NHWC or CHWN); argmax values are plane
 * positions y * w + x in every layout. The reference (ref.c) is complete, fp64
 * for out and exact for argmax. Baseline (cudnn.c): cudnnPoolingForward, checked
 * on out only (cuDNN gives no argmax).
 */
#include <stdlib.h>
#include <string.h>

#include "pool2d.h"

const char *const pool2d_mode_names[] = {"max", "avg", NULL};
const char *const pool2d_layout_names[] = {"NCHW", "NHWC", "CHWN", NULL};

const hn_op_param pool2d_param_table[P2_N_PARAMS] = {
    {"n", 'i', "1", "images in the batch", NULL},
    {"channels", 'i', NULL, "channels (feature maps)", NULL},
    {"h", 'i', "img_size", "image height", NULL},
    {"w", 'i', "img_size", "image width", NULL},
    {"k", 'i', NULL, "window height and width, and the stride", NULL},
    {"mode", 'c', "\"max\"", "max or average pooling", pool2d_mode_names},
    {"layout", 'c', "\"NCHW\"", "memory order of every tensor", pool2d_layout_names},
};

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(n, channels, h, w) in `layout` order"},
    {"out", HN_DT_F32, HN_BUF_OUT, "(n, channels, h / k, w / k) in `layout` order"},
    {"argmax", HN_DT_I32, HN_BUF_OUT, "(n, channels, h / k, w / k) in `layout` order: y * w + x of each maximum"},
};

int pool2d_decode(const char *op, const double *p, pool2d_dims *d, int64_t *n_in, int64_t *n_out, hn_err *err) {
    static const int POS[] = {P2_N, P2_CHANNELS, P2_H, P2_W, P2_K};
    for (size_t i = 0; i < HN_ARRAY_LEN(POS); i++)
        if (!(p[POS[i]] >= 1 && p[POS[i]] <= 1 << 30))
            return hn_errf(err, "%s: %s = %g must be between 1 and 2^30", op, pool2d_param_table[POS[i]].name,
                           p[POS[i]]);
    if (!(p[P2_MODE] == P2_MAX || p[P2_MODE] == P2_AVG))
        return hn_errf(err, "%s: mode = %g is not one of max (0), avg (1)", op, p[P2_MODE]);
    if (!(p[P2_LAYOUT] >= P2_NCHW && p[P2_LAYOUT] <= P2_CHWN && p[P2_LAYOUT] == (int)p[P2_LAYOUT]))
        return hn_errf(err, "%s: layout = %g is not one of NCHW (0), NHWC (1), CHWN (2)", op, p[P2_LAYOUT]);
    d->n = (int)p[P2_N];
    d->channels = (int)p[P2_CHANNELS];
    d->h = (int)p[P2_H];
    d->w = (int)p[P2_W];
    d->k = (int)p[P2_K];
    d->mode = (int)p[P2_MODE];
    d->layout = (int)p[P2_LAYOUT];
    if (d->k > d->h || d->k > d->w)
        return hn_errf(err, "%s: k = %d is larger than %s = %d (a %dx%d window does not fit a %dx%d image)", op, d->k,
                       d->k > d->h ? "h" : "w", d->k > d->h ? d->h : d->w, d->k, d->k, d->h, d->w);
    d->oh = d->h / d->k;
    d->ow = d->w / d->k;
    d->outer = d->layout == P2_NCHW ? d->n * d->channels : d->layout == P2_NHWC ? d->n : d->channels;
    d->inner = d->layout == P2_NCHW ? 1 : d->layout == P2_NHWC ? d->channels : d->n;
    const int64_t planes = (int64_t)d->n * d->channels, in = planes * d->h * d->w;
    if (in > ((int64_t)1 << 31) - 1)
        return hn_errf(err, "%s: in would have %lld elements (n * channels * h * w = %d * %d * %d * %d, more than "
                            "2^31-1; the kernels index with int)",
                       op, (long long)in, d->n, d->channels, d->h, d->w);
    if (n_in) *n_in = in;
    if (n_out) *n_out = planes * d->oh * d->ow;
    return 0;
}

int pool2d_layout_dims(const pool2d_dims *d, int64_t hh, int64_t ww, int64_t dims[4]) {
    switch (d->layout) {
    case P2_NHWC: dims[0] = d->n, dims[1] = hh, dims[2] = ww, dims[3] = d->channels; break;
    case P2_CHWN: dims[0] = d->channels, dims[1] = hh, dims[2] = ww, dims[3] = d->n; break;
    default: dims[0] = d->n, dims[1] = d->channels, dims[2] = hh, dims[3] = ww; break;
    }
    return 4;
}

void pool2d_case_label(const double *p, char *buf, size_t size) {
    pool2d_dims d;
    if (pool2d_decode("pool2d", p, &d, NULL, NULL, NULL) != 0) {
        snprintf(buf, size, "?");
        return;
    }
    char extra[64] = "";
    size_t k = 0;
    if (d.n != 1) k += (size_t)snprintf(extra + k, sizeof extra - k, ", n:%d", d.n);
    if (d.layout != P2_NCHW) snprintf(extra + k, sizeof extra - k, ", %s", pool2d_layout_names[d.layout]);
    snprintf(buf, size, "%dx%dx%d, k:%d, %s%s", d.h, d.w, d.channels, d.k, pool2d_mode_names[d.mode], extra);
}

static int pool2d_shape(const double *p, int64_t *counts, hn_err *err) {
    pool2d_dims d;
    int64_t n_in, n_out;
    if (pool2d_decode("pool2d", p, &d, &n_in, &n_out, err) != 0) return -1;
    counts[P2F_IN] = n_in;
    counts[P2F_OUT] = counts[P2F_ARGMAX] = n_out;
    return 0;
}

/* One operation per window element: a comparison (max) or an addition (avg);
 * the division of avg is not counted. */
static double pool2d_flop(const double *p) {
    pool2d_dims d;
    if (pool2d_decode("pool2d", p, &d, NULL, NULL, NULL) != 0) return 0;
    return (double)d.n * d.channels * d.oh * d.ow * d.k * d.k;
}

/* The input elements under some window, read once; out written; argmax written
 * in max mode. */
static double pool2d_bytes(const double *p) {
    pool2d_dims d;
    if (pool2d_decode("pool2d", p, &d, NULL, NULL, NULL) != 0) return 0;
    const double outs = (double)d.n * d.channels * d.oh * d.ow;
    return 4.0 * (outs * d.k * d.k + outs * (d.mode == P2_MAX ? 2 : 1));
}

static int pool2d_dims_of(const double *p, int buffer, int64_t dims[4]) {
    pool2d_dims d;
    pool2d_decode("pool2d", p, &d, NULL, NULL, NULL);
    return buffer == P2F_IN ? pool2d_layout_dims(&d, d.h, d.w, dims) : pool2d_layout_dims(&d, d.oh, d.ow, dims);
}

static void pool2d_generate(const double *p, void *const *bufs, uint64_t seed) {
    pool2d_dims d;
    pool2d_decode("pool2d", p, &d, NULL, NULL, NULL);
    pool2d_fill_input(&d, bufs[P2F_IN], seed * 2 + 1);
    pool2d_plant_ties(&d, bufs[P2F_IN]);
}

typedef struct {
    const pool2d_dims *d;
    const float *in;
    double *out, *argmax;
} fwd_job;

static void fwd_part(void *ctx, int64_t begin, int64_t end) {
    fwd_job *j = ctx;
    pool2d_forward_rows(j->d, j->in, j->out, j->argmax, NULL, begin, end);
}

static int pool2d_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                            int threads, hn_err *err) {
    (void)budget_gflop, (void)seed; /* always complete: it costs a read of the input */
    pool2d_dims d;
    int64_t n_out;
    if (pool2d_decode("pool2d", p, &d, NULL, &n_out, err) != 0) return -1;
    hn_ref *out = &refs[P2F_OUT], *am = &refs[P2F_ARGMAX];
    out->n = n_out;
    out->values = hn_ref_alloc_values(n_out);
    snprintf(out->method, sizeof out->method, "full");
    fwd_job job = {&d, bufs[P2F_IN], out->values, NULL};
    if (d.mode == P2_MAX) job.argmax = am->values = hn_ref_alloc_values(n_out);
    /* rows of ow * inner outputs; a thread takes at least ~64k input elements */
    const int64_t in_per_row = (int64_t)d.k * d.w * d.inner;
    hn_ref_parallel((int64_t)d.outer * d.oh, 1 + ((int64_t)1 << 16) / in_per_row, threads, fwd_part, &job);
    if (d.mode == P2_MAX) {
        am->n = n_out;
        snprintf(am->method, sizeof am->method, "full");
    } else {
        /* Nothing to check: an empty sample (index not NULL, so a saved
         * reference is an empty array rather than a full one). */
        am->n = 0;
        am->values = xmalloc(sizeof(double));
        am->index = xmalloc(sizeof(int64_t));
        snprintf(am->method, sizeof am->method, "not checked (average pooling has no argmax)");
    }
    return 0;
}

static const char *const BENCH[] = {
    "n=8,channels=64,h=128,w=128,k=2",
    "n=8,channels=64,h=127,w=129,k=3,mode=avg",
    "n=8,channels=64,h=128,w=128,k=2,layout=NHWC",
    NULL,
};

const hn_op hn_op_pool2d = {
    .name = "pool2d",
    .doc = "2D max or average pooling, forward: window and stride k, a batch, the argmax, NCHW/NHWC/CHWN",
    .params = pool2d_param_table,
    .n_params = P2_N_PARAMS,
    .buffers = BUFFERS,
    .n_buffers = P2F_COUNT,
    .baselines = pool2d_baselines,
    .n_baselines = POOL2D_N_BASELINES,
    .bench_cases = BENCH,
    .shape = pool2d_shape,
    .flop = pool2d_flop,
    .bytes = pool2d_bytes,
    .dims = pool2d_dims_of,
    .label = pool2d_case_label,
    .generate = pool2d_generate,
    .reference = pool2d_reference,
};
