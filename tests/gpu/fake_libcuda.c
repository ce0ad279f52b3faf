/*
 * fake_libcuda.c: a stand-in CUDA driver for tests/test_cuda_review.c, which
 * builds it (cc -shared) and points HARNESS_LIBCUDA at it, so the CUDA backend
 * (harness/cuda/backend_cuda.c) runs on a machine without a GPU.
 *
 * It exports what a driver of CUDA 12.0-12.7 exports (the versioned names cuda.h
 * asks for, but cuEventElapsedTime without its _v2 of 12.8, and no
 * cuFuncGetParamInfo of 12.4): one device, "device memory" in host memory,
 * kernels that do nothing but these, by name:
 *   fake_print(int n): prints n lines at the next synchronisation, as the
 *                      driver writes device printf to stdout;
 *   fake_fault:        fails its launch with CUDA_ERROR_ILLEGAL_ADDRESS.
 * One module variable, "fake_var" (64 bytes). An image starting "BAD" does not
 * load (CUDA_ERROR_NO_BINARY_FOR_GPU). fake_stats() tells the test how
 * many modules were loaded and unloaded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#undef cuEventElapsedTime /* the name before CUDA 12.8 */
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b);

static int loads, unloads, pending_lines;
unsigned char fake_var[64]; /* exported: the test reads it */
static const char *fn_names[] = {"fake_print", "fake_fault", "fake_other"};

void fake_stats(int *l, int *u) {
    *l = loads, *u = unloads;
}

CUresult cuInit(unsigned flags) {
    (void)flags;
    return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) {
    *v = 12020;
    return CUDA_SUCCESS;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS       ? "an illegal memory access was encountered"
         : r == CUDA_ERROR_NOT_FOUND           ? "named symbol not found"
         : r == CUDA_ERROR_NO_BINARY_FOR_GPU   ? "no kernel image is available for execution on the device"
                                               : NULL;
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS     ? "CUDA_ERROR_ILLEGAL_ADDRESS"
         : r == CUDA_ERROR_NOT_FOUND         ? "CUDA_ERROR_NOT_FOUND"
         : r == CUDA_ERROR_NO_BINARY_FOR_GPU ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
                                             : NULL;
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuDeviceGetCount(int *n) {
    *n = 1;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    *d = ordinal;
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
    (void)d;
    snprintf(name, (size_t)len, "Fake GPU");
    return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
    (void)d;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 227 * 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 132; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d) {
    (void)d;
    *bytes = (size_t)1 << 30;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    (void)d;
    *c = (CUcontext)(void *)&loads;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) {
    (void)d;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) {
    (void)c;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetLimit(CUlimit l, size_t v) {
    (void)l, (void)v;
    return CUDA_SUCCESS;
}
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
    (void)flags;
    *s = (CUstream)(void *)&unloads;
    return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
    (void)s;
    return CUDA_SUCCESS;
}
/* Device printf reaches stdout (through stdio, unflushed) at a synchronisation. */
static void flush_printf(void) {
    for (int i = 0; i < pending_lines; i++) printf("kernel line %d\n", i);
    pending_lines = 0;
}
CUresult cuStreamSynchronize(CUstream s) {
    (void)s;
    flush_printf();
    return CUDA_SUCCESS;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
    if (memcmp(image, "BAD", 3) == 0) return CUDA_ERROR_NO_BINARY_FOR_GPU; /* an image for another GPU */
    *m = (CUmodule)malloc(1); /* a handle of its own */
    loads++;
    return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) {
    free(m);
    unloads++;
    return CUDA_SUCCESS;
}
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
    (void)m;
    for (int i = 0; i < 3; i++)
        if (strcmp(name, fn_names[i]) == 0) {
            *f = (CUfunction)(void *)&fn_names[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
CUresult cuModuleGetGlobal(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
    (void)m;
    if (strcmp(name, "fake_var") != 0) return CUDA_ERROR_NOT_FOUND;
    *p = (CUdeviceptr)(uintptr_t)fake_var;
    *bytes = sizeof fake_var;
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    (void)f;
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
    (void)f, (void)a, (void)v;
    return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
    *p = (CUdeviceptr)(uintptr_t)calloc(1, bytes);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFree(CUdeviceptr p) {
    free((void *)(uintptr_t)p);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
    flush_printf(); /* a blocking copy flushes device printf too */
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
    flush_printf();
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    (void)s;
    memset((void *)(uintptr_t)dst, v, n);
    return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream s, void **params, void **extra) {
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)extra;
    const char *name = *(const char *const *)(void *)f;
    if (strcmp(name, "fake_fault") == 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
    if (strcmp(name, "fake_print") == 0) pending_lines += *(int *)params[0];
    return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent *e, unsigned flags) {
    (void)flags;
    *e = (CUevent)calloc(1, 8);
    return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
    free(e);
    return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
    (void)e, (void)s;
    return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e) {
    (void)e;
    flush_printf();
    return CUDA_SUCCESS;
}
CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
    (void)a, (void)b;
    *ms = 1.5f;
    return CUDA_SUCCESS;
}
