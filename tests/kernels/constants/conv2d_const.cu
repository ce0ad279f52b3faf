/*
 * conv2d with the filter in constant memory, as PMPP's chapter 7 writes it: the
 * host copies the filter into a __constant__ array with cudaMemcpyToSymbol and
 * the kernel reads it from there; the image sizes and the padding value are
 * module variables too. The config's "constants" does the host's copies.
 *
 * F_c holds MAX_FILTER floats (a define), enough for out_ch * in_ch * fs * fs.
 */
#ifndef MAX_FILTER
#define MAX_FILTER 4096
#endif

__constant__ float F_c[MAX_FILTER];
__constant__ int c_h, c_w;

namespace cfg {
__constant__ float pad_value;
}

__global__ void conv2d_const(const float *in, float *out, int in_ch, int out_ch, int fs) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z;
    int r = (fs - 1) / 2;
    if (x >= c_w || y >= c_h) return;
    float acc = 0.0f;
    for (int c = 0; c < in_ch; c++)
        for (int p = 0; p < fs; p++)
            for (int q = 0; q < fs; q++) {
                int yy = y + p - r, xx = x + q - r;
                float v = (yy >= 0 && yy < c_h && xx >= 0 && xx < c_w) ? in[(c * c_h + yy) * c_w + xx] : cfg::pad_value;
                acc += v * F_c[((o * in_ch + c) * fs + p) * fs + q];
            }
    out[(o * c_h + y) * c_w + x] = acc;
}
