/*
 * conv2d/cudnn.c: the cuDNN baselines of conv2d (see op.h, hn_op_baseline; the
 * library is loaded at run time by cuda/cudnn.c).
 *
 *   cudnn_conv_fwd:        cudnnConvolutionForward in FP32 with CUDNN_FMA_MATH
 *                          (CUDNN_DEFAULT_MATH would let cuDNN use TF32 tensor
 *                          cores on Ampere and newer), the algorithm the fastest
 *                          of cudnnFindConvolutionForwardAlgorithm's results for
 *                          the case that keeps FMA math.
 *   cudnn_conv_fwd_double: the baseline of double-precision variants: the same in
 *                          double (every tensor CUDNN_DATA_DOUBLE). As the cuBLAS
 *                          DGEMM baseline does, the filter (and bias) is converted
 *                          to double once per case, outside the timed work; the
 *                          float input is converted to double and the double
 *                          result into the float output inside it, as a kernel
 *                          reading and writing float tensors would have to.
 *
 * Per case (prepare, untimed): descriptors, cudnnFind... (it times every
 * algorithm on buffers of its own), the workspace of the chosen one, and the
 * filter in the layout and type the run needs. The rows' `kernel` column names
 * what runs, the algorithm and math type included:
 *   "cudnnConvolutionForward algo=IMPLICIT_PRECOMP_GEMM math=FMA ws=0B+cudnnAddTensor"
 * A bias, when the case has one, is added by cudnnAddTensor inside the timed work
 * (cudnnConvolutionBiasActivationForward would fuse it, but with an identity
 * activation only for IMPLICIT_PRECOMP_GEMM, which may not be the fastest).
 *
 * Layouts: NCHW and NHWC by cuDNN's tensor formats (for NHWC the filter is
 * transposed to (out_ch, fs, fs, in_ch) once per case with cudnnTransformTensor,
 * outside the timed work, since the operator's filter is always (out_ch, in_ch,
 * fs, fs)). Skipped with the reason: CHWN (no such cuDNN tensor format for
 * convolution), asymmetric padding (a "same" convolution with an even filter:
 * cuDNN pads symmetrically), and padding with a value other than 0 (cuDNN pads
 * with zeros).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "conv2d.h"
#include "conv2d_cudnn.h"
#include "embedded.h"
#include "run.h"

enum { K_F32_TO_F64, K_F64_TO_F32, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"conv2d_f32_to_f64", "conv2d_f64_to_f32"};

typedef struct {
    int dbl;
    hn_backend *be;
    cudnnHandle_t h;
    hn_kernel *k[K_COUNT];         /* double only: the conversions */
    conv2d_dnn_desc dd;            /* x, y, bias, f for the run; conv per case */
    hn_dptr ws;                    /* workspace, grown as cases need */
    size_t ws_cap;
    /* the case */
    hn_workload *w;
    conv2d_dims d;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws_bytes;
    long long n_in, n_out;
    hn_dptr filter_t;              /* float filter transposed for NHWC, or 0 */
    hn_dptr filter_d, in_d, out_d, bias_d; /* double: the tensors in double */
} dnn_conv;

