/*
 * stencil.cu: conv2d ("same" padding, `pad` outside the image) as shared-memory
 * stencils, correct and with one planted bug each, for `harness check`
 * (tests/configs/sancheck/stencil.json, tests/test_sancheck.sh). A line a finding
 * must name carries `expect: CLASS KERNEL`; a kernel without marks must be silent.
 *
 *   st_ok           a tile of TILE x TILE inputs (output tile plus halo) in dynamic
 *                   shared memory, every input channel in turn, two barriers
 *   st_rows_ok      a row stencil: a row of BLOCK outputs plus R halo values each
 *                   side in static shared memory; lanes past the row end exit after
 *                   the last barrier
 *   st_halo_left    the left halo is loaded with only `x < w` checked: the first
 *                   block's x = -1 reads before the image (before the buffer in row 0)
 *   st_halo_le      the right halo loop runs `i <= R`: one value past the static
 *                   shared row
 *   st_const_ok     the filter in __constant__ memory (F_c[filter][p][q], the
 *                   config's "constants" fill it), read straight from global memory
 *   st_const_shift  st_const_ok indexing the filter F_c[k][p + r][q + r] with p
 *                   and q already from 0: an index past the filter's row
 *   st_dyn_le       st_ok with the tile's last column stored `tx <= ...` one
 *                   float past the dynamic shared memory
 */
#ifndef TILE_SIZE
#define TILE_SIZE 8
#endif
#ifndef BLOCK
#define BLOCK 16
#endif

__global__ void st_ok(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                      int out_channels, int filter_size, float pad) {
    extern __shared__ float cell[];
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * out_tile + tx - r;
    int y = blockIdx.y * out_tile + ty - r;
    int o = blockIdx.z;
    bool inside = x >= 0 && x < w && y >= 0 && y < h;
    bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    float acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        cell[ty * TILE_SIZE + tx] = inside ? in_c[y * w + x] : pad;
        __syncthreads();
        if (computes)
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++)
                    acc += cell[(ty + p - r) * TILE_SIZE + (tx + q - r)] * f[p * filter_size + q];
        __syncthreads();
    }
    if (computes && inside) out[((size_t)o * h + y) * w + x] = acc;
}

/* one output row segment per block: block (BLOCK), grid (ceil_div(w, BLOCK), h, out_ch) */
__global__ void st_rows_ok(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                           int out_channels, int filter_size, float pad) {
    const int R = (filter_size - 1) / 2;
    __shared__ float row[8][BLOCK + 8]; /* filter_size <= 9 */
    const int t = threadIdx.x, x = blockIdx.x * BLOCK + t, y = blockIdx.y, o = blockIdx.z;
    float acc = 0;
    for (int c = 0; c < in_channels; c++) {
        for (int p = 0; p < filter_size; p++) {
            const int yy = y + p - R;
            for (int i = t; i < BLOCK + 2 * R; i += BLOCK) {
                const int xx = blockIdx.x * BLOCK + i - R;
                row[p][i] = yy >= 0 && yy < h && xx >= 0 && xx < w ? in[((size_t)c * h + yy) * w + xx] : pad;
            }
        }
        __syncthreads();
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        for (int p = 0; p < filter_size; p++)
            for (int q = 0; q < filter_size; q++) acc += row[p][t + q] * f[p * filter_size + q];
        __syncthreads();
    }
    if (x >= w) return; /* after the last barrier: nothing waits for these lanes */
    out[((size_t)o * h + y) * w + x] = acc;
}

__global__ void st_halo_left(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                             int out_channels, int filter_size, float pad) {
    const int R = (filter_size - 1) / 2;
    __shared__ float row[8][BLOCK + 8];
    const int t = threadIdx.x, x = blockIdx.x * BLOCK + t, y = blockIdx.y, o = blockIdx.z;
    float acc = 0;
    for (int c = 0; c < in_channels; c++) {
        for (int p = 0; p < filter_size; p++) {
            const int yy = y + p - R;
            for (int i = t; i < BLOCK + 2 * R; i += BLOCK) {
                const int xx = blockIdx.x * BLOCK + i - R;
                row[p][i] = yy >= 0 && yy < h && xx < w ? in[((size_t)c * h + yy) * w + xx] : pad; // expect: memcheck st_halo_left
            }
        }
        __syncthreads();
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        for (int p = 0; p < filter_size; p++)
            for (int q = 0; q < filter_size; q++) acc += row[p][t + q] * f[p * filter_size + q];
        __syncthreads();
    }
    if (x >= w) return;
    out[((size_t)o * h + y) * w + x] = acc;
}

