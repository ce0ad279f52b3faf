/*
 * backend_cuda.c: the CUDA backend, on the driver API loaded at run time.
 *
 * libcuda.so.1 is opened with dlopen and every entry point resolved with dlsym
 * under its versioned name (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on;
 * stringifying the macro gives the right symbol), so the same binary starts on a
 * machine with no driver and reports that cleanly.
 *
 * One backend = the device's primary context (shared with cuBLAS), one stream of
 * our own on which every launch, copy, event and L2 flush is issued.
 *
 * Invariant: after a sticky error (an illegal address inside a kernel, say) the
 * context is unusable; `broken` is set and every later call fails with the first
 * error's message instead of a confusing new one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "backend.h"
#include "cuda/backend_cuda.h"

#define HN_STR2(x) #x
#define HN_STR(x) HN_STR2(x)
#define CU_FN(name) __typeof__(&name) name

static struct {
    void *lib;
    int tried;
    char why[512];
    CU_FN(cuInit);
    CU_FN(cuDriverGetVersion);
    CU_FN(cuGetErrorString);
    CU_FN(cuGetErrorName);
    CU_FN(cuDeviceGetCount);
    CU_FN(cuDeviceGet);
    CU_FN(cuDeviceGetName);
    CU_FN(cuDeviceGetAttribute);
    CU_FN(cuDeviceTotalMem);
    CU_FN(cuDevicePrimaryCtxRetain);
    CU_FN(cuDevicePrimaryCtxRelease);
    CU_FN(cuCtxSetCurrent);
    CU_FN(cuCtxSetLimit);
    CU_FN(cuStreamCreate);
    CU_FN(cuStreamDestroy);
    CU_FN(cuStreamSynchronize);
    CU_FN(cuModuleLoadData);
    CU_FN(cuModuleUnload);
    CU_FN(cuModuleGetFunction);
    CU_FN(cuModuleGetGlobal);
    CU_FN(cuFuncGetAttribute);
    CU_FN(cuFuncSetAttribute);
    CU_FN(cuFuncGetParamInfo); /* CUDA 12.4+; optional */
    CU_FN(cuMemAlloc);
    CU_FN(cuMemFree);
    CU_FN(cuMemcpyHtoD);
    CU_FN(cuMemcpyDtoH);
    CU_FN(cuMemsetD8Async);
    CU_FN(cuLaunchKernel);
    CU_FN(cuEventCreate);
    CU_FN(cuEventDestroy);
    CU_FN(cuEventRecord);
    CU_FN(cuEventSynchronize);
    CU_FN(cuEventElapsedTime);
} cu;

