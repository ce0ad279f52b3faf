/*
 * cuda/cudnn.h: cuDNN, loaded at run time like the driver (backend_cuda.c), so
 * the binary has no link dependency on it: it starts, and every test passes,
 * where cuDNN is absent; the cuDNN baselines' rows are then `skipped` with the
 * reason this module gives.
 *
 * The library is libcudnn.so.9 (then libcudnn.so), or the file named by the
 * environment variable HARNESS_CUDNN. It is opened once per process; the entry
 * points of HN_CUDNN_SYMBOLS are resolved with dlsym into the table `hn_dnn`
 * (the cuDNN headers give the types and prototypes only). cuDNN 9 is required:
 * its legacy API (descriptors, cudnnConvolutionForward, cudnnPoolingForward ...)
 * is marked deprecated there but ships in every 9.x, and it is what the
 * baselines use.
 *
 * Reasons, as a baseline's rows carry them:
 *   "cuDNN not found (<dlerror>)"
 *   "cuDNN 8.9.7 found (<file>); the harness needs cuDNN 9"
 *   "<file> is not a usable cuDNN: it lacks cudnnX"
 *   "cuDNN could not create a handle: CUDNN_STATUS_NOT_INITIALIZED (cudaGetDeviceCount ...)"
 *
 * Handles: one per stream, shared by every baseline of a run and counted
 * (hn_cudnn_acquire / hn_cudnn_release); a handle issues its work on the cuda
 * backend's own stream, where the harness times it.
 *
 * Invariant: the functions of hn_dnn are non-NULL exactly when hn_cudnn_load()
 * has returned 0 (the optional ones, marked below, may stay NULL).
 *
 * A new cuDNN baseline (docs/operators.md, "Baselines"): open = hn_cudnn_acquire;
 * descriptors with hn_cudnn_tensor4d and hn_cudnn_conv_desc; prepare chooses the
 * algorithm (cudnnFind..., hn_cudnn_math_rank keeping TF32 out) and allocates
 * the workspace; issue calls hn_dnn.cudnnX on the handle, checked with DNN_CHECK.
 */
#ifndef HN_CUDA_CUDNN_H
#define HN_CUDA_CUDNN_H

#include <stddef.h>

#include <cudnn.h>

#include "backend.h"
#include "util.h"

/* Every entry point the harness uses: X(name, required). An optional one may be
 * missing from the library (its field is then NULL). */
#define HN_CUDNN_SYMBOLS(X)                                                                  \
    X(cudnnGetVersion, 1)                                                                    \
    X(cudnnGetErrorString, 1)                                                                \
    X(cudnnGetLastErrorString, 0)                                                            \
    X(cudnnCreate, 1)                                                                        \
    X(cudnnDestroy, 1)                                                                       \
    X(cudnnSetStream, 1)                                                                     \
    /* tensors */                                                                            \
    X(cudnnCreateTensorDescriptor, 1)                                                        \
    X(cudnnDestroyTensorDescriptor, 1)                                                       \
    X(cudnnSetTensor4dDescriptor, 1)                                                         \
    X(cudnnSetTensor4dDescriptorEx, 1)                                                       \
    X(cudnnGetTensor4dDescriptor, 1)                                                         \
    X(cudnnAddTensor, 1)                                                                     \
    X(cudnnTransformTensor, 1)                                                               \
    X(cudnnCreateOpTensorDescriptor, 1)                                                      \
    X(cudnnDestroyOpTensorDescriptor, 1)                                                     \
    X(cudnnSetOpTensorDescriptor, 1)                                                         \
    X(cudnnOpTensor, 1)                                                                      \
    /* convolution: forward, backward data, backward filter */                               \
    X(cudnnCreateFilterDescriptor, 1)                                                        \
    X(cudnnDestroyFilterDescriptor, 1)                                                       \
    X(cudnnSetFilter4dDescriptor, 1)                                                         \
    X(cudnnCreateConvolutionDescriptor, 1)                                                   \
    X(cudnnDestroyConvolutionDescriptor, 1)                                                  \
    X(cudnnSetConvolution2dDescriptor, 1)                                                    \
    X(cudnnSetConvolutionMathType, 1)                                                        \
    X(cudnnGetConvolutionMathType, 1)                                                        \
    X(cudnnGetConvolution2dForwardOutputDim, 1)                                              \
    X(cudnnFindConvolutionForwardAlgorithm, 1)                                               \
    X(cudnnGetConvolutionForwardWorkspaceSize, 1)                                            \
    X(cudnnConvolutionForward, 1)                                                            \
    X(cudnnFindConvolutionBackwardDataAlgorithm, 1)                                          \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize, 1)                                       \
    X(cudnnConvolutionBackwardData, 1)                                                       \
    X(cudnnFindConvolutionBackwardFilterAlgorithm, 1)                                        \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize, 1)                                     \
    X(cudnnConvolutionBackwardFilter, 1)                                                     \
    X(cudnnConvolutionBackwardBias, 1)                                                       \
    /* pooling */                                                                            \
    X(cudnnCreatePoolingDescriptor, 1)                                                       \
    X(cudnnDestroyPoolingDescriptor, 1)                                                      \
    X(cudnnSetPooling2dDescriptor, 1)                                                        \
    X(cudnnGetPooling2dForwardOutputDim, 1)                                                  \
    X(cudnnPoolingForward, 1)                                                                \
    X(cudnnPoolingBackward, 1)

