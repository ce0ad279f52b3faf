/*
 * conv2d/op.c: 2D convolution, forward: the seed notebook's kernels (one image,
 * "same" output size, a constant `pad` outside the image) and PMPP chapter 16's
 * (a batch, "valid" or any padding, a bias), with one description.
 *
 *   in      (n, in_ch, h, w)            float32
 *   filter  (out_ch, in_ch, fs, fs)     float32
 *   bias    (out_ch)                    float32 (zeros unless use_bias)
 *   out     (n, out_ch, oh, ow)         float32
 *
 *   padding < 0 ("same", the default): oh = h, ow = w, the window of output pixel
 *   (y, x) starts at input (y - r, x - r), r = (fs - 1) / 2; padding >= 0: that
 *   many pixels on every side, oh = h + 2 padding - fs + 1 (0 is the chapter's
 *   "valid" convolution). Input pixels outside the image read as `pad`.
 *   out[b][o][y][x] = bias[o] + sum over c, p, q of X(b, c, y + p - r, x + q - r) *
 *                     filter[o][c][p][q]   (cross-correlation, stride 1)
 *
 * `layout` orders in and out in memory: NCHW (the default), NHWC or CHWN; the
 * filter is always (out_ch, in_ch, fs, fs). The reference (ref.c) is fp64, im2col
 * + our own GEMM; cases costing more than the budget are checked on every border
 * pixel (where padding takes part) plus a seeded random sample of the others, in
 * every image and output channel. Baselines: im2col + cuBLAS SGEMM and DGEMM
 * (cublas.c, NCHW only), cuDNN's convolution in float and double with the
 * fastest algorithm cudnnFind... gives per case (cudnn.c, NCHW and NHWC).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv2d.h"
#include "ops/op.h"
#include "ref.h"

static const char *const LAYOUTS[] = {"NCHW", "NHWC", "CHWN", NULL};

static const hn_op_param PARAMS[] = {
    {"n", 'i', "1", "images in the batch", NULL},
    {"in_ch", 'i', NULL, "input channels", NULL},
    {"out_ch", 'i', NULL, "output channels (filters)", NULL},
    {"filter_size", 'i', NULL, "filter height and width", NULL},
    {"h", 'i', "img_size", "image height", NULL},
    {"w", 'i', "img_size", "image width", NULL},
    {"padding", 'i', "-1", "pixels of padding on every side; -1: \"same\" (output as large as the input)", NULL},
    {"pad", 'f', "0", "value of pixels outside the image", NULL},
    {"use_bias", 'i', "0", "1: a random bias per output channel; 0: zeros", NULL},
    {"layout", 'c', "\"NCHW\"", "memory order of in and out", LAYOUTS},
};

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(n, in_ch, h, w) in `layout` order"},
    {"filter", HN_DT_F32, HN_BUF_IN, "(out_ch, in_ch, filter_size, filter_size)"},
    {"bias", HN_DT_F32, HN_BUF_IN, "(out_ch)"},
    {"out", HN_DT_F32, HN_BUF_OUT, "(n, out_ch, oh, ow) in `layout` order"},
};

void conv2d_params(const double *p, conv2d_dims *d) {
    d->n = (int)p[C2_N];
    d->in_ch = (int)p[C2_IN_CH];
    d->out_ch = (int)p[C2_OUT_CH];
    d->pad = (float)p[C2_PAD];
    d->use_bias = p[C2_USE_BIAS] != 0;
    d->layout = (int)p[C2_LAYOUT];
    conv2d_ref_shape(&d->s, (int)p[C2_H], (int)p[C2_W], (int)p[C2_FS], (int)p[C2_PADDING]);
}

static int conv2d_op_shape(const double *p, int64_t *counts, hn_err *err) {
    static const int POS[] = {C2_N, C2_IN_CH, C2_OUT_CH, C2_FS, C2_H, C2_W};
    for (size_t i = 0; i < HN_ARRAY_LEN(POS); i++)
        if (!(p[POS[i]] >= 1 && p[POS[i]] <= 1 << 30))
            return hn_errf(err, "conv2d: %s = %g must be between 1 and 2^30", PARAMS[POS[i]].name, p[POS[i]]);
    if (!(p[C2_PADDING] >= -1 && p[C2_PADDING] <= 1 << 20))
        return hn_errf(err, "conv2d: padding = %g must be -1 (\"same\") or between 0 and 2^20", p[C2_PADDING]);
    if (p[C2_USE_BIAS] != 0 && p[C2_USE_BIAS] != 1)
        return hn_errf(err, "conv2d: use_bias = %g must be 0 or 1", p[C2_USE_BIAS]);
    conv2d_dims d;
    conv2d_params(p, &d);
    if (d.s.oh < 1 || d.s.ow < 1)
        return hn_errf(err, "conv2d: a %dx%d filter with padding %d does not fit a %dx%d image (the output would be "
                            "%dx%d)",
                       d.s.fs, d.s.fs, (int)p[C2_PADDING], d.s.h, d.s.w, d.s.oh, d.s.ow);
    /* In doubles, so that no product overflows before the check (each factor is
     * at most 2^30; past 2^53 the count is inexact but far over the limit). */
    double n[C2_B_COUNT];
    n[C2_B_IN] = (double)d.n * d.in_ch * d.s.h * d.s.w;
    n[C2_B_FILTER] = (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs;
    n[C2_B_BIAS] = d.out_ch;
    n[C2_B_OUT] = (double)d.n * d.out_ch * d.s.oh * d.s.ow;
    for (int i = 0; i < C2_B_COUNT; i++) {
        if (n[i] > (double)(((int64_t)1 << 31) - 1))
            return hn_errf(err, "conv2d: buffer '%s' would have %.0f elements (more than 2^31-1; the kernels index "
                                "with int)",
                           BUFFERS[i].name, n[i]);
        counts[i] = (int64_t)n[i];
    }
    return 0;
}

