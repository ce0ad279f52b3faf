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
 *   - every kernel variant of kernels/conv2d_backward on the emulator, through the
 *     harness binary: `harness run` of each sweep (every row ok against the
 *     reference) and `harness debug` of each kernel (skipped, 77, without
 *     HARNESS_BIN).
 */
#include <stdint.h>
#include <stdlib.h>

#include "hn_test.h"
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

__attribute__((unused)) static void loop_bias(double *dbias, const float *dout, const geom *g) {
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

int main(void) {
    test_references();
    test_general_batch();
    return hn_test_exit();
}
