/*
 * test_emu_features.c: CUDA device-code features as real kernels use them, on
 * the CPU emulator, with kernels in tests/kernels/emufeat/:
 *   math.cu   the intrinsics of shim/hn_emu_math.h: directed-rounding arithmetic
 *             and conversions against C under fesetround, float and double to
 *             integer conversions saturating as PTX's cvt does (NaN -> 0), the
 *             inverse error functions, erfcx and the Bessel I0/I1 against their
 *             definitions, norms, __dp4a/__dp2a and the SIMD intrinsics against
 *             hand-computed words, min/max of long and unsigned long, sinpif and
 *             cospif (exact zeros and ones at integers and halves, as on a GPU);
 *   warpsync.cu  pre-Volta warp-synchronous code through volatile memory: the
 *             classic reduce6 with warpReduce(volatile float *) and no __syncwarp
 *             against the same float additions in a GPU's lockstep order, a
 *             volatile __shared__ flag spin answered by another warp of the block,
 *             a warp scan through volatile shared memory;
 *   libs.cu   CUB's BlockReduce (float sums bit for bit in CUB's order: warp
 *             shuffles at offsets 1, 2, 4 ..., then the warp totals in order),
 *             WarpReduce, BlockScan (aggregate, items per thread, a running
 *             prefix callback), WarpScan; cuda::atomic_ref and
 *             cuda::std::atomic_ref, with a same-block hand-off through them;
 *             cuda::std::numeric_limits<__half> and <__nv_bfloat16>; <cuda/std/bit>, <cuda/std/span>;
 *   groups.cu  a 16-lane tile's reduce then a warp's scan (overlapping masks
 *             pending at once, which is legal), partitions, ranks; a half-warp
 *             shuffle then __syncwarp() and a full-mask reduce; reduce_update_async
 *             and reduce_store_async into a cuda::atomic_ref;
 *   shapes.cu  warp intrinsics in a 10 x 7 block (a partial third warp), a grid
 *             of 70000 x 2 x 2 blocks, atomicAdd on float2 and float4;
 *   refused.cu  compile errors naming __isShared (at the user's line), CUB's
 *             block_load and <cuda/barrier>;
 * and every kernel file compiled by NVRTC for sm_90 (so each is valid CUDA).
 */
#define _GNU_SOURCE
#include <fenv.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "test_emu_common.h"

static hn_backend *be;
static int bad;
#define EXPECT(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond) && bad++ < 12) {                                                         \
            fprintf(stderr, "  mismatch: ");                                                 \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
        }                                                                                    \
    } while (0)

static char *feat_path(const char *name) {
    return xasprintf("%s/tests/kernels/emufeat/%s", emu_root(), name);
}

/* Compiles `file` with one kernel and loads it (the test stops on errors). */
static hn_kernel *load_one(const char *file, const char *name, hn_module_image *img) {
    char *path = feat_path(file);
    const char *names[] = {name};
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, names, 1, NULL, 0, img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    return emu_load(be, img, 0);
}

static void run(hn_kernel *k, unsigned threads, size_t shared, void **args) {
    hn_err err;
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, threads, 1, 1, shared, args, &err) == 0, "%s", err.msg);
}

static uint64_t seed = 777;
static float rand_float(void) { /* any sign, exponents from 2^-20 to 2^20 */
    double m = 1.0 + (double)hn_rand_below(&seed, 1u << 23) / (1u << 23);
    int e = (int)hn_rand_below(&seed, 41) - 20;
    return (float)(hn_rand_below(&seed, 2) ? -ldexp(m, e) : ldexp(m, e));
}
static unsigned fbits(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}
static uint64_t dbits(double d) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* ------------------------------------------------------------------------- */
/* math.cu: rounded */

#define ROUNDED_N 24
/* One operation under a rounding mode; volatile keeps it between the calls. */
#define UNDER(dst, mode, T, expr)                                                            \
    do {                                                                                     \
        volatile T r_;                                                                       \
        fesetround(mode);                                                                    \
        r_ = (expr);                                                                         \
        fesetround(FE_TONEAREST);                                                            \
        (dst) = r_;                                                                          \
    } while (0)

