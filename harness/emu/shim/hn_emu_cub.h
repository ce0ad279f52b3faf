/* hn_emu_cub.h: the part of CUB that kernels compiled with NVRTC use most, for the CPU
 * emulator (<cub/block/block_reduce.cuh>, <cub/block/block_scan.cuh>,
 * <cub/warp/warp_reduce.cuh>, <cub/warp/warp_scan.cuh>; CUB's own headers take PTX
 * paths the host compiler cannot build):
 *   - cub::WarpReduce<T, LOGICAL_WARP_THREADS>: Sum, Reduce (with valid_items);
 *     lane 0 of each logical warp gets the result, combined as CUB's shuffle
 *     reduction does (offsets 1, 2, 4 ...: adjacent pairs first).
 *   - cub::WarpScan<T, LOGICAL_WARP_THREADS>: InclusiveSum, ExclusiveSum,
 *     InclusiveScan, ExclusiveScan (with the warp aggregate).
 *   - cub::BlockReduce<T, X, ALGORITHM, Y, Z>: Sum, Reduce, of one item or an array
 *     per thread, with num_valid; thread 0 gets the result: each warp reduces as
 *     WarpReduce, thread 0 adds the warp totals in order (CUB's default algorithm).
 *   - cub::BlockScan<T, X, ALGORITHM, Y, Z>: ExclusiveSum, InclusiveSum,
 *     ExclusiveScan, InclusiveScan, of one item or an array per thread, with the
 *     block aggregate or a block prefix callback (called by warp 0, lane 0's value
 *     used). The scan runs over the threads' totals in order (exact for integers;
 *     float sums may differ from CUB's in the last bits).
 *   - cub::Sum, cub::Max, cub::Min, cub::ArgMax ... functors (CUB before 3.0), and
 *     the algorithm enums (every algorithm computes the same here).
 * Every call must be made by all threads of the block (block) or logical warp
 * (warp), as in CUB; the block collectives contain __syncthreads. */
#ifndef HN_EMU_CUB_H
#define HN_EMU_CUB_H

#include <functional>

