/*
 * unroll_gemm: PMPP chapter 16's convolution layer as two kernels, launched one
 * after the other by one variant (config "launches"; tests/test_launches.sh):
 *
 *   unroll_chapter  the chapter's unroll (Fig. 16.18): a thread per input channel
 *                   and output pixel copies its K x K window into the columns
 *                   X_unroll[b][c K K + p K + q][pixel] (a scratch buffer);
 *   gemm_tiled      Y[b][m][pixel] = bias[m] + sum_k W[m][k] X_unroll[b][k][pixel],
 *                   16 x 16 tiles in shared memory, a grid z per image.
 *
 * "Valid" convolution (padding 0), NCHW, stride 1.
 */
#define TILE 16

extern "C" __global__ void unroll_chapter(const float *X, float *X_unroll, int C, int H, int W, int K) {
    const int H_out = H - K + 1, W_out = W - K + 1, P = H_out * W_out;
    const int t = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y;
    if (t >= C * P) return;
    const int c = t / P, s = t % P, h_out = s / W_out, w_out = s % W_out;
    const float *x = X + ((size_t)b * C + c) * H * W;
    float *u = X_unroll + (size_t)b * C * K * K * P;
    for (int p = 0; p < K; p++)
        for (int q = 0; q < K; q++) u[(size_t)(c * K * K + p * K + q) * P + s] = x[(h_out + p) * W + w_out + q];
}

extern "C" __global__ void gemm_tiled(const float *Wt, const float *X_unroll, const float *bias, float *Y, int M,
                                      int CKK, int P) {
    __shared__ float a[TILE][TILE], x[TILE][TILE];
    const int col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y, b = blockIdx.z;
    const float *xu = X_unroll + (size_t)b * CKK * P;
    float acc = 0.0f;
    for (int k0 = 0; k0 < CKK; k0 += TILE) {
        a[threadIdx.y][threadIdx.x] = row < M && k0 + threadIdx.x < CKK ? Wt[(size_t)row * CKK + k0 + threadIdx.x] : 0.0f;
        x[threadIdx.y][threadIdx.x] = k0 + threadIdx.y < CKK && col < P ? xu[(size_t)(k0 + threadIdx.y) * P + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += a[threadIdx.y][k] * x[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < P) Y[((size_t)b * M + row) * P + col] = acc + bias[row];
}
