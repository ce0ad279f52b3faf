/*
 * cg_grid_sync.cu: cooperative groups the CPU emulator refuses at compile time
 * (tests/test_emu_cg_half.c); NVRTC compiles the default, a grid-wide barrier.
 *
 *   (default)       grid_sync: cg::this_grid().sync()
 *   -D TILE64       tile64: a thread_block_tile of 64 threads
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>

namespace cg = cooperative_groups;

#if defined(TILE64)
__global__ void tile64(int *out) {
    out[threadIdx.x] = (int)cg::tiled_partition<64>(cg::this_thread_block()).thread_rank(); // @tile64
}
#else
__global__ void grid_sync(int *out) {
    out[cg::this_grid().thread_rank()] = 1;
    cg::this_grid().sync(); // @grid_sync
    out[0] = 2;
}
#endif
