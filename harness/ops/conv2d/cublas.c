/*
 * conv2d/cublas.c: the cuBLAS baselines of conv2d (see op.h, hn_op_baseline).
 *
 *   out_b (out_ch, oh*ow) = filter (out_ch, K) x cols_b (K, oh*ow),  K = in_ch * fs * fs
 *
 * per image b, cols_b built by conv2d_im2col (kernels/conv2d/conv2d_im2col.cu,
 * embedded in the binary and compiled with NVRTC) in chunks of pixels so its
 * buffer stays under MAX_COLS_BYTES. cuBLAS is column-major, so the row-major
 * product above is issued as out^T (N x out_ch) = cols^T (N x K) x filter^T (K x
 * out_ch) with no transposes: gemm(N, N, m = np, n = out_ch, k = K, cols, lda = np,
 * filter, ldb = K, out + p0, ldc = oh*ow).
 *
 *   cublas_im2col_sgemm: plain FP32 math (no TF32); for a 1x1 filter without
 *                        padding the input already is cols and no im2col runs.
 *   cublas_im2col_dgemm: the baseline of double-precision variants: im2col writes
 *                        double columns, the filter is converted to double once
 *                        per case (outside the timed work), and the double result
 *                        is converted into the float output inside it, as a kernel
 *                        producing a float output would have to.
 * A bias, when the case has one, is added by a small kernel inside the timed work.
 * NCHW only: other layouts are skipped with the reason.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "backend.h"
#include "conv2d.h"
#include "embedded.h"
#include "run.h"

#define MAX_COLS_BYTES ((size_t)2 << 30)

enum { K_IM2COL_F32, K_IM2COL_F64, K_F32_TO_F64, K_F64_TO_F32, K_ADD_BIAS, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"conv2d_im2col<float>", "conv2d_im2col<double>",
                                                  "conv2d_f32_to_f64", "conv2d_f64_to_f32", "conv2d_add_bias"};

typedef struct {
    int dbl;
    hn_backend *be;
    cublasHandle_t handle;
    hn_kernel *k[K_COUNT];
    hn_dptr cols;            /* unrolled columns, float or double */
    size_t cols_bytes;
    /* the case */
    hn_workload *w;
    conv2d_dims d;
    long long npix, chunk;   /* output pixels of an image, per im2col */
    int use_cols;            /* im2col runs (else the input is the columns) */
    hn_dptr filter_d, out_d; /* DGEMM: the filter and one image's result in double */
} cublas_state;

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    if (!hn_backend_cuda_stream(be)) {
        hn_errf(err, "cuBLAS runs on the cuda backend only");
        return NULL;
    }
    cublas_state *b = xcalloc(1, sizeof *b);
    b->dbl = dbl;
    b->be = be;
    const struct hn_embedded_file *src = hn_embedded_find("baseline/conv2d_im2col.cu");
    if (!src) {
        hn_errf(err, "the im2col kernel is not embedded in this binary");
        goto fail;
    }
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = src->data, .kernels = KERNEL_NAMES,
                          .n_kernels = K_COUNT, .arch = dev->arch};
    hn_module_image img;
    if (hn_compile_cuda(&req, &img, NULL, err) != 0) goto fail;
    int rc = 0;
    for (int i = 0; i < K_COUNT && rc == 0; i++) rc = be->ops->kernel_load(be, &img, i, &b->k[i], err);
    hn_module_image_free(&img);
    if (rc != 0) goto fail;
    cublasStatus_t st = cublasCreate(&b->handle);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b->handle, (cudaStream_t)hn_backend_cuda_stream(be));
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hn_errf(err, "cuBLAS: %s", cublasGetStatusString(st));
        goto fail;
    }
    return b;
fail:
    if (b->handle) cublasDestroy(b->handle);
    for (int i = 0; i < K_COUNT; i++)
        if (b->k[i]) be->ops->kernel_free(be, b->k[i]);
    free(b);
    return NULL;
}

void *conv2d_cublas_open_sgemm(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 0, err);
}

void *conv2d_cublas_open_dgemm(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 1, err);
}

void conv2d_cublas_release(void *state) {
    cublas_state *b = state;
    if (!b) return;
    if (b->filter_d) b->be->ops->free(b->be, b->filter_d);
    if (b->out_d) b->be->ops->free(b->be, b->out_d);
    b->filter_d = b->out_d = 0;
    b->w = NULL;
}

void conv2d_cublas_close(void *state) {
    cublas_state *b = state;
    if (!b) return;
    conv2d_cublas_release(b);
    if (b->handle) cublasDestroy(b->handle);
    for (int i = 0; i < K_COUNT; i++)
        if (b->k[i]) b->be->ops->kernel_free(b->be, b->k[i]);
    if (b->cols) b->be->ops->free(b->be, b->cols);
    free(b);
}

/* A 1-D launch of kernel k over n elements. */
static int launch_1d(cublas_state *b, hn_kernel *k, long long n, void **args, hn_err *err) {
    hn_launch_dims d = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0};
    return b->be->ops->launch(b->be, k, &d, args, err);
}

