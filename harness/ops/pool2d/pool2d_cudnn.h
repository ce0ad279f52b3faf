/*
 * pool2d_cudnn.h: what the cuDNN baselines of pool2d (pool2d/cudnn.c) and
 * pool2d_backward (pool2d_backward/cudnn.c) share: a handle on the backend's
 * stream and the descriptors of a case.
 *
 *   window k x k, stride k, no padding;
 *   max: CUDNN_POOLING_MAX_DETERMINISTIC, NaN propagated (a NaN wins, as in the
 *        operator);
 *   avg: CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING (with no padding, the
 *        window's sum / k^2);
 *   every layout: NCHW and NHWC by cuDNN's tensor formats, CHWN by strides.
 * cuDNN's output is (h - k) / k + 1 = h / k rows (rounded down), the operator's.
 */
#ifndef HN_OPS_POOL2D_CUDNN_H
#define HN_OPS_POOL2D_CUDNN_H

#include "cuda/cudnn.h"
#include "pool2d.h"
#include "run.h"

typedef struct {
    hn_backend *be;
    cudnnHandle_t h;
    cudnnPoolingDescriptor_t pool;
    cudnnTensorDescriptor_t x, y;  /* (n, channels, h, w) and (n, channels, oh, ow) */
    hn_workload *w;                /* the case (prepare to release) */
    pool2d_dims d;
} pool2d_dnn;

/* Fills s (zeroed by the caller): the shared handle, the descriptors. -1 with
 * the reason (no cuDNN, not the cuda backend, ...); pool2d_dnn_close undoes a
 * partial open. */
int pool2d_dnn_open(pool2d_dnn *s, hn_backend *be, hn_err *err);
/* Destroys what s holds, not s itself. */
void pool2d_dnn_close(pool2d_dnn *s);
/* Describes case w (`op` names the operator in messages) and writes the mode
 * and layout into what ("MAX_DETERMINISTIC, NHWC"). */
int pool2d_dnn_describe(pool2d_dnn *s, hn_workload *w, const char *op, char *what, size_t what_size, hn_err *err);

#endif
