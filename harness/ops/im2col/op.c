/*
 * im2col/op.c: the unroll (im2col) of PMPP chapter 16 (its Fig. 16.18): the
 * input of a convolution rearranged so the convolution becomes one GEMM.
 *
 *   in    (n, in_ch, h, w)                float32
 *   cols  (n, in_ch * fs * fs, oh * ow)   float32
 *
 *   cols[b][(c*fs + p)*fs + q][y*ow + x] = X[b][c][y + p - r][x + q - r]
 *
 * X = in inside the image, `pad` outside; padding 0 (the default, the chapter's
 * "valid" convolution: oh = h - fs + 1), p pixels on every side, or -1 for
 * "same" (r = (fs - 1) / 2, oh = h), as conv2d. The operator of the chapter's
 * exercise 4 (the unroll kernel's read pattern: configs/im2col_unroll.json), and
 * of the im2col half of conv2d's cuBLAS baseline, whose kernel is one of its
 * variants. Memory-bound: a copy that reads every input about fs^2 times (from
 * cache) and writes fs^2 times the input's size.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/conv2d/ref.h"
#include "ops/op.h"
#include "ops/relu/eltwise.h"

enum { P_N, P_IN_CH, P_FS, P_H, P_W, P_PADDING, P_PAD };
enum { B_IN, B_COLS };

static const hn_op_param PARAMS[] = {
    {"n", 'i', "1", "images", NULL},
    {"in_ch", 'i', NULL, "input channels", NULL},
    {"filter_size", 'i', NULL, "filter height and width", NULL},
    {"h", 'i', "img_size", "image height", NULL},
    {"w", 'i', "img_size", "image width", NULL},
    {"padding", 'i', "0", "pixels of padding on every side; 0: valid; -1: \"same\"", NULL},
    {"pad", 'f', "0", "value of pixels outside the image", NULL},
};

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(n, in_ch, h, w)"},
    {"cols", HN_DT_F32, HN_BUF_OUT, "(n, in_ch * fs * fs, oh * ow)"},
};

static void geometry(const double *p, conv2d_shape *s) {
    conv2d_ref_shape(s, (int)p[P_H], (int)p[P_W], (int)p[P_FS], (int)p[P_PADDING]);
}

static int im2col_shape(const double *p, int64_t *counts, hn_err *err) {
    static const int POS[] = {P_N, P_IN_CH, P_FS, P_H, P_W};
    for (size_t i = 0; i < HN_ARRAY_LEN(POS); i++)
        if (!(p[POS[i]] >= 1 && p[POS[i]] <= 1 << 30))
            return hn_errf(err, "im2col: %s = %g must be between 1 and 2^30", PARAMS[POS[i]].name, p[POS[i]]);
    if (!(p[P_PADDING] >= -1 && p[P_PADDING] <= 1 << 20))
        return hn_errf(err, "im2col: padding = %g must be -1 (\"same\") or between 0 and 2^20", p[P_PADDING]);
    conv2d_shape s;
    geometry(p, &s);
    if (s.oh < 1 || s.ow < 1)
        return hn_errf(err, "im2col: a %dx%d filter with padding %d does not fit a %dx%d image", s.fs, s.fs,
                       (int)p[P_PADDING], s.h, s.w);
    counts[B_IN] = (int64_t)p[P_N] * (int64_t)p[P_IN_CH] * s.h * s.w;
    counts[B_COLS] = (int64_t)p[P_N] * (int64_t)p[P_IN_CH] * s.fs * s.fs * s.oh * s.ow;
    for (int i = 0; i < 2; i++)
        if (counts[i] > ((int64_t)1 << 31) - 1)
            return hn_errf(err, "im2col: buffer '%s' would have %lld elements (more than 2^31-1; the kernels index "
                                "with int)",
                           BUFFERS[i].name, (long long)counts[i]);
    return 0;
}

static double im2col_flop(const double *p) {
    (void)p;
    return 0; /* a rearrangement */
}

static double im2col_bytes(const double *p) {
    int64_t counts[2];
    if (im2col_shape(p, counts, NULL) != 0) return 0;
    return 4.0 * ((double)counts[B_IN] + (double)counts[B_COLS]);
}

static int im2col_dims(const double *p, int buffer, int64_t dims[4]) {
    conv2d_shape s;
    geometry(p, &s);
    if (buffer == B_IN) {
        dims[0] = (int64_t)p[P_N], dims[1] = (int64_t)p[P_IN_CH], dims[2] = s.h, dims[3] = s.w;
        return 4;
    }
    dims[0] = (int64_t)p[P_N], dims[1] = (int64_t)p[P_IN_CH] * s.fs * s.fs, dims[2] = (int64_t)s.oh * s.ow;
    return 3;
}

static void im2col_label(const double *p, char *buf, size_t size) {
    char extra[80] = "";
    size_t k = 0;
    if ((int)p[P_N] != 1) k += (size_t)snprintf(extra, sizeof extra, ", n:%d", (int)p[P_N]);
    /* the pad value too: two cases differing only in it must not share a label */
    if (p[P_PAD] != 0) snprintf(extra + k, sizeof extra - k, ", pad:%g", p[P_PAD]);
    snprintf(buf, size, "%dx%dx%d, f:%dx%d, p:%d%s", (int)p[P_H], (int)p[P_W], (int)p[P_IN_CH], (int)p[P_FS],
             (int)p[P_FS], (int)p[P_PADDING], extra);
}

