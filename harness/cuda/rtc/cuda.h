/* Harness stand-in for NVRTC <cuda.h>: CUDA_VERSION and CUdeviceptr; the toolkit's <cuda.h> does not compile. */
/* The toolkit's <cuda.h> declares the driver API's host functions, which NVRTC
 * rejects ("host functions are not allowed in JIT mode"). */
/* <cuda_runtime.h>, <cuda_runtime_api.h>, <device_launch_parameters.h> and
 * <device_functions.h> need no stand-in: the toolkit's compile under NVRTC as they
 * are (the last with nvcc's own "internal header" warning). */
#pragma once
#ifndef CUDA_VERSION
#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif
typedef unsigned long long CUdeviceptr;