#define LOAD(name, required)                                                               \
    do {                                                                                   \
        *(void **)(&cu.name) = dlsym(cu.lib, HN_STR(name));                                \
        if (!cu.name && (required)) {                                                      \
            snprintf(cu.why, sizeof cu.why, "the CUDA driver lacks %s (driver too old?)",  \
                     HN_STR(name));                                                        \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

/* As LOAD, but a driver without the versioned name (cuda.h maps cuEventElapsedTime
 * to cuEventElapsedTime_v2 from CUDA 12.8 on; a 12.x driver before r570 exports
 * only the first version) gets the older entry point of the same signature. */
#define LOAD_OR(name, older)                                                               \
    do {                                                                                   \
        *(void **)(&cu.name) = dlsym(cu.lib, HN_STR(name));                                \
        if (!cu.name) *(void **)(&cu.name) = dlsym(cu.lib, older);                         \
        if (!cu.name) {                                                                    \
            snprintf(cu.why, sizeof cu.why, "the CUDA driver lacks %s (driver too old?)",  \
                     HN_STR(name));                                                        \
            return -1;                                                                     \
        }                                                                                  \
    } while (0)

static int load_symbols(void) {
    LOAD(cuInit, 1);
    LOAD(cuDriverGetVersion, 1);
    LOAD(cuGetErrorString, 1);
    LOAD(cuGetErrorName, 1);
    LOAD(cuDeviceGetCount, 1);
    LOAD(cuDeviceGet, 1);
    LOAD(cuDeviceGetName, 1);
    LOAD(cuDeviceGetAttribute, 1);
    LOAD(cuDeviceTotalMem, 1);
    LOAD(cuDevicePrimaryCtxRetain, 1);
    LOAD(cuDevicePrimaryCtxRelease, 1);
    LOAD(cuCtxSetCurrent, 1);
    LOAD(cuCtxSetLimit, 1);
    LOAD(cuStreamCreate, 1);
    LOAD(cuStreamDestroy, 1);
    LOAD(cuStreamSynchronize, 1);
    LOAD(cuModuleLoadData, 1);
    LOAD(cuModuleUnload, 1);
    LOAD(cuModuleGetFunction, 1);
    LOAD(cuModuleGetGlobal, 0);
    LOAD(cuFuncGetAttribute, 1);
    LOAD(cuFuncSetAttribute, 1);
    LOAD(cuFuncGetParamInfo, 0);
    LOAD(cuMemAlloc, 1);
    LOAD(cuMemFree, 1);
    LOAD(cuMemcpyHtoD, 1);
    LOAD(cuMemcpyDtoH, 1);
    LOAD(cuMemsetD8Async, 1);
    LOAD(cuLaunchKernel, 1);
    LOAD(cuEventCreate, 1);
    LOAD(cuEventDestroy, 1);
    LOAD(cuEventRecord, 1);
    LOAD(cuEventSynchronize, 1);
    LOAD_OR(cuEventElapsedTime, "cuEventElapsedTime");
    return 0;
}

/* Opens the driver once; 0 if usable. */
static int driver_open(void) {
    if (cu.tried) return cu.lib ? 0 : -1;
    cu.tried = 1;
    const char *name = getenv("HARNESS_LIBCUDA");
    cu.lib = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu.lib) {
        snprintf(cu.why, sizeof cu.why, "no CUDA driver (%s)", dlerror());
        return -1;
    }
    if (load_symbols() != 0) {
        dlclose(cu.lib);
        cu.lib = NULL;
        return -1;
    }
    CUresult r = cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *s = NULL;
        cu.cuGetErrorString(r, &s);
        snprintf(cu.why, sizeof cu.why, "the CUDA driver did not initialise: %s", s ? s : "?");
        cu.lib = NULL; /* keep the library loaded; it is unusable */
        return -1;
    }
    return 0;
}

int hn_cuda_available(char *why, size_t why_size) {
    if (driver_open() != 0) {
        snprintf(why, why_size, "%s", cu.why);
        return 0;
    }
    int n = 0;
    if (cu.cuDeviceGetCount(&n) != CUDA_SUCCESS || n == 0) {
        snprintf(why, why_size, "the CUDA driver found no device");
        return 0;
    }
    return 1;
}

int hn_cuda_device_count(void) {
    int n = 0;
    if (driver_open() != 0 || cu.cuDeviceGetCount(&n) != CUDA_SUCCESS) return 0;
    return n;
}

int hn_cuda_driver_version(char *buf, size_t size) {
    int v = 0;
    if (driver_open() != 0 || cu.cuDriverGetVersion(&v) != CUDA_SUCCESS) {
        snprintf(buf, size, "none");
        return -1;
    }
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
    return 0;
}

/* ---------------------------------------------------------------------- */

typedef struct {
    hn_backend base;
    CUdevice dev;
    CUcontext ctx;
    CUstream stream;
    hn_device_info info;
    CUdeviceptr l2buf;
    size_t l2size;
    int broken;
    char broken_msg[sizeof(hn_err)];
    hn_kernel *probe;       /* the clock probe, compiled on first use */
    CUdeviceptr probe_out;  /* (cycles, nanoseconds) */
    int probe_failed;
    volatile double *busy;  /* hn_backend_opts.busy_since, or NULL */
    /* printf_limit: while cap_fd >= 0, a limit is set: saved_stdout is the real
     * stdout, and fd 1 is the memory file cap_fd from a launch to the next
     * synchronisation (`redirected`); cap_lines of cap_max went through so far */
    int cap_fd, saved_stdout, redirected;
    long cap_max, cap_lines, cap_dropped;
    /* the loaded modules, one per compiled image (by its cache key), shared by
     * the kernels of that image as the CUDA runtime shares a file's module: a
     * variant's launches see the same __device__ and __constant__ variables */
    struct cuda_module {
        char key[33];
        size_t size;
        CUmodule mod;
        int refs;
    } *mods;
    int n_mods;
} cuda_backend;

