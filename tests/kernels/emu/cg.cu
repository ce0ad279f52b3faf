/*
 * cg.cu: cooperative groups kernels for tests/test_emu_cg_half.c, each checked
 * there against a computation in C; they also compile with NVRTC (sm_90).
 *
 *   tile_reduce<N>     cg::reduce over thread_block_tile<N>: int sum, min, max
 *                      and a float sum (CUDA's butterfly order), every lane's result
 *   tile_scan<N>       inclusive_scan / exclusive_scan (plus; greater, whose
 *                      exclusive form shifts and gives rank 0 T{})
 *   tile_shuffle<N>    shfl (to rank 0, to rank+1, wrapping inside the tile),
 *                      shfl_up, shfl_down, shfl_xor: never across tiles
 *   tile_votes<N>      ballot, any, all, match_any, match_all, thread_rank,
 *                      meta_group_rank, meta_group_size, and of a tile of a tile
 *   block_reduce       thread_block: a float sum through tiles of 32, shared
 *                      memory and block.sync() / cg::sync(block); its ranks and
 *                      dimensions
 *   partial_tiles      a block of 100 threads: tiled_partition(block, 16) (the
 *                      last tile has 4 threads), coalesced_threads() and its
 *                      tiled_partition(c, 16) with cg::reduce
 *   aggregate          warp-aggregated atomics: coalesced_threads() in a branch
 *   coalesced_twice    coalesced_threads() twice in a row: the whole warp both times
 *   partitions         binary_partition and labeled_partition of a tile
 *   grid_ranks         this_grid(): thread_rank, block_rank, num_blocks, size
 *   big_shuffle        tile.shfl of a 24-byte struct
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

/* out: (4, threads) ints: sum, min, max, meta_group_rank; fout: float sums */
template <int N>
__global__ void tile_reduce(const int *in, const float *fin, int *out, float *fout) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
    int n = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[i] = cg::reduce(tile, v, cg::plus<int>());
    out[n + i] = cg::reduce(tile, v, cg::less<int>());
    out[2 * n + i] = cg::reduce(tile, v, cg::greater<int>());
    out[3 * n + i] = (int)tile.meta_group_rank();
    fout[i] = cg::reduce(tile, fin[i], cg::plus<float>());
}
template __global__ void tile_reduce<1>(const int *, const float *, int *, float *);
template __global__ void tile_reduce<2>(const int *, const float *, int *, float *);
template __global__ void tile_reduce<4>(const int *, const float *, int *, float *);
template __global__ void tile_reduce<8>(const int *, const float *, int *, float *);
template __global__ void tile_reduce<16>(const int *, const float *, int *, float *);
template __global__ void tile_reduce<32>(const int *, const float *, int *, float *);

/* out: (4, threads): inclusive sum, exclusive sum, inclusive max, exclusive max */
template <int N>
__global__ void tile_scan(const int *in, int *out) {
    auto tile = cg::tiled_partition<N>(cg::this_thread_block());
    int n = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    out[i] = cg::inclusive_scan(tile, v);
    out[n + i] = cg::exclusive_scan(tile, v);
    out[2 * n + i] = cg::inclusive_scan(tile, v, cg::greater<int>());
    out[3 * n + i] = cg::exclusive_scan(tile, v, cg::greater<int>());
}
template __global__ void tile_scan<8>(const int *, int *);
template __global__ void tile_scan<16>(const int *, int *);
template __global__ void tile_scan<32>(const int *, int *);

/* out: (5, threads): shfl(v, 0), shfl(v, rank + 1), shfl_up(v, 1),
 * shfl_down(v, 2), shfl_xor(v, N / 2); v = 1000 + thread id */
template <int N>
__global__ void tile_shuffle(int *out) {
    cg::thread_block_tile<N> tile = cg::tiled_partition<N>(cg::this_thread_block());
    int n = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = 1000 + i;
    out[i] = tile.shfl(v, 0);
    out[n + i] = tile.shfl(v, (int)tile.thread_rank() + 1);
    out[2 * n + i] = tile.shfl_up(v, 1);
    out[3 * n + i] = tile.shfl_down(v, 2);
    out[4 * n + i] = tile.shfl_xor(v, N / 2);
}
template __global__ void tile_shuffle<8>(int *);
template __global__ void tile_shuffle<16>(int *);

/* out: (9, threads) unsigned: ballot, any, all, match_any(v % 3), match_all's
 * mask and pred, thread_rank, meta_group_rank, meta_group_size; sub: (2,
 * threads): meta_group_rank and meta_group_size of tiled_partition<4>(tile) */
template <int N>
__global__ void tile_votes(const int *pred, unsigned *out, unsigned *sub) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<N> tile = cg::tiled_partition<N>(block);
    int n = gridDim.x * blockDim.x;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int p = pred[i];
    out[i] = tile.ballot(p);
    out[n + i] = (unsigned)tile.any(p);
    out[2 * n + i] = (unsigned)tile.all(p);
    out[3 * n + i] = tile.match_any(p % 3);
    int all_same = 0;
    out[4 * n + i] = tile.match_all(p, all_same);
    out[5 * n + i] = (unsigned)all_same;
    out[6 * n + i] = tile.thread_rank();
    out[7 * n + i] = tile.meta_group_rank();
    out[8 * n + i] = tile.meta_group_size();
    cg::thread_block_tile<4> quad = cg::tiled_partition<4>(tile);
    sub[i] = quad.meta_group_rank();
    sub[n + i] = quad.meta_group_size();
}
template __global__ void tile_votes<8>(const int *, unsigned *, unsigned *);
template __global__ void tile_votes<32>(const int *, unsigned *, unsigned *);

