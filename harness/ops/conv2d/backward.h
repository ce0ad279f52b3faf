/*
 * conv2d/backward.h: what the backward operators of conv2d share
 * (harness/ops/conv2d_backward_data, _filter, _bias): their parameters describe the
 * forward convolution whose gradients they compute (n, in_ch, out_ch, filter_size, h,
 * w, padding, as conv2d's; NCHW, stride 1), so a config can sweep the same axes for
 * all of them. Checking that geometry, a case label, and the pixels a sampled
 * reference checks.
 */
#ifndef HN_OPS_CONV2D_BACKWARD_H
#define HN_OPS_CONV2D_BACKWARD_H

#include <stdint.h>

#include "ops/op.h"
#include "ref.h"

/* Parameter positions, in the order of the operators' tables: conv2d_backward_data
 * and _filter (C2B_; pad is _filter's only), conv2d_backward_bias (C2BB_, no in_ch). */
enum { C2B_N, C2B_IN_CH, C2B_OUT_CH, C2B_FS, C2B_H, C2B_W, C2B_PADDING, C2B_PAD };
enum { C2BB_N, C2BB_OUT_CH, C2BB_FS, C2BB_H, C2BB_W, C2BB_PADDING };
/* Buffer positions: _data's (C2BD_), _filter's (C2BF_), _bias's (C2BB_). */
enum { C2BD_DOUT, C2BD_FILTER, C2BD_DIN, C2BD_COUNT };
enum { C2BF_IN, C2BF_DOUT, C2BF_DFILTER, C2BF_COUNT };
enum { C2BB_DOUT, C2BB_DBIAS, C2BB_COUNT };

/* A case's geometry, decoded. in_ch is 0 for an operator without it (the bias). */
typedef struct {
    int n, in_ch, out_ch, padding;
    conv2d_shape s;
} conv2d_bwd_dims;

/* Decodes and checks the forward geometry of operator `op` (for messages): every
 * size between 1 and 2^30, padding -1 or in [0, 2^20], a filter that fits. in_ch < 0:
 * the operator has no in_ch (d->in_ch = 0). Returns 0, or -1 with a message naming
 * the parameter and its value. */
int conv2d_bwd_decode(const char *op, double n, double in_ch, double out_ch, double fs, double h, double w,
                      double padding, conv2d_bwd_dims *d, hn_err *err);

/* Each operator's parameters p decoded with conv2d_bwd_decode (its op.c). */
int conv2d_bwd_data_decode(const double *p, conv2d_bwd_dims *d, hn_err *err);
int conv2d_bwd_filter_decode(const double *p, conv2d_bwd_dims *d, hn_err *err);
int conv2d_bwd_bias_decode(const double *p, conv2d_bwd_dims *d, hn_err *err);

/* Each operator's cuDNN baselines, float then double (conv2d_backward_<x>/cudnn.c,
 * on conv2d's shared cuDNN state, conv2d/conv2d_cudnn.h). */
#define CONV2D_BWD_N_BASELINES 2
extern const hn_op_baseline conv2d_bwd_data_baselines[CONV2D_BWD_N_BASELINES];
extern const hn_op_baseline conv2d_bwd_filter_baselines[CONV2D_BWD_N_BASELINES];
extern const hn_op_baseline conv2d_bwd_bias_baselines[CONV2D_BWD_N_BASELINES];

/* The element counts n[i] (computed in doubles, so that no product of sizes up to
 * 2^30 overflows before the check) into counts, unless one exceeds 2^31-1 (the
 * kernels index with int): then -1 with a message naming the buffer. */
int conv2d_bwd_counts(const char *op, const hn_op_buffer *buffers, const double *n, int n_buffers, int64_t *counts,
                      hn_err *err);

/* "128x128x64 -> 64, f:3x3, n:8, p:0" (no "x64" without in_ch). */
void conv2d_bwd_label(const conv2d_bwd_dims *d, char *buf, size_t size);

/* Pixels of the output of geometry s to check when checking all would cost too much:
 * every border pixel (conv2d_border_pixels_general), then seeded random others, at
 * least 1024, up to n_random; in increasing order. Returns the array (caller frees)
 * and its length in *n_sel, the border's in *n_border. */
int64_t *conv2d_bwd_sample_pixels(const conv2d_shape *s, int64_t n_random, uint64_t seed, int64_t *n_sel,
                                  int64_t *n_border);

#endif
