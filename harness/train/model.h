/*
 * model.h: a sequential model for `harness train`: layers with a forward pass,
 * a backward pass and parameters (Linear, Conv2D with padding, MaxPool2D, ReLU,
 * Sigmoid, Flatten), on the device through the backend interface, every kernel
 * taken from the training config (tkernels.h).
 *
 * Memory: every parameter of the model lives in one flat device buffer
 * (`params`, layer by layer, weight then bias), and every parameter gradient at
 * the same offset of `grads`, so an optimizer step is one launch. Activations
 * and input gradients are allocated once for max_batch samples and reused by
 * every step (a smaller batch uses their start). Flatten owns nothing: its
 * output is its input, its input gradient its output gradient.
 *
 * Gradients are written, not accumulated: every backward kernel overwrites its
 * output, so no zeroing is needed between steps.
 *
 * Layout: NCHW for images, (batch, features) row-major for vectors, weights as
 * PyTorch holds them (Linear (out_f, in_f), Conv2D (out_ch, in_ch, k, k)).
 *
 * Life cycle: hn_model_create, hn_model_add_* for each layer, hn_model_finish
 * (shapes, allocation, kernel binding; errors name the layer), then
 * hn_model_init (PyTorch's default initialisation, seeded) or hn_model_load.
 * hn_model_destroy (NULL-safe) frees the device buffers; the backend and the
 * kernel table must outlive the model.
 */
#ifndef HN_TRAIN_MODEL_H
#define HN_TRAIN_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "train/tkernels.h"
#include "util.h"

typedef enum { HN_L_LINEAR, HN_L_CONV2D, HN_L_MAXPOOL2D, HN_L_RELU, HN_L_SIGMOID, HN_L_FLATTEN } hn_layer_kind;

/* Where time went, per layer: milliseconds summed over the profiled steps. */
typedef struct {
    hn_event *ev[4];     /* forward start, stop, backward start, stop */
    int pending_fwd, pending_bwd;
    double fwd_ms, bwd_ms;
    int64_t fwd_n, bwd_n;
} hn_prof;

typedef struct {
    hn_layer_kind kind;
    char name[32];                  /* "conv2d_1", "relu_3" */
    int in_f, out_f;                /* linear */
    int in_ch, out_ch, fs, padding; /* conv2d */
    int k;                          /* maxpool2d */
    int in_nd, out_nd;              /* per-sample shapes: (C, H, W) or (F) */
    int in_dims[3], out_dims[3];
    int64_t in_per, out_per;        /* elements per sample */
    int64_t n_weight, n_bias;       /* parameters */
    int64_t param_off;              /* offset of the weight in params/grads (floats) */
    int need_dx;                    /* compute the input gradient */
    hn_dptr x, y, dy, dx;           /* (batch, in) input (borrowed), output, output gradient
                                       (borrowed), input gradient */
    hn_dptr argmax;                 /* maxpool2d: (batch, out) int32 */
    hn_dptr weight, bias, dweight, dbias;
    int bound_batch;
    hn_tk_call fwd, bwd[3];         /* bwd: data, weight, bias (or the one backward) */
    int n_bwd;
    hn_prof prof;
} hn_layer;

typedef struct {
    hn_backend *be;
    hn_tk *tk;
    hn_layer *layers;
    int n_layers, cap;
    int in_nd;
    int in_dims[3];
    int64_t in_per, out_per;
    int max_batch;
    int input_grad;        /* compute the first layer's input gradient too (gradcheck) */
    hn_dptr x;             /* (max_batch, in) the input batch */
    hn_dptr dout;          /* (max_batch, out) the gradient of the loss wrt the output */
    hn_dptr params, grads; /* (n_params) */
    int64_t n_params;
    int profile;           /* record events around each layer's passes */
    int has_norm;          /* the input's normalisation, x = (p / 255 - norm_mean) / norm_std, is */
    double norm_mean, norm_std; /* known: saved with the weights, set by hn_model_load from a file holding it */
} hn_model;

/* in_dims: the per-sample input shape, (C, H, W) (in_nd 3) or (F) (in_nd 1). */
hn_model *hn_model_create(hn_backend *be, hn_tk *tk, int in_nd, const int *in_dims);
void hn_model_destroy(hn_model *m);

void hn_model_add_linear(hn_model *m, int in_f, int out_f);
void hn_model_add_conv2d(hn_model *m, int in_ch, int out_ch, int fs, int padding);
void hn_model_add_maxpool2d(hn_model *m, int k);
void hn_model_add_relu(hn_model *m);
void hn_model_add_sigmoid(hn_model *m);
void hn_model_add_flatten(hn_model *m);

/* Infers every shape (an error names the layer whose input does not fit),
 * allocates, compiles and binds every kernel for max_batch. */
int hn_model_finish(hn_model *m, int max_batch, hn_err *err);

/* PyTorch's defaults: weights kaiming_uniform(a = sqrt(5)), i.e. U(-b, b) with
 * b = 1 / sqrt(fan_in), and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)); drawn
 * layer by layer, weight then bias, from seed. */
int hn_model_init(hn_model *m, uint64_t seed, hn_err *err);

/* Sets every parameter from host floats (n_params of them, in params' order). */
int hn_model_set_params(hn_model *m, const float *host, hn_err *err);

/* The forward pass of batch samples (<= max_batch) of m->x; the output is the
 * last layer's y. */
int hn_model_forward(hn_model *m, int batch, hn_err *err);
/* The backward pass from m->dout (filled by the loss); fills grads. */
int hn_model_backward(hn_model *m, int batch, hn_err *err);
/* The output of the last forward pass (batch, out_per). */
hn_dptr hn_model_output(const hn_model *m);

/* Adds the profiled time of the passes recorded since the last call (waits for
 * them); call after a synchronising point. */
int hn_model_collect_profile(hn_model *m, hn_err *err);

/* Writes every parameter to path: "HNWEIGHTS1\n", with has_norm a line
 * "input.normalise <mean> <std>\n", then per tensor a line "<name> <ndim> <d0>
 * ... \n" and its float32 data (little-endian). */
int hn_model_save(const hn_model *m, const char *path, hn_err *err);
/* Reads a file written by hn_model_save for a model of the same layers and
 * shapes (an error names the first tensor that differs); the normalisation
 * line, where the file has one, sets has_norm, norm_mean and norm_std. */
int hn_model_load(hn_model *m, const char *path, hn_err *err);

/* Writes, for the last forward and backward pass of batch samples, each layer's
 * input, parameters, output and the gradients as .npy files in dir
 * (NN_<name>.<tensor>.npy) and a manifest dir/layers.json. */
int hn_model_save_tensors(const hn_model *m, int batch, const char *dir, FILE *manifest, hn_err *err);

/* A short description, "conv2d(1->16, k3, p1)", of layer l. */
void hn_layer_describe(const hn_layer *l, char *buf, size_t size);

#endif
