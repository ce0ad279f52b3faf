/*
 * conv2d.c: the conv2d forward operator of the seed notebook.
 *
 * One image, channel-first: in (in_ch, h, w), filter (out_ch, in_ch, fs, fs),
 * out (out_ch, h, w); "same" output size; r = (fs - 1) / 2; the scalar `pad`
 * stands for every pixel outside the image. The reference is conv2d_ref.c (fp64,
 * im2col + dgemm); cases costing more than the budget are checked on every border
 * pixel (where padding takes part) plus a seeded random sample of the others, all
 * output channels at each chosen pixel.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv2d_ref.h"
#include "op.h"

enum { P_IN_CH, P_OUT_CH, P_FS, P_H, P_W, P_PAD };
enum { B_IN, B_FILTER, B_OUT };

static const hn_op_param PARAMS[] = {
    {"in_ch", 'i', NULL, "input channels"},
    {"out_ch", 'i', NULL, "output channels"},
    {"filter_size", 'i', NULL, "filter height and width"},
    {"h", 'i', "img_size", "image height"},
    {"w", 'i', "img_size", "image width"},
    {"pad", 'f', "0", "value of pixels outside the image"},
};

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(in_ch, h, w)"},
    {"filter", HN_DT_F32, HN_BUF_IN, "(out_ch, in_ch, filter_size, filter_size)"},
    {"out", HN_DT_F32, HN_BUF_OUT, "(out_ch, h, w)"},
};

static int conv2d_shape(const double *p, int64_t *counts, hn_err *err) {
    const char *names[] = {"in_ch", "out_ch", "filter_size", "h", "w"};
    for (int i = 0; i < 5; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30))
            return hn_errf(err, "conv2d: %s = %g must be between 1 and 2^30", names[i], p[i]);
    /* In doubles (exact below 2^53, and each factor is at most 2^30), so that no
     * product overflows before the check. */
    double n[3] = {p[P_IN_CH] * p[P_H] * p[P_W], p[P_OUT_CH] * p[P_IN_CH] * p[P_FS] * p[P_FS],
                   p[P_OUT_CH] * p[P_H] * p[P_W]};
    for (int i = 0; i < 3; i++) {
        if (n[i] > (double)(((int64_t)1 << 31) - 1))
            return hn_errf(err, "conv2d: buffer '%s' would have %.0f elements (more than 2^31-1; "
                                "the kernels index with int)",
                           BUFFERS[i].name, n[i]);
        counts[i] = (int64_t)n[i];
    }
    return 0;
}

static double conv2d_flop(const double *p) {
    return 2.0 * p[P_IN_CH] * p[P_OUT_CH] * p[P_H] * p[P_W] * p[P_FS] * p[P_FS];
}

static double conv2d_bytes(const double *p) {
    return 4.0 * (p[P_IN_CH] * p[P_H] * p[P_W] + p[P_OUT_CH] * p[P_IN_CH] * p[P_FS] * p[P_FS] +
                  p[P_OUT_CH] * p[P_H] * p[P_W]);
}

static int conv2d_dims(const double *p, int buffer, int64_t dims[4]) {
    int64_t in_ch = (int64_t)p[P_IN_CH], out_ch = (int64_t)p[P_OUT_CH], fs = (int64_t)p[P_FS];
    int64_t h = (int64_t)p[P_H], w = (int64_t)p[P_W];
    switch (buffer) {
    case B_IN: dims[0] = in_ch, dims[1] = h, dims[2] = w; return 3;
    case B_FILTER: dims[0] = out_ch, dims[1] = in_ch, dims[2] = fs, dims[3] = fs; return 4;
    default: dims[0] = out_ch, dims[1] = h, dims[2] = w; return 3;
    }
}

static void conv2d_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "%.0fx%.0fx%.0f -> %.0f, f:%.0fx%.0f", p[P_H], p[P_W], p[P_IN_CH],
             p[P_OUT_CH], p[P_FS], p[P_FS]);
}

static void conv2d_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[3];
    conv2d_shape(p, counts, NULL);
    hn_fill_randn_f32(bufs[B_IN], counts[B_IN], seed * 2 + 1);
    hn_fill_randn_f32(bufs[B_FILTER], counts[B_FILTER], seed * 2 + 2);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int conv2d_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop,
                            uint64_t seed, int threads, hn_err *err) {
    (void)err;
    int in_ch = (int)p[P_IN_CH], out_ch = (int)p[P_OUT_CH], fs = (int)p[P_FS];
    int h = (int)p[P_H], w = (int)p[P_W];
    float pad = (float)p[P_PAD];
    const float *in = bufs[B_IN], *filter = bufs[B_FILTER];
    hn_ref *ref = &refs[B_OUT];
    int64_t npix = (int64_t)h * w;
    double gflop = conv2d_flop(p) * 1e-9;
    if (gflop <= budget_gflop) {
        ref->n = (int64_t)out_ch * npix;
        ref->values = xmalloc((size_t)ref->n * sizeof(double));
        ref->index = NULL;
        conv2d_forward_ref(ref->values, in, filter, in_ch, out_ch, h, w, fs, pad, threads);
        snprintf(ref->method, sizeof ref->method, "full");
        return 0;
    }
    /* Every border pixel, then random interior pixels up to the budget. */
    int64_t n_border = conv2d_border_pixels(NULL, h, w, fs);
    double gflop_per_pixel = gflop / (double)npix;
    int64_t n_random = (int64_t)(budget_gflop / gflop_per_pixel);
    if (n_random < 1024) n_random = 1024;
    if (n_random > npix - n_border) n_random = npix - n_border;
    int64_t n_sel = n_border + n_random;
    int64_t *pix = xmalloc((size_t)n_sel * sizeof *pix);
    conv2d_border_pixels(pix, h, w, fs);
    /* Random interior pixels without repeats: mark chosen ones in a bitmap. */
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
    ref->n = (int64_t)out_ch * n_sel;
    ref->values = xmalloc((size_t)ref->n * sizeof(double));
    ref->index = xmalloc((size_t)ref->n * sizeof(int64_t));
    conv2d_forward_ref_at(ref->values, pix, n_sel, in, filter, in_ch, out_ch, h, w, fs, pad, threads);
    for (int o = 0; o < out_ch; o++)
        for (int64_t i = 0; i < n_sel; i++) ref->index[(int64_t)o * n_sel + i] = (int64_t)o * npix + pix[i];
    snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld pixels (%lld border + %lld random)",
             (long long)n_sel, (long long)npix, (long long)n_border, (long long)n_random);
    free(pix);
    return 0;
}

const hn_op hn_op_conv2d = {
    .name = "conv2d",
    .doc = "same-padded 2D convolution, one image, channel-first (the seed notebook's)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .shape = conv2d_shape,
    .flop = conv2d_flop,
    .bytes = conv2d_bytes,
    .dims = conv2d_dims,
    .label = conv2d_label,
    .generate = conv2d_generate,
    .reference = conv2d_reference,
};
