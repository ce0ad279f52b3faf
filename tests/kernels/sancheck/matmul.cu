/*
 * matmul.cu: y = x W^T + b (op linear) as a tiled GEMM, correct and with one planted
 * bug each, for `harness check` (tests/configs/sancheck/matmul.json,
 * tests/test_sancheck.sh). A line a finding must name carries `expect: CLASS KERNEL`;
 * a kernel without marks must be silent.
 *
 *   mm_ok            the classic two-barrier tiled GEMM, edges zero-filled
 *   mm_double_buffer two tiles in flight and ONE barrier per step: the next tile
 *                    is written to the other buffer, so no write-after-read
 *   mm_transpose     W's tile is stored transposed (wt[k][c]) into a padded tile
 *                    and read along rows: the transpose's bank-conflict-free layout
 *   mm_regtile       each thread computes two outputs of a row (acc[2] in
 *                    registers): block (TILE / 2, TILE)
 *   mm_regtile_le    mm_regtile's output loop runs `j <= 2`: past the local acc[2],
 *                    and onto the next thread's first output, which both write (a
 *                    race on global memory, the row's status; the index past acc[2]
 *                    is in the report)
 *   mm_no_sync_raw   no barrier between storing the tile and reading it
 *   mm_no_sync_war   no barrier at the end of the step: the next tile overwrites
 *                    this one while slower warps still read it
 *   mm_tail_le       the k guard is `k <= in_f`: the last row reads one float
 *                    past the end of x
 *   mm_shared_le     the inner loop runs `kk <= TILE`: row TILE-1 reads one float
 *                    past the static tile
 *   mm_uninit_edge   the edge of the tile is not zero-filled (no else): threads
 *                    read tile cells nobody wrote
 */
#ifndef TILE
#define TILE 8
#endif

__global__ void mm_ok(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                      int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_double_buffer(const float *x, const float *weight, const float *bias, float *y, int batch,
                                 int in_f, int out_f) {
    __shared__ float xs[2][TILE][TILE];
    __shared__ float ws[2][TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    int buf = 0;
    xs[0][ty][tx] = b < batch && tx < in_f ? x[(size_t)b * in_f + tx] : 0.0f;
    ws[0][ty][tx] = o0 + ty < out_f && tx < in_f ? weight[(size_t)(o0 + ty) * in_f + tx] : 0.0f;
    __syncthreads();
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + TILE + tx;
        /* the other buffer was last read before the previous barrier */
        if (k0 + TILE < in_f) {
            xs[buf ^ 1][ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
            ws[buf ^ 1][ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        }
        for (int kk = 0; kk < TILE; kk++) acc += xs[buf][ty][kk] * ws[buf][tx][kk];
        __syncthreads();
        buf ^= 1;
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_no_sync_raw(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                               int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f; // expect: race mm_no_sync_raw
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk]; // expect: race mm_no_sync_raw
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_no_sync_war(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                               int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f; // expect: race mm_no_sync_war
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk]; // expect: race mm_no_sync_war
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_tail_le(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                           int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k <= in_f ? x[(size_t)b * in_f + k] : 0.0f; // expect: memcheck mm_tail_le
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk];
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_shared_le(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                             int out_f) {
    __shared__ float ws[TILE][TILE + 1];
    __shared__ float xs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
        ws[ty][tx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk <= TILE; kk++) acc += xs[ty][kk] * ws[tx][kk]; // expect: memcheck mm_shared_le
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_uninit_edge(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                               int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        if (b < batch && k < in_f) xs[ty][tx] = x[(size_t)b * in_f + k];
        if (o0 + ty < out_f && k < in_f) ws[ty][tx] = weight[(size_t)(o0 + ty) * in_f + k];
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * ws[tx][kk]; // expect: initcheck mm_uninit_edge
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

__global__ void mm_transpose(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                             int out_f) {
    __shared__ float xs[TILE][TILE];
    __shared__ float wt[TILE][TILE + 1]; /* wt[k][c] = weight[o0 + c][k0 + k] */
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty, o = o0 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        const int k = k0 + tx;
        xs[ty][tx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
        wt[tx][ty] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++) acc += xs[ty][kk] * wt[kk][tx];
        __syncthreads();
    }
    if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc + bias[o];
}

/* block (TILE / 2, TILE): thread (tx, ty) computes y[b][o0 + 2 tx + j], j < 2 */
__device__ void regtile(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                        int out_f, int cols) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int b0 = blockIdx.y * TILE, o0 = blockIdx.x * TILE;
    const int b = b0 + ty;
    float acc[2] = {0.0f, 0.0f};
    for (int k0 = 0; k0 < in_f; k0 += TILE) {
        for (int kx = tx; kx < TILE; kx += TILE / 2) {
            const int k = k0 + kx;
            xs[ty][kx] = b < batch && k < in_f ? x[(size_t)b * in_f + k] : 0.0f;
            ws[ty][kx] = o0 + ty < out_f && k < in_f ? weight[(size_t)(o0 + ty) * in_f + k] : 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < TILE; kk++)
            for (int j = 0; j < 2; j++) acc[j] += xs[ty][kk] * ws[2 * tx + j][kk];
        __syncthreads();
    }
    for (int j = 0; j < cols; j++) {
        const int o = o0 + 2 * tx + j;
        if (b < batch && o < out_f) y[(size_t)b * out_f + o] = acc[j] + bias[o]; // expect: race mm_regtile_le
    }
}

__global__ void mm_regtile(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                           int out_f) {
    regtile(x, weight, bias, y, batch, in_f, out_f, 2);
}

__global__ void mm_regtile_le(const float *x, const float *weight, const float *bias, float *y, int batch, int in_f,
                              int out_f) {
    regtile(x, weight, bias, y, batch, in_f, out_f, 3); /* the bug: j <= 2 */
}
