/*
 * The im2col (unroll) family: a convolution's input rearranged as the columns of
 * one GEMM (PMPP chapter 16, Fig. 16.18), cols[b][(c*fs + p)*fs + q][y*ow + x] =
 * X[b][c][y + p - r][x + q - r], `pad` outside the image.
 *
 *   unroll_chapter       the chapter's mapping: one thread per (channel, output
 *                        pixel) writes the fs*fs entries of that pixel's column for
 *                        its channel; adjacent threads take adjacent pixels, so
 *                        reads stay coalesced within an output row (exercise 4)
 *   unroll_per_element   one thread per element of cols: adjacent threads write
 *                        adjacent addresses of one row of cols and read one input
 *                        row shifted by q, so writes and reads coalesce everywhere
 *   conv2d_im2col<float> the kernel of conv2d's cuBLAS baseline (the chapter's
 *                        mapping on one image), timed as a variant of its own
 *
 *   harness run configs/im2col_unroll.json           (exercise 4: time and GB/s)
 *   harness debug configs/im2col_unroll.json --kernel unroll_chapter
 *
 * Grid y is the image; r and (oh, ow) come from the padding (r = padding, or
 * (fs-1)/2 for "same").
 */
__global__ void unroll_chapter(const float *in, float *cols, int in_ch, int h, int w, int fs, int r, int oh,
                               int ow, float pad) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    int npix = oh * ow;
    if (t >= in_ch * npix) return;
    int c = t / npix;   // the channel this thread collects
    int j = t % npix;   // the output pixel: its column of cols
    int y = j / ow, x = j % ow;
    const float *plane = in + ((size_t)b * in_ch + c) * h * w;
    float *col = cols + (size_t)b * in_ch * fs * fs * npix + (size_t)c * fs * fs * npix + j;
    for (int p = 0; p < fs; p++) {
        int yy = y + p - r;
        for (int q = 0; q < fs; q++) {
            int xx = x + q - r;
            float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? plane[(size_t)yy * w + xx] : pad;
            col[(size_t)(p * fs + q) * npix] = v;
        }
    }
}
