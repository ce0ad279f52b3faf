/*
 * test_conv2d_backward.c: the backward passes of conv2d.
 *   - the fp64 references (harness/ops/conv2d/ref.c: conv2d_ref_backward_data,
 *     conv2d_ref_backward_filter, conv2d_ref_general_batch) against direct loops
 *     written here from the definitions, on odd sizes, batches, every padding mode,
 *     even and odd filters, 1-sized dimensions, every kernel this CPU runs, small
 *     blocks, 1 to 3 threads, sampled pixels and columns;
 *   - the three operators (conv2d_backward_data, _filter, _bias): FLOP and byte
 *     counts, labels, dims, shape errors, the generator, the reference (full and
 *     sampled) against the same loops;
 *   - the identity the cuDNN filter baseline uses for a pad value other than 0
 *     (dfilter(in, v) = dfilter(in - v, 0) + v * dbias), on the same loops;
 *   - every kernel variant of kernels/conv2d_backward on the emulator, through the
 *     harness binary: `harness run` of each sweep (every row ok against the
 *     reference, no cuDNN baseline rows on the emulator) and `harness debug` of
 *     each kernel (skipped, 77, without HARNESS_BIN).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "hn_test.h"
#include "ops/conv2d/backward.h"
#include "ops/conv2d/ref.h"
#include "ops/op.h"
#include "util.h"

/* ------------------------------------------------------------------------------------
 * The definitions, written out.
 */

typedef struct {
    int n, in_ch, out_ch, fs, h, w, padding; /* padding -1: "same" */
    float pad;
} geom;

static int pad_lo(const geom *g) { return g->padding < 0 ? (g->fs - 1) / 2 : g->padding; }
static int out_h(const geom *g) { return g->padding < 0 ? g->h : g->h + 2 * g->padding - g->fs + 1; }
static int out_w(const geom *g) { return g->padding < 0 ? g->w : g->w + 2 * g->padding - g->fs + 1; }

/* din (n, in_ch, h, w): every output pixel that read input (y, x) through filter tap
 * (p, q) sends dout * filter back to it (the chain rule, term by term). */
static void loop_data(double *din, const float *dout, const float *filter, const geom *g) {
    const int oh = out_h(g), ow = out_w(g), r = pad_lo(g), fs = g->fs;
    for (int64_t i = 0; i < (int64_t)g->n * g->in_ch * g->h * g->w; i++) din[i] = 0;
    for (int b = 0; b < g->n; b++)
        for (int o = 0; o < g->out_ch; o++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++)
                    for (int c = 0; c < g->in_ch; c++)
                        for (int p = 0; p < fs; p++)
                            for (int q = 0; q < fs; q++) {
                                int yy = y + p - r, xx = x + q - r;
                                if (yy < 0 || yy >= g->h || xx < 0 || xx >= g->w) continue; /* the pad */
                                din[(((int64_t)b * g->in_ch + c) * g->h + yy) * g->w + xx] +=
                                    (double)dout[(((int64_t)b * g->out_ch + o) * oh + y) * ow + x] *
                                    filter[(((int64_t)o * g->in_ch + c) * fs + p) * fs + q];
                            }
}

/* dfilter (out_ch, in_ch, fs, fs): the forward's input under each tap, `pad` outside
 * the image, times dout, summed over the batch and the output pixels. */
static void loop_filter(double *dfilter, const float *in, const float *dout, const geom *g) {
    const int oh = out_h(g), ow = out_w(g), r = pad_lo(g), fs = g->fs;
    for (int o = 0; o < g->out_ch; o++)
        for (int c = 0; c < g->in_ch; c++)
            for (int p = 0; p < fs; p++)
                for (int q = 0; q < fs; q++) {
                    double s = 0;
                    for (int b = 0; b < g->n; b++)
                        for (int y = 0; y < oh; y++)
                            for (int x = 0; x < ow; x++) {
                                int yy = y + p - r, xx = x + q - r;
                                double v = yy >= 0 && yy < g->h && xx >= 0 && xx < g->w
                                               ? in[(((int64_t)b * g->in_ch + c) * g->h + yy) * g->w + xx]
                                               : g->pad;
                                s += v * dout[(((int64_t)b * g->out_ch + o) * oh + y) * ow + x];
                            }
                    dfilter[(((int64_t)o * g->in_ch + c) * fs + p) * fs + q] = s;
                }
}

static void loop_bias(double *dbias, const float *dout, const geom *g) {
    const int64_t npix = (int64_t)out_h(g) * out_w(g);
    for (int o = 0; o < g->out_ch; o++) {
        double s = 0;
        for (int b = 0; b < g->n; b++)
            for (int64_t j = 0; j < npix; j++) s += dout[((int64_t)b * g->out_ch + o) * npix + j];
        dbias[o] = s;
    }
}

