/*
 * conv2d_cudnn.h: how a conv2d case is posed to cuDNN (cudnn.c), apart from the
 * baseline itself so that it can be tested without a GPU (descriptors need
 * none) and reused by the convolution's backward baselines.
 */
#ifndef HN_OPS_CONV2D_CUDNN_H
#define HN_OPS_CONV2D_CUDNN_H

#include "conv2d.h"
#include "cuda/cudnn.h"

/* The descriptors of a case: x (n, in_ch, h, w) and y (n, out_ch, oh, ow) in the
 * case's layout, bias (1, out_ch, 1, 1), filter (NCHW: (out_ch, in_ch, fs, fs);
 * NHWC: (out_ch, fs, fs, in_ch)), and conv. x, y, bias and f are the caller's
 * (created); conv is (re)created by conv2d_cudnn_describe and destroyed by the
 * caller. */
typedef struct {
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t f;
    cudnnConvolutionDescriptor_t conv;
} conv2d_dnn_desc;

/* Describes case d computing in type t (float: CUDNN_FMA_MATH, see
 * hn_cudnn_conv_desc). -1 with the reason when cuDNN cannot pose the case (the
 * CHWN layout, asymmetric padding, padding with a value other than 0) or would
 * give an output of another size than the operator's. */
int conv2d_cudnn_describe(conv2d_dnn_desc *dd, const conv2d_dims *d, cudnnDataType_t t, hn_err *err);

#endif
