/*
 * cg_broken.cu: deliberately wrong cooperative groups kernels for
 * tests/test_emu_cg_half.c. Each must fail with a message naming the user's
 * line (the `@name` comments mark the lines the test expects), not the shim's.
 *
 *   tile_sync_divergent  tile.sync() reached by half of a tile of 8
 *   block_same_line      block.sync() in both branches of one line
 *   sync_two_sites       cg::sync(block) in two branches
 *   partial_static_tile  tiled_partition<8> of a block of 20: the last tile
 *                        names lanes that do not exist
 */
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void tile_sync_divergent(int *out) {
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    if (tile.thread_rank() < 4) {
        tile.sync(); // @tile_sync
    }
    out[threadIdx.x] = 1;
}

__global__ void block_same_line(int *out, int k) {
    cg::thread_block block = cg::this_thread_block();
    if ((int)threadIdx.x < k) block.sync(); else block.sync(); // @block_same_line
    out[threadIdx.x] = 1;
}

__global__ void sync_two_sites(int *out) {
    cg::thread_block block = cg::this_thread_block();
    if (threadIdx.x < 16) {
        cg::sync(block); // @sync_a
    } else {
        cg::sync(block); // @sync_b
    }
    out[threadIdx.x] = 1;
}

__global__ void partial_static_tile(int *out) {
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    out[threadIdx.x] = tile.shfl((int)threadIdx.x, 0); // @partial_tile
}
