/*
 * cooperative_groups/reduce.h: cooperative_groups::reduce for the CPU emulator,
 * over a thread_block_tile<N> (N <= 32) or a coalesced_group, with any operator
 * (cg::plus, less, greater, bit_and, bit_or, bit_xor or a callable), and
 * reduce_store_async to a plain pointer, reduce_update_async and
 * reduce_store_async to a cuda::atomic_ref or cuda::atomic (<cuda/atomic>, which CUDA's
 * header includes too).
 *
 * Invariants: the combining order is CUDA's (a butterfly of shfl_xor from N/2
 * down to 1; for a coalesced group that is not a whole warp, a scan then a
 * broadcast from the last lane), so floating-point results round as on a GPU.
 * Integers of at most 4 bytes with CUDA's operators take the emulator's
 * __reduce_*_sync (one collective instead of log2 N), which CUDA uses too and
 * whose results are the same. Each collective carries the user's call site.
 * A thread_block is refused, as by CUDA ("does not exclusively represent a tile").
 */
#ifndef HN_EMU_CG_REDUCE_H
#define HN_EMU_CG_REDUCE_H

#include "hn_emu_functional.h"
#include <hn_emu_atomic.h>

namespace cooperative_groups {

/* The __reduce_*_sync op for (Op, T), or -1 when there is none. */
template <class _HnOp, class _HnT>
constexpr int hn_emu_redux_op() {
    using _HnU = hn_emu_rq<_HnT>;
    if constexpr (!std::is_integral<_HnU>::value || std::is_same<_HnU, bool>::value || sizeof(_HnU) > 4) {
        return -1;
    } else {
        using _HnO = hn_emu_rq<_HnOp>;
        constexpr bool sgn = std::is_signed<_HnU>::value;
        return std::is_same<_HnO, plus<_HnU>>::value ? HN_EMU_OP_REDUCE_ADD
               : std::is_same<_HnO, less<_HnU>>::value
                   ? (sgn ? HN_EMU_OP_REDUCE_MIN_S : HN_EMU_OP_REDUCE_MIN_U)
               : std::is_same<_HnO, greater<_HnU>>::value
                   ? (sgn ? HN_EMU_OP_REDUCE_MAX_S : HN_EMU_OP_REDUCE_MAX_U)
               : std::is_same<_HnO, bit_and<_HnU>>::value ? HN_EMU_OP_REDUCE_AND
               : std::is_same<_HnO, bit_or<_HnU>>::value  ? HN_EMU_OP_REDUCE_OR
               : std::is_same<_HnO, bit_xor<_HnU>>::value ? HN_EMU_OP_REDUCE_XOR
                                                    : -1;
    }
}

template <class _HnG, class _HnT, class _HnOp>
static __inline__ auto reduce(const _HnG &g, _HnT &&val, _HnOp &&op, hn_emu_site at = HN_EMU_HERE)
    -> decltype(op(val, val)) {
    constexpr unsigned kind = hn_emu_cg_kind<hn_emu_rq<_HnG>>();
    static_assert(kind != 0,
                  "This group does not exclusively represent a tile (cooperative_groups::"
                  "reduce takes a thread_block_tile or a coalesced_group)");
    using _HnV = hn_emu_rq<_HnT>;
    const int api = HN_EMU_API_REDUCE;
    unsigned mask = g.hn_emu_mask();
    _HnV out = val;
    constexpr int redux = hn_emu_redux_op<_HnOp, _HnV>();
    if constexpr (redux >= 0) {
        unsigned long long b = std::is_signed<_HnV>::value ? (unsigned)(int)out : (unsigned)out;
        unsigned r = (unsigned)hn_emu_coll_at(redux, api, mask, b, 0, 32, at);
        if constexpr (std::is_signed<_HnV>::value)
            return (_HnV)(int)r;
        else
            return (_HnV)r;
    } else if constexpr (kind <= 32) {
        for (unsigned m = kind >> 1; m > 0; m >>= 1)
            out =
                op(out, hn_emu_cg_shfl(HN_EMU_OP_SHFL_XOR, api, mask, out, (int)m, (int)kind, at));
        return out;
    } else {
        if (mask == 0xffffffffu) {
            for (unsigned m = 16; m > 0; m >>= 1)
                out = op(out, hn_emu_cg_shfl(HN_EMU_OP_SHFL_XOR, api, mask, out, (int)m, 32, at));
            return out;
        }
        _HnV scan = hn_emu_cg_scan<kind>(mask, out, op, api, at);
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL, api, mask, scan, 31 - __builtin_clz(mask), 32, at);
    }
}

