/*
 * conv2d_cudnn.h: what the cuDNN baselines of conv2d (cudnn.c) and of its
 * gradients (conv2d_backward_data, _filter, _bias: their cudnn.c) share:
 *   - how a case is posed to cuDNN (conv2d_cudnn_describe), testable without a
 *     GPU (descriptors need none); a backward case is posed as the forward
 *     convolution whose gradient it computes (conv2d_cudnn_forward_of);
 *   - a baseline's state for a run (conv2d_dnn): the shared handle, the
 *     descriptors, the double baselines' conversion kernels, a workspace;
 *   - the choice among a cudnnFind... call's results (conv2d_dnn_pick) and how
 *     the row's kernel column names it (conv2d_dnn_algo_text).
 *
 * The double baselines compute every tensor in CUDNN_DATA_DOUBLE: the operators'
 * buffers are float, so they convert with conv2d_dnn_to_double / _to_float (the
 * embedded kernels of conv2d_im2col.cu), inside the timed work for what a kernel
 * reading and writing float tensors would have to convert, outside it for weights
 * (the forward's and backward data's filter), as the cuBLAS DGEMM baseline does.
 */
#ifndef HN_OPS_CONV2D_CUDNN_H
#define HN_OPS_CONV2D_CUDNN_H

#include <stdint.h>

#include "backward.h"
#include "conv2d.h"
#include "cuda/cudnn.h"
#include "run.h"

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

/* The forward case of a backward operator's geometry b: NCHW, no bias, `pad` the
 * value of the padded pixels (0 where it takes no part). */
void conv2d_cudnn_forward_of(conv2d_dims *d, const conv2d_bwd_dims *b, float pad);

/* A baseline's state for a run. Invariant: the descriptors of dd other than conv
 * exist from open to close; ws holds ws_cap bytes (0: none). */
typedef struct {
    hn_backend *be;
    cudnnHandle_t h;
    int dbl;                  /* computes in double */
    hn_kernel *cvt[2];        /* double only: f32 -> f64, f64 -> f32 */
    conv2d_dnn_desc dd;       /* x, y, bias, f for the run; conv per case */
    hn_dptr ws;               /* workspace, grown as cases need */
    size_t ws_cap;
} conv2d_dnn;

/* Fills s (zeroed by the caller): the shared handle, the descriptors and, for
 * dbl, the conversion kernels. -1 with the reason (no cuDNN, not the cuda
 * backend, ...); conv2d_dnn_close undoes a partial open. */
int conv2d_dnn_open(conv2d_dnn *s, hn_backend *be, const struct hn_device_info *dev, int dbl, hn_err *err);
/* Destroys what s holds (the case's conv descriptor too), not s itself. */
void conv2d_dnn_close(conv2d_dnn *s);
/* CUDNN_DATA_DOUBLE or CUDNN_DATA_FLOAT. */
cudnnDataType_t conv2d_dnn_type(const conv2d_dnn *s);
/* A workspace of at least `bytes` in s->ws. */
int conv2d_dnn_workspace(conv2d_dnn *s, size_t bytes, hn_err *err);
/* *out: device memory for n elements of s's type (*out stays 0 on failure). */
int conv2d_dnn_alloc(conv2d_dnn *s, long long n, hn_dptr *out, hn_err *err);
/* Frees *p (NULL-safe: 0 is nothing) and clears it. */
void conv2d_dnn_free(conv2d_dnn *s, hn_dptr *p);
/* Enqueues dst (n doubles) <- src (n floats), or dst (floats) <- src (doubles). */
int conv2d_dnn_to_double(conv2d_dnn *s, hn_dptr src, hn_dptr dst, long long n, hn_err *err);
int conv2d_dnn_to_float(conv2d_dnn *s, hn_dptr src, hn_dptr dst, long long n, hn_err *err);

/* A host scaling factor (alpha, beta) as cuDNN reads it for data of s's type: a
 * double for double data, a float otherwise; pass its address. */
typedef union {
    float f;
    double d;
} conv2d_dnn_scalar;
conv2d_dnn_scalar conv2d_dnn_k(const conv2d_dnn *s, double v);

static inline void *conv2d_dnn_ptr(hn_dptr p) {
    return (void *)(uintptr_t)p;
}

/* One result of a cudnnFind... call, whichever pass. */
typedef struct {
    int algo;
    const char *name;         /* hn_cudnn_*_algo_name */
    cudnnStatus_t status;
    cudnnMathType_t math;
    size_t memory;            /* the workspace it needs */
} conv2d_dnn_found;

/* The index of the result to run among found[0..n) (cuDNN sorts them fastest
 * first): the first of the highest hn_cudnn_math_rank for type t. -1 with the
 * reason, naming `pass` ("forward", "backward data", ...) and every result, when
 * none may be used. */
int conv2d_dnn_pick(const conv2d_dnn_found *found, int n, cudnnDataType_t t, const char *pass, hn_err *err);
/* "algo=IMPLICIT_GEMM math=FMA ws=0B": what runs, for the kernel column (the
 * math type the run uses, with a note when cuDNN found the algorithm as another). */
void conv2d_dnn_algo_text(char *buf, size_t size, const conv2d_dnn_found *f, cudnnDataType_t t);

#endif
