/*
 * relu/eltwise.c: the element-wise operators' common code (see eltwise.h).
 */
#include "eltwise.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int eltwise_shape(const char *op, const double *p, int n_buffers, int64_t *counts, hn_err *err) {
    if (!(p[ELT_N] >= 1 && p[ELT_N] <= 2147483647.0 && p[ELT_N] == (double)(int64_t)p[ELT_N]))
        return hn_errf(err, "%s: n = %g must be a whole number between 1 and 2^31-1 (the kernels index with int)", op,
                       p[ELT_N]);
    for (int i = 0; i < n_buffers; i++) counts[i] = (int64_t)p[ELT_N];
    return 0;
}

int eltwise_dims(const double *p, int buffer, int64_t dims[4]) {
    (void)buffer;
    dims[0] = (int64_t)p[ELT_N];
    return 1;
}

void eltwise_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "n:%lld", (long long)p[ELT_N]);
}

void eltwise_fill_x(float *x, int64_t n, float scale, int zeros, uint64_t seed) {
    hn_fill_randn_f32(x, n, seed);
    for (int64_t i = 0; i < n; i++) x[i] *= scale;
    for (int64_t i = 5; zeros && i < n; i += 8) x[i] = i % 16 == 5 ? 0.0f : -0.0f;
}

/* ------------------------------------------------------------------------------------
 * The threaded driver: hn_ref_parallel over blocks of 8 elements (so every part
 * but the last is whole vectors, and an aligned array stays aligned).
 */

typedef struct {
    eltwise_fn fn;
    double *out;
    const float *x, *dy;
    int64_t n;
} eltwise_job;

static void eltwise_part(void *ctx, int64_t begin, int64_t end) {
    const eltwise_job *j = ctx;
    begin *= 8, end = end * 8 < j->n ? end * 8 : j->n;
    j->fn(j->out + begin, j->x + begin, j->dy ? j->dy + begin : NULL, end - begin);
}

void eltwise_reference(eltwise_fn fn, const float *x, const float *dy, int64_t n, int64_t min_per_thread, hn_ref *ref,
                       int threads) {
    ref->n = n;
    ref->values = hn_ref_alloc_values(n);
    snprintf(ref->method, sizeof ref->method, "full");
    eltwise_job job = {fn, ref->values, x, dy, n};
    hn_ref_parallel((n + 7) / 8, min_per_thread / 8, threads, eltwise_part, &job);
}

/* ------------------------------------------------------------------------------------
 * Vector loops, 8 doubles at a time, written with GCC's vector extensions and
 * compiled three times: for AVX-512, for AVX2 + FMA, and for the baseline
 * (SSE2), picked at run time (this file is compiled with -ffp-contract=fast, so
 * a * b + c is one FMA where the target has it).
 *
 * exp(x): x clamped to [-708, 708] (NaN stays NaN); j = round(16 x / ln2) (by
 * adding 1.5 * 2^52, whose low bits then hold j), r = x - j ln2 / 16, |r| <=
 * ln2 / 32; exp(x) = 2^(j >> 4) * 2^((j & 15) / 16) * exp(r). The middle factor
 * comes from a table of 16 (two registers and one permute on AVX-512) whose
 * entries hold the bits of 2^(i / 16) less i << 48, so that adding j << 48
 * (the sum's low bits shifted up: no mask, no subtraction) puts j >> 4 into the
 * exponent. exp(r) is a degree-6 polynomial: Taylor's, with the r^7 term folded
 * into r^5, r^3 and r by Chebyshev economisation on |r| <= ln2 / 32 (truncation
 * under 1e-17 relative; one multiply-add fewer than degree 7 Taylor). The result
 * is within 1e-15 relatively of exp (about 2 ulp: the table's entry and a few
 * roundings), normal over the whole clamped range.
 */

typedef double elt_v8d __attribute__((vector_size(64)));
typedef long long elt_v8l __attribute__((vector_size(64)));
typedef unsigned long long elt_v8u __attribute__((vector_size(64)));
typedef float elt_v8f __attribute__((vector_size(32)));
typedef float elt_v16f __attribute__((vector_size(64)));
typedef int elt_v16i __attribute__((vector_size(64)));

