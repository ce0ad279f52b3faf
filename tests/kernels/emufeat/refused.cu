/*
 * refused.cu: what the emulator refuses at compile time, one construct per
 * define, for tests/test_emu_features.c: the message names the construct (and,
 * for an intrinsic, the user's line).
 *
 *   SPACE        __isShared(p): the address-space predicates
 *   CUB_LOAD     <cub/block/block_load.cuh>: CUB beyond reductions and scans
 *   BARRIER      <cuda/barrier>
 */
#if defined(CUB_LOAD)
#include <cub/block/block_load.cuh>
#elif defined(BARRIER)
#include <cuda/barrier>
#endif

__global__ void refused(float *out) {
#if defined(SPACE)
    out[0] = __isShared(out); // @space
#else
    out[0] = 1.0f;
#endif
}
