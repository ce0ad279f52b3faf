/*
 * conv2d_backward_filter/cudnn.c: the cuDNN baselines of conv2d_backward_filter
 * (see op.h, hn_op_baseline; the state and choices they share with conv2d's
 * forward baselines are conv2d/conv2d_cudnn.h's).
 *
 *   cudnn_conv_bwd_filter:        cudnnConvolutionBackwardFilter(in, dout) ->
 *                                 dfilter in FP32 with CUDNN_FMA_MATH (no TF32),
 *                                 the algorithm the fastest of
 *                                 cudnnFindConvolutionBackwardFilterAlgorithm's
 *                                 results for the case that keeps FMA math.
 *   cudnn_conv_bwd_filter_double: the baseline of double-precision variants: the
 *                                 same in double; in and dout converted to double
 *                                 and the double dfilter into the float dfilter,
 *                                 all inside the timed work (none is a weight).
 *
 * A pad value v other than 0 (cuDNN pads with zeros): the forward read X = in
 * inside the image and v outside, that is X = Z + v where Z is in - v inside and
 * 0 outside. The gradient is linear in X, and the gradient of a constant v is v
 * times dout summed over the batch and the pixels, for every (c, p, q):
 *
 *   dfilter[o][c][p][q] = dfilter of (in - v, zero padding)[o][c][p][q] + v * dbias[o]
 *
 * so the timed work is then cudnnOpTensor (in - v, into a buffer of the case),
 * cudnnConvolutionBackwardFilter of that, cudnnConvolutionBackwardBias (dbias)
 * and cudnnAddTensor (v * dbias[o] broadcast over c, p, q), what a cuDNN user
 * would do. tests/test_conv2d_backward.c checks the identity on the fp64
 * reference. A case whose window never leaves the image (padding 0) runs the
 * one call whatever v is.
 *
 * Per case (prepare, untimed): the descriptors of the forward convolution whose
 * gradient this is (conv2d_cudnn_describe: NCHW, stride 1), cudnnFind..., the
 * workspace of the chosen algorithm, the buffers of the pad's terms. The rows'
 * `kernel` column names what runs:
 *   "cudnnConvolutionBackwardFilter algo=ALGO_1 math=FMA ws=0B"
 *   "cudnnOpTensor(in-pad)+cudnnConvolutionBackwardFilter algo=ALGO_0 math=FMA ws=0B+
 *    cudnnConvolutionBackwardBias+cudnnAddTensor(pad*dbias)"
 * Skipped with the reason: asymmetric padding (a "same" convolution with an even
 * filter: cuDNN pads symmetrically).
 */
#include <stdlib.h>

#include "ops/conv2d/conv2d_cudnn.h"

typedef struct {
    conv2d_dnn base;
    /* the pad's terms: descriptors set per case, a single 1 of the baseline's
     * type (cudnnOpTensor's B, broadcast) */
    cudnnOpTensorDescriptor_t add;
    cudnnTensorDescriptor_t one_t;    /* (1, 1, 1, 1) */
    cudnnTensorDescriptor_t dbias_y;  /* (1, out_ch, 1, 1): cudnnConvolutionBackwardBias's output */
    cudnnTensorDescriptor_t dbias_f;  /* (out_ch, 1, 1, 1): the same, broadcast over a filter */
    cudnnTensorDescriptor_t dw_t;     /* (out_ch, in_ch, fs, fs): dfilter as a tensor */
    hn_dptr one;
    /* the case */
    hn_workload *w;
    conv2d_bwd_dims d;
    float pad;
    int shift;                        /* the pad's terms run */
    cudnnConvolutionBwdFilterAlgo_t algo;
    size_t ws_bytes;
    long long n_in, n_dout, n_dw;
    hn_dptr shifted, dbias;           /* shift: in - pad (n, in_ch, h, w), dbias (out_ch) */
    hn_dptr in_d, dout_d, dw_d;       /* double: the tensors in double */
} bwd_filter_dnn;

