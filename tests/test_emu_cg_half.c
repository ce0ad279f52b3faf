/*
 * test_emu_cg_half.c: cooperative groups, __half and __nv_bfloat16 on the CPU
 * emulator (the shim headers cooperative_groups.h, cooperative_groups/reduce.h
 * and scan.h, cuda_fp16.h, cuda_bf16.h), with kernels in tests/kernels/emu/
 * (cg.cu, half.cu, cg_broken.cu, cg_grid_sync.cu).
 *
 * Every result is checked against a value computed here, independently of the
 * shim: group results from the definitions (sums, prefix sums, ballots by
 * rank, and floating-point sums in CUDA's butterfly order); 16-bit floats by a
 * reference that decodes bit patterns with ldexp and rounds by searching the
 * sorted table of representable values (the shim manipulates bits instead),
 * and, for fma, from the exact result in 128-bit integers. Then the faults: a
 * divergent tile.sync() and block.sync() named by the user's line, the refusal
 * of this_grid().sync() at compile time, and the same kernels through NVRTC
 * for sm_90.
 */
#define _GNU_SOURCE
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "test_emu_common.h"

static hn_backend *be;

/* ------------------------------------------------------------------------- */
/* helpers */

static uint64_t seed = 12345;

static int rand_int(int lo, int hi) { /* in [lo, hi] */
    return (int)(lo + (long long)hn_rand_below(&seed, (uint64_t)((long long)hi - lo + 1)));
}

/* A compiled module with its kernels, by name. */
typedef struct {
    hn_module_image img;
    hn_kernel *k[32];
    const char *const *names;
    int n;
} module;

static void module_load(module *m, const char *file, const char *const *names, int n) {
    char *path = emu_kernel_path(file);
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, names, n, NULL, 0, &m->img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    free(path);
    m->names = names;
    m->n = n;
    for (int i = 0; i < n; i++) m->k[i] = emu_load(be, &m->img, i);
}

static void module_free(module *m) {
    for (int i = 0; i < m->n; i++) be->ops->kernel_free(be, m->k[i]);
    hn_module_image_free(&m->img);
}

static hn_kernel *kernel(const module *m, const char *name) {
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0) return m->k[i];
    emu_die(name, NULL);
    return NULL;
}

static void launch(hn_kernel *k, unsigned gx, unsigned gy, unsigned bx, void **args) {
    hn_err err;
    CHECK_MSG(emu_launch(be, k, gx, gy, 1, bx, 1, 1, 0, args, &err) == 0, "%s", err.msg);
}

#define DEV(p, bytes) emu_buf(be, (p), (bytes))
#define GET(host, d, bytes) emu_get(be, (host), (d), (bytes))
#define FREE(d) be->ops->free(be, (d))

/* Counts a mismatch, printing the first few. */
static int bad;
#define EXPECT(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond) && bad++ < 8) {                                                          \
            fprintf(stderr, "  mismatch: ");                                                 \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
        }                                                                                    \
    } while (0)

/* ------------------------------------------------------------------------- */
/* the independent 16-bit float reference */

enum { RN, RZ, RD, RU };

/* 128-bit integers hold an exact half-precision fma (__extension__: not ISO C) */
__extension__ typedef __int128 ref_i128;
__extension__ typedef unsigned __int128 ref_u128;

/* Bit pattern -> value by the definition of the formats. */
static double ref_h2d(unsigned short h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}
static double ref_bf2d(unsigned short b) {
    int e = (b >> 7) & 255, m = b & 127;
    double v = e == 255 ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -133) : ldexp(128 + m, e - 134);
    return b & 0x8000 ? -v : v;
}

/* The non-negative finite values of a format in increasing order: table[k] is
 * the value of bit pattern k, for k = 0 .. maxf, and table[maxf + 1] the value
 * the next pattern would have if the format had no infinity. */
typedef struct {
    double *v;
    unsigned short maxf, inf;
} ref_fmt;
static ref_fmt F16, BF16;

static void ref_init(ref_fmt *f, double (*dec)(unsigned short), unsigned short maxf,
                     unsigned short inf) {
    f->v = xmalloc((maxf + 2u) * sizeof *f->v);
    for (unsigned k = 0; k <= maxf; k++) f->v[k] = dec((unsigned short)k);
    f->v[maxf + 1] = 2 * f->v[maxf] - f->v[maxf - 1];
    f->maxf = maxf;
    f->inf = inf;
}

/* x rounded into the format by `mode`: the two neighbours by binary search,
 * then the rule (nearest with ties to the even pattern; toward zero; down; up). */
static unsigned short ref_round(const ref_fmt *f, double x, int mode) {
    if (isnan(x)) return 0x7fff;
    unsigned short sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (isinf(a)) return sign | f->inf;
    unsigned lo = 0, hi = f->maxf + 1u; /* v[lo] <= a < v[hi] */
    if (a >= f->v[hi]) {
        lo = f->maxf + 1u;
    } else {
        while (hi - lo > 1) {
            unsigned mid = (lo + hi) / 2;
            if (f->v[mid] <= a) lo = mid;
            else hi = mid;
        }
    }
    unsigned k = lo;
    if (k <= f->maxf && f->v[k] == a) return (unsigned short)(sign | k);
    int neg = sign != 0, up;
    if (k > f->maxf) { /* beyond the last finite value plus one unit */
        up = 1;
        k = f->maxf;
        if (mode == RZ || (mode == RD && !neg) || (mode == RU && neg)) up = 0;
    } else if (mode == RN) {
        double mid = (f->v[k] + f->v[k + 1]) / 2; /* exact: one bit more */
        up = a > mid || (a == mid && (k & 1));
    } else {
        up = mode == RZ ? 0 : mode == RD ? neg : !neg;
    }
    k += (unsigned)up;
    return (unsigned short)(sign | (k > f->maxf ? f->inf : k));
}

/* The exact a * b + c of three finite halves, rounded to nearest: each half is
 * an integer times 2^-24, so the result is an integer times 2^-48 (a signed
 * 128-bit integer), compared with the representable values scaled alike. */
static unsigned short ref_h_fma(unsigned short a, unsigned short b, unsigned short c) {
    double da = ref_h2d(a), db = ref_h2d(b), dc = ref_h2d(c);
    if (!isfinite(da) || !isfinite(db) || !isfinite(dc)) return ref_round(&F16, fma(da, db, dc), RN);
    ref_i128 ia = (ref_i128)ldexp(da, 24), ib = (ref_i128)ldexp(db, 24), ic = (ref_i128)ldexp(dc, 24);
    ref_i128 n = ia * ib + ic * ((ref_i128)1 << 24);
    if (n == 0) { /* the sign of an exact zero: -0 only for -0 + -0 */
        int prod_neg = ((a ^ b) & 0x8000) != 0;
        int zero_prod = ia == 0 || ib == 0;
        return zero_prod && ic == 0 && prod_neg && (c & 0x8000) ? 0x8000 : 0;
    }
    unsigned short sign = n < 0 ? 0x8000 : 0;
    ref_u128 m = (ref_u128)(n < 0 ? -n : n);
    /* scaled(k) = value of pattern k times 2^48 */
#define SCALED(k) ((ref_u128)ldexp(F16.v[(k)], 24) << 24)
    unsigned lo = 0, hi = 0x7c00; /* scaled(lo) <= m < scaled(hi) */
    if (m >= SCALED(0x7c00)) return sign | 0x7c00;
    while (hi - lo > 1) {
        unsigned mid = (lo + hi) / 2;
        if (SCALED(mid) <= m) lo = mid;
        else hi = mid;
    }
    ref_u128 vl = SCALED(lo), vh = SCALED(lo + 1);
#undef SCALED
    if (m == vl) return (unsigned short)(sign | lo);
    unsigned k = lo + (2 * m > vl + vh || (2 * m == vl + vh && (lo & 1)));
    return (unsigned short)(sign | (k > 0x7bff ? 0x7c00 : k));
}

