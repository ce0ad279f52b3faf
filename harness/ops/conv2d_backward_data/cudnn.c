/*
 * conv2d_backward_data/cudnn.c: the cuDNN baselines of conv2d_backward_data (see
 * op.h, hn_op_baseline; the state and choices they share with conv2d's forward
 * baselines are conv2d/conv2d_cudnn.h's).
 *
 *   cudnn_conv_bwd_data:        cudnnConvolutionBackwardData(filter, dout) -> din
 *                               in FP32 with CUDNN_FMA_MATH (no TF32), the
 *                               algorithm the fastest of
 *                               cudnnFindConvolutionBackwardDataAlgorithm's
 *                               results for the case that keeps FMA math.
 *   cudnn_conv_bwd_data_double: the baseline of double-precision variants: the
 *                               same in double; the filter (a weight) converted
 *                               to double once per case, outside the timed work,
 *                               dout to double and the double din into the float
 *                               din inside it.
 *
 * Per case (prepare, untimed): the descriptors of the forward convolution whose
 * gradient this is (conv2d_cudnn_describe: NCHW, stride 1), cudnnFind..., the
 * workspace of the chosen algorithm. The rows' `kernel` column names it:
 *   "cudnnConvolutionBackwardData algo=ALGO_1 math=FMA ws=0B"
 * Skipped with the reason: asymmetric padding (a "same" convolution with an even
 * filter: cuDNN pads symmetrically). The forward's pad value takes no part here.
 */
#include <stdlib.h>

#include "ops/conv2d/conv2d_cudnn.h"

typedef struct {
    conv2d_dnn base;
    /* the case */
    hn_workload *w;
    conv2d_bwd_dims d;
    cudnnConvolutionBwdDataAlgo_t algo;
    size_t ws_bytes;
    long long n_dout, n_din;
    hn_dptr filter_d, dout_d, din_d; /* double: the tensors in double */
} bwd_data_dnn;

static void bwd_data_release(void *state) {
    bwd_data_dnn *s = state;
    if (!s) return;
    conv2d_dnn *b = &s->base;
    conv2d_dnn_free(b, &s->filter_d);
    conv2d_dnn_free(b, &s->dout_d);
    conv2d_dnn_free(b, &s->din_d);
    if (b->dd.conv) hn_dnn.cudnnDestroyConvolutionDescriptor(b->dd.conv);
    b->dd.conv = NULL;
    s->w = NULL;
}

static void bwd_data_close(void *state) {
    bwd_data_dnn *s = state;
    if (!s) return;
    bwd_data_release(s);
    conv2d_dnn_close(&s->base);
    free(s);
}

static void *open_state(hn_backend *be, const hn_device_info *dev, int dbl, hn_err *err) {
    bwd_data_dnn *s = xcalloc(1, sizeof *s);
    if (conv2d_dnn_open(&s->base, be, dev, dbl, err) != 0) {
        bwd_data_close(s);
        return NULL;
    }
    return s;
}

static void *bwd_data_open_float(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 0, err);
}

static void *bwd_data_open_double(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    return open_state(be, dev, 1, err);
}