/* Work went to the stream: the device is busy from now, unless it already was. */
static void mark_busy(cuda_backend *b) {
    if (b->busy && *b->busy == 0) *b->busy = hn_now();
}

/* Device printf reaches stdout when the stream synchronises. While a limit is
 * set, that output lands in a memory file; after each synchronisation it is
 * passed on to the real stdout up to the limit, the rest counted, and a new
 * window (a "launch") begins. fd 1 is the memory file only from a launch to
 * that synchronisation: what the harness prints itself in between (the note
 * on the lines held back, a row) goes straight out, neither counted nor held
 * back with the kernels' lines. */
static void capture_begin(cuda_backend *b) {
    if (b->cap_fd < 0 || b->redirected) return;
    fflush(stdout); /* the harness's own text, still buffered, is not the kernel's */
    if (dup2(b->cap_fd, 1) >= 0) b->redirected = 1;
}

/* fd 1 the real stdout again (kernel output so far stays in the memory file). */
static void capture_end(cuda_backend *b) {
    fflush(stdout);
    if (b->redirected && dup2(b->saved_stdout, 1) >= 0) b->redirected = 0;
}

static void drain_printf(cuda_backend *b) {
    if (b->cap_fd < 0) return;
    capture_end(b);
    off_t n = lseek(b->cap_fd, 0, SEEK_END);
    if (n > 0) {
        lseek(b->cap_fd, 0, SEEK_SET);
        char buf[65536];
        ssize_t k;
        while ((k = read(b->cap_fd, buf, sizeof buf)) > 0) {
            ssize_t keep = 0;
            for (; keep < k && b->cap_lines < b->cap_max; keep++) b->cap_lines += buf[keep] == '\n';
            for (ssize_t i = keep; i < k; i++) b->cap_dropped += buf[i] == '\n';
            if (keep > 0 && write(b->saved_stdout, buf, (size_t)keep) < 0) break;
        }
        if (ftruncate(b->cap_fd, 0) != 0) {
        }
        lseek(b->cap_fd, 0, SEEK_SET);
    }
    b->cap_lines = 0;
}

/* A synchronising call returned: nothing is left in flight. */
static void mark_idle(cuda_backend *b) {
    if (b->busy) *b->busy = 0;
    drain_printf(b);
}

struct hn_kernel {
    CUmodule mod;
    CUfunction fn;
    char *name;
    int max_threads;      /* given its registers */
    int static_shared;
    size_t dyn_optin_set; /* dynamic shared size opted in so far */
};

struct hn_event {
    CUevent ev;
};

int hn_cuda_error_sticky(int code) {
    switch (code) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    /* by number: not in every CUDA 12 header the harness may be built with */
    case 226: /* CUDA_ERROR_CONTAINED */
    case 721: /* CUDA_ERROR_TENSOR_MEMORY_LEAK */
    case 810: /* CUDA_ERROR_MPS_CLIENT_TERMINATED */
    case 911: /* CUDA_ERROR_EXTERNAL_DEVICE */
        return 1;
    default: return 0;
    }
}

