/*
 * relu/eltwise.c: the element-wise operators' common code (see eltwise.h).
 */
#include "eltwise.h"

#include <pthread.h>
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
 * The threaded driver: contiguous ranges, one per thread.
 */

enum { ELT_MIN_PER_THREAD = 1 << 18 };

typedef struct {
    eltwise_fn fn;
    double *out;
    const float *x, *dy;
    int64_t n;
} eltwise_job;

static void *eltwise_worker(void *arg) {
    const eltwise_job *j = arg;
    j->fn(j->out, j->x, j->dy, j->n);
    return NULL;
}

void eltwise_reference(eltwise_fn fn, const float *x, const float *dy, int64_t n, hn_ref *ref, int threads) {
    ref->n = n;
    ref->values = hn_ref_alloc_values(n);
    snprintf(ref->method, sizeof ref->method, "full");
    if (threads <= 0) threads = hn_cpu_count();
    if (threads > 64) threads = 64;
    if (threads > n / ELT_MIN_PER_THREAD) threads = (int)(n / ELT_MIN_PER_THREAD);
    if (threads <= 1) {
        fn(ref->values, x, dy, n);
        return;
    }
    eltwise_job jobs[64];
    pthread_t tid[64];
    int started[64] = {0};
    for (int t = 0; t < threads; t++) {
        const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
        jobs[t] = (eltwise_job){fn, ref->values + lo, x + lo, dy ? dy + lo : NULL, hi - lo};
        started[t] = t > 0 && pthread_create(&tid[t], NULL, eltwise_worker, &jobs[t]) == 0;
    }
    /* Thread 0's range, and any a thread could not be started for, run here. */
    for (int t = 0; t < threads; t++)
        if (!started[t]) eltwise_worker(&jobs[t]);
    for (int t = 1; t < threads; t++)
        if (started[t]) pthread_join(tid[t], NULL);
}

/* ------------------------------------------------------------------------------------
 * Vector loops, 8 doubles at a time. exp: x = k ln2 + r, |r| <= ln2 / 2, k = round(x / ln2)
 * (by adding 1.5 * 2^52, whose low bits then hold k); exp(r) by its Taylor
 * polynomial of degree 12 (truncation under 2e-16 relative), times 2^k built in
 * the exponent bits. The loops (exp, sigmoid, relu and their gradients) are GCC
 * vector extensions, compiled three times: for AVX-512, for AVX2 + FMA, and for the
 * baseline (SSE2), picked at run time.
 */

typedef double elt_v8d __attribute__((vector_size(64)));
typedef long long elt_v8l __attribute__((vector_size(64)));
typedef float elt_v8f __attribute__((vector_size(32)));

/* *v = exp(*v), lane by lane. */
__attribute__((always_inline)) static inline void exp8(elt_v8d *vp) {
    elt_v8d v = *vp;
    const elt_v8d zero = {0}, lo = zero - 708.0, hi = zero + 708.0;
    const elt_v8l below = v < -708.0, above = v > 708.0;
    v = (elt_v8d)(((elt_v8l)v & ~below) | ((elt_v8l)lo & below));
    v = (elt_v8d)(((elt_v8l)v & ~above) | ((elt_v8l)hi & above));
    const double shift = 0x1.8p52;
    const elt_v8d t = v * 1.4426950408889634 + shift, k = t - shift;
    elt_v8d r = v - k * 6.93147180369123816490e-01; /* ln2, high part (exact times k) */
    r = r - k * 1.90821492927058770002e-10;         /* ln2, low part */
    elt_v8d p = r * (1.0 / 479001600.0) + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    /* The low 52 bits of t are 2^51 + k. */
    const elt_v8l ki = ((elt_v8l)t & 0xfffffffffffffLL) - (1LL << 51);
    *vp = p * (elt_v8d)((ki + 1023) << 52);
}

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
        exp8(&v);                                                                                  \
        STORE8(y + i, v, m);                                                                       \
    }

#define SIGMOID_BODY                                                                               \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8f xf, dyf;                                                                           \
        LOAD8(xf, x + i, m, float);                                                                \
        elt_v8d e = -__builtin_convertvector(xf, elt_v8d), out;                                    \
        exp8(&e);                                                                                  \
        if (dy) {                                                                                  \
            LOAD8(dyf, dy + i, m, float);                                                          \
            out = __builtin_convertvector(dyf, elt_v8d) * (e / ((1.0 + e) * (1.0 + e)));           \
        } else {                                                                                   \
            out = 1.0 / (1.0 + e);                                                                 \
        }                                                                                          \
        STORE8(y + i, out, m);                                                                     \
    }

/* relu: v where x > 0 or x is NaN (x <= 0 is false), else +0. */
#define RELU_BODY                                                                                  \
    for (int64_t i = 0; i < n; i += 8) {                                                           \
        const int64_t m = n - i < 8 ? n - i : 8;                                                   \
        elt_v8f xf, vf;                                                                            \
        LOAD8(xf, x + i, m, float);                                                                \
        elt_v8d xd = __builtin_convertvector(xf, elt_v8d), vd = xd;                                \
        if (dy) {                                                                                  \
            LOAD8(vf, dy + i, m, float);                                                           \
            vd = __builtin_convertvector(vf, elt_v8d);                                             \
        }                                                                                          \
        const elt_v8l off = xd <= 0.0;                                                             \
        const elt_v8d out = (elt_v8d)((elt_v8l)vd & ~off);                                         \
        STORE8(y + i, out, m);                                                                     \
    }

#if defined(__GNUC__) && defined(__x86_64__)
#define ELT_X86 1
__attribute__((target("avx512f"))) static void exp_avx512(double *y, const double *x, int64_t n) {
    EXP_BODY
}
__attribute__((target("avx2,fma"))) static void exp_avx2(double *y, const double *x, int64_t n) {
    EXP_BODY
}
__attribute__((target("avx512f"))) static void sigmoid_avx512(double *y, const float *x, const float *dy,
                                                               int64_t n) {
    SIGMOID_BODY
}
__attribute__((target("avx2,fma"))) static void sigmoid_avx2(double *y, const float *x, const float *dy, int64_t n) {
    SIGMOID_BODY
}
__attribute__((target("avx512f"))) static void relu_avx512(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}
__attribute__((target("avx2,fma"))) static void relu_avx2(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}
#endif

static void exp_generic(double *y, const double *x, int64_t n) {
    EXP_BODY
}

static void sigmoid_generic(double *y, const float *x, const float *dy, int64_t n) {
    SIGMOID_BODY
}

static void relu_generic(double *y, const float *x, const float *dy, int64_t n) {
    RELU_BODY
}

/* 2: AVX-512, 1: AVX2 + FMA, 0: neither. */
static int elt_isa(void) {
#if defined(ELT_X86)
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    return 0;
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

void eltwise_sigmoid(double *out, const float *x, const float *dy, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: sigmoid_avx512(out, x, dy, n); return;
    case 1: sigmoid_avx2(out, x, dy, n); return;
#endif
    default: sigmoid_generic(out, x, dy, n); return;
    }
}

void eltwise_relu(double *out, const float *x, const float *dy, int64_t n) {
    switch (elt_isa()) {
#if defined(ELT_X86)
    case 2: relu_avx512(out, x, dy, n); return;
    case 1: relu_avx2(out, x, dy, n); return;
#endif
    default: relu_generic(out, x, dy, n); return;
    }
}
