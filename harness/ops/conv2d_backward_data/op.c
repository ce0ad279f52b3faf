/*
 * conv2d_backward_data/op.c: the gradient of conv2d's input, dE/dX, given the
 * gradient of its output (PMPP chapter 16.2, convLayer_backward_x_grad, with a batch
 * and any padding). The parameters are the forward's (harness/ops/conv2d; NCHW,
 * stride 1).
 *
 *   dout    (n, out_ch, oh, ow)          float32   dE/dout
 *   filter  (out_ch, in_ch, fs, fs)      float32
 *   din     (n, in_ch, h, w)             float32   dE/din
 *
 *   din[b][c][y][x] = sum over o, p, q of dout[b][o][y + r - p][x + r - q] * filter[o][c][p][q],
 *   terms outside dout left out; r = (fs - 1) / 2 for "same" (padding -1), padding
 *   otherwise; oh = h + 2 padding - fs + 1 (h for "same").
 *   = torch.nn.grad.conv2d_input(in.shape, filter, dout, padding=padding)
 *
 * The forward's pad value does not take part (the gradient of a constant is zero).
 * Reference: a forward convolution of dout with the flipped, transposed filter
 * (conv2d_ref_backward_data); cases costing more than the budget are checked on the
 * border pixels (whose window leaves dout) and a seeded random sample of the others,
 * in every image and channel.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/conv2d/backward.h"
#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', "1", "images in the batch", NULL},
    {"in_ch", 'i', NULL, "input channels of the forward (channels of din)", NULL},
    {"out_ch", 'i', NULL, "output channels of the forward (channels of dout)", NULL},
    {"filter_size", 'i', NULL, "filter height and width", NULL},
    {"h", 'i', "img_size", "image height (of din)", NULL},
    {"w", 'i', "img_size", "image width (of din)", NULL},
    {"padding", 'i', "-1", "the forward's padding on every side; -1: \"same\"", NULL},
};

static const hn_op_buffer BUFFERS[] = {
    {"dout", HN_DT_F32, HN_BUF_IN, "(n, out_ch, oh, ow)"},
    {"filter", HN_DT_F32, HN_BUF_IN, "(out_ch, in_ch, filter_size, filter_size)"},
    {"din", HN_DT_F32, HN_BUF_OUT, "(n, in_ch, h, w)"},
};

static const char OP[] = "conv2d_backward_data";

int conv2d_bwd_data_decode(const double *p, conv2d_bwd_dims *d, hn_err *err) {
    return conv2d_bwd_decode(OP, p[C2B_N], p[C2B_IN_CH], p[C2B_OUT_CH],
                             p[C2B_FS], p[C2B_H], p[C2B_W], p[C2B_PADDING], d, err);
}

static int bwd_data_shape(const double *p, int64_t *counts, hn_err *err) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_data_decode(p, &d, err) != 0) return -1;
    double n[C2BD_COUNT];
    n[C2BD_DOUT] = (double)d.n * d.out_ch * d.s.oh * d.s.ow;
    n[C2BD_FILTER] = (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs;
    n[C2BD_DIN] = (double)d.n * d.in_ch * d.s.h * d.s.w;
    return conv2d_bwd_counts(OP, BUFFERS, n, C2BD_COUNT, counts, err);
}

/* As the forward's: every product of dout and the filter that the forward made. */
static double bwd_data_flop(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_data_decode(p, &d, NULL) != 0) return 0;
    return 2.0 * d.n * d.in_ch * d.out_ch * (double)d.s.oh * d.s.ow * d.s.fs * d.s.fs;
}

static double bwd_data_bytes(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_data_decode(p, &d, NULL) != 0) return 0;
    return 4.0 * ((double)d.n * d.out_ch * d.s.oh * d.s.ow + (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs +
                  (double)d.n * d.in_ch * d.s.h * d.s.w);
}