/* The bits of 2^(i / 16), rounded to double, less i << 48 (see above). */
static const uint64_t EXP2_16TH_BITS[16] __attribute__((aligned(64))) = {
    0x3ff0000000000000ULL, 0x3fefb5586cf9890fULL, 0x3fef72b83c7d517bULL, 0x3fef387a6e756238ULL,
    0x3fef06fe0a31b715ULL, 0x3feedea64c123422ULL, 0x3feebfdad5362a27ULL, 0x3feeab07dd485429ULL,
    0x3feea09e667f3bcdULL, 0x3feea11473eb0187ULL, 0x3feeace5422aa0dbULL, 0x3feec49182a3f090ULL,
    0x3feee89f995ad3adULL, 0x3fef199bdd85529cULL, 0x3fef5818dcfba487ULL, 0x3fefa4afa2a490daULL,
};

/* The table lookup T[i & 15] per lane (as 64-bit integers), and the clamp of v to [-708, 708] (NaN
 * kept), as each target does them best: ELT_LOOKUP and ELT_CLAMP are defined
 * before each instantiation of the bodies below. */
#define ELT_LOOKUP_LANES(out, idx)                                                                 \
    do {                                                                                           \
        for (int l_ = 0; l_ < 8; l_++) (out)[l_] = EXP2_16TH_BITS[(idx)[l_] & 15];                 \
    } while (0)
#define ELT_CLAMP_MASKS(v)                                                                         \
    do {                                                                                           \
        const elt_v8d zero_ = {0}, lo_ = zero_ - 708.0, hi_ = zero_ + 708.0;                       \
        const elt_v8l below_ = (v) < -708.0, above_ = (v) > 708.0;                                 \
        (v) = (elt_v8d)(((elt_v8l)(v) & ~below_) | ((elt_v8l)lo_ & below_));                       \
        (v) = (elt_v8d)(((elt_v8l)(v) & ~above_) | ((elt_v8l)hi_ & above_));                       \
    } while (0)

/* *vp = exp(S * *vp), lane by lane, S = 1 or -1 (a constant: sigmoid wants
 * exp(-x), and folding the sign into the constants saves negating x), after
 * CLAMP(*vp): ELT_CLAMP, or ELT_CLAMP_LO where the argument cannot exceed 0
 * (softmax's x - max; one instruction fewer on the busiest ports). With r =
 * S v - j ln2/16 the reduced argument, w = S r = v - S j ln2/16 is computed and
 * exp(r) = sum_i S^i w^i / i!. */
#define ELT_EXP8(vp, S, CLAMP)                                                                     \
    do {                                                                                           \
        elt_v8d v_ = *(vp);                                                                        \
        CLAMP(v_);                                                                                 \
        const double shift_ = 0x1.8p52;                                                            \
        const elt_v8d t_ = v_ * ((S) * 23.083120654223414) + shift_, k_ = t_ - shift_; /* 16/ln2 */ \
        elt_v8d w_ = v_ - k_ * ((S) * 0x1.62e42feep-5); /* ln2 / 16, high part (exact times k) */  \
        w_ = w_ - k_ * ((S) * 0x1.a39ef35793c76p-37);   /* ln2 / 16, low part */                   \
        elt_v8d p_ = w_ * (1.0 / 720.0) + (S) * 0x1.11126eebfffa7p-7; /* 1/120 + folded r^7 */     \
        p_ = p_ * w_ + 1.0 / 24.0;                                                                 \
        p_ = p_ * w_ + (S) * 0x1.555555540527cp-3; /* 1/6 less folded r^7 */                      \
        p_ = p_ * w_ + 0.5;                                                                        \
        p_ = p_ * w_ + (S) * 0x1.000000000000ap+0; /* 1 + folded r^7 */                            \
        p_ = p_ * w_ + 1.0;                                                                        \
        /* the low 52 bits of t are 2^51 + j: their low 4 bits pick the entry,  */                 \
        /* and t << 48 is j << 48 (mod 2^64) */                                                    \
        elt_v8u tab_;                                                                              \
        ELT_LOOKUP(tab_, (elt_v8l)t_);                                                             \
        *(vp) = p_ * (elt_v8d)(tab_ + ((elt_v8u)t_ << 48));                                        \
    } while (0)

/* 8 lanes from src (n of them, the rest 0) into a vector, and back: whole
 * vectors in one move, the tail through a zeroed array. */
