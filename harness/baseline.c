/*
 * baseline.c: the cuBLAS baseline of conv2d sweeps (see baseline.h).
 *
 *   out (out_ch, h*w) = filter (out_ch, K) x cols (K, h*w),  K = in_ch * fs * fs
 *
 * cols is built by conv2d_im2col (kernels/conv2d/conv2d_im2col.cu, embedded in the
 * binary and compiled with NVRTC) in chunks of pixels so its buffer stays under
 * HN_BASELINE_MAX_COLS_BYTES; for fs = 1 the input already is cols and no im2col
 * runs. cuBLAS is column-major, so the row-major product above is issued as
 * out^T (N x out_ch) = cols^T (N x K) x filter^T (K x out_ch) with no transposes:
 * cublasSgemm(N, N, m = npix, n = out_ch, k = K, cols, lda = npix, filter, ldb = K,
 * out + p0, ldc = h*w). Plain FP32 math (no TF32), on the harness's own stream,
 * timed by the same loop as the variants.
 */
#include "baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "embedded.h"

#define HN_BASELINE_MAX_COLS_BYTES ((size_t)2 << 30)
#define HN_BASELINE_NAME "cublas_im2col_sgemm"

struct hn_baseline {
    const hn_plan *plan;
    hn_backend *be;
    hn_device_info dev;
    cublasHandle_t handle;
    hn_kernel *im2col;
    hn_sampler *sampler;
    hn_dptr cols;
    size_t cols_bytes;
    double last_ms;
    int p_in, p_out, p_fs, p_h, p_w, p_pad;
};

static const char *cublas_error(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "invalid value";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "error";
    }
}

hn_baseline *hn_baseline_create(const hn_plan *p, hn_backend *be, const hn_device_info *dev) {
    if (strcmp(p->op->name, "conv2d") != 0 || !hn_backend_cuda_stream(be)) return NULL;
    hn_baseline *b = xcalloc(1, sizeof *b);
    b->plan = p;
    b->be = be;
    b->dev = *dev;
    b->last_ms = NAN;
    b->p_in = hn_op_param_index(p->op, "in_ch");
    b->p_out = hn_op_param_index(p->op, "out_ch");
    b->p_fs = hn_op_param_index(p->op, "filter_size");
    b->p_h = hn_op_param_index(p->op, "h");
    b->p_w = hn_op_param_index(p->op, "w");
    b->p_pad = hn_op_param_index(p->op, "pad");
    hn_err err;
    const struct hn_embedded_file *src = hn_embedded_find("conv2d_im2col.cu");
    if (!src) {
        hn_errf(&err, "the im2col kernel is not embedded in this binary");
        goto fail;
    }
    const char *names[] = {"conv2d_im2col"};
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = src->data, .kernels = names,
                          .n_kernels = 1, .arch = dev->arch};
    hn_module_image img;
    if (hn_compile_cuda(&req, &img, NULL, &err) != 0) goto fail;
    int rc = be->ops->kernel_load(be, &img, 0, &b->im2col, &err);
    hn_module_image_free(&img);
    if (rc != 0) goto fail;
    cublasStatus_t st = cublasCreate(&b->handle);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b->handle, (cudaStream_t)hn_backend_cuda_stream(be));
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hn_errf(&err, "cuBLAS: %s", cublas_error(st));
        goto fail;
    }
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    b->sampler = hn_sampler_create(&o, &err);
    if (!b->sampler) goto fail;
    return b;
fail:
    fprintf(stderr, "harness: no cuBLAS baseline: %s\n", err.msg);
    hn_baseline_destroy(b);
    return NULL;
}

void hn_baseline_destroy(hn_baseline *b) {
    if (!b) return;
    if (b->handle) cublasDestroy(b->handle);
    if (b->im2col) b->be->ops->kernel_free(b->be, b->im2col);
    if (b->cols) b->be->ops->free(b->be, b->cols);
    hn_sampler_destroy(b->sampler);
    free(b);
}

double hn_baseline_last_ms(const hn_baseline *b) {
    return b ? b->last_ms : NAN;
}

typedef struct {
    hn_baseline *b;
    hn_workload *w;
    int in_ch, out_ch, fs, h, wd;
    float pad;
    long long npix, chunk;
} job;

