/*
 * shared_decls.cu: the shapes of `extern __shared__` declarations the emulator
 * rewrites (tests/test_emu_compile.c): file scope inside a namespace, a
 * declaration spread over two lines with an alignment attribute, a template's
 * array of T, several kernels each with their own array; and a check that line
 * numbers survive the rewrite.
 */
#include <cuda_runtime.h>
#include <math_constants.h>

namespace ns {
extern __shared__ float ns_buf[];
}

__global__ void k_ns(float *out) {
    ns::ns_buf[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = ns::ns_buf[blockDim.x - 1 - threadIdx.x];
}

__global__ void k_two_lines(int *out) {
    extern __shared__
        __align__(16) unsigned char raw[];
    int *a = reinterpret_cast<int *>(raw);
    a[threadIdx.x] = (int)threadIdx.x * 2;
    __syncthreads();
    out[threadIdx.x] = a[(threadIdx.x + 1) % blockDim.x];
}

template <typename T>
__global__ void k_tmpl(T *out) {
    extern __shared__ T tbuf[];
    tbuf[threadIdx.x] = (T)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tbuf[0] + tbuf[threadIdx.x] + (T)(CUDART_PI_F > 3.0f);
}

__global__ void k_line(int *out) {
    out[0] = __LINE__; // @line
}
