/*
 * conv2d_backward_filter/op.c: the gradient of conv2d's filter, dE/dW, given the
 * forward's input and the gradient of its output, summed over the batch. The
 * parameters are the forward's (harness/ops/conv2d; NCHW, stride 1), `pad` included:
 * the padded pixels the forward read take part.
 *
 *   in       (n, in_ch, h, w)            float32   the forward's input
 *   dout     (n, out_ch, oh, ow)         float32   dE/dout
 *   dfilter  (out_ch, in_ch, fs, fs)     float32   dE/dfilter
 *
 *   dfilter[o][c][p][q] = sum over b, y, x of dout[b][o][y][x] * X(b, c, y + p - r, x + q - r),
 *   X = in inside the image and `pad` outside; r = (fs - 1) / 2 for "same" (padding
 *   -1), padding otherwise; oh = h + 2 padding - fs + 1 (h for "same").
 *   = torch.nn.grad.conv2d_weight(in, filter.shape, dout, padding=padding) when pad
 *   is 0; otherwise that of F.pad(in, (r, ., r, .), value=pad) with padding 0.
 *
 * Reference: a GEMM of dout with the im2col of the input on conv2d's micro-kernels
 * (conv2d_ref_backward_filter); cases costing more than the budget are checked on a
 * seeded random sample of the filter's (c, p, q) columns, every output channel.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/conv2d/backward.h"
#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', "1", "images in the batch", NULL},
    {"in_ch", 'i', NULL, "input channels of the forward", NULL},
    {"out_ch", 'i', NULL, "output channels of the forward (channels of dout)", NULL},
    {"filter_size", 'i', NULL, "filter height and width", NULL},
    {"h", 'i', "img_size", "image height", NULL},
    {"w", 'i', "img_size", "image width", NULL},
    {"padding", 'i', "-1", "the forward's padding on every side; -1: \"same\"", NULL},
    {"pad", 'f', "0", "the forward's value of pixels outside the image", NULL},
};

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(n, in_ch, h, w)"},
    {"dout", HN_DT_F32, HN_BUF_IN, "(n, out_ch, oh, ow)"},
    {"dfilter", HN_DT_F32, HN_BUF_OUT, "(out_ch, in_ch, filter_size, filter_size)"},
};

static const char OP[] = "conv2d_backward_filter";

int conv2d_bwd_filter_decode(const double *p, conv2d_bwd_dims *d, hn_err *err) {
    return conv2d_bwd_decode(OP, p[C2B_N], p[C2B_IN_CH], p[C2B_OUT_CH],
                             p[C2B_FS], p[C2B_H], p[C2B_W], p[C2B_PADDING], d, err);
}

static int bwd_filter_shape(const double *p, int64_t *counts, hn_err *err) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_filter_decode(p, &d, err) != 0) return -1;
    if (!(p[C2B_PAD] == p[C2B_PAD] && p[C2B_PAD] >= -1e30 && p[C2B_PAD] <= 1e30))
        return hn_errf(err, "%s: pad = %g must be a finite number", OP, p[C2B_PAD]);
    double n[C2BF_COUNT];
    n[C2BF_IN] = (double)d.n * d.in_ch * d.s.h * d.s.w;
    n[C2BF_DOUT] = (double)d.n * d.out_ch * d.s.oh * d.s.ow;
    n[C2BF_DFILTER] = (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs;
    return conv2d_bwd_counts(OP, BUFFERS, n, C2BF_COUNT, counts, err);
}

/* As the forward's: every product of the input (or pad) and dout. */
static double bwd_filter_flop(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_filter_decode(p, &d, NULL) != 0) return 0;
    return 2.0 * d.n * d.in_ch * d.out_ch * (double)d.s.oh * d.s.ow * d.s.fs * d.s.fs;
}

static double bwd_filter_bytes(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_filter_decode(p, &d, NULL) != 0) return 0;
    return 4.0 * ((double)d.n * d.in_ch * d.s.h * d.s.w + (double)d.n * d.out_ch * d.s.oh * d.s.ow +
                  (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs);
}