static int cu_fail(cuda_backend *b, CUresult r, const char *call, const char *file, int line,
                   hn_err *err) {
    const char *name = NULL, *desc = NULL;
    if (b) capture_end(b); /* what the caller prints of this error reaches stdout, past the printf limit */
    cu.cuGetErrorName(r, &name);
    cu.cuGetErrorString(r, &desc);
    hn_errf(err, "%s (%s) in %s at %s:%d", desc ? desc : "unknown error", name ? name : "?", call,
            file, line);
    /* Errors that leave the context unusable. */
    if (b && hn_cuda_error_sticky(r)) {
        if (!b->broken) snprintf(b->broken_msg, sizeof b->broken_msg, "%s", err ? err->msg : desc);
        b->broken = 1;
        return hn_err_kind(err, r == CUDA_ERROR_LAUNCH_TIMEOUT ? HN_ERR_TIMEOUT : HN_ERR_FAULT);
    }
    return -1;
}

#define CU_CHECK(b, call, err)                                                        \
    do {                                                                              \
        CUresult _r = (call);                                                         \
        if (_r != CUDA_SUCCESS) return cu_fail((b), _r, #call, __FILE__, __LINE__, (err)); \
    } while (0)

static int check_usable(cuda_backend *b, hn_err *err) {
    if (!b->broken) return 0;
    hn_errf(err, "the CUDA context is unusable after an earlier fault: %s", b->broken_msg);
    return hn_err_kind(err, HN_ERR_FAULT);
}

static int attr(cuda_backend *b, CUdevice_attribute a) {
    int v = 0;
    if (cu.cuDeviceGetAttribute(&v, a, b->dev) != CUDA_SUCCESS) return 0;
    return v;
}

static void cuda_kernel_free(hn_backend *base, hn_kernel *k);

static int cuda_printf_limit(hn_backend *base, long max_lines, long *dropped, hn_err *err);

static void cuda_destroy(hn_backend *base) {
    cuda_backend *b = (cuda_backend *)base;
    if (b->cap_fd >= 0) cuda_printf_limit(base, -1, NULL, NULL); /* stdout back as it was */
    if (b->ctx) {
        cu.cuCtxSetCurrent(b->ctx);
        if (b->probe) cuda_kernel_free(base, b->probe);
        if (b->probe_out) cu.cuMemFree(b->probe_out);
        if (b->l2buf) cu.cuMemFree(b->l2buf);
        if (b->stream) cu.cuStreamDestroy(b->stream);
        cu.cuDevicePrimaryCtxRelease(b->dev);
    }
    free(b->mods);
    free(b);
}

static void cuda_device_info(hn_backend *base, hn_device_info *info) {
    *info = ((cuda_backend *)base)->info;
}

/* The module of img, loaded on first use (its key names the image: every
 * input of the compile), one reference more. */
static int module_get(cuda_backend *b, const hn_module_image *img, CUmodule *out, hn_err *err) {
    for (int i = 0; img->key[0] && i < b->n_mods; i++)
        if (strcmp(b->mods[i].key, img->key) == 0 && b->mods[i].size == img->image_size) {
            b->mods[i].refs++;
            *out = b->mods[i].mod;
            return 0;
        }
    CUresult r = cu.cuModuleLoadData(out, img->image);
    if (r != CUDA_SUCCESS) return cu_fail(b, r, "cuModuleLoadData", __FILE__, __LINE__, err);
    b->mods = xrealloc(b->mods, sizeof *b->mods * (size_t)(b->n_mods + 1));
    struct cuda_module *m = &b->mods[b->n_mods++];
    memcpy(m->key, img->key, sizeof m->key);
    m->size = img->image_size;
    m->mod = *out;
    m->refs = 1;
    return 0;
}

/* One reference less to mod; the last unloads it. */
static void module_put(cuda_backend *b, CUmodule mod) {
    for (int i = 0; i < b->n_mods; i++)
        if (b->mods[i].mod == mod) {
            if (--b->mods[i].refs > 0) return;
            b->mods[i] = b->mods[--b->n_mods];
            break;
        }
    cu.cuModuleUnload(mod);
}

static int cuda_kernel_load(hn_backend *base, const hn_module_image *img, int index,
                            hn_kernel **out, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    *out = NULL;
    if (check_usable(b, err) != 0) return -1;
    if (img->target != HN_TARGET_CUDA || !img->image)
        return hn_errf(err, "not a CUBIN image (compiled for the emulator?)");
    hn_kernel *k = xcalloc(1, sizeof *k);
    if (module_get(b, img, &k->mod, err) != 0) {
        free(k);
        /* the usual causes: an image built for another device, or by an NVRTC
         * newer than the driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION and kin) */
        return hn_err_prefix(err, "loading the CUBIN (this device is %s with driver %s; NVRTC %s: "
                                  "built for another architecture, or by a toolkit newer than the driver?)",
                             b->info.arch, b->info.driver_version, hn_nvrtc_version());
    }
    CUresult r = cu.cuModuleGetFunction(&k->fn, k->mod, img->lowered[index]);
    if (r != CUDA_SUCCESS) {
        module_put(b, k->mod);
        free(k);
        cu_fail(b, r, "cuModuleGetFunction", __FILE__, __LINE__, err);
        return hn_err_prefix(err, "kernel %s", img->lowered[index]);
    }
    k->name = xstrdup(img->lowered[index]);
    cu.cuFuncGetAttribute(&k->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k->fn);
    cu.cuFuncGetAttribute(&k->static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k->fn);
    *out = k;
    return 0;
}

static void cuda_kernel_free(hn_backend *base, hn_kernel *k) {
    if (!k) return;
    module_put((cuda_backend *)base, k->mod);
    free(k->name);
    free(k);
}

static int cuda_kernel_params(hn_backend *base, hn_kernel *k, hn_param_info *params,
                              int max_params, int *n_params, hn_err *err) {
    (void)base;
    (void)err;
    *n_params = -1;
    if (!cu.cuFuncGetParamInfo) return 0;
    int n = 0;
    for (;; n++) {
        size_t offset = 0, size = 0;
        if (cu.cuFuncGetParamInfo(k->fn, (size_t)n, &offset, &size) != CUDA_SUCCESS) break;
        if (n < max_params) params[n] = (hn_param_info){'?', (int)size};
    }
    *n_params = n;
    return 0;
}

static int cuda_alloc(hn_backend *base, size_t bytes, hn_dptr *out, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (check_usable(b, err) != 0) return -1;
    CUdeviceptr p = 0;
    CU_CHECK(b, cu.cuMemAlloc(&p, bytes ? bytes : 1), err);
    *out = (hn_dptr)p;
    return 0;
}

static void cuda_free(hn_backend *base, hn_dptr p) {
    (void)base;
    if (p) cu.cuMemFree((CUdeviceptr)p);
}

static int cuda_upload(hn_backend *base, hn_dptr dst, const void *src, size_t bytes, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (check_usable(b, err) != 0) return -1;
    mark_busy(b);
    CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    CU_CHECK(b, cu.cuMemcpyHtoD((CUdeviceptr)dst, src, bytes), err);
    mark_idle(b);
    return 0;
}

static int cuda_symbol_write(hn_backend *base, hn_kernel *k, const char *lowered, const void *src, size_t bytes,
                             size_t *size, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    *size = 0;
    if (check_usable(b, err) != 0) return -1;
    if (!cu.cuModuleGetGlobal) return hn_errf(err, "the CUDA driver lacks cuModuleGetGlobal");
    CUdeviceptr at = 0;
    CU_CHECK(b, cu.cuModuleGetGlobal(&at, size, k->mod, lowered), err);
    if (bytes > *size) return hn_errf(err, "%zu bytes given for a variable of %zu bytes", bytes, *size);
    mark_busy(b);
    CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    if (bytes) CU_CHECK(b, cu.cuMemcpyHtoD(at, src, bytes), err);
    if (bytes < *size) {
        CU_CHECK(b, cu.cuMemsetD8Async(at + bytes, 0, *size - bytes, b->stream), err);
        CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    }
    mark_idle(b);
    return 0;
}

static int cuda_download(hn_backend *base, void *dst, hn_dptr src, size_t bytes, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (check_usable(b, err) != 0) return -1;
    mark_busy(b);
    CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    CU_CHECK(b, cu.cuMemcpyDtoH(dst, (CUdeviceptr)src, bytes), err);
    mark_idle(b);
    return 0;
}

static int cuda_fill(hn_backend *base, hn_dptr dst, unsigned char byte, size_t bytes, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (check_usable(b, err) != 0) return -1;
    mark_busy(b);
    CU_CHECK(b, cu.cuMemsetD8Async((CUdeviceptr)dst, byte, bytes, b->stream), err);
    return 0;
}

static int cuda_launch(hn_backend *base, hn_kernel *k, const hn_launch_dims *d, void **args,
                       hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    const hn_device_info *in = &b->info;
    if (check_usable(b, err) != 0) return -1;
    for (int i = 0; i < 3; i++) {
        if (d->block[i] < 1 || d->grid[i] < 1)
            return hn_errf(err, "%s dimension %c is %u (must be at least 1)", d->block[i] < 1 ? "block" : "grid",
                           "xyz"[i], d->block[i] < 1 ? d->block[i] : d->grid[i]);
        if ((long long)d->block[i] > in->max_block_dim[i])
            return hn_errf(err, "block %c = %u exceeds the device's limit of %d", "xyz"[i], d->block[i],
                           in->max_block_dim[i]);
        if ((long long)d->grid[i] > in->max_grid_dim[i])
            return hn_errf(err, "grid %c = %u exceeds the device's limit of %d", "xyz"[i], d->grid[i],
                           in->max_grid_dim[i]);
    }
    long long threads = (long long)d->block[0] * d->block[1] * d->block[2];
    if (threads > in->max_threads_per_block)
        return hn_errf(err, "block %ux%ux%u = %lld threads exceeds the device's limit of %d",
                       d->block[0], d->block[1], d->block[2], threads, in->max_threads_per_block);
    if (k->max_threads > 0 && threads > k->max_threads)
        return hn_errf(err, "block of %lld threads exceeds this kernel's limit of %d (its "
                            "__launch_bounds__ or its register use allow no more)",
                       threads, k->max_threads);
    size_t total_shared = d->shared_bytes + (size_t)k->static_shared;
    if (total_shared > in->shared_per_block_optin)
        return hn_errf(err, "shared memory %zu bytes (%zu dynamic + %d static) exceeds the device's "
                            "limit of %zu per block",
                       total_shared, d->shared_bytes, k->static_shared, in->shared_per_block_optin);
    if (total_shared > in->shared_per_block && d->shared_bytes > k->dyn_optin_set) {
        CU_CHECK(b, cu.cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)d->shared_bytes),
                 err);
        k->dyn_optin_set = d->shared_bytes;
    }
    mark_busy(b);
    capture_begin(b);
    CU_CHECK(b, cu.cuLaunchKernel(k->fn, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                                  d->block[2], (unsigned)d->shared_bytes, b->stream, args, NULL),
             err);
    return 0;
}

