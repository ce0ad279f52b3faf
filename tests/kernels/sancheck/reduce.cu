/*
 * reduce.cu: per-channel sums (op conv2d_backward_bias with n = 1, a 1x1 filter:
 * dbias[c] = sum of the c-th plane of dout, `npix` values) as block reductions,
 * scans and shared-memory histograms, correct and with one planted bug each, for
 * `harness check` (tests/configs/sancheck/reduce.json, tests/test_sancheck.sh).
 * A line a finding must name carries `expect: CLASS KERNEL`; a kernel without
 * marks must be silent. Block (BLOCK) = 64 threads, two warps; grid (out_ch)
 * unless the config says otherwise.
 *
 * Correct:
 *   red_syncwarp      tree to 64 values, then the last warp finishes warp-
 *                     synchronously with __syncwarp between its steps
 *   red_shfl          shuffles within warps, a partial per warp in shared memory
 *   red_cg_tiles      the same with cooperative groups' tiles of 16 (tile.sync, shfl_down)
 *   red_scan          a Hillis-Steele inclusive scan (read, barrier, write,
 *                     barrier); the sum is its last element
 *   red_hist          a histogram in shared memory: bins zeroed, a barrier,
 *                     atomicAdd into the bins, a barrier, atomicAdd to dbias
 *                     (zeroed by the config); the bin of a value is its plane
 *   red_naive_exit    a thread per channel that returns at once past out_ch,
 *                     with no barrier anywhere
 *   red_two_pass      pass 1 adds into a scratch buffer the config zeroes, pass 2
 *                     copies it out
 *   red_struct        partial sums and their count in one __shared__ struct
 *                     defined in place (an anonymous struct type)
 *   red_count         halves the active threads until __syncthreads_count says
 *                     one value is left (a barrier as the loop's condition)
 * Bugs:
 *   red_tree_nosync       the tree's steps without a barrier between them
 *   red_sync_divergent    the barrier inside `if (t < s)`
 *   red_syncwarp_mask     the warp stage's __syncwarp(0xffff) reached by all 32 lanes
 *   red_shfl_exited       lanes past npix return before the full-mask shuffles
 *   red_scan_inplace      the scan adds in place: s[t] += s[t - off] races with
 *                         the write of s[t - off] in the same step
 *   red_hist_nosync       the bins are zeroed but no barrier comes before the atomics
 *   red_hist_unzeroed     the bins are never zeroed
 *   red_two_pass_unzeroed pass 1 accumulates into the scratch buffer nobody zeroed
 *   red_syncwarp_scope    128 threads: the tree's steps below 64 use __syncwarp,
 *                         but step 32 reads what warp 1 wrote at step 64
 *   red_struct_count      red_struct whose thread 0 never sets the count it reads
 *   red_volatile_warp     the pre-Volta warp-synchronous finish through volatile
 *                         shared memory, without __syncwarp
 *   red_dbias_plus        blocks of one channel add their partial with a plain
 *                         `dbias[c] +=` (a race on global memory between blocks)
 */
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#ifndef BLOCK
#define BLOCK 64
#endif

/* each thread's share of channel c's plane */
__device__ float plane_part(const float *dout, int c, int npix) {
    float acc = 0.0f;
    for (int j = threadIdx.x; j < npix; j += BLOCK) acc += dout[(size_t)c * npix + j];
    return acc;
}

__global__ void red_syncwarp(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    for (int k = BLOCK / 2; k > 32; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        float v = s[t] + s[t + 32];
        __syncwarp();
        s[t] = v;
        __syncwarp();
        for (int off = 16; off > 0; off >>= 1) {
            v += s[t + off];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
        if (t == 0) dbias[c] = v;
    }
}

__global__ void red_shfl(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float warp_sum[BLOCK / 32];
    const int t = threadIdx.x, c = blockIdx.x;
    float v = plane_part(dout, c, npix);
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t % 32 == 0) warp_sum[t / 32] = v;
    __syncthreads();
    if (t < 32) {
        v = t < BLOCK / 32 ? warp_sum[t] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
        if (t == 0) dbias[c] = v;
    }
}

