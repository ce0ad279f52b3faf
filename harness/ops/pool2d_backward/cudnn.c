/*
 * pool2d_backward/cudnn.c: the cuDNN baseline of pool2d_backward.
 *
 *   cudnn_pooling_bwd: cudnnPoolingBackward(y, dy = dout, x = in) -> dx = din,
 *                      max or average, every layout (pool2d_cudnn.h).
 *
 * cuDNN does not take the argmax: it needs the forward's output y and finds
 * each window's maximum again by comparing x with y. The operator's buffers
 * hold x (`in`), so prepare computes y with cudnnPoolingForward into a buffer of
 * its own, outside the timed work (a training step has y from its forward
 * pass); the timed work is the backward call alone. The operator's argmax is
 * the first maximum of each window in row-major order; where a window of the
 * generated input holds two equal maxima (rare with normal random floats),
 * cuDNN may route the gradient to the other one, and the row reports it as a
 * mismatch. Average pooling needs neither y nor x in principle; cuDNN's call
 * takes them all the same. Like the forward baseline, prepare runs the call once,
 * untimed, so a case cuDNN refuses is a skipped row with its reason.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ops/pool2d/pool2d_cudnn.h"

typedef struct {
    pool2d_dnn base;
    hn_dptr y;          /* the forward output of `in`, (n, channels, oh, ow) */
} bwd_dnn;

static void *ptr(hn_dptr p) {
    return (void *)(uintptr_t)p;
}

static void bwd_release(void *state) {
    bwd_dnn *s = state;
    if (!s) return;
    if (s->y) s->base.be->ops->free(s->base.be, s->y);
    s->y = 0;
    s->base.w = NULL;
}

static void bwd_close(void *state) {
    bwd_dnn *s = state;
    if (!s) return;
    bwd_release(s);
    pool2d_dnn_close(&s->base);
    free(s);
}

static void *bwd_open(hn_backend *be, const hn_device_info *dev, hn_err *err) {
    (void)dev;
    bwd_dnn *s = xcalloc(1, sizeof *s);
    if (pool2d_dnn_open(&s->base, be, err) != 0) {
        bwd_close(s);
        return NULL;
    }
    return s;
}

static int bwd_issue(void *state, hn_err *err);

static int bwd_prepare(void *state, hn_workload *w, char *what, size_t what_size, hn_err *err) {
    bwd_dnn *s = state;
    pool2d_dnn *b = &s->base;
    char how[96];
    snprintf(what, what_size, "cudnnPoolingBackward");
    if (pool2d_dnn_describe(b, w, "pool2d_backward", how, sizeof how, err) != 0) return -1;
    snprintf(what, what_size, "cudnnPoolingBackward %s (y by cudnnPoolingForward, untimed)", how);
    const pool2d_dims *d = &b->d;
    size_t y_bytes = (size_t)d->n * d->channels * d->oh * d->ow * sizeof(float);
    if (b->be->ops->alloc(b->be, y_bytes, &s->y, err) != 0) return -1;
    const float one = 1.0f, zero = 0.0f;
    DNN_CHECK(err, hn_dnn.cudnnPoolingForward(b->h, b->pool, &one, b->x, ptr(w->dev[P2B_IN]), &zero, b->y, ptr(s->y)));
    /* once, untimed: cuDNN says here whether it takes the case */
    return bwd_issue(s, err);
}

static int bwd_issue(void *state, hn_err *err) {
    bwd_dnn *s = state;
    pool2d_dnn *b = &s->base;
    const hn_workload *w = b->w;
    const float one = 1.0f, zero = 0.0f;
    DNN_CHECK(err, hn_dnn.cudnnPoolingBackward(b->h, b->pool, &one, b->y, ptr(s->y), b->y, ptr(w->dev[P2B_DOUT]),
                                               b->x, ptr(w->dev[P2B_IN]), &zero, b->x, ptr(w->dev[P2B_DIN])));
    return 0;
}

const hn_op_baseline pool2d_backward_baselines[POOL2D_BACKWARD_N_BASELINES] = {
    {.name = "cudnn_pooling_bwd", .family = "cudnn", .precision = "float", .open = bwd_open, .close = bwd_close,
     .prepare = bwd_prepare, .issue = bwd_issue, .release = bwd_release},
};
