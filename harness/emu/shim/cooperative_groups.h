/*
 * cooperative_groups.h: CUDA's cooperative groups for the CPU emulator (the
 * common subset), mapped onto the emulator's barrier and warp collectives.
 *
 *   thread_block          this_thread_block(): sync() (a __syncthreads),
 *                         thread_rank, size/num_threads, group_index,
 *                         thread_index, group_dim, dim_threads,
 *                         barrier_arrive/barrier_wait
 *   thread_block_tile<N>  tiled_partition<N>(block or tile), N = 1, 2, 4 ... 32:
 *                         N consecutive lanes of one warp. sync (a __syncwarp on
 *                         the tile's lanes), shfl, shfl_up, shfl_down, shfl_xor
 *                         (width N, so no shuffle leaves its tile; any trivially
 *                         copyable type), any, all, ballot, match_any, match_all
 *                         (bits relative to the tile, as CUDA's), thread_rank,
 *                         size/num_threads, meta_group_rank, meta_group_size
 *   thread_group          tiled_partition(parent, n) for n = 1 ... 32 (the last
 *                         tile is shorter when the parent's size is not a multiple
 *                         of n): sync, thread_rank, size, num_threads; the base of
 *                         every group, as in CUDA
 *   coalesced_group       coalesced_threads(), binary_partition,
 *                         labeled_partition, tiled_partition(coalesced, n): sync,
 *                         shfl (by rank), shfl_up, shfl_down, any, all, ballot,
 *                         match_any, match_all (bits by rank), thread_rank, size
 *   grid_group            this_grid(): ranks and dimensions (no sync)
 *   this_thread(), sync(g), thread_rank(g), group_size(g), invoke_one(g, f, ...)
 *   reduce, inclusive_scan, exclusive_scan: cooperative_groups/reduce.h, scan.h
 *
 * Invariants and rules:
 *   - Every collective passes the user's call site (hn_emu_site, from a default
 *     last argument; see hn_emu.h for why and how the id stays distinct per
 *     site), so a fault names the user's line, and the API that made the call
 *     (HN_EMU_API_*), so it names thread_block_tile::shfl, not __shfl_sync.
 *   - A thread_block_tile<N> is the lanes [k*N, k*N+N) of a warp, k = lane / N;
 *     its collectives use that mask and width N, as CUDA's do. CUDA requires the
 *     block's size to be a multiple of N for tiled_partition<N>; if it is not,
 *     the last tile's collectives name lanes that do not exist, and the emulator
 *     reports that. The dynamic tiled_partition(g, n) trims the last tile instead.
 *   - coalesced_threads() cannot know which lanes a GPU would run together; the
 *     runtime waits until no other lane of the warp can run and groups the lanes
 *     that called it at the same site (HN_EMU_OP_COALESCE, emu_sched.c).
 *   - What the emulator cannot run fails to compile where it is used, with a
 *     static_assert naming it: grid_group::sync (this_grid().sync()) and the
 *     grid's barrier_arrive/wait, this_multi_grid, cluster groups
 *     (this_cluster), tiles of more than 32 threads. memcpy_async, wait and
 *     wait_prior are built on cuda_pipeline.h (below). A grid_group passed as a thread_group and synced fails at run
 *     time with a message instead.
 *
 * Everything private uses the hn_emu_ prefix.
 */
#ifndef HN_EMU_COOPERATIVE_GROUPS_H
#define HN_EMU_COOPERATIVE_GROUPS_H

#include "hn_emu.h"
#include "cuda_pipeline.h" /* memcpy_async queues pipeline copies */

/* cuda::aligned_size_t (libcu++'s <cuda/barrier>), for memcpy_async: a byte
 * count whose alignment the caller promises. */
namespace cuda {
#ifndef HN_EMU_ALIGNED_SIZE_T
#define HN_EMU_ALIGNED_SIZE_T
template <size_t _HnAlign>
struct aligned_size_t {
    static constexpr size_t align = _HnAlign;
    size_t value;
    constexpr explicit aligned_size_t(size_t v) : value(v) {}
    constexpr operator size_t() const { return value; }
};
#endif
} // namespace cuda