int conv2d_cudnn_describe(conv2d_dnn_desc *dd, const conv2d_dims *d, cudnnDataType_t t, hn_err *err) {
    if (d->layout == 2)
        return hn_errf(err, "cuDNN convolution takes the NCHW and NHWC layouts (no CHWN tensor format)");
    const int pad = d->s.pad_lo, pad_after = d->s.oh - 1 + d->s.fs - d->s.h - pad;
    if (pad_after != pad)
        return hn_errf(err, "cuDNN pads symmetrically; this case pads %d pixel%s before and %d after (a \"same\" "
                            "convolution with an even filter)",
                       pad, pad == 1 ? "" : "s", pad_after);
    if (pad > 0 && d->pad != 0.0f)
        return hn_errf(err, "cuDNN pads with zeros; this case pads with %g", (double)d->pad);
    if (hn_cudnn_tensor4d(dd->x, d->layout, t, d->n, d->in_ch, d->s.h, d->s.w, err) != 0 ||
        hn_cudnn_tensor4d(dd->y, d->layout, t, d->n, d->out_ch, d->s.oh, d->s.ow, err) != 0 ||
        hn_cudnn_tensor4d(dd->bias, d->layout, t, 1, d->out_ch, 1, 1, err) != 0)
        return -1;
    DNN_CHECK(err, hn_dnn.cudnnSetFilter4dDescriptor(dd->f, t, d->layout == 1 ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                     d->out_ch, d->in_ch, d->s.fs, d->s.fs));
    if (dd->conv) hn_dnn.cudnnDestroyConvolutionDescriptor(dd->conv);
    dd->conv = NULL;
    if (hn_cudnn_conv_desc(&dd->conv, pad, t, err) != 0) return -1;
    int on, oc, oh, ow;
    DNN_CHECK(err, hn_dnn.cudnnGetConvolution2dForwardOutputDim(dd->conv, dd->x, dd->f, &on, &oc, &oh, &ow));
    if (on != d->n || oc != d->out_ch || oh != d->s.oh || ow != d->s.ow)
        return hn_errf(err, "cuDNN's output would be %dx%dx%dx%d, the operator's is %dx%dx%dx%d", on, oc, oh, ow, d->n,
                       d->out_ch, d->s.oh, d->s.ow);
    return 0;
}

static void free_dptr(hn_backend *be, hn_dptr *p) {
    if (*p) be->ops->free(be, *p);
    *p = 0;
}

void conv2d_cudnn_release(void *state) {
    dnn_conv *s = state;
    if (!s) return;
    free_dptr(s->be, &s->filter_t);
    free_dptr(s->be, &s->filter_d);
    free_dptr(s->be, &s->in_d);
    free_dptr(s->be, &s->out_d);
    free_dptr(s->be, &s->bias_d);
    if (s->dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(s->dd.conv);
    s->dd.conv = NULL;
    s->w = NULL;
}

void conv2d_cudnn_close(void *state) {
    dnn_conv *s = state;
    if (!s) return;
    conv2d_cudnn_release(s);
    if (s->dd.x) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.x);
    if (s->dd.y) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.y);
    if (s->dd.bias) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.bias);
    if (s->dd.f) hn_dnn.cudnnDestroyFilterDescriptor(s->dd.f);
    free_dptr(s->be, &s->ws);
    for (int i = 0; i < K_COUNT; i++)
        if (s->k[i]) s->be->ops->kernel_free(s->be, s->k[i]);
    hn_cudnn_release(s->h);
    free(s);
}

/* The conversion kernels of the double baseline (conv2d_im2col.cu, embedded). */
static int load_kernels(dnn_conv *s, const hn_device_info *dev, hn_err *err) {
    const struct hn_embedded_file *src = hn_embedded_find("baseline/conv2d_im2col.cu");
    if (!src) return hn_errf(err, "the conversion kernels are not embedded in this binary");
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = src->data, .kernels = KERNEL_NAMES,
                          .n_kernels = K_COUNT, .arch = dev->arch};
    hn_module_image img;
    if (hn_compile_cuda(&req, &img, NULL, err) != 0) return -1;
    int rc = 0;
    for (int i = 0; i < K_COUNT && rc == 0; i++) rc = s->be->ops->kernel_load(s->be, &img, i, &s->k[i], err);
    hn_module_image_free(&img);
    return rc;
}

static int create_descriptors(dnn_conv *s, hn_err *err) {
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.x));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.y));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.bias));
    DNN_CHECK(err, hn_dnn.cudnnCreateFilterDescriptor(&s->dd.f));
    return 0;
}

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    dnn_conv *s = xcalloc(1, sizeof *s);
    s->dbl = dbl;
    s->be = be;
    if (hn_cudnn_acquire(be, &s->h, err) != 0 || create_descriptors(s, err) != 0 ||
        (dbl && load_kernels(s, dev, err) != 0)) {
        conv2d_cudnn_close(s);
        return NULL;
    }
    return s;
}

void *conv2d_cudnn_open_float(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 0, err);
}

void *conv2d_cudnn_open_double(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 1, err);
}

static void *ptr(hn_dptr p) {
    return (void *)(uintptr_t)p;
}

/* A 1-D launch of kernel k over n elements. */
static int launch_1d(dnn_conv *s, hn_kernel *k, long long n, void **args, hn_err *err) {
    hn_launch_dims d = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0};
    return s->be->ops->launch(s->be, k, &d, args, err);
}

