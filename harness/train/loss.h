/*
 * loss.h: the losses of `harness train`, on the device: softmax cross-entropy
 * over class logits and integer labels (the catalogue's softmax_cross_entropy
 * kernels), and the mean squared error against float targets (kernels/train/
 * mse.cu). A loss reads the model's output, writes the gradient of the loss into
 * the model's dout, and adds to running statistics kept on the device (the
 * batch's summed loss, the samples it got right, the samples seen), so that a
 * step needs no host synchronisation: the host reads them when it reports.
 *
 * Ownership: hn_loss_init allocates the loss's device buffers (the labels or
 * targets of a batch, the loss, the statistics); hn_loss_free releases them
 * (NULL-safe on a zeroed or failed hn_loss).
 */
#ifndef HN_TRAIN_LOSS_H
#define HN_TRAIN_LOSS_H

#include "train/model.h"

typedef enum { HN_LOSS_XENT, HN_LOSS_MSE } hn_loss_kind;

typedef struct {
    hn_loss_kind kind;
    hn_model *m;
    hn_dptr target;   /* XENT: (max_batch) int32 labels; MSE: (max_batch, out) float targets */
    hn_dptr loss;     /* (1) float: the last batch's mean loss */
    hn_dptr stats;    /* (3) double: summed loss * batch, samples right, samples */
    int bound_batch;
    hn_tk_call fwd, count;
    hn_prof prof;     /* ev[0], ev[1] around the loss */
} hn_loss;

int hn_loss_init(hn_loss *l, hn_model *m, hn_loss_kind kind, hn_err *err);
void hn_loss_free(hn_loss *l);
/* The loss of the model's last output against target for batch samples, its
 * gradient into m->dout, and the statistics. */
int hn_loss_forward(hn_loss *l, int batch, hn_err *err);
/* Zeroes the statistics. */
int hn_loss_reset(hn_loss *l, hn_err *err);
/* Reads the statistics (synchronises): stats[0] summed loss, [1] right, [2] seen. */
int hn_loss_read(hn_loss *l, double stats[3], hn_err *err);
/* The last batch's mean loss (synchronises). */
int hn_loss_value(hn_loss *l, float *loss, hn_err *err);

#endif
