/*
 * gemm/cublas.c: gemm's cuBLAS baseline, "cublas_sgemm" (family cublas,
 * precision float, plain FP32 math: CUBLAS_DEFAULT_MATH, no TF32, for float32
 * inputs).
 *
 * cuBLAS is column-major; a row-major (r, cols) matrix is, as it lies, a
 * column-major (cols, r) one. So row-major c = alpha op(a) op(b) + beta c is,
 * with no copies, column-major c^T = alpha op(b)^T op(a)^T + beta c^T:
 *
 *   sgemm(op_b, op_a, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc = n)
 *
 * where b stored (k, n) is column-major (n, k) = op(b)^T as it lies (N, ldb = n)
 * and b stored (n, k) (trans_b) is op(b) column-major, to transpose (T, ldb = k);
 * likewise a: N with lda = k, or T with lda = m. c's input is restored before
 * every launch by the runner (c is an in-out buffer), as for the variants.
 * float16 and bfloat16 inputs: cublasGemmEx with the inputs in their type, c
 * float32 and FP32 accumulation (CUBLAS_COMPUTE_32F), the mixed-precision GEMM
 * the variants compute (cuBLAS may use tensor cores for it, as they may).
 * Written against the documented API; not yet run on a GPU.
 */
#include <stdlib.h>

#include <cublas_v2.h>

#include "backend.h"
#include "gemm.h"
#include "run.h"

typedef struct {
    cublasHandle_t handle;
    hn_workload *w; /* the case */
    gemm_dims d;
} gemm_cublas;

static void *gemm_open(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    (void)dev;
    if (!hn_backend_cuda_stream(be)) {
        hn_errf(err, "cuBLAS runs on the cuda backend only");
        return NULL;
    }
    gemm_cublas *g = xcalloc(1, sizeof *g);
    cublasStatus_t st = cublasCreate(&g->handle);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(g->handle, (cudaStream_t)hn_backend_cuda_stream(be));
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(g->handle, CUBLAS_DEFAULT_MATH);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetPointerMode(g->handle, CUBLAS_POINTER_MODE_HOST);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hn_errf(err, "cuBLAS: %s", cublasGetStatusString(st));
        if (g->handle) cublasDestroy(g->handle);
        free(g);
        return NULL;
    }
    return g;
}

static void gemm_close(void *state) {
    gemm_cublas *g = state;
    if (!g) return;
    if (g->handle) cublasDestroy(g->handle);
    free(g);
}

static int gemm_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    (void)err;
    gemm_cublas *g = state;
    g->w = w;
    gemm_params(w->params, &g->d);
    const char *in = g->d.in_dtype == HN_DT_F16 ? "16F" : g->d.in_dtype == HN_DT_BF16 ? "16BF" : NULL;
    if (in)
        snprintf(what, what_size, "cublasGemmEx(%c, %c, %s inputs, 32F c, COMPUTE_32F)", g->d.trans_b ? 'T' : 'N',
                 g->d.trans_a ? 'T' : 'N', in);
    else
        snprintf(what, what_size, "cublasSgemm(%c, %c)", g->d.trans_b ? 'T' : 'N', g->d.trans_a ? 'T' : 'N');
    return 0;
}

#define F32(p) ((float *)(uintptr_t)(p))

static int gemm_issue(void *state, hn_err *err) {
    gemm_cublas *g = state;
    const hn_dptr *dev = g->w->dev;
    const gemm_dims *d = &g->d;
    const cublasOperation_t op_b = d->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, op_a = d->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int ldb = d->trans_b ? d->k : d->n, lda = d->trans_a ? d->m : d->k;
    if (d->in_dtype == HN_DT_F32) {
        cublasStatus_t st = cublasSgemm(g->handle, op_b, op_a, d->n, d->m, d->k, &d->alpha, F32(dev[GEMM_B_B]), ldb,
                                        F32(dev[GEMM_B_A]), lda, &d->beta, F32(dev[GEMM_B_C]), d->n);
        if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemm: %s", cublasGetStatusString(st));
        return 0;
    }
    const cudaDataType in = d->in_dtype == HN_DT_F16 ? CUDA_R_16F : CUDA_R_16BF;
    cublasStatus_t st = cublasGemmEx(g->handle, op_b, op_a, d->n, d->m, d->k, &d->alpha,
                                     (const void *)(uintptr_t)dev[GEMM_B_B], in, ldb,
                                     (const void *)(uintptr_t)dev[GEMM_B_A], in, lda, &d->beta,
                                     (void *)(uintptr_t)dev[GEMM_B_C], CUDA_R_32F, d->n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasGemmEx: %s", cublasGetStatusString(st));
    return 0;
}

static void gemm_release(void *state) {
    gemm_cublas *g = state;
    if (g) g->w = NULL;
}

const hn_op_baseline gemm_baselines[GEMM_N_BASELINES] = {
    {.name = "cublas_sgemm", .family = "cublas", .precision = "float", .open = gemm_open, .close = gemm_close,
     .prepare = gemm_prepare, .issue = gemm_issue, .release = gemm_release},
};
