// Headers nvcc users include out of habit: the toolkit's compile under NVRTC as they
// are, <cuda.h> (host declarations NVRTC rejects) through the stand-in.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <device_functions.h> // the toolkit warns that it is internal, as nvcc does
#include <device_launch_parameters.h>

static_assert(CUDA_VERSION >= 12000 && CUDART_VERSION >= 12000, "");

__global__ void probe(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = (float)warpSize; }