static void ref_rounded(float xa, float ya, float *f, double *d) {
    volatile float x = xa, y = ya;
    volatile double dx = x, dy = (double)ya * 1.0000001;
    volatile double q = dx / dy;
    int xi, yi;
    memcpy(&xi, &xa, 4);
    memcpy(&yi, &ya, 4);
    volatile unsigned long long u = 0xffffffffffffffffull - (unsigned long long)fbits(xa);
    volatile int vxi = xi, vyi = yi;
    volatile float ax = fabsf(xa);
    UNDER(f[0], FE_DOWNWARD, float, x + y);
    UNDER(f[1], FE_UPWARD, float, x + y);
    UNDER(f[2], FE_TOWARDZERO, float, x + y);
    UNDER(f[3], FE_DOWNWARD, float, x - y);
    UNDER(f[4], FE_UPWARD, float, x - y);
    UNDER(f[5], FE_DOWNWARD, float, x * y);
    UNDER(f[6], FE_UPWARD, float, x * y);
    UNDER(f[7], FE_TOWARDZERO, float, x * y);
    UNDER(f[8], FE_DOWNWARD, float, x / y);
    UNDER(f[9], FE_UPWARD, float, x / y);
    UNDER(f[10], FE_TOWARDZERO, float, x / y);
    UNDER(f[11], FE_DOWNWARD, float, sqrtf(ax));
    UNDER(f[12], FE_UPWARD, float, sqrtf(ax));
    UNDER(f[13], FE_DOWNWARD, float, 1.0f / y);
    UNDER(f[14], FE_UPWARD, float, 1.0f / y);
    UNDER(f[15], FE_TOWARDZERO, float, fmaf(x, y, x));
    UNDER(f[16], FE_DOWNWARD, float, fmaf(x, y, y));
    UNDER(f[17], FE_UPWARD, float, fmaf(x, x, y));
    UNDER(f[18], FE_DOWNWARD, float, (float)q);
    UNDER(f[19], FE_UPWARD, float, (float)q);
    UNDER(f[20], FE_TOWARDZERO, float, (float)q);
    UNDER(f[21], FE_DOWNWARD, float, (float)vxi);
    UNDER(f[22], FE_UPWARD, float, (float)vyi);
    UNDER(f[23], FE_TOWARDZERO, float, (float)u);
    UNDER(d[0], FE_DOWNWARD, double, dx + dy);
    UNDER(d[1], FE_UPWARD, double, dx * dy);
    UNDER(d[2], FE_TOWARDZERO, double, dx / dy);
}

