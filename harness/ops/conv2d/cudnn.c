/*
 * conv2d/cudnn.c: the cuDNN baselines of conv2d (see op.h, hn_op_baseline; the
 * library is loaded at run time by cuda/cudnn.c), and what they share with the
 * baselines of conv2d's gradients (conv2d_cudnn.h: how a case is posed, the
 * state of a run, the choice of an algorithm).
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

/* ---------------------------------------------------------------------- */
/* how a case is posed */

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

void conv2d_cudnn_forward_of(conv2d_dims *d, const conv2d_bwd_dims *b, float pad) {
    memset(d, 0, sizeof *d);
    d->n = b->n, d->in_ch = b->in_ch, d->out_ch = b->out_ch;
    d->use_bias = 0, d->layout = 0, d->pad = pad;
    d->s = b->s;
}

/* ---------------------------------------------------------------------- */
/* the state every conv2d cuDNN baseline shares */

enum { K_F32_TO_F64, K_F64_TO_F32, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"conv2d_f32_to_f64", "conv2d_f64_to_f32"};

/* The conversion kernels of the double baselines (conv2d_im2col.cu, embedded). */
static int load_kernels(conv2d_dnn *s, const hn_device_info *dev, hn_err *err) {
    const struct hn_embedded_file *src = hn_embedded_find("baseline/conv2d_im2col.cu");
    if (!src) return hn_errf(err, "the conversion kernels are not embedded in this binary");
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = src->data, .kernels = KERNEL_NAMES,
                          .n_kernels = K_COUNT, .arch = dev->arch};
    hn_module_image img;
    if (hn_compile_cuda(&req, &img, NULL, err) != 0) return -1;
    int rc = 0;
    for (int i = 0; i < K_COUNT && rc == 0; i++) rc = s->be->ops->kernel_load(s->be, &img, i, &s->cvt[i], err);
    hn_module_image_free(&img);
    return rc;
}

int conv2d_dnn_open(conv2d_dnn *s, hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    s->be = be;
    s->dbl = dbl;
    if (hn_cudnn_acquire(be, &s->h, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.x));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.y));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dd.bias));
    DNN_CHECK(err, hn_dnn.cudnnCreateFilterDescriptor(&s->dd.f));
    return dbl ? load_kernels(s, dev, err) : 0;
}

void conv2d_dnn_close(conv2d_dnn *s) {
    if (s->dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(s->dd.conv);
    if (s->dd.x) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.x);
    if (s->dd.y) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.y);
    if (s->dd.bias) hn_dnn.cudnnDestroyTensorDescriptor(s->dd.bias);
    if (s->dd.f) hn_dnn.cudnnDestroyFilterDescriptor(s->dd.f);
    memset(&s->dd, 0, sizeof s->dd);
    conv2d_dnn_free(s, &s->ws);
    s->ws_cap = 0;
    for (int i = 0; i < K_COUNT; i++) {
        if (s->cvt[i]) s->be->ops->kernel_free(s->be, s->cvt[i]);
        s->cvt[i] = NULL;
    }
    hn_cudnn_release(s->h);
    s->h = NULL;
}

cudnnDataType_t conv2d_dnn_type(const conv2d_dnn *s) {
    return s->dbl ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

int conv2d_dnn_workspace(conv2d_dnn *s, size_t bytes, hn_err *err) {
    if (bytes <= s->ws_cap) return 0;
    conv2d_dnn_free(s, &s->ws);
    s->ws_cap = 0;
    if (s->be->ops->alloc(s->be, bytes, &s->ws, err) != 0) return -1;
    s->ws_cap = bytes;
    return 0;
}

int conv2d_dnn_alloc(conv2d_dnn *s, long long n, hn_dptr *out, hn_err *err) {
    *out = 0;
    return s->be->ops->alloc(s->be, (size_t)n * (s->dbl ? sizeof(double) : sizeof(float)), out, err);
}

void conv2d_dnn_free(conv2d_dnn *s, hn_dptr *p) {
    if (*p) s->be->ops->free(s->be, *p);
    *p = 0;
}

/* A 1-D launch of conversion k over n elements. */
static int convert(conv2d_dnn *s, int k, hn_dptr src, hn_dptr dst, long long n, hn_err *err) {
    void *args[] = {&src, &dst, &n};
    hn_launch_dims d = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0};
    return s->be->ops->launch(s->be, s->cvt[k], &d, args, err);
}

int conv2d_dnn_to_double(conv2d_dnn *s, hn_dptr src, hn_dptr dst, long long n, hn_err *err) {
    return convert(s, K_F32_TO_F64, src, dst, n, err);
}

int conv2d_dnn_to_float(conv2d_dnn *s, hn_dptr src, hn_dptr dst, long long n, hn_err *err) {
    return convert(s, K_F64_TO_F32, src, dst, n, err);
}

conv2d_dnn_scalar conv2d_dnn_k(const conv2d_dnn *s, double v) {
    conv2d_dnn_scalar k;
    if (s->dbl) k.d = v;
    else k.f = (float)v;
    return k;
}

