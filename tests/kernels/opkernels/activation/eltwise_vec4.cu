/* Element-wise activations in styles kernels/activation/ does not use (run by
 * tests/configs/opkernels/{relu,relu_backward,sigmoid,sigmoid_backward}.json):
 *   relu_vec4            float4 loads and stores over n / 4 quads, a scalar tail for the
 *                        last n % 4, __launch_bounds__ and const __restrict__ pointers
 *   relu_backward_vec4   the same for the gradient (three streams)
 *   relu_vec4_bug        planted: the tail is dropped (n % 4 elements never written)
 *   sigmoid_unroll<U>    U elements per thread, a block's U * blockDim.x elements
 *                        strided so a warp stays coalesced; U a template parameter
 *                        picked by the define UNROLL
 *   sigmoid_backward_2d  a 2D grid of 2D blocks over n viewed as rows of ROW_W
 *                        elements (odd launch geometry), the last row partial
 *   harness run tests/configs/opkernels/relu.json --backend emu */

__global__ void __launch_bounds__(256) relu_vec4(const float *__restrict__ x, float *__restrict__ y, int n) {
    const int quads = n / 4;
    const int stride = gridDim.x * blockDim.x;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float4 *y4 = reinterpret_cast<float4 *>(y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < quads; i += stride) {
        float4 v = x4[i];
        v.x = v.x <= 0.0f ? 0.0f : v.x;
        v.y = v.y <= 0.0f ? 0.0f : v.y;
        v.z = v.z <= 0.0f ? 0.0f : v.z;
        v.w = v.w <= 0.0f ? 0.0f : v.w;
        y4[i] = v;
    }
    /* the tail: at most 3 elements, taken by the first threads of the grid */
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n - 4 * quads) {
        const float v = x[4 * quads + t];
        y[4 * quads + t] = v <= 0.0f ? 0.0f : v;
    }
}

/* planted bug: forgets the tail */
__global__ void __launch_bounds__(256) relu_vec4_bug(const float *__restrict__ x, float *__restrict__ y, int n) {
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float4 *y4 = reinterpret_cast<float4 *>(y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n / 4; i += gridDim.x * blockDim.x) {
        float4 v = x4[i];
        v.x = fmaxf(v.x, 0.0f), v.y = fmaxf(v.y, 0.0f), v.z = fmaxf(v.z, 0.0f), v.w = fmaxf(v.w, 0.0f);
        y4[i] = v;
    }
}

__global__ void __launch_bounds__(256)
relu_backward_vec4(const float *__restrict__ x, const float *__restrict__ dy, float *__restrict__ dx, int n) {
    const int quads = n / 4;
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < quads; i += stride) {
        const float4 v = reinterpret_cast<const float4 *>(x)[i];
        const float4 g = reinterpret_cast<const float4 *>(dy)[i];
        float4 r;
        r.x = v.x > 0.0f ? g.x : 0.0f;
        r.y = v.y > 0.0f ? g.y : 0.0f;
        r.z = v.z > 0.0f ? g.z : 0.0f;
        r.w = v.w > 0.0f ? g.w : 0.0f;
        reinterpret_cast<float4 *>(dx)[i] = r;
    }
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n - 4 * quads) {
        const int i = 4 * quads + t;
        dx[i] = x[i] > 0.0f ? dy[i] : 0.0f;
    }
}

template <int U>
__device__ void sigmoid_unroll_body(const float *__restrict__ x, float *__restrict__ y, int n) {
    const long long base = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
    float v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long i = base + (long long)u * blockDim.x;
        v[u] = i < n ? x[i] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long i = base + (long long)u * blockDim.x;
        if (i < n) y[i] = 1.0f / (1.0f + expf(-v[u]));
    }
}

template <int U> __global__ void sigmoid_unroll(const float *__restrict__ x, float *__restrict__ y, int n) {
    sigmoid_unroll_body<U>(x, y, n);
}

#ifndef UNROLL
#define UNROLL 4
#endif
/* the instance the config names: sigmoid_unroll<UNROLL> */
template __global__ void sigmoid_unroll<UNROLL>(const float *__restrict__, float *__restrict__, int);

__global__ void sigmoid_backward_2d(const float *__restrict__ x, const float *__restrict__ dy, float *__restrict__ dx,
                                    int n, int row_w) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= row_w) return;
    const long long i = (long long)row * row_w + col;
    if (i >= n) return;
    const float s = 1.0f / (1.0f + expf(-x[i]));
    dx[i] = dy[i] * s * (1.0f - s);
}
