/* test_conv2d_ref.c: the fp64 conv2d reference (harness/ops/conv2d_ref.c) against an
 * independent naive loop, on every multiply and kernel this machine runs. */
#include <stdint.h>

#include "hn_test.h"
#include "ops/conv2d/ref.h"
#include "util.h"

typedef struct {
    int in_ch, out_ch, h, w, fs;
    float pad;
} shape;

/* Odd sizes, filters of 1..9 (even ones too, and larger than the image), channel
 * counts that fill no kernel panel evenly, K = in_ch*fs*fs on both sides of the
 * multiply's step block (192), rows wider than a 24-pixel panel. */
static const shape shapes[] = {
    {1, 1, 1, 1, 1, 0.0f},     {1, 1, 1, 1, 3, 0.5f},      {2, 3, 3, 2, 3, 0.5f},
    {3, 2, 7, 5, 5, 0.5f},     {37, 19, 13, 17, 3, 0.5f},  {4, 5, 7, 5, 2, 0.5f},
    {3, 4, 13, 17, 4, -1.25f}, {2, 3, 5, 7, 7, 0.5f},      {2, 9, 6, 6, 9, 0.5f},
    {5, 1, 13, 17, 9, 0.5f},   {1, 12, 13, 17, 1, 0.0f},   {37, 19, 13, 17, 1, 0.5f},
    {3, 10, 9, 50, 3, 0.5f},   {1, 2, 40, 1, 3, 0.5f},     {6, 17, 3, 31, 5, 0.25f},
    {1, 8, 11, 29, 9, 0.0f},   {16, 16, 12, 40, 3, -0.5f},
};

/* The definition, written out: out (out_ch, h, w) and, per output, the sum of the
 * products' magnitudes (the scale of the rounding error). */
static void naive(double *out, double *mag, const float *in, const float *filter, const shape *s) {
    const int r = (s->fs - 1) / 2;
    for (int o = 0; o < s->out_ch; o++)
        for (int y = 0; y < s->h; y++)
            for (int x = 0; x < s->w; x++) {
                double acc = 0.0, m = 0.0;
                for (int c = 0; c < s->in_ch; c++)
                    for (int p = 0; p < s->fs; p++)
                        for (int q = 0; q < s->fs; q++) {
                            const int yy = y - r + p, xx = x - r + q;
                            const int inside = yy >= 0 && yy < s->h && xx >= 0 && xx < s->w;
                            const double v = inside ? (double)in[(c * s->h + yy) * s->w + xx]
                                                    : (double)s->pad;
                            const double f =
                                filter[((o * s->in_ch + c) * s->fs + p) * s->fs + q];
                            acc += v * f;
                            m += fabs(v * f);
                        }
                out[(o * s->h + y) * s->w + x] = acc;
                mag[(o * s->h + y) * s->w + x] = m;
            }
}

static void random_fill(float *v, int64_t n, uint64_t *seed) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)(4.0 * hn_rand_unit(seed) - 2.0);
}

/* The settings under test: every multiply and kernel, chunk sizes, threads. */
typedef struct {
    const char *name;
    conv2d_ref_opts opts;
    int threads;
} setting;

static const setting settings[] = {
    {"default, 1 thread", {0}, 1},
    {"default, all cores", {0}, 0},
    {"own best, 3 threads", {.gemm = CONV2D_GEMM_OWN}, 3},
    {"own generic", {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_GENERIC}, 2},
    {"own avx2", {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_AVX2}, 2},
    {"own avx512", {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_AVX512}, 2},
    {"blas", {.gemm = CONV2D_GEMM_BLAS}, 2},
    /* chunk boundaries: blocks that end mid-row and mid-panel, one pixel each, and
     * (OpenBLAS path) one or two input channels per im2col block */
    {"own, 5-pixel blocks", {.gemm = CONV2D_GEMM_OWN, .chunk_pix = 5}, 2},
    {"own generic, 7-pixel blocks",
     {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_GENERIC, .chunk_pix = 7}, 3},
    {"own avx2, 25-pixel blocks",
     {.gemm = CONV2D_GEMM_OWN, .isa = CONV2D_ISA_AVX2, .chunk_pix = 25}, 2},
    {"own, 1-pixel blocks", {.gemm = CONV2D_GEMM_OWN, .chunk_pix = 1}, 2},
    {"blas, 1 channel x 23 pixels", {.gemm = CONV2D_GEMM_BLAS, .chunk_ch = 1, .chunk_pix = 23}, 2},
    {"blas, 2 channels x 4 pixels", {.gemm = CONV2D_GEMM_BLAS, .chunk_ch = 2, .chunk_pix = 4}, 3},
};