/* The bfloat16 nearest a * b + c (the arguments are bfloat16 values): a * b is
 * exact in double (16 bits), s = a * b + c rounded to double with its exact
 * error e (TwoSum); s rounds like the exact sum unless s is halfway between two
 * bfloat16 values and e is not 0, when e says which one is nearer. */
static unsigned short ref_bf_fma(double a, double b, double c) {
    double p = a * b, s = p + c;
    if (!isfinite(s)) return ref_round(&BF16, s, RN);
    double bb = s - p, e = (p - (s - bb)) + (c - bb);
    unsigned short r = ref_round(&BF16, s, RN);
    if (e == 0 || r == 0x7fff) return r;
    unsigned short lo = ref_round(&BF16, s, RZ), hi = ref_round(&BF16, s, fabs(s) == s ? RU : RD);
    double vlo = ref_bf2d(lo), vhi = ref_bf2d(hi);
    if (lo == hi || !isfinite(vhi) || s != (vlo + vhi) / 2) return r;
    /* halfway: the exact sum lies beyond s in the direction of e */
    return (e > 0) == (s > 0) ? hi : lo;
}

static int is_nan_h(unsigned short h) {
    return (h & 0x7fff) > 0x7c00;
}

/* __hmax / __hmin as CUDA defines them: a NaN loses to a number, two NaNs give
 * the canonical NaN, +0 is above -0 */
static unsigned short ref_minmax(const ref_fmt *f, unsigned short a, unsigned short b, int max) {
    double x = f == &F16 ? ref_h2d(a) : ref_bf2d(a), y = f == &F16 ? ref_h2d(b) : ref_bf2d(b);
    if (isnan(x) && isnan(y)) return 0x7fff;
    if (isnan(x)) return b;
    if (isnan(y)) return a;
    if (x == y) return max ? (signbit(x) ? b : a) : (signbit(x) ? a : b);
    return (max ? x > y : x < y) ? a : b;
}

/* a random 16-bit pattern: any, or a finite one near 1 (exponent within +-w) */
static unsigned short rand_h(int any, int w) {
    if (any) return (unsigned short)rand_int(0, 0xffff);
    int e = 15 + rand_int(-w, w);
    return (unsigned short)((rand_int(0, 1) << 15) | (e << 10) | rand_int(0, 1023));
}
static unsigned short rand_bf(int any, int w) {
    if (any) return (unsigned short)rand_int(0, 0xffff);
    int e = 127 + rand_int(-w, w);
    return (unsigned short)((rand_int(0, 1) << 15) | (e << 7) | rand_int(0, 127));
}

/* ------------------------------------------------------------------------- */
/* __half and __nv_bfloat16 */

static module hm;
static const char *const half_kernels[] = {"h_roundtrip", "h_convert", "h_int",   "h_arith",
                                           "bf_arith",    "h2_arith",  "h_math",  "h_consts",
                                           "h_atomic",    "h_shuffle"};

static uint32_t fbits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float bitsf(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_half_roundtrip(void) {
    float *f = xmalloc(65536 * sizeof *f);
    unsigned short *back = xmalloc(65536 * sizeof *back);
    hn_dptr d_f = DEV(NULL, 65536 * 4), d_b = DEV(NULL, 65536 * 2);
    void *args[] = {&d_f, &d_b};
    launch(kernel(&hm, "h_roundtrip"), 256, 1, 256, args);
    GET(f, d_f, 65536 * 4);
    GET(back, d_b, 65536 * 2);
    bad = 0;
    int nans = 0;
    for (unsigned h = 0; h < 65536; h++) {
        double want = ref_h2d((unsigned short)h);
        if (isnan(want)) {
            /* CUDA: every NaN becomes the canonical one, both ways */
            nans++;
            EXPECT(fbits(f[h]) == 0x7fffffffu, "half %04x -> float %08x, want 7fffffff", h, fbits(f[h]));
            EXPECT(back[h] == 0x7fff, "half %04x -> float -> %04x, want 7fff", h, back[h]);
        } else {
            EXPECT(fbits(f[h]) == fbits((float)want), "half %04x -> %a, want %a", h, f[h], want);
            EXPECT(back[h] == h, "half %04x -> float -> %04x", h, back[h]);
        }
    }
    CHECK_INT(nans, 2 * 1023);
    CHECK_INT(bad, 0);
    FREE(d_f);
    FREE(d_b);
    free(f);
    free(back);
}

/* the float inputs of h_convert: a sweep of all bit patterns, every half
 * midpoint and its neighbours, bfloat16 midpoints, and the special cases;
 * din: the same as doubles, but just off the half midpoints (where rounding
 * through float would land on the midpoint) */
static int convert_inputs(float **in_out, double **din_out) {
    int cap = 1 << 21, n = 0;
    float *in = xmalloc((size_t)cap * sizeof *in);
    double *din = xmalloc((size_t)cap * sizeof *din);
#define PUSH(x, d) (in[n] = (x), din[n] = (d), n++)
    for (uint64_t u = 0; u < (1ull << 32); u += 4099) PUSH(bitsf((uint32_t)u), (double)bitsf((uint32_t)u));
    for (unsigned k = 0; k < 0x7bff; k++) {
        double mid = (F16.v[k] + F16.v[k + 1]) / 2, s = k & 1 ? -1 : 1;
        float m = (float)mid;
        PUSH((float)(s * m), s * (mid + ldexp(mid, -40)));
        PUSH((float)(s * nextafterf(m, 0)), s * (mid - ldexp(mid, -40)));
        PUSH((float)(s * nextafterf(m, INFINITY)), s * mid);
    }
    for (unsigned k = 0; k < 0x7f7f; k += 3) {
        double mid = (BF16.v[k] + BF16.v[k + 1]) / 2, s = k & 2 ? -1 : 1;
        float m = (float)mid;
        PUSH((float)(s * m), s * mid);
        PUSH((float)(s * nextafterf(m, 0)), s * (mid - ldexp(mid, -30)));
        PUSH((float)(s * nextafterf(m, INFINITY)), s * (mid + ldexp(mid, -30)));
    }
    const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, bitsf(0x7fc00000u),
                             bitsf(0x7f800001u), bitsf(0xffc00001u), bitsf(0x7fbfffffu),
                             65504.0f, nextafterf(65520.0f, 0), 65520.0f, -65520.0f, 65536.0f,
                             1e10f, -1e10f, ldexpf(1, -24), ldexpf(1, -25), -ldexpf(1, -25),
                             nextafterf(ldexpf(1, -25), 1), 3 * ldexpf(1, -26), ldexpf(1, -26),
                             FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MAX, -FLT_MAX,
                             bitsf(0x7f7fffffu), bitsf(0x7f7f8000u), bitsf(0x7f7e8000u),
                             bitsf(0x3f808000u), bitsf(0x3f818000u), bitsf(0x00008000u),
                             bitsf(0x80018000u)};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) PUSH(special[i], (double)special[i]);
    PUSH(1.0f, 1e300);
    PUSH(1.0f, -1e-300);
    PUSH(1.0f, NAN);
#undef PUSH
    *in_out = in;
    *din_out = din;
    return n;
}

