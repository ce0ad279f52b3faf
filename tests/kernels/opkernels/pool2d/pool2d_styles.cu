/* pool2d in styles kernels/pool2d/ does not use (tests/configs/opkernels/pool2d.json):
 *   pool2d_plane_blocks  a 3D grid: (x tiles of ow, y tiles of oh, n * channels planes)
 *                        of 2D blocks; NCHW, NHWC and CHWN through one (plane, inner)
 *                        stride pair; max pooling writes the int32 argmax by torch's rule
 *                        (first maximum in row-major order, a NaN wins), avg its sum / k^2
 *   pool2d_plane_blocks_ge  planted: ties go to the last maximum (>= instead of >)
 *   harness run tests/configs/opkernels/pool2d.json --backend emu */

#include <math.h>

template <bool LAST_TIE>
__device__ void pool_body(const float *__restrict__ in, float *__restrict__ out, int *__restrict__ argmax, int n,
                          int channels, int h, int w, int k, int is_max, int layout) {
    const int oh = h / k, ow = w / k;
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    const int plane = blockIdx.z, b = plane / channels, c = plane % channels;
    if (i >= oh || j >= ow) return;
    /* element (b, c, y, x) lives at base + (y * w + x) * inner in every layout */
    long long base;
    int inner;
    if (layout == 0) base = (long long)plane * h * w, inner = 1;
    else if (layout == 1) base = (long long)b * h * w * channels + c, inner = channels;
    else base = (long long)c * h * w * n + b, inner = n;
    const long long obase = layout == 0 ? (long long)plane * oh * ow
                            : layout == 1 ? (long long)b * oh * ow * channels + c
                                          : (long long)c * oh * ow * n + b;
    const long long o = obase + (long long)(i * ow + j) * inner;
    if (is_max) {
        float m = -INFINITY;
        int at = i * k * w + j * k;
        for (int p = 0; p < k; p++)
            for (int q = 0; q < k; q++) {
                const int pos = (i * k + p) * w + j * k + q;
                const float v = in[base + (long long)pos * inner];
                if ((LAST_TIE ? v >= m : v > m) || isnan(v)) m = v, at = pos;
            }
        out[o] = m;
        argmax[o] = at;
    } else {
        float s = 0.0f;
        for (int p = 0; p < k; p++)
            for (int q = 0; q < k; q++) s += in[base + (long long)((i * k + p) * w + j * k + q) * inner];
        out[o] = s / (float)(k * k);
    }
}

__global__ void pool2d_plane_blocks(const float *__restrict__ in, float *__restrict__ out, int *__restrict__ argmax, int n,
                                    int channels, int h, int w, int k, int is_max, int layout) {
    pool_body<false>(in, out, argmax, n, channels, h, w, k, is_max, layout);
}
__global__ void pool2d_plane_blocks_ge(const float *__restrict__ in, float *__restrict__ out, int *__restrict__ argmax,
                                       int n, int channels, int h, int w, int k, int is_max, int layout) {
    pool_body<true>(in, out, argmax, n, channels, h, w, k, is_max, layout);
}