namespace cooperative_groups {

/* ------------------------------------------------------------------------- */
/* helpers */

static __inline__ unsigned hn_emu_cg_linear() { return hn_emu_self()->linear; }
static __inline__ unsigned hn_emu_cg_lane() {
    return hn_emu_self()->linear & (HN_EMU_WARP_SIZE - 1);
}
/* the lanes below the caller's */
static __inline__ unsigned hn_emu_cg_lanemask_lt() { return (1u << hn_emu_cg_lane()) - 1u; }
/* The lane of the n-th (from 0) set bit of mask; 32 if there is none. */
static __inline__ unsigned hn_emu_cg_nth_lane(unsigned mask, unsigned n) {
    for (unsigned l = 0; l < 32; l++)
        if (mask >> l & 1u) {
            if (n == 0) return l;
            n--;
        }
    return 32;
}
/* The bits of lane_bits that are in mask, packed by rank in mask. */
static __inline__ unsigned hn_emu_cg_pack(unsigned mask, unsigned lane_bits) {
    unsigned r = 0, rank = 0;
    for (unsigned l = 0; l < 32; l++)
        if (mask >> l & 1u) {
            if (lane_bits >> l & 1u) r |= 1u << rank;
            rank++;
        }
    return r;
}

/* A shuffle of any trivially copyable value, 8 bytes per collective. */
template <class _HnT>
static __inline__ _HnT hn_emu_cg_shfl(int op, int api, unsigned mask, const _HnT &v, int param, int width,
                                   const hn_emu_site &at) {
    static_assert(std::is_trivially_copyable<_HnT>::value,
                  "cooperative groups shuffles take trivially copyable values");
    unsigned long long w[(sizeof(_HnT) + 7) / 8] = {};
    memcpy(w, &v, sizeof v);
    for (unsigned long long &x : w) x = hn_emu_coll_at(op, api, mask, x, param, width, at);
    typename std::aligned_storage<sizeof(_HnT), alignof(_HnT)>::type r;
    memcpy(&r, w, sizeof(_HnT));
    return *reinterpret_cast<_HnT *>(&r);
}

template <class _HnT>
static __inline__ unsigned long long hn_emu_cg_bits(const _HnT &v) {
    static_assert(sizeof(_HnT) <= 8 && std::is_trivially_copyable<_HnT>::value,
                  "match_any/match_all take values of at most 8 bytes");
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}

/* the kinds of thread_group (what get_type() returns) */
enum : unsigned { hn_emu_cg_coalesced_id = 1, hn_emu_cg_grid_id = 2, hn_emu_cg_block_id = 4 };

/* ------------------------------------------------------------------------- */
/* thread_group: the base of every group */

class thread_group {
  protected:
    unsigned hn_emu_type_; /* hn_emu_cg_*_id */
    int hn_emu_api_; /* HN_EMU_API_TILE or _COALESCED, for messages */
    unsigned hn_emu_mask_; /* the group's lanes of the caller's warp (coalesced kind) */
    unsigned hn_emu_meta_rank_, hn_emu_meta_size_;
    bool hn_emu_tiled_; /* lanes [k*n, k*n+n) of the parent, not any subset */

    thread_group(unsigned type, int api, unsigned mask, unsigned meta_rank, unsigned meta_size,
                 bool tiled)
        : hn_emu_type_(type), hn_emu_api_(api), hn_emu_mask_(mask), hn_emu_meta_rank_(meta_rank),
          hn_emu_meta_size_(meta_size), hn_emu_tiled_(tiled) {}

  public:
    unsigned long long size() const {
        switch (hn_emu_type_) {
        case hn_emu_cg_coalesced_id:
            return (unsigned long long)__builtin_popcount(hn_emu_mask_);
        case hn_emu_cg_block_id:
            return hn_emu_self()->blk->nthreads;
        default: {
            const hn_emu_block *b = hn_emu_self()->blk;
            return (unsigned long long)b->nthreads * b->grid_dim.x * b->grid_dim.y * b->grid_dim.z;
        }
        }
    }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const {
        switch (hn_emu_type_) {
        case hn_emu_cg_coalesced_id:
            return (unsigned long long)__builtin_popcount(hn_emu_mask_ & hn_emu_cg_lanemask_lt());
        case hn_emu_cg_block_id:
            return hn_emu_cg_linear();
        default: {
            const hn_emu_block *b = hn_emu_self()->blk;
            unsigned long long block =
                b->block_idx.x +
                (unsigned long long)b->grid_dim.x *
                    (b->block_idx.y + (unsigned long long)b->grid_dim.y * b->block_idx.z);
            return block * b->nthreads + hn_emu_cg_linear();
        }
        }
    }
    void sync(hn_emu_site at = HN_EMU_HERE) const {
        switch (hn_emu_type_) {
        case hn_emu_cg_coalesced_id:
            (void)hn_emu_coll_at(HN_EMU_OP_SYNCWARP, hn_emu_api_, hn_emu_mask_, 0, 0, 32, at);
            break;
        case hn_emu_cg_block_id:
            (void)hn_emu_coll_at(HN_EMU_OP_SYNCTHREADS, HN_EMU_API_BLOCK, 0, 0, 0, 0, at);
            break;
        default:
            hn_emu_rt_->trap(hn_emu_self(),
                             "grid_group::sync (through a thread_group) is not supported by the "
                             "CPU emulator: it runs a grid's blocks one after another",
                             at.line, at.file);
        }
    }
    unsigned get_type() const { return hn_emu_type_; }
    /* the emulator's own: the group's lanes in the caller's warp; whether they
     * are a tile of the parent; the API named in messages */
    unsigned hn_emu_mask() const { return hn_emu_mask_; }
    bool hn_emu_is_tiled() const { return hn_emu_tiled_; }
    unsigned hn_emu_meta_rank() const { return hn_emu_meta_rank_; }
    unsigned hn_emu_meta_size() const { return hn_emu_meta_size_; }
    void hn_emu_set_api(int api) { hn_emu_api_ = api; }
};

/* ------------------------------------------------------------------------- */
/* thread_block */

class thread_block;
static __inline__ thread_block this_thread_block();

class thread_block : public thread_group {
    friend thread_block this_thread_block();