static void test_half_convert(void) {
    float *in;
    double *din;
    int n = convert_inputs(&in, &din);
    unsigned short *out = xmalloc((size_t)n * 11 * sizeof *out);
    hn_dptr d_in = DEV(in, (size_t)n * 4), d_din = DEV(din, (size_t)n * 8),
            d_out = DEV(NULL, (size_t)n * 11 * 2);
    void *args[] = {&d_in, &d_din, &n, &d_out};
    launch(kernel(&hm, "h_convert"), (unsigned)(n + 255) / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 11 * 2);
    static const char *what[] = {"half rn", "half rz", "half rd", "half ru", "__half(float)",
                                 "bf16 rn", "bf16 rz", "bf16 rd", "bf16 ru", "double->half",
                                 "double->bf16"};
    int per[11] = {0};
    bad = 0;
    for (int i = 0; i < n; i++) {
        unsigned short want[11];
        for (int m = 0; m < 4; m++) {
            want[m] = ref_round(&F16, in[i], m);
            want[5 + m] = ref_round(&BF16, in[i], m);
        }
        want[4] = want[0];
        want[9] = ref_round(&F16, din[i], RN);
        want[10] = ref_round(&BF16, din[i], RN);
        for (int j = 0; j < 11; j++) {
            unsigned short got = out[(size_t)j * n + i];
            if (got != want[j]) per[j]++;
            EXPECT(got == want[j], "%s of %a (%08x; double %a): %04x, want %04x", what[j],
                   in[i], fbits(in[i]), din[i], got, want[j]);
        }
    }
    for (int j = 0; j < 11; j++) CHECK_MSG(per[j] == 0, "%s: %d of %d wrong", what[j], per[j], n);
    printf("conversions: %d inputs x 11 checked\n", n);
    /* the cases that matter, spelled out */
    CHECK_INT(ref_round(&F16, 65520.0, RN), 0x7c00);
    CHECK_INT(ref_round(&F16, 65520.0, RZ), 0x7bff);
    CHECK_INT(ref_round(&F16, ldexp(1, -25), RN), 0x0000);
    CHECK_INT(ref_round(&F16, 3 * ldexp(1, -25), RN), 0x0002);
    FREE(d_in);
    FREE(d_din);
    FREE(d_out);
    free(in);
    free(din);
    free(out);
}

static void test_half_int(void) {
    int n = 4096;
    int *in = xmalloc((size_t)n * sizeof *in), *iout = xmalloc((size_t)n * 2 * sizeof *iout);
    unsigned short *hin = xmalloc((size_t)n * sizeof *hin), *out = xmalloc((size_t)n * 4 * 2);
    const int special[] = {0, 1, -1, 2047, 2049, 2051, -2051, 4097, 65504, 65519, 65520,
                           -65520, 65535, 70000, INT_MAX, INT_MIN, 1 << 24, (1 << 24) + 1};
    for (int i = 0; i < n; i++) {
        int ns = (int)(sizeof special / sizeof *special);
        in[i] = i < ns ? special[i] : i % 2 ? rand_int(-70000, 70000) : rand_int(INT_MIN / 2, INT_MAX / 2);
        hin[i] = i < 4 ? (unsigned short[]){0x7c00, 0xfc00, 0x7e00, 0x3800}[i] : rand_h(1, 0);
    }
    hn_dptr d_in = DEV(in, (size_t)n * 4), d_hin = DEV(hin, (size_t)n * 2),
            d_out = DEV(NULL, (size_t)n * 8), d_iout = DEV(NULL, (size_t)n * 8);
    void *args[] = {&d_in, &d_hin, &n, &d_out, &d_iout};
    launch(kernel(&hm, "h_int"), (unsigned)n / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 8);
    GET(iout, d_iout, (size_t)n * 8);
    bad = 0;
    for (int i = 0; i < n; i++) {
        for (int m = 0; m < 4; m++) {
            unsigned short want = ref_round(&F16, (double)in[i], m);
            EXPECT(out[m * n + i] == want, "__int2half mode %d of %d: %04x, want %04x", m, in[i],
                   out[m * n + i], want);
        }
        double h = ref_h2d(hin[i]);
        for (int m = 0; m < 2; m++) {
            double r = m == 0 ? nearbyint(h) : trunc(h);
            int want = isnan(h) ? 0 : r >= 2147483648.0 ? INT_MAX : r < -2147483648.0 ? INT_MIN : (int)r;
            EXPECT(iout[m * n + i] == want, "__half2int mode %d of %04x: %d, want %d", m, hin[i],
                   iout[m * n + i], want);
        }
    }
    CHECK_INT(bad, 0);
    CHECK_INT(iout[2], 0);   /* NaN -> 0 */
    CHECK_INT(iout[3], 0);   /* 0.5 -> 0 (ties to even) */
    CHECK_INT(iout[0], INT_MAX);
    FREE(d_in);
    FREE(d_hin);
    FREE(d_out);
    FREE(d_iout);
    free(in);
    free(hin);
    free(out);
    free(iout);
}

/* inputs for the arithmetic kernels: half any pattern, half near 1 (so that
 * sums round), and crafted ties */
static void arith_inputs(unsigned short *a, unsigned short *b, unsigned short *c, int n, int bf) {
    for (int i = 0; i < n; i++) {
        int any = i % 4 == 0;
        a[i] = bf ? rand_bf(any, 8) : rand_h(any, 8);
        b[i] = bf ? rand_bf(any, 8) : rand_h(any, 8);
        c[i] = bf ? rand_bf(any, 8) : rand_h(any, 8);
    }
    if (bf) {
        /* fma(17, 17, c): 289 is a tie of 288 and 290; c = 2^-100, -2^-100, 0;
         * and -289 + 2^-100 */
        unsigned short tiny = 0x0d80, ntiny = 0x8d80, b17 = 0x4188;
        a[0] = a[1] = a[2] = b[0] = b[1] = b[2] = b[3] = b17;
        a[3] = 0xc188;
        c[0] = tiny, c[1] = ntiny, c[2] = 0, c[3] = tiny;
        return;
    }
    /* ties of a + b: 2048 + 1 (to 2048), 2050 + 1 (to 2052), 1 + 2^-11 (to 1) */
    a[0] = 0x6800, b[0] = 0x3c00;
    a[1] = 0x6801, b[1] = 0x3c00;
    a[2] = 0x3c00, b[2] = 0x1000;
    /* fma ties and near-ties: 1 * 1 + 2^-11 ties, with c's sign the other way */
    a[3] = 0x3c00, b[3] = 0x3c00, c[3] = 0x1000;
    a[4] = 0x3c01, b[4] = 0x3c00, c[4] = 0x1000;
    a[5] = 0x3c00, b[5] = 0x3c01, c[5] = 0x8001;
    /* overflow, subnormal products, zeros of both signs */
    a[6] = 0x7bff, b[6] = 0x7bff, c[6] = 0x0000;
    a[7] = 0x0001, b[7] = 0x0001, c[7] = 0x8000;
    a[8] = 0x8000, b[8] = 0x3c00, c[8] = 0x8000;
    a[9] = 0x7c00, b[9] = 0x0000, c[9] = 0x3c00;
    a[10] = 0x0000, b[10] = 0x8000, c[10] = 0x0000;
}