static float *random_floats(int64_t n, uint64_t *seed) {
    float *v = xmalloc(sizeof(float) * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) v[i] = (float)(4.0 * hn_rand_unit(seed) - 2.0);
    return v;
}

/* The worst |a - b| relative to max(1, |b|). */
static double worst_diff(const double *a, const double *b, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / (fabs(b[i]) > 1 ? fabs(b[i]) : 1);
        if (!(d <= worst)) worst = d;
    }
    return worst;
}

/* ------------------------------------------------------------------------------------
 * The references.
 */

/* Odd sizes, batches, every padding mode ("same" with odd and even filters, valid,
 * explicit, padding as large as the filter and larger), 1-sized dimensions, channel
 * counts that fill no kernel panel (8, 6, 4 rows; 24, 8, 4 columns) evenly, K on both
 * sides of the 192-step block, filters larger than the image. */
static const geom shapes[] = {
    {1, 1, 1, 1, 1, 1, -1, 0.0f},   {1, 1, 1, 3, 1, 1, -1, 0.5f},   {2, 3, 2, 3, 9, 7, -1, 0.0f},
    {2, 2, 3, 4, 6, 5, -1, 0.5f},   {3, 2, 5, 3, 7, 9, 0, 0.0f},    {2, 1, 1, 5, 5, 6, 2, -1.0f},
    {1, 3, 2, 2, 5, 4, 1, 0.25f},   {3, 2, 2, 1, 1, 3, 0, 0.0f},    {2, 2, 3, 1, 3, 4, 2, 0.5f},
    {1, 2, 3, 3, 4, 3, 3, 0.75f},   {2, 37, 19, 3, 13, 17, -1, 0.5f}, {3, 5, 9, 9, 13, 17, 0, 0.0f},
    {1, 4, 13, 2, 11, 29, 1, -0.5f}, {4, 6, 17, 5, 3, 31, 2, 0.25f}, {2, 16, 16, 3, 12, 40, -1, 0.0f},
    {5, 1, 30, 3, 1, 50, 1, 0.5f} /* 1-high input and output, filter taller than the image */,
    {1, 1, 1, 7, 3, 3, 3, 1.0f} /* the output sees mostly padding */,
};

typedef struct {
    const char *name;
    conv2d_ref_opts opts;
    int threads;
} setting;

static const setting settings[] = {
    {"auto, 1 thread", {0}, 1},
    {"own, 2 threads", {.gemm = CONV2D_GEMM_OWN}, 2},
    {"own generic, 3 threads, small blocks", {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_GENERIC, .chunk_pix = 5}, 3},
    {"own avx2, 2 threads, blocks of 7", {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_AVX2, .chunk_pix = 7}, 2},
    {"blas (own when not linked), 2 threads", {.gemm = CONV2D_GEMM_BLAS}, 2},
};

static void ref_case(const geom *g, const setting *st) {
    const int oh = out_h(g), ow = out_w(g), fs = g->fs;
    const int64_t n_in = (int64_t)g->n * g->in_ch * g->h * g->w, n_f = (int64_t)g->out_ch * g->in_ch * fs * fs,
                  n_out = (int64_t)g->n * g->out_ch * oh * ow;
    uint64_t seed = 99 + (uint64_t)(g - shapes);
    float *in = random_floats(n_in, &seed), *filter = random_floats(n_f, &seed), *dout = random_floats(n_out, &seed);
    double *want = xmalloc(sizeof(double) * (size_t)(n_in > n_f ? n_in : n_f));
    double *got = xmalloc(sizeof(double) * (size_t)(n_in > n_f ? n_in : n_f));
    conv2d_shape sh;
    conv2d_ref_shape(&sh, g->h, g->w, fs, g->padding);
    CHECK(sh.oh == oh && sh.ow == ow && sh.pad_lo == pad_lo(g));

    loop_data(want, dout, filter, g);
    conv2d_ref_backward_data(got, NULL, (int64_t)g->h * g->w, dout, filter, g->n, g->in_ch, g->out_ch, &sh,
                             st->threads, &st->opts);
    double d = worst_diff(got, want, n_in);
    CHECK_MSG(d < 1e-12, "data n %d %d<-%d fs %d %dx%d padding %d (%s): worst %g", g->n, g->in_ch, g->out_ch, fs, g->h,
              g->w, g->padding, st->name, d);

    /* At some pixels only (any order, repeats): every image, every channel. */
    int64_t pix[5] = {(int64_t)g->h * g->w - 1, 0, (int64_t)g->h * g->w / 2, 0, (int64_t)g->w - 1};
    double *at = xmalloc(sizeof(double) * (size_t)g->n * g->in_ch * 5);
    conv2d_ref_backward_data(at, pix, 5, dout, filter, g->n, g->in_ch, g->out_ch, &sh, st->threads, &st->opts);
    int bad = 0;
    for (int b = 0; b < g->n; b++)
        for (int c = 0; c < g->in_ch; c++)
            for (int j = 0; j < 5; j++)
                bad += fabs(at[((int64_t)b * g->in_ch + c) * 5 + j] -
                            want[((int64_t)b * g->in_ch + c) * g->h * g->w + pix[j]]) > 1e-12;
    CHECK_MSG(bad == 0, "data at pixels, %s: %d wrong", st->name, bad);
    free(at);

    loop_filter(want, in, dout, g);
    conv2d_ref_backward_filter(got, NULL, (int64_t)g->in_ch * fs * fs, in, dout, g->n, g->in_ch, g->out_ch, &sh,
                               g->pad, st->threads, &st->opts);
    d = worst_diff(got, want, n_f);
    CHECK_MSG(d < 1e-12, "filter n %d %d->%d fs %d %dx%d padding %d pad %g (%s): worst %g", g->n, g->in_ch, g->out_ch,
              fs, g->h, g->w, g->padding, (double)g->pad, st->name, d);

    /* Some columns only: the last, the first, every third. */
    const int k = g->in_ch * fs * fs;
    int64_t *cols = xmalloc(sizeof(int64_t) * (size_t)(k + 2));
    int nc = 0;
    cols[nc++] = k - 1;
    cols[nc++] = 0;
    for (int j = 2; j < k; j += 3) cols[nc++] = j;
    double *part = xmalloc(sizeof(double) * (size_t)g->out_ch * nc);
    conv2d_ref_backward_filter(part, cols, nc, in, dout, g->n, g->in_ch, g->out_ch, &sh, g->pad, st->threads,
                               &st->opts);
    bad = 0;
    for (int o = 0; o < g->out_ch; o++)
        for (int j = 0; j < nc; j++) bad += fabs(part[(int64_t)o * nc + j] - want[(int64_t)o * k + cols[j]]) > 1e-9;
    CHECK_MSG(bad == 0, "filter at columns, %s: %d wrong", st->name, bad);
    free(part);
    free(cols);

    free(in), free(filter), free(dout), free(want), free(got);
}

