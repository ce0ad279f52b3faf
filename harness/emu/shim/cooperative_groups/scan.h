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

template <class G, class T, class Op>
static __inline__ auto inclusive_scan(const G &g, T &&val, Op &&op, hn_emu_site at = HN_EMU_HERE)
    -> decltype(op(val, val)) {
    constexpr unsigned kind = hn_emu_cg_kind<hn_emu_rq<G>>();
    static_assert(kind != 0, "This group does not exclusively represent a tile (cooperative_groups "
                             "scans take a thread_block_tile or a coalesced_group)");
    hn_emu_rq<T> out = val;
    return hn_emu_cg_scan<kind>(g.hn_emu_mask(), out, op, HN_EMU_API_SCAN, at);
}

template <class G, class T>
static __inline__ hn_emu_rq<T> inclusive_scan(const G &g, T &&val, hn_emu_site at = HN_EMU_HERE) {
    return inclusive_scan(g, std::forward<T>(val), plus<hn_emu_rq<T>>(), at);
}

template <class G, class T, class Op>
static __inline__ auto exclusive_scan(const G &g, T &&val, Op &&op, hn_emu_site at = HN_EMU_HERE)
    -> decltype(op(val, val)) {
    constexpr unsigned kind = hn_emu_cg_kind<hn_emu_rq<G>>();
    using V = hn_emu_rq<T>;
    V v = val;
    V r = inclusive_scan(g, v, op, at);
    if constexpr (std::is_same<hn_emu_rq<Op>, plus<V>>::value && std::is_integral<V>::value) {
        return r - v;
    } else {
        unsigned mask = g.hn_emu_mask();
        V up = hn_emu_cg_up<kind>(mask, r, 1, HN_EMU_API_SCAN, at);
        if (__builtin_popcount(mask & hn_emu_cg_lanemask_lt()) == 0) return V{};
        return up;
    }
}

template <class G, class T>
static __inline__ hn_emu_rq<T> exclusive_scan(const G &g, T &&val, hn_emu_site at = HN_EMU_HERE) {
    return exclusive_scan(g, std::forward<T>(val), plus<hn_emu_rq<T>>(), at);
}

} // namespace cooperative_groups

#endif