  protected:
    thread_block() : thread_group(hn_emu_cg_block_id, HN_EMU_API_BLOCK, 0, 0, 1, false) {}

  public:
    static void sync(hn_emu_site at = HN_EMU_HERE) {
        (void)hn_emu_coll_at(HN_EMU_OP_SYNCTHREADS, HN_EMU_API_BLOCK, 0, 0, 0, 0, at);
    }
    struct arrival_token {};
    arrival_token barrier_arrive() const { return arrival_token(); }
    void barrier_wait(arrival_token &&, hn_emu_site at = HN_EMU_HERE) const { sync(at); }
    static unsigned size() { return hn_emu_self()->blk->nthreads; }
    static unsigned num_threads() { return size(); }
    static unsigned thread_rank() { return hn_emu_cg_linear(); }
    static dim3 group_index() { return dim3(blockIdx); }
    static dim3 thread_index() { return dim3(threadIdx); }
    static dim3 group_dim() { return dim3(blockDim); }
    static dim3 dim_threads() { return dim3(blockDim); }
};

static __inline__ thread_block this_thread_block() { return thread_block(); }

/* Scratch for tiles of several warps on GPUs before sm_80; such tiles are not
 * supported here (see thread_block_tile), so this only lets the code compile. */
template <unsigned _HnMaxBlockSize = 1024, unsigned _HnTileCommunicationSize = 8,
          unsigned _HnMaxTileSize = 1024>
struct block_tile_memory {};
template <unsigned _HnM, unsigned _HnC, unsigned _HnT>
static __inline__ thread_block this_thread_block(block_tile_memory<_HnM, _HnC, _HnT> &) {
    return this_thread_block();
}

/* ------------------------------------------------------------------------- */
/* thread_block_tile<Size, ParentT> */

template <unsigned _HnSize, class _HnParentT = void>
class thread_block_tile;

template <unsigned _HnSize>
class hn_emu_tile : public thread_group {
    static_assert(_HnSize <= 32, "harness CPU emulator: thread_block_tile<N> with N > 32 (a tile of "
                              "several warps) is not supported");
    static_assert(_HnSize >= 1 && (_HnSize & (_HnSize - 1)) == 0, "Size must be one of 1/2/4/8/16/32");

  protected:
    /* the tile's lanes: Size consecutive lanes of the caller's warp */
    static unsigned hn_emu_tile_mask() {
        return _HnSize == 32 ? 0xffffffffu
                          : ((1u << (_HnSize & 31)) - 1u) << (hn_emu_cg_lane() & ~(_HnSize - 1));
    }
    static unsigned hn_emu_shift() { return hn_emu_cg_lane() & ~(_HnSize - 1); }
    hn_emu_tile(unsigned meta_rank, unsigned meta_size)
        : thread_group(hn_emu_cg_coalesced_id, HN_EMU_API_TILE, hn_emu_tile_mask(), meta_rank,
                       meta_size, true) {}

  public:
    static void sync(hn_emu_site at = HN_EMU_HERE) {
        (void)hn_emu_coll_at(HN_EMU_OP_SYNCWARP, HN_EMU_API_TILE, hn_emu_tile_mask(), 0, 0, 32, at);
    }
    static constexpr unsigned num_threads() { return _HnSize; }
    static constexpr unsigned size() { return _HnSize; }
    static unsigned thread_rank() { return hn_emu_cg_linear() & (_HnSize - 1); }
    unsigned meta_group_rank() const { return hn_emu_meta_rank_; }
    unsigned meta_group_size() const { return hn_emu_meta_size_; }