/* The resolved entry points, called as hn_dnn.cudnnConvolutionForward(...). */
typedef struct {
#define HN_CUDNN_FIELD(name, required) __typeof__(&name) name;
    HN_CUDNN_SYMBOLS(HN_CUDNN_FIELD)
#undef HN_CUDNN_FIELD
} hn_cudnn_api;

extern hn_cudnn_api hn_dnn;

/* Opens cuDNN (once per process: later calls give the first call's answer).
 * Returns 0 with every required entry point in hn_dnn, or -1 with the reason. */
int hn_cudnn_load(hn_err *err);
/* The file that was opened ("libcudnn.so.9"), or "" before a successful load. */
const char *hn_cudnn_library(void);
/* Forgets the library (dlclose, hn_dnn cleared) so the next hn_cudnn_load opens
 * it again, honouring HARNESS_CUDNN anew. For tests; no handle may be alive. */
void hn_cudnn_unload(void);

/* The entry points' names, in HN_CUDNN_SYMBOLS order, and their number; the
 * address hn_dnn holds for the i-th (NULL before loading or when optional and
 * missing) and whether it is required. */
extern const char *const hn_cudnn_symbol_names[];
int hn_cudnn_symbol_count(void);
void *hn_cudnn_symbol(int i);
int hn_cudnn_symbol_required(int i);

/* A handle whose work goes to `stream` (a CUstream; NULL: the legacy default
 * stream), not shared. -1 with "cuDNN could not create a handle: ..." (cuDNN
 * not loaded, no GPU, ...). */
int hn_cudnn_handle_create(void *stream, cudnnHandle_t *out, hn_err *err);

/* The handle of backend be's stream, created on first use and shared (counted)
 * by every caller with that stream; each acquire is paired with a release. -1
 * with the reason when cuDNN is absent, unusable, or be is not the cuda
 * backend. */
int hn_cudnn_acquire(hn_backend *be, cudnnHandle_t *out, hn_err *err);
void hn_cudnn_release(cudnnHandle_t h);

/* Writes "CUDNN_STATUS_X (cuDNN's last error message)" into err, prefixed by
 * `call`, and returns -1. */
int hn_cudnn_fail(cudnnStatus_t s, const char *call, hn_err *err);

/* Checks a cuDNN call; on failure returns -1 from the calling function with the
 * call's text and cuDNN's messages in err. */
#define DNN_CHECK(err, call)                                                     \
    do {                                                                         \
        cudnnStatus_t dnn_status_ = (call);                                      \
        if (dnn_status_ != CUDNN_STATUS_SUCCESS) return hn_cudnn_fail(dnn_status_, #call, (err)); \
    } while (0)

/* The harness's three layouts of a logical (n, c, h, w) tensor. */
enum { HN_CUDNN_NCHW = 0, HN_CUDNN_NHWC = 1, HN_CUDNN_CHWN = 2 };

/* Describes a (n, c, h, w) tensor of type t stored in `layout` order: NCHW and
 * NHWC by cuDNN's tensor formats, CHWN by explicit strides (which not every
 * cuDNN operation accepts: convolution does not, pooling does). */
int hn_cudnn_tensor4d(cudnnTensorDescriptor_t d, int layout, cudnnDataType_t t, int n, int c, int h, int w,
                      hn_err *err);

/* A 2-D cross-correlation descriptor (stride 1, dilation 1, `pad` pixels on
 * every side) computing in type t, with the math type that keeps FP32 exact:
 * CUDNN_FMA_MATH for float, since CUDNN_DEFAULT_MATH lets cuDNN use TF32 tensor
 * cores on Ampere and newer (cudnnMathType_t in the cuDNN API reference); double
 * has no TF32 and keeps CUDNN_DEFAULT_MATH. *out is created here; destroy it
 * with hn_dnn.cudnnDestroyConvolutionDescriptor. */
int hn_cudnn_conv_desc(cudnnConvolutionDescriptor_t *out, int pad, cudnnDataType_t t, hn_err *err);

/* How well a cudnnFind... result of math type m suits data of type t, for
 * choosing among the results (sorted fastest first; take the first of the
 * highest rank): 2 it keeps the precision (float: CUDNN_FMA_MATH; double: any),
 * 1 acceptable (float: CUDNN_DEFAULT_MATH, in case cuDNN labels results so; the
 * run still uses the descriptor's CUDNN_FMA_MATH, which is what decides), 0 not
 * to be used (float: a tensor-op math type, timed with TF32). */
int hn_cudnn_math_rank(cudnnDataType_t t, cudnnMathType_t m);

/* "FMA", "DEFAULT", "TENSOR_OP", "TENSOR_OP_ALLOW_CONVERSION". */
const char *hn_cudnn_math_name(cudnnMathType_t m);
/* Algorithm names without the enum's prefix: "IMPLICIT_PRECOMP_GEMM", ... */
const char *hn_cudnn_fwd_algo_name(cudnnConvolutionFwdAlgo_t a);
const char *hn_cudnn_bwd_data_algo_name(cudnnConvolutionBwdDataAlgo_t a);
const char *hn_cudnn_bwd_filter_algo_name(cudnnConvolutionBwdFilterAlgo_t a);

#endif