static void test_half_arith(void) {
    int n = 1 << 17;
    unsigned short *a = xmalloc((size_t)n * 2), *b = xmalloc((size_t)n * 2), *c = xmalloc((size_t)n * 2);
    arith_inputs(a, b, c, n, 0);
    unsigned short *out = xmalloc((size_t)n * 10 * 2), *sq = xmalloc((size_t)n * 2);
    int *cmp = xmalloc((size_t)n * 9 * sizeof *cmp);
    hn_dptr d_a = DEV(a, (size_t)n * 2), d_b = DEV(b, (size_t)n * 2), d_c = DEV(c, (size_t)n * 2);
    hn_dptr d_out = DEV(NULL, (size_t)n * 20), d_sq = DEV(NULL, (size_t)n * 2),
            d_cmp = DEV(NULL, (size_t)n * 36);
    void *args[] = {&d_a, &d_b, &d_c, &n, &d_out, &d_sq, &d_cmp};
    launch(kernel(&hm, "h_arith"), (unsigned)n / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 20);
    GET(sq, d_sq, (size_t)n * 2);
    GET(cmp, d_cmp, (size_t)n * 36);
    static const char *what[] = {"+", "-", "*", "/", "fma", "+=", "max", "min", "neg", "abs"};
    int per[10] = {0};
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = ref_h2d(a[i]), y = ref_h2d(b[i]);
        unsigned short want[10] = {
            ref_round(&F16, x + y, RN), /* exact in double */
            ref_round(&F16, x - y, RN),
            ref_round(&F16, x * y, RN), /* exact in double */
            /* double rounding is harmless: 53 >= 2 * 11 + 2 bits */
            ref_round(&F16, x / y, RN),
            ref_h_fma(a[i], b[i], c[i]),
            ref_round(&F16, x + y, RN),
            ref_minmax(&F16, a[i], b[i], 1),
            ref_minmax(&F16, a[i], b[i], 0),
            (unsigned short)(a[i] ^ 0x8000),
            is_nan_h(a[i]) ? 0x7fff : (unsigned short)(a[i] & 0x7fff),
        };
        for (int j = 0; j < 10; j++) {
            unsigned short got = out[(size_t)j * n + i];
            if (got != want[j]) per[j]++;
            EXPECT(got == want[j], "%04x %s %04x (c %04x): %04x, want %04x", a[i], what[j], b[i],
                   c[i], got, want[j]);
        }
        unsigned short wsq = ref_round(&F16, sqrt(fabs(x)), RN);
        EXPECT(sq[i] == wsq, "hsqrt(|%04x|): %04x, want %04x", a[i], sq[i], wsq);
        int wc[9] = {x == y, x < y, x <= y, x > y, x >= y, x != y, x < y || x > y, isnan(x) != 0,
                     isinf(x) ? (x > 0 ? 1 : -1) : 0};
        for (int j = 0; j < 9; j++)
            EXPECT(cmp[(size_t)j * n + i] == wc[j], "comparison %d of %04x, %04x: %d, want %d", j,
                   a[i], b[i], cmp[(size_t)j * n + i], wc[j]);
    }
    for (int j = 0; j < 10; j++) CHECK_MSG(per[j] == 0, "half %s: %d of %d wrong", what[j], per[j], n);
    CHECK_INT(bad, 0);
    /* the crafted cases, spelled out */
    CHECK_INT(out[0], 0x6800);          /* 2048 + 1 ties to 2048 */
    CHECK_INT(out[1], 0x6802);          /* 2050 + 1 ties to 2052 */
    CHECK_INT(out[4 * n + 3], 0x3c00);  /* fma(1, 1, 2^-11) ties to 1 */
    CHECK_INT(out[2 * n + 6], 0x7c00);  /* 65504^2 overflows */
    CHECK_INT(out[4 * n + 9], 0x7fff);  /* inf * 0 + 1 is NaN */
    FREE(d_a);
    FREE(d_b);
    FREE(d_c);
    FREE(d_out);
    FREE(d_sq);
    FREE(d_cmp);
    free(a);
    free(b);
    free(c);
    free(out);
    free(sq);
    free(cmp);
}

static void test_bf16_arith(void) {
    int n = 1 << 16;
    unsigned short *a = xmalloc((size_t)n * 2), *b = xmalloc((size_t)n * 2), *c = xmalloc((size_t)n * 2);
    arith_inputs(a, b, c, n, 1);
    unsigned short *out = xmalloc((size_t)n * 5 * 2);
    int *cmp = xmalloc((size_t)n * sizeof *cmp);
    hn_dptr d_a = DEV(a, (size_t)n * 2), d_b = DEV(b, (size_t)n * 2), d_c = DEV(c, (size_t)n * 2);
    hn_dptr d_out = DEV(NULL, (size_t)n * 10), d_cmp = DEV(NULL, (size_t)n * 4);
    void *args[] = {&d_a, &d_b, &d_c, &n, &d_out, &d_cmp};
    launch(kernel(&hm, "bf_arith"), (unsigned)n / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 10);
    GET(cmp, d_cmp, (size_t)n * 4);
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = ref_bf2d(a[i]), y = ref_bf2d(b[i]), z = ref_bf2d(c[i]);
        /* + and /: one double rounding first, harmless (53 >= 2 * 8 + 2 bits);
         * * is exact in double */
        unsigned short want[4] = {ref_round(&BF16, x + y, RN), ref_round(&BF16, x - y, RN),
                                  ref_round(&BF16, x * y, RN), ref_round(&BF16, x / y, RN)};
        for (int j = 0; j < 4; j++)
            EXPECT(out[(size_t)j * n + i] == want[j], "bf16 %04x op%d %04x: %04x, want %04x", a[i],
                   j, b[i], out[(size_t)j * n + i], want[j]);
        unsigned short w = ref_bf_fma(x, y, z);
        EXPECT(out[(size_t)4 * n + i] == w, "bf16 fma(%04x, %04x, %04x): %04x, want %04x", a[i],
               b[i], c[i], out[(size_t)4 * n + i], w);
        EXPECT(cmp[i] == (x < y), "bf16 %04x < %04x: %d", a[i], b[i], cmp[i]);
    }
    CHECK_INT(bad, 0);
    /* 17 * 17 = 289 is halfway between the bfloat16 values 288 and 290: a tiny c
     * decides (rounding a * b + c to double first would lose it) */
    CHECK_INT(out[4 * n + 0], 0x4391);
    CHECK_INT(out[4 * n + 1], 0x4390);
    CHECK_INT(out[4 * n + 2], 0x4390);
    CHECK_INT(out[4 * n + 3], 0xc390);
    FREE(d_a);
    FREE(d_b);
    FREE(d_c);
    FREE(d_out);
    FREE(d_cmp);
    free(a);
    free(b);
    free(c);
    free(out);
    free(cmp);
}

static void test_half2(void) {
    int n = 1 << 14;
    unsigned short *a = xmalloc((size_t)n * 2), *b = xmalloc((size_t)n * 2), *c = xmalloc((size_t)n * 2);
    arith_inputs(a, b, c, n, 0);
    for (int i = 0; i < n; i += 7) b[i] = c[i]; /* some equal lanes for the mask */
    unsigned short *out = xmalloc((size_t)n * 10 * 2);
    unsigned *mask = xmalloc((size_t)n * 4);
    float *f = xmalloc((size_t)n * 8);
    hn_dptr d_a = DEV(a, (size_t)n * 2), d_b = DEV(b, (size_t)n * 2), d_c = DEV(c, (size_t)n * 2);
    hn_dptr d_out = DEV(NULL, (size_t)n * 20), d_mask = DEV(NULL, (size_t)n * 4),
            d_f = DEV(NULL, (size_t)n * 8);
    void *args[] = {&d_a, &d_b, &d_c, &n, &d_out, &d_mask, &d_f};
    launch(kernel(&hm, "h2_arith"), (unsigned)n / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 20);
    GET(mask, d_mask, (size_t)n * 4);
    GET(f, d_f, (size_t)n * 8);
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = ref_h2d(a[i]), y = ref_h2d(b[i]), z = ref_h2d(c[i]);
        unsigned short want[10] = {
            ref_round(&F16, x + y, RN), ref_round(&F16, y + z, RN), ref_round(&F16, x * y, RN),
            ref_round(&F16, y * z, RN), ref_h_fma(a[i], b[i], a[i]), ref_h_fma(b[i], c[i], b[i]),
            b[i], c[i], a[i], is_nan_h(b[i]) ? 0x7fff : b[i]};
        for (int j = 0; j < 10; j++)
            EXPECT(out[(size_t)j * n + i] == want[j], "half2 value %d of (%04x %04x %04x): %04x, want %04x",
                   j, a[i], b[i], c[i], out[(size_t)j * n + i], want[j]);
        unsigned wm = (x == y ? 0xffffu : 0u) | (y == z ? 0xffff0000u : 0u);
        EXPECT(mask[i] == wm, "__heq2_mask: %08x, want %08x", mask[i], wm);
        EXPECT((isnan(x) && isnan(f[i])) || f[i] == (float)x, "__half22float2 .x of %04x", a[i]);
        EXPECT((isnan(y) && isnan(f[n + i])) || f[n + i] == (float)y, "__half22float2 .y of %04x", b[i]);
    }
    CHECK_INT(bad, 0);
    FREE(d_a);
    FREE(d_b);
    FREE(d_c);
    FREE(d_out);
    FREE(d_mask);
    FREE(d_f);
    free(a);
    free(b);
    free(c);
    free(out);
    free(mask);
    free(f);
}

