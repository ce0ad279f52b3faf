/*
 * transpose_bugs.cu: transposes for tests/test_transpose.sh, each with one
 * mistake:
 *
 *   transpose_copy       writes y with x's index (a copy, not a transpose):
 *                        right only where x is one row or one column
 *   transpose_no_sync    the tiled transpose without the barrier between the
 *                        tile's writes and its transposed reads: a race
 *                        harness check names
 */
#define TILE 16
#define ROWS_PER 4

__global__ void transpose_copy(const float *x, float *y, int rows, int cols) {
    const int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        const int r = blockIdx.y * TILE + j;
        if (r < rows && c < cols) y[(size_t)r * cols + c] = x[(size_t)r * cols + c];
    }
}

__global__ void transpose_no_sync(const float *x, float *y, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        const int r = blockIdx.y * TILE + j;
        if (r < rows && c < cols) tile[j][threadIdx.x] = x[(size_t)r * cols + c];
    }
    const int r = blockIdx.y * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += ROWS_PER) {
        c = blockIdx.x * TILE + j;
        if (c < cols && r < rows) y[(size_t)c * rows + r] = tile[threadIdx.x][j];
    }
}