/* reduce, then the group's rank 0 stores the result at dst */
template <class _HnG, class _HnTyDst, class _HnT, class _HnOp>
static __inline__ void reduce_store_async(const _HnG &g, _HnTyDst *dst, _HnT &&val, _HnOp &&op,
                                          hn_emu_site at = HN_EMU_HERE) {
    auto r = reduce(g, std::forward<_HnT>(val), std::forward<_HnOp>(op), at);
    if (g.thread_rank() == 0) *dst = r;
}

/* reduce, then rank 0 stores the result in the atomic */
template <class _HnG, class _HnTyDst, ::cuda::thread_scope _HnS, class _HnT, class _HnOp>
static __inline__ void reduce_store_async(const _HnG &g, const ::cuda::atomic_ref<_HnTyDst, _HnS> &dst, _HnT &&val,
                                          _HnOp &&op, hn_emu_site at = HN_EMU_HERE) {
    auto r = reduce(g, std::forward<_HnT>(val), std::forward<_HnOp>(op), at);
    if (g.thread_rank() == 0) dst.store(r);
}
template <class _HnG, class _HnTyDst, ::cuda::thread_scope _HnS, class _HnT, class _HnOp>
static __inline__ void reduce_store_async(const _HnG &g, ::cuda::atomic<_HnTyDst, _HnS> &dst, _HnT &&val,
                                          _HnOp &&op, hn_emu_site at = HN_EMU_HERE) {
    auto r = reduce(g, std::forward<_HnT>(val), std::forward<_HnOp>(op), at);
    if (g.thread_rank() == 0) dst.store(r);
}

/* reduce, then rank 0 combines the result into the atomic with op (one
 * read-modify-write, as CUDA's fetch_op) */
template <class _HnG, class _HnTyDst, class _HnT, class _HnOp>
static __inline__ void hn_emu_reduce_update(const _HnG &g, const ::cuda::hn_emu_atomic_ops<_HnTyDst> &dst,
                                            _HnT &&val, _HnOp &&op, hn_emu_site at) {
    auto r = reduce(g, std::forward<_HnT>(val), op, at);
    if (g.thread_rank() == 0) dst.hn_rmw([&](_HnTyDst o) { return (_HnTyDst)op(o, r); });
}
template <class _HnG, class _HnTyDst, ::cuda::thread_scope _HnS, class _HnT, class _HnOp>
static __inline__ void reduce_update_async(const _HnG &g, const ::cuda::atomic_ref<_HnTyDst, _HnS> &dst,
                                           _HnT &&val, _HnOp &&op, hn_emu_site at = HN_EMU_HERE) {
    hn_emu_reduce_update(g, dst, std::forward<_HnT>(val), std::forward<_HnOp>(op), at);
}
template <class _HnG, class _HnTyDst, ::cuda::thread_scope _HnS, class _HnT, class _HnOp>
static __inline__ void reduce_update_async(const _HnG &g, ::cuda::atomic<_HnTyDst, _HnS> &dst, _HnT &&val,
                                           _HnOp &&op, hn_emu_site at = HN_EMU_HERE) {
    hn_emu_reduce_update(g, dst, std::forward<_HnT>(val), std::forward<_HnOp>(op), at);
}

} // namespace cooperative_groups

#endif