__global__ void red_cg_tiles(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float tile_sum[BLOCK / 16];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    const int c = blockIdx.x;
    float v = plane_part(dout, c, npix);
    for (int off = 8; off > 0; off >>= 1) v += tile.shfl_down(v, off);
    if (tile.thread_rank() == 0) tile_sum[tile.meta_group_rank()] = v;
    block.sync();
    if (tile.meta_group_rank() == 0) {
        v = tile.thread_rank() < BLOCK / 16 ? tile_sum[tile.thread_rank()] : 0.0f;
        tile.sync();
        for (int off = 8; off > 0; off >>= 1) v += tile.shfl_down(v, off);
        if (tile.thread_rank() == 0) dbias[c] = v;
    }
}

__global__ void red_scan(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    for (int off = 1; off < BLOCK; off <<= 1) {
        const float left = t >= off ? s[t - off] : 0.0f;
        __syncthreads();
        s[t] += left;
        __syncthreads();
    }
    if (t == BLOCK - 1) dbias[c] = s[t];
}

__global__ void red_hist(const float *dout, float *dbias, int out_ch, int npix) {
    extern __shared__ float bins[]; /* out_ch floats */
    const int t = threadIdx.x;
    for (int b = t; b < out_ch; b += BLOCK) bins[b] = 0.0f;
    __syncthreads();
    const int total = out_ch * npix;
    for (int i = blockIdx.x * BLOCK + t; i < total; i += gridDim.x * BLOCK) atomicAdd(&bins[i / npix], dout[i]);
    __syncthreads();
    for (int b = t; b < out_ch; b += BLOCK) atomicAdd(&dbias[b], bins[b]);
}

__global__ void red_naive_exit(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= out_ch) return;
    float acc = 0.0f;
    for (int j = 0; j < npix; j++) acc += dout[(size_t)c * npix + j];
    dbias[c] = acc;
}

__global__ void red_two_pass_add(const float *dout, float *partial, int out_ch, int npix) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_ch * npix) atomicAdd(&partial[i / npix], dout[i]); // expect: initcheck red_two_pass_unzeroed
}

__global__ void red_two_pass_copy(const float *partial, float *dbias, int out_ch) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < out_ch) dbias[c] = partial[c];
}

__global__ void red_tree_nosync(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k]; // expect: race red_tree_nosync
    }
    __syncthreads();
    if (t == 0) dbias[c] = s[0];
}

__global__ void red_sync_divergent(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) {
            s[t] += s[t + k];
            __syncthreads(); // expect: synccheck red_sync_divergent
        }
    }
    if (t == 0) dbias[c] = s[0];
}

__global__ void red_syncwarp_mask(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    if (t < 32) {
        float v = s[t] + s[t + 32];
        __syncwarp();
        s[t] = v;
        __syncwarp(0xffffu); // expect: synccheck red_syncwarp_mask
        for (int off = 16; off > 0; off >>= 1) {
            v += s[t + off];
            __syncwarp();
            s[t] = v;
            __syncwarp();
        }
        if (t == 0) dbias[c] = v;
    }
}

__global__ void red_shfl_exited(const float *dout, float *dbias, int out_ch, int npix) {
    const int t = threadIdx.x, c = blockIdx.x;
    if (t >= npix) return; /* the bug: these lanes are named by the shuffles' mask */
    float v = plane_part(dout, c, npix);
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off); // expect: synccheck red_shfl_exited
    if (t == 0) dbias[c] = v;
}

__global__ void red_scan_inplace(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    for (int off = 1; off < BLOCK; off <<= 1) {
        if (t >= off) s[t] += s[t - off]; // expect: race red_scan_inplace
        __syncthreads();
    }
    if (t == BLOCK - 1) dbias[c] = s[t];
}