namespace cub {

struct Sum {
    template <class _HnT, class _HnU>
    __device__ auto operator()(const _HnT &a, const _HnU &b) const -> decltype(a + b) { return a + b; }
};
struct Max {
    template <class _HnT>
    __device__ _HnT operator()(const _HnT &a, const _HnT &b) const { return a < b ? b : a; }
};
struct Min {
    template <class _HnT>
    __device__ _HnT operator()(const _HnT &a, const _HnT &b) const { return b < a ? b : a; }
};

enum BlockReduceAlgorithm {
    BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
    BLOCK_REDUCE_RAKING,
    BLOCK_REDUCE_WARP_REDUCTIONS,
    BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC,
};
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

/* lanes [first, first + n) of the warp as a mask */
static __inline__ unsigned hn_cub_lanes(unsigned first, unsigned n) {
    return (n >= 32 ? 0xffffffffu : ((1u << n) - 1u)) << first;
}
/* the calling thread's linear index in the block */
static __inline__ unsigned hn_cub_linear() {
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static __inline__ unsigned hn_cub_block_threads() { return blockDim.x * blockDim.y * blockDim.z; }

/* the logical warp of N lanes holding the caller: its mask (only lanes that
 * exist) and the caller's lane in it */
template <int _HnN>
struct hn_cub_subwarp {
    unsigned mask, lane, size;
    __device__ hn_cub_subwarp() {
        unsigned t = hn_cub_linear(), nt = hn_cub_block_threads();
        unsigned first = t / _HnN * _HnN;
        size = nt - first < (unsigned)_HnN ? nt - first : (unsigned)_HnN;
        lane = t - first;
        mask = hn_cub_lanes(first % 32, size);
    }
};

/* lane 0 of the logical warp gets op over the first `valid` lanes (CUB's order) */
template <int _HnN, class _HnT, class _HnOp>
static __inline__ _HnT hn_cub_warp_reduce(_HnT v, _HnOp op, unsigned valid) {
    hn_cub_subwarp<_HnN> w;
    if (valid > w.size) valid = w.size;
    for (unsigned off = 1; off < (unsigned)_HnN; off *= 2) {
        _HnT o = __shfl_down_sync(w.mask, v, off, _HnN);
        if (w.lane + off < valid) v = op(v, o);
    }
    return v;
}

/* inclusive scan over the logical warp (Hillis-Steele, as CUB's shuffle scan) */
template <int _HnN, class _HnT, class _HnOp>
static __inline__ _HnT hn_cub_warp_scan(_HnT v, _HnOp op, _HnT *aggregate) {
    hn_cub_subwarp<_HnN> w;
    for (unsigned off = 1; off < (unsigned)_HnN; off *= 2) {
        _HnT o = __shfl_up_sync(w.mask, v, off, _HnN);
        if (w.lane >= off) v = op(o, v);
    }
    if (aggregate) *aggregate = __shfl_sync(w.mask, v, w.size - 1, _HnN);
    return v;
}

template <class _HnT, int _HnN = 32, int _HnArch = 0>
class WarpReduce {
  public:
    struct TempStorage {
        _HnT unused;
    };
    __device__ WarpReduce(TempStorage &) {}
    __device__ _HnT Sum(_HnT v) { return hn_cub_warp_reduce<_HnN>(v, Sum_op(), _HnN); }
    __device__ _HnT Sum(_HnT v, int valid) { return hn_cub_warp_reduce<_HnN>(v, Sum_op(), (unsigned)valid); }
    template <class _HnOp>
    __device__ _HnT Reduce(_HnT v, _HnOp op) {
        return hn_cub_warp_reduce<_HnN>(v, op, _HnN);
    }
    template <class _HnOp>
    __device__ _HnT Reduce(_HnT v, _HnOp op, int valid) {
        return hn_cub_warp_reduce<_HnN>(v, op, (unsigned)valid);
    }

  private:
    struct Sum_op {
        __device__ _HnT operator()(const _HnT &a, const _HnT &b) const { return a + b; }
    };
};

template <class _HnT, int _HnN = 32, int _HnArch = 0>
class WarpScan {
  public:
    struct TempStorage {
        _HnT unused;
    };
    __device__ WarpScan(TempStorage &) {}
    __device__ void InclusiveSum(_HnT in, _HnT &out) {
        out = hn_cub_warp_scan<_HnN>(in, ::cub::Sum(), (_HnT *)0);
    }
    __device__ void InclusiveSum(_HnT in, _HnT &out, _HnT &aggregate) {
        out = hn_cub_warp_scan<_HnN>(in, ::cub::Sum(), &aggregate);
    }
    __device__ void ExclusiveSum(_HnT in, _HnT &out) {
        _HnT agg;
        ExclusiveSum(in, out, agg);
    }
    __device__ void ExclusiveSum(_HnT in, _HnT &out, _HnT &aggregate) {
        _HnT inc = hn_cub_warp_scan<_HnN>(in, ::cub::Sum(), &aggregate);
        out = inc - in;
        hn_cub_subwarp<_HnN> w;
        if (w.lane == 0) out = _HnT();
    }
    template <class _HnOp>
    __device__ void InclusiveScan(_HnT in, _HnT &out, _HnOp op) {
        out = hn_cub_warp_scan<_HnN>(in, op, (_HnT *)0);
    }
    template <class _HnOp>
    __device__ void InclusiveScan(_HnT in, _HnT &out, _HnOp op, _HnT &aggregate) {
        out = hn_cub_warp_scan<_HnN>(in, op, &aggregate);
    }
    template <class _HnOp>
    __device__ void ExclusiveScan(_HnT in, _HnT &out, _HnT initial, _HnOp op) {
        _HnT agg;
        ExclusiveScan(in, out, initial, op, agg);
    }
    template <class _HnOp>
    __device__ void ExclusiveScan(_HnT in, _HnT &out, _HnT initial, _HnOp op, _HnT &aggregate) {
        hn_cub_subwarp<_HnN> w;
        _HnT inc = hn_cub_warp_scan<_HnN>(in, op, &aggregate);
        _HnT prev = __shfl_up_sync(w.mask, inc, 1, _HnN);
        out = w.lane == 0 ? initial : op(initial, prev);
    }
};

template <class _HnT, int _HnX, BlockReduceAlgorithm _HnAlg = BLOCK_REDUCE_WARP_REDUCTIONS, int _HnY = 1,
          int _HnZ = 1, int _HnArch = 0>
class BlockReduce {
    static constexpr int kThreads = _HnX * _HnY * _HnZ;
    static constexpr int kWarps = (kThreads + 31) / 32;

  public:
    struct TempStorage {
        _HnT warp_total[kWarps];
    };
    __device__ BlockReduce(TempStorage &t) : tmp(t) {}
    __device__ _HnT Sum(_HnT v) { return Reduce(v, ::cub::Sum(), kThreads); }
    __device__ _HnT Sum(_HnT v, int num_valid) { return Reduce(v, ::cub::Sum(), num_valid); }
    template <int _HnI>
    __device__ _HnT Sum(_HnT (&items)[_HnI]) {
        return Reduce(items, ::cub::Sum());
    }
    template <class _HnOp>
    __device__ _HnT Reduce(_HnT v, _HnOp op) {
        return Reduce(v, op, kThreads);
    }
    template <int _HnI, class _HnOp>
    __device__ _HnT Reduce(_HnT (&items)[_HnI], _HnOp op) {
        _HnT v = items[0];
        for (int i = 1; i < _HnI; i++) v = op(v, items[i]);
        return Reduce(v, op, kThreads);
    }
    /* thread 0 gets op over the first num_valid threads */
    template <class _HnOp>
    __device__ _HnT Reduce(_HnT v, _HnOp op, int num_valid) {
        unsigned t = hn_cub_linear(), warp = t / 32;
        long valid_in_warp = (long)num_valid - (long)warp * 32;
        _HnT w = hn_cub_warp_reduce<32>(v, op, valid_in_warp < 0 ? 0u : (unsigned)valid_in_warp);
        if (t % 32 == 0) tmp.warp_total[warp] = w;
        __syncthreads();
        if (t == 0) {
            int used = (num_valid + 31) / 32;
            for (int i = 1; i < used && i < kWarps; i++) w = op(w, tmp.warp_total[i]);
        }
        return w;
    }

  private:
    TempStorage &tmp;
};

template <class _HnT, int _HnX, BlockScanAlgorithm _HnAlg = BLOCK_SCAN_RAKING, int _HnY = 1, int _HnZ = 1,
          int _HnArch = 0>
class BlockScan {
    static constexpr int kThreads = _HnX * _HnY * _HnZ;

  public:
    struct TempStorage {
        _HnT total[kThreads]; /* each thread's total, then its exclusive prefix */
        _HnT aggregate, prefix;
    };
    __device__ BlockScan(TempStorage &t) : tmp(t) {}

    /* one item */
    __device__ void ExclusiveSum(_HnT in, _HnT &out) { ExclusiveScan(in, out, _HnT(), ::cub::Sum()); }
    __device__ void ExclusiveSum(_HnT in, _HnT &out, _HnT &aggregate) {
        ExclusiveScan(in, out, _HnT(), ::cub::Sum(), aggregate);
    }
    template <class _HnP>
    __device__ void ExclusiveSum(_HnT in, _HnT &out, _HnP &prefix_op) {
        ExclusiveScan(in, out, ::cub::Sum(), prefix_op);
    }
    __device__ void InclusiveSum(_HnT in, _HnT &out) { InclusiveScan(in, out, ::cub::Sum()); }
    __device__ void InclusiveSum(_HnT in, _HnT &out, _HnT &aggregate) { InclusiveScan(in, out, ::cub::Sum(), aggregate); }
    template <class _HnP>
    __device__ void InclusiveSum(_HnT in, _HnT &out, _HnP &prefix_op) {
        InclusiveScan(in, out, ::cub::Sum(), prefix_op);
    }
    template <class _HnOp>
    __device__ void ExclusiveScan(_HnT in, _HnT &out, _HnT initial, _HnOp op) {
        _HnT agg;
        ExclusiveScan(in, out, initial, op, agg);
    }
    template <class _HnOp>
    __device__ void ExclusiveScan(_HnT in, _HnT &out, _HnT initial, _HnOp op, _HnT &aggregate) {
        out = scan(in, op, &initial, aggregate, (NoPrefix *)0);
    }
    template <class _HnOp, class _HnP>
    __device__ void ExclusiveScan(_HnT in, _HnT &out, _HnOp op, _HnP &prefix_op) {
        _HnT agg;
        out = scan(in, op, (const _HnT *)0, agg, &prefix_op);
    }
    template <class _HnOp>
    __device__ void InclusiveScan(_HnT in, _HnT &out, _HnOp op) {
        _HnT agg;
        InclusiveScan(in, out, op, agg);
    }
    template <class _HnOp>
    __device__ void InclusiveScan(_HnT in, _HnT &out, _HnOp op, _HnT &aggregate) {
        _HnT ex = scan(in, op, (const _HnT *)0, aggregate, (NoPrefix *)0);
        out = hn_cub_linear() == 0 ? in : op(ex, in);
    }
    template <class _HnOp, class _HnP>
    __device__ void InclusiveScan(_HnT in, _HnT &out, _HnOp op, _HnP &prefix_op) {
        _HnT agg;
        _HnT ex = scan(in, op, (const _HnT *)0, agg, &prefix_op);
        out = hn_cub_linear() == 0 && !has_prefix ? in : op(ex, in);
    }

    /* ITEMS items per thread, in thread order */
    template <int _HnI>
    __device__ void ExclusiveSum(_HnT (&in)[_HnI], _HnT (&out)[_HnI]) {
        ExclusiveScan(in, out, _HnT(), ::cub::Sum());
    }
    template <int _HnI>
    __device__ void ExclusiveSum(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT &aggregate) {
        ExclusiveScan(in, out, _HnT(), ::cub::Sum(), aggregate);
    }
    template <int _HnI, class _HnP>
    __device__ void ExclusiveSum(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnP &prefix_op) {
        ExclusiveScan(in, out, ::cub::Sum(), prefix_op);
    }
    template <int _HnI>
    __device__ void InclusiveSum(_HnT (&in)[_HnI], _HnT (&out)[_HnI]) {
        InclusiveScan(in, out, ::cub::Sum());
    }
    template <int _HnI>
    __device__ void InclusiveSum(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT &aggregate) {
        InclusiveScan(in, out, ::cub::Sum(), aggregate);
    }
    template <int _HnI, class _HnOp>
    __device__ void ExclusiveScan(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT initial, _HnOp op) {
        _HnT agg;
        ExclusiveScan(in, out, initial, op, agg);
    }
    template <int _HnI, class _HnOp>
    __device__ void ExclusiveScan(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT initial, _HnOp op, _HnT &aggregate) {
        _HnT ex;
        ExclusiveScan(thread_total(in, op), ex, initial, op, aggregate);
        spread_exclusive(in, out, ex, op);
    }
    template <int _HnI, class _HnOp, class _HnP>
    __device__ void ExclusiveScan(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnOp op, _HnP &prefix_op) {
        _HnT ex;
        ExclusiveScan(thread_total(in, op), ex, op, prefix_op);
        spread_exclusive_first(in, out, ex, op, hn_cub_linear() == 0 && !has_prefix);
    }
    template <int _HnI, class _HnOp>
    __device__ void InclusiveScan(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnOp op) {
        _HnT agg;
        InclusiveScan(in, out, op, agg);
    }
    template <int _HnI, class _HnOp>
    __device__ void InclusiveScan(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnOp op, _HnT &aggregate) {
        _HnT ex = scan(thread_total(in, op), op, (const _HnT *)0, aggregate, (NoPrefix *)0);
        bool first = hn_cub_linear() == 0;
        _HnT acc = first ? in[0] : op(ex, in[0]);
        out[0] = acc;
        for (int i = 1; i < _HnI; i++) out[i] = acc = op(acc, in[i]);
    }

  private:
    struct NoPrefix {
        __device__ _HnT operator()(_HnT) { return _HnT(); }
    };
    TempStorage &tmp;
    bool has_prefix = false;

    template <int _HnI, class _HnOp>
    static __device__ _HnT thread_total(_HnT (&in)[_HnI], _HnOp op) {
        _HnT v = in[0];
        for (int i = 1; i < _HnI; i++) v = op(v, in[i]);
        return v;
    }
    template <int _HnI, class _HnOp>
    static __device__ void spread_exclusive(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT ex, _HnOp op) {
        _HnT acc = ex;
        for (int i = 0; i < _HnI; i++) {
            _HnT v = in[i];
            out[i] = acc;
            acc = op(acc, v);
        }
    }
    template <int _HnI, class _HnOp>
    static __device__ void spread_exclusive_first(_HnT (&in)[_HnI], _HnT (&out)[_HnI], _HnT ex, _HnOp op,
                                                  bool no_prefix) {
        if (!no_prefix) return spread_exclusive(in, out, ex, op);
        /* thread 0 without a prefix: out[0] is undefined in CUB; from in[0] on */
        _HnT acc = in[0];
        out[0] = _HnT();
        for (int i = 1; i < _HnI; i++) {
            _HnT v = in[i];
            out[i] = acc;
            acc = op(acc, v);
        }
    }
    /* Each thread's exclusive prefix (op over the threads before it, after
     * `initial` or the callback's prefix when given); aggregate: op over all. */
    template <class _HnOp, class _HnP>
    __device__ _HnT scan(_HnT in, _HnOp op, const _HnT *initial, _HnT &aggregate, _HnP *prefix_op) {
        unsigned t = hn_cub_linear(), n = hn_cub_block_threads();
        tmp.total[t] = in;
        __syncthreads();
        if (t == 0) {
            _HnT acc = tmp.total[0];
            for (unsigned i = 1; i < n; i++) {
                _HnT v = tmp.total[i];
                tmp.total[i] = acc;
                acc = op(acc, v);
            }
            tmp.aggregate = acc;
        }
        __syncthreads();
        aggregate = tmp.aggregate;
        _HnT ex = tmp.total[t];
        if (prefix_op) {
            has_prefix = true;
            if (t < 32) {
                _HnT p = (*prefix_op)(aggregate);
                if (t == 0) tmp.prefix = p;
            }
            __syncthreads();
            _HnT p = tmp.prefix;
            ex = t == 0 ? p : op(p, ex);
            __syncthreads(); /* tmp may be reused at once */
            return ex;
        }
        if (initial) ex = t == 0 ? *initial : op(*initial, ex);
        __syncthreads();
        return ex;
    }
};

} // namespace cub

#endif