static void test_half_math(void) {
    int n = 65536;
    unsigned short *a = xmalloc((size_t)n * 2), *out = xmalloc((size_t)n * 7 * 2);
    for (int i = 0; i < n; i++) a[i] = (unsigned short)i;
    hn_dptr d_a = DEV(a, (size_t)n * 2), d_out = DEV(NULL, (size_t)n * 14);
    void *args[] = {&d_a, &n, &d_out};
    launch(kernel(&hm, "h_math"), (unsigned)n / 256, 1, 256, args);
    GET(out, d_out, (size_t)n * 14);
    static const char *what[] = {"hfloor", "hceil", "htrunc", "hrint", "hexp", "hlog", "hrcp"};
    bad = 0;
    for (int i = 0; i < n; i++) {
        double x = ref_h2d(a[i]);
        /* exp, log, 1/x: in double (within 1 ulp), then rounded: the shim claims
         * the correctly rounded result, which these are for every half input */
        unsigned short want[7] = {ref_round(&F16, floor(x), RN), ref_round(&F16, ceil(x), RN),
                                  ref_round(&F16, trunc(x), RN), ref_round(&F16, nearbyint(x), RN),
                                  ref_round(&F16, exp(x), RN),   ref_round(&F16, log(x), RN),
                                  ref_round(&F16, 1.0 / x, RN)};
        for (int j = 0; j < 7; j++)
            EXPECT(out[(size_t)j * n + i] == want[j], "%s(%04x): %04x, want %04x", what[j], a[i],
                   out[(size_t)j * n + i], want[j]);
    }
    CHECK_INT(bad, 0);
    CHECK_INT(out[3 * n + 0x3800], 0x0000); /* hrint(0.5) = 0 */
    CHECK_INT(out[3 * n + 0x3e00], 0x4000); /* hrint(1.5) = 2 */
    CHECK_INT(out[0 * n + 0xb800], 0xbc00); /* hfloor(-0.5) = -1 */
    FREE(d_a);
    FREE(d_out);
    free(a);
    free(out);
}

static void test_half_consts(void) {
    unsigned short out[14];
    hn_dptr d = DEV(NULL, sizeof out);
    void *args[] = {&d};
    launch(kernel(&hm, "h_consts"), 1, 1, 1, args);
    GET(out, d, sizeof out);
    const unsigned short want[14] = {0x7c00, 0x7fff, 0x0001, 0x7bff, 0x8000, 0x0000, 0x3c00,
                                     0x7f80, 0x7fff, 0x0001, 0x7f7f, 0x8000, 0x0000, 0x3f80};
    for (int i = 0; i < 14; i++) CHECK_INT(out[i], want[i]);
    FREE(d);
}

static void test_half_atomic(void) {
    int threads = 1024;
    unsigned short zero[2] = {0, 0}, h, h2[2], bf;
    unsigned short *old = xmalloc((size_t)threads * 2 * 2);
    hn_dptr d_h = DEV(zero, 2), d_h2 = DEV(zero, 4), d_b = DEV(zero, 2),
            d_old = DEV(NULL, (size_t)threads * 4);
    void *args[] = {&d_h, &d_h2, &d_b, &d_old};
    launch(kernel(&hm, "h_atomic"), 4, 1, 256, args);
    GET(&h, d_h, 2);
    GET(h2, d_h2, 4);
    GET(&bf, d_b, 2);
    GET(old, d_old, (size_t)threads * 4);
    CHECK_INT(h, 0x6400);     /* 1024 */
    CHECK_INT(h2[0], 0x6400); /* 1024 */
    CHECK_INT(h2[1], 0x5c00); /* 256 */
    CHECK_INT(bf, 0x4380);    /* 256 */
    /* every add saw a different value: 0 .. 1023 once each (and 0 .. 255 for bf16) */
    char *seen = xcalloc(1024, 1), *seen_bf = xcalloc(256, 1);
    int dup = 0;
    for (int i = 0; i < threads; i++) {
        double v = ref_h2d(old[i]);
        if (v >= 0 && v < 1024 && v == floor(v) && !seen[(int)v]) seen[(int)v] = 1;
        else dup++;
        if (i < 256) {
            double w = ref_bf2d(old[threads + i]);
            if (w >= 0 && w < 256 && w == floor(w) && !seen_bf[(int)w]) seen_bf[(int)w] = 1;
            else dup++;
        } else {
            CHECK_INT(old[threads + i], 0xffff);
        }
    }
    CHECK_INT(dup, 0);
    free(seen);
    free(seen_bf);
    free(old);
    FREE(d_h);
    FREE(d_h2);
    FREE(d_b);
    FREE(d_old);
}

static void test_half_shuffle(void) {
    int n = 64;
    unsigned short out[4 * 64];
    hn_dptr d = DEV(NULL, sizeof out);
    void *args[] = {&d};
    launch(kernel(&hm, "h_shuffle"), 1, 1, 64, args);
    GET(out, d, sizeof out);
    bad = 0;
    for (int t = 0; t < n; t++) {
        int down = (t & 31) < 31 ? t + 1 : t;
        EXPECT(out[t] == ref_round(&F16, t ^ 1, RN), "__shfl_xor_sync of half, thread %d: %04x", t, out[t]);
        EXPECT(out[n + t] == ref_round(&F16, down + 0.5, RN), "__shfl_down_sync of half2, thread %d: %04x",
               t, out[n + t]);
        EXPECT(out[2 * n + t] == ref_round(&BF16, (t & ~7) + 3, RN), "tile.shfl of bf16, thread %d: %04x",
               t, out[2 * n + t]);
        EXPECT(out[3 * n + t] == ref_round(&F16, 63 - t, RN), "__shared__ half, thread %d: %04x", t,
               out[3 * n + t]);
    }
    CHECK_INT(bad, 0);
    FREE(d);
}

/* ------------------------------------------------------------------------- */
/* cooperative groups */

static module cgm;
static const char *const cg_kernels[] = {
    "tile_reduce<1>", "tile_reduce<2>", "tile_reduce<4>", "tile_reduce<8>", "tile_reduce<16>",
    "tile_reduce<32>", "tile_scan<8>", "tile_scan<16>", "tile_scan<32>", "tile_shuffle<8>",
    "tile_shuffle<16>", "tile_votes<8>", "tile_votes<32>", "block_reduce", "partial_tiles",
    "aggregate", "partitions", "grid_ranks", "big_shuffle", "coalesced_twice"};

/* the float sum of a tile as CUDA's cg::reduce computes it for `lane`: a
 * butterfly of shfl_xor from n/2 down to 1, each step out = out + other */
static float butterfly_sum(const float *v, int n, int lane) {
    float cur[32], next[32];
    memcpy(cur, v, (size_t)n * sizeof *v);
    for (int m = n / 2; m > 0; m /= 2) {
        for (int l = 0; l < n; l++) next[l] = cur[l] + cur[l ^ m];
        memcpy(cur, next, (size_t)n * sizeof *cur);
    }
    return cur[lane];
}

