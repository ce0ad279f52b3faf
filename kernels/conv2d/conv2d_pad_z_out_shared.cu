/*
 * conv2d_pad_z_out_shared: like conv2d_pad_z_out, but for each input channel the
 * block first stages its own TILE_SIZE x TILE_SIZE input tile in shared memory;
 * filter taps that fall outside the tile (the halo) are read from global memory.
 * Block (TILE_SIZE, TILE_SIZE, 1), grid (ceil(w/T), ceil(h/T), out_ch), dynamic
 * shared memory TILE_SIZE * TILE_SIZE * 4 bytes.
 *
 * Every thread of the block reaches every __syncthreads(): threads past the
 * image's edge load `pad` and skip only the final store. (The seed notebook's
 * version returned early there, which is undefined behaviour whenever the image
 * is not a multiple of the block.)
 *
 *   harness run configs/conv2d_sweep.json
 *   harness debug configs/conv2d_sweep.json --kernel conv2d_pad_z_out_shared --set in_ch=2,out_ch=1,filter_size=3,img_size=8
 *
 * The family's menu is in conv2d_pad.cu.
 */
#include "conv2d_helpers.h"

__global__ void conv2d_pad_z_out_shared(const float *in, float *out, const float *filter, int h,
                                        int w, int in_channels, int out_channels,
                                        int filter_size, float pad HN_SINGLE_BLOCK_PARAM) {
    extern __shared__ float tile[]; // (TILE_SIZE, TILE_SIZE)
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    int tx = threadIdx.x, ty = threadIdx.y;
    int x0 = blockIdx.x * TILE_SIZE, y0 = blockIdx.y * TILE_SIZE;
    int x = x0 + tx, y = y0 + ty;
    int o = blockIdx.z;
    int r = (filter_size - 1) / 2;
    bool inside = x < w && y < h;
    ACCUM_DTYPE acc = 0;
    for (int c = 0; c < in_channels; c++) {
        const float *in_c = in + (size_t)c * h * w;
        const float *f = filter + ((size_t)o * in_channels + c) * filter_size * filter_size;
        tile[ty * TILE_SIZE + tx] = inside ? in_c[y * w + x] : pad;
        __syncthreads();
#ifdef DEBUG
        if (hn_debug_leader()) {
            printf("block (%d,%d,%d) input channel %d, tile at (y=%d, x=%d):\n", blockIdx.x,
                   blockIdx.y, blockIdx.z, c, y0, x0);
            hn_print_matrix("tile", tile, TILE_SIZE, TILE_SIZE, TILE_SIZE);
        }
#endif
        for (int p = 0; p < filter_size; p++) {
            int ty2 = ty + p - r, yy = y + p - r;
            for (int q = 0; q < filter_size; q++) {
                int tx2 = tx + q - r, xx = x + q - r;
                float v;
                if (ty2 >= 0 && ty2 < TILE_SIZE && tx2 >= 0 && tx2 < TILE_SIZE)
                    v = tile[ty2 * TILE_SIZE + tx2]; // pad already stored past the edge
                else
                    v = (yy >= 0 && yy < h && xx >= 0 && xx < w) ? in_c[yy * w + xx] : pad;
                acc += (ACCUM_DTYPE)v * (ACCUM_DTYPE)f[p * filter_size + q];
            }
        }
        __syncthreads(); // the tile is overwritten by the next channel
    }
    if (inside) out[((size_t)o * h + y) * w + x] = (float)acc;
    HN_SINGLE_BLOCK_LEAVE();
}
