/*
 * Two kernels of one file that share module state, as kernels of one .cu do under
 * the CUDA runtime: the first publishes the element count in a __device__
 * variable, the second reads it (and a __constant__ floor the config's
 * "constants" writes). On a GPU the harness loads one module per compiled file,
 * so the second launch sees what the first wrote.
 */
__constant__ float c_floor;
__device__ int g_count;

__global__ void publish_count(int n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) g_count = n;
}

__global__ void relu_counted(const float *x, float *y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < g_count; i += gridDim.x * blockDim.x)
        y[i] = x[i] > c_floor ? x[i] : c_floor;
}
