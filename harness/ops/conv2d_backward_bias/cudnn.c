/*
 * conv2d_backward_bias/cudnn.c: the cuDNN baselines of conv2d_backward_bias (see
 * op.h, hn_op_baseline; the state they share with conv2d's other cuDNN baselines
 * is conv2d/conv2d_cudnn.h's).
 *
 *   cudnn_conv_bwd_bias:        cudnnConvolutionBackwardBias(dout) -> dbias, in
 *                               FP32 (dout (n, out_ch, oh, ow) NCHW, dbias
 *                               (1, out_ch, 1, 1)).
 *   cudnn_conv_bwd_bias_double: the baseline of double-precision variants: the
 *                               same in double, dout converted to double and the
 *                               double dbias into the float dbias inside the timed
 *                               work.
 *
 * No algorithm to choose and no workspace: prepare sets the two descriptors. The
 * gradient depends on dout's shape only, so every case is posed, "same"
 * convolutions with even filters included (no skip reason but cuDNN's own).
 */
#include <stdlib.h>

#include "ops/conv2d/conv2d_cudnn.h"

typedef struct {
    conv2d_dnn base;          /* dd.y: dout; dd.bias: dbias */
    /* the case */
    hn_workload *w;
    conv2d_bwd_dims d;
    long long n_dout;
    hn_dptr dout_d, dbias_d;  /* double: the tensors in double */
} bwd_bias_dnn;

static void bwd_bias_release(void *state) {
    bwd_bias_dnn *s = state;
    if (!s) return;
    conv2d_dnn_free(&s->base, &s->dout_d);
    conv2d_dnn_free(&s->base, &s->dbias_d);
    s->w = NULL;
}

static void bwd_bias_close(void *state) {
    bwd_bias_dnn *s = state;
    if (!s) return;
    bwd_bias_release(s);
    conv2d_dnn_close(&s->base);
    free(s);
}

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    bwd_bias_dnn *s = xcalloc(1, sizeof *s);
    if (conv2d_dnn_open(&s->base, be, dev, dbl, err) != 0) {
        bwd_bias_close(s);
        return NULL;
    }
    return s;
}

static void *bwd_bias_open_float(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 0, err);
}

static void *bwd_bias_open_double(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 1, err);
}

static int bwd_bias_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    bwd_bias_dnn *s = state;
    conv2d_dnn *b = &s->base;
    s->w = w;
    snprintf(what, what_size, "%scudnnConvolutionBackwardBias%s", b->dbl ? "f32_to_f64+" : "",
             b->dbl ? "+f64_to_f32" : "");
    if (conv2d_bwd_bias_decode(w->params, &s->d, err) != 0) return -1;
    const conv2d_bwd_dims *d = &s->d;
    const cudnnDataType_t t = conv2d_dnn_type(b);
    if (hn_cudnn_tensor4d(b->dd.y, HN_CUDNN_NCHW, t, d->n, d->out_ch, d->s.oh, d->s.ow, err) != 0 ||
        hn_cudnn_tensor4d(b->dd.bias, HN_CUDNN_NCHW, t, 1, d->out_ch, 1, 1, err) != 0)
        return -1;
    s->n_dout = (long long)d->n * d->out_ch * d->s.oh * d->s.ow;
    if (b->dbl && (conv2d_dnn_alloc(b, s->n_dout, &s->dout_d, err) != 0 ||
                   conv2d_dnn_alloc(b, d->out_ch, &s->dbias_d, err) != 0))
        return -1;
    return 0;
}

static int bwd_bias_issue(void *state, hn_err *err) {
    bwd_bias_dnn *s = state;
    conv2d_dnn *b = &s->base;
    const hn_workload *w = s->w;
    const conv2d_dnn_scalar one = conv2d_dnn_k(b, 1.0), zero = conv2d_dnn_k(b, 0.0);
    hn_dptr dout = b->dbl ? s->dout_d : w->dev[C2BB_DOUT], dbias = b->dbl ? s->dbias_d : w->dev[C2BB_DBIAS];
    if (b->dbl && conv2d_dnn_to_double(b, w->dev[C2BB_DOUT], s->dout_d, s->n_dout, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnConvolutionBackwardBias(b->h, &one, b->dd.y, conv2d_dnn_ptr(dout), &zero, b->dd.bias,
                                                       conv2d_dnn_ptr(dbias)));
    return b->dbl ? conv2d_dnn_to_float(b, s->dbias_d, w->dev[C2BB_DBIAS], s->d.out_ch, err) : 0;
}

const hn_op_baseline conv2d_bwd_bias_baselines[CONV2D_BWD_N_BASELINES] = {
    {.name = "cudnn_conv_bwd_bias", .family = "cudnn", .precision = "float", .open = bwd_bias_open_float,
     .close = bwd_bias_close, .prepare = bwd_bias_prepare, .issue = bwd_bias_issue, .release = bwd_bias_release},
    {.name = "cudnn_conv_bwd_bias_double", .family = "cudnn", .precision = "double", .open = bwd_bias_open_double,
     .close = bwd_bias_close, .prepare = bwd_bias_prepare, .issue = bwd_bias_issue, .release = bwd_bias_release},
};
