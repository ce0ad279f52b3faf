/*
 * optim.c: SGD with momentum and Adam over the flat parameter buffer; see optim.h.
 */
#include "train/optim.h"

#include <string.h>

static int bind(hn_optim *o, int64_t step, hn_err *err);

int hn_optim_init(hn_optim *o, hn_model *m, hn_optim_kind kind, double lr, hn_err *err) {
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->m = m;
    o->lr = lr;
    o->momentum = 0.9;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    hn_backend *be = m->be;
    size_t bytes = (size_t)(m->n_params ? m->n_params : 1) * sizeof(float);
    if (be->ops->alloc(be, bytes, &o->s1, err) != 0 || be->ops->fill(be, o->s1, 0, bytes, err) != 0 ||
        (kind == HN_OPT_ADAM && (be->ops->alloc(be, bytes, &o->s2, err) != 0 || be->ops->fill(be, o->s2, 0, bytes, err) != 0)) ||
        be->ops->event_create(be, &o->prof.ev[0], err) != 0 || be->ops->event_create(be, &o->prof.ev[1], err) != 0) {
        hn_optim_free(o);
        return hn_err_prefix(err, "the optimizer");
    }
    /* compiles the kernel now rather than in the first step */
    if (m->n_params && bind(o, 1, err) != 0) {
        hn_optim_free(o);
        return -1;
    }
    return 0;
}

void hn_optim_free(hn_optim *o) {
    if (!o || !o->m) return;
    hn_backend *be = o->m->be;
    if (o->s1) be->ops->free(be, o->s1);
    if (o->s2) be->ops->free(be, o->s2);
    for (int i = 0; i < 2; i++)
        if (o->prof.ev[i]) be->ops->event_destroy(be, o->prof.ev[i]);
    memset(o, 0, sizeof *o);
}

/* Binds the update for step `step`: rebound every step, since Adam's bias
 * corrections depend on it (an evaluation of a few expressions, no device work). */
static int bind(hn_optim *o, int64_t step, hn_err *err) {
    hn_model *m = o->m;
    if (o->kind == HN_OPT_ADAM) {
        hn_tk_val v[] = {HN_TK_BUF("param", m->params), HN_TK_BUF("grad", m->grads), HN_TK_BUF("m", o->s1),
                         HN_TK_BUF("v", o->s2),         HN_TK_INT("n", m->n_params), HN_TK_FLT("lr", o->lr),
                         HN_TK_FLT("beta1", o->beta1),  HN_TK_FLT("beta2", o->beta2), HN_TK_FLT("eps", o->eps),
                         HN_TK_FLT("weight_decay", o->weight_decay), HN_TK_INT("step", step)};
        return hn_tk_bind(m->tk, "adam.update", v, (int)HN_ARRAY_LEN(v), &o->call, err);
    }
    hn_tk_val v[] = {HN_TK_BUF("param", m->params),       HN_TK_BUF("grad", m->grads),
                         HN_TK_BUF("velocity", o->s1),        HN_TK_INT("n", m->n_params),
                         HN_TK_FLT("lr", o->lr),              HN_TK_FLT("momentum", o->momentum),
                         HN_TK_FLT("weight_decay", o->weight_decay), HN_TK_INT("step", step)};
    return hn_tk_bind(m->tk, "sgd.update", v, (int)HN_ARRAY_LEN(v), &o->call, err);
}

int hn_optim_step(hn_optim *o, hn_err *err) {
    hn_model *m = o->m;
    hn_backend *be = m->be;
    if (!m->n_params) return 0;
    o->step++;
    if (bind(o, o->step, err) != 0) return -1;
    if (m->profile && be->ops->event_record(be, o->prof.ev[0], err) != 0) return -1;
    if (hn_tk_launch(be, &o->call, err) != 0) return -1;
    if (m->profile) {
        if (be->ops->event_record(be, o->prof.ev[1], err) != 0) return -1;
        o->prof.pending_fwd = 1;
    }
    return 0;
}

void hn_optim_set_momentum(hn_optim *o, double momentum) { o->momentum = momentum; }
