/*
 * pool2d/cudnn.c: the cuDNN baseline of pool2d, and the handle and descriptors
 * it shares with pool2d_backward's (pool2d_cudnn.h).
 *
 *   cudnn_pooling_fwd: cudnnPoolingForward, max or average, every layout.
 *
 * cuDNN gives the pooled values only, not the position of each maximum: the
 * baseline declares `out` as its one output, so its rows are checked on `out`
 * and not on `argmax` (and, for max pooling, it writes a quarter less than a
 * kernel that also writes the argmax must). Per case, prepare describes the case
 * and runs the pooling once, untimed, so a layout or size cuDNN refuses is a
 * skipped row with cuDNN's reason rather than a failed launch.
 */
#include <stdint.h>
#include <stdlib.h>

#include "pool2d_cudnn.h"

int pool2d_dnn_open(pool2d_dnn *s, hn_backend *be, hn_err *err) {
    s->be = be;
    if (hn_cudnn_acquire(be, &s->h, err) != 0) return -1;
    DNN_CHECK(err, hn_dnn.cudnnCreatePoolingDescriptor(&s->pool));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->x));
    DNN_CHECK(err, hn_dnn.cudnnCreateTensorDescriptor(&s->y));
    return 0;
}

void pool2d_dnn_close(pool2d_dnn *s) {
    if (s->pool) hn_dnn.cudnnDestroyPoolingDescriptor(s->pool);
    if (s->x) hn_dnn.cudnnDestroyTensorDescriptor(s->x);
    if (s->y) hn_dnn.cudnnDestroyTensorDescriptor(s->y);
    hn_cudnn_release(s->h);
    s->pool = NULL, s->x = s->y = NULL, s->h = NULL;
}

int pool2d_dnn_describe(pool2d_dnn *s, hn_workload *w, const char *op, char *what, size_t what_size, hn_err *err) {
    s->w = w;
    if (pool2d_decode(op, w->params, &s->d, NULL, NULL, err) != 0) return -1;
    const pool2d_dims *d = &s->d;
    const cudnnPoolingMode_t mode =
        d->mode == P2_MAX ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    snprintf(what, what_size, "%s, %s", d->mode == P2_MAX ? "MAX_DETERMINISTIC" : "AVERAGE_COUNT_INCLUDE_PADDING",
             pool2d_layout_names[d->layout]);
    DNN_CHECK(err, hn_dnn.cudnnSetPooling2dDescriptor(s->pool, mode, CUDNN_PROPAGATE_NAN, d->k, d->k, 0, 0, d->k,
                                                      d->k));
    if (hn_cudnn_tensor4d(s->x, d->layout, CUDNN_DATA_FLOAT, d->n, d->channels, d->h, d->w, err) != 0 ||
        hn_cudnn_tensor4d(s->y, d->layout, CUDNN_DATA_FLOAT, d->n, d->channels, d->oh, d->ow, err) != 0)
        return -1;
    int n, c, oh, ow;
    DNN_CHECK(err, hn_dnn.cudnnGetPooling2dForwardOutputDim(s->pool, s->x, &n, &c, &oh, &ow));
    if (n != d->n || c != d->channels || oh != d->oh || ow != d->ow)
        return hn_errf(err, "cuDNN's output would be %dx%dx%dx%d, the operator's is %dx%dx%dx%d", n, c, oh, ow, d->n,
                       d->channels, d->oh, d->ow);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* the forward baseline */

static void *ptr(hn_dptr p) {
    return (void *)(uintptr_t)p;
}

static void fwd_close(void *state) {
    pool2d_dnn *s = state;
    if (!s) return;
    pool2d_dnn_close(s);
    free(s);
}

static void *fwd_open(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    (void)dev;
    pool2d_dnn *s = xcalloc(1, sizeof *s);
    if (pool2d_dnn_open(s, be, err) != 0) {
        fwd_close(s);
        return NULL;
    }
    return s;
}

static int fwd_issue(void *state, hn_err *err) {
    pool2d_dnn *s = state;
    const float one = 1.0f, zero = 0.0f;
    DNN_CHECK(err, hn_dnn.cudnnPoolingForward(s->h, s->pool, &one, s->x, ptr(s->w->dev[P2F_IN]), &zero, s->y,
                                              ptr(s->w->dev[P2F_OUT])));
    return 0;
}

static int fwd_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    pool2d_dnn *s = state;
    char how[96];
    snprintf(what, what_size, "cudnnPoolingForward");
    if (pool2d_dnn_describe(s, w, "pool2d", how, sizeof how, err) != 0) return -1;
    snprintf(what, what_size, "cudnnPoolingForward %s", how);
    /* once, untimed: cuDNN says here whether it takes the case */
    return fwd_issue(s, err);
}

static void fwd_release(void *state) {
    pool2d_dnn *s = state;
    if (s) s->w = NULL;
}

static const char *const FWD_OUTPUTS[] = {"out", NULL};

const hn_op_baseline pool2d_baselines[POOL2D_N_BASELINES] = {
    {.name = "cudnn_pooling_fwd", .family = "cudnn", .precision = "float", .outputs = FWD_OUTPUTS,
     .open = fwd_open, .close = fwd_close, .prepare = fwd_prepare, .issue = fwd_issue, .release = fwd_release},
};