static void test_references(void) {
    for (size_t s = 0; s < HN_ARRAY_LEN(settings); s++)
        for (size_t i = 0; i < HN_ARRAY_LEN(shapes); i++) ref_case(&shapes[i], &settings[s]);
}

/* The batched forward against the per-image one (which the forward's tests check). */
static void test_general_batch(void) {
    const int n = 3, in_ch = 4, out_ch = 5, h = 9, w = 11, fs = 3;
    uint64_t seed = 5;
    float *in = random_floats((int64_t)n * in_ch * h * w, &seed), *f = random_floats(out_ch * in_ch * fs * fs, &seed);
    conv2d_shape sh;
    conv2d_ref_shape(&sh, h, w, fs, 1);
    const int64_t npix = (int64_t)sh.oh * sh.ow;
    double *batch = xmalloc(sizeof(double) * (size_t)(n * out_ch * npix)), *one = xmalloc(sizeof(double) * (size_t)(out_ch * npix));
    conv2d_ref_general_batch(batch, NULL, npix, in, f, n, in_ch, out_ch, &sh, 0.25f, 2, NULL);
    for (int b = 0; b < n; b++) {
        conv2d_ref_general(one, NULL, npix, in + (int64_t)b * in_ch * h * w, f, in_ch, out_ch, &sh, 0.25f, 1, NULL);
        CHECK(worst_diff(batch + (int64_t)b * out_ch * npix, one, out_ch * npix) < 1e-13);
    }
    free(in), free(f), free(batch), free(one);
}

static void test_bias_reference(void) {
    static const geom g[] = {{1, 0, 1, 1, 1, 1, -1, 0}, {3, 0, 5, 3, 7, 9, 0, 0}, {2, 0, 3, 1, 300, 301, 2, 0}};
    for (size_t i = 0; i < HN_ARRAY_LEN(g); i++) {
        const int64_t npix = (int64_t)out_h(&g[i]) * out_w(&g[i]), n_out = (int64_t)g[i].n * g[i].out_ch * npix;
        uint64_t seed = 7 + i;
        float *dout = random_floats(n_out, &seed);
        double want[8], got[8];
        loop_bias(want, dout, &g[i]);
        for (int isa = CONV2D_ISA_BEST; isa <= CONV2D_ISA_AVX512; isa++)
            for (int threads = 1; threads <= 3; threads++) {
                conv2d_ref_backward_bias(got, dout, g[i].n, g[i].out_ch, npix, threads, (conv2d_isa)isa);
                CHECK_MSG(worst_diff(got, want, g[i].out_ch) < 1e-12, "bias case %zu isa %d threads %d", i, isa,
                          threads);
            }
        free(dout);
    }
}

/* ------------------------------------------------------------------------------------
 * The operators.
 */

