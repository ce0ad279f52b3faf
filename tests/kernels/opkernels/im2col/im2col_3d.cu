/* im2col in a style kernels/im2col/ does not use (tests/configs/opkernels/im2col.json):
 *   im2col_3d   a 3D grid of 2D blocks: x over output pixels, y over the rows of cols
 *               ((c, p, q) triples), z the image; consecutive threads write
 *               consecutive pixels of one row of cols
 *   harness run tests/configs/opkernels/im2col.json --backend emu */

__global__ void im2col_3d(const float *__restrict__ in, float *__restrict__ cols, int in_ch, int h, int w, int fs, int r,
                          int oh, int ow, float pad) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;  /* output pixel y * ow + x */
    const int row = blockIdx.y * blockDim.y + threadIdx.y; /* (c * fs + p) * fs + q */
    const int b = blockIdx.z;
    if (j >= oh * ow || row >= in_ch * fs * fs) return;
    const int q = row % fs, p = row / fs % fs, c = row / (fs * fs);
    const int iy = j / ow + p - r, ix = j % ow + q - r;
    const float v = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? in[(((long long)b * in_ch + c) * h + iy) * w + ix] : pad;
    cols[((long long)b * in_ch * fs * fs + row) * oh * ow + j] = v;
}
