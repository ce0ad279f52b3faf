/*
 * cuda/cudnn.c: cuDNN loaded with dlopen, its entry points resolved with dlsym,
 * and the shared per-stream handles (see cudnn.h).
 *
 * cuDNN 9's libcudnn.so.9 is a small shim that exports the whole API and loads
 * its sub-libraries (libcudnn_ops, libcudnn_cnn, ...) from its own folder on
 * first use, so one dlopen is enough. It links no CUDA library: it loads and its
 * version can be read on a machine without a GPU; cudnnCreate is what needs one
 * (without: CUDNN_STATUS_NOT_INITIALIZED, "cudaGetDeviceCount(&count) !=
 * cudaSuccess").
 */
#define _GNU_SOURCE
#include "cuda/cudnn.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hn_cudnn_api hn_dnn;

#define HN_CUDNN_NAME(name, required) #name,
const char *const hn_cudnn_symbol_names[] = {HN_CUDNN_SYMBOLS(HN_CUDNN_NAME) NULL};
#undef HN_CUDNN_NAME

#define HN_CUDNN_REQ(name, required) required,
static const int REQUIRED[] = {HN_CUDNN_SYMBOLS(HN_CUDNN_REQ) 0};
#undef HN_CUDNN_REQ

/* The fields of hn_dnn in symbol order (each a function pointer). */
static void **slot(int i) {
    static const size_t offs[] = {
#define HN_CUDNN_OFF(name, required) offsetof(hn_cudnn_api, name),
        HN_CUDNN_SYMBOLS(HN_CUDNN_OFF)
#undef HN_CUDNN_OFF
    };
    return (void **)((char *)&hn_dnn + offs[i]);
}

int hn_cudnn_symbol_count(void) {
    return (int)(sizeof hn_cudnn_symbol_names / sizeof hn_cudnn_symbol_names[0]) - 1;
}

void *hn_cudnn_symbol(int i) {
    return i >= 0 && i < hn_cudnn_symbol_count() ? *slot(i) : NULL;
}

int hn_cudnn_symbol_required(int i) {
    return i >= 0 && i < hn_cudnn_symbol_count() ? REQUIRED[i] : 0;
}

/* ---------------------------------------------------------------------- */
/* the library */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int tried, ok;
    void *lib;
    char file[256];
    char why[768];
} lib;

/* cuDNN 9 encodes its version as major * 10000 + minor * 100 + patch, cuDNN 8
 * and older as major * 1000 + minor * 100 + patch. */
static void decode_version(size_t v, int *major, int *minor, int *patch) {
    if (v >= 90000) {
        *major = (int)(v / 10000), *minor = (int)(v / 100 % 100), *patch = (int)(v % 100);
    } else {
        *major = (int)(v / 1000), *minor = (int)(v / 100 % 10), *patch = (int)(v % 100);
    }
}

static int open_library(void) {
    const char *env = getenv("HARNESS_CUDNN");
    const char *names[2] = {"libcudnn.so.9", "libcudnn.so"};
    int n_names = 2;
    if (env && *env) names[0] = env, n_names = 1;
    char first[512] = "";
    for (int i = 0; i < n_names && !lib.lib; i++) {
        lib.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib.lib) snprintf(lib.file, sizeof lib.file, "%s", names[i]);
        else if (i == 0) snprintf(first, sizeof first, "%s", dlerror());
    }
    if (!lib.lib) {
        snprintf(lib.why, sizeof lib.why, "cuDNN not found (%s%s)", first,
                 env && *env ? "; HARNESS_CUDNN names it" : "; HARNESS_CUDNN=/path/to/libcudnn.so.9 points at one");
        return -1;
    }
    /* The version first, so a cuDNN 8 is named as such rather than by the first
     * symbol it lacks. */
    *(void **)&hn_dnn.cudnnGetVersion = dlsym(lib.lib, "cudnnGetVersion");
    if (!hn_dnn.cudnnGetVersion) {
        snprintf(lib.why, sizeof lib.why, "%s is not a usable cuDNN: it lacks cudnnGetVersion", lib.file);
        goto fail;
    }
    int major, minor, patch;
    decode_version(hn_dnn.cudnnGetVersion(), &major, &minor, &patch);
    if (major != 9) {
        snprintf(lib.why, sizeof lib.why, "cuDNN %d.%d.%d found (%s); the harness needs cuDNN 9", major, minor, patch,
                 lib.file);
        goto fail;
    }
    for (int i = 0; i < hn_cudnn_symbol_count(); i++) {
        *slot(i) = dlsym(lib.lib, hn_cudnn_symbol_names[i]);
        if (!*slot(i) && REQUIRED[i]) {
            snprintf(lib.why, sizeof lib.why, "%s is not a usable cuDNN: it lacks %s (cuDNN %d.%d.%d)", lib.file,
                     hn_cudnn_symbol_names[i], major, minor, patch);
            goto fail;
        }
    }
    return 0;