    template <class _HnT>
    _HnT shfl(_HnT var, int src_rank, hn_emu_site at = HN_EMU_HERE) const {
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL, HN_EMU_API_TILE, hn_emu_tile_mask(), var, src_rank,
                              (int)_HnSize, at);
    }
    template <class _HnT>
    _HnT shfl_down(_HnT var, unsigned delta, hn_emu_site at = HN_EMU_HERE) const {
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL_DOWN, HN_EMU_API_TILE, hn_emu_tile_mask(), var,
                              (int)delta, (int)_HnSize, at);
    }
    template <class _HnT>
    _HnT shfl_up(_HnT var, unsigned delta, hn_emu_site at = HN_EMU_HERE) const {
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL_UP, HN_EMU_API_TILE, hn_emu_tile_mask(), var,
                              (int)delta, (int)_HnSize, at);
    }
    template <class _HnT>
    _HnT shfl_xor(_HnT var, unsigned lane_mask, hn_emu_site at = HN_EMU_HERE) const {
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL_XOR, HN_EMU_API_TILE, hn_emu_tile_mask(), var,
                              (int)lane_mask, (int)_HnSize, at);
    }
    int any(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        return (int)hn_emu_coll_at(HN_EMU_OP_ANY, HN_EMU_API_TILE, hn_emu_tile_mask(),
                                   predicate != 0, 0, 32, at);
    }
    int all(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        return (int)hn_emu_coll_at(HN_EMU_OP_ALL, HN_EMU_API_TILE, hn_emu_tile_mask(),
                                   predicate != 0, 0, 32, at);
    }
    unsigned ballot(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        unsigned b = (unsigned)hn_emu_coll_at(HN_EMU_OP_BALLOT, HN_EMU_API_TILE, hn_emu_tile_mask(),
                                              predicate != 0, 0, 32, at);
        return b >> hn_emu_shift();
    }
    template <class _HnT>
    unsigned match_any(_HnT val, hn_emu_site at = HN_EMU_HERE) const {
        unsigned m = (unsigned)hn_emu_coll_at(HN_EMU_OP_MATCH_ANY, HN_EMU_API_TILE,
                                              hn_emu_tile_mask(), hn_emu_cg_bits(val), 0, 32, at);
        return m >> hn_emu_shift();
    }
    template <class _HnT>
    unsigned match_all(_HnT val, int &pred, hn_emu_site at = HN_EMU_HERE) const {
        unsigned long long r = hn_emu_coll_at(HN_EMU_OP_MATCH_ALL, HN_EMU_API_TILE,
                                              hn_emu_tile_mask(), hn_emu_cg_bits(val), 0, 32, at);
        pred = (int)(r >> 32);
        return (unsigned)r >> hn_emu_shift();
    }
};

template <unsigned _HnSize, class _HnParentT>
class thread_block_tile : public hn_emu_tile<_HnSize> {
    template <unsigned _HnS, class _HnP>
    friend class thread_block_tile;

  public:
    /* the emulator's own (tiled_partition makes tiles): the caller's tile */
    thread_block_tile(unsigned meta_rank, unsigned meta_size)
        : hn_emu_tile<_HnSize>(meta_rank, meta_size) {}
    /* thread_block_tile<N, Parent> converts to thread_block_tile<N> */
    template <class _HnP>
    thread_block_tile(const thread_block_tile<_HnSize, _HnP> &t)
        : hn_emu_tile<_HnSize>(t.meta_group_rank(), t.meta_group_size()) {}
};

/* which groups are tiles of a static size (0: not one) */
template <class _HnG>
struct hn_emu_tile_size {
    static constexpr unsigned value = 0;
};
template <unsigned _HnN, class _HnP>
struct hn_emu_tile_size<thread_block_tile<_HnN, _HnP>> {
    static constexpr unsigned value = _HnN;
};

template <unsigned _HnSize, class _HnParentT>
static __inline__ thread_block_tile<_HnSize, _HnParentT> tiled_partition(const _HnParentT &parent) {
    if constexpr (std::is_same<_HnParentT, thread_block>::value) {
        (void)parent;
        unsigned n = hn_emu_self()->blk->nthreads;
        return thread_block_tile<_HnSize, _HnParentT>(hn_emu_cg_linear() / _HnSize, (n + _HnSize - 1) / _HnSize);
    } else {
        constexpr unsigned parent_size = hn_emu_tile_size<_HnParentT>::value;
        static_assert(parent_size > 0,
                      "tiled_partition<N>(g): g must be a thread_block or a thread_block_tile");
        static_assert(_HnSize < parent_size, "Tile size bigger or equal to the parent group size");
        return thread_block_tile<_HnSize, _HnParentT>(parent.thread_rank() / _HnSize, parent_size / _HnSize);
    }
}

