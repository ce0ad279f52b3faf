// PyTorch-style elementwise kernels: a template over the scalar type, a 64-bit element
// count, a grid-stride loop, as ATen's simple CUDA kernels and most extension tutorials
// write them (the "custom C++/CUDA extension" tutorial's shape).
//   relu_kernel<scalar_t>     one element a step, int64_t numel
//   sigmoid_kernel<T = float> default template argument (config "sigmoid_kernel<>"), size_t n
//   relu_u32<T>               unsigned int n, uint32_t stride
//   relu_indexed<T, index_t>  the index type a template argument, as ATen's
//                             kernels take int32 or int64 indexing
// harness run tests/configs/authors/pytorch_relu.json --backend emu
#include <cstdint>
#include <cmath>
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void relu_kernel(const scalar_t* __restrict__ input,
                            scalar_t* __restrict__ output,
                            int64_t numel) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < numel;
       i += (int64_t)blockDim.x * gridDim.x) {
    const scalar_t v = input[i];
    output[i] = v > scalar_t(0) ? v : (v != v ? v : scalar_t(0));
  }
}

template <typename T = float>
__global__ void sigmoid_kernel(const T* x, T* y, std::size_t n) {
  std::size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = T(1) / (T(1) + exp(-x[i]));
  }
}

template <typename T>
__global__ void relu_u32(const T* x, T* y, unsigned int n) {
  const uint32_t stride = blockDim.x * gridDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = fmaxf(x[i], 0.0f);
  }
}

template <typename scalar_t, typename index_t>
__global__ void relu_indexed(const scalar_t* x, scalar_t* y, index_t n) {
  index_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = (x[i] > 0 || x[i] != x[i]) ? x[i] : scalar_t(0);
  }
}

template __global__ void relu_kernel<double>(const double*, double*, int64_t);
