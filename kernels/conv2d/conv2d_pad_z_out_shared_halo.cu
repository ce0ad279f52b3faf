/*
 * conv2d_pad_z_out_shared_halo: like conv2d_pad_z_out_shared, but the block also
 * loads the halo. Blocks are TILE_SIZE x TILE_SIZE threads; every thread loads one
 * input element (halo included, `pad` outside the image) into shared memory, and
 * only the interior threads compute: each block produces an output tile of
 * O = TILE_SIZE - filter_size + 1 pixels per side, so TILE_SIZE >= filter_size.
 * Block (TILE_SIZE, TILE_SIZE, 1), grid (ceil(w/O), ceil(h/O), out_ch), dynamic
 * shared memory TILE_SIZE * TILE_SIZE * 4 bytes.
 *
 *   harness run configs/conv2d_sweep.json
 *   harness run configs/conv2d_accum.json       (float against double accumulators)
 *   harness debug configs/conv2d_sweep.json --kernel conv2d_pad_z_out_shared_halo --set in_ch=2,out_ch=1,filter_size=3,img_size=8
 *
 * The family's menu is in conv2d_pad.cu.
 */
#include "conv2d_helpers.h"

__global__ void conv2d_pad_z_out_shared_halo(const float *in, float *out, const float *filter,
                                             int h, int w, int in_channels, int out_channels,
                                             int filter_size, float pad HN_SINGLE_BLOCK_PARAM) {
    extern __shared__ float cell[]; // (TILE_SIZE, TILE_SIZE): output tile plus halo
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int r = (filter_size - 1) / 2;
    int out_tile = TILE_SIZE - filter_size + 1;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * out_tile + tx - r; // the input pixel this thread loads
    int y = blockIdx.y * out_tile + ty - r;
    int o = blockIdx.z;
    bool loads_inside = x >= 0 && x < w && y >= 0 && y < h;
    bool computes = tx >= r && tx < r + out_tile && ty >= r && ty < r + out_tile;
    ACCUM_DTYPE acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        cell[ty * TILE_SIZE + tx] = loads_inside ? in_c[y * w + x] : pad;
        __syncthreads();
#ifdef DEBUG
        if (hn_debug_leader()) {
            printf("block (%d,%d,%d) input channel %d, cell from (y=%d, x=%d):\n", blockIdx.x,
                   blockIdx.y, blockIdx.z, c, y - ty, x - tx);
            hn_print_matrix("cell", cell, TILE_SIZE, TILE_SIZE, TILE_SIZE);
        }
#endif
        if (computes) {
            for (int p = 0; p < filter_size; p++)
                for (int q = 0; q < filter_size; q++)
                    acc += (ACCUM_DTYPE)cell[(ty + p - r) * TILE_SIZE + (tx + q - r)] *
                           (ACCUM_DTYPE)f[p * filter_size + q];
        }
        __syncthreads(); // the cell is overwritten by the next channel
    }
    if (computes && loads_inside) out[((size_t)o * h + y) * w + x] = (float)acc;
    HN_SINGLE_BLOCK_LEAVE();
}