static int cuda_sync(hn_backend *base, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (check_usable(b, err) != 0) return -1;
    CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    mark_idle(b);
    return 0;
}

static int cuda_printf_limit(hn_backend *base, long max_lines, long *dropped, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (!b->broken) cu.cuStreamSynchronize(b->stream);
    drain_printf(b);
    if (dropped) *dropped = b->cap_dropped;
    b->cap_dropped = 0;
    b->cap_max = max_lines;
    fflush(stdout);
    if (max_lines < 0 && b->cap_fd >= 0) {
        close(b->saved_stdout); /* drain_printf gave fd 1 back */
        close(b->cap_fd);
        b->cap_fd = b->saved_stdout = -1;
    } else if (max_lines >= 0 && b->cap_fd < 0) {
        int fd = memfd_create("harness-printf", MFD_CLOEXEC);
        int saved = fd >= 0 ? dup(1) : -1;
        if (fd < 0 || saved < 0) {
            if (fd >= 0) close(fd);
            if (saved >= 0) close(saved);
            return hn_errf(err, "cannot capture kernel printf output");
        }
        b->cap_fd = fd;
        b->saved_stdout = saved;
    }
    return 0;
}

static int cuda_event_create(hn_backend *base, hn_event **out, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    hn_event *e = xcalloc(1, sizeof *e);
    CUresult r = cu.cuEventCreate(&e->ev, CU_EVENT_DEFAULT);
    if (r != CUDA_SUCCESS) {
        free(e);
        return cu_fail(b, r, "cuEventCreate", __FILE__, __LINE__, err);
    }
    *out = e;
    return 0;
}