static int bwd_data_dims(const double *p, int buffer, int64_t dims[4]) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_data_decode(p, &d, NULL);
    switch (buffer) {
    case C2BD_DOUT: dims[0] = d.n, dims[1] = d.out_ch, dims[2] = d.s.oh, dims[3] = d.s.ow; break;
    case C2BD_FILTER: dims[0] = d.out_ch, dims[1] = d.in_ch, dims[2] = d.s.fs, dims[3] = d.s.fs; break;
    default: dims[0] = d.n, dims[1] = d.in_ch, dims[2] = d.s.h, dims[3] = d.s.w; break;
    }
    return 4;
}

static void bwd_data_label(const double *p, char *buf, size_t size) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_data_decode(p, &d, NULL);
    conv2d_bwd_label(&d, buf, size);
}

static void bwd_data_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[C2BD_COUNT];
    bwd_data_shape(p, counts, NULL);
    hn_fill_randn_f32(bufs[C2BD_DOUT], counts[C2BD_DOUT], seed * 2 + 1);
    hn_fill_randn_f32(bufs[C2BD_FILTER], counts[C2BD_FILTER], seed * 2 + 2);
}

static int bwd_data_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                              int threads, hn_err *err) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_data_decode(p, &d, err) != 0) return -1;
    const int64_t npix = (int64_t)d.s.h * d.s.w;
    int64_t *pix = NULL, n_sel = npix, n_border = 0;
    const double gflop = bwd_data_flop(p) * 1e-9;
    conv2d_shape t;
    conv2d_ref_transposed_shape(&t, &d.s);
    if (gflop > budget_gflop) {
        /* The same pixels of every image: the border, then random ones up to the budget. */
        const double gflop_per_pixel = gflop / ((double)npix * d.n);
        pix = conv2d_bwd_sample_pixels(&t, (int64_t)(budget_gflop / gflop_per_pixel / d.n), seed ^ 0xdada1234ULL,
                                       &n_sel, &n_border);
    }
    hn_ref *ref = &refs[C2BD_DIN];
    ref->n = (int64_t)d.n * d.in_ch * n_sel;
    ref->values = hn_ref_alloc_values(ref->n);
    conv2d_ref_backward_data(ref->values, pix, n_sel, bufs[C2BD_DOUT], bufs[C2BD_FILTER], d.n, d.in_ch, d.out_ch, &d.s,
                             threads, NULL);
    if (pix) {
        ref->index = xmalloc(sizeof(int64_t) * (size_t)ref->n);
        for (int64_t bc = 0; bc < (int64_t)d.n * d.in_ch; bc++)
            for (int64_t j = 0; j < n_sel; j++) ref->index[bc * n_sel + j] = bc * npix + pix[j];
        snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld pixels (%lld border + %lld random)",
                 (long long)n_sel, (long long)npix, (long long)n_border, (long long)(n_sel - n_border));
    } else {
        snprintf(ref->method, sizeof ref->method, "full");
    }
    free(pix);
    return 0;
}

/* conv2d's bench cases, so `harness bench ops` shows both rates side by side. */
static const char *const BENCH[] = {
    "in_ch=64,out_ch=64,filter_size=3,h=128,w=128",
    "n=8,in_ch=16,out_ch=32,filter_size=5,h=64,w=64,padding=0",
    NULL,
};

const hn_op hn_op_conv2d_backward_data = {
    .name = "conv2d_backward_data",
    .doc = "dE/dX of conv2d (NCHW, stride 1, any padding): torch.nn.grad.conv2d_input",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = conv2d_bwd_data_baselines,
    .n_baselines = CONV2D_BWD_N_BASELINES,
    .bench_cases = BENCH,
    .shape = bwd_data_shape,
    .flop = bwd_data_flop,
    .bytes = bwd_data_bytes,
    .dims = bwd_data_dims,
    .label = bwd_data_label,
    .generate = bwd_data_generate,
    .reference = bwd_data_reference,
};