static void bwd_filter_release(void *state) {
    bwd_filter_dnn *s = state;
    if (!s) return;
    conv2d_dnn *b = &s->base;
    conv2d_dnn_free(b, &s->shifted);
    conv2d_dnn_free(b, &s->dbias);
    conv2d_dnn_free(b, &s->in_d);
    conv2d_dnn_free(b, &s->dout_d);
    conv2d_dnn_free(b, &s->dw_d);
    if (b->dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(b->dd.conv);
    b->dd.conv = NULL;
    s->w = NULL;
}

static void bwd_filter_close(void *state) {
    bwd_filter_dnn *s = state;
    if (!s) return;
    bwd_filter_release(s);
    if (s->add) hn_dnn.cudnnDestroyOpTensorDescriptor(s->add);
    cudnnTensorDescriptor_t *t[] = {&s->one_t, &s->dbias_y, &s->dbias_f, &s->dw_t};
    for (size_t i = 0; i < HN_ARRAY_LEN(t); i++)
        if (*t[i]) hn_dnn.cudnnDestroyTensorDescriptor(*t[i]);
    conv2d_dnn_free(&s->base, &s->one);
    conv2d_dnn_close(&s->base);
    free(s);
}

static int open_pad_terms(bwd_filter_dnn *s, hn_err *err) {
    conv2d_dnn *b = &s->base;
    DNN_CHECK(err, hn_dnn.cudnnCreateOpTensorDescriptor(&s->add));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->one_t));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dbias_y));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dbias_f));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->dw_t));
    DNN_CHECK(err, hn_dnn.cudnnSetOpTensorDescriptor(s->add, CUDNN_OP_TENSOR_ADD, conv2d_dnn_type(b),
                                                     CUDNN_PROPAGATE_NAN));
    if (hn_cudnn_tensor4d(s->one_t, HN_CUDNN_NCHW, conv2d_dnn_type(b), 1, 1, 1, 1, err) != 0) return -1;
    const conv2d_dnn_scalar one = conv2d_dnn_k(b, 1.0);
    if (conv2d_dnn_alloc(b, 1, &s->one, err) != 0) return -1;
    return b->be->ops->upload(b->be, s->one, &one, b->dbl ? sizeof(double) : sizeof(float), err);
}

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    bwd_filter_dnn *s = xcalloc(1, sizeof *s);
    if (conv2d_dnn_open(&s->base, be, dev, dbl, err) != 0 || open_pad_terms(s, err) != 0) {
        bwd_filter_close(s);
        return NULL;
    }
    return s;
}

static void *bwd_filter_open_float(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 0, err);
}

static void *bwd_filter_open_double(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 1, err);
}

/* Runs cudnnFind... and keeps the fastest result that keeps the precision. */
static int choose_algorithm(bwd_filter_dnn *s, conv2d_dnn_found *chosen, hn_err *err) {
    conv2d_dnn *b = &s->base;
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    conv2d_dnn_found found[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int got = 0;
    DNN_CHECK(err, hn_dnn.cudnnFindConvolutionBackwardFilterAlgorithm(
                       b->h, b->dd.x, b->dd.y, b->dd.conv, b->dd.f, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got,
                       perf));
    for (int i = 0; i < got; i++)
        found[i] = (conv2d_dnn_found){perf[i].algo, hn_cudnn_bwd_filter_algo_name(perf[i].algo), perf[i].status,
                                      perf[i].mathType, perf[i].memory};
    int best = conv2d_dnn_pick(found, got, conv2d_dnn_type(b), "backward filter", err);
    if (best < 0) return -1;
    *chosen = found[best];
    s->algo = perf[best].algo;
    s->ws_bytes = perf[best].memory;
    return 0;
}

/* The pad's terms of the case: their descriptors and buffers. */
static int prepare_pad_terms(bwd_filter_dnn *s, hn_err *err) {
    conv2d_dnn *b = &s->base;
    const conv2d_bwd_dims *d = &s->d;
    const cudnnDataType_t t = conv2d_dnn_type(b);
    if (hn_cudnn_tensor4d(s->dbias_y, HN_CUDNN_NCHW, t, 1, d->out_ch, 1, 1, err) != 0 ||
        hn_cudnn_tensor4d(s->dbias_f, HN_CUDNN_NCHW, t, d->out_ch, 1, 1, 1, err) != 0 ||
        hn_cudnn_tensor4d(s->dw_t, HN_CUDNN_NCHW, t, d->out_ch, d->in_ch, d->s.fs, d->s.fs, err) != 0)
        return -1;
    if (conv2d_dnn_alloc(b, s->n_in, &s->shifted, err) != 0 || conv2d_dnn_alloc(b, d->out_ch, &s->dbias, err) != 0)
        return -1;
    return 0;
}

static int bwd_filter_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    bwd_filter_dnn *s = state;
    conv2d_dnn *b = &s->base;
    s->w = w;
    snprintf(what, what_size, "cudnnConvolutionBackwardFilter");
    if (conv2d_bwd_filter_decode(w->params, &s->d, err) != 0) return -1;
    const conv2d_bwd_dims *d = &s->d;
    s->pad = (float)w->params[C2B_PAD];
    /* posed with zero padding: the pad's terms add the rest (describe still
     * declines asymmetric padding) */
    conv2d_dims fwd;
    conv2d_cudnn_forward_of(&fwd, d, 0.0f);
    const cudnnDataType_t t = conv2d_dnn_type(b);
    if (conv2d_cudnn_describe(&b->dd, &fwd, t, err) != 0) return -1;
    s->shift = s->pad != 0.0f && d->s.pad_lo > 0;
    conv2d_dnn_found chosen = {0};
    if (choose_algorithm(s, &chosen, err) != 0) return -1;
    char algo[128];
    conv2d_dnn_algo_text(algo, sizeof algo, &chosen, t);
    snprintf(what, what_size, "%s%scudnnConvolutionBackwardFilter %s%s%s", b->dbl ? "f32_to_f64+" : "",
             s->shift ? "cudnnOpTensor(in-pad)+" : "", algo,
             s->shift ? "+cudnnConvolutionBackwardBias+cudnnAddTensor(pad*dbias)" : "", b->dbl ? "+f64_to_f32" : "");
    if (conv2d_dnn_workspace(b, s->ws_bytes, err) != 0) return -1;
    s->n_in = (long long)d->n * d->in_ch * d->s.h * d->s.w;
    s->n_dout = (long long)d->n * d->out_ch * d->s.oh * d->s.ow;
    s->n_dw = (long long)d->out_ch * d->in_ch * d->s.fs * d->s.fs;
    if (s->shift && prepare_pad_terms(s, err) != 0) return -1;
    if (b->dbl && (conv2d_dnn_alloc(b, s->n_in, &s->in_d, err) != 0 ||
                   conv2d_dnn_alloc(b, s->n_dout, &s->dout_d, err) != 0 ||
                   conv2d_dnn_alloc(b, s->n_dw, &s->dw_d, err) != 0))
        return -1;
    return 0;
}