static double conv2d_flop(const double *p) {
    conv2d_dims d;
    conv2d_params(p, &d);
    return 2.0 * d.n * d.in_ch * d.out_ch * (double)d.s.oh * d.s.ow * d.s.fs * d.s.fs;
}

static double conv2d_bytes(const double *p) {
    conv2d_dims d;
    conv2d_params(p, &d);
    return 4.0 * ((double)d.n * d.in_ch * d.s.h * d.s.w + (double)d.out_ch * d.in_ch * d.s.fs * d.s.fs +
                  (d.use_bias ? d.out_ch : 0) + (double)d.n * d.out_ch * d.s.oh * d.s.ow);
}

/* The dims of a (n, c, h, w) tensor in `layout` order. */
static int layout_dims(int layout, int64_t n, int64_t c, int64_t h, int64_t w, int64_t dims[4]) {
    switch (layout) {
    case 1: dims[0] = n, dims[1] = h, dims[2] = w, dims[3] = c; break; /* NHWC */
    case 2: dims[0] = c, dims[1] = h, dims[2] = w, dims[3] = n; break; /* CHWN */
    default: dims[0] = n, dims[1] = c, dims[2] = h, dims[3] = w; break;
    }
    return 4;
}

static int conv2d_dims_of(const double *p, int buffer, int64_t dims[4]) {
    conv2d_dims d;
    conv2d_params(p, &d);
    switch (buffer) {
    case C2_B_IN: return layout_dims(d.layout, d.n, d.in_ch, d.s.h, d.s.w, dims);
    case C2_B_FILTER: dims[0] = d.out_ch, dims[1] = d.in_ch, dims[2] = d.s.fs, dims[3] = d.s.fs; return 4;
    case C2_B_BIAS: dims[0] = d.out_ch; return 1;
    default: return layout_dims(d.layout, d.n, d.out_ch, d.s.oh, d.s.ow, dims);
    }
}

static void conv2d_label(const double *p, char *buf, size_t size) {
    conv2d_dims d;
    conv2d_params(p, &d);
    char extra[96] = "";
    size_t k = 0;
    if (d.n != 1) k += (size_t)snprintf(extra + k, sizeof extra - k, ", n:%d", d.n);
    if ((int)p[C2_PADDING] >= 0) k += (size_t)snprintf(extra + k, sizeof extra - k, ", p:%d", (int)p[C2_PADDING]);
    /* the pad value too: two cases differing only in it must not share a label */
    if (p[C2_PAD] != 0) k += (size_t)snprintf(extra + k, sizeof extra - k, ", pad:%g", p[C2_PAD]);
    if (d.use_bias) k += (size_t)snprintf(extra + k, sizeof extra - k, ", bias");
    if (d.layout) snprintf(extra + k, sizeof extra - k, ", %s", LAYOUTS[d.layout]);
    snprintf(buf, size, "%dx%dx%d -> %d, f:%dx%d%s", d.s.h, d.s.w, d.in_ch, d.out_ch, d.s.fs, d.s.fs, extra);
}