static int bwd_filter_dims(const double *p, int buffer, int64_t dims[4]) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_filter_decode(p, &d, NULL);
    switch (buffer) {
    case C2BF_IN: dims[0] = d.n, dims[1] = d.in_ch, dims[2] = d.s.h, dims[3] = d.s.w; break;
    case C2BF_DOUT: dims[0] = d.n, dims[1] = d.out_ch, dims[2] = d.s.oh, dims[3] = d.s.ow; break;
    default: dims[0] = d.out_ch, dims[1] = d.in_ch, dims[2] = d.s.fs, dims[3] = d.s.fs; break;
    }
    return 4;
}

static void bwd_filter_label(const double *p, char *buf, size_t size) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_filter_decode(p, &d, NULL);
    conv2d_bwd_label(&d, buf, size);
    if (p[C2B_PAD] != 0) {
        size_t k = strlen(buf);
        if (k < size) snprintf(buf + k, size - k, ", pad:%g", p[C2B_PAD]);
    }
}

static void bwd_filter_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[C2BF_COUNT];
    bwd_filter_shape(p, counts, NULL);
    hn_fill_randn_f32(bufs[C2BF_IN], counts[C2BF_IN], seed * 2 + 1);
    hn_fill_randn_f32(bufs[C2BF_DOUT], counts[C2BF_DOUT], seed * 2 + 2);
}

static int bwd_filter_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop,
                                uint64_t seed, int threads, hn_err *err) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_filter_decode(p, &d, err) != 0) return -1;
    const int64_t k = (int64_t)d.in_ch * d.s.fs * d.s.fs;
    int64_t *cols = NULL, n_sel = k;
    const double gflop = bwd_filter_flop(p) * 1e-9;
    if (gflop > budget_gflop) {
        /* Seeded random columns (filter entries of every output channel), at least
         * 64, as many as the budget pays for. */
        n_sel = (int64_t)(budget_gflop / (gflop / (double)k));
        if (n_sel < 64) n_sel = 64;
        if (n_sel > k) n_sel = k;
        unsigned char *taken = xcalloc((size_t)k, 1);
        uint64_t s = seed ^ 0xf117e55eedULL;
        for (int64_t i = 0; i < n_sel;) {
            int64_t q = (int64_t)hn_rand_below(&s, (uint64_t)k);
            if (!taken[q]) taken[q] = 1, i++;
        }
        cols = xmalloc(sizeof *cols * (size_t)n_sel);
        for (int64_t q = 0, i = 0; q < k; q++)
            if (taken[q]) cols[i++] = q;
        free(taken);
    }
    hn_ref *ref = &refs[C2BF_DFILTER];
    ref->n = (int64_t)d.out_ch * n_sel;
    ref->values = hn_ref_alloc_values(ref->n);
    conv2d_ref_backward_filter(ref->values, cols, n_sel, bufs[C2BF_IN], bufs[C2BF_DOUT], d.n, d.in_ch, d.out_ch, &d.s,
                               (float)p[C2B_PAD], threads, NULL);
    if (cols) {
        ref->index = xmalloc(sizeof(int64_t) * (size_t)ref->n);
        for (int64_t o = 0; o < d.out_ch; o++)
            for (int64_t j = 0; j < n_sel; j++) ref->index[o * n_sel + j] = o * k + cols[j];
        snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld filter columns (random)", (long long)n_sel,
                 (long long)k);
    } else {
        snprintf(ref->method, sizeof ref->method, "full");
    }
    free(cols);
    return 0;
}

/* conv2d's bench cases, so `harness bench ops` shows both rates side by side. */
static const char *const BENCH[] = {
    "in_ch=64,out_ch=64,filter_size=3,h=128,w=128",
    "n=8,in_ch=16,out_ch=32,filter_size=5,h=64,w=64,padding=0",
    NULL,
};

const hn_op hn_op_conv2d_backward_filter = {
    .name = "conv2d_backward_filter",
    .doc = "dE/dW of conv2d (NCHW, stride 1, any padding and pad value), summed over the batch: "
           "torch.nn.grad.conv2d_weight",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = conv2d_bwd_filter_baselines,
    .n_baselines = CONV2D_BWD_N_BASELINES,
    .bench_cases = BENCH,
    .shape = bwd_filter_shape,
    .flop = bwd_filter_flop,
    .bytes = bwd_filter_bytes,
    .dims = bwd_filter_dims,
    .label = bwd_filter_label,
    .generate = bwd_filter_generate,
    .reference = bwd_filter_reference,
};
