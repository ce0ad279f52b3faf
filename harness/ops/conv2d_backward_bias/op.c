/*
 * conv2d_backward_bias/op.c: the gradient of conv2d's bias, dE/db: the gradient of
 * the output summed over the batch and the pixels. The parameters are the forward's
 * (harness/ops/conv2d; NCHW, stride 1) less in_ch, which dout does not depend on:
 * they give dout's shape.
 *
 *   dout   (n, out_ch, oh, ow)    float32   dE/dout
 *   dbias  (out_ch)               float32   dE/dbias
 *
 *   dbias[o] = sum over b, y, x of dout[b][o][y][x];  oh = h + 2 padding - fs + 1
 *   (h for "same", padding -1)
 *   = dout.sum(dim=(0, 2, 3)), the bias gradient of torch.nn.functional.conv2d.
 *
 * Memory-bound: the reference (conv2d_ref_backward_bias) sums with vector
 * instructions on every thread, always in full.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/conv2d/backward.h"
#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', "1", "images in the batch", NULL},
    {"out_ch", 'i', NULL, "output channels of the forward (channels of dout)", NULL},
    {"filter_size", 'i', NULL, "the forward's filter height and width", NULL},
    {"h", 'i', "img_size", "the forward's image height", NULL},
    {"w", 'i', "img_size", "the forward's image width", NULL},
    {"padding", 'i', "-1", "the forward's padding on every side; -1: \"same\"", NULL},
};

static const hn_op_buffer BUFFERS[] = {
    {"dout", HN_DT_F32, HN_BUF_IN, "(n, out_ch, oh, ow)"},
    {"dbias", HN_DT_F32, HN_BUF_OUT, "(out_ch)"},
};

static const char OP[] = "conv2d_backward_bias";

int conv2d_bwd_bias_decode(const double *p, conv2d_bwd_dims *d, hn_err *err) {
    return conv2d_bwd_decode(OP, p[C2BB_N], -1, p[C2BB_OUT_CH],
                             p[C2BB_FS], p[C2BB_H], p[C2BB_W], p[C2BB_PADDING], d, err);
}

static int bwd_bias_shape(const double *p, int64_t *counts, hn_err *err) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_bias_decode(p, &d, err) != 0) return -1;
    double n[C2BB_COUNT];
    n[C2BB_DOUT] = (double)d.n * d.out_ch * d.s.oh * d.s.ow;
    n[C2BB_DBIAS] = d.out_ch;
    return conv2d_bwd_counts(OP, BUFFERS, n, C2BB_COUNT, counts, err);
}

/* An addition per value of dout. */
static double bwd_bias_flop(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_bias_decode(p, &d, NULL) != 0) return 0;
    return (double)d.n * d.out_ch * d.s.oh * d.s.ow;
}

static double bwd_bias_bytes(const double *p) {
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_bias_decode(p, &d, NULL) != 0) return 0;
    return 4.0 * ((double)d.n * d.out_ch * d.s.oh * d.s.ow + d.out_ch);
}

static int bwd_bias_dims(const double *p, int buffer, int64_t dims[4]) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_bias_decode(p, &d, NULL);
    if (buffer == C2BB_DBIAS) {
        dims[0] = d.out_ch;
        return 1;
    }
    dims[0] = d.n, dims[1] = d.out_ch, dims[2] = d.s.oh, dims[3] = d.s.ow;
    return 4;
}

static void bwd_bias_label(const double *p, char *buf, size_t size) {
    conv2d_bwd_dims d = {0};
    conv2d_bwd_bias_decode(p, &d, NULL);
    conv2d_bwd_label(&d, buf, size);
}

static void bwd_bias_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[C2BB_COUNT];
    bwd_bias_shape(p, counts, NULL);
    hn_fill_randn_f32(bufs[C2BB_DOUT], counts[C2BB_DOUT], seed * 2 + 1);
}

static int bwd_bias_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                              int threads, hn_err *err) {
    (void)budget_gflop, (void)seed;
    conv2d_bwd_dims d = {0};
    if (conv2d_bwd_bias_decode(p, &d, err) != 0) return -1;
    hn_ref *ref = &refs[C2BB_DBIAS];
    ref->n = d.out_ch;
    ref->values = hn_ref_alloc_values(ref->n);
    conv2d_ref_backward_bias(ref->values, bufs[C2BB_DOUT], d.n, d.out_ch, (int64_t)d.s.oh * d.s.ow, threads,
                             CONV2D_ISA_BEST);
    snprintf(ref->method, sizeof ref->method, "full");
    return 0;
}

/* conv2d's bench cases (less in_ch), so `harness bench ops` shows them side by side. */
static const char *const BENCH[] = {
    "out_ch=64,filter_size=3,h=128,w=128",
    "n=8,out_ch=32,filter_size=5,h=64,w=64,padding=0",
    NULL,
};

const hn_op hn_op_conv2d_backward_bias = {
    .name = "conv2d_backward_bias",
    .doc = "dE/db of conv2d (NCHW): dout summed over the batch and the pixels, dout.sum((0, 2, 3))",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = conv2d_bwd_bias_baselines,
    .n_baselines = CONV2D_BWD_N_BASELINES,
    .bench_cases = BENCH,
    .shape = bwd_bias_shape,
    .flop = bwd_bias_flop,
    .bytes = bwd_bias_bytes,
    .dims = bwd_bias_dims,
    .label = bwd_bias_label,
    .generate = bwd_bias_generate,
    .reference = bwd_bias_reference,
};
