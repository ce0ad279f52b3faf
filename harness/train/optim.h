/*
 * optim.h: the optimizers of `harness train` (SGD with momentum, Adam), as
 * PyTorch defines them (torch.optim.SGD, torch.optim.Adam), one launch per step
 * over the model's flat parameter buffer (kernels/train/optim.cu through the
 * training config's sgd.update / adam.update).
 *
 * Ownership: hn_optim_init allocates the state (SGD: the momentum buffer; Adam:
 * the first and second moments), zeroed; hn_optim_free releases it (NULL-safe).
 */
#ifndef HN_TRAIN_OPTIM_H
#define HN_TRAIN_OPTIM_H

#include "train/model.h"

typedef enum { HN_OPT_SGD, HN_OPT_ADAM } hn_optim_kind;

typedef struct {
    hn_optim_kind kind;
    hn_model *m;
    double lr, momentum, beta1, beta2, eps, weight_decay;
    int64_t step;          /* steps taken */
    hn_dptr s1, s2;        /* SGD: velocity; Adam: m, v */
    hn_tk_call call;
    hn_prof prof;          /* ev[0], ev[1] around the update */
} hn_optim;

/* kind: "sgd" or "adam"; lr the learning rate; the rest at PyTorch's defaults
 * (Adam: betas 0.9, 0.999, eps 1e-8) except SGD's momentum (0.9 here). */
int hn_optim_init(hn_optim *o, hn_model *m, hn_optim_kind kind, double lr, hn_err *err);
/* SGD's momentum (after hn_optim_init; 0 is plain SGD). */
void hn_optim_set_momentum(hn_optim *o, double momentum);
void hn_optim_free(hn_optim *o);
/* One update of every parameter from the model's gradients. */
int hn_optim_step(hn_optim *o, hn_err *err);

#endif