static __inline__ thread_block_tile<1, void> this_thread() {
    return thread_block_tile<1, void>(0, 1);
}

/* ------------------------------------------------------------------------- */
/* coalesced_group */

class coalesced_group;
static __inline__ coalesced_group coalesced_threads(hn_emu_site at);

class coalesced_group : public thread_group {
  public:
    /* the emulator's own (CUDA's is private): a group of the lanes in mask */
    explicit coalesced_group(unsigned mask, unsigned meta_rank = 0, unsigned meta_size = 1,
                             bool tiled = false)
        : thread_group(hn_emu_cg_coalesced_id, HN_EMU_API_COALESCED, mask, meta_rank, meta_size,
                       tiled) {}

    unsigned num_threads() const { return (unsigned)__builtin_popcount(hn_emu_mask_); }
    unsigned size() const { return num_threads(); }
    unsigned thread_rank() const {
        return (unsigned)__builtin_popcount(hn_emu_mask_ & hn_emu_cg_lanemask_lt());
    }
    unsigned meta_group_rank() const { return hn_emu_meta_rank_; }
    unsigned meta_group_size() const { return hn_emu_meta_size_; }
    void sync(hn_emu_site at = HN_EMU_HERE) const {
        (void)hn_emu_coll_at(HN_EMU_OP_SYNCWARP, HN_EMU_API_COALESCED, hn_emu_mask_, 0, 0, 32, at);
    }
    template <class _HnT>
    _HnT shfl(_HnT var, int src_rank, hn_emu_site at = HN_EMU_HERE) const {
        unsigned lane = hn_emu_cg_nth_lane(hn_emu_mask_, (unsigned)src_rank);
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL, HN_EMU_API_COALESCED, hn_emu_mask_, var, (int)lane,
                              32, at);
    }
    template <class _HnT>
    _HnT shfl_down(_HnT var, unsigned delta, hn_emu_site at = HN_EMU_HERE) const {
        unsigned lane = hn_emu_cg_nth_lane(hn_emu_mask_, thread_rank() + delta);
        if (lane >= 32) lane = hn_emu_cg_lane();
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL, HN_EMU_API_COALESCED, hn_emu_mask_, var, (int)lane,
                              32, at);
    }
    template <class _HnT>
    _HnT shfl_up(_HnT var, int delta, hn_emu_site at = HN_EMU_HERE) const {
        int r = (int)thread_rank() - delta;
        unsigned lane = r >= 0 ? hn_emu_cg_nth_lane(hn_emu_mask_, (unsigned)r) : hn_emu_cg_lane();
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL, HN_EMU_API_COALESCED, hn_emu_mask_, var, (int)lane,
                              32, at);
    }
    int any(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        return (int)hn_emu_coll_at(HN_EMU_OP_ANY, HN_EMU_API_COALESCED, hn_emu_mask_,
                                   predicate != 0, 0, 32, at);
    }
    int all(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        return (int)hn_emu_coll_at(HN_EMU_OP_ALL, HN_EMU_API_COALESCED, hn_emu_mask_,
                                   predicate != 0, 0, 32, at);
    }
    unsigned ballot(int predicate, hn_emu_site at = HN_EMU_HERE) const {
        unsigned b = (unsigned)hn_emu_coll_at(HN_EMU_OP_BALLOT, HN_EMU_API_COALESCED, hn_emu_mask_,
                                              predicate != 0, 0, 32, at);
        return hn_emu_cg_pack(hn_emu_mask_, b);
    }
    template <class _HnT>
    unsigned match_any(_HnT val, hn_emu_site at = HN_EMU_HERE) const {
        unsigned m = (unsigned)hn_emu_coll_at(HN_EMU_OP_MATCH_ANY, HN_EMU_API_COALESCED,
                                              hn_emu_mask_, hn_emu_cg_bits(val), 0, 32, at);
        return hn_emu_cg_pack(hn_emu_mask_, m);
    }
    template <class _HnT>
    unsigned match_all(_HnT val, int &pred, hn_emu_site at = HN_EMU_HERE) const {
        unsigned long long r = hn_emu_coll_at(HN_EMU_OP_MATCH_ALL, HN_EMU_API_COALESCED,
                                              hn_emu_mask_, hn_emu_cg_bits(val), 0, 32, at);
        pred = (int)(r >> 32);
        return hn_emu_cg_pack(hn_emu_mask_, (unsigned)r);
    }
};