/* got[o*n + j] against want at pixel pix[j] (pix NULL: j); returns failures. */
static int compare(const double *got, const double *want, const double *mag, const int64_t *pix,
                   int64_t n, const shape *s, const char *what) {
    int bad = 0;
    const int64_t hw = (int64_t)s->h * s->w;
    for (int o = 0; o < s->out_ch; o++)
        for (int64_t j = 0; j < n; j++) {
            const int64_t i = o * hw + (pix ? pix[j] : j);
            const double g = got[o * n + j], tol = 1e-12 * (mag[i] > 1.0 ? mag[i] : 1.0);
            if (!(fabs(g - want[i]) <= tol)) {
                if (bad++ < 3)
                    fprintf(stderr,
                            "%s: in %d out %d %dx%d fs %d: o %d pixel %lld: %.17g want %.17g\n",
                            what, s->in_ch, s->out_ch, s->h, s->w, s->fs, o,
                            (long long)(pix ? pix[j] : j), g, want[i]);
            }
        }
    return bad;
}

static void test_against_naive(void) {
    for (size_t si = 0; si < HN_ARRAY_LEN(shapes); si++) {
        const shape *s = &shapes[si];
        const int64_t hw = (int64_t)s->h * s->w, n_out = s->out_ch * hw;
        uint64_t seed = 42 + si;
        float *in = xmalloc(sizeof(float) * s->in_ch * hw);
        float *filter = xmalloc(sizeof(float) * s->out_ch * s->in_ch * s->fs * s->fs);
        random_fill(in, s->in_ch * hw, &seed);
        random_fill(filter, (int64_t)s->out_ch * s->in_ch * s->fs * s->fs, &seed);
        double *want = xmalloc(sizeof(double) * n_out), *mag = xmalloc(sizeof(double) * n_out);
        naive(want, mag, in, filter, s);

        /* a random subset with repeats, out of order, and the border set */
        const int64_t n_rand = hw < 40 ? hw + 3 : 40;
        int64_t *rnd = xmalloc(sizeof(int64_t) * n_rand);
        for (int64_t j = 0; j < n_rand; j++) rnd[j] = (int64_t)hn_rand_below(&seed, hw);
        const int64_t n_border = conv2d_border_pixels(NULL, s->h, s->w, s->fs);
        int64_t *border = xmalloc(sizeof(int64_t) * (n_border ? n_border : 1));
        conv2d_border_pixels(border, s->h, s->w, s->fs);
        double *got = xmalloc(sizeof(double) * s->out_ch * (hw + n_rand)); /* >= either */

        for (size_t k = 0; k < HN_ARRAY_LEN(settings); k++) {
            const setting *st = &settings[k];
            char what[128];
            for (int64_t i = 0; i < n_out; i++) got[i] = NAN; /* every output is written */
            conv2d_forward_ref_opts(got, NULL, hw, in, filter, s->in_ch, s->out_ch, s->h, s->w,
                                    s->fs, s->pad, st->threads, &st->opts);
            snprintf(what, sizeof what, "full, %s", st->name);
            CHECK_MSG(compare(got, want, mag, NULL, hw, s, what) == 0, "%s", what);

            conv2d_forward_ref_opts(got, rnd, n_rand, in, filter, s->in_ch, s->out_ch, s->h,
                                    s->w, s->fs, s->pad, st->threads, &st->opts);
            snprintf(what, sizeof what, "random pixels, %s", st->name);
            CHECK_MSG(compare(got, want, mag, rnd, n_rand, s, what) == 0, "%s", what);

            if (n_border) {
                conv2d_forward_ref_opts(got, border, n_border, in, filter, s->in_ch, s->out_ch,
                                        s->h, s->w, s->fs, s->pad, st->threads, &st->opts);
                snprintf(what, sizeof what, "border pixels, %s", st->name);
                CHECK_MSG(compare(got, want, mag, border, n_border, s, what) == 0, "%s", what);
            }
        }

        /* the plain entry points */
        conv2d_forward_ref(got, in, filter, s->in_ch, s->out_ch, s->h, s->w, s->fs, s->pad, 0);
        CHECK(compare(got, want, mag, NULL, hw, s, "conv2d_forward_ref") == 0);
        conv2d_forward_ref_at(got, rnd, n_rand, in, filter, s->in_ch, s->out_ch, s->h, s->w,
                              s->fs, s->pad, 2);
        CHECK(compare(got, want, mag, rnd, n_rand, s, "conv2d_forward_ref_at") == 0);

        free(in), free(filter), free(want), free(mag), free(rnd), free(border), free(got);
    }
}