/* Parameters of op by name (absent ones are not set); the rest at 0. */
static void params(const hn_op *op, double *p, const geom *g) {
    for (int i = 0; i < op->n_params; i++) p[i] = 0;
    const struct {
        const char *name;
        double v;
    } v[] = {{"n", g->n}, {"in_ch", g->in_ch}, {"out_ch", g->out_ch}, {"filter_size", g->fs},
             {"h", g->h}, {"w", g->w},         {"padding", g->padding}, {"pad", g->pad}};
    for (size_t i = 0; i < HN_ARRAY_LEN(v); i++) {
        int k = hn_op_param_index(op, v[i].name);
        if (k >= 0) p[k] = v[i].v;
    }
}

static const hn_op *find(const char *name) {
    const hn_op *op = hn_op_find(name);
    CHECK_MSG(op != NULL, "operator %s is not registered", name);
    return op;
}

static void test_counts_labels_shapes(void) {
    const hn_op *data = find("conv2d_backward_data"), *filt = find("conv2d_backward_filter"),
                *bias = find("conv2d_backward_bias");
    if (!data || !filt || !bias) return;
    double p[32];
    int64_t counts[16], dims[4];
    hn_err err;
    char label[128];

    /* A batch of 2, 3 -> 4 channels, 5x5 filter, 7x11 image, padding 1: 5x9 output. */
    const geom g = {2, 3, 4, 5, 7, 11, 1, 0.5f};
    const double flop = 2.0 * 2 * 3 * 4 * 5 * 9 * 25;
    params(data, p, &g);
    CHECK(data->shape(p, counts, &err) == 0);
    CHECK_INT(counts[hn_op_buffer_index(data, "dout")], 2 * 4 * 5 * 9);
    CHECK_INT(counts[hn_op_buffer_index(data, "filter")], 4 * 3 * 25);
    CHECK_INT(counts[hn_op_buffer_index(data, "din")], 2 * 3 * 7 * 11);
    CHECK_NEAR(data->flop(p), flop, 0);
    CHECK_NEAR(data->bytes(p), 4.0 * (2 * 4 * 5 * 9 + 4 * 3 * 25 + 2 * 3 * 7 * 11), 0);
    data->label(p, label, sizeof label);
    CHECK_STR(label, "7x11x3 -> 4, f:5x5, n:2, p:1");
    CHECK_INT(data->dims(p, hn_op_buffer_index(data, "dout"), dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 4 && dims[2] == 5 && dims[3] == 9);
    CHECK_INT(data->dims(p, hn_op_buffer_index(data, "din"), dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 7 && dims[3] == 11);

    params(filt, p, &g);
    CHECK(filt->shape(p, counts, &err) == 0);
    CHECK_INT(counts[hn_op_buffer_index(filt, "in")], 2 * 3 * 7 * 11);
    CHECK_INT(counts[hn_op_buffer_index(filt, "dout")], 2 * 4 * 5 * 9);
    CHECK_INT(counts[hn_op_buffer_index(filt, "dfilter")], 4 * 3 * 25);
    CHECK_NEAR(filt->flop(p), flop, 0);
    CHECK_NEAR(filt->bytes(p), 4.0 * (2 * 4 * 5 * 9 + 4 * 3 * 25 + 2 * 3 * 7 * 11), 0);
    filt->label(p, label, sizeof label);
    CHECK_STR(label, "7x11x3 -> 4, f:5x5, n:2, p:1, pad:0.5");
    CHECK_INT(filt->dims(p, hn_op_buffer_index(filt, "dfilter"), dims), 4);
    CHECK(dims[0] == 4 && dims[1] == 3 && dims[2] == 5 && dims[3] == 5);
    p[hn_op_param_index(filt, "pad")] = NAN;
    CHECK(filt->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "pad = nan");

    params(bias, p, &g);
    CHECK(bias->shape(p, counts, &err) == 0);
    CHECK_INT(counts[hn_op_buffer_index(bias, "dout")], 2 * 4 * 5 * 9);
    CHECK_INT(counts[hn_op_buffer_index(bias, "dbias")], 4);
    CHECK_NEAR(bias->flop(p), 2 * 4 * 5 * 9, 0);
    CHECK_NEAR(bias->bytes(p), 4.0 * (2 * 4 * 5 * 9 + 4), 0);
    bias->label(p, label, sizeof label);
    CHECK_STR(label, "7x11 -> 4, f:5x5, n:2, p:1");
    CHECK_INT(bias->dims(p, hn_op_buffer_index(bias, "dbias"), dims), 1);
    CHECK_INT(dims[0], 4);
    CHECK(hn_op_param_index(bias, "in_ch") < 0);

    /* "Same" (the default label has no padding) with an even filter. */
    const geom same = {1, 2, 3, 4, 6, 5, -1, 0};
    params(data, p, &same);
    CHECK(data->shape(p, counts, &err) == 0);
    CHECK_INT(counts[hn_op_buffer_index(data, "dout")], 3 * 6 * 5);
    data->label(p, label, sizeof label);
    CHECK_STR(label, "6x5x2 -> 3, f:4x4");

    /* Errors name the parameter and its value, in every operator. */
    const hn_op *ops[] = {data, filt, bias};
    for (size_t i = 0; i < 3; i++) {
        const hn_op *op = ops[i];
        const geom bad_fit = {1, 1, 1, 9, 5, 5, 0, 0};
        params(op, p, &bad_fit);
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "does not fit a 5x5 image");
        CHECK_CONTAINS(err.msg, op->name);
        /* A filter that fits one side only. */
        params(op, p, &(geom){1, 1, 1, 3, 2, 9, 0, 0});
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "does not fit a 2x9 image (the output would be 0x7)");
        params(op, p, &(geom){1, 1, 1, 3, 9, 2, 0, 0});
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "does not fit a 9x2 image");
        /* 2^31 elements in a buffer are refused (the kernels index with int); 2^30 are not. */
        params(op, p, &(geom){2, 1, 1, 1, 32768, 32768, 0, 0});
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "would have 2147483648 elements");
        params(op, p, &(geom){1, 1, 1, 1, 32768, 32768, 0, 0});
        CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
        /* padding up to 2^20 (here refused for the buffer's size, not for the
         * padding), not past it */
        params(op, p, &(geom){1, 1, 1, 1, 1, 1, 1 << 20, 0});
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "more than 2^31-1");
        params(op, p, &(geom){1, 1, 1, 1, 1, 1, (1 << 20) + 1, 0});
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "padding = 1.04858e+06 must be");
        const geom fits = {1, 1, 1, 9, 5, 5, 2, 0}; /* 5 + 4 - 9 + 1 = 1 */
        params(op, p, &fits);
        CHECK(op->shape(p, counts, &err) == 0);
        const geom bad_padding = {1, 1, 1, 3, 5, 5, -2, 0};
        params(op, p, &bad_padding);
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "padding = -2");
        const geom zero_out = {1, 1, 0, 3, 5, 5, -1, 0};
        params(op, p, &zero_out);
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "out_ch = 0");
        const geom half_n = {1, 1, 1, 3, 5, 5, -1, 0};
        params(op, p, &half_n);
        p[hn_op_param_index(op, "n")] = 1.5;
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "n = 1.5");
        const geom huge = {64, 512, 512, 3, 512, 512, -1, 0};
        params(op, p, &huge);
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "more than 2^31-1");
        const geom vast = {1 << 30, 1 << 30, 1 << 30, 1, 1 << 30, 1 << 30, 0, 0}; /* products past 2^64 */
        params(op, p, &vast);
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "more than 2^31-1");
    }
    params(data, p, &(geom){1, 0, 1, 3, 5, 5, -1, 0});
    CHECK(data->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "in_ch = 0");
}