static void cuda_event_destroy(hn_backend *base, hn_event *e) {
    (void)base;
    if (!e) return;
    cu.cuEventDestroy(e->ev);
    free(e);
}

static int cuda_event_record(hn_backend *base, hn_event *e, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    capture_begin(b); /* here, not between this (a start) event and the launch it times */
    CU_CHECK(b, cu.cuEventRecord(e->ev, b->stream), err);
    return 0;
}

static int cuda_event_elapsed(hn_backend *base, hn_event *start, hn_event *stop, float *ms,
                              hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    CU_CHECK(b, cu.cuEventSynchronize(stop->ev), err);
    mark_idle(b);
    CU_CHECK(b, cu.cuEventElapsedTime(ms, start->ev, stop->ev), err);
    return 0;
}

static int cuda_flush_l2(hn_backend *base, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    if (!b->l2size) return 0;
    if (!b->l2buf) CU_CHECK(b, cu.cuMemAlloc(&b->l2buf, b->l2size), err);
    static unsigned char flip;
    mark_busy(b);
    CU_CHECK(b, cu.cuMemsetD8Async(b->l2buf, ++flip, b->l2size, b->stream), err);
    return 0;
}

/* The clock probe: one thread spins for `cycles` SM cycles and records how many
 * nanoseconds of %globaltimer passed; cycles / ns is the SM clock. The SM clock is
 * shared by the chip's SMs, so one thread on one SM reads it for all. */
