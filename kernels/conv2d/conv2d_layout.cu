/*
 * conv2d_layout: one thread per output element, for any of the three memory
 * orders of PMPP chapter 16's exercise 2 (NCHW, NHWC, CHWN: the `layout` argument,
 * 0, 1, 2), a batch, any padding and a bias: the kernel the layout comparison runs
 * unchanged over the three orders, so only the memory order differs.
 *
 *   harness run configs/conv2d_layouts.json
 *   harness compare results/conv2d_layouts.csv --by layout
 *
 * Grid x covers the output pixels (ow * oh), y the output channels, z the images.
 * Adjacent threads take adjacent output pixels: in NCHW they read and write
 * adjacent addresses; in NHWC adjacent pixels are `channels` apart; in CHWN `n`
 * apart. The family's menu is in conv2d_pad.cu.
 */
__device__ inline long long conv2d_layout_at(int layout, int n, int ch, int h, int w, int b, int c, int y, int x) {
    if (layout == 1) return (((long long)b * h + y) * w + x) * ch + c;  // NHWC
    if (layout == 2) return (((long long)c * h + y) * w + x) * n + b;   // CHWN
    return (((long long)b * ch + c) * h + y) * w + x;                   // NCHW
}

__global__ void conv2d_layout(const float *in, float *out, const float *filter, const float *bias, int n, int in_ch,
                              int out_ch, int h, int w, int fs, int r, int oh, int ow, float pad, int layout) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int o = blockIdx.y, b = blockIdx.z;
    if (j >= oh * ow) return;
    int y = j / ow, x = j % ow;
    float acc = bias[o];
    for (int c = 0; c < in_ch; c++) {
        const float *f = filter + ((size_t)o * in_ch + c) * fs * fs;
        for (int p = 0; p < fs; p++) {
            int yy = y + p - r;
            for (int q = 0; q < fs; q++) {
                int xx = x + q - r;
                float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? in[conv2d_layout_at(layout, n, in_ch, h, w, b, c, yy, xx)]
                                                                 : pad;
                acc += v * f[p * fs + q];
            }
        }
    }
    out[conv2d_layout_at(layout, n, out_ch, oh, ow, b, o, y, x)] = acc;
}
