/* pool2d_backward in a style kernels/pool2d_backward/ does not use
 * (tests/configs/opkernels/pool2d_backward.json):
 *   pool2d_bwd_block_plane  a block per (image, channel) plane, its threads striding the
 *                           plane's h * w input elements (a block-stride loop): each
 *                           element finds its window (none past oh * k or ow * k: 0) and
 *                           takes dout where the argmax names it (max) or dout / k^2 (avg);
 *                           any layout
 *   harness run tests/configs/opkernels/pool2d_backward.json --backend emu */

__global__ void __launch_bounds__(128)
pool2d_bwd_block_plane(const int *__restrict__ argmax, const float *__restrict__ dout, float *__restrict__ din, int n,
                       int channels, int h, int w, int k, int is_max, int layout) {
    const int plane = blockIdx.x, b = plane / channels, c = plane % channels;
    const int oh = h / k, ow = w / k;
    long long base, obase;
    int inner;
    if (layout == 0) base = (long long)plane * h * w, obase = (long long)plane * oh * ow, inner = 1;
    else if (layout == 1)
        base = (long long)b * h * w * channels + c, obase = (long long)b * oh * ow * channels + c, inner = channels;
    else base = (long long)c * h * w * n + b, obase = (long long)c * oh * ow * n + b, inner = n;
    for (int e = threadIdx.x; e < h * w; e += blockDim.x) {
        const int y = e / w, x = e % w, i = y / k, j = x / k;
        float g = 0.0f;
        if (i < oh && j < ow) {
            const long long o = obase + (long long)(i * ow + j) * inner;
            g = is_max ? (argmax[o] == e ? dout[o] : 0.0f) : dout[o] / (float)(k * k);
        }
        din[base + (long long)e * inner] = g;
    }
}