/* The operator's buffers for g, generated from seed. */
static void **make_bufs(const hn_op *op, const geom *g, double *p, int64_t *counts, uint64_t seed) {
    params(op, p, g);
    hn_err err;
    CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
    void **bufs = xcalloc(16, sizeof *bufs);
    for (int i = 0; i < op->n_buffers; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, sizeof(float));
    op->generate(p, bufs, seed);
    return bufs;
}

static void free_bufs(const hn_op *op, void **bufs, hn_ref *refs) {
    for (int i = 0; i < op->n_buffers; i++) {
        if (refs) hn_ref_free(&refs[i]);
        free(bufs[i]);
    }
    free(bufs);
}

/* The operator's reference (full, or sampled under a tiny budget) against the loops;
 * a sample's values equal the full reference's at their elements. */
static void op_case(const hn_op *op, const geom *g, int sampled) {
    double p[32];
    int64_t counts[16];
    void **bufs = make_bufs(op, g, p, counts, 11);
    hn_ref refs[16] = {{0}};
    hn_err err;
    CHECK(op->reference(p, bufs, refs, sampled ? 1e-9 : 1e9, 11, 2, &err) == 0);
    const int out = op->n_buffers - 1; /* every operator's output is its last buffer */
    CHECK(op->buffers[out].role == HN_BUF_OUT);
    double *want = xcalloc((size_t)counts[out] + 1, sizeof *want);
    if (strcmp(op->name, "conv2d_backward_data") == 0)
        loop_data(want, bufs[hn_op_buffer_index(op, "dout")], bufs[hn_op_buffer_index(op, "filter")], g);
    else if (strcmp(op->name, "conv2d_backward_filter") == 0)
        loop_filter(want, bufs[hn_op_buffer_index(op, "in")], bufs[hn_op_buffer_index(op, "dout")], g);
    else
        loop_bias(want, bufs[hn_op_buffer_index(op, "dout")], g);
    const hn_ref *r = &refs[out];
    if (sampled && strcmp(op->name, "conv2d_backward_bias") != 0) {
        CHECK_MSG(r->index && r->n < counts[out], "%s: expected a sample, got %s", op->name, r->method);
        CHECK_CONTAINS(r->method, "sampled");
    } else {
        CHECK(r->index == NULL && r->n == counts[out]);
        CHECK_STR(r->method, "full");
    }
    double worst = 0;
    for (int64_t k = 0; k < r->n; k++) {
        int64_t e = r->index ? r->index[k] : k;
        CHECK(e >= 0 && e < counts[out]);
        double d = fabs(r->values[k] - want[e]) / (fabs(want[e]) > 1 ? fabs(want[e]) : 1);
        if (!(d <= worst)) worst = d;
    }
    CHECK_MSG(worst < 1e-12, "%s n %d %d->%d fs %d %dx%d padding %d pad %g%s: worst %g", op->name, g->n, g->in_ch,
              g->out_ch, g->fs, g->h, g->w, g->padding, (double)g->pad, sampled ? " (sampled)" : "", worst);
    free(want);
    free_bufs(op, bufs, refs);
}

