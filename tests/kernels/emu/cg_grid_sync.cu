/*
 * cg_grid_sync.cu: a grid-wide barrier, which the CPU emulator refuses at
 * compile time (tests/test_emu_cg_half.c); NVRTC compiles it.
 */
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

__global__ void grid_sync(int *out) {
    out[cg::this_grid().thread_rank()] = 1;
    cg::this_grid().sync(); // @grid_sync
    out[0] = 2;
}