static const char PROBE_SRC[] =
    "__global__ void hn_clock_probe(unsigned long long *out, long long cycles) {\n"
    "    unsigned long long t0, t1;\n"
    "    long long c0 = clock64();\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    long long c1 = c0;\n"
    "    while (c1 - c0 < cycles) c1 = clock64();\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t1));\n"
    "    out[0] = (unsigned long long)(c1 - c0);\n"
    "    out[1] = t1 - t0;\n"
    "}\n";

static int cuda_sm_clock(hn_backend *base, double *mhz, hn_err *err) {
    cuda_backend *b = (cuda_backend *)base;
    *mhz = -1;
    if (b->probe_failed) return hn_errf(err, "the clock probe is unavailable");
    if (!b->probe) {
        const char *names[] = {"hn_clock_probe"};
        hn_compile_req req = {.src_path = "hn_clock_probe.cu", .source = PROBE_SRC, .kernels = names,
                              .n_kernels = 1, .arch = b->info.arch};
        hn_module_image img;
        b->probe_failed = 1;
        if (hn_compile_cuda(&req, &img, NULL, err) != 0) return -1;
        int rc = cuda_kernel_load(base, &img, 0, &b->probe, err);
        hn_module_image_free(&img);
        if (rc != 0) return -1;
        CU_CHECK(b, cu.cuMemAlloc(&b->probe_out, 16), err);
        b->probe_failed = 0;
    }
    /* About 100 us at 2 GHz: long against %globaltimer's resolution (~1 us). */
    long long cycles = 200000;
    void *args[] = {&b->probe_out, &cycles};
    mark_busy(b);
    CU_CHECK(b, cu.cuLaunchKernel(b->probe->fn, 1, 1, 1, 1, 1, 1, 0, b->stream, args, NULL), err);
    unsigned long long out[2];
    CU_CHECK(b, cu.cuStreamSynchronize(b->stream), err);
    mark_idle(b);
    CU_CHECK(b, cu.cuMemcpyDtoH(out, b->probe_out, sizeof out), err);
    if (out[1] == 0) return hn_errf(err, "the clock probe measured no time");
    *mhz = (double)out[0] / (double)out[1] * 1e3;
    return 0;
}