static void test_tile_reduce(void) {
    const int sizes[] = {1, 2, 4, 8, 16, 32};
    int nb = 2, bs = 96, n = nb * bs;
    int *in = xmalloc((size_t)n * 4), *out = xmalloc((size_t)n * 4 * 4);
    float *fin = xmalloc((size_t)n * 4), *fout = xmalloc((size_t)n * 4);
    for (int i = 0; i < n; i++) {
        in[i] = rand_int(-1000, 1000);
        fin[i] = (float)(hn_rand_unit(&seed) * 2 - 1) * (float)ldexp(1, rand_int(-10, 10));
    }
    hn_dptr d_in = DEV(in, (size_t)n * 4), d_fin = DEV(fin, (size_t)n * 4),
            d_out = DEV(NULL, (size_t)n * 16), d_fout = DEV(NULL, (size_t)n * 4);
    for (int s = 0; s < 6; s++) {
        int N = sizes[s];
        char name[32];
        snprintf(name, sizeof name, "tile_reduce<%d>", N);
        void *args[] = {&d_in, &d_fin, &d_out, &d_fout};
        launch(kernel(&cgm, name), (unsigned)nb, 1, (unsigned)bs, args);
        GET(out, d_out, (size_t)n * 16);
        GET(fout, d_fout, (size_t)n * 4);
        bad = 0;
        for (int i = 0; i < n; i++) {
            int base = i / N * N, sum = 0, mn = INT_MAX, mx = INT_MIN;
            for (int j = base; j < base + N; j++) {
                sum += in[j];
                mn = in[j] < mn ? in[j] : mn;
                mx = in[j] > mx ? in[j] : mx;
            }
            float fs = butterfly_sum(fin + base, N, i - base);
            EXPECT(out[i] == sum, "%s thread %d: sum %d, want %d", name, i, out[i], sum);
            EXPECT(out[n + i] == mn, "%s thread %d: min %d, want %d", name, i, out[n + i], mn);
            EXPECT(out[2 * n + i] == mx, "%s thread %d: max %d, want %d", name, i, out[2 * n + i], mx);
            EXPECT(out[3 * n + i] == i % bs / N, "%s thread %d: meta_group_rank %d", name, i, out[3 * n + i]);
            EXPECT(fbits(fout[i]) == fbits(fs), "%s thread %d: float sum %a, want %a", name, i, fout[i], fs);
        }
        CHECK_MSG(bad == 0, "%s", name);
    }
    FREE(d_in);
    FREE(d_fin);
    FREE(d_out);
    FREE(d_fout);
    free(in);
    free(out);
    free(fin);
    free(fout);
}

static void test_tile_scan(void) {
    const int sizes[] = {8, 16, 32};
    int n = 128;
    int *in = xmalloc((size_t)n * 4), *out = xmalloc((size_t)n * 16);
    for (int i = 0; i < n; i++) in[i] = rand_int(-50, 100);
    hn_dptr d_in = DEV(in, (size_t)n * 4), d_out = DEV(NULL, (size_t)n * 16);
    for (int s = 0; s < 3; s++) {
        int N = sizes[s];
        char name[32];
        snprintf(name, sizeof name, "tile_scan<%d>", N);
        void *args[] = {&d_in, &d_out};
        launch(kernel(&cgm, name), 2, 1, (unsigned)n / 2, args);
        GET(out, d_out, (size_t)n * 16);
        bad = 0;
        for (int i = 0; i < n; i++) {
            int base = i / N * N, incl = 0, mx = INT_MIN, xmax = 0;
            for (int j = base; j <= i; j++) {
                incl += in[j];
                if (j < i) xmax = j == base ? in[j] : (in[j] > xmax ? in[j] : xmax);
                mx = in[j] > mx ? in[j] : mx;
            }
            EXPECT(out[i] == incl, "%s %d: inclusive %d, want %d", name, i, out[i], incl);
            EXPECT(out[n + i] == incl - in[i], "%s %d: exclusive %d, want %d", name, i, out[n + i], incl - in[i]);
            EXPECT(out[2 * n + i] == mx, "%s %d: inclusive max %d, want %d", name, i, out[2 * n + i], mx);
            EXPECT(out[3 * n + i] == xmax, "%s %d: exclusive max %d, want %d", name, i, out[3 * n + i], xmax);
        }
        CHECK_MSG(bad == 0, "%s", name);
    }
    FREE(d_in);
    FREE(d_out);
    free(in);
    free(out);
}

static void test_tile_shuffle(void) {
    const int sizes[] = {8, 16};
    int n = 64, out[5 * 64];
    hn_dptr d = DEV(NULL, sizeof out);
    for (int s = 0; s < 2; s++) {
        int N = sizes[s];
        char name[32];
        snprintf(name, sizeof name, "tile_shuffle<%d>", N);
        void *args[] = {&d};
        launch(kernel(&cgm, name), 1, 1, (unsigned)n, args);
        GET(out, d, sizeof out);
        bad = 0;
        for (int i = 0; i < n; i++) {
            int base = i / N * N, r = i - base;
            int want[5] = {1000 + base, 1000 + base + (r + 1) % N, 1000 + (r >= 1 ? i - 1 : i),
                           1000 + (r + 2 < N ? i + 2 : i), 1000 + (i ^ (N / 2))};
            for (int j = 0; j < 5; j++)
                EXPECT(out[j * n + i] == want[j], "%s thread %d shuffle %d: %d, want %d", name, i, j,
                       out[j * n + i], want[j]);
        }
        CHECK_MSG(bad == 0, "%s", name);
    }
    FREE(d);
}

static void test_tile_votes(void) {
    const int sizes[] = {8, 32};
    int nb = 2, bs = 64, n = nb * bs;
    int *pred = xmalloc((size_t)n * 4);
    unsigned *out = xmalloc((size_t)n * 9 * 4), *sub = xmalloc((size_t)n * 2 * 4);
    hn_dptr d_p = DEV(NULL, (size_t)n * 4), d_out = DEV(NULL, (size_t)n * 36),
            d_sub = DEV(NULL, (size_t)n * 8);
    for (int s = 0; s < 2; s++) {
        int N = sizes[s];
        /* tiles all nonzero (7), all zero, or mixed */
        for (int i = 0; i < n; i++) {
            int t = i / N;
            pred[i] = t % 3 == 0 ? 7 : t % 3 == 1 ? 0 : rand_int(0, 5);
        }
        hn_err err;
        be->ops->upload(be, d_p, pred, (size_t)n * 4, &err);
        char name[32];
        snprintf(name, sizeof name, "tile_votes<%d>", N);
        void *args[] = {&d_p, &d_out, &d_sub};
        launch(kernel(&cgm, name), (unsigned)nb, 1, (unsigned)bs, args);
        GET(out, d_out, (size_t)n * 36);
        GET(sub, d_sub, (size_t)n * 8);
        bad = 0;
        int anys[2] = {0}, alls[2] = {0};
        for (int i = 0; i < n; i++) {
            int base = i / N * N, r = i - base;
            unsigned ballot = 0, same3 = 0, full = N == 32 ? 0xffffffffu : (1u << N) - 1;
            int all_eq = 1;
            for (int j = 0; j < N; j++) {
                if (pred[base + j]) ballot |= 1u << j;
                if (pred[base + j] % 3 == pred[i] % 3) same3 |= 1u << j;
                if (pred[base + j] != pred[base]) all_eq = 0;
            }
            unsigned want[9] = {ballot, ballot != 0, ballot == full, same3, all_eq ? full : 0,
                                (unsigned)all_eq, (unsigned)r, (unsigned)(i % bs / N), (unsigned)(bs / N)};
            for (int j = 0; j < 9; j++)
                EXPECT(out[j * n + i] == want[j], "%s thread %d value %d: %x, want %x", name, i, j,
                       out[j * n + i], want[j]);
            EXPECT(sub[i] == (unsigned)r / 4, "%s thread %d: quad meta_group_rank %u", name, i, sub[i]);
            EXPECT(sub[n + i] == (unsigned)N / 4, "%s thread %d: quad meta_group_size %u", name, i, sub[n + i]);
            anys[out[n + i] != 0]++;
            alls[out[2 * n + i] != 0]++;
        }
        CHECK_MSG(bad == 0, "%s", name);
        /* both outcomes of any and all occurred */
        CHECK(anys[0] > 0 && anys[1] > 0 && alls[0] > 0 && alls[1] > 0);
    }
    FREE(d_p);
    FREE(d_out);
    FREE(d_sub);
    free(pred);
    free(out);
    free(sub);
}

