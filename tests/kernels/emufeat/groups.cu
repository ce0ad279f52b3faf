/*
 * groups.cu: cooperative groups as kernels combine them, for
 * tests/test_emu_features.c (checked against C there; also compiled by NVRTC).
 *
 *   mixed_tiles   a 16-lane tile's reduce, then a whole warp's scan, shuffle
 *                 wrapping in a tile, ranks, labeled_partition and
 *                 binary_partition of a warp, the dynamic tiled_partition(block,
 *                 8), a float warp reduce, grid sizes. The lanes of the first
 *                 tile reach the warp's scan while the second tile is still in
 *                 its reduce: overlapping masks, both pending, which is legal
 *                 (the emulator called it "the masks must match")
 *   warp_then_half  the same with plain intrinsics: lanes 0-15 shuffle with
 *                 mask 0x0000ffff, then every lane meets in __syncwarp() and a
 *                 full-mask __reduce_add_sync
 *   update_async  cg::reduce_update_async and reduce_store_async of 8-lane
 *                 tiles into a cuda::atomic_ref (a sum and a max)
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

/* out: 8 words per thread */
__global__ void mixed_tiles(unsigned *o) {
    cg::thread_block b = cg::this_thread_block();
    auto t32 = cg::tiled_partition<32>(b);
    auto t16 = cg::tiled_partition<16>(t32);
    unsigned r = b.thread_rank();
    o[r * 8 + 0] = cg::reduce(t16, r, cg::greater<unsigned>());
    o[r * 8 + 1] = cg::exclusive_scan(t32, 1u << (r % 32), cg::bit_or<unsigned>());
    o[r * 8 + 2] = t16.shfl(r, 17); /* the source rank wraps modulo 16 */
    o[r * 8 + 3] = t32.num_threads() + t16.meta_group_rank() * 100 + b.num_threads() * 1000;
    auto lp = cg::labeled_partition(t32, r % 3);
    o[r * 8 + 4] = cg::reduce(lp, r, cg::plus<unsigned>());
    auto bp = cg::binary_partition(t32, r & 1);
    o[r * 8 + 5] = bp.size() * 100 + bp.thread_rank();
    auto dt = cg::tiled_partition(b, 8);
    o[r * 8 + 6] = dt.size() * 100 + dt.thread_rank();
    float f = cg::reduce(t32, (float)r * 0.5f, cg::plus<float>());
    o[r * 8 + 7] = (unsigned)f + (cg::this_grid().num_threads() << 16);
}

/* out: 2 words per thread */
__global__ void warp_then_half(unsigned *o) {
    unsigned t = threadIdx.x, lane = t % 32, v = t;
    if (lane < 16) v = __shfl_sync(0x0000ffffu, v, (lane + 1) % 16);
    __syncwarp();
    o[t * 2] = v;
    o[t * 2 + 1] = __reduce_add_sync(0xffffffffu, v);
}

/* out[0] += the sum of every thread's index, out[1] = max(out[1], every index),
 * out[2 + tile] = the tile's sum */
__global__ void update_async(int *out) {
    auto tile = cg::tiled_partition<8>(cg::this_thread_block());
    int v = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    cg::reduce_update_async(tile, cuda::atomic_ref<int, cuda::thread_scope_device>(out[0]), v, cg::plus<int>());
    cg::reduce_update_async(tile, cuda::atomic_ref<int, cuda::thread_scope_device>(out[1]), v, cg::greater<int>());
    cg::reduce_store_async(tile, out + 2 + v / 8, v, cg::plus<int>());
}
