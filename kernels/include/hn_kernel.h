/*
 * hn_kernel.h: the kernel conventions harness offers every kernel, on both
 * backends (NVRTC and the CPU emulator), with `#include "hn_kernel.h"` (or
 * <hn_kernel.h>); the harness supplies the file, so no include path is needed.
 * Nothing here is required: a kernel written elsewhere runs, and is debugged,
 * without it.
 *
 *   SINGLE_BLOCK   (defined by `harness debug`) blocks run one at a time, in
 *                  linear order. A kernel opts in by taking a trailing
 *                  `int *debug_counter` (HN_SINGLE_BLOCK_PARAM), which the harness
 *                  allocates and zeroes, and by calling HN_SINGLE_BLOCK_ENTER()
 *                  first and HN_SINGLE_BLOCK_LEAVE() last, reached by every thread
 *                  (no early return). On the emulator blocks run in linear order
 *                  in debug runs whether or not a kernel opts in; on a GPU only
 *                  an opted-in kernel's blocks are serialized.
 *   DEBUG          (defined by `harness debug`) the kernel may print.
 *   DEBUG_BLOCK_X/Y/Z  (`harness debug --block X,Y,Z`) the one block that should
 *                  print: hn_debug_block() is true there (everywhere when unset).
 *
 * Names all start with hn_ or HN_, so including this never collides with a
 * kernel's own.
 */
#pragma once

/* The block's position in launch order: x fastest, then y, then z. */
__device__ inline unsigned int hn_linear_block_id() {
    return (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

/* Whether this block is the one chosen for printing (every block when
 * DEBUG_BLOCK_X/Y/Z are not all defined). */
__device__ inline bool hn_debug_block() {
#if defined(DEBUG_BLOCK_X) && defined(DEBUG_BLOCK_Y) && defined(DEBUG_BLOCK_Z)
    return blockIdx.x == DEBUG_BLOCK_X && blockIdx.y == DEBUG_BLOCK_Y && blockIdx.z == DEBUG_BLOCK_Z;
#else
    return true;
#endif
}

/* Thread (0,0,0) of a block chosen for printing. */
__device__ inline bool hn_debug_leader() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && hn_debug_block();
}

/* Prints a (rows, cols) float matrix stored with row stride `stride`. */
__device__ inline void hn_print_matrix(const char *title, const float *m, int rows, int cols,
                                       int stride) {
    printf("%s (%d x %d):\n", title, rows, cols);
    for (int y = 0; y < rows; y++) {
        for (int x = 0; x < cols; x++) printf(" %8.4f", m[y * stride + x]);
        printf("\n");
    }
}

#ifdef SINGLE_BLOCK
/* The extra kernel parameter, written after the last one:
 *   __global__ void k(float *out, int n HN_SINGLE_BLOCK_PARAM) */
#define HN_SINGLE_BLOCK_PARAM , int *debug_counter

/* Waits until every block before this one has finished. Only thread (0,0,0)
 * spins; the barrier holds the rest of the block. */
#define HN_SINGLE_BLOCK_ENTER()                                                             \
    do {                                                                                    \
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)                       \
            while (atomicAdd(debug_counter, 0) != (int)hn_linear_block_id()) {              \
            }                                                                               \
        __syncthreads();                                                                    \
    } while (0)

/* Hands the turn to the next block once every thread of this one is done. */
#define HN_SINGLE_BLOCK_LEAVE()                                                             \
    do {                                                                                    \
        __syncthreads();                                                                    \
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {                     \
            __threadfence();                                                                \
            atomicAdd(debug_counter, 1);                                                    \
        }                                                                                   \
    } while (0)
#else
#define HN_SINGLE_BLOCK_PARAM
#define HN_SINGLE_BLOCK_ENTER() ((void)0)
#define HN_SINGLE_BLOCK_LEAVE() ((void)0)
#endif