/* Element (b, c, y, x) of a (n, ch, h, w) tensor stored in `layout` order. */
int64_t conv2d_at(int layout, int n, int ch, int h, int w, int b, int c, int y, int x) {
    switch (layout) {
    case 1: return (((int64_t)b * h + y) * w + x) * ch + c;     /* NHWC */
    case 2: return (((int64_t)c * h + y) * w + x) * n + b;      /* CHWN */
    default: return (((int64_t)b * ch + c) * h + y) * w + x;    /* NCHW */
    }
}

static void conv2d_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[C2_B_COUNT];
    conv2d_op_shape(p, counts, NULL);
    /* The input's values are drawn in NCHW order, then stored in the layout's,
     * so a case has the same numbers whatever its layout. */
    conv2d_dims d;
    conv2d_params(p, &d);
    if (d.layout == 0) {
        hn_fill_randn_f32(bufs[C2_B_IN], counts[C2_B_IN], seed * 2 + 1);
    } else {
        float *tmp = xmalloc((size_t)counts[C2_B_IN] * sizeof *tmp);
        hn_fill_randn_f32(tmp, counts[C2_B_IN], seed * 2 + 1);
        float *in = bufs[C2_B_IN];
        int64_t i = 0;
        for (int b = 0; b < d.n; b++)
            for (int c = 0; c < d.in_ch; c++)
                for (int y = 0; y < d.s.h; y++)
                    for (int x = 0; x < d.s.w; x++)
                        in[conv2d_at(d.layout, d.n, d.in_ch, d.s.h, d.s.w, b, c, y, x)] = tmp[i++];
        free(tmp);
    }
    hn_fill_randn_f32(bufs[C2_B_FILTER], counts[C2_B_FILTER], seed * 2 + 2);
    if (d.use_bias) hn_fill_randn_f32(bufs[C2_B_BIAS], counts[C2_B_BIAS], seed * 2 + 3);
    else memset(bufs[C2_B_BIAS], 0, (size_t)counts[C2_B_BIAS] * sizeof(float));
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int conv2d_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop,
                            uint64_t seed, int threads, hn_err *err) {
    (void)err;
    conv2d_dims d;
    conv2d_params(p, &d);
    const int64_t npix = (int64_t)d.s.oh * d.s.ow, in_img = (int64_t)d.in_ch * d.s.h * d.s.w;
    const float *filter = bufs[C2_B_FILTER], *bias = bufs[C2_B_BIAS];
    hn_ref *ref = &refs[C2_B_OUT];
    /* The input of image b in NCHW order, where the reference wants it. */
    float *img = d.layout ? xmalloc((size_t)in_img * sizeof *img) : NULL;
    const float *in = bufs[C2_B_IN];
    int64_t *pix = NULL, n_sel = npix, n_border = 0, n_random = 0;
    double gflop = conv2d_flop(p) * 1e-9;
    if (gflop > budget_gflop) {
        /* Every border pixel, then random interior pixels up to the budget, the
         * same set in every image. */
        n_border = conv2d_border_pixels_general(NULL, &d.s);
        double gflop_per_pixel = gflop / ((double)npix * d.n);
        n_random = (int64_t)(budget_gflop / gflop_per_pixel / d.n);
        if (n_random < 1024) n_random = 1024;
        if (n_random > npix - n_border) n_random = npix - n_border;
        n_sel = n_border + n_random;
        pix = xmalloc((size_t)n_sel * sizeof *pix);
        conv2d_border_pixels_general(pix, &d.s);
        unsigned char *taken = xcalloc((size_t)npix, 1);
        for (int64_t i = 0; i < n_border; i++) taken[pix[i]] = 1;
        uint64_t s = seed ^ 0xc0ffee1234567ULL;
        for (int64_t i = n_border; i < n_sel;) {
            int64_t q = (int64_t)hn_rand_below(&s, (uint64_t)npix);
            if (taken[q]) continue;
            taken[q] = 1;
            pix[i++] = q;
        }
        free(taken);
        qsort(pix, (size_t)n_sel, sizeof *pix, cmp_i64);
    }
    ref->n = (int64_t)d.n * d.out_ch * n_sel;
    ref->values = hn_ref_alloc_values(ref->n);
    ref->index = pix ? xmalloc((size_t)ref->n * sizeof(int64_t)) : NULL;
    for (int b = 0; b < d.n; b++) {
        const float *src = in + (int64_t)b * in_img;
        if (d.layout) {
            for (int c = 0; c < d.in_ch; c++)
                for (int y = 0; y < d.s.h; y++)
                    for (int x = 0; x < d.s.w; x++)
                        img[((int64_t)c * d.s.h + y) * d.s.w + x] =
                            in[conv2d_at(d.layout, d.n, d.in_ch, d.s.h, d.s.w, b, c, y, x)];
            src = img;
        }
        double *o = ref->values + (int64_t)b * d.out_ch * n_sel; /* (out_ch, n_sel) of image b */
        conv2d_ref_general(o, pix, n_sel, src, filter, d.in_ch, d.out_ch, &d.s, d.pad, threads, NULL);
        for (int c = 0; c < d.out_ch; c++)
            for (int64_t j = 0; j < n_sel; j++) o[(int64_t)c * n_sel + j] += (double)bias[c];
    }
    if (pix || d.layout) {
        /* Where each value lives in the output buffer. */
        if (!ref->index) ref->index = xmalloc((size_t)ref->n * sizeof(int64_t));
        for (int b = 0; b < d.n; b++)
            for (int c = 0; c < d.out_ch; c++)
                for (int64_t j = 0; j < n_sel; j++) {
                    int64_t q = pix ? pix[j] : j;
                    ref->index[((int64_t)b * d.out_ch + c) * n_sel + j] =
                        conv2d_at(d.layout, d.n, d.out_ch, d.s.oh, d.s.ow, b, c, (int)(q / d.s.ow), (int)(q % d.s.ow));
                }
    }
    if (pix)
        snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld pixels (%lld border + %lld random)",
                 (long long)n_sel, (long long)npix, (long long)n_border, (long long)n_random);
    else
        snprintf(ref->method, sizeof ref->method, "full");
    free(pix);
    free(img);
    return 0;
}

