/*
 * transpose: y (cols, rows) = x (rows, cols)^T, float (the transpose operator,
 * docs/ops/transpose.md): the exercise in coalescing and bank conflicts.
 *
 *   transpose_naive   one thread per element, block (32, 8) walking TILE rows:
 *                     reads of x coalesced, writes of y strided by rows
 *   transpose_tiled   a TILE x TILE tile of x staged in shared memory, then
 *                     written out transposed so both global sides are coalesced;
 *                     PAD 1 pads the tile's rows by one float so a warp reading a
 *                     column hits 32 banks (PAD 0: the 32-way bank conflict)
 *
 * Block (TILE, ROWS_PER: TILE / 4 by default), grid (ceil(cols / TILE),
 * ceil(rows / TILE)): each thread moves TILE / ROWS_PER elements.
 *
 *   harness run configs/transpose_sweep.json
 *   harness profile configs/transpose_sweep.json --variant 'transpose_tiled[PAD=0]' (bank conflicts)
 */
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS_PER
#define ROWS_PER 8
#endif
#ifndef PAD
#define PAD 1
#endif

__global__ void transpose_naive(const float *x, float *y, int rows, int cols) {
    const int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        const int r = blockIdx.y * TILE + j;
        if (r < rows && c < cols) y[(size_t)c * rows + r] = x[(size_t)r * cols + c];
    }
}

__global__ void transpose_tiled(const float *x, float *y, int rows, int cols) {
    __shared__ float tile[TILE][TILE + PAD];
    int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        const int r = blockIdx.y * TILE + j;
        if (r < rows && c < cols) tile[j][threadIdx.x] = x[(size_t)r * cols + c];
    }
    __syncthreads();
    /* the transposed tile: y's row blockIdx.x * TILE + j, columns from blockIdx.y * TILE */
    const int r = blockIdx.y * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        c = blockIdx.x * TILE + j;
        if (c < cols && r < rows) y[(size_t)c * rows + r] = tile[threadIdx.x][j];
    }
}