#define LOAD8(v, src, n, T)                                                                        \
    do {                                                                                           \
        if ((n) == 8) {                                                                            \
            memcpy(&(v), src, sizeof(v));                                                          \
        } else {                                                                                   \
            T tmp_[8] = {0};                                                                       \
            memcpy(tmp_, src, sizeof(T) * (size_t)(n));                                            \
            memcpy(&(v), tmp_, sizeof tmp_);                                                       \
        }                                                                                          \
    } while (0)
/* 8 floats (or the first n, the rest 0) from src, converted to double. */
#define ELT_LOADF8_GENERIC(v, src, n)                                                              \
    do {                                                                                           \
        elt_v8f f_;                                                                                \
        LOAD8(f_, src, n, float);                                                                  \
        (v) = __builtin_convertvector(f_, elt_v8d);                                                \
    } while (0)
/* Stores the first n of 8 lanes. */
#define STORE8(dst, v, n)                                                                          \
    do {                                                                                           \
        if ((n) == 8) {                                                                            \
            memcpy(dst, &(v), sizeof(v));                                                          \
        } else {                                                                                   \
            double tmp_[8];                                                                        \
            memcpy(tmp_, &(v), sizeof tmp_);                                                       \
            memcpy(dst, tmp_, sizeof(double) * (size_t)(n));                                       \
        }                                                                                          \
    } while (0)

/* The loops, as one body per instruction set. */
#define EXP_BODY                                                                                   \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d v;                                                                                 \
        LOAD8(v, x + i, m, double);                                                                \
        ELT_EXP8(&v, 1.0, ELT_CLAMP);                                                              \
        STORE8(y + i, v, m);                                                                       \
    }

/* y[i] = exp(x[i] - shift), and their sum: 8 running sums (lane l takes the
 * elements i = l mod 8), added pairwise at the end. */
#define EXP_SUM_BODY                                                                               \
    elt_v8d acc = {0};                                                                             \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d v;                                                                                 \
        ELT_LOADF8(v, x + i, m);                                                                   \
        v = v - shift;                                                                             \
        ELT_EXP8(&v, 1.0, ELT_CLAMP_LO);                                                           \
        if (m < 8) {                                                                               \
            const elt_v8l lane = {0, 1, 2, 3, 4, 5, 6, 7};                                         \
            v = (elt_v8d)((elt_v8l)v & (lane < m));                                                \
        }                                                                                          \
        acc += v;                                                                                  \
        STORE8(y + i, v, m);                                                                       \
    }                                                                                              \
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));

/* y[i] = scale d[i]. */
#define SCALE_BODY                                                                                 \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d v;                                                                                 \
        LOAD8(v, d + i, m, double);                                                                \
        v = v * scale;                                                                             \
        STORE8(y + i, v, m);                                                                       \
    }

/* y[i] = x[i] widened. */
#define WIDEN_BODY                                                                                 \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d v;                                                                                 \
        ELT_LOADF8(v, x + i, m);                                                                   \
        STORE8(y + i, v, m);                                                                       \
    }

/* The max of x[0 .. n) by `x > m ? x : m` from m = x[0], on 4 x 16 lanes (four
 * independent chains: one compare-and-select's latency would otherwise bound
 * the loop), folded into 16 lanes and then across them: NaN is never taken
 * (unless x[0] is NaN, which then stays). */
#define ELT_MAX16(m, v)                                                                            \
    do {                                                                                           \
        const elt_v16i take_ = (v) > (m);                                                          \
        (m) = (elt_v16f)(((elt_v16i)(v) & take_) | ((elt_v16i)(m) & ~take_));                      \
    } while (0)
#define MAX_BODY                                                                                   \
    elt_v16f m0, m1, m2, m3;                                                                       \
    for (int l = 0; l < 16; l++) m0[l] = x[0];                                                     \
    m1 = m2 = m3 = m0;                                                                             \
    int64_t i = 0;                                                                                 \
    for (; i + 64 <= n; i += 64) {                                                                 \
        elt_v16f v0, v1, v2, v3;                                                                   \
        memcpy(&v0, x + i, sizeof v0);                                                             \
        memcpy(&v1, x + i + 16, sizeof v1);                                                        \
        memcpy(&v2, x + i + 32, sizeof v2);                                                        \
        memcpy(&v3, x + i + 48, sizeof v3);                                                        \
        ELT_MAX16(m0, v0);                                                                         \
        ELT_MAX16(m1, v1);                                                                         \
        ELT_MAX16(m2, v2);                                                                         \
        ELT_MAX16(m3, v3);                                                                         \
    }                                                                                              \
    ELT_MAX16(m0, m1);                                                                             \
    ELT_MAX16(m2, m3);                                                                             \
    ELT_MAX16(m0, m2);                                                                             \
    for (; i + 16 <= n; i += 16) {                                                                 \
        elt_v16f v;                                                                                \
        memcpy(&v, x + i, sizeof v);                                                               \
        ELT_MAX16(m0, v);                                                                          \
    }                                                                                              \
    float best = m0[0];                                                                            \
    for (int l = 1; l < 16; l++) best = m0[l] > best ? m0[l] : best;                               \
    for (; i < n; i++) best = x[i] > best ? x[i] : best;                                           \
    return best;