/* src (n doubles) <- float src, or float dst <- double src. */
static int convert(dnn_conv *s, int kernel, hn_dptr src, hn_dptr dst, long long n, hn_err *err) {
    void *args[] = {&src, &dst, &n};
    return launch_1d(s, s->k[kernel], n, args, err);
}

/* Runs cudnnFind... and keeps the fastest result that keeps the precision. */
static int choose_algorithm(dnn_conv *s, cudnnDataType_t t, cudnnMathType_t *found_math, hn_err *err) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    DNN_CHECK(err, hn_dnn.cudnnFindConvolutionForwardAlgorithm(s->h, s->dd.x, s->dd.f, s->dd.conv, s->dd.y,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    int best = -1, best_rank = 0;
    for (int i = 0; i < got; i++) {
        int rank = perf[i].status == CUDNN_STATUS_SUCCESS ? hn_cudnn_math_rank(t, perf[i].mathType) : 0;
        if (rank > best_rank) best = i, best_rank = rank;
    }
    if (best < 0) {
        char tried[512] = "";
        size_t k = 0;
        for (int i = 0; i < got && k < sizeof tried; i++)
            k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s %s (%s)", i ? ", " : "",
                                  hn_cudnn_fwd_algo_name(perf[i].algo), hn_dnn.cudnnGetErrorString(perf[i].status),
                                  hn_cudnn_math_name(perf[i].mathType));
        return hn_errf(err, "cuDNN found no forward algorithm for this case%s (%d tried: %s)",
                       t == CUDNN_DATA_FLOAT ? " without TF32" : "", got, tried);
    }
    s->algo = perf[best].algo;
    s->ws_bytes = perf[best].memory;
    *found_math = perf[best].mathType;
    return 0;
}

/* The filter as the run wants it: (out_ch, fs, fs, in_ch) for NHWC, in double
 * for the double baseline. Enqueued on the stream, before the measured work. */
static int prepare_filter(dnn_conv *s, hn_dptr *filter, hn_err *err) {
    const conv2d_dims *d = &s->d;
    long long nf = (long long)d->out_ch * d->in_ch * d->s.fs * d->s.fs;
    *filter = s->w->dev[C2_B_FILTER];
    if (d->layout == 1) {
        cudnnTensorDescriptor_t kcrs = NULL, krsc = NULL;
        int rc = -1;
        const float one = 1.0f, zero = 0.0f;
        if (s->be->ops->alloc(s->be, (size_t)nf * sizeof(float), &s->filter_t, err) != 0) return -1;
        cudnnStatus_t st = hn_dnn.cudnnCreateTensorDescriptor(&kcrs);
        if (st == CUDNN_STATUS_SUCCESS) st = hn_dnn.cudnnCreateTensorDescriptor(&krsc);
        if (st != CUDNN_STATUS_SUCCESS) {
            hn_cudnn_fail(st, "cudnnCreateTensorDescriptor", err);
        } else if (hn_cudnn_tensor4d(kcrs, HN_CUDNN_NCHW, CUDNN_DATA_FLOAT, d->out_ch, d->in_ch, d->s.fs, d->s.fs,
                                     err) == 0 &&
                   hn_cudnn_tensor4d(krsc, HN_CUDNN_NHWC, CUDNN_DATA_FLOAT, d->out_ch, d->in_ch, d->s.fs, d->s.fs,
                                     err) == 0) {
            st = hn_dnn.cudnnTransformTensor(s->h, &one, kcrs, ptr(*filter), &zero, krsc, ptr(s->filter_t));
            rc = st == CUDNN_STATUS_SUCCESS ? 0 : hn_cudnn_fail(st, "cudnnTransformTensor (the filter to NHWC)", err);
        }
        if (kcrs) hn_dnn.cudnnDestroyTensorDescriptor(kcrs);
        if (krsc) hn_dnn.cudnnDestroyTensorDescriptor(krsc);
        if (rc != 0) return -1;
        *filter = s->filter_t;
    }
    if (s->dbl) {
        if (s->be->ops->alloc(s->be, (size_t)nf * sizeof(double), &s->filter_d, err) != 0 ||
            convert(s, K_F32_TO_F64, *filter, s->filter_d, nf, err) != 0)
            return -1;
        *filter = s->filter_d;
    }
    return 0;
}

