/*
 * unroll_per_element: one thread per element of cols (see unroll_chapter.cu for
 * the family's menu): thread t of image b writes cols[b][row][j] with row = t /
 * npix and j = t % npix, so consecutive threads write consecutive addresses and
 * read one input row at consecutive columns (shifted by q).
 *
 *   harness run configs/im2col_unroll.json --variant unroll_per_element
 */
__global__ void unroll_per_element(const float *in, float *cols, int in_ch, int h, int w, int fs, int r, int oh,
                                   int ow, float pad) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    long long npix = (long long)oh * ow, rows = (long long)in_ch * fs * fs;
    if (t >= rows * npix) return;
    int row = (int)(t / npix), j = (int)(t % npix);
    int c = row / (fs * fs), p = row / fs % fs, q = row % fs;
    int yy = j / ow + p - r, xx = j % ow + q - r;
    const float *plane = in + ((size_t)b * in_ch + c) * h * w;
    cols[(size_t)b * rows * npix + t] = yy >= 0 && yy < h && xx >= 0 && xx < w ? plane[(size_t)yy * w + xx] : pad;
}