fail:
    dlclose(lib.lib);
    lib.lib = NULL;
    lib.file[0] = '\0';
    memset(&hn_dnn, 0, sizeof hn_dnn);
    return -1;
}

int hn_cudnn_load(hn_err *err) {
    pthread_mutex_lock(&lock);
    if (!lib.tried) {
        lib.tried = 1;
        lib.ok = open_library() == 0;
    }
    int ok = lib.ok;
    pthread_mutex_unlock(&lock);
    if (!ok) return hn_errf(err, "%s", lib.why);
    return 0;
}

const char *hn_cudnn_library(void) {
    return lib.ok ? lib.file : "";
}

void hn_cudnn_unload(void) {
    pthread_mutex_lock(&lock);
    if (lib.lib) dlclose(lib.lib);
    memset(&lib, 0, sizeof lib);
    memset(&hn_dnn, 0, sizeof hn_dnn);
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------------- */
/* errors */

/* "CUDNN_STATUS_X (what cuDNN last said)", on one line. */
static void describe(cudnnStatus_t s, char *buf, size_t size) {
    const char *name = hn_dnn.cudnnGetErrorString ? hn_dnn.cudnnGetErrorString(s) : NULL;
    char last[512] = "";
    if (hn_dnn.cudnnGetLastErrorString) hn_dnn.cudnnGetLastErrorString(last, sizeof last);
    for (char *p = last; *p; p++)
        if (*p == '\n' || *p == '\r') *p = ' ';
    size_t n = strlen(last);
    while (n > 0 && last[n - 1] == ' ') last[--n] = '\0';
    if (name) snprintf(buf, size, "%s%s%s%s", name, *last ? " (" : "", last, *last ? ")" : "");
    else snprintf(buf, size, "cuDNN status %d", (int)s);
}

int hn_cudnn_fail(cudnnStatus_t s, const char *call, hn_err *err) {
    char why[768];
    describe(s, why, sizeof why);
    return hn_errf(err, "%s: %s", call, why);
}

/* ---------------------------------------------------------------------- */
/* handles */

int hn_cudnn_handle_create(void *stream, cudnnHandle_t *out, hn_err *err) {
    *out = NULL;
    if (hn_cudnn_load(err) != 0) return -1;
    cudnnHandle_t h = NULL;
    cudnnStatus_t s = hn_dnn.cudnnCreate(&h);
    if (s == CUDNN_STATUS_SUCCESS && stream) s = hn_dnn.cudnnSetStream(h, (cudaStream_t)stream);
    if (s != CUDNN_STATUS_SUCCESS) {
        char why[768];
        describe(s, why, sizeof why);
        if (h) hn_dnn.cudnnDestroy(h);
        return hn_errf(err, "cuDNN could not create a handle: %s", why);
    }
    *out = h;
    return 0;
}

/* The shared handles: one per stream, counted. */
#define MAX_HANDLES 8
static struct {
    void *stream;
    cudnnHandle_t h;
    int refs;
} handles[MAX_HANDLES];

int hn_cudnn_acquire(hn_backend *be, cudnnHandle_t *out, hn_err *err) {
    *out = NULL;
    void *stream = hn_backend_cuda_stream(be);
    if (!stream) return hn_errf(err, "cuDNN runs on the cuda backend only");
    if (hn_cudnn_load(err) != 0) return -1;
    int rc = 0;
    pthread_mutex_lock(&lock);
    int free_at = -1;
    for (int i = 0; i < MAX_HANDLES && !*out; i++) {
        if (handles[i].refs > 0 && handles[i].stream == stream) {
            handles[i].refs++;
            *out = handles[i].h;
        } else if (handles[i].refs == 0 && free_at < 0) {
            free_at = i;
        }
    }
    if (!*out) {
        if (free_at < 0) rc = hn_errf(err, "cuDNN: more than %d streams with a handle", MAX_HANDLES);
        else if ((rc = hn_cudnn_handle_create(stream, out, err)) == 0)
            handles[free_at].stream = stream, handles[free_at].h = *out, handles[free_at].refs = 1;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void hn_cudnn_release(cudnnHandle_t h) {
    if (!h) return;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_HANDLES; i++) {
        if (handles[i].refs == 0 || handles[i].h != h) continue;
        if (--handles[i].refs == 0) {
            hn_dnn.cudnnDestroy(h);
            handles[i].h = NULL;
            handles[i].stream = NULL;
        }
        break;
    }
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------------- */
/* descriptors */

int hn_cudnn_tensor4d(cudnnTensorDescriptor_t d, int layout, cudnnDataType_t t, int n, int c, int h, int w,
                      hn_err *err) {
    switch (layout) {
    case HN_CUDNN_NCHW: DNN_CHECK(err, hn_dnn.cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, t, n, c, h, w)); break;
    case HN_CUDNN_NHWC: DNN_CHECK(err, hn_dnn.cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NHWC, t, n, c, h, w)); break;
    case HN_CUDNN_CHWN: {
        /* element (b, ch, y, x) at ((ch * h + y) * w + x) * n + b; every stride
         * fits an int, as the whole tensor has fewer than 2^31 elements */
        int w_stride = n, h_stride = w * n, c_stride = h * w * n;
        DNN_CHECK(err, hn_dnn.cudnnSetTensor4dDescriptorEx(d, t, n, c, h, w, 1, c_stride, h_stride, w_stride));
        break;
    }
    default: return hn_errf(err, "cuDNN: unknown layout %d", layout);
    }
    return 0;
}

int hn_cudnn_conv_desc(cudnnConvolutionDescriptor_t *out, int pad, cudnnDataType_t t, hn_err *err) {
    *out = NULL;
    cudnnConvolutionDescriptor_t c = NULL;
    DNN_CHECK(err, hn_dnn.cudnnCreateConvolutionDescriptor(&c));
    cudnnStatus_t s = hn_dnn.cudnnSetConvolution2dDescriptor(c, pad, pad, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, t);
    const char *call = "cudnnSetConvolution2dDescriptor";
    if (s == CUDNN_STATUS_SUCCESS) {
        s = hn_dnn.cudnnSetConvolutionMathType(c, t == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH);
        call = "cudnnSetConvolutionMathType";
    }
    if (s != CUDNN_STATUS_SUCCESS) {
        hn_dnn.cudnnDestroyConvolutionDescriptor(c);
        return hn_cudnn_fail(s, call, err);
    }
    *out = c;
    return 0;
}

int hn_cudnn_math_rank(cudnnDataType_t t, cudnnMathType_t m) {
    if (t != CUDNN_DATA_FLOAT) return 2;
    return m == CUDNN_FMA_MATH ? 2 : m == CUDNN_DEFAULT_MATH ? 1 : 0;
}

/* ---------------------------------------------------------------------- */
/* names */

const char *hn_cudnn_math_name(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "DEFAULT";
    case CUDNN_TENSOR_OP_MATH: return "TENSOR_OP";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "TENSOR_OP_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH: return "FMA";
    default: return "?";
    }
}

const char *hn_cudnn_fwd_algo_name(cudnnConvolutionFwdAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
    }
}

const char *hn_cudnn_bwd_data_algo_name(cudnnConvolutionBwdDataAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "?";
    }
}

const char *hn_cudnn_bwd_filter_algo_name(cudnnConvolutionBwdFilterAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "ALGO_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "ALGO_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "ALGO_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "FFT_TILING";
    default: return "?";
    }
}