static int bwd_filter_issue(void *state, hn_err *err) {
    bwd_filter_dnn *s = state;
    conv2d_dnn *b = &s->base;
    const hn_workload *w = s->w;
    const conv2d_dnn_scalar one = conv2d_dnn_k(b, 1.0), zero = conv2d_dnn_k(b, 0.0);
    hn_dptr in = b->dbl ? s->in_d : w->dev[C2BF_IN], dout = b->dbl ? s->dout_d : w->dev[C2BF_DOUT];
    hn_dptr dw = b->dbl ? s->dw_d : w->dev[C2BF_DFILTER];
    void *ws = s->ws_bytes ? conv2d_dnn_ptr(b->ws) : NULL;
    if (b->dbl && (conv2d_dnn_to_double(b, w->dev[C2BF_IN], s->in_d, s->n_in, err) != 0 ||
                   conv2d_dnn_to_double(b, w->dev[C2BF_DOUT], s->dout_d, s->n_dout, err) != 0))
        return -1;
    if (s->shift) {
        const conv2d_dnn_scalar minus_pad = conv2d_dnn_k(b, -(double)s->pad);
        DNN_CHECK(err, hn_dnn.cudnnOpTensor(b->h, s->add, &one, b->dd.x, conv2d_dnn_ptr(in), &minus_pad, s->one_t,
                                            conv2d_dnn_ptr(s->one), &zero, b->dd.x, conv2d_dnn_ptr(s->shifted)));
        in = s->shifted;
    }
    DNN_CHECK(err, hn_dnn.cudnnConvolutionBackwardFilter(b->h, &one, b->dd.x, conv2d_dnn_ptr(in), b->dd.y,
                                                         conv2d_dnn_ptr(dout), b->dd.conv, s->algo, ws, s->ws_bytes,
                                                         &zero, b->dd.f, conv2d_dnn_ptr(dw)));
    if (s->shift) {
        const conv2d_dnn_scalar pad = conv2d_dnn_k(b, (double)s->pad);
        DNN_CHECK(err, hn_dnn.cudnnConvolutionBackwardBias(b->h, &one, b->dd.y, conv2d_dnn_ptr(dout), &zero,
                                                           s->dbias_y, conv2d_dnn_ptr(s->dbias)));
        DNN_CHECK(err, hn_dnn.cudnnAddTensor(b->h, &pad, s->dbias_f, conv2d_dnn_ptr(s->dbias), &one, s->dw_t,
                                             conv2d_dnn_ptr(dw)));
    }
    return b->dbl ? conv2d_dnn_to_float(b, s->dw_d, w->dev[C2BF_DFILTER], s->n_dw, err) : 0;
}

const hn_op_baseline conv2d_bwd_filter_baselines[CONV2D_BWD_N_BASELINES] = {
    {.name = "cudnn_conv_bwd_filter", .family = "cudnn", .precision = "float", .open = bwd_filter_open_float,
     .close = bwd_filter_close, .prepare = bwd_filter_prepare, .issue = bwd_filter_issue,
     .release = bwd_filter_release},
    {.name = "cudnn_conv_bwd_filter_double", .family = "cudnn", .precision = "double",
     .open = bwd_filter_open_double, .close = bwd_filter_close, .prepare = bwd_filter_prepare,
     .issue = bwd_filter_issue, .release = bwd_filter_release},
};