void *hn_backend_cuda_stream(hn_backend *base) {
    if (!base || strcmp(base->ops->name, "cuda") != 0) return NULL;
    return ((cuda_backend *)base)->stream;
}

static const hn_backend_ops CUDA_OPS = {
    .name = "cuda",
    .target = HN_TARGET_CUDA,
    .destroy = cuda_destroy,
    .device_info = cuda_device_info,
    .kernel_load = cuda_kernel_load,
    .kernel_free = cuda_kernel_free,
    .kernel_params = cuda_kernel_params,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .symbol_write = cuda_symbol_write,
    .download = cuda_download,
    .fill = cuda_fill,
    .launch = cuda_launch,
    .sync = cuda_sync,
    .printf_limit = cuda_printf_limit,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed = cuda_event_elapsed,
    .flush_l2 = cuda_flush_l2,
    .sm_clock = cuda_sm_clock,
};

int hn_backend_cuda_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err) {
    *out = NULL;
    char why[512];
    if (!hn_cuda_available(why, sizeof why)) return hn_errf(err, "%s", why);
    int n = 0;
    cu.cuDeviceGetCount(&n);
    int ordinal = opts ? opts->device : 0;
    if (ordinal < 0 || ordinal >= n)
        return hn_errf(err, "CUDA device %d does not exist (%d found)", ordinal, n);
    cuda_backend *b = xcalloc(1, sizeof *b);
    b->base.ops = &CUDA_OPS;
    b->busy = opts ? opts->busy_since : NULL;
    b->cap_fd = b->saved_stdout = -1;
    hn_backend *base = &b->base;
    CUresult r = cu.cuDeviceGet(&b->dev, ordinal);
    if (r == CUDA_SUCCESS) r = cu.cuDevicePrimaryCtxRetain(&b->ctx, b->dev);
    if (r != CUDA_SUCCESS) {
        cu_fail(NULL, r, "creating the context", __FILE__, __LINE__, err);
        free(b);
        return -1;
    }
    r = cu.cuCtxSetCurrent(b->ctx);
    if (r == CUDA_SUCCESS && opts && opts->printf_fifo)
        r = cu.cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, opts->printf_fifo);
    if (r == CUDA_SUCCESS) r = cu.cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        cu_fail(NULL, r, "setting up the context", __FILE__, __LINE__, err);
        cuda_destroy(base);
        return -1;
    }
    hn_device_info *in = &b->info;
    cu.cuDeviceGetName(in->name, sizeof in->name, b->dev);
    in->cc_major = attr(b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    in->cc_minor = attr(b, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    snprintf(in->arch, sizeof in->arch, "sm_%d%d", in->cc_major, in->cc_minor);
    in->sm_count = attr(b, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    in->warp_size = attr(b, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    in->max_threads_per_block = attr(b, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    in->max_block_dim[0] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
    in->max_block_dim[1] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    in->max_block_dim[2] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    in->max_grid_dim[0] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
    in->max_grid_dim[1] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    in->max_grid_dim[2] = attr(b, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    in->shared_per_block = (size_t)attr(b, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    in->shared_per_block_optin = (size_t)attr(b, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (in->shared_per_block_optin < in->shared_per_block) in->shared_per_block_optin = in->shared_per_block;
    size_t mem = 0;
    cu.cuDeviceTotalMem(&mem, b->dev);
    in->global_mem = mem;
    in->l2_bytes = (size_t)attr(b, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    in->sm_clock_khz = attr(b, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    in->mem_clock_khz = attr(b, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    in->mem_bus_width = attr(b, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    hn_cuda_driver_version(in->driver_version, sizeof in->driver_version);
    /* Flush with twice the L2 size: some parts keep lines across a single pass. */
    b->l2size = in->l2_bytes * 2;
    *out = base;
    return 0;
}
