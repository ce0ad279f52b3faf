/*
 * conv2d_im2col: the unroll kernel of PMPP chapter 16 (its Fig. 16.18), written for
 * the "same"-padded layout of this family. It feeds the cuBLAS baselines that every
 * conv2d sweep measures beside its variants: im2col, then one GEMM,
 *
 *   out (out_ch, h*w) = filter (out_ch, K) x cols (K, h*w),  K = in_ch * fs * fs.
 *
 *   conv2d_im2col<float>   columns for cublasSgemm
 *   conv2d_im2col<double>  like <float>, but the columns are converted to double
 *                          for cublasDgemm (the baseline of double accumulators)
 *   conv2d_f32_to_f64      converts the filter for cublasDgemm (once per case)
 *   conv2d_f64_to_f32      converts cublasDgemm's output into the float output
 *
 *   conv2d_add_bias        out[o][pixel] += bias[o] (cases with a bias)
 *
 * One thread per (input channel, output pixel) writes the fs*fs entries of that
 * pixel's column for its channel: row (c*fs + p)*fs + q, column j holds
 * X(c, y+p-r, x+q-r), `pad` outside the image, where output pixel j is (y, x) =
 * (j / ow, j % ow) and r the padding above and left (r = (fs-1)/2 and ow = w for
 * "same" convolutions). Adjacent threads take adjacent pixels, so the writes (and
 * most reads) are coalesced. Columns [p0, p0 + np) are built per launch, so a
 * large image can be unrolled in chunks.
 *
 * Not a variant of the sweep: the harness compiles it itself (the file is embedded
 * in the binary). The family's menu is in conv2d_pad.cu.
 */
template <typename T>
__global__ void conv2d_im2col(const float *in, T *cols, int h, int w, int in_channels,
                              int filter_size, float pad, int r, int ow, long long p0, int np) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)in_channels * np) return;
    int c = (int)(t / np);
    int j = (int)(t % np);
    long long pix = p0 + j;
    int y = (int)(pix / ow), x = (int)(pix % ow);
    const float *in_c = in + (size_t)c * h * w;
    T *col = cols + (size_t)c * filter_size * filter_size * np + j;
    for (int p = 0; p < filter_size; p++) {
        int yy = y + p - r;
        for (int q = 0; q < filter_size; q++) {
            int xx = x + q - r;
            float v = (yy >= 0 && yy < h && xx >= 0 && xx < w) ? in_c[(size_t)yy * w + xx] : pad;
            col[(size_t)(p * filter_size + q) * np] = (T)v;
        }
    }
}

__global__ void conv2d_f32_to_f64(const float *src, double *dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

__global__ void conv2d_f64_to_f32(const double *src, float *dst, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = (float)src[i];
}

__global__ void conv2d_add_bias(float *out, const float *bias, long long npix, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] += bias[i / npix];
}