static void test_operator_references(void) {
    const char *names[] = {"conv2d_backward_data", "conv2d_backward_filter", "conv2d_backward_bias"};
    for (size_t i = 0; i < 3; i++) {
        const hn_op *op = find(names[i]);
        if (!op) continue;
        for (size_t s = 0; s < HN_ARRAY_LEN(shapes); s++) op_case(op, &shapes[s], 0);
    }
    /* Sampled: large enough that a sample is smaller than the whole. */
    const geom big_data = {2, 3, 4, 3, 50, 61, 0, 0};
    op_case(find("conv2d_backward_data"), &big_data, 1);
    const geom big_filter = {2, 30, 3, 3, 9, 10, 1, -0.5f};
    op_case(find("conv2d_backward_filter"), &big_filter, 1);
    op_case(find("conv2d_backward_bias"), &big_filter, 1); /* never sampled */
}

/* The identity cuDNN's filter baseline (conv2d_backward_filter/cudnn.c) rests on:
 * with pad v, X = (in - v inside, 0 outside) + v, so dfilter(in, v) = dfilter(in - v,
 * 0) + v * (dout summed over the batch and the pixels) for every (c, p, q). Checked
 * on the definitions' loop, in - v rounded to float as cuDNN's FP32 cudnnOpTensor
 * would (hence 1e-5, not 1e-12), on every shape (v = 0.5 where the shape's is 0). */
static void test_pad_as_shift(void) {
    for (size_t i = 0; i < HN_ARRAY_LEN(shapes); i++) {
        geom g = shapes[i];
        if (g.pad == 0.0f) g.pad = 0.5f;
        const int oh = out_h(&g), ow = out_w(&g), fs = g.fs;
        const int64_t n_in = (int64_t)g.n * g.in_ch * g.h * g.w, n_f = (int64_t)g.out_ch * g.in_ch * fs * fs,
                      n_out = (int64_t)g.n * g.out_ch * oh * ow;
        uint64_t seed = 7 + i;
        float *in = random_floats(n_in, &seed), *dout = random_floats(n_out, &seed);
        float *shifted = xmalloc(sizeof(float) * (size_t)(n_in + 1));
        for (int64_t j = 0; j < n_in; j++) shifted[j] = in[j] - g.pad;
        double *want = xmalloc(sizeof(double) * (size_t)n_f), *got = xmalloc(sizeof(double) * (size_t)n_f);
        double *dbias = xmalloc(sizeof(double) * (size_t)g.out_ch);
        loop_filter(want, in, dout, &g);
        geom zero = g;
        zero.pad = 0.0f;
        loop_filter(got, shifted, dout, &zero);
        loop_bias(dbias, dout, &g);
        for (int64_t j = 0; j < n_f; j++) got[j] += g.pad * dbias[j / ((int64_t)g.in_ch * fs * fs)];
        double d = worst_diff(got, want, n_f);
        CHECK_MSG(d < 1e-5, "pad as a shift: shape %zu (pad %g): worst %g", i, (double)g.pad, d);
        free(in), free(dout), free(shifted), free(want), free(got), free(dbias);
    }
}

/* The sampled data reference: every border pixel (where the window leaves dout) of
 * every image and channel, plus at least 1024 random ones. */
/* conv2d_bwd_sample_pixels directly: in increasing order, no pixel twice, every
 * border pixel (a "same" 5x5 filter: the outer 2 rows and columns) and
 * n_random others; at least 1024 random ones, at most all there are. */