/* Runs cudnnFind... and keeps the fastest result that keeps the precision. */
static int choose_algorithm(bwd_data_dnn *s, conv2d_dnn_found *chosen, hn_err *err) {
    conv2d_dnn *b = &s->base;
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    conv2d_dnn_found found[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int got = 0;
    DNN_CHECK(err, hn_dnn.cudnnFindConvolutionBackwardDataAlgorithm(b->h, b->dd.f, b->dd.y, b->dd.conv, b->dd.x,
                                                                    CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf));
    for (int i = 0; i < got; i++)
        found[i] = (conv2d_dnn_found){perf[i].algo, hn_cudnn_bwd_data_algo_name(perf[i].algo), perf[i].status,
                                      perf[i].mathType, perf[i].memory};
    int best = conv2d_dnn_pick(found, got, conv2d_dnn_type(b), "backward data", err);
    if (best < 0) return -1;
    *chosen = found[best];
    s->algo = perf[best].algo;
    s->ws_bytes = perf[best].memory;
    return 0;
}

static int bwd_data_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    bwd_data_dnn *s = state;
    conv2d_dnn *b = &s->base;
    s->w = w;
    snprintf(what, what_size, "cudnnConvolutionBackwardData");
    if (conv2d_bwd_data_decode(w->params, &s->d, err) != 0) return -1;
    const conv2d_bwd_dims *d = &s->d;
    conv2d_dims fwd;
    conv2d_cudnn_forward_of(&fwd, d, 0.0f);
    const cudnnDataType_t t = conv2d_dnn_type(b);
    if (conv2d_cudnn_describe(&b->dd, &fwd, t, err) != 0) return -1;
    conv2d_dnn_found chosen = {0};
    if (choose_algorithm(s, &chosen, err) != 0) return -1;
    char algo[128];
    conv2d_dnn_algo_text(algo, sizeof algo, &chosen, t);
    snprintf(what, what_size, "%scudnnConvolutionBackwardData %s%s", b->dbl ? "f32_to_f64+" : "", algo,
             b->dbl ? "+f64_to_f32" : "");
    if (conv2d_dnn_workspace(b, s->ws_bytes, err) != 0) return -1;
    s->n_dout = (long long)d->n * d->out_ch * d->s.oh * d->s.ow;
    s->n_din = (long long)d->n * d->in_ch * d->s.h * d->s.w;
    if (!b->dbl) return 0;
    const long long nf = (long long)d->out_ch * d->in_ch * d->s.fs * d->s.fs;
    if (conv2d_dnn_alloc(b, nf, &s->filter_d, err) != 0 || conv2d_dnn_alloc(b, s->n_dout, &s->dout_d, err) != 0 ||
        conv2d_dnn_alloc(b, s->n_din, &s->din_d, err) != 0)
        return -1;
    return conv2d_dnn_to_double(b, w->dev[C2BD_FILTER], s->filter_d, nf, err);
}

static int bwd_data_issue(void *state, hn_err *err) {
    bwd_data_dnn *s = state;
    conv2d_dnn *b = &s->base;
    const hn_workload *w = s->w;
    const conv2d_dnn_scalar one = conv2d_dnn_k(b, 1.0), zero = conv2d_dnn_k(b, 0.0);
    hn_dptr filter = b->dbl ? s->filter_d : w->dev[C2BD_FILTER];
    hn_dptr dout = b->dbl ? s->dout_d : w->dev[C2BD_DOUT], din = b->dbl ? s->din_d : w->dev[C2BD_DIN];
    void *ws = s->ws_bytes ? conv2d_dnn_ptr(b->ws) : NULL;
    if (b->dbl && conv2d_dnn_to_double(b, w->dev[C2BD_DOUT], s->dout_d, s->n_dout, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnConvolutionBackwardData(b->h, &one, b->dd.f, conv2d_dnn_ptr(filter), b->dd.y,
                                                       conv2d_dnn_ptr(dout), b->dd.conv, s->algo, ws, s->ws_bytes,
                                                       &zero, b->dd.x, conv2d_dnn_ptr(din)));
    return b->dbl ? conv2d_dnn_to_float(b, s->din_d, w->dev[C2BD_DIN], s->n_din, err) : 0;
}

const hn_op_baseline conv2d_bwd_data_baselines[CONV2D_BWD_N_BASELINES] = {
    {.name = "cudnn_conv_bwd_data", .family = "cudnn", .precision = "float", .open = bwd_data_open_float,
     .close = bwd_data_close, .prepare = bwd_data_prepare, .issue = bwd_data_issue, .release = bwd_data_release},
    {.name = "cudnn_conv_bwd_data_double", .family = "cudnn", .precision = "double", .open = bwd_data_open_double,
     .close = bwd_data_close, .prepare = bwd_data_prepare, .issue = bwd_data_issue, .release = bwd_data_release},
};