/* The lanes of the caller's warp that reach this call together (see the header
 * comment: the runtime waits until the warp has settled). */
static __inline__ coalesced_group coalesced_threads(hn_emu_site at = HN_EMU_HERE) {
    unsigned mask =
        (unsigned)hn_emu_coll_at(HN_EMU_OP_COALESCE, HN_EMU_API_COALESCED, 0, 0, 0, 32, at);
    return coalesced_group(mask);
}

/* ------------------------------------------------------------------------- */
/* partitions */

static __inline__ void hn_emu_cg_check_tile_size(unsigned n, const hn_emu_site &at) {
    if (n == 0 || n > 32 || (n & (n - 1)))
        hn_emu_rt_->trap(hn_emu_self(),
                         "tiled_partition(g, n): n must be 1, 2, 4, 8, 16 or 32 (tiles of "
                         "several warps are not supported)",
                         at.line, at.file);
}

/* tiled_partition(g, n) of a tile or coalesced group: CUDA's
 * coalesced_group::_get_tiled_threads */
static __inline__ coalesced_group hn_emu_cg_tile_of(const thread_group &parent, unsigned n,
                                                    const hn_emu_site &at) {
    hn_emu_cg_check_tile_size(n, at);
    unsigned pmask = parent.hn_emu_mask();
    unsigned psize = (unsigned)__builtin_popcount(pmask);
    unsigned rank = (unsigned)__builtin_popcount(pmask & hn_emu_cg_lanemask_lt());
    if (psize <= n)
        return coalesced_group(pmask, parent.hn_emu_meta_rank(), parent.hn_emu_meta_size(),
                               parent.hn_emu_is_tiled());
    if (parent.hn_emu_is_tiled()) {
        unsigned base = rank & ~(n - 1);
        unsigned len = psize - base < n ? psize - base : n;
        unsigned mask = (0xffffffffu >> (32 - len)) << (hn_emu_cg_lane() & ~(n - 1));
        return coalesced_group(mask, rank / n, psize / n, true);
    }
    unsigned mask = 0, taken = 0;
    int seen = (int)((rank / n) * n);
    for (unsigned l = 0; l < 32; l++) {
        if (!(pmask >> l & 1u)) continue;
        if (seen <= 0 && taken < n) {
            mask |= 1u << l;
            taken++;
        }
        seen--;
    }
    return coalesced_group(mask, rank / n, (psize + n - 1) / n, false);
}

/* tiled_partition(block, n): the last tile is shorter when the block's size is
 * not a multiple of n (CUDA's thread_block::_get_tiled_threads) */
static __inline__ thread_group tiled_partition(const thread_block &parent, unsigned tilesz,
                                               hn_emu_site at = HN_EMU_HERE) {
    hn_emu_cg_check_tile_size(tilesz, at);
    unsigned size = parent.size(), rank = parent.thread_rank();
    unsigned base = rank & ~(tilesz - 1);
    unsigned len = size - base < tilesz ? size - base : tilesz;
    unsigned mask = (0xffffffffu >> (32 - len)) << (hn_emu_cg_lane() & ~(tilesz - 1));
    coalesced_group t(mask, rank / tilesz, (size + tilesz - 1) / tilesz, true);
    t.hn_emu_set_api(HN_EMU_API_TILE);
    return t;
}

static __inline__ coalesced_group tiled_partition(const coalesced_group &parent, unsigned tilesz,
                                                  hn_emu_site at = HN_EMU_HERE) {
    return hn_emu_cg_tile_of(parent, tilesz, at);
}

static __inline__ thread_group tiled_partition(const thread_group &parent, unsigned tilesz,
                                               hn_emu_site at = HN_EMU_HERE) {
    if (parent.get_type() == hn_emu_cg_block_id)
        return tiled_partition(static_cast<const thread_block &>(parent), tilesz, at);
    if (parent.get_type() != hn_emu_cg_coalesced_id)
        hn_emu_rt_->trap(hn_emu_self(), "tiled_partition of a grid_group is not supported", at.line,
                         at.file);
    coalesced_group t = hn_emu_cg_tile_of(parent, tilesz, at);
    t.hn_emu_set_api(HN_EMU_API_TILE);
    return t;
}

/* The lanes of a tile (of at most 32) or coalesced group whose pred agrees with
 * the caller's (CUDA's details::_binary_partition). */
