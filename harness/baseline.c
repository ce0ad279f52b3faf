/*
 * baseline.c: the cuBLAS baselines of conv2d sweeps (see baseline.h).
 *
 *   out (out_ch, h*w) = filter (out_ch, K) x cols (K, h*w),  K = in_ch * fs * fs
 *
 * cols is built by conv2d_im2col (kernels/conv2d/conv2d_im2col.cu, embedded in the
 * binary and compiled with NVRTC) in chunks of pixels so its buffer stays under
 * HN_BASELINE_MAX_COLS_BYTES. cuBLAS is column-major, so the row-major product
 * above is issued as out^T (N x out_ch) = cols^T (N x K) x filter^T (K x out_ch)
 * with no transposes: gemm(N, N, m = npix, n = out_ch, k = K, cols, lda = npix,
 * filter, ldb = K, out + p0, ldc = h*w).
 *
 *   SGEMM: plain FP32 math (no TF32); for fs = 1 the input already is cols and no
 *          im2col runs.
 *   DGEMM: the baseline of double accumulators: im2col writes double columns, the
 *          filter is converted to double once per case (outside the timed
 *          interval), and the double result is converted into the float output
 *          (inside it, as a kernel producing a float output would have to).
 *
 * Both run on the harness's own stream and are timed by the same loop as the
 * variants.
 */
#include "baseline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>

#include "embedded.h"

#define HN_BASELINE_MAX_COLS_BYTES ((size_t)2 << 30)

enum { K_IM2COL_F32, K_IM2COL_F64, K_F32_TO_F64, K_F64_TO_F32, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"conv2d_im2col<float>", "conv2d_im2col<double>",
                                                  "conv2d_f32_to_f64", "conv2d_f64_to_f32"};

struct hn_baseline {
    const hn_plan *plan;
    hn_backend *be;
    hn_device_info dev;
    cublasHandle_t handle;
    hn_kernel *k[K_COUNT];
    hn_sampler *sampler;
    hn_dptr cols;             /* unrolled columns, float or double */
    size_t cols_bytes;
    double last_ms[2];        /* per hn_baseline_kind */
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

const char *hn_baseline_name(hn_baseline_kind kind) {
    return kind == HN_BASELINE_DGEMM ? "cublas_im2col_dgemm" : "cublas_im2col_sgemm";
}

hn_baseline *hn_baseline_create(const hn_plan *p, hn_backend *be, const hn_device_info *dev) {
    if (strcmp(p->op->name, "conv2d") != 0 || !hn_backend_cuda_stream(be)) return NULL;
    hn_baseline *b = xcalloc(1, sizeof *b);
    b->plan = p;
    b->be = be;
    b->dev = *dev;
    b->last_ms[0] = b->last_ms[1] = NAN;
    b->p_in = hn_op_param_index(p->op, "in_ch");
    b->p_out = hn_op_param_index(p->op, "out_ch");
    b->p_fs = hn_op_param_index(p->op, "filter_size");
    b->p_h = hn_op_param_index(p->op, "h");
    b->p_w = hn_op_param_index(p->op, "w");
    b->p_pad = hn_op_param_index(p->op, "pad");
    hn_err err;
    const struct hn_embedded_file *src = hn_embedded_find("baseline/conv2d_im2col.cu");
    if (!src) {
        hn_errf(&err, "the im2col kernel is not embedded in this binary");
        goto fail;
    }
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = src->data, .kernels = KERNEL_NAMES,
                          .n_kernels = K_COUNT, .arch = dev->arch};
    hn_module_image img;
    if (hn_compile_cuda(&req, &img, NULL, &err) != 0) goto fail;
    int rc = 0;
    for (int i = 0; i < K_COUNT && rc == 0; i++) rc = be->ops->kernel_load(be, &img, i, &b->k[i], &err);
    hn_module_image_free(&img);
    if (rc != 0) goto fail;
    cublasStatus_t st = cublasCreate(&b->handle);
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetStream(b->handle, (cudaStream_t)hn_backend_cuda_stream(be));
    if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(b->handle, CUBLAS_DEFAULT_MATH);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hn_errf(&err, "cuBLAS: %s", cublas_error(st));
        goto fail;
    }
    return b;
fail:
    fprintf(stderr, "harness: no cuBLAS baseline: %s\n", err.msg);
    hn_baseline_destroy(b);
    return NULL;
}