__global__ void st_halo_le(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                           int out_channels, int filter_size, float pad) {
    const int R = (filter_size - 1) / 2;
    __shared__ float row[BLOCK + 2]; /* sized for a 3x3 filter: R = 1 */
    const int t = threadIdx.x, x = blockIdx.x * BLOCK + t, y = blockIdx.y, o = blockIdx.z;
    float acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        for (int p = 0; p < filter_size; p++) {
            const int yy = y + p - R;
            const float *in_row = in + ((size_t)c * h + yy) * w;
            const bool row_in = yy >= 0 && yy < h;
            row[t + R] = row_in && x < w ? in_row[x] : pad;
            if (t < R) {
                const int xl = blockIdx.x * BLOCK - R + t;
                row[t] = row_in && xl >= 0 ? in_row[xl] : pad;
            }
            if (t <= R) { /* the right halo: one too many */
                const int xr = (blockIdx.x + 1) * BLOCK + t;
                row[BLOCK + R + t] = row_in && xr < w ? in_row[xr] : pad; // expect: memcheck st_halo_le
            }
            __syncthreads();
            for (int q = 0; q < filter_size; q++) acc += row[t + q] * f[p * filter_size + q];
            __syncthreads();
        }
    }
    if (x >= w) return;
    out[((size_t)o * h + y) * w + x] = acc;
}

__global__ void st_dyn_le(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                          int out_channels, int filter_size, float pad) {
    extern __shared__ float cell[];
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * out_tile + tx - r;
    int y = blockIdx.y * out_tile + ty - r;
    int o = blockIdx.z;
    bool inside = x >= 0 && x < w && y >= 0 && y < h;
    bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    float acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        cell[ty * TILE_SIZE + tx] = inside ? in_c[y * w + x] : pad;
        /* a "guard" column: meant for the padding the tile does not have */
        if (tx == TILE_SIZE - 1 && ty == TILE_SIZE - 1) cell[ty * TILE_SIZE + tx + 1] = pad; // expect: memcheck st_dyn_le
        __syncthreads();
        if (computes)
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++)
                    acc += cell[(ty + p - r) * TILE_SIZE + (tx + q - r)] * f[p * filter_size + q];
        __syncthreads();
    }
    if (computes && inside) out[((size_t)o * h + y) * w + x] = acc;
}

__constant__ float F_c[4][3][3]; /* out_ch * in_ch filters of 3 x 3 */

__device__ float const_stencil(const float *in, int h, int w, int in_channels, int filter_size, float pad,
                               bool shifted) {
    const int r = (filter_size - 1) / 2, x = blockIdx.x * BLOCK + threadIdx.x, y = blockIdx.y, o = blockIdx.z;
    float acc = 0;
    for (int c = 0; c < in_channels; c++)
        for (int p = 0; p < filter_size; p++)
            for (int q = 0; q < filter_size; q++) {
                const int yy = y + p - r, xx = x + q - r;
                const float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? in[((size_t)c * h + yy) * w + xx] : pad;
                const int k = o * in_channels + c;
                acc += v * (shifted ? F_c[k][p + r][q + r] : F_c[k][p][q]); // expect: memcheck st_const_shift
            }
    return acc;
}

__global__ void st_const_ok(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                            int out_channels, int filter_size, float pad) {
    const int x = blockIdx.x * BLOCK + threadIdx.x;
    const float acc = const_stencil(in, h, w, in_channels, filter_size, pad, false);
    if (x < w) out[((size_t)blockIdx.z * h + blockIdx.y) * w + x] = acc;
}

__global__ void st_const_shift(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                               int out_channels, int filter_size, float pad) {
    const int x = blockIdx.x * BLOCK + threadIdx.x;
    const float acc = const_stencil(in, h, w, in_channels, filter_size, pad, true);
    if (x < w) out[((size_t)blockIdx.z * h + blockIdx.y) * w + x] = acc;
}