int conv2d_cudnn_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    dnn_conv *s = state;
    s->w = w;
    conv2d_params(w->params, &s->d);
    const conv2d_dims *d = &s->d;
    snprintf(what, what_size, "cudnnConvolutionForward");
    const cudnnDataType_t t = s->dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    if (conv2d_cudnn_describe(&s->dd, d, t, err) != 0) return -1;
    cudnnMathType_t found_math;
    if (choose_algorithm(s, t, &found_math, err) != 0) return -1;
    snprintf(what, what_size, "%scudnnConvolutionForward algo=%s math=%s%s ws=%zuB%s%s", s->dbl ? "f32_to_f64+" : "",
             hn_cudnn_fwd_algo_name(s->algo), s->dbl ? "DEFAULT" : "FMA",
             found_math == (s->dbl ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH) ? "" : " (found as another math type)",
             s->ws_bytes, d->use_bias ? "+cudnnAddTensor" : "", s->dbl ? "+f64_to_f32" : "");
    if (s->ws_bytes > s->ws_cap) {
        free_dptr(s->be, &s->ws);
        s->ws_cap = 0;
        if (s->be->ops->alloc(s->be, s->ws_bytes, &s->ws, err) != 0) return -1;
        s->ws_cap = s->ws_bytes;
    }
    s->n_in = (long long)d->n * d->in_ch * d->s.h * d->s.w;
    s->n_out = (long long)d->n * d->out_ch * d->s.oh * d->s.ow;
    if (s->dbl) {
        if (s->be->ops->alloc(s->be, (size_t)s->n_in * sizeof(double), &s->in_d, err) != 0 ||
            s->be->ops->alloc(s->be, (size_t)s->n_out * sizeof(double), &s->out_d, err) != 0)
            return -1;
        if (d->use_bias && (s->be->ops->alloc(s->be, (size_t)d->out_ch * sizeof(double), &s->bias_d, err) != 0 ||
                            convert(s, K_F32_TO_F64, w->dev[C2_B_BIAS], s->bias_d, d->out_ch, err) != 0))
            return -1;
    }
    hn_dptr filter;
    return prepare_filter(s, &filter, err);
}

int conv2d_cudnn_issue(void *state, hn_err *err) {
    dnn_conv *s = state;
    const hn_workload *w = s->w;
    hn_dptr filter = s->dbl ? s->filter_d : s->filter_t ? s->filter_t : w->dev[C2_B_FILTER];
    void *ws = s->ws_bytes ? ptr(s->ws) : NULL;
    if (!s->dbl) {
        const float one = 1.0f, zero = 0.0f;
        DNN_CHECK(err, hn_dnn.cudnnConvolutionForward(s->h, &one, s->dd.x, ptr(w->dev[C2_B_IN]), s->dd.f, ptr(filter),
                                                      s->dd.conv, s->algo, ws, s->ws_bytes, &zero, s->dd.y,
                                                      ptr(w->dev[C2_B_OUT])));
        if (s->d.use_bias)
            DNN_CHECK(err, hn_dnn.cudnnAddTensor(s->h, &one, s->dd.bias, ptr(w->dev[C2_B_BIAS]), &one, s->dd.y,
                                                 ptr(w->dev[C2_B_OUT])));
        return 0;
    }
    const double one = 1.0, zero = 0.0;
    if (convert(s, K_F32_TO_F64, w->dev[C2_B_IN], s->in_d, s->n_in, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnConvolutionForward(s->h, &one, s->dd.x, ptr(s->in_d), s->dd.f, ptr(filter), s->dd.conv,
                                                  s->algo, ws, s->ws_bytes, &zero, s->dd.y, ptr(s->out_d)));
    if (s->d.use_bias)
        DNN_CHECK(err, hn_dnn.cudnnAddTensor(s->h, &one, s->dd.bias, ptr(s->bias_d), &one, s->dd.y, ptr(s->out_d)));
    return convert(s, K_F64_TO_F32, s->out_d, w->dev[C2_B_OUT], s->n_out, err);
}