int conv2d_dnn_pick(const conv2d_dnn_found *found, int n, cudnnDataType_t t, const char *pass, hn_err *err) {
    int best = -1, best_rank = 0;
    for (int i = 0; i < n; i++) {
        int rank = found[i].status == CUDNN_STATUS_SUCCESS ? hn_cudnn_math_rank(t, found[i].math) : 0;
        if (rank > best_rank) best = i, best_rank = rank;
    }
    if (best >= 0) return best;
    char tried[512] = "";
    size_t k = 0;
    for (int i = 0; i < n && k < sizeof tried; i++)
        k += (size_t)snprintf(tried + k, sizeof tried - k, "%s%s %s (%s)", i ? ", " : "", found[i].name,
                              hn_dnn.cudnnGetErrorString(found[i].status), hn_cudnn_math_name(found[i].math));
    return hn_errf(err, "cuDNN found no %s algorithm for this case%s (%d tried: %s)", pass,
                   t == CUDNN_DATA_FLOAT ? " without TF32" : "", n, tried);
}

void conv2d_dnn_algo_text(char *buf, size_t size, const conv2d_dnn_found *f, cudnnDataType_t t) {
    const cudnnMathType_t runs = t == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    snprintf(buf, size, "algo=%s math=%s%s ws=%zuB", f->name, hn_cudnn_math_name(runs),
             f->math == runs ? "" : " (found as another math type)", f->memory);
}

/* ---------------------------------------------------------------------- */
/* the forward baselines */

typedef struct {
    conv2d_dnn base;
    /* the case */
    hn_workload *w;
    conv2d_dims d;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws_bytes;
    long long n_in, n_out;
    hn_dptr filter_t;              /* float filter transposed for NHWC, or 0 */
    hn_dptr filter_d, in_d, out_d, bias_d; /* double: the tensors in double */
} dnn_conv;

