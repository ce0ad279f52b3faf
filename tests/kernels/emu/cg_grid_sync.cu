/*
 * cg_grid_sync.cu: cooperative groups the CPU emulator refuses at compile time
 * (tests/test_emu_cg_half.c); NVRTC compiles the default, a grid-wide barrier.
 *
 *   (default)       grid_sync: cg::this_grid().sync()
 *   -D TILE64       tile64: a thread_block_tile of 64 threads
 *   -D MEMCPY_ASYNC copy: cg::memcpy_async
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>

namespace cg = cooperative_groups;

#if defined(TILE64)
__global__ void tile64(int *out) {
    out[threadIdx.x] = (int)cg::tiled_partition<64>(cg::this_thread_block()).thread_rank(); // @tile64
}
#elif defined(MEMCPY_ASYNC)
__global__ void copy(int *out, const int *in) {
    __shared__ int s[64];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, s, in, sizeof s); // @memcpy_async
    cg::wait(block);
    out[threadIdx.x] = s[threadIdx.x];
}
#else
__global__ void grid_sync(int *out) {
    out[cg::this_grid().thread_rank()] = 1;
    cg::this_grid().sync(); // @grid_sync
    out[0] = 2;
}
#endif