static void test_sample_pixels(void) {
    conv2d_shape s;
    conv2d_ref_shape(&s, 100, 120, 5, -1);
    const int64_t border = 100 * 120 - 96 * 116;
    static const int64_t ASK[] = {3000, 10, 1000000};
    static const int64_t GET[] = {3000, 1024, 96 * 116};
    for (int c = 0; c < 3; c++) {
        int64_t n_sel = -1, n_border = -1;
        int64_t *pix = conv2d_bwd_sample_pixels(&s, ASK[c], 7, &n_sel, &n_border);
        CHECK_INT(n_border, border);
        CHECK_INT(n_sel, border + GET[c]);
        int64_t in_border = 0, out_of_order = 0;
        for (int64_t i = 0; i < n_sel; i++) {
            const int64_t y = pix[i] / 120, x = pix[i] % 120;
            in_border += y < 2 || y >= 98 || x < 2 || x >= 118;
            out_of_order += pix[i] < 0 || pix[i] >= 100 * 120 || (i > 0 && pix[i] <= pix[i - 1]);
        }
        CHECK_INT(in_border, border);
        CHECK_INT(out_of_order, 0);
        free(pix);
    }
}

static void test_sampled_data_pixels(void) {
    const hn_op *op = find("conv2d_backward_data");
    if (!op) return;
    const geom g = {2, 2, 3, 5, 60, 70, 0, 0}; /* valid 5x5: din's border is 4 wide */
    double p[32];
    int64_t counts[16];
    void **bufs = make_bufs(op, &g, p, counts, 3);
    hn_ref refs[16] = {{0}};
    hn_err err;
    CHECK(op->reference(p, bufs, refs, 1e-9, 3, 1, &err) == 0);
    const hn_ref *r = &refs[hn_op_buffer_index(op, "din")];
    const int64_t border_per_plane = 60 * 70 - 52 * 62;
    int64_t border = 0;
    for (int64_t k = 0; k < r->n; k++) {
        int64_t pix = r->index[k] % (60 * 70), y = pix / 70, x = pix % 70;
        border += y < 4 || y >= 56 || x < 4 || x >= 66;
    }
    CHECK_INT(border, 2 * 2 * border_per_plane);
    CHECK_INT(r->n, 2 * 2 * (border_per_plane + 1024));
    free_bufs(op, bufs, refs);
}

static void test_generator(void) {
    const hn_op *op = find("conv2d_backward_filter");
    if (!op) return;
    const geom g = {2, 3, 4, 3, 9, 7, -1, 0};
    double p[32];
    int64_t counts[16];
    void **a = make_bufs(op, &g, p, counts, 5), **b = make_bufs(op, &g, p, counts, 5), **c = make_bufs(op, &g, p, counts, 6);
    for (int i = 0; i < 2; i++) { /* the inputs */
        CHECK(memcmp(a[i], b[i], (size_t)counts[i] * 4) == 0);
        CHECK(memcmp(a[i], c[i], (size_t)counts[i] * 4) != 0);
    }
    free_bufs(op, a, NULL), free_bufs(op, b, NULL), free_bufs(op, c, NULL);
}

/* ------------------------------------------------------------------------------------
 * Through the harness binary: configs and kernels.
 */

/* Runs the harness with the NULL-terminated args; returns its exit status and its
 * output (stdout and stderr) in *out. */
static int harness(char **out, const char *const *args) {
    char *argv[24] = {getenv("HARNESS_BIN")};
    for (int i = 0; args[i] && i < 22; i++) argv[i + 1] = (char *)args[i];
    hn_sb sb;
    hn_sb_init(&sb);
    hn_err err;
    int rc = hn_spawn(argv, HN_SPAWN_STDOUT | HN_SPAWN_STDERR, &sb, &err);
    if (rc < 0) hn_sb_adds(&sb, err.msg);
    *out = hn_sb_detach(&sb);
    return rc;
}

/* Counts the CSV's rows, those whose status is "ok" and those skipped (over the
 * emulator's budget); prints the others. */