void hn_baseline_destroy(hn_baseline *b) {
    if (!b) return;
    if (b->handle) cublasDestroy(b->handle);
    for (int i = 0; i < K_COUNT; i++)
        if (b->k[i]) b->be->ops->kernel_free(b->be, b->k[i]);
    if (b->cols) b->be->ops->free(b->be, b->cols);
    hn_sampler_destroy(b->sampler);
    free(b);
}

double hn_baseline_last_ms(const hn_baseline *b, hn_baseline_kind kind) {
    return b ? b->last_ms[kind] : NAN;
}

typedef struct {
    hn_baseline *b;
    hn_workload *w;
    hn_baseline_kind kind;
    int in_ch, out_ch, fs, h, wd;
    float pad;
    long long npix, chunk;
    hn_dptr filter_d, out_d; /* DGEMM: the filter and the result in double */
} job;

/* A 1-D launch of kernel k over n elements. */
static int launch_1d(hn_baseline *b, hn_kernel *k, long long n, void **args, hn_err *err) {
    hn_launch_dims d = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0};
    return b->be->ops->launch(b->be, k, &d, args, err);
}

static int issue(void *ctx, hn_err *err) {
    job *j = ctx;
    hn_baseline *b = j->b;
    const hn_op *op = j->w->plan->op;
    hn_dptr in = j->w->dev[hn_op_buffer_index(op, "in")];
    hn_dptr filter = j->w->dev[hn_op_buffer_index(op, "filter")];
    hn_dptr out = j->w->dev[hn_op_buffer_index(op, "out")];
    int dbl = j->kind == HN_BASELINE_DGEMM;
    size_t elem = dbl ? sizeof(double) : sizeof(float);
    int K = j->in_ch * j->fs * j->fs;
    for (long long p0 = 0; p0 < j->npix; p0 += j->chunk) {
        int np = (int)(j->npix - p0 < j->chunk ? j->npix - p0 : j->chunk);
        hn_dptr cols = in + (hn_dptr)p0 * sizeof(float);
        int lda = (int)j->npix;
        if (j->fs != 1 || dbl) {
            void *args[] = {&in, &b->cols, &j->h, &j->wd, &j->in_ch, &j->fs, &j->pad, &p0, &np};
            if (launch_1d(b, b->k[dbl ? K_IM2COL_F64 : K_IM2COL_F32], (long long)j->in_ch * np, args, err) != 0)
                return -1;
            cols = b->cols;
            lda = np;
        }
        hn_dptr c = (dbl ? j->out_d : out) + (hn_dptr)p0 * elem;
        cublasStatus_t st;
        if (dbl) {
            const double one = 1.0, zero = 0.0;
            st = cublasDgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, np, j->out_ch, K, &one,
                             (const double *)(uintptr_t)cols, lda, (const double *)(uintptr_t)j->filter_d, K,
                             &zero, (double *)(uintptr_t)c, (int)j->npix);
        } else {
            const float one = 1.0f, zero = 0.0f;
            st = cublasSgemm(b->handle, CUBLAS_OP_N, CUBLAS_OP_N, np, j->out_ch, K, &one,
                             (const float *)(uintptr_t)cols, lda, (const float *)(uintptr_t)filter, K, &zero,
                             (float *)(uintptr_t)c, (int)j->npix);
        }
        if (st != CUBLAS_STATUS_SUCCESS)
            return hn_errf(err, "%s: %s", dbl ? "cublasDgemm" : "cublasSgemm", cublas_error(st));
    }
    if (dbl) {
        long long n = (long long)j->out_ch * j->npix;
        void *args[] = {&j->out_d, &out, &n};
        if (launch_1d(b, b->k[K_F64_TO_F32], n, args, err) != 0) return -1;
    }
    return 0;
}