/* A shape big enough for several automatic blocks per thread, and sparse samples. */
static void test_automatic_blocks(void) {
    const shape s = {9, 21, 70, 90, 3, 0.5f};
    const int64_t hw = (int64_t)s.h * s.w, n_out = s.out_ch * hw;
    uint64_t seed = 7;
    float *in = xmalloc(sizeof(float) * s.in_ch * hw);
    float *filter = xmalloc(sizeof(float) * s.out_ch * s.in_ch * 9);
    random_fill(in, s.in_ch * hw, &seed);
    random_fill(filter, (int64_t)s.out_ch * s.in_ch * 9, &seed);
    double *want = xmalloc(sizeof(double) * n_out), *mag = xmalloc(sizeof(double) * n_out);
    double *got = xmalloc(sizeof(double) * n_out);
    naive(want, mag, in, filter, &s);
    const conv2d_gemm gemms[] = {CONV2D_GEMM_AUTO, CONV2D_GEMM_OWN, CONV2D_GEMM_BLAS};
    for (size_t g = 0; g < HN_ARRAY_LEN(gemms); g++) {
        const conv2d_ref_opts opts = {.gemm = gemms[g]};
        conv2d_forward_ref_opts(got, NULL, hw, in, filter, s.in_ch, s.out_ch, s.h, s.w, s.fs,
                                s.pad, 2, &opts);
        CHECK(compare(got, want, mag, NULL, hw, &s, "automatic blocks") == 0);
    }
    /* every 97th pixel: runs of one */
    int64_t pix[100];
    for (int j = 0; j < 100; j++) pix[j] = (int64_t)j * 97 % hw;
    conv2d_forward_ref_at(got, pix, 100, in, filter, s.in_ch, s.out_ch, s.h, s.w, s.fs, s.pad, 0);
    CHECK(compare(got, want, mag, pix, 100, &s, "sparse pixels") == 0);
    free(in), free(filter), free(want), free(mag), free(got);
}

/* Our multiply sums each output in one fixed order: the result does not depend on
 * the thread count or the block size. */
static void test_deterministic(void) {
    const shape s = {21, 13, 19, 33, 5, 0.5f}; /* K = 525: three step blocks */
    const int64_t hw = (int64_t)s.h * s.w, n_out = s.out_ch * hw;
    uint64_t seed = 99;
    float *in = xmalloc(sizeof(float) * s.in_ch * hw);
    float *filter = xmalloc(sizeof(float) * s.out_ch * s.in_ch * 25);
    random_fill(in, s.in_ch * hw, &seed);
    random_fill(filter, (int64_t)s.out_ch * s.in_ch * 25, &seed);
    double *first = xmalloc(sizeof(double) * n_out), *again = xmalloc(sizeof(double) * n_out);
    const conv2d_ref_opts one = {.gemm = CONV2D_GEMM_OWN};
    conv2d_forward_ref_opts(first, NULL, hw, in, filter, s.in_ch, s.out_ch, s.h, s.w, s.fs,
                            s.pad, 1, &one);
    const int64_t chunks[] = {0, 1, 5, 100};
    for (size_t i = 0; i < HN_ARRAY_LEN(chunks); i++)
        for (int threads = 2; threads <= 3; threads++) {
            const conv2d_ref_opts o = {.gemm = CONV2D_GEMM_OWN, .chunk_pix = chunks[i]};
            conv2d_forward_ref_opts(again, NULL, hw, in, filter, s.in_ch, s.out_ch, s.h, s.w,
                                    s.fs, s.pad, threads, &o);
            CHECK_MSG(memcmp(first, again, sizeof(double) * n_out) == 0,
                      "%d threads, %lld-pixel blocks", threads, (long long)chunks[i]);
        }
    free(in), free(filter), free(first), free(again);
}

static int64_t border_brute(int64_t *pix, int h, int w, int fs) {
    const int r = (fs - 1) / 2;
    int64_t n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int padded = 0; /* does the window reach outside? */
            for (int p = 0; p < fs; p++)
                for (int q = 0; q < fs; q++) {
                    int yy = y + p - r, xx = x + q - r;
                    if (yy < 0 || yy >= h || xx < 0 || xx >= w) padded = 1;
                }
            if (padded) pix[n++] = (int64_t)y * w + x;
        }
    return n;
}