/* out[block] = the block's float sum; dims: (6, threads) = thread_rank, size,
 * group_index.x, thread_index.x, group_dim.x, num_threads */
__global__ void block_reduce(const float *in, float *out, unsigned *dims) {
    __shared__ float partial[32];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    float s = cg::reduce(warp, in[i], cg::plus<float>());
    if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = s;
    block.sync();
    if (warp.meta_group_rank() == 0) {
        float p = warp.thread_rank() < warp.meta_group_size() ? partial[warp.thread_rank()] : 0.0f;
        p = cg::reduce(warp, p, cg::plus<float>());
        if (warp.thread_rank() == 0) out[blockIdx.x] = p;
    }
    cg::sync(block);
    dims[i] = block.thread_rank();
    dims[n + i] = block.size();
    dims[2 * n + i] = block.group_index().x;
    dims[3 * n + i] = block.thread_index().x;
    dims[4 * n + i] = block.group_dim().x;
    dims[5 * n + i] = block.num_threads();
}

/* one block of 100 threads; out: (8, 100) = the dynamic tile's size,
 * thread_rank, meta_group_rank; the coalesced group's size; its tile of 16's
 * size, thread_rank, meta_group_rank and sum of in[] */
__global__ void partial_tiles(const int *in, int *out) {
    cg::thread_block block = cg::this_thread_block();
    int i = threadIdx.x, n = blockDim.x;
    cg::thread_group t = cg::tiled_partition(block, 16);
    t.sync();
    out[i] = (int)t.size();
    out[n + i] = (int)t.thread_rank();
    cg::coalesced_group c = cg::coalesced_threads();
    cg::coalesced_group ct = cg::tiled_partition(c, 16);
    out[2 * n + i] = (int)ct.meta_group_rank();
    out[3 * n + i] = (int)c.size();
    out[4 * n + i] = (int)ct.size();
    out[5 * n + i] = (int)ct.thread_rank();
    out[6 * n + i] = cg::reduce(ct, in[i], cg::plus<int>());
    out[7 * n + i] = cg::inclusive_scan(ct, in[i]);
}

/* Warp-aggregated atomics: the flagged threads of a warp take consecutive
 * slots. out: (3, threads) = slot, group size, rank (-1 where not flagged) */
__global__ void aggregate(const int *flags, int *counter, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    out[i] = out[n + i] = out[2 * n + i] = -1;
    if (flags[i]) {
        cg::coalesced_group g = cg::coalesced_threads();
        int base = 0;
        if (g.thread_rank() == 0) base = atomicAdd(counter, (int)g.size());
        base = g.shfl(base, 0);
        out[i] = base + (int)g.thread_rank();
        out[n + i] = (int)g.size();
        out[2 * n + i] = (int)g.thread_rank();
    }
}

/* out: (2, threads) = the sizes of two coalesced groups in a row (every
 * thread runs both: a full warp each time) */
__global__ void coalesced_twice(int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    out[i] = (int)cg::coalesced_threads().size();
    out[n + i] = (int)cg::coalesced_threads().size();
}

/* out: (5, threads) = binary_partition(tile32, p)'s size, thread_rank,
 * meta_group_rank; labeled_partition(tile32, label)'s size and meta_group_size */
__global__ void partitions(const int *pred, const int *label, int *out) {
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    int i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    cg::coalesced_group b = cg::binary_partition(tile, pred[i] != 0);
    out[i] = (int)b.size();
    out[n + i] = (int)b.thread_rank();
    out[2 * n + i] = (int)b.meta_group_rank();
    cg::coalesced_group l = cg::labeled_partition(tile, label[i]);
    out[3 * n + i] = (int)l.size();
    out[4 * n + i] = (int)l.meta_group_size();
}

/* out: (4, threads) = thread_rank, block_rank, num_blocks, num_threads */
__global__ void grid_ranks(unsigned long long *out) {
    cg::grid_group grid = cg::this_grid();
    unsigned long long i = grid.thread_rank(), n = grid.num_threads();
    out[i] = grid.thread_rank();
    out[n + i] = grid.block_rank();
    out[2 * n + i] = grid.num_blocks();
    out[3 * n + i] = grid.num_threads();
}

struct triple {
    double a, b, c;
};

/* out: (3, threads): the fields of the struct of the tile's rank 2 */
__global__ void big_shuffle(double *out) {
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(cg::this_thread_block());
    int i = threadIdx.x, n = blockDim.x;
    triple t = {i * 1.0, i * 2.0, i * 3.0};
    t = tile.shfl(t, 2);
    out[i] = t.a;
    out[n + i] = t.b;
    out[2 * n + i] = t.c;
}
