/*
 * conv2d.h: what the files of the conv2d operator share (op.c describes it,
 * ref.c computes it, cublas.c and cudnn.c measure cuBLAS and cuDNN on it).
 */
#ifndef HN_OPS_CONV2D_H
#define HN_OPS_CONV2D_H

#include <stdint.h>

#include "ops/op.h"
#include "ref.h"

/* Parameter and buffer positions, in the order of op.c's tables. */
enum { C2_N, C2_IN_CH, C2_OUT_CH, C2_FS, C2_H, C2_W, C2_PADDING, C2_PAD, C2_USE_BIAS, C2_LAYOUT };
enum { C2_B_IN, C2_B_FILTER, C2_B_BIAS, C2_B_OUT, C2_B_COUNT };

/* A case's parameters, decoded. layout: 0 NCHW, 1 NHWC, 2 CHWN. */
typedef struct {
    int n, in_ch, out_ch, use_bias, layout;
    float pad;
    conv2d_shape s;
} conv2d_dims;

void conv2d_params(const double *p, conv2d_dims *d);

/* The offset of element (b, c, y, x) of an (n, ch, h, w) tensor in `layout` order. */
int64_t conv2d_at(int layout, int n, int ch, int h, int w, int b, int c, int y, int x);

/* The baselines, whose table is op.c's (see op.h, hn_op_baseline): cuBLAS
 * (cublas.c: im2col + SGEMM, and DGEMM for double variants) and cuDNN (cudnn.c:
 * cudnnConvolutionForward in float and in double). */
void *conv2d_cublas_open_sgemm(struct hn_backend *be, const struct hn_device_info *dev, hn_err *err);
void *conv2d_cublas_open_dgemm(struct hn_backend *be, const struct hn_device_info *dev, hn_err *err);
void conv2d_cublas_close(void *state);
int conv2d_cublas_prepare(void *state, struct hn_workload *w, char *what, size_t what_size, hn_err *err);
int conv2d_cublas_issue(void *state, hn_err *err);
void conv2d_cublas_release(void *state);

void *conv2d_cudnn_open_float(struct hn_backend *be, const struct hn_device_info *dev, hn_err *err);
void *conv2d_cudnn_open_double(struct hn_backend *be, const struct hn_device_info *dev, hn_err *err);
void conv2d_cudnn_close(void *state);
int conv2d_cudnn_prepare(void *state, struct hn_workload *w, char *what, size_t what_size, hn_err *err);
int conv2d_cudnn_issue(void *state, hn_err *err);
void conv2d_cudnn_release(void *state);

#endif