static void test_border_pixels(void) {
    /* by hand */
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 1), 0);
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 3), 35 - 3 * 5);
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 5), 35 - 1 * 3);
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 7), 35);
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 9), 35);
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 2), 7 + 4); /* last row, last column */
    CHECK_INT(conv2d_border_pixels(NULL, 5, 7, 4), 35 - 2 * 4); /* 1 up/left, 2 down/right */
    CHECK_INT(conv2d_border_pixels(NULL, 1, 1, 1), 0);
    CHECK_INT(conv2d_border_pixels(NULL, 1, 1, 3), 1);
    CHECK_INT(conv2d_border_pixels(NULL, 1024, 1024, 9), 1024 * 1024 - 1016 * 1016);
    CHECK_INT(conv2d_border_pixels(NULL, 64, 128, 5), 64 * 128 - 60 * 124);
    int64_t pix[8];
    CHECK_INT(conv2d_border_pixels(pix, 3, 3, 3), 8);
    const int64_t want[8] = {0, 1, 2, 3, 5, 6, 7, 8};
    for (int i = 0; i < 8; i++) CHECK_INT(pix[i], want[i]);

    /* against the definition, in order */
    for (int h = 1; h <= 12; h++)
        for (int w = 1; w <= 12; w += 1)
            for (int fs = 1; fs <= 10; fs++) {
                int64_t got[144], ref[144];
                int64_t n = conv2d_border_pixels(got, h, w, fs);
                int64_t m = border_brute(ref, h, w, fs);
                CHECK_MSG(n == m, "%dx%d fs %d: %lld != %lld", h, w, fs, (long long)n,
                          (long long)m);
                for (int64_t i = 0; i < n && i < m; i++)
                    CHECK_MSG(got[i] == ref[i], "%dx%d fs %d: [%lld]", h, w, fs, (long long)i);
            }
}

static void test_method(void) {
    const char *m = conv2d_ref_method();
    CHECK(m != NULL && strstr(m, "im2col") != NULL);
    printf("conv2d reference: %s\n", m);
}

/* An empty pixel list needs no array and writes nothing (the header: pix may be
 * NULL when n_pix is 0). */
static void test_at_no_pixels(void) {
    const float in[4] = {1, 2, 3, 4}, filter[1] = {2};
    double out[2] = {-7.0, -7.0};
    conv2d_forward_ref_at(out, NULL, 0, in, filter, 1, 1, 2, 2, 1, 0.0f, 1);
    conv2d_forward_ref_at(NULL, NULL, 0, in, filter, 1, 1, 2, 2, 1, 0.0f, 1);
    CHECK(out[0] == -7.0 && out[1] == -7.0);
}

/* The bench's quick run (the small shapes, once each): it must agree with its own
 * naive loop (and OpenBLAS where linked), and each row's GFLOP must be the
 * convolution's 2 * in_ch * out_ch * img^2 * fs^2, recomputed here from the row's
 * own shape columns. */
static void test_bench_quick(void) {
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return;
    CHECK_INT(conv2d_ref_bench(f, 1), 0);
    rewind(f);
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        int ic, oc, fs, img;
        double gflop, t_own, r_own;
        char blas_s[32], blas_r[32], naive_r[32];
        if (sscanf(line, "%d %d %d %d %lf %lf %lf %31s %31s %31s", &ic, &oc, &fs, &img, &gflop,
                   &t_own, &r_own, blas_s, blas_r, naive_r) != 10)
            continue; /* the header lines */
        rows++;
        CHECK_MSG(strstr(line, "MISMATCH") == NULL, "%s", line);
        const double want = 2e-9 * ic * oc * (double)img * img * fs * fs;
        CHECK_MSG(fabs(gflop - want) <= 0.0005 + 1e-9 * want, "%s: GFLOP %g, want %g", line, gflop,
                  want);
        /* times are printed to 0.1 ms, so a fast run may show 0; rates are > 0 */
        CHECK_MSG(t_own >= 0.0 && r_own > 0.0, "%s", line);
        char *end, *end_r;
        const double t_blas = strtod(blas_s, &end), r_blas = strtod(blas_r, &end_r);
#if defined(HN_HAVE_OPENBLAS)
        CHECK_MSG(*end == '\0' && *end_r == '\0' && t_blas >= 0.0 && r_blas > 0.0,
                  "%s: OpenBLAS is linked: want its time and rate", line);
#else
        (void)t_blas, (void)r_blas;
        CHECK_MSG(strcmp(blas_s, "-") == 0 && strcmp(blas_r, "-") == 0, "%s", line);
#endif
        /* quick runs only the shapes small enough for the naive loop */
        const double r_naive = strtod(naive_r, &end);
        CHECK_MSG(*end == '\0' && r_naive > 0.0, "%s: want the naive loop's rate", line);
    }
    CHECK(rows >= 1);
    fclose(f);
}

int main(void) {
    test_method();
    test_border_pixels();
    test_against_naive();
    test_automatic_blocks();
    test_deterministic();
    test_at_no_pixels();
    test_bench_quick();
    return hn_test_exit();
}