int conv2d_cublas_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    cublas_state *b = state;
    b->w = w;
    conv2d_params(w->params, &b->d);
    const conv2d_dims *d = &b->d;
    if (d->layout != 0) return hn_errf(err, "the cuBLAS baseline takes the NCHW layout only");
    snprintf(what, what_size, "%s%s", b->dbl ? "conv2d_im2col<double>+cublasDgemm" : "conv2d_im2col<float>+cublasSgemm",
             d->use_bias ? "+bias" : "");
    size_t elem = b->dbl ? sizeof(double) : sizeof(float);
    b->npix = (long long)d->s.oh * d->s.ow;
    b->use_cols = !(d->s.fs == 1 && d->s.pad_lo == 0 && d->s.oh == d->s.h && d->s.ow == d->s.w) || b->dbl;
    b->chunk = b->npix;
    if (b->use_cols) {
        size_t col_bytes = (size_t)d->in_ch * d->s.fs * d->s.fs * elem;
        long long fit = (long long)(MAX_COLS_BYTES / col_bytes);
        if (fit < 1) fit = 1;
        if (fit < b->chunk) b->chunk = fit;
        size_t need = (size_t)b->chunk * col_bytes;
        if (need > b->cols_bytes) {
            if (b->cols) b->be->ops->free(b->be, b->cols);
            b->cols = 0;
            b->cols_bytes = 0;
            if (b->be->ops->alloc(b->be, need, &b->cols, err) != 0) return -1;
            b->cols_bytes = need;
        }
    }
    if (!b->dbl) return 0;
    long long nf = (long long)d->out_ch * d->in_ch * d->s.fs * d->s.fs;
    long long no = (long long)d->out_ch * b->npix;
    if (b->be->ops->alloc(b->be, (size_t)nf * sizeof(double), &b->filter_d, err) != 0) return -1;
    if (b->be->ops->alloc(b->be, (size_t)no * sizeof(double), &b->out_d, err) != 0) return -1;
    hn_dptr filter = w->dev[C2_B_FILTER];
    void *args[] = {&filter, &b->filter_d, &nf};
    return launch_1d(b, b->k[K_F32_TO_F64], nf, args, err);
}

/* One image: im2col in chunks, GEMM, conversion, bias. */
static int issue_image(cublas_state *b, int img, hn_err *err) {
    const conv2d_dims *d = &b->d;
    const hn_workload *w = b->w;
    int in_ch = d->in_ch, out_ch = d->out_ch, h = d->s.h, wd = d->s.w, fs = d->s.fs, pad_lo = d->s.pad_lo;
    int ow = d->s.ow;
    float pad = d->pad;
    hn_dptr in = w->dev[C2_B_IN] + (hn_dptr)img * in_ch * h * wd * sizeof(float);
    hn_dptr out = w->dev[C2_B_OUT] + (hn_dptr)img * out_ch * b->npix * sizeof(float);
    hn_dptr filter = w->dev[C2_B_FILTER];
    size_t elem = b->dbl ? sizeof(double) : sizeof(float);
    int K = in_ch * fs * fs;
    for (long long p0 = 0; p0 < b->npix; p0 += b->chunk) {
        int np = (int)(b->npix - p0 < b->chunk ? b->npix - p0 : b->chunk);
        hn_dptr cols = in + (hn_dptr)p0 * sizeof(float);
        int lda = (int)b->npix;
        if (b->use_cols) {
            void *args[] = {&in, &b->cols, &h, &wd, &in_ch, &fs, &pad, &pad_lo, &ow, &p0, &np};
            if (launch_1d(b, b->k[b->dbl ? K_IM2COL_F64 : K_IM2COL_F32], (long long)in_ch * np, args, err) != 0)
                return -1;
            cols = b->cols;
            lda = np;
        }
        hn_dptr c = (b->dbl ? b->out_d : out) + (hn_dptr)p0 * elem;
        cublasStatus_t st;
        if (b->dbl) {
            const double one = 1.0, zero = 0.0;
            st = cublasDgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, np, out_ch, K, &one, (const double *)(uintptr_t)cols,
                             lda, (const double *)(uintptr_t)b->filter_d, K, &zero, (double *)(uintptr_t)c,
                             (int)b->npix);
        } else {
            const float one = 1.0f, zero = 0.0f;
            st = cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, np, out_ch, K, &one, (const float *)(uintptr_t)cols,
                             lda, (const float *)(uintptr_t)filter, K, &zero, (float *)(uintptr_t)c, (int)b->npix);
        }
        if (st != CUBLAS_STATUS_SUCCESS)
            return hn_errf(err, "%s: %s", b->dbl ? "cublasDgemm" : "cublasSgemm", cublasGetStatusString(st));
    }
    if (b->dbl) {
        long long n = (long long)out_ch * b->npix;
        void *args[] = {&b->out_d, &out, &n};
        if (launch_1d(b, b->k[K_F64_TO_F32], n, args, err) != 0) return -1;
    }
    if (d->use_bias) {
        hn_dptr bias = w->dev[C2_B_BIAS];
        long long npix = b->npix, n = (long long)out_ch * b->npix;
        void *args[] = {&out, &bias, &npix, &n};
        if (launch_1d(b, b->k[K_ADD_BIAS], n, args, err) != 0) return -1;
    }
    return 0;
}

int conv2d_cublas_issue(void *state, hn_err *err) {
    cublas_state *b = state;
    for (int img = 0; img < b->d.n; img++)
        if (issue_image(b, img, err) != 0) return -1;
    return 0;
}