template <class _HnG>
static __inline__ coalesced_group binary_partition(const _HnG &g, bool pred,
                                                   hn_emu_site at = HN_EMU_HERE) {
    static_assert(std::is_base_of<thread_group, _HnG>::value && !std::is_same<_HnG, thread_block>::value,
                  "binary_partition takes a thread_block_tile or a coalesced_group");
    unsigned mask = g.hn_emu_mask();
    unsigned set =
        (unsigned)hn_emu_coll_at(HN_EMU_OP_BALLOT, HN_EMU_API_COALESCED, mask, pred, 0, 32, at);
    if (set == mask || set == 0) return coalesced_group(mask, 0, 1);
    return coalesced_group(mask & (pred ? set : ~set), pred ? 1u : 0u, 2);
}

/* The lanes of a tile or coalesced group with the caller's label (CUDA's
 * details::_labeled_partition_dispatch). */
template <class _HnG, class _HnL>
static __inline__ coalesced_group labeled_partition(const _HnG &g, _HnL label,
                                                    hn_emu_site at = HN_EMU_HERE) {
    static_assert(std::is_integral<_HnL>::value || std::is_pointer<_HnL>::value,
                  "labeled_partition predicate must be an integral or pointer type");
    static_assert(std::is_base_of<thread_group, _HnG>::value && !std::is_same<_HnG, thread_block>::value,
                  "labeled_partition takes a thread_block_tile or a coalesced_group");
    unsigned mask = g.hn_emu_mask();
    unsigned long long b = 0;
    memcpy(&b, &label, sizeof label);
    unsigned sub =
        (unsigned)hn_emu_coll_at(HN_EMU_OP_MATCH_ANY, HN_EMU_API_COALESCED, mask, b, 0, 32, at);
    unsigned leader = (unsigned)__builtin_ctz(sub);
    unsigned leaders = (unsigned)hn_emu_coll_at(HN_EMU_OP_BALLOT, HN_EMU_API_COALESCED, mask,
                                                hn_emu_cg_lane() == leader, 0, 32, at);
    return coalesced_group(sub, (unsigned)__builtin_popcount(leaders & ((1u << leader) - 1u)),
                           (unsigned)__builtin_popcount(leaders));
}

/* ------------------------------------------------------------------------- */
/* grid_group: ranks and dimensions; its sync is refused */

class grid_group;
static __inline__ grid_group this_grid();

class grid_group : public thread_group {
    friend grid_group this_grid();
    grid_group() : thread_group(hn_emu_cg_grid_id, HN_EMU_API_BLOCK, 0, 0, 1, false) {}

  public:
    /* A GPU says whether the grid was launched cooperatively; the emulator's
     * launches never are. */
    bool is_valid() const { return false; }
    template <class... _HnA>
    void sync(_HnA...) const {
        static_assert(hn_emu_false<_HnA...>::value,
                      "harness CPU emulator: grid_group::sync (this_grid().sync(), "
                      "cooperative_groups::sync(grid)) is not supported: the emulator runs a "
                      "grid's blocks one after another, never all at once");
    }
    struct arrival_token {};
    template <class... _HnA>
    arrival_token barrier_arrive(_HnA...) const {
        static_assert(hn_emu_false<_HnA...>::value,
                      "harness CPU emulator: grid_group::barrier_arrive is not supported (a grid "
                      "barrier needs every block running at once)");
        return arrival_token();
    }
    template <class _HnT, class... _HnA>
    void barrier_wait(_HnT &&, _HnA...) const {
        static_assert(hn_emu_false<_HnT, _HnA...>::value,
                      "harness CPU emulator: grid_group::barrier_wait is not supported (a grid "
                      "barrier needs every block running at once)");
    }
    static unsigned long long num_blocks() {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    }
    static unsigned long long block_rank() {
        return blockIdx.x + (unsigned long long)gridDim.x *
                                (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    static unsigned long long num_threads() { return num_blocks() * hn_emu_self()->blk->nthreads; }
    static unsigned long long size() { return num_threads(); }
    static unsigned long long thread_rank() {
        return block_rank() * hn_emu_self()->blk->nthreads + hn_emu_cg_linear();
    }
    static dim3 block_index() { return dim3(blockIdx); }
    static dim3 dim_blocks() { return dim3(gridDim); }
    static dim3 group_dim() { return dim3(gridDim); }
    static dim3 dim_threads() {
        return dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z);
    }
    static dim3 thread_index() {
        return dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                    blockIdx.z * blockDim.z + threadIdx.z);
    }
};

static __inline__ grid_group this_grid() { return grid_group(); }

/* ------------------------------------------------------------------------- */
/* free functions */