static void test_block_reduce(void) {
    int nb = 3, bs = 256, n = nb * bs;
    float *in = xmalloc((size_t)n * 4), out[3];
    unsigned *dims = xmalloc((size_t)n * 6 * 4);
    for (int i = 0; i < n; i++) in[i] = (float)(hn_rand_unit(&seed) * 2 - 1);
    hn_dptr d_in = DEV(in, (size_t)n * 4), d_out = DEV(NULL, sizeof out),
            d_dims = DEV(NULL, (size_t)n * 24);
    void *args[] = {&d_in, &d_out, &d_dims};
    launch(kernel(&cgm, "block_reduce"), (unsigned)nb, 1, (unsigned)bs, args);
    GET(out, d_out, sizeof out);
    GET(dims, d_dims, (size_t)n * 24);
    for (int b = 0; b < nb; b++) {
        float partial[32] = {0};
        double exact = 0;
        for (int w = 0; w < bs / 32; w++) partial[w] = butterfly_sum(in + b * bs + w * 32, 32, 0);
        for (int i = 0; i < bs; i++) exact += in[b * bs + i];
        float want = butterfly_sum(partial, 32, 0);
        CHECK_MSG(fbits(out[b]) == fbits(want), "block %d: %a, want %a", b, out[b], want);
        CHECK_NEAR(out[b], exact, 1e-4);
    }
    bad = 0;
    for (int i = 0; i < n; i++) {
        unsigned want[6] = {(unsigned)(i % bs), (unsigned)bs, (unsigned)(i / bs), (unsigned)(i % bs),
                            (unsigned)bs, (unsigned)bs};
        for (int j = 0; j < 6; j++)
            EXPECT(dims[j * n + i] == want[j], "block_reduce thread %d dim %d: %u, want %u", i, j,
                   dims[j * n + i], want[j]);
    }
    CHECK_INT(bad, 0);
    FREE(d_in);
    FREE(d_out);
    FREE(d_dims);
    free(in);
    free(dims);
}

static void test_partial_tiles(void) {
    int n = 100, in[100], out[8 * 100];
    for (int i = 0; i < n; i++) in[i] = rand_int(-100, 100);
    hn_dptr d_in = DEV(in, sizeof in), d_out = DEV(NULL, sizeof out);
    void *args[] = {&d_in, &d_out};
    launch(kernel(&cgm, "partial_tiles"), 1, 1, (unsigned)n, args);
    GET(out, d_out, sizeof out);
    bad = 0;
    for (int i = 0; i < n; i++) {
        /* the dynamic tiles of 16: the seventh has threads 96 .. 99 */
        int tsize = i / 16 * 16 + 16 <= n ? 16 : n - i / 16 * 16;
        /* the coalesced group is the warp's threads (warp 3 has 4); its tiles of
         * 16 are halves of a full warp, and warp 3's group itself */
        int wsize = i / 32 * 32 + 32 <= n ? 32 : n - i / 32 * 32;
        int cbase = wsize == 32 ? i / 16 * 16 : i / 32 * 32, csize = wsize == 32 ? 16 : wsize;
        int sum = 0, incl = 0;
        for (int j = cbase; j < cbase + csize; j++) {
            sum += in[j];
            if (j <= i) incl += in[j];
        }
        int want[8] = {tsize, i % 16, wsize == 32 ? i % 32 / 16 : 0, wsize, csize, i - cbase, sum, incl};
        for (int j = 0; j < 8; j++)
            EXPECT(out[j * n + i] == want[j], "partial_tiles thread %d value %d: %d, want %d", i, j,
                   out[j * n + i], want[j]);
    }
    CHECK_INT(bad, 0);
    CHECK_INT(out[99], 4); /* the last dynamic tile is short */
    FREE(d_in);
    FREE(d_out);
}

/* The second coalesced_threads() waits for the lanes still finishing the first:
 * both groups are the whole warp. */
static void test_coalesced_twice(void) {
    int nb = 2, bs = 64, n = nb * bs, out[2 * 128];
    hn_dptr d_out = DEV(NULL, sizeof out);
    void *args[] = {&d_out};
    launch(kernel(&cgm, "coalesced_twice"), (unsigned)nb, 1, (unsigned)bs, args);
    GET(out, d_out, sizeof out);
    bad = 0;
    for (int i = 0; i < 2 * n; i++) EXPECT(out[i] == 32, "thread %d, group %d: size %d", i % n, i / n + 1, out[i]);
    CHECK_INT(bad, 0);
    FREE(d_out);
}

static void test_aggregate(void) {
    int nb = 2, bs = 64, n = nb * bs, flags[128], out[3 * 128], count = 0, total = 0;
    for (int i = 0; i < n; i++) flags[i] = rand_int(0, 1);
    flags[0] = 1, flags[33] = 0; /* both branches in warp 0 and 1 */
    for (int i = 0; i < n; i++) total += flags[i];
    hn_dptr d_f = DEV(flags, sizeof flags), d_c = DEV(NULL, 4), d_out = DEV(NULL, sizeof out);
    void *args[] = {&d_f, &d_c, &d_out};
    launch(kernel(&cgm, "aggregate"), (unsigned)nb, 1, (unsigned)bs, args);
    GET(&count, d_c, 4);
    GET(out, d_out, sizeof out);
    CHECK_INT(count, total);
    char *slot = xcalloc((size_t)n, 1);
    bad = 0;
    for (int i = 0; i < n; i++) {
        if (!flags[i]) {
            EXPECT(out[i] == -1 && out[n + i] == -1, "thread %d not flagged but wrote", i);
            continue;
        }
        int w = i / 32 * 32, size = 0, rank = 0;
        for (int j = w; j < w + 32; j++) {
            size += flags[j];
            if (j < i) rank += flags[j];
        }
        EXPECT(out[n + i] == size, "thread %d: group size %d, want %d", i, out[n + i], size);
        EXPECT(out[2 * n + i] == rank, "thread %d: rank %d, want %d", i, out[2 * n + i], rank);
        /* the slots of a warp are consecutive, in rank order */
        int first = -1;
        for (int j = w; j < w + 32 && first < 0; j++)
            if (flags[j]) first = out[j];
        EXPECT(out[i] == first + rank, "thread %d: slot %d, want %d", i, out[i], first + rank);
        EXPECT(out[i] >= 0 && out[i] < total && !slot[out[i]], "thread %d: slot %d twice or out of range", i, out[i]);
        if (out[i] >= 0 && out[i] < total) slot[out[i]] = 1;
    }
    CHECK_INT(bad, 0);
    free(slot);
    FREE(d_f);
    FREE(d_c);
    FREE(d_out);
}

static void test_partitions(void) {
    int n = 64, pred[64], label[64], out[5 * 64];
    for (int i = 0; i < n; i++) {
        pred[i] = i < 32 ? rand_int(0, 1) : 1; /* warp 1: all the same */
        label[i] = rand_int(0, 3);
    }
    hn_dptr d_p = DEV(pred, sizeof pred), d_l = DEV(label, sizeof label), d_out = DEV(NULL, sizeof out);
    void *args[] = {&d_p, &d_l, &d_out};
    launch(kernel(&cgm, "partitions"), 1, 1, (unsigned)n, args);
    GET(out, d_out, sizeof out);
    bad = 0;
    for (int i = 0; i < n; i++) {
        int w = i / 32 * 32, same = 0, rank = 0, lsame = 0, labels = 0, ones = 0;
        unsigned seen = 0;
        for (int j = w; j < w + 32; j++) {
            ones += pred[j] != 0;
            if ((pred[j] != 0) == (pred[i] != 0)) {
                same++;
                if (j < i) rank++;
            }
            lsame += label[j] == label[i];
            if (!(seen >> label[j] & 1u)) labels++;
            seen |= 1u << label[j];
        }
        int mixed = ones != 0 && ones != 32;
        int want[5] = {same, rank, mixed ? pred[i] != 0 : 0, lsame, labels};
        for (int j = 0; j < 5; j++)
            EXPECT(out[j * n + i] == want[j], "partitions thread %d value %d: %d, want %d", i, j,
                   out[j * n + i], want[j]);
    }
    CHECK_INT(bad, 0);
    FREE(d_p);
    FREE(d_l);
    FREE(d_out);
}