/* cuBLAS first: the charts compare against the first float baseline. */
static const hn_op_baseline BASELINES[] = {
    {.name = "cublas_im2col_sgemm", .family = "cublas", .precision = "float", .open = conv2d_cublas_open_sgemm,
     .close = conv2d_cublas_close, .prepare = conv2d_cublas_prepare, .issue = conv2d_cublas_issue,
     .release = conv2d_cublas_release},
    {.name = "cublas_im2col_dgemm", .family = "cublas", .precision = "double", .open = conv2d_cublas_open_dgemm,
     .close = conv2d_cublas_close, .prepare = conv2d_cublas_prepare, .issue = conv2d_cublas_issue,
     .release = conv2d_cublas_release},
    {.name = "cudnn_conv_fwd", .family = "cudnn", .precision = "float", .open = conv2d_cudnn_open_float,
     .close = conv2d_cudnn_close, .prepare = conv2d_cudnn_prepare, .issue = conv2d_cudnn_issue,
     .release = conv2d_cudnn_release},
    {.name = "cudnn_conv_fwd_double", .family = "cudnn", .precision = "double", .open = conv2d_cudnn_open_double,
     .close = conv2d_cudnn_close, .prepare = conv2d_cudnn_prepare, .issue = conv2d_cudnn_issue,
     .release = conv2d_cudnn_release},
};

static const char *const BENCH[] = {
    "in_ch=64,out_ch=64,filter_size=3,h=128,w=128",
    "n=8,in_ch=16,out_ch=32,filter_size=5,h=64,w=64,padding=0,use_bias=1",
    NULL,
};

const hn_op hn_op_conv2d = {
    .name = "conv2d",
    .doc = "2D convolution, forward: a batch, any padding (\"same\" by default), bias, NCHW/NHWC/CHWN",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = BASELINES,
    .n_baselines = (int)HN_ARRAY_LEN(BASELINES),
    .bench_cases = BENCH,
    .shape = conv2d_op_shape,
    .flop = conv2d_flop,
    .bytes = conv2d_bytes,
    .dims = conv2d_dims_of,
    .label = conv2d_label,
    .generate = conv2d_generate,
    .reference = conv2d_reference,
};