static void test_rounded(void) {
    enum { N = 64 };
    float a[N], b[N];
    for (int i = 0; i < N; i++) a[i] = rand_float(), b[i] = rand_float();
    a[0] = 1.0f, b[0] = 3.0f; /* 1/3: every mode differs */
    a[1] = 16777216.0f, b[1] = 1.0f; /* 2^24 + 1: a tie */
    hn_module_image img;
    hn_kernel *k = load_one("math.cu", "rounded", &img);
    size_t words = (size_t)N * ROUNDED_N + (size_t)N * 3 * 2;
    hn_dptr da = emu_buf(be, a, sizeof a), db = emu_buf(be, b, sizeof b);
    hn_dptr dout = emu_buf(be, NULL, words * 4);
    void *args[] = {&da, &db, &dout};
    run(k, N, 0, args);
    unsigned *o = xmalloc(words * 4);
    emu_get(be, o, dout, words * 4);
    const uint64_t *q = (const uint64_t *)(o + N * ROUNDED_N);
    int differ = 0;
    for (int i = 0; i < N; i++) {
        float f[ROUNDED_N];
        double d[3];
        ref_rounded(a[i], b[i], f, d);
        for (int j = 0; j < ROUNDED_N; j++)
            EXPECT(o[i * ROUNDED_N + j] == fbits(f[j]), "rounded[%d] op %d of %a, %a: 0x%08x, want 0x%08x",
                   i, j, a[i], b[i], o[i * ROUNDED_N + j], fbits(f[j]));
        for (int j = 0; j < 3; j++)
            EXPECT(q[i * 3 + j] == dbits(d[j]), "rounded[%d] double op %d: 0x%016llx, want 0x%016llx", i,
                   j, (unsigned long long)q[i * 3 + j], (unsigned long long)dbits(d[j]));
        differ += f[0] != f[1];
    }
    /* the modes really differ (else the reference proves nothing) */
    CHECK_MSG(differ > N / 2, "rd and ru agree on %d of %d sums", N - differ, N);
    free(o);
    be->ops->free(be, da), be->ops->free(be, db), be->ops->free(be, dout);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* math.cu: convert (PTX cvt: round, saturate, NaN -> 0) */

static long long sat(double r, double lo, double hi) {
    if (r != r) return 0;
    if (r <= lo) return (long long)lo;
    if (r >= hi) return hi >= 9.2e18 ? LLONG_MAX : (long long)hi;
    return (long long)r;
}
static long long satu64(double r) { /* as the kernel stores it: the bits */
    if (r != r || r <= 0) return 0;
    if (r >= 18446744073709551616.0) return -1;
    return (long long)(unsigned long long)r;
}

static void test_convert(void) {
    float a[] = {2.5f, -1.5f, 3.5e9f, -3.5e9f, NAN, -0.4f, 1e20f, -1e20f, 4294967295.0f,
                 -5.0f, INFINITY, -INFINITY, 7.75f, 2863311530.0f, 1e19f, 0.0f};
    enum { N = sizeof a / sizeof *a };
    hn_module_image img;
    hn_kernel *k = load_one("math.cu", "convert", &img);
    hn_dptr da = emu_buf(be, a, sizeof a), dout = emu_buf(be, NULL, N * 16 * 8);
    void *args[] = {&da, &dout};
    run(k, N, 0, args);
    long long o[N * 16];
    emu_get(be, o, dout, sizeof o);
    const double I = 2147483647.0, U = 4294967295.0, L = 9223372036854775807.0;
    for (int i = 0; i < N; i++) {
        double x = a[i], dx = (double)a[i] * 1.5;
        long long want[16] = {
            sat(nearbyint(x), -I - 1, I), sat(trunc(x), -I - 1, I), sat(floor(x), -I - 1, I),
            sat(ceil(x), -I - 1, I), sat(nearbyint(x), 0, U), sat(trunc(x), 0, U),
            sat(floor(x), -L - 1, L), sat(ceil(x), -L - 1, L), satu64(nearbyint(x)),
            sat(nearbyint(dx), -I - 1, I), sat(ceil(dx), 0, U), sat(trunc(dx), -L - 1, L),
            satu64(floor(dx)), sat(floor(dx), 0, U), sat(ceil(dx), -L - 1, L),
            isnan(dx) + 2 * !!isinf(dx) + 4 * !!signbit(dx) + 8 * !!isfinite(dx)};
        for (int j = 0; j < 16; j++)
            EXPECT(o[i * 16 + j] == want[j], "convert %g, conversion %d: %lld, want %lld", x, j,
                   o[i * 16 + j], want[j]);
    }
    be->ops->free(be, da), be->ops->free(be, dout);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* math.cu: special functions, against their definitions */

static int close_to(double got, double want, double rel) {
    return fabs(got - want) <= rel * fabs(want) || (isinf(got) && got == want);
}

static double bessel_i(double x, int order) { /* (1/pi) int_0^pi e^{x cos t} cos(nt) dt */
    int n = 20000;
    double s = 0;
    for (int k = 0; k <= n; k++) {
        double t = M_PI * k / n, w = (k == 0 || k == n) ? 0.5 : 1.0;
        s += w * exp(x * cos(t)) * cos(order * t);
    }
    return s / n;
}

static void test_special(void) {
    enum { N = 40 };
    float a[N];
    for (int i = 0; i < N; i++) a[i] = (float)(-0.999 + 1.998 * i / (N - 1));
    a[N - 1] = 0.99999f;
    hn_module_image img;
    hn_kernel *k = load_one("math.cu", "special", &img);
    hn_dptr da = emu_buf(be, a, sizeof a), dout = emu_buf(be, NULL, N * 12 * 4);
    void *args[] = {&da, &dout};
    run(k, N, 0, args);
    float o[N * 12];
    emu_get(be, o, dout, sizeof o);
    const double eps = 4 * FLT_EPSILON;
    for (int i = 0; i < N; i++) {
        double x = a[i];
        const float *r = o + i * 12;
        EXPECT(close_to(erf(r[0]), x, eps * 4), "erf(erfinvf(%g)) = %.9g", x, erf(r[0]));
        EXPECT(close_to(erfc(r[1]), (double)(1.0f - a[i]), eps * (2 * r[1] * r[1] + 4)),
               "erfc(erfcinvf(%g)) = %.9g", (double)(1.0f - a[i]), erfc(r[1]));
        double p = (double)(0.5f + 0.5f * a[i]);
        EXPECT(close_to(0.5 * erfc(-r[2] / M_SQRT2), p, eps * 8), "normcdf(normcdfinvf(%g)) = %.9g", p,
               0.5 * erfc(-r[2] / M_SQRT2));
        double z = (double)(30.0f * a[i]), cx = z < 20 ? exp(z * z) * erfc(z) : 1 / (z * sqrt(M_PI)) * (1 - 1 / (2 * z * z) + 3 / (4 * z * z * z * z) - 15 / (8 * pow(z, 6)));
        cx = (double)(float)cx; /* past FLT_MAX: inf */
        EXPECT(close_to(r[3], cx, eps), "erfcxf(%g) = %.9g, want %.9g", z, r[3], cx);
        EXPECT(close_to(r[4], bessel_i(4 * x, 0), eps), "cyl_bessel_i0f(%g) = %.9g", 4 * x, r[4]);
        EXPECT(close_to(r[5], bessel_i(4 * x, 1), eps) || fabs(r[5]) < 1e-6, "cyl_bessel_i1f(%g) = %.9g, want %.9g", 4 * x, r[5], bessel_i(4 * x, 1));
        EXPECT(close_to(erf(r[6]), x, eps), "erf(erfinv(%g))", x);
        double tiny = ldexp(1.0, -60 * (i + 1));
        EXPECT(i >= 15 || close_to(erfc(r[7]), tiny, eps * (2 * r[7] * r[7] + 1)), "erfc(erfcinv(2^-%d)) = %g", 60 * (i + 1), erfc(r[7]));
        EXPECT(close_to(r[8], sqrt(5 * x * x + 25), eps), "norm4df");
        EXPECT(close_to(r[9], 1 / sqrt(x * x + 5), eps), "rnormf");
        EXPECT(close_to(r[10], 1 / sqrt(x * x + 1), eps), "rhypotf");
        double t2 = ldexp(1.0, -20 * (i % 6 + 1));
        EXPECT(close_to(erfc(r[11]), t2, eps * (2 * r[11] * r[11] + 1)), "erfc(erfcinvf(2^-%d)) = %g", 20 * (i % 6 + 1), erfc(r[11]));
    }
    be->ops->free(be, da), be->ops->free(be, dout);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}

static void test_simd(void) {
    hn_module_image img;
    hn_kernel *k = load_one("math.cu", "simd", &img);
    hn_dptr dout = emu_buf(be, NULL, 24 * 4);
    void *args[] = {&dout};
    run(k, 1, 0, args);
    unsigned o[24];
    emu_get(be, o, dout, sizeof o);
    /* worked by hand, byte by byte (low byte first) */
    const unsigned want[] = {
        32u,          /* 3*5 + 2*4 + (-1)*3 + 1*2 + 10 */
        3*5 + 2*4 + 255*3 + 1*2 + 10,
        3 * 4 + (unsigned)(-2 * 3) + 1, /* halves 3, -2 times bytes 4, 3 of the low pair */
        3 * 2 + (unsigned)(-2 * 1) + 1, /* ... times bytes 2, 1 of the high pair */
        0x00020304u, 0xffffff00u /* CUDA's own example */, 0x7fff0000u, 8u, 0x7f020102u,
        0x02020202u, 0x00010000u, 0xffff0002u, 0x00010002u, 0x44332211u,
        0xfffffffdu + 4u /* max(-3l, 4ul) compares as unsigned long, as in CUDA */,
        4u, 13u, 7u, 0xffffffffu /* __fns: the first set bit from 0 up, the second from 8 up,
                                    the first from 11 down, none */};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        EXPECT(o[i] == want[i], "simd word %zu: 0x%08x, want 0x%08x", i, o[i], want[i]);
    be->ops->free(be, dout);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}


static void test_trigpi(void) {
    float a[] = {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -0.5f, 1.5f, 1e6f, 1e6f + 0.5f, 0.25f, 0.125f, -3.75f,
                 8388607.5f, 0.1f, -0.3f, 123.456f};
    enum { N = sizeof a / sizeof *a };
    hn_module_image img;
    hn_kernel *k = load_one("math.cu", "trigpi", &img);
    hn_dptr da = emu_buf(be, a, sizeof a), dout = emu_buf(be, NULL, N * 4 * 4);
    void *args[] = {&da, &dout};
    run(k, N, 0, args);
    float o[N * 4];
    emu_get(be, o, dout, sizeof o);
    for (int i = 0; i < N; i++) {
        /* exact reference: reduce x mod 2 in long double, where x - 2k is exact */
        long double r = fmodl(a[i], 2.0L), pi = 3.141592653589793238462643383279503L;
        float ws = (float)sinl(pi * r), wc = (float)cosl(pi * r);
        double twice = 2.0 * a[i];
        if (twice == nearbyint(twice)) { /* integers and halves: exact 0 and +-1 */
            long long h = (long long)nearbyint(twice) & 3;
            ws = h == 0 || h == 2 ? (signbit(a[i]) ? -0.0f : 0.0f) : (h == 1 ? 1.0f : -1.0f);
            wc = h == 1 || h == 3 ? 0.0f : (h == 0 ? 1.0f : -1.0f);
        }
        EXPECT(fbits(o[i * 4]) == fbits(ws) || (ws != 0 && fabsf(o[i * 4] - ws) <= 2 * FLT_EPSILON * fabsf(ws)),
               "sinpif(%.9g) = %a, want %a", a[i], o[i * 4], ws);
        EXPECT(fbits(o[i * 4 + 1]) == fbits(wc) || (wc != 0 && fabsf(o[i * 4 + 1] - wc) <= 2 * FLT_EPSILON * fabsf(wc)),
               "cospif(%.9g) = %a, want %a", a[i], o[i * 4 + 1], wc);
        EXPECT(o[i * 4 + 2] == 0 && o[i * 4 + 3] == 0, "sincospif/sinpi/cospi of %g differ: %g %g", a[i],
               o[i * 4 + 2], o[i * 4 + 3]);
    }
    be->ops->free(be, da), be->ops->free(be, dout);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* warpsync.cu: volatile accesses take turns, as lockstep lanes do */

/* reduce6<256> in a GPU's order: per thread its grid-stride sum, the shared
 * tree, then each warpReduce step reading every lane's operands before any
 * lane writes (one instruction of 32 lanes). */
static float ref_reduce6(const float *x, unsigned n, unsigned blk, unsigned grid) {
    float s[256];
    for (unsigned t = 0; t < 256; t++) {
        s[t] = 0;
        for (unsigned i = blk * 512 + t; i < n; i += 512 * grid) s[t] += x[i] + x[i + 256];
    }
    for (unsigned h = 128; h >= 64; h /= 2)
        for (unsigned t = 0; t < h; t++) s[t] += s[t + h];
    for (unsigned h = 32; h >= 1; h /= 2) {
        float next[32];
        for (unsigned t = 0; t < 32; t++) next[t] = s[t] + s[t + h];
        for (unsigned t = 0; t < 32; t++) s[t] = next[t];
    }
    return s[0];
}

static void test_warpsync(void) {
    static const char *const names[] = {"reduce6<256>", "flag_spin", "scan_warp"};
    char *path = feat_path("warpsync.cu");
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, (const char *const *)names, 3, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    hn_kernel *k[3];
    for (int i = 0; i < 3; i++) k[i] = emu_load(be, &img, i);

    enum { N = 8192, GRID = 4 };
    float *x = xmalloc(N * sizeof *x);
    for (int i = 0; i < N; i++) x[i] = rand_float() * 1e-3f;
    hn_dptr dx = emu_buf(be, x, N * sizeof *x), dy = emu_buf(be, NULL, GRID * 4);
    unsigned n = N;
    void *args[] = {&dx, &dy, &n};
    CHECK_MSG(emu_launch(be, k[0], GRID, 1, 1, 256, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    float y[GRID];
    emu_get(be, y, dy, sizeof y);
    for (unsigned b = 0; b < GRID; b++) {
        float want = ref_reduce6(x, N, b, GRID);
        EXPECT(fbits(y[b]) == fbits(want), "reduce6 block %u: %.9g, want %.9g", b, y[b], want);
    }

    hn_dptr dflag = emu_buf(be, NULL, GRID * 4);
    void *fargs[] = {&dflag};
    CHECK_MSG(emu_launch(be, k[1], GRID, 1, 1, 64, 1, 1, 0, fargs, &err) == 0, "flag_spin: %s", err.msg);
    int flags[GRID];
    emu_get(be, flags, dflag, sizeof flags);
    for (int b = 0; b < GRID; b++) EXPECT(flags[b] == 42 + b, "flag_spin block %d: %d", b, flags[b]);

    int in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = (int)hn_rand_below(&seed, 1000);
    hn_dptr din = emu_buf(be, in, sizeof in), dout = emu_buf(be, NULL, sizeof out);
    void *sargs[] = {&din, &dout};
    CHECK_MSG(emu_launch(be, k[2], 1, 1, 1, 64, 1, 1, 0, sargs, &err) == 0, "scan_warp: %s", err.msg);
    emu_get(be, out, dout, sizeof out);
    for (int i = 0, acc = 0; i < 64; i++) {
        acc = (i % 32 ? acc : 0) + in[i];
        EXPECT(out[i] == acc, "scan_warp[%d]: %d, want %d", i, out[i], acc);
    }
    free(x);
    be->ops->free(be, dx), be->ops->free(be, dy), be->ops->free(be, dflag);
    be->ops->free(be, din), be->ops->free(be, dout);
    for (int i = 0; i < 3; i++) be->ops->kernel_free(be, k[i]);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* libs.cu: CUB and libcu++ atomics */

/* CUB's warp reduction of v[0..valid) as lane 0 gets it: offsets 1, 2, 4 ... */
static float ref_warp_sum(const float *v, int valid) {
    float a[32];
    for (int i = 0; i < 32; i++) a[i] = i < valid ? v[i] : 0;
    for (int off = 1; off < 32; off *= 2)
        for (int i = 0; i + off < valid; i++)
            if (i % (2 * off) == 0) a[i] += a[i + off];
    return a[0];
}
static float ref_block_sum(const float *v, int valid) {
    float s = ref_warp_sum(v, valid < 32 ? valid : 32);
    for (int w = 1; w * 32 < valid; w++) s += ref_warp_sum(v + 32 * w, valid - 32 * w < 32 ? valid - 32 * w : 32);
    return s;
}

static void test_libs(void) {
    static const char *const names[] = {"cub_reduce", "cub_scan", "atomic_refs", "half_limits", "bits", "spans"};
    char *path = feat_path("libs.cu");
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, (const char *const *)names, 6, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    hn_kernel *k[6];
    for (int i = 0; i < 6; i++) k[i] = emu_load(be, &img, i);

    float x[128], out[4];
    int xi[128], iout[20];
    for (int i = 0; i < 128; i++) x[i] = rand_float(), xi[i] = (int)hn_rand_below(&seed, 2000) - 1000;
    hn_dptr dx = emu_buf(be, x, sizeof x), dxi = emu_buf(be, xi, sizeof xi);
    hn_dptr dout = emu_buf(be, NULL, sizeof out), diout = emu_buf(be, NULL, sizeof iout);
    void *args[] = {&dx, &dxi, &dout, &diout};
    CHECK_MSG(emu_launch(be, k[0], 1, 1, 1, 128, 1, 1, 0, args, &err) == 0, "cub_reduce: %s", err.msg);
    emu_get(be, out, dout, sizeof out);
    emu_get(be, iout, diout, sizeof iout);
    float mx = x[0], s4 = 0;
    for (int i = 0; i < 128; i++) mx = x[i] > mx ? x[i] : mx;
    for (int i = 0; i < 128; i++) s4 += 10.0f * x[i];
    EXPECT(fbits(out[0]) == fbits(ref_block_sum(x, 128)), "BlockReduce Sum %.9g, want %.9g", out[0], ref_block_sum(x, 128));
    EXPECT(out[1] == mx, "BlockReduce max %g, want %g", out[1], mx);
    EXPECT(fbits(out[2]) == fbits(ref_block_sum(x, 100)), "BlockReduce Sum of 100 %.9g, want %.9g", out[2], ref_block_sum(x, 100));
    EXPECT(fabsf(out[3] - s4) <= 1e-5f * 128 * fabsf(mx) * 10, "BlockReduce Sum of items %g, want %g", out[3], s4);
    for (int w = 0; w < 4; w++) {
        int want = 0;
        for (int i = 0; i < 32; i++) want += xi[32 * w + i];
        EXPECT(iout[w] == want, "WarpReduce %d: %d, want %d", w, iout[w], want);
    }
    for (int g = 0; g < 16; g++) {
        int want = 0;
        for (int i = 0; i < 8; i++) want += xi[8 * g + i];
        EXPECT(iout[4 + g] == want, "WarpReduce<int, 8> %d: %d, want %d", g, iout[4 + g], want);
    }

    enum { SCAN_WORDS = 1153 };
    int *so = xmalloc(SCAN_WORDS * sizeof *so);
    hn_dptr dso = emu_buf(be, NULL, SCAN_WORDS * sizeof *so);
    void *sargs[] = {&dxi, &dso};
    CHECK_MSG(emu_launch(be, k[1], 1, 1, 1, 128, 1, 1, 0, sargs, &err) == 0, "cub_scan: %s", err.msg);
    emu_get(be, so, dso, SCAN_WORDS * sizeof *so);
    int acc = 0;
    for (int t = 0; t < 128; t++) {
        EXPECT(so[t] == acc, "ExclusiveSum[%d]: %d, want %d", t, so[t], acc);
        acc += xi[t];
        EXPECT(so[128 + t] == acc, "InclusiveSum[%d]: %d, want %d", t, so[128 + t], acc);
        int wacc = 0;
        for (int i = t / 32 * 32; i <= t; i++) wacc += xi[i];
        EXPECT(so[768 + t] == wacc, "WarpScan[%d]: %d, want %d", t, so[768 + t], wacc);
    }
    EXPECT(so[1152] == acc, "aggregate %d, want %d", so[1152], acc);
    acc = 0;
    for (int j = 0; j < 512; j++) {
        EXPECT(so[256 + j] == acc, "ExclusiveSum of items [%d]: %d, want %d", j, so[256 + j], acc);
        acc += xi[j % 128] + j % 4;
    }
    acc = 1000;
    for (int kk = 0; kk < 2; kk++)
        for (int t = 0; t < 128; t++) {
            EXPECT(so[896 + 128 * kk + t] == acc, "prefix tile %d [%d]: %d, want %d", kk, t, so[896 + 128 * kk + t], acc);
            acc += xi[(t + 64 * kk) % 128];
        }

    unsigned ao[12];
    hn_dptr dao = emu_buf(be, NULL, sizeof ao);
    void *aargs[] = {&dao};
    CHECK_MSG(emu_launch(be, k[2], 1, 1, 1, 128, 1, 1, 0, aargs, &err) == 0, "atomic_refs: %s", err.msg);
    emu_get(be, ao, dao, sizeof ao);
    float f1;
    double d8;
    memcpy(&f1, ao + 1, 4);
    memcpy(&d8, ao + 8, 8);
    EXPECT(ao[0] == 128 && f1 == 64.0f && ao[2] == 127 && ao[3] == 384 && ao[4] == 1 && ao[5] == 42 &&
               ao[6] >= 1 && ao[6] <= 128 && ao[7] == 41 && d8 == 32.0 && ao[10] == 384,
           "atomic_refs: %u %g %u %u %u %u %u %u %g %u", ao[0], f1, ao[2], ao[3], ao[4], ao[5], ao[6], ao[7], d8,
           ao[10]);
    float neg[8];
    for (int i = 0; i < 8; i++) neg[i] = -1.0f - (float)i; /* max -1: half 0xbc00 */
    unsigned lo[17];
    hn_dptr dneg = emu_buf(be, neg, sizeof neg), dlo = emu_buf(be, NULL, sizeof lo);
    void *largs[] = {&dneg, &dlo};
    CHECK_MSG(emu_launch(be, k[3], 1, 1, 1, 1, 1, 1, 0, largs, &err) == 0, "half_limits: %s", err.msg);
    emu_get(be, lo, dlo, sizeof lo);
    const unsigned want_l[17] = {0x7bff, 0xfbff, 0x0400, 0x1400, 0x7c00, 0x0001, 1 + 2 + 4 * 11, 0,
                                 0x7f7f, 0xff7f, 0x0080, 0x3c00, 0x7f80, 0x0001, 1 + 2 + 4 * 8, 0, 0xbc00};
    for (int i = 0; i < 17; i++)
        if (i != 7 && i != 15) EXPECT(lo[i] == want_l[i], "half_limits word %d: 0x%x, want 0x%x", i, lo[i], want_l[i]);
    CHECK_MSG(emu_launch(be, k[4], 1, 1, 1, 1, 1, 1, 0, largs + 1, &err) == 0, "bits: %s", err.msg);
    emu_get(be, lo, dlo, 5 * 4);
    const unsigned want_b[5] = {0x3f800000u, 4 + 31 * 100 + 3 * 10000, 3 + 8 * 10 + 4 * 1000 + 100000, 3 + 7 * 0x100,
                                8 + 1};
    for (int i = 0; i < 5; i++) EXPECT(lo[i] == want_b[i], "bits word %d: 0x%x, want 0x%x", i, lo[i], want_b[i]);
    float sp[8] = {0, 0, 0, 0, 0, 0, 0.5f, 0.25f};
    int spn = 8;
    hn_dptr dsp = emu_buf(be, sp, sizeof sp);
    void *spargs[] = {&dsp, &spn};
    CHECK_MSG(emu_launch(be, k[5], 1, 1, 1, 1, 1, 1, 0, spargs, &err) == 0, "spans: %s", err.msg);
    emu_get(be, sp, dsp, sizeof sp);
    EXPECT(sp[0] == 19.75f, "spans: %g, want 19.75", sp[0]);
    be->ops->free(be, dsp);
    be->ops->free(be, dneg), be->ops->free(be, dlo);
    free(so);
    be->ops->free(be, dx), be->ops->free(be, dxi), be->ops->free(be, dout), be->ops->free(be, diout);
    be->ops->free(be, dso), be->ops->free(be, dao);
    for (int i = 0; i < 6; i++) be->ops->kernel_free(be, k[i]);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* groups.cu: collectives of different masks pending in one warp */

static void test_groups(void) {
    static const char *const names[] = {"mixed_tiles", "warp_then_half", "update_async"};
    char *path = feat_path("groups.cu");
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, (const char *const *)names, 3, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    hn_kernel *k0 = emu_load(be, &img, 0), *k1 = emu_load(be, &img, 1), *k2 = emu_load(be, &img, 2);
    enum { T = 64 };
    unsigned o[T * 8];
    hn_dptr d = emu_buf(be, NULL, sizeof o);
    void *args[] = {&d};
    CHECK_MSG(emu_launch(be, k0, 1, 1, 1, T, 1, 1, 0, args, &err) == 0, "mixed_tiles: %s", err.msg);
    emu_get(be, o, d, sizeof o);
    for (unsigned r = 0; r < T; r++) {
        unsigned w0 = r / 32 * 32, t0 = r / 16 * 16, lane = r % 32, lab = 0, odd = 0;
        for (unsigned l = w0; l < w0 + 32; l++) lab += l % 3 == r % 3 ? l : 0;
        for (unsigned l = w0; l < r; l++) odd += (l & 1) == (r & 1);
        float f = 0; /* exact: halves of small integers */
        for (unsigned l = w0; l < w0 + 32; l++) f += (float)l * 0.5f;
        unsigned want[8] = {t0 + 15, lane ? (1u << lane) - 1 : 0, t0 + 1, 32 + (lane / 16) * 100 + T * 1000,
                            lab, 1600 + odd, 800 + r % 8, (unsigned)f + (T << 16)};
        for (int j = 0; j < 8; j++)
            EXPECT(o[r * 8 + j] == want[j], "mixed_tiles thread %u word %d: %u, want %u", r, j, o[r * 8 + j], want[j]);
    }
    CHECK_MSG(emu_launch(be, k1, 1, 1, 1, T, 1, 1, 0, args, &err) == 0, "warp_then_half: %s", err.msg);
    emu_get(be, o, d, T * 2 * 4);
    for (unsigned t = 0; t < T; t++) {
        unsigned w0 = t / 32 * 32, sum = 0;
        for (unsigned l = w0; l < w0 + 32; l++) sum += l % 32 < 16 ? w0 + (l % 32 + 1) % 16 : l;
        unsigned v = t % 32 < 16 ? w0 + (t % 32 + 1) % 16 : t;
        EXPECT(o[t * 2] == v && o[t * 2 + 1] == sum, "warp_then_half thread %u: %u %u, want %u %u", t, o[t * 2],
               o[t * 2 + 1], v, sum);
    }
    int u[2 + 3 * T / 8];
    hn_dptr du = emu_buf(be, NULL, sizeof u);
    void *uargs[] = {&du};
    CHECK_MSG(emu_launch(be, k2, 3, 1, 1, T, 1, 1, 0, uargs, &err) == 0, "update_async: %s", err.msg);
    emu_get(be, u, du, sizeof u);
    EXPECT(u[0] == 3 * T * (3 * T - 1) / 2 && u[1] == 3 * T - 1, "update_async: sum %d, max %d", u[0], u[1]);
    for (int t = 0; t < 3 * T / 8; t++)
        EXPECT(u[2 + t] == 64 * t + 28, "reduce_store_async tile %d: %d", t, u[2 + t]);
    be->ops->free(be, du);
    be->ops->free(be, d);
    be->ops->kernel_free(be, k0);
    be->ops->kernel_free(be, k1);
    be->ops->kernel_free(be, k2);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* shapes.cu: 2D blocks with a partial warp, a grid of more than 65535 blocks */

static void test_shapes(void) {
    static const char *const names[] = {"warp2d", "grid3d", "vec_atomics"};
    char *path = feat_path("shapes.cu");
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, (const char *const *)names, 3, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    hn_kernel *k0 = emu_load(be, &img, 0), *k1 = emu_load(be, &img, 1), *k2 = emu_load(be, &img, 2);
    enum { NT = 70 };
    unsigned o[NT * 8];
    hn_dptr d = emu_buf(be, NULL, sizeof o);
    void *args[] = {&d};
    CHECK_MSG(emu_launch(be, k0, 1, 1, 1, 10, 7, 1, 0, args, &err) == 0, "warp2d: %s", err.msg);
    emu_get(be, o, d, sizeof o);
    for (unsigned t = 0; t < NT; t++) {
        unsigned w0 = t / 32 * 32, n = NT - w0 < 32 ? NT - w0 : 32, lane = t % 32;
        unsigned act = n == 32 ? 0xffffffffu : (1u << n) - 1, ballot = 0, sum = 0;
        for (unsigned l = 0; l < n; l++) ballot |= ((w0 + l) & 1) << l, sum += w0 + l;
        unsigned up = lane % 8 >= 3 ? t - 3 : t;
        unsigned xl = lane ^ 5, x = xl < n ? w0 + xl : t; /* stays in its 16 lanes */
        unsigned m = 0;
        for (unsigned l = 0; l < n; l++) m |= (unsigned)((w0 + l) / 4 == t / 4) << l;
        unsigned want[8] = {lane, t / 32, act, ballot, sum, up, x, m};
        for (int j = 0; j < 8; j++)
            EXPECT(o[t * 8 + j] == want[j], "warp2d thread %u word %d: 0x%x, want 0x%x", t, j, o[t * 8 + j], want[j]);
    }
    unsigned long long g[5];
    hn_dptr dg = emu_buf(be, NULL, sizeof g);
    void *gargs[] = {&dg};
    CHECK_MSG(emu_launch(be, k1, 70000, 2, 2, 32, 1, 1, 0, gargs, &err) == 0, "grid3d: %s", err.msg);
    emu_get(be, g, dg, sizeof g);
    for (int i = 0; i < 4; i++) EXPECT(g[i] == 70000ull * 70001 / 2, "grid3d (y, z) %d: %llu", i, g[i]);
    EXPECT(g[4] == 7000000ull + 20 + 2, "grid3d gridDim: %llu", g[4]);
    float va[8 + 128];
    hn_dptr dva = emu_buf(be, NULL, sizeof va);
    void *vargs[] = {&dva};
    CHECK_MSG(emu_launch(be, k2, 1, 1, 1, 128, 1, 1, 0, vargs, &err) == 0, "vec_atomics: %s", err.msg);
    emu_get(be, va, dva, sizeof va);
    EXPECT(va[0] == 128 && va[1] == 256 && va[2] == 384 && va[3] == 512 && va[4] == 64 && va[5] == 32,
           "vec_atomics: %g %g %g %g %g %g", va[0], va[1], va[2], va[3], va[4], va[5]);
    for (int t = 0; t < 128; t++) EXPECT(va[8 + t] == 1.0f, "vec_atomics old value of thread %d", t);
    be->ops->free(be, d), be->ops->free(be, dg), be->ops->free(be, dva);
    be->ops->kernel_free(be, k0);
    be->ops->kernel_free(be, k1);
    be->ops->kernel_free(be, k2);
    hn_module_image_free(&img);
}

/* ------------------------------------------------------------------------- */
/* refused.cu: compile errors that name the construct */

static void check_refused(const char *define, const char *needle, const char *marker) {
    char *path = feat_path("refused.cu");
    const char *names[] = {"refused"};
    const char *defs[] = {define};
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    int rc = emu_compile_file(path, names, 1, defs, 1, &img, &log, &err);
    CHECK_MSG(rc != 0, "%s: compiled", define);
    if (rc == 0) hn_module_image_free(&img);
    CHECK_MSG(strstr(err.msg, needle) != NULL, "%s: expected \"%s\" in: %s", define, needle, err.msg);
    if (marker) {
        char *at = emu_marker_at(path, "refused.cu", marker);
        CHECK_MSG(strstr(err.msg, at) != NULL, "%s: expected %s in: %s", define, at, err.msg);
        free(at);
    }
    free(log);
    free(path);
}

static void test_refused(void) {
    check_refused("SPACE", "__isShared is not supported", "space");
    check_refused("CUB_LOAD", "<cub/block/block_load.cuh> is not supported: of CUB the emulator provides BlockReduce", NULL);
    check_refused("BARRIER", "<cuda/barrier> (cuda::barrier) is not supported", NULL);
}

/* ------------------------------------------------------------------------- */
/* every kernel file through NVRTC for sm_90 (CUDA's own headers) */

static void test_nvrtc(void) {
    static const char *const math_k[] = {"rounded", "convert", "special", "simd", "trigpi"};
    static const char *const warpsync_k[] = {"reduce6<256>", "flag_spin", "scan_warp"};
    static const char *const libs_k[] = {"cub_reduce", "cub_scan", "atomic_refs", "half_limits", "bits", "spans"};
    static const char *const groups_k[] = {"mixed_tiles", "warp_then_half", "update_async"};
    static const char *const shapes_k[] = {"warp2d", "grid3d", "vec_atomics"};
    const struct {
        const char *file;
        const char *const *kernels;
        int n;
    } files[] = {{"math.cu", math_k, 5}, {"warpsync.cu", warpsync_k, 3},
                   {"libs.cu", libs_k, 6}, {"groups.cu", groups_k, 3},
                   {"shapes.cu", shapes_k, 3}};
    char *cache = emu_cache();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *path = feat_path(files[i].file);
        hn_compile_req req = {0};
        req.src_path = path;
        req.kernels = files[i].kernels;
        req.n_kernels = files[i].n;
        req.arch = "sm_90";
        req.cache_dir = cache;
        hn_module_image img;
        char *log = NULL;
        hn_err err;
        int rc = hn_compile_cuda(&req, &img, &log, &err);
        CHECK_MSG(rc == 0, "NVRTC %s: %s\n%s", files[i].file, err.msg, log ? log : "");
        if (rc == 0) hn_module_image_free(&img);
        free(log);
        free(path);
    }
    free(cache);
}

int main(void) {
    be = emu_backend(2, 30.0);
    test_rounded();
    test_convert();
    test_special();
    test_simd();
    test_trigpi();
    test_warpsync();
    test_libs();
    test_groups();
    test_shapes();
    CHECK_MSG(bad == 0, "%d mismatches", bad);
    test_refused();
    test_nvrtc();
    hn_backend_destroy(be);
    return hn_test_exit();
}