static void test_grid_and_big(void) {
    int n = 4 * 64;
    unsigned long long *out = xmalloc((size_t)n * 4 * 8);
    hn_dptr d = DEV(NULL, (size_t)n * 32);
    void *args[] = {&d};
    launch(kernel(&cgm, "grid_ranks"), 2, 2, 64, args);
    GET(out, d, (size_t)n * 32);
    bad = 0;
    for (int i = 0; i < n; i++) {
        unsigned long long want[4] = {(unsigned long long)i, (unsigned long long)(i / 64), 4, (unsigned long long)n};
        for (int j = 0; j < 4; j++)
            EXPECT(out[j * n + i] == want[j], "grid_ranks %d value %d: %llu, want %llu", i, j,
                   out[j * n + i], want[j]);
    }
    CHECK_INT(bad, 0);
    free(out);
    FREE(d);
    double big[3 * 32];
    hn_dptr d2 = DEV(NULL, sizeof big);
    void *a2[] = {&d2};
    launch(kernel(&cgm, "big_shuffle"), 1, 1, 32, a2);
    GET(big, d2, sizeof big);
    for (int i = 0; i < 32; i++) {
        double src = (double)(i / 8 * 8 + 2);
        CHECK(big[i] == src && big[32 + i] == 2 * src && big[64 + i] == 3 * src);
    }
    FREE(d2);
}

/* ------------------------------------------------------------------------- */
/* faults and refusals */

/* "<file>:<line>" of the line of `file` carrying the comment "@name" */
static char *at(const char *file, const char *name) {
    char *path = emu_kernel_path(file);
    char *where = emu_marker_at(path, file, name);
    free(path);
    return where;
}

#define CHECK_AT(msg, file, name)                                                            \
    do {                                                                                     \
        char *_w = at(file, name);                                                           \
        CHECK_CONTAINS(msg, _w);                                                             \
        free(_w);                                                                            \
    } while (0)

static const char *expect_fail(hn_kernel *k, unsigned block, void **args) {
    static hn_err err;
    int rc = emu_launch(be, k, 1, 1, 1, block, 1, 1, 0, args, &err);
    CHECK_MSG(rc != 0, "launch should have failed");
    fprintf(stderr, "  message: %s\n", err.msg);
    return err.msg;
}

static void test_divergence(void) {
    static const char *const names[] = {"tile_sync_divergent", "block_same_line", "sync_two_sites",
                                        "partial_static_tile"};
    module m;
    module_load(&m, "cg_broken.cu", names, 4);
    hn_dptr d = DEV(NULL, 64 * 4);
    void *a1[] = {&d};
    const char *msg = expect_fail(kernel(&m, "tile_sync_divergent"), 32, a1);
    CHECK_CONTAINS(msg, "kernel 'tile_sync_divergent'");
    CHECK_CONTAINS(msg, "thread (4,0,0)");
    CHECK_CONTAINS(msg, "divergent thread_block_tile::sync");
    CHECK_AT(msg, "cg_broken.cu", "tile_sync");

    /* two block.sync() on one line: the call sites differ by column */
    int k = 10;
    void *a2[] = {&d, &k};
    msg = expect_fail(kernel(&m, "block_same_line"), 32, a2);
    CHECK_CONTAINS(msg, "thread (10,0,0)");
    CHECK_CONTAINS(msg, "divergent thread_block::sync");
    CHECK_CONTAINS(msg, "on the same line");
    CHECK_AT(msg, "cg_broken.cu", "block_same_line");
    k = 64; /* every thread takes the same branch: fine */
    launch(kernel(&m, "block_same_line"), 1, 1, 32, a2);

    msg = expect_fail(kernel(&m, "sync_two_sites"), 32, a1);
    CHECK_CONTAINS(msg, "thread (16,0,0)");
    CHECK_CONTAINS(msg, "divergent thread_block::sync");
    CHECK_AT(msg, "cg_broken.cu", "sync_a");
    CHECK_AT(msg, "cg_broken.cu", "sync_b");

    /* tiled_partition<8> of 20 threads: CUDA requires a multiple of 8 */
    msg = expect_fail(kernel(&m, "partial_static_tile"), 20, a1);
    CHECK_CONTAINS(msg, "thread_block_tile::shfl");
    CHECK_CONTAINS(msg, "names lanes 20-23");
    CHECK_AT(msg, "cg_broken.cu", "partial_tile");
    int out[24];
    launch(kernel(&m, "partial_static_tile"), 1, 1, 24, a1);
    GET(out, d, sizeof out);
    for (int i = 0; i < 24; i++) CHECK_INT(out[i], i / 8 * 8);

    FREE(d);
    module_free(&m);
}

/* Compiles cg_grid_sync.cu with kernel `name` (and define `def`) for the
 * emulator, expecting a refusal that says `what` at the line marked `mark`. */
static void check_refused(const char *name, const char *def, const char *what, const char *mark) {
    char *path = emu_kernel_path("cg_grid_sync.cu");
    const char *ks[] = {name}, *defs[] = {def};
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    int rc = emu_compile_file(path, ks, 1, defs, def ? 1 : 0, &img, &log, &err);
    CHECK_MSG(rc != 0, "%s compiled for the emulator", name);
    if (rc == 0) hn_module_image_free(&img);
    else fprintf(stderr, "  message: %s\n", err.msg);
    hn_sb both;
    hn_sb_init(&both);
    hn_sb_addf(&both, "%s\n%s", err.msg, log ? log : "");
    CHECK_CONTAINS(both.buf, what);
    CHECK_CONTAINS(both.buf, "is not supported");
    CHECK_AT(err.msg, "cg_grid_sync.cu", mark);
    hn_sb_free(&both);
    free(log);
    free(path);
}

static void test_refused(void) {
    check_refused("grid_sync", NULL, "grid_group::sync (this_grid().sync()", "grid_sync");
    check_refused("tile64", "TILE64", "thread_block_tile<N> with N > 32", "tile64");
}

/* the same kernels through NVRTC for sm_90 (CUDA's own headers) */
static void test_nvrtc(void) {
    static const char *const broken[] = {"tile_sync_divergent", "block_same_line", "sync_two_sites",
                                         "partial_static_tile"};
    static const char *const grid[] = {"grid_sync"};
    const struct {
        const char *file;
        const char *const *kernels;
        int n;
    } files[] = {
        {"cg.cu", cg_kernels, (int)(sizeof cg_kernels / sizeof *cg_kernels)},
        {"half.cu", half_kernels, (int)(sizeof half_kernels / sizeof *half_kernels)},
        {"cg_broken.cu", broken, 4},
        {"cg_grid_sync.cu", grid, 1},
    };
    char *cache = emu_cache();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *path = emu_kernel_path(files[i].file);
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
    ref_init(&F16, ref_h2d, 0x7bff, 0x7c00);
    ref_init(&BF16, ref_bf2d, 0x7f7f, 0x7f80);

    module_load(&hm, "half.cu", half_kernels, (int)(sizeof half_kernels / sizeof *half_kernels));
    test_half_roundtrip();
    test_half_convert();
    test_half_int();
    test_half_arith();
    test_bf16_arith();
    test_half2();
    test_half_math();
    test_half_consts();
    test_half_atomic();
    test_half_shuffle();
    module_free(&hm);

    module_load(&cgm, "cg.cu", cg_kernels, (int)(sizeof cg_kernels / sizeof *cg_kernels));
    test_tile_reduce();
    test_tile_scan();
    test_tile_shuffle();
    test_tile_votes();
    test_block_reduce();
    test_partial_tiles();
    test_aggregate();
    test_coalesced_twice();
    test_partitions();
    test_grid_and_big();
    test_divergence();
    test_tile_reduce(); /* the backend still works after the failures */
    module_free(&cgm);

    test_refused();
    test_nvrtc();

    hn_backend_destroy(be);
    free(F16.v);
    free(BF16.v);
    return hn_test_exit();
}
