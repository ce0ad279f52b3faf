/* conv2d's gradients in styles kernels/conv2d_backward/ does not use
 * (tests/configs/opkernels/conv2d_backward_{data,filter,bias}.json):
 *   bwd_data_gs            din by a grid-stride loop over every element of the batch,
 *                          const __restrict__, __launch_bounds__(128)
 *   bwd_filter_atomic      dfilter: grid (fs*fs*in_ch, out_ch, SPLIT); block z of SPLIT
 *                          sums a slice of the n*oh*ow pixels, a shared tree, then one
 *                          atomicAdd per block into a zeroed dfilter ("zero")
 *   bwd_bias_partials      dbias in two kernels: a block per (channel, slice of pixels)
 *                          writes a partial sum into a scratch buffer, then
 *   bwd_bias_final         a warp per channel adds its SLICES partials with shuffles
 *   bwd_bias_partials_race planted: the shared tree without its __syncthreads (a race)
 *   harness run tests/configs/opkernels/conv2d_backward_filter.json --backend emu */

__global__ void __launch_bounds__(128)
bwd_data_gs(const float *__restrict__ dout, const float *__restrict__ filter, float *__restrict__ din, int n, int in_ch,
            int out_ch, int h, int w, int fs, int r, int oh, int ow) {
    const long long total = (long long)n * in_ch * h * w;
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (long long)gridDim.x * blockDim.x) {
        const int x = (int)(t % w), y = (int)(t / w % h), c = (int)(t / ((long long)w * h) % in_ch);
        const int b = (int)(t / ((long long)w * h * in_ch));
        float acc = 0.0f;
        for (int o = 0; o < out_ch; o++)
            for (int p = 0; p < fs; p++) {
                const int yo = y + r - p;
                if (yo < 0 || yo >= oh) continue;
                for (int q = 0; q < fs; q++) {
                    const int xo = x + r - q;
                    if (xo < 0 || xo >= ow) continue;
                    acc += dout[(((long long)b * out_ch + o) * oh + yo) * ow + xo] * filter[((o * in_ch + c) * fs + p) * fs + q];
                }
            }
        din[t] = acc;
    }
}

/* blockDim.x a power of two; dynamic shared memory: blockDim.x floats */
__global__ void bwd_filter_atomic(const float *__restrict__ in, const float *__restrict__ dout, float *dfilter, int n,
                                  int in_ch, int out_ch, int h, int w, int fs, int r, int oh, int ow, float pad) {
    extern __shared__ float part[];
    const int pq = blockIdx.x % (fs * fs), c = blockIdx.x / (fs * fs), o = blockIdx.y;
    const int p = pq / fs, q = pq % fs;
    const long long pixels = (long long)n * oh * ow;
    const long long per = (pixels + gridDim.z - 1) / gridDim.z;
    const long long lo = blockIdx.z * per, hi = min(pixels, lo + per);
    float acc = 0.0f;
    for (long long j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        const int x = (int)(j % ow), y = (int)(j / ow % oh), b = (int)(j / ((long long)ow * oh));
        const int iy = y + p - r, ix = x + q - r;
        const float v = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? in[(((long long)b * in_ch + c) * h + iy) * w + ix] : pad;
        acc += v * dout[(((long long)b * out_ch + o) * oh + y) * ow + x];
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(&dfilter[((o * in_ch + c) * fs + p) * fs + q], part[0]);
}

/* grid (out_ch, SLICES); blockDim.x == 64 */
template <bool SYNC>
__device__ void bias_partials(const float *__restrict__ dout, float *__restrict__ partials, int n, int out_ch, int plane) {
    __shared__ float part[64];
    const int o = blockIdx.x, slice = blockIdx.y, slices = gridDim.y;
    const long long total = (long long)n * plane;
    float acc = 0.0f;
    for (long long j = (long long)slice * blockDim.x + threadIdx.x; j < total; j += (long long)slices * blockDim.x) {
        const long long b = j / plane, e = j % plane;
        acc += dout[(b * out_ch + o) * plane + e];
    }
    part[threadIdx.x] = acc;
    if (SYNC) __syncthreads();
    for (int s = 32; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        if (SYNC) __syncthreads();
    }
    if (threadIdx.x == 0) partials[o * slices + slice] = part[0];
}

__global__ void bwd_bias_partials(const float *__restrict__ dout, float *__restrict__ partials, int n, int out_ch, int plane) {
    bias_partials<true>(dout, partials, n, out_ch, plane);
}
__global__ void bwd_bias_partials_race(const float *__restrict__ dout, float *__restrict__ partials, int n, int out_ch,
                                       int plane) {
    bias_partials<false>(dout, partials, n, out_ch, plane);
}

/* a warp per channel: blockDim.x == 32 * warps */
__global__ void bwd_bias_final(const float *__restrict__ partials, float *__restrict__ dbias, int out_ch, int slices) {
    const int o = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (o >= out_ch) return;
    float s = 0.0f;
    for (int i = lane; i < slices; i += 32) s += partials[o * slices + i];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    if (lane == 0) dbias[o] = s;
}
