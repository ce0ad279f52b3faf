/*
 * gradcheck.h: every layer's and loss's backward pass, as `harness train` runs
 * it (the training config's kernels on the backend), against central finite
 * differences in double precision on the host, on small shapes.
 *
 * For a layer y = f(x, W, b) and a random output gradient dy, the loss
 * L = sum(f(x, W, b) * dy) has dL/dx = the layer's dx (and dL/dW, dL/db the
 * parameter gradients). f is computed in double by the catalogue operator's fp64
 * reference (harness/ops: conv2d, linear, pool2d, relu, sigmoid,
 * softmax_cross_entropy, through the hn_op table) or, for MSE, a loop here.
 * Every input and parameter is a multiple of 2^-12 in [-2, 2], so x +- h (h =
 * 2^-7) is exact in float and the finite difference (L(x+h) - L(x-h)) / 2h
 * needs no correction; max pooling gets distinct inputs 2^-5 apart and ReLU none
 * within 2^-5 of zero, so no step crosses a kink. A gradient element passes when
 * |analytic - numeric| <= 1e-4 + 1e-3 |numeric|: room for float kernels'
 * rounding on these sums of at most a few dozen terms (about 1e-6) and for the
 * h^2 term of sigmoid's difference (about 1e-6), while an indexing error, an
 * error of the gradient's own size, fails.
 *
 * The optimizers' updates (sgd.update, adam.update, those the config has) run
 * three steps on 1230 parameters against torch.optim's rules in double, with
 * the same tolerance; the batch gather (data.gather, where the config has it)
 * and the running statistics kernels after the losses (metrics.*) against the
 * host's arithmetic.
 */
#ifndef HN_TRAIN_GRADCHECK_H
#define HN_TRAIN_GRADCHECK_H

#include <stdio.h>

#include "backend.h"
#include "train/tkernels.h"

/* Compiles every kernel the check runs (the layers' passes and both losses'),
 * so that a config that lacks one or binds one wrongly is found before
 * anything runs (the command's exit 2, not a failed check). */
int hn_gradcheck_prepare(hn_tk *tk, hn_err *err);
/* Runs every check, printing a line per tensor to out (quiet: the failing
 * ones only) and a summary. seed < 0 takes the fixed inputs (seed 0 the same);
 * another seed other inputs, of the same properties. Returns the number of
 * tensors that failed, or -1 with err when a check could not run. */
int hn_gradcheck_run(hn_backend *be, hn_tk *tk, FILE *out, int quiet, int64_t seed, hn_err *err);

#endif
