/*
 * pool2d.h: what the files of the pool2d operator share, and what the
 * pool2d_backward operator takes from it: the parameter table (both operators
 * have the same parameters), their decoding and checks, the layout arithmetic,
 * and the forward computation. pool2d_backward's generator computes its argmax
 * input with pool2d_forward_rows, the very code of pool2d's reference, so that
 * input is exactly what the forward pass gives.
 *
 * Layouts as one view: a logical (n, channels, h, w) tensor in NCHW, NHWC or
 * CHWN order is an (outer, h, w, inner) array with
 *   NCHW  outer = n * channels (plane b * channels + c), inner = 1
 *   NHWC  outer = n (b),                                  inner = channels (c)
 *   CHWN  outer = channels (c),                           inner = n (b)
 * so element (o, y, x, i) lies at ((o * h + y) * w + x) * inner + i whatever the
 * layout, and pooling a plane is the same loop over (y, x) in all three.
 */
#ifndef HN_OPS_POOL2D_H
#define HN_OPS_POOL2D_H

#include <stdint.h>

#include "ops/op.h"

/* Parameter positions, in the order of pool2d_param_table (both operators). */
enum { P2_N, P2_CHANNELS, P2_H, P2_W, P2_K, P2_MODE, P2_LAYOUT, P2_N_PARAMS };
/* Buffer positions, in the order of each operator's table: pool2d's (P2F_) and
 * pool2d_backward's (P2B_). */
enum { P2F_IN, P2F_OUT, P2F_ARGMAX, P2F_COUNT };
enum { P2B_IN, P2B_ARGMAX, P2B_DOUT, P2B_DIN, P2B_COUNT };
/* Values of the choice parameters. */
enum { P2_MAX = 0, P2_AVG = 1 };
enum { P2_NCHW = 0, P2_NHWC = 1, P2_CHWN = 2 };

extern const hn_op_param pool2d_param_table[P2_N_PARAMS];

/* The cuDNN baselines (pool2d/cudnn.c, pool2d_backward/cudnn.c). */
#define POOL2D_N_BASELINES 1
extern const hn_op_baseline pool2d_baselines[POOL2D_N_BASELINES];
#define POOL2D_BACKWARD_N_BASELINES 1
extern const hn_op_baseline pool2d_backward_baselines[POOL2D_BACKWARD_N_BASELINES];
extern const char *const pool2d_layout_names[];
extern const char *const pool2d_mode_names[];

/* A case, decoded: oh = h / k and ow = w / k (rounded down: the last h % k rows
 * and w % k columns belong to no window); outer and inner as above. */
typedef struct {
    int n, channels, h, w, k, oh, ow, mode, layout;
    int outer, inner;
} pool2d_dims;

/* Decodes and checks the parameters; errors name `op` (the operator), the
 * parameter and its value ("pool2d: k = 9 is larger than h = 8"). Fills the
 * element counts of an input-sized and an output-sized tensor. */
int pool2d_decode(const char *op, const double *p, pool2d_dims *d, int64_t *n_in, int64_t *n_out, hn_err *err);

/* The dims of a (n, channels, hh, ww) tensor in the case's layout order. */
int pool2d_layout_dims(const pool2d_dims *d, int64_t hh, int64_t ww, int64_t dims[4]);

/* "31x33x5, k:3, max" plus ", n:2" and ", NHWC" where they are not the default. */
void pool2d_case_label(const double *p, char *buf, size_t size);

/* Fills an input-sized float tensor in the layout's order with seeded
 * standard-normal values drawn in NCHW order, so a case has the same numbers
 * whatever its layout. */
void pool2d_fill_input(const pool2d_dims *d, float *x, uint64_t seed);

/* Makes every third window of an input pool2d_fill_input filled (in NCHW order)
 * hold its maximum twice, at its first and last element, so a kernel's tie rule
 * is checked; nothing for k = 1. The forward's generator calls it, not the
 * backward's (its cuDNN baseline picks among tied maxima its own way). */
void pool2d_plant_ties(const pool2d_dims *d, float *x);

/* The forward pass of output rows [r0, r1), r = o * oh + oy (each row is ow *
 * inner elements, in the layout's order): out in fp64 (max: the window's
 * maximum, exact; avg: the window's sum / k^2), and for max pooling the
 * position y * w + x of the maximum in its plane into argmax_f64 and argmax
 * (each if not NULL):
 * the first in row-major window order on ties, a NaN wins over any number and a
 * later NaN over an earlier one (torch's rule: val > max || isnan(val)). out may
 * be NULL when only the argmax is wanted. */
void pool2d_forward_rows(const pool2d_dims *d, const float *in, double *out, double *argmax_f64, int32_t *argmax,
                         int64_t r0, int64_t r1);

#endif
