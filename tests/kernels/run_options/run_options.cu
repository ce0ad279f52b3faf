// run_options.cu: conv2d kernels whose behaviour shows what `harness run` did, for
// tests/test_run_options.sh (tests/configs/run_options.json, stale.json). Each takes
// the conv2d arguments (in, out, filter, h, w, in_ch, out_ch, filter_size, pad).
//
//   conv_count   a correct convolution; thread (0,0,0) of block (0,0,0) prints one
//                line per launch, so --printf-all counts the launches of a row
//   conv_plain   a correct convolution, silent
//   conv_stale   correct on its first GOOD_LAUNCHES launches in the process, then
//                off by one everywhere: passes a check before timing and fails the
//                one after (or the first, when the warm-up alone is longer). Counts
//                launches in a __device__ variable; runs as ONE block (the block
//                reads the count, then its thread 0 advances it), so its config
//                must launch a single block.
#include <stdio.h>

#ifndef ACCUM_DTYPE
#define ACCUM_DTYPE float
#endif
#ifndef GOOD_LAUNCHES
#define GOOD_LAUNCHES 3
#endif

__device__ void conv_at(const float *in, float *out, const float *filter, int h, int w, int in_ch,
                        int out_ch, int fs, float pad, float bias) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z, r = (fs - 1) / 2;
    if (x >= w || y >= h || o >= out_ch) return;
    ACCUM_DTYPE acc = 0;
    for (int c = 0; c < in_ch; c++)
        for (int i = 0; i < fs; i++)
            for (int j = 0; j < fs; j++) {
                int yy = y + i - r, xx = x + j - r;
                float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? in[((size_t)c * h + yy) * w + xx] : pad;
                acc += v * filter[(((size_t)o * in_ch + c) * fs + i) * fs + j];
            }
    out[((size_t)o * h + y) * w + x] = (float)acc + bias;
}

#define CONV_ARGS                                                                                   \
    const float *in, float *out, const float *filter, int h, int w, int in_ch, int out_ch, int fs, \
        float pad

__global__ void conv_count(CONV_ARGS) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 && threadIdx.x == 0 && threadIdx.y == 0)
        printf("conv_count: launch\n");
    conv_at(in, out, filter, h, w, in_ch, out_ch, fs, pad, 0.0f);
}

__global__ void conv_plain(CONV_ARGS) {
    conv_at(in, out, filter, h, w, in_ch, out_ch, fs, pad, 0.0f);
}

__device__ unsigned stale_launches;

__global__ void conv_stale(CONV_ARGS) {
    __shared__ unsigned n;
    int first = threadIdx.x == 0 && threadIdx.y == 0;
    if (first) n = stale_launches;
    __syncthreads();
    conv_at(in, out, filter, h, w, in_ch, out_ch, fs, pad, n < GOOD_LAUNCHES ? 0.0f : 1.0f);
    __syncthreads();
    if (first) stale_launches = n + 1;
}