static void im2col_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[2];
    im2col_shape(p, counts, NULL);
    hn_fill_randn_f32(bufs[B_IN], counts[B_IN], seed * 2 + 1);
}

/* The reference, row by row of cols (b, c, p, q flattened), each an oh x ow
 * shifted copy of one input plane: the pad value in the rows y and columns x
 * where y + p - pad_lo or x + q - pad_lo lies outside the image, the widened
 * input (vectorized) between them; when ow == w ("same" padding) the valid
 * part of all rows is one run of the input, widened in one call. */
typedef struct {
    const conv2d_shape *s;
    const float *in;
    double *out, pad;
    int fs;
} i2c_job;

static void fill(double *o, int64_t n, double v) {
    for (int64_t i = 0; i < n; i++) o[i] = v;
}

static void i2c_part(void *ctx, int64_t begin, int64_t end) {
    const i2c_job *j = ctx;
    const conv2d_shape *s = j->s;
    const int fs = j->fs, ow = s->ow;
    const int64_t npix = (int64_t)s->oh * ow, plane = (int64_t)s->h * s->w;
    for (int64_t row = begin; row < end; row++) {
        const int q = (int)(row % fs), p = (int)(row / fs % fs);
        const float *src = j->in + row / ((int64_t)fs * fs) * plane;
        double *out = j->out + row * npix;
        /* columns x with 0 <= x + q - pad_lo < w, rows y with 0 <= y + p - pad_lo < h */
        int x_lo = s->pad_lo - q, x_hi = s->w + s->pad_lo - q, y_lo = s->pad_lo - p, y_hi = s->h + s->pad_lo - p;
        x_lo = x_lo < 0 ? 0 : x_lo > ow ? ow : x_lo;
        x_hi = x_hi > ow ? ow : x_hi < x_lo ? x_lo : x_hi;
        y_lo = y_lo < 0 ? 0 : y_lo > s->oh ? s->oh : y_lo;
        y_hi = y_hi > s->oh ? s->oh : y_hi < y_lo ? y_lo : y_hi;
        fill(out, (int64_t)y_lo * ow, j->pad);
        fill(out + (int64_t)y_hi * ow, (int64_t)(s->oh - y_hi) * ow, j->pad);
        if (y_hi == y_lo || x_hi == x_lo) {
            fill(out + (int64_t)y_lo * ow, (int64_t)(y_hi - y_lo) * ow, j->pad);
            continue;
        }
        const float *first = src + (int64_t)(y_lo + p - s->pad_lo) * s->w + x_lo + q - s->pad_lo;
        if (ow == s->w) {
            /* output and input rows have the same length: the rows' values are one
             * contiguous run of the plane; widen it at once, then put the pad back
             * at the ends of each row (where the run wrapped into a neighbour row) */
            eltwise_widen(out + (int64_t)y_lo * ow + x_lo, first, (int64_t)(y_hi - y_lo - 1) * ow + x_hi - x_lo);
            for (int y = y_lo; y < y_hi; y++) {
                fill(out + (int64_t)y * ow, x_lo, j->pad);
                fill(out + (int64_t)y * ow + x_hi, ow - x_hi, j->pad);
            }
            continue;
        }
        for (int y = y_lo; y < y_hi; y++) {
            double *o = out + (int64_t)y * ow;
            fill(o, x_lo, j->pad);
            eltwise_widen(o + x_lo, first + (int64_t)(y - y_lo) * s->w, x_hi - x_lo);
            fill(o + x_hi, ow - x_hi, j->pad);
        }
    }
}

static int im2col_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                            int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    conv2d_shape s;
    geometry(p, &s);
    const int n = (int)p[P_N], C = (int)p[P_IN_CH], fs = s.fs;
    const int64_t npix = (int64_t)s.oh * s.ow, rows = (int64_t)n * C * fs * fs;
    hn_ref *ref = &refs[B_COLS];
    ref->n = rows * npix;
    ref->values = hn_ref_alloc_values(ref->n);
    ref->index = NULL;
    i2c_job job = {&s, bufs[B_IN], ref->values, p[P_PAD], fs};
    /* a thread writes 2^18 values at least */
    hn_ref_parallel(rows, 1 + ((int64_t)1 << 18) / npix, threads, i2c_part, &job);
    snprintf(ref->method, sizeof ref->method, "full");
    return 0;
}

static const char *const BENCH[] = {"in_ch=16,filter_size=3,h=224,w=224",
                                    "n=4,in_ch=8,filter_size=5,h=64,w=64,padding=-1", NULL};

const hn_op hn_op_im2col = {
    .name = "im2col",
    .doc = "the unroll of PMPP chapter 16: a convolution's input as the columns of one GEMM",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = im2col_shape,
    .flop = im2col_flop,
    .bytes = im2col_bytes,
    .dims = im2col_dims,
    .label = im2col_label,
    .generate = im2col_generate,
    .reference = im2col_reference,
};
