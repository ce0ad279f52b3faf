/* conv2d (NCHW, a batch, any padding, bias) in a style kernels/conv2d/ does not use
 * (tests/configs/opkernels/conv2d.json):
 *   conv2d_smem_filter      a 3D grid (x tiles, y tiles, n * out_ch) of 2D blocks; the
 *                           block's output channel's whole filter (in_ch * fs * fs floats)
 *                           in dynamic shared memory (extern __shared__, sized by the
 *                           config's shared_bytes expression), loaded by a block-stride loop
 *   conv2d_smem_filter_bug  planted: the padding is off by one (reads shifted a pixel)
 *   harness run tests/configs/opkernels/conv2d.json --backend emu
 *   harness debug tests/configs/opkernels/conv2d.json --kernel conv2d_smem_filter --block 0,0,1
 *     prints the chosen block's filter from shared memory (hn_kernel.h's helpers) */
#include "hn_kernel.h"

template <int SHIFT>
__device__ void conv_body(const float *__restrict__ in, const float *__restrict__ filter, const float *__restrict__ bias,
                          float *__restrict__ out, int in_ch, int out_ch, int h, int w, int fs, int r, int oh, int ow,
                          float pad) {
    extern __shared__ float f_s[]; /* (in_ch, fs, fs) of output channel o */
    const int o = blockIdx.z % out_ch, b = blockIdx.z / out_ch;
    const int taps = in_ch * fs * fs;
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    for (int t = tid; t < taps; t += blockDim.x * blockDim.y) f_s[t] = filter[(long long)o * taps + t];
    __syncthreads();
#ifdef DEBUG
    if (hn_debug_leader()) {
        printf("block (%d,%d,%d): image %d, output channel %d\n", blockIdx.x, blockIdx.y, blockIdx.z, b, o);
        hn_print_matrix("filter in shared memory", f_s, in_ch * fs, fs, fs);
    }
#endif
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= ow || y >= oh) return; /* after the only barrier */
    const int rr = r + SHIFT;
    float acc = bias[o];
    for (int c = 0; c < in_ch; c++) {
        const float *plane = in + ((long long)b * in_ch + c) * h * w;
        for (int p = 0; p < fs; p++) {
            const int iy = y + p - rr;
            for (int q = 0; q < fs; q++) {
                const int ix = x + q - rr;
                const float v = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? plane[iy * w + ix] : pad;
                acc += v * f_s[(c * fs + p) * fs + q];
            }
        }
    }
    out[(((long long)b * out_ch + o) * oh + y) * ow + x] = acc;
}

__global__ void conv2d_smem_filter(const float *__restrict__ in, const float *__restrict__ filter,
                                   const float *__restrict__ bias, float *__restrict__ out, int in_ch, int out_ch, int h,
                                   int w, int fs, int r, int oh, int ow, float pad) {
    conv_body<0>(in, filter, bias, out, in_ch, out_ch, h, w, fs, r, oh, ow, pad);
}

__global__ void conv2d_smem_filter_bug(const float *__restrict__ in, const float *__restrict__ filter,
                                       const float *__restrict__ bias, float *__restrict__ out, int in_ch, int out_ch,
                                       int h, int w, int fs, int r, int oh, int ow, float pad) {
    conv_body<1>(in, filter, bias, out, in_ch, out_ch, h, w, fs, r, oh, ow, pad);
}
