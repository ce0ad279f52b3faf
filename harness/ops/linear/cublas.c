/*
 * linear/cublas.c: the cuBLAS baselines of linear and linear_backward (see
 * op.h, hn_op_baseline). Plain FP32 math (CUBLAS_DEFAULT_MATH: no TF32).
 *
 * cuBLAS is column-major: a row-major (r, c) matrix is, as it lies, a
 * column-major (c, r) one with leading dimension c. So, with no copies:
 *
 *   linear, "cublas_sgemm_sger":
 *     y^T (out_f, batch) = W (out_f, in_f) x^T (in_f, batch):
 *       sgemm(T, N, m = out_f, n = batch, k = in_f, W, lda = in_f, x, ldb = in_f, y, ldc = out_f)
 *     y^T += bias ones^T, a rank-1 update with a vector of batch ones:
 *       sger(m = out_f, n = batch, bias, ones, y, lda = out_f)
 *   linear_backward, "cublas_sgemm_sgemv":
 *     dx^T (in_f, batch) = W^T (in_f, out_f) dy^T (out_f, batch):
 *       sgemm(N, N, m = in_f, n = batch, k = out_f, W, lda = in_f, dy, ldb = out_f, dx, ldc = in_f)
 *     dW^T (in_f, out_f) = x^T (in_f, batch) dy (batch, out_f):
 *       sgemm(N, T, m = in_f, n = out_f, k = batch, x, lda = in_f, dy, ldb = out_f, dW, ldc = in_f)
 *     dbias (out_f) = dy^T (out_f, batch) ones (batch):
 *       sgemv(N, m = out_f, n = batch, dy, lda = out_f, ones, dbias)
 *
 * The vector of ones is uploaded in prepare (outside the timed work). Written
 * against the documented API; not yet run on a GPU.
 */
#include <stdlib.h>

#include <cublas_v2.h>

#include "backend.h"
#include "linear.h"
#include "run.h"

/* Buffer positions: linear (x, weight, bias, y), linear_backward (x, weight,
 * dy, dx, dweight, dbias); see the two op.c. */
enum { F_X, F_WEIGHT, F_BIAS, F_Y };
enum { B_X, B_WEIGHT, B_DY, B_DX, B_DWEIGHT, B_DBIAS };

typedef struct {
    int backward;
    hn_backend *be;
    cublasHandle_t handle;
    hn_workload *w; /* the case */
    linear_dims d;
    hn_dptr ones;   /* batch floats of 1.0 */
} cublas_state;

static void *open_state(hn_backend *be, int backward, hn_err *err) {
    if (!hn_backend_cuda_stream(be)) {
        hn_errf(err, "cuBLAS runs on the cuda backend only");
        return NULL;
    }
    cublas_state *b = xcalloc(1, sizeof *b);
    b->backward = backward;
    b->be = be;
    cublasStatus_t st = cublasCreate(&b->handle);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b->handle, (cudaStream_t)hn_backend_cuda_stream(be));
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(b->handle, CUBLAS_POINTER_MODE_HOST);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hn_errf(err, "cuBLAS: %s", cublasGetStatusString(st));
        if (b->handle) cublasDestroy(b->handle);
        free(b);
        return NULL;
    }
    return b;
}

static void *open_forward(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    (void)dev;
    return open_state(be, 0, err);
}

static void *open_backward(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    (void)dev;
    return open_state(be, 1, err);
}

static void release(void *state) {
    cublas_state *b = state;
    if (!b) return;
    if (b->ones) b->be->ops->free(b->be, b->ones);
    b->ones = 0;
    b->w = NULL;
}

static void close_state(void *state) {
    cublas_state *b = state;
    if (!b) return;
    release(b);
    if (b->handle) cublasDestroy(b->handle);
    free(b);
}

static int prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    cublas_state *b = state;
    b->w = w;
    linear_params(w->params, &b->d);
    snprintf(what, what_size, "%s", b->backward ? "cublasSgemm x2+cublasSgemv" : "cublasSgemm+cublasSger");
    size_t bytes = sizeof(float) * (size_t)b->d.batch;
    float *ones = xmalloc(bytes);
    for (int i = 0; i < b->d.batch; i++) ones[i] = 1.0f;
    int rc = b->be->ops->alloc(b->be, bytes, &b->ones, err);
    if (rc == 0) rc = b->be->ops->upload(b->be, b->ones, ones, bytes, err);
    free(ones);
    return rc;
}

#define F32(p) ((float *)(uintptr_t)(p))

static int issue(void *state, hn_err *err) {
    cublas_state *b = state;
    const hn_dptr *dev = b->w->dev;
    const int batch = b->d.batch, in_f = b->d.in_f, out_f = b->d.out_f;
    const float one = 1.0f, zero = 0.0f;
    cublasStatus_t st;
    if (!b->backward) {
        st = cublasSgemm(b->handle, CUBLAS_OP_T, CUBLAS_OP_N, out_f, batch, in_f, &one, F32(dev[F_WEIGHT]), in_f,
                         F32(dev[F_X]), in_f, &zero, F32(dev[F_Y]), out_f);
        if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemm: %s", cublasGetStatusString(st));
        st = cublasSger(b->handle, out_f, batch, &one, F32(dev[F_BIAS]), 1, F32(b->ones), 1, F32(dev[F_Y]), out_f);
        if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSger: %s", cublasGetStatusString(st));
        return 0;
    }
    st = cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, in_f, batch, out_f, &one, F32(dev[B_WEIGHT]), in_f,
                     F32(dev[B_DY]), out_f, &zero, F32(dev[B_DX]), in_f);
    if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemm (dx): %s", cublasGetStatusString(st));
    st = cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_T, in_f, out_f, batch, &one, F32(dev[B_X]), in_f,
                     F32(dev[B_DY]), out_f, &zero, F32(dev[B_DWEIGHT]), in_f);
    if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemm (dweight): %s", cublasGetStatusString(st));
    st = cublasSgemv(b->handle, CUBLAS_OP_N, out_f, batch, &one, F32(dev[B_DY]), out_f, F32(b->ones), 1, &zero,
                     F32(dev[B_DBIAS]), 1);
    if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemv (dbias): %s", cublasGetStatusString(st));
    return 0;
}

const hn_op_baseline linear_baselines[LINEAR_N_BASELINES] = {
    {.name = "cublas_sgemm_sger", .family = "cublas", .precision = "float", .open = open_forward,
     .close = close_state, .prepare = prepare, .issue = issue, .release = release},
};

const hn_op_baseline linear_backward_baselines[LINEAR_BACKWARD_N_BASELINES] = {
    {.name = "cublas_sgemm_sgemv", .family = "cublas", .precision = "float", .open = open_backward,
     .close = close_state, .prepare = prepare, .issue = issue, .release = release},
};