/* s = 1 / (1 + e), e = exp(-x); the gradient dy s (1 - s) as dy (e s) s, which
 * does not cancel where s is near 1. */
#define SIGMOID_BODY                                                                               \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d e, out;                                                                            \
        ELT_LOADF8(e, x + i, m);                                                                   \
        ELT_EXP8(&e, -1.0, ELT_CLAMP);                                                             \
        const elt_v8d s = 1.0 / (1.0 + e);                                                         \
        if (dy) {                                                                                  \
            elt_v8d g;                                                                             \
            ELT_LOADF8(g, dy + i, m);                                                              \
            out = g * ((e * s) * s);                                                               \
        } else {                                                                                   \
            out = s;                                                                               \
        }                                                                                          \
        STORE8(y + i, out, m);                                                                     \
    }

/* relu: v where x > 0 or x is NaN (x <= 0 is false), else +0. */
#define RELU_BODY                                                                                  \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8d xd, vd;                                                                            \
        ELT_LOADF8(xd, x + i, m);                                                                  \
        vd = xd;                                                                                   \
        if (dy) ELT_LOADF8(vd, dy + i, m);                                                         \
        const elt_v8l off = xd <= 0.0;                                                             \
        const elt_v8d out = (elt_v8d)((elt_v8l)vd & ~off);                                         \
        STORE8(y + i, out, m);                                                                     \
    }

#if defined(__GNUC__) && defined(__x86_64__)
#define ELT_X86 1
#include <immintrin.h>

/* AVX-512: the table in two registers, one two-source permute; the clamp by
 * min and max, which return their second operand (v) when it is NaN. */
#define ELT_LOOKUP(out, idx)                                                                       \
    (out) = (elt_v8u)_mm512_permutex2var_epi64(_mm512_load_si512(EXP2_16TH_BITS), (__m512i)(idx), \
                                               _mm512_load_si512(EXP2_16TH_BITS + 8))
#define ELT_CLAMP(v)                                                                               \
    (v) = (elt_v8d)_mm512_max_pd(_mm512_set1_pd(-708.0), _mm512_min_pd(_mm512_set1_pd(708.0), (__m512d)(v)))
#define ELT_CLAMP_LO(v) (v) = (elt_v8d)_mm512_max_pd(_mm512_set1_pd(-708.0), (__m512d)(v))
#define ELT_LOADF8(v, src, n)                                                                      \
    do {                                                                                           \
        if ((n) == 8) (v) = (elt_v8d)_mm512_cvtps_pd(_mm256_loadu_ps(src));                        \
        else ELT_LOADF8_GENERIC(v, src, n);                                                        \
    } while (0)
__attribute__((target("avx512f"))) static void exp_avx512(double *y, const double *x, int64_t n) {
    EXP_BODY
}
__attribute__((target("avx512f"))) static double exp_sum_avx512(double *y, const float *x, double shift, int64_t n) {
    EXP_SUM_BODY
}
__attribute__((target("avx512f"))) static void scale_avx512(double *y, const double *d, double scale, int64_t n) {
    SCALE_BODY
}
__attribute__((target("avx512f"))) static float max_avx512(const float *x, int64_t n) {
    MAX_BODY
}
__attribute__((target("avx512f"))) static void widen_avx512(double *y, const float *x, int64_t n) {
    WIDEN_BODY
}
__attribute__((target("avx512f"))) static void sigmoid_avx512(double *y, const float *x, const float *dy, int64_t n) {
    SIGMOID_BODY
}
__attribute__((target("avx512f"))) static void relu_avx512(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}
#undef ELT_LOOKUP
#undef ELT_CLAMP
#undef ELT_CLAMP_LO
#define ELT_CLAMP_LO ELT_CLAMP_MASKS
#undef ELT_LOADF8
#define ELT_LOADF8 ELT_LOADF8_GENERIC

