/*
 * relu/eltwise.h: what the element-wise operators share. relu, relu_backward,
 * sigmoid and sigmoid_backward are an operator each (a folder each, as the
 * registry wants), with one parameter and flat buffers:
 *
 *   n   elements (a tensor of any shape, flattened: element-wise operators do
 *       not care, and torch's functions give the same numbers on a flat view)
 *   x   (n) float32   the input (forward) or the forward pass's input (backward)
 *   dy  (n) float32   backward only: the gradient of the output
 *   y / dx (n) float32 the output
 *
 * This folder (relu's) holds their common code: the shape check, labels, the
 * input generator, a threaded driver for references, and vectorized fp64 loops
 * (exp, and the row operations softmax_cross_entropy and im2col use too).
 */
#ifndef HN_OPS_ELTWISE_H
#define HN_OPS_ELTWISE_H

#include <stdint.h>

#include "ops/op.h"

/* The one parameter's position. */
enum { ELT_N };

/* out[i] = f(x[i], dy[i]) for i < n (dy NULL for forward operators), in fp64. */
typedef void (*eltwise_fn)(double *out, const float *x, const float *dy, int64_t n);

/* Checks n (1 .. 2^31-1) and gives each of the n_buffers buffers n elements;
 * messages start with `op`. */
int eltwise_shape(const char *op, const double *p, int n_buffers, int64_t *counts, hn_err *err);
/* Every buffer is (n). */
int eltwise_dims(const double *p, int buffer, int64_t dims[4]);
/* "n:1048576". */
void eltwise_label(const double *p, char *buf, size_t size);

/* x[i] = scale * N(0, 1), seeded; with `zeros`, x[i] = +0 where i % 16 == 5 and
 * -0 where i % 16 == 13, so a kernel's handling of exactly 0 (relu's gradient
 * there is 0, as torch's) is checked on every case. */
void eltwise_fill_x(float *x, int64_t n, float scale, int zeros, uint64_t seed);

/* The full reference of an element-wise output: ref gets fn over all n
 * elements (into hn_ref_alloc_values's array), on `threads` threads (<= 0: one
 * per CPU; hn_ref_parallel), each taking min_per_thread elements at least:
 * starting a thread costs tens of microseconds, so that many elements should
 * cost more. */
void eltwise_reference(eltwise_fn fn, const float *x, const float *dy, int64_t n, int64_t min_per_thread, hn_ref *ref,
                       int threads);
/* min_per_thread for relu (a load, a compare and a store an element) and for
 * sigmoid (an exp and a division besides). */
enum { ELT_RELU_PER_THREAD = 1 << 19, ELT_SIGMOID_PER_THREAD = 1 << 16 };

/* y[i] = exp(x[i]) for i < n, fp64, relative error under 1e-15 (a table of
 * 2^(i/16) and a degree-7 polynomial after reduction by ln2 / 16), arguments
 * clamped to [-708, 708] (so results stay normal: exp(-745) and below, 0 in
 * double, come out near 3e-308). AVX-512 or AVX2 where the CPU has them; y may
 * be x. */
void eltwise_exp(double *y, const double *x, int64_t n);

/* y[i] = exp(x[i] - shift) for i < n (eltwise_exp's, on the float x widened to
 * double, but clamped below only: x[i] - shift must not exceed 708, as it
 * cannot when shift is the max of x), and returns their sum (8 running sums, lane i mod 8, added pairwise
 * at the end: the same for any thread count). softmax's row. */
double eltwise_exp_sum(double *y, const float *x, double shift, int64_t n);

/* y[i] = scale * d[i] for i < n (y may be d). */
void eltwise_scale(double *y, const double *d, double scale, int64_t n);
/* y[i] = x[i] (float to double) for i < n. */
void eltwise_widen(double *y, const float *x, int64_t n);
/* The max of x[0 .. n), n >= 1, as `m = x[i] > m ? x[i] : m` from m = x[0] gives
 * it: NaN elements are passed over (unless x[0] is NaN: then NaN). */
float eltwise_max(const float *x, int64_t n);

/* out[i] = s = 1 / (1 + e), e = exp(-x[i]) (eltwise_exp's), when dy is NULL;
 * else out[i] = dy[i] s (1 - s), computed as dy[i] (e s) s, which does not
 * cancel where s is near 1 (nor underflow early: it is about dy[i] e^x[i] for
 * x << 0). 1 / (1 + e) is a division, or on AVX-512 a reciprocal estimate and
 * two Newton steps (within 2 ulp). */
void eltwise_sigmoid(double *out, const float *x, const float *dy, int64_t n);

/* Which copy of the vector loops this CPU runs: 2 AVX-512, 1 AVX2 + FMA, 0 the
 * baseline. eltwise_force_isa makes every loop run copy `isa` (<= the CPU's) until
 * called again with -1, so tests check all three on one machine; call it while
 * no loop runs. */
int eltwise_cpu_isa(void);
void eltwise_force_isa(int isa);

/* out[i] = x[i] > 0 ? x[i] : 0 when dy is NULL, else x[i] > 0 ? dy[i] : 0; both
 * keep the value where x is NaN (as torch's relu and threshold_backward do:
 * they test x <= 0) and give +0 for x = -0. */
void eltwise_relu(double *out, const float *x, const float *dy, int64_t n);

#endif
