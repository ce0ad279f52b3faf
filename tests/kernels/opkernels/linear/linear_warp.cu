/* linear and linear_backward in styles kernels/linear/ does not use
 * (tests/configs/opkernels/linear.json, linear_backward.json):
 *   linear_warp_dot        a warp per y[b][o] (blockDim (32, WARPS)): lanes stride in_f,
 *                          a __shfl_down_sync tree, lane 0 adds the bias
 *   linear_bwd_dx_gs       dx = dy W by a 1D grid-stride loop over dx's elements
 *   linear_bwd_dw_atomic   dweight = dy^T x: grid z cuts the batch into chunks of CHUNK
 *                          rows, each thread adds its chunk's sum with atomicAdd into a
 *                          zeroed dweight (the config's "zero")
 *   linear_bwd_db_warp     dbias: a warp per column, lanes stride the batch, shuffles
 *   harness run tests/configs/opkernels/linear_backward.json --backend emu */

__global__ void linear_warp_dot(const float *__restrict__ x, const float *__restrict__ weight,
                                const float *__restrict__ bias, float *__restrict__ y, int batch, int in_f, int out_f) {
    const int o = blockIdx.x * blockDim.y + threadIdx.y;
    const int b = blockIdx.y;
    if (o >= out_f) return; /* whole warps leave: threadIdx.y is the warp */
    const float *xr = x + (long long)b * in_f, *wr = weight + (long long)o * in_f;
    float s = 0.0f;
    for (int i = threadIdx.x; i < in_f; i += 32) s += xr[i] * wr[i];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d);
    if (threadIdx.x == 0) y[(long long)b * out_f + o] = s + bias[o];
}

__global__ void linear_bwd_dx_gs(const float *__restrict__ dy, const float *__restrict__ weight, float *__restrict__ dx,
                                 int batch, int in_f, int out_f) {
    const long long total = (long long)batch * in_f;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        const int b = (int)(t / in_f), i = (int)(t % in_f);
        float s = 0.0f;
        for (int o = 0; o < out_f; o++) s += dy[(long long)b * out_f + o] * weight[(long long)o * in_f + i];
        dx[t] = s;
    }
}

__global__ void linear_bwd_dw_atomic(const float *__restrict__ x, const float *__restrict__ dy, float *dweight,
                                     int batch, int in_f, int out_f, int chunk) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int o = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= in_f || o >= out_f) return;
    const int b0 = blockIdx.z * chunk, b1 = min(batch, b0 + chunk);
    float s = 0.0f;
    for (int b = b0; b < b1; b++) s += dy[(long long)b * out_f + o] * x[(long long)b * in_f + i];
    atomicAdd(&dweight[(long long)o * in_f + i], s);
}

__global__ void linear_bwd_db_warp(const float *__restrict__ dy, float *__restrict__ dbias, int batch, int out_f) {
    const int o = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (o >= out_f) return;
    float s = 0.0f;
    for (int b = lane; b < batch; b += 32) s += dy[(long long)b * out_f + o];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    if (lane == 0) dbias[o] = s;
}