/* AVX2 and the baseline: the table lane by lane, the clamp by masks. */
#define ELT_LOOKUP ELT_LOOKUP_LANES
#define ELT_CLAMP ELT_CLAMP_MASKS
__attribute__((target("avx2,fma"))) static void exp_avx2(double *y, const double *x, int64_t n) {
    EXP_BODY
}
__attribute__((target("avx2,fma"))) static double exp_sum_avx2(double *y, const float *x, double shift, int64_t n) {
    EXP_SUM_BODY
}
__attribute__((target("avx2,fma"))) static void scale_avx2(double *y, const double *d, double scale, int64_t n) {
    SCALE_BODY
}
__attribute__((target("avx2,fma"))) static float max_avx2(const float *x, int64_t n) {
    MAX_BODY
}
__attribute__((target("avx2,fma"))) static void widen_avx2(double *y, const float *x, int64_t n) {
    WIDEN_BODY
}
__attribute__((target("avx2,fma"))) static void sigmoid_avx2(double *y, const float *x, const float *dy, int64_t n) {
    SIGMOID_BODY
}
__attribute__((target("avx2,fma"))) static void relu_avx2(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}
#else
#define ELT_LOOKUP ELT_LOOKUP_LANES
#define ELT_CLAMP ELT_CLAMP_MASKS
#define ELT_LOADF8 ELT_LOADF8_GENERIC
#define ELT_CLAMP_LO ELT_CLAMP_MASKS
#endif

static void exp_generic(double *y, const double *x, int64_t n) {
    EXP_BODY
}

static double exp_sum_generic(double *y, const float *x, double shift, int64_t n) {
    EXP_SUM_BODY
}

static void scale_generic(double *y, const double *d, double scale, int64_t n) {
    SCALE_BODY
}
static float max_generic(const float *x, int64_t n) {
    MAX_BODY
}
static void widen_generic(double *y, const float *x, int64_t n) {
    WIDEN_BODY
}
static void sigmoid_generic(double *y, const float *x, const float *dy, int64_t n) {
    SIGMOID_BODY
}

static void relu_generic(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}

int eltwise_cpu_isa(void) {
#if defined(ELT_X86)
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    return 0;
}

/* The copy eltwise_force_isa asked for, or -1: the CPU's best. */
static int elt_forced = -1;

void eltwise_force_isa(int isa) {
    elt_forced = isa;
}

static int elt_isa(void) {
    return elt_forced >= 0 ? elt_forced : eltwise_cpu_isa();
}

void eltwise_exp(double *y, const double *x, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: exp_avx512(y, x, n); return;
    case 1: exp_avx2(y, x, n); return;
#endif
    default: exp_generic(y, x, n); return;
    }
}

double eltwise_exp_sum(double *y, const float *x, double shift, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: return exp_sum_avx512(y, x, shift, n);
    case 1: return exp_sum_avx2(y, x, shift, n);
#endif
    default: return exp_sum_generic(y, x, shift, n);
    }
}

void eltwise_scale(double *y, const double *d, double scale, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: scale_avx512(y, d, scale, n); return;
    case 1: scale_avx2(y, d, scale, n); return;
#endif
    default: scale_generic(y, d, scale, n); return;
    }
}

void eltwise_widen(double *y, const float *x, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: widen_avx512(y, x, n); return;
    case 1: widen_avx2(y, x, n); return;
#endif
    default: widen_generic(y, x, n); return;
    }
}

float eltwise_max(const float *x, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: return max_avx512(x, n);
    case 1: return max_avx2(x, n);
#endif
    default: return max_generic(x, n);
    }
}

void eltwise_sigmoid(double *out, const float *x, const float *dy, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: sigmoid_avx512(out, x, dy, n); break;
    case 1: sigmoid_avx2(out, x, dy, n); break;
#endif
    default: sigmoid_generic(out, x, dy, n); break;
    }
}

void eltwise_relu(double *out, const float *x, const float *dy, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: relu_avx512(out, x, dy, n); break;
    case 1: relu_avx2(out, x, dy, n); break;
#endif
    default: relu_generic(out, x, dy, n); break;
    }
}
