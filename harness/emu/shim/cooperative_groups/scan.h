/*
 * cooperative_groups/scan.h: cooperative_groups::inclusive_scan and
 * exclusive_scan for the CPU emulator, over a thread_block_tile<N> (N <= 32) or
 * a coalesced_group, with cg::plus (the default) or any operator.
 *
 * Invariants: CUDA's algorithm and combining order (details/coalesced_scan.h):
 * a Hillis-Steele scan with shfl_up; the exclusive scan is `inclusive - val`
 * for integers with plus, else the inclusive result shifted up one rank, with
 * T{} on rank 0. Each collective carries the user's call site.
 */
#ifndef HN_EMU_CG_SCAN_H
#define HN_EMU_CG_SCAN_H

#include "hn_emu_functional.h"

namespace cooperative_groups {

template <class _HnG, class _HnT, class _HnOp>
static __inline__ auto inclusive_scan(const _HnG &g, _HnT &&val, _HnOp &&op, hn_emu_site at = HN_EMU_HERE)
    -> decltype(op(val, val)) {
    constexpr unsigned kind = hn_emu_cg_kind<hn_emu_rq<_HnG>>();
    static_assert(kind != 0, "This group does not exclusively represent a tile (cooperative_groups "
                             "scans take a thread_block_tile or a coalesced_group)");
    hn_emu_rq<_HnT> out = val;
    return hn_emu_cg_scan<kind>(g.hn_emu_mask(), out, op, HN_EMU_API_SCAN, at);
}

template <class _HnG, class _HnT>
static __inline__ hn_emu_rq<_HnT> inclusive_scan(const _HnG &g, _HnT &&val, hn_emu_site at = HN_EMU_HERE) {
    return inclusive_scan(g, std::forward<_HnT>(val), plus<hn_emu_rq<_HnT>>(), at);
}

template <class _HnG, class _HnT, class _HnOp>
static __inline__ auto exclusive_scan(const _HnG &g, _HnT &&val, _HnOp &&op, hn_emu_site at = HN_EMU_HERE)
    -> decltype(op(val, val)) {
    constexpr unsigned kind = hn_emu_cg_kind<hn_emu_rq<_HnG>>();
    using _HnV = hn_emu_rq<_HnT>;
    _HnV v = val;
    _HnV r = inclusive_scan(g, v, op, at);
    if constexpr (std::is_same<hn_emu_rq<_HnOp>, plus<_HnV>>::value && std::is_integral<_HnV>::value) {
        return r - v;
    } else {
        unsigned mask = g.hn_emu_mask();
        _HnV up = hn_emu_cg_up<kind>(mask, r, 1, HN_EMU_API_SCAN, at);
        if (__builtin_popcount(mask & hn_emu_cg_lanemask_lt()) == 0) return _HnV{};
        return up;
    }
}

template <class _HnG, class _HnT>
static __inline__ hn_emu_rq<_HnT> exclusive_scan(const _HnG &g, _HnT &&val, hn_emu_site at = HN_EMU_HERE) {
    return exclusive_scan(g, std::forward<_HnT>(val), plus<hn_emu_rq<_HnT>>(), at);
}

} // namespace cooperative_groups

#endif