/* Sets up the buffers of a job; 0 or -1 with err. */
static int prepare(job *j, hn_err *err) {
    hn_baseline *b = j->b;
    int dbl = j->kind == HN_BASELINE_DGEMM;
    size_t elem = dbl ? sizeof(double) : sizeof(float);
    size_t col_bytes = (size_t)j->in_ch * j->fs * j->fs * elem;
    j->chunk = j->npix;
    if (j->fs != 1 || dbl) {
        long long fit = (long long)(HN_BASELINE_MAX_COLS_BYTES / col_bytes);
        if (fit < 1) fit = 1;
        if (fit < j->chunk) j->chunk = fit;
        size_t need = (size_t)j->chunk * col_bytes;
        if (need > b->cols_bytes) {
            if (b->cols) b->be->ops->free(b->be, b->cols);
            b->cols = 0;
            b->cols_bytes = 0;
            if (b->be->ops->alloc(b->be, need, &b->cols, err) != 0) return -1;
            b->cols_bytes = need;
        }
    }
    if (!dbl) return 0;
    const hn_op *op = j->w->plan->op;
    long long nf = (long long)j->out_ch * j->in_ch * j->fs * j->fs;
    long long no = (long long)j->out_ch * j->npix;
    if (b->be->ops->alloc(b->be, (size_t)nf * sizeof(double), &j->filter_d, err) != 0) return -1;
    if (b->be->ops->alloc(b->be, (size_t)no * sizeof(double), &j->out_d, err) != 0) return -1;
    hn_dptr filter = j->w->dev[hn_op_buffer_index(op, "filter")];
    void *args[] = {&filter, &j->filter_d, &nf};
    return launch_1d(b, b->k[K_F32_TO_F64], nf, args, err);
}

int hn_baseline_run(hn_baseline *b, hn_baseline_kind kind, hn_workload *w, hn_csv *csv,
                    const hn_sampling_opts *o, int hot, char *reason, size_t reason_size) {
    hn_err err;
    b->last_ms[kind] = NAN;
    reason[0] = '\0';
    job j = {.b = b, .w = w, .kind = kind};
    j.in_ch = (int)w->params[b->p_in];
    j.out_ch = (int)w->params[b->p_out];
    j.fs = (int)w->params[b->p_fs];
    j.h = (int)w->params[b->p_h];
    j.wd = (int)w->params[b->p_w];
    j.pad = (float)w->params[b->p_pad];
    j.npix = (long long)j.h * j.wd;
    hn_csv_set_named(csv, "variant", hn_baseline_name(kind));
    hn_csv_set_named(csv, "kernel", kind == HN_BASELINE_DGEMM ? "conv2d_im2col<double>+cublasDgemm"
                                                              : "conv2d_im2col<float>+cublasSgemm");
    hn_csv_set_named(csv, "timing", hot ? "hot" : "cold");
    int status = HN_ST_LAUNCH;
    if (prepare(&j, &err) != 0) goto done;
    hn_sampling_opts so = *o;
    so.warmup = 0;
    hn_sampler_destroy(b->sampler);
    b->sampler = hn_sampler_create(&so, &err);
    if (!b->sampler) goto done;
    if (hn_poison_outputs(w, &err) != 0 || issue(&j, &err) != 0 || b->be->ops->sync(b->be, &err) != 0) goto done;
    hn_check_result cr;
    double atol, rtol;
    if (hn_check_outputs(w, NULL, &cr, &atol, &rtol, &err) != 0) goto done;
    hn_row_check_columns(csv, &cr, hn_workload_first_ref(w), atol, rtol);
    status = cr.match_fraction >= w->plan->min_match ? HN_ST_OK : HN_ST_MISMATCH;
    if (status == HN_ST_MISMATCH)
        snprintf(err.msg, sizeof err.msg, "%.4f%% of %lld elements match, max abs err %.3g",
                 cr.match_fraction * 100.0, (long long)cr.checked, cr.max_abs_err);
    hn_measure_opts mo = {.hot = hot, .default_mhz = b->dev.sm_clock_khz / 1000.0};
    hn_measure_result mr;
    if (hn_measure(b->be, &mo, b->sampler, issue, &j, &mr, &err) != 0) {
        status = HN_ST_LAUNCH;
        goto done;
    }
    hn_row_stats_columns(csv, b->sampler, &mr);
    hn_stats st;
    hn_sampler_stats(b->sampler, &st);
    if (st.n > 0) b->last_ms[kind] = st.median * 1e3;
    if (status == HN_ST_OK) err.msg[0] = '\0';
done:
    if (status != HN_ST_OK) snprintf(reason, reason_size, "%s", err.msg);
    if (j.filter_d) b->be->ops->free(b->be, j.filter_d);
    if (j.out_d) b->be->ops->free(b->be, j.out_d);
    return status;
}