void conv2d_cudnn_release(void *state) {
    dnn_conv *s = state;
    if (!s) return;
    conv2d_dnn *b = &s->base;
    conv2d_dnn_free(b, &s->filter_t);
    conv2d_dnn_free(b, &s->filter_d);
    conv2d_dnn_free(b, &s->in_d);
    conv2d_dnn_free(b, &s->out_d);
    conv2d_dnn_free(b, &s->bias_d);
    if (b->dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(b->dd.conv);
    b->dd.conv = NULL;
    s->w = NULL;
}

void conv2d_cudnn_close(void *state) {
    dnn_conv *s = state;
    if (!s) return;
    conv2d_cudnn_release(s);
    conv2d_dnn_close(&s->base);
    free(s);
}

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    dnn_conv *s = xcalloc(1, sizeof *s);
    if (conv2d_dnn_open(&s->base, be, dev, dbl, err) != 0) {
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

/* Runs cudnnFind... and keeps the fastest result that keeps the precision. */
static int choose_algorithm(dnn_conv *s, conv2d_dnn_found *chosen, hn_err *err) {
    conv2d_dnn *b = &s->base;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    conv2d_dnn_found found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    DNN_CHECK(err, hn_dnn.cudnnFindConvolutionForwardAlgorithm(b->h, b->dd.x, b->dd.f, b->dd.conv, b->dd.y,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    for (int i = 0; i < got; i++)
        found[i] = (conv2d_dnn_found){perf[i].algo, hn_cudnn_fwd_algo_name(perf[i].algo), perf[i].status,
                                      perf[i].mathType, perf[i].memory};
    int best = conv2d_dnn_pick(found, got, conv2d_dnn_type(b), "forward", err);
    if (best < 0) return -1;
    *chosen = found[best];
    s->algo = perf[best].algo;
    s->ws_bytes = perf[best].memory;
    return 0;
}

/* The filter as the run wants it: (out_ch, fs, fs, in_ch) for NHWC, in double
 * for the double baseline. Enqueued on the stream, before the measured work. */
static int prepare_filter(dnn_conv *s, hn_dptr *filter, hn_err *err) {
    conv2d_dnn *b = &s->base;
    const conv2d_dims *d = &s->d;
    long long nf = (long long)d->out_ch * d->in_ch * d->s.fs * d->s.fs;
    *filter = s->w->dev[C2_B_FILTER];
    if (d->layout == 1) {
        cudnnTensorDescriptor_t kcrs = NULL, krsc = NULL;
        int rc = -1;
        const float one = 1.0f, zero = 0.0f;
        if (b->be->ops->alloc(b->be, (size_t)nf * sizeof(float), &s->filter_t, err) != 0) return -1;
        cudnnStatus_t st = hn_dnn.cudnnCreateTensorDescriptor(&kcrs);
        if (st == CUDNN_STATUS_SUCCESS) st = hn_dnn.cudnnCreateTensorDescriptor(&krsc);
        if (st != CUDNN_STATUS_SUCCESS) {
            hn_cudnn_fail(st, "cudnnCreateTensorDescriptor", err);
        } else if (hn_cudnn_tensor4d(kcrs, HN_CUDNN_NCHW, CUDNN_DATA_FLOAT, d->out_ch, d->in_ch, d->s.fs, d->s.fs,
                                     err) == 0 &&
                   hn_cudnn_tensor4d(krsc, HN_CUDNN_NHWC, CUDNN_DATA_FLOAT, d->out_ch, d->in_ch, d->s.fs, d->s.fs,
                                     err) == 0) {
            st = hn_dnn.cudnnTransformTensor(b->h, &one, kcrs, conv2d_dnn_ptr(*filter), &zero, krsc,
                                             conv2d_dnn_ptr(s->filter_t));
            rc = st == CUDNN_STATUS_SUCCESS ? 0 : hn_cudnn_fail(st, "cudnnTransformTensor (the filter to NHWC)", err);
        }
        if (kcrs) hn_dnn.cudnnDestroyTensorDescriptor(kcrs);
        if (krsc) hn_dnn.cudnnDestroyTensorDescriptor(krsc);
        if (rc != 0) return -1;
        *filter = s->filter_t;
    }
    if (b->dbl) {
        if (conv2d_dnn_alloc(b, nf, &s->filter_d, err) != 0 ||
            conv2d_dnn_to_double(b, *filter, s->filter_d, nf, err) != 0)
            return -1;
        *filter = s->filter_d;
    }
    return 0;
}

int conv2d_cudnn_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    dnn_conv *s = state;
    conv2d_dnn *b = &s->base;
    s->w = w;
    conv2d_params(w->params, &s->d);
    const conv2d_dims *d = &s->d;
    snprintf(what, what_size, "cudnnConvolutionForward");
    const cudnnDataType_t t = conv2d_dnn_type(b);
    if (conv2d_cudnn_describe(&b->dd, d, t, err) != 0) return -1;
    conv2d_dnn_found chosen = {0};
    if (choose_algorithm(s, &chosen, err) != 0) return -1;
    char algo[128];
    conv2d_dnn_algo_text(algo, sizeof algo, &chosen, t);
    snprintf(what, what_size, "%scudnnConvolutionForward %s%s%s", b->dbl ? "f32_to_f64+" : "", algo,
             d->use_bias ? "+cudnnAddTensor" : "", b->dbl ? "+f64_to_f32" : "");
    if (conv2d_dnn_workspace(b, s->ws_bytes, err) != 0) return -1;
    s->n_in = (long long)d->n * d->in_ch * d->s.h * d->s.w;
    s->n_out = (long long)d->n * d->out_ch * d->s.oh * d->s.ow;
    if (b->dbl) {
        if (conv2d_dnn_alloc(b, s->n_in, &s->in_d, err) != 0 || conv2d_dnn_alloc(b, s->n_out, &s->out_d, err) != 0)
            return -1;
        if (d->use_bias && (conv2d_dnn_alloc(b, d->out_ch, &s->bias_d, err) != 0 ||
                            conv2d_dnn_to_double(b, w->dev[C2_B_BIAS], s->bias_d, d->out_ch, err) != 0))
            return -1;
    }
    hn_dptr filter;
    return prepare_filter(s, &filter, err);
}

int conv2d_cudnn_issue(void *state, hn_err *err) {
    dnn_conv *s = state;
    conv2d_dnn *b = &s->base;
    const hn_workload *w = s->w;
    hn_dptr filter = b->dbl ? s->filter_d : s->filter_t ? s->filter_t : w->dev[C2_B_FILTER];
    void *ws = s->ws_bytes ? conv2d_dnn_ptr(b->ws) : NULL;
    const conv2d_dnn_scalar one = conv2d_dnn_k(b, 1.0), zero = conv2d_dnn_k(b, 0.0);
    hn_dptr in = b->dbl ? s->in_d : w->dev[C2_B_IN], out = b->dbl ? s->out_d : w->dev[C2_B_OUT];
    hn_dptr bias = b->dbl ? s->bias_d : w->dev[C2_B_BIAS];
    if (b->dbl && conv2d_dnn_to_double(b, w->dev[C2_B_IN], s->in_d, s->n_in, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnConvolutionForward(b->h, &one, b->dd.x, conv2d_dnn_ptr(in), b->dd.f,
                                                  conv2d_dnn_ptr(filter), b->dd.conv, s->algo, ws, s->ws_bytes, &zero,
                                                  b->dd.y, conv2d_dnn_ptr(out)));
    if (s->d.use_bias)
        DNN_CHECK(err, hn_dnn.cudnnAddTensor(b->h, &one, b->dd.bias, conv2d_dnn_ptr(bias), &one, b->dd.y,
                                             conv2d_dnn_ptr(out)));
    return b->dbl ? conv2d_dnn_to_float(b, s->out_d, w->dev[C2_B_OUT], s->n_out, err) : 0;
}
