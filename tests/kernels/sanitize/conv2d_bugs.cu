/*
 * conv2d_bugs.cu: conv2d kernels with one planted bug each, for `harness check`
 * (tests/configs/sanitize.json, tests/test_sanitize.sh). Whether a bug shows in
 * the output depends on the case and on the order threads run (the read past
 * the end never does: its weight is 0); the sanitizer names each one with its
 * line whatever the output. The line each finding must name carries
 * `expect: CLASS KERNEL`.
 *
 *   conv2d_halo_race     conv2d_pad_z_out_shared_halo without the barrier at the
 *                        end of the channel loop: the next channel's tile is
 *                        written while other warps still read this one
 *   conv2d_halo_uninit   the tile's last row is never loaded, and the computing
 *                        threads next to it read it
 *   conv2d_edge_oob      conv2d_pad with `xx <= w`: the last column reads one
 *                        float past its row, past the buffer's end at the end
 *
 *   harness check tests/configs/sanitize.json
 */
#include "../../../kernels/conv2d/conv2d_helpers.h"

__global__ void conv2d_halo_race(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                                 int out_channels, int filter_size, float pad) {
    extern __shared__ float cell[]; // (TILE_SIZE, TILE_SIZE)
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * out_tile + tx - r;
    int y = blockIdx.y * out_tile + ty - r;
    int o = blockIdx.z;
    bool loads_inside = x >= 0 && x < w && y >= 0 && y < h;
    bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    ACCUM_DTYPE acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        cell[ty * TILE_SIZE + tx] = loads_inside ? in_c[y * w + x] : pad; // expect: race conv2d_halo_race
        __syncthreads();
        if (computes) {
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++)
                    acc += (ACCUM_DTYPE)cell[(ty + p - r) * TILE_SIZE + (tx + q - r)] * // expect: race conv2d_halo_race
                           (ACCUM_DTYPE)f[p * filter_size + q];
        }
        /* the bug: no __syncthreads() before the next channel overwrites the cell */
    }
    if (computes && loads_inside) out[((size_t)o * h + y) * w + x] = (float)acc;
}

__global__ void conv2d_halo_uninit(const float *in, float *out, const float *filter, int h, int w,
                                   int in_channels, int out_channels, int filter_size, float pad) {
    extern __shared__ float cell[]; // (TILE_SIZE, TILE_SIZE)
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * out_tile + tx - r;
    int y = blockIdx.y * out_tile + ty - r;
    int o = blockIdx.z;
    bool loads_inside = x >= 0 && x < w && y >= 0 && y < h;
    bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    ACCUM_DTYPE acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        if (ty < TILE_SIZE - 1) cell[ty * TILE_SIZE + tx] = loads_inside ? in_c[y * w + x] : pad; /* the bug */
        __syncthreads();
        if (computes) {
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++)
                    acc += (ACCUM_DTYPE)cell[(ty + p - r) * TILE_SIZE + (tx + q - r)] * // expect: initcheck conv2d_halo_uninit
                           (ACCUM_DTYPE)f[p * filter_size + q];
        }
        __syncthreads();
    }
    if (computes && loads_inside) out[((size_t)o * h + y) * w + x] = (float)acc;
}

__global__ void conv2d_edge_oob(const float *in, float *out, const float *filter, int h, int w, int in_channels,
                                int out_channels, int filter_size, float pad) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z;
    int r = (filter_size - 1) / 2;
    if (x < w && y < h) {
        ACCUM_DTYPE acc = 0;
        for (int c = 0; c < in_channels; c++)
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++) {
                    int yy = y + p - r, xx = x + q - r;
                    /* the bug: `xx <= w` reads one past the row (the weight there is 0, so
                       the output stays right) */
                    float v = yy >= 0 && yy < h && xx >= 0 && xx <= w ? in[((size_t)c * h + yy) * w + xx] : pad; // expect: memcheck conv2d_edge_oob
                    float wgt = xx < w ? filter[(((size_t)o * in_channels + c) * filter_size + p) * filter_size + q] : 0.0f;
                    acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)wgt;
                }
        out[((size_t)o * h + y) * w + x] = (float)acc;
    }
}