static void count_rows(const char *path, int *rows, int *ok, int *skipped) {
    hn_table t;
    hn_err err;
    *rows = *ok = *skipped = 0;
    if (hn_table_load(path, &t, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    *rows = t.n_rows;
    /* The operators' cuDNN baselines give the rows their speedup_vs_cudnn column,
     * but no rows of their own on the emulator (they run on the cuda backend only). */
    CHECK_MSG(hn_table_col(&t, "speedup_vs_cudnn") >= 0, "%s: no speedup_vs_cudnn column", path);
    for (int r = 0; r < t.n_rows; r++) {
        const char *variant = hn_table_get(&t, r, "variant");
        CHECK_MSG(strncmp(variant, "cudnn_", 6) != 0, "%s: a baseline row on the emulator: %s", path, variant);
        const char *status = hn_table_get(&t, r, "status");
        if (strcmp(status, "ok") == 0)
            (*ok)++;
        else if (strcmp(status, "skipped") == 0)
            (*skipped)++;
        else
            fprintf(stderr, "%s: case %s %s: %s: %s\n", path, hn_table_get(&t, r, "case"),
                    hn_table_get(&t, r, "variant"), status, hn_table_get(&t, r, "reason"));
    }
    hn_table_free(&t);
}

/* Every sweep on the emulator (one sample per row: the checks are what matter here),
 * every row ok but those over the emulator's budget; then `harness debug` of each
 * kernel on an odd case. */
static void test_kernels_on_emulator(const char *tmp) {
    static const struct {
        const char *config, *kernels[2], *set;
        int rows, min_ok;
    } sweeps[] = {
        {"configs/conv2d_backward_data_sweep.json",
         {"conv2d_bwd_data_naive", "conv2d_bwd_data_tiled"},
         "n=2,in_ch=5,out_ch=3,filter_size=4,h=9,w=18,padding=-1",
         60, 40},
        {"configs/conv2d_backward_filter_sweep.json",
         {"conv2d_bwd_filter_naive", "conv2d_bwd_filter_block_reduce"},
         "n=2,in_ch=3,out_ch=2,filter_size=3,h=7,w=9,padding=2,pad=0.5",
         48, 36},
        {"configs/conv2d_backward_bias_sweep.json",
         {"conv2d_bwd_bias_naive", "conv2d_bwd_bias_block_reduce"},
         "n=3,out_ch=5,filter_size=2,h=13,w=1,padding=1",
         48, 48},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(sweeps); i++) {
        char *csv = xasprintf("%s/bwd%zu.csv", tmp, i), *out = NULL;
        const char *run[] = {"run", sweeps[i].config, "--backend", "emu", "--warmup", "0", "--min-samples", "1",
                             "--max-samples", "1", "--out", csv, NULL};
        int rc = harness(&out, run);
        CHECK_MSG(rc == 0, "run %s exited %d:\n%s", sweeps[i].config, rc, out);
        int rows, ok, skipped;
        count_rows(csv, &rows, &ok, &skipped);
        CHECK_MSG(rows == sweeps[i].rows && ok + skipped == rows && ok >= sweeps[i].min_ok,
                  "%s: %d rows (want %d), %d ok (want at least %d), %d skipped", sweeps[i].config, rows,
                  sweeps[i].rows, ok, sweeps[i].min_ok, skipped);
        free(out);
        free(csv);
        for (int k = 0; k < 2; k++) {
            const char *debug[] = {"debug", sweeps[i].config, "--kernel", sweeps[i].kernels[k], "--set", sweeps[i].set,
                                   "--backend", "emu", NULL};
            rc = harness(&out, debug);
            CHECK_MSG(rc == 0, "debug %s exited %d:\n%s", sweeps[i].kernels[k], rc, out);
            CHECK_CONTAINS(out, "verdict: output matches the reference");
            CHECK_CONTAINS(out, "block ");
            free(out);
        }
    }
}

/* A config with a case whose filter does not fit: `harness list` shows the
 * operator's message naming the values on that case (the framework lists the case
 * with its error, exit 0; `run` makes it a row with the message as its reason). */
static void test_bad_config(const char *tmp) {
    char *path = xasprintf("%s/bwd_bad.json", tmp), *out = NULL;
    const char *json =
        "{\"name\": \"bad\", \"op\": \"conv2d_backward_filter\",\n"
        " \"axes\": {\"in_ch\": 1, \"out_ch\": 1, \"filter_size\": 9, \"h\": 5, \"w\": 5, \"padding\": 0},\n"
        " \"defaults\": {\"file\": \"bwd_bad.cu\", \"kernel\": \"k\", \"block\": [1], \"grid\": [1], \"args\": []},\n"
        " \"variants\": [{}]}\n";
    char *cu = xasprintf("%s/bwd_bad.cu", tmp);
    hn_err err;
    CHECK(hn_write_file(cu, "", 0, &err) == 0);
    free(cu);
    CHECK(hn_write_file(path, json, strlen(json), &err) == 0);
    const char *list[] = {"list", path, NULL};
    int rc = harness(&out, list);
    CHECK_MSG(rc == 0 || rc == 2, "list of a config that does not fit exited %d:\n%s", rc, out);
    CHECK_CONTAINS(out, "conv2d_backward_filter: a 9x9 filter with padding 0 does not fit a 5x5 image");
    free(out);
    free(path);
}

int main(void) {
    test_references();
    test_general_batch();
    test_bias_reference();
    test_counts_labels_shapes();
    test_operator_references();
    test_pad_as_shift();
    test_sampled_data_pixels();
    test_sample_pixels();
    test_generator();
    const char *bin = getenv("HARNESS_BIN"), *tmp_env = getenv("HARNESS_TMP");
    if (!bin || !*bin) {
        fprintf(stderr, "HARNESS_BIN not set: the configs and kernels are not run\n");
        return hn_test_failures ? hn_test_exit() : 77;
    }
    char *tmp = xasprintf("%s/conv2d_backward", tmp_env && *tmp_env ? tmp_env : "/tmp");
    hn_err err;
    if (hn_mkdirs(tmp, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
    } else {
        test_bad_config(tmp);
        test_kernels_on_emulator(tmp);
    }
    free(tmp);
    return hn_test_exit();
}
