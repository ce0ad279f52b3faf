/*
 * loss.c: softmax cross-entropy and MSE on the device; see loss.h.
 */
#include "train/loss.h"

#include <string.h>

int hn_loss_init(hn_loss *l, hn_model *m, hn_loss_kind kind, hn_err *err) {
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->m = m;
    hn_backend *be = m->be;
    size_t tbytes = kind == HN_LOSS_XENT ? (size_t)m->max_batch * sizeof(int32_t)
                                         : (size_t)m->max_batch * m->out_per * sizeof(float);
    if (be->ops->alloc(be, tbytes, &l->target, err) != 0 || be->ops->alloc(be, sizeof(float), &l->loss, err) != 0 ||
        be->ops->alloc(be, 3 * sizeof(double), &l->stats, err) != 0 || hn_loss_reset(l, err) != 0 ||
        be->ops->event_create(be, &l->prof.ev[0], err) != 0 || be->ops->event_create(be, &l->prof.ev[1], err) != 0) {
        hn_loss_free(l);
        return hn_err_prefix(err, "the loss");
    }
    return 0;
}

void hn_loss_free(hn_loss *l) {
    if (!l || !l->m) return;
    hn_backend *be = l->m->be;
    if (l->target) be->ops->free(be, l->target);
    if (l->loss) be->ops->free(be, l->loss);
    if (l->stats) be->ops->free(be, l->stats);
    for (int i = 0; i < 2; i++)
        if (l->prof.ev[i]) be->ops->event_destroy(be, l->prof.ev[i]);
    memset(l, 0, sizeof *l);
}

static int bind(hn_loss *l, int batch, hn_err *err) {
    hn_model *m = l->m;
    hn_dptr out = hn_model_output(m);
    if (l->kind == HN_LOSS_XENT) {
        hn_tk_val v[] = {HN_TK_BUF("logits", out),      HN_TK_BUF("labels", l->target), HN_TK_BUF("loss", l->loss),
                         HN_TK_BUF("dlogits", m->dout), HN_TK_BUF("stats", l->stats),   HN_TK_INT("batch", batch),
                         HN_TK_INT("classes", m->out_per)};
        if (hn_tk_bind(m->tk, "softmax_cross_entropy.forward", v, (int)HN_ARRAY_LEN(v), &l->fwd, err) != 0 ||
            hn_tk_bind(m->tk, "metrics.classify", v, (int)HN_ARRAY_LEN(v), &l->count, err) != 0)
            return -1;
    } else {
        hn_tk_val v[] = {HN_TK_BUF("pred", out),      HN_TK_BUF("target", l->target), HN_TK_BUF("loss", l->loss),
                         HN_TK_BUF("dpred", m->dout), HN_TK_BUF("stats", l->stats),   HN_TK_INT("n", batch * m->out_per),
                         HN_TK_INT("batch", batch),   HN_TK_INT("per_sample", m->out_per)};
        if (hn_tk_bind(m->tk, "mse.forward", v, (int)HN_ARRAY_LEN(v), &l->fwd, err) != 0 ||
            hn_tk_bind(m->tk, "metrics.binary", v, (int)HN_ARRAY_LEN(v), &l->count, err) != 0)
            return -1;
    }
    l->bound_batch = batch;
    return 0;
}

int hn_loss_forward(hn_loss *l, int batch, hn_err *err) {
    hn_backend *be = l->m->be;
    if (l->bound_batch != batch && bind(l, batch, err) != 0) return -1;
    int prof = l->m->profile;
    if (prof && be->ops->event_record(be, l->prof.ev[0], err) != 0) return -1;
    if (hn_tk_launch(be, &l->fwd, err) != 0 || hn_tk_launch(be, &l->count, err) != 0) return -1;
    if (prof) {
        if (be->ops->event_record(be, l->prof.ev[1], err) != 0) return -1;
        l->prof.pending_fwd = 1;
    }
    return 0;
}

int hn_loss_reset(hn_loss *l, hn_err *err) {
    hn_backend *be = l->m->be;
    return be->ops->fill(be, l->stats, 0, 3 * sizeof(double), err);
}

int hn_loss_read(hn_loss *l, double stats[3], hn_err *err) {
    hn_backend *be = l->m->be;
    return be->ops->download(be, stats, l->stats, 3 * sizeof(double), err);
}

int hn_loss_value(hn_loss *l, float *loss, hn_err *err) {
    hn_backend *be = l->m->be;
    return be->ops->download(be, loss, l->loss, sizeof(float), err);
}