static int issue(void *ctx, hn_err *err) {
    job *j = ctx;
    hn_baseline *b = j->b;
    const hn_op *op = j->w->plan->op;
    hn_dptr in = j->w->dev[hn_op_buffer_index(op, "in")];
    hn_dptr filter = j->w->dev[hn_op_buffer_index(op, "filter")];
    hn_dptr out = j->w->dev[hn_op_buffer_index(op, "out")];
    int K = j->in_ch * j->fs * j->fs;
    const float one = 1.0f, zero = 0.0f;
    for (long long p0 = 0; p0 < j->npix; p0 += j->chunk) {
        int np = (int)(j->npix - p0 < j->chunk ? j->npix - p0 : j->chunk);
        hn_dptr cols = in + (hn_dptr)p0 * sizeof(float);
        int lda = (int)j->npix;
        if (j->fs != 1) {
            long long threads = (long long)j->in_ch * np;
            hn_launch_dims d = {{(unsigned)((threads + 255) / 256), 1, 1}, {256, 1, 1}, 0};
            void *args[] = {&in, &b->cols, &j->h, &j->wd, &j->in_ch, &j->fs, &j->pad, &p0, &np};
            if (b->be->ops->launch(b->be, b->im2col, &d, args, err) != 0) return -1;
            cols = b->cols;
            lda = np;
        }
        cublasStatus_t st = cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, np, j->out_ch, K, &one,
                                        (const float *)(uintptr_t)cols, lda,
                                        (const float *)(uintptr_t)filter, K, &zero,
                                        (float *)(uintptr_t)(out + (hn_dptr)p0 * sizeof(float)), (int)j->npix);
        if (st != CUBLAS_STATUS_SUCCESS) return hn_errf(err, "cublasSgemm: %s", cublas_error(st));
    }
    return 0;
}

int hn_baseline_run(hn_baseline *b, hn_workload *w, hn_csv *csv, const hn_sampling_opts *o, int hot,
                    char *reason, size_t reason_size) {
    hn_err err;
    b->last_ms = NAN;
    reason[0] = '\0';
    job j = {.b = b, .w = w};
    j.in_ch = (int)w->params[b->p_in];
    j.out_ch = (int)w->params[b->p_out];
    j.fs = (int)w->params[b->p_fs];
    j.h = (int)w->params[b->p_h];
    j.wd = (int)w->params[b->p_w];
    j.pad = (float)w->params[b->p_pad];
    j.npix = (long long)j.h * j.wd;
    hn_csv_set_named(csv, "variant", HN_BASELINE_NAME);
    hn_csv_set_named(csv, "kernel", "conv2d_im2col+cublasSgemm");
    hn_csv_set_named(csv, "timing", hot ? "hot" : "cold");

    /* Columns per chunk so the unrolled matrix stays under the cap. */
    size_t col_bytes = (size_t)j.in_ch * j.fs * j.fs * sizeof(float);
    j.chunk = j.npix;
    if (j.fs != 1) {
        long long fit = (long long)(HN_BASELINE_MAX_COLS_BYTES / col_bytes);
        if (fit < 1) fit = 1;
        if (fit < j.chunk) j.chunk = fit;
        size_t need = (size_t)j.chunk * col_bytes;
        if (need > b->cols_bytes) {
            if (b->cols) b->be->ops->free(b->be, b->cols);
            b->cols = 0;
            b->cols_bytes = 0;
            if (b->be->ops->alloc(b->be, need, &b->cols, &err) != 0) {
                snprintf(reason, reason_size, "%s", err.msg);
                return HN_ST_LAUNCH;
            }
            b->cols_bytes = need;
        }
    }
    hn_sampling_opts so = *o;
    hn_sampler_destroy(b->sampler);
    so.warmup = 0;
    b->sampler = hn_sampler_create(&so, &err);
    if (!b->sampler) {
        snprintf(reason, reason_size, "%s", err.msg);
        return HN_ST_LAUNCH;
    }
    if (hn_poison_outputs(w, &err) != 0 || issue(&j, &err) != 0 || b->be->ops->sync(b->be, &err) != 0) {
        snprintf(reason, reason_size, "%s", err.msg);
        return HN_ST_LAUNCH;
    }
    hn_check_result cr;
    double atol, rtol;
    if (hn_check_outputs(w, NULL, &cr, &atol, &rtol, &err) != 0) {
        snprintf(reason, reason_size, "%s", err.msg);
        return HN_ST_LAUNCH;
    }
    hn_row_check_columns(csv, &cr, hn_workload_first_ref(w), atol, rtol);
    int status = cr.match_fraction >= w->plan->min_match ? HN_ST_OK : HN_ST_MISMATCH;
    if (status == HN_ST_MISMATCH)
        snprintf(reason, reason_size, "%.4f%% of %lld elements match, max abs err %.3g",
                 cr.match_fraction * 100.0, (long long)cr.checked, cr.max_abs_err);
    hn_measure_opts mo = {.hot = hot, .default_mhz = b->dev.sm_clock_khz / 1000.0};
    hn_measure_result mr;
    if (hn_measure(b->be, &mo, b->sampler, issue, &j, &mr, &err) != 0) {
        snprintf(reason, reason_size, "%s", err.msg);
        return HN_ST_LAUNCH;
    }
    hn_row_stats_columns(csv, b->sampler, &mr);
    hn_stats st;
    hn_sampler_stats(b->sampler, &st);
    if (st.n > 0) b->last_ms = st.median * 1e3;
    return status;
}