__global__ void red_hist_nosync(const float *dout, float *dbias, int out_ch, int npix) {
    extern __shared__ float bins[];
    const int t = threadIdx.x;
    for (int b = t; b < out_ch; b += BLOCK) bins[b] = 0.0f; // expect: race red_hist_nosync
    const int total = out_ch * npix;
    for (int i = blockIdx.x * BLOCK + t; i < total; i += gridDim.x * BLOCK)
        atomicAdd(&bins[i / npix], dout[i]); // expect: race red_hist_nosync
    __syncthreads();
    for (int b = t; b < out_ch; b += BLOCK) atomicAdd(&dbias[b], bins[b]);
}

__global__ void red_hist_unzeroed(const float *dout, float *dbias, int out_ch, int npix) {
    extern __shared__ float bins[];
    const int t = threadIdx.x;
    const int total = out_ch * npix;
    for (int i = blockIdx.x * BLOCK + t; i < total; i += gridDim.x * BLOCK)
        atomicAdd(&bins[i / npix], dout[i]); // expect: initcheck red_hist_unzeroed
    __syncthreads();
    for (int b = t; b < out_ch; b += BLOCK) atomicAdd(&dbias[b], bins[b]);
}

__global__ void red_dbias_plus(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    const int half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    float acc = 0.0f;
    for (int j = j0 + t; j < j1; j += BLOCK) acc += dout[(size_t)c * npix + j];
    s[t] = acc;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) dbias[c] += s[0]; // expect: race red_dbias_plus
}

__global__ void red_count(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    int k = BLOCK / 2;
    while (__syncthreads_count(t < k) > 0) { /* the barrier orders each step's writes */
        if (t < k) s[t] += s[t + k];
        k >>= 1;
    }
    if (t == 0) dbias[c] = s[0];
}

__global__ void red_syncwarp_scope(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[128];
    const int t = threadIdx.x, c = blockIdx.x;
    float acc = 0.0f;
    for (int j = t; j < npix; j += 128) acc += dout[(size_t)c * npix + j];
    s[t] = acc;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k]; // expect: race red_syncwarp_scope
        __syncwarp(); /* the bug: warps 0 and 1 both take part in step 64 */
    }
    if (t == 0) dbias[c] = s[0];
}

__global__ void red_volatile_warp(const float *dout, float *dbias, int out_ch, int npix) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x, c = blockIdx.x;
    s[t] = plane_part(dout, c, npix);
    __syncthreads();
    if (t < 32) {
        volatile float *vs = s;
        vs[t] += vs[t + 32]; // expect: race red_volatile_warp
        vs[t] += vs[t + 16]; // expect: race red_volatile_warp
        vs[t] += vs[t + 8];
        vs[t] += vs[t + 4];
        vs[t] += vs[t + 2];
        vs[t] += vs[t + 1];
        if (t == 0) dbias[c] = vs[0];
    }
}

/* the partial sums of the block and how many of them count */
__device__ void struct_sum(const float *dout, float *dbias, int npix, bool set_count) {
    __shared__ struct {
        float part[BLOCK];
        int count;
    } sm;
    const int t = threadIdx.x, c = blockIdx.x;
    sm.part[t] = plane_part(dout, c, npix);
    if (t == 0 && set_count) sm.count = min(BLOCK, npix);
    __syncthreads();
    if (t == 0) {
        float total = 0.0f;
        for (int i = 0; i < sm.count; i++) total += sm.part[i]; // expect: initcheck red_struct_count
        dbias[c] = total;
    }
}

__global__ void red_struct(const float *dout, float *dbias, int out_ch, int npix) {
    struct_sum(dout, dbias, npix, true);
}

__global__ void red_struct_count(const float *dout, float *dbias, int out_ch, int npix) {
    struct_sum(dout, dbias, npix, false);
}