template <class _HnG>
static __inline__ void sync(const _HnG &g, hn_emu_site at = HN_EMU_HERE) {
    g.sync(at);
}
template <class _HnG>
static __inline__ auto thread_rank(const _HnG &g) -> decltype(g.thread_rank()) {
    return g.thread_rank();
}
template <class _HnG>
static __inline__ auto group_size(const _HnG &g) -> decltype(g.num_threads()) {
    return g.num_threads();
}

/* Calls fn(args...) on one thread of the group (its rank 0). */
template <class _HnG, class _HnFn, class... _HnArgs>
static __inline__ void invoke_one(const _HnG &g, _HnFn &&fn, _HnArgs &&...args) {
    if (g.thread_rank() == 0) std::forward<_HnFn>(fn)(std::forward<_HnArgs>(args)...);
}

/* ------------------------------------------------------------------------- */
/* what the emulator cannot run */

HN_EMU_UNSUPPORTED(this_multi_grid, "multi-device cooperative launches (multi_grid_group)")
HN_EMU_UNSUPPORTED(this_cluster, "thread block clusters (cluster_group, this_cluster)")
/* ------------------------------------------------------------------------- */
/* memcpy_async, wait, wait_prior
 *
 * As CUDA builds them on the pipeline primitives (cuda_pipeline.h): the
 * group's threads split the bytes into contiguous parts, one per thread rank;
 * each thread reads its part of the source at once and queues it, in pieces
 * of up to 16 bytes, as pending copies of its own, then commits the batch.
 * wait(g) lands every committed batch of the calling thread, wait_prior<N>(g)
 * all but the N most recent, then both sync the group, so every part is in
 * place and visible to the whole group after them. A read of the destination
 * before the wait sees the old bytes, which harness check reports (see
 * cuda_pipeline.h). All threads of the group must call them with the same
 * arguments, as in CUDA. */
template <class _HnG>
static __inline__ __attribute__((always_inline)) void hn_emu_cg_copy(const _HnG &g, void *dst, const void *src,
                                                                    size_t bytes) {
    unsigned long long n = (unsigned long long)g.num_threads(), r = (unsigned long long)g.thread_rank();
    size_t lo = (size_t)(bytes * r / n), hi = (size_t)(bytes * (r + 1) / n);
    for (size_t at = lo; at < hi; at += 16) {
        unsigned piece = (unsigned)(hi - at < 16 ? hi - at : 16);
        hn_emu_pipe_issue((char *)dst + at, (const char *)src + at, piece, 0);
    }
    __pipeline_commit();
}
template <class _HnG, class _HnE>
static __inline__ __attribute__((always_inline)) void memcpy_async(const _HnG &g, _HnE *__restrict__ dst, const _HnE *__restrict__ src,
                                    size_t bytes) {
    hn_emu_cg_copy(g, (void *)dst, (const void *)src, bytes);
}
template <class _HnG, class _HnE, size_t _HnAlign>
static __inline__ __attribute__((always_inline)) void memcpy_async(const _HnG &g, _HnE *__restrict__ dst, const _HnE *__restrict__ src,
                                    const cuda::aligned_size_t<_HnAlign> &bytes) {
    hn_emu_cg_copy(g, (void *)dst, (const void *)src, (size_t)bytes);
}
/* element counts: min(dst_count, src_count) elements */
template <class _HnG, class _HnE>
static __inline__ __attribute__((always_inline)) void memcpy_async(const _HnG &g, _HnE *__restrict__ dst, size_t dst_count,
                                    const _HnE *__restrict__ src, size_t src_count) {
    size_t n = dst_count < src_count ? dst_count : src_count;
    hn_emu_cg_copy(g, (void *)dst, (const void *)src, n * sizeof(_HnE));
}
template <class _HnG>
static __inline__ __attribute__((always_inline)) void wait(const _HnG &g, hn_emu_site at = HN_EMU_HERE) {
    __pipeline_wait_prior(0);
    g.sync(at);
}
template <unsigned _HnN, class _HnG>
static __inline__ __attribute__((always_inline)) void wait_prior(const _HnG &g, hn_emu_site at = HN_EMU_HERE) {
    __pipeline_wait_prior(_HnN);
    g.sync(at);
}
template <class... _HnA>
struct hn_emu_cluster_group {
    static_assert(hn_emu_false<_HnA...>::value,
                  "harness CPU emulator: cluster_group is not supported (thread block clusters)");
};
typedef hn_emu_cluster_group<> cluster_group;
template <class... _HnA>
struct hn_emu_multi_grid_group {
    static_assert(hn_emu_false<_HnA...>::value,
                  "harness CPU emulator: multi_grid_group is not supported (multi-device "
                  "cooperative launches)");
};
typedef hn_emu_multi_grid_group<> multi_grid_group;

} // namespace cooperative_groups

#endif
