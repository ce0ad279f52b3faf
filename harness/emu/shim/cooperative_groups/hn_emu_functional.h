/*
 * cooperative_groups/hn_emu_functional.h: what reduce.h and scan.h share in the
 * CPU emulator's cooperative groups: the operators (plus, less, greater,
 * bit_and, bit_or, bit_xor, as CUDA's details/functional.h) and the inclusive
 * scan over a tile or a coalesced group.
 *
 * Invariants: the shuffles and the order in which `op` combines values are
 * CUDA's (details/coalesced_reduce.h, coalesced_scan.h), so a float reduction
 * rounds as on a GPU; every collective carries the user's call site `at` and
 * the API (HN_EMU_API_REDUCE or _SCAN) for messages.
 */
#ifndef HN_EMU_CG_FUNCTIONAL_H
#define HN_EMU_CG_FUNCTIONAL_H

#include "../cooperative_groups.h"

namespace cooperative_groups {

template <class _HnTy>
struct plus {
    _HnTy operator()(_HnTy a, _HnTy b) const { return a + b; }
};
template <class _HnTy>
struct less {
    _HnTy operator()(_HnTy a, _HnTy b) const { return (b < a) ? b : a; }
};
template <class _HnTy>
struct greater {
    _HnTy operator()(_HnTy a, _HnTy b) const { return (a < b) ? b : a; }
};
template <class _HnTy>
struct bit_and {
    _HnTy operator()(_HnTy a, _HnTy b) const { return a & b; }
};
template <class _HnTy>
struct bit_or {
    _HnTy operator()(_HnTy a, _HnTy b) const { return a | b; }
};
template <class _HnTy>
struct bit_xor {
    _HnTy operator()(_HnTy a, _HnTy b) const { return a ^ b; }
};

template <class _HnT>
using hn_emu_rq = typename std::remove_cv<typename std::remove_reference<_HnT>::type>::type;

/* What reduce and scan accept: a thread_block_tile (its size) or a
 * coalesced_group (33); 0 for anything else. */
template <class _HnG>
constexpr unsigned hn_emu_cg_kind() {
    return hn_emu_tile_size<_HnG>::value                ? hn_emu_tile_size<_HnG>::value
           : std::is_same<_HnG, coalesced_group>::value ? 33u
                                                     : 0u;
}

/* The group's rank-order predecessor `d` ranks down (its own value when there is
 * none), as thread_block_tile::shfl_up / coalesced_group::shfl_up. */
template <unsigned _HnKind, class _HnT>
static __inline__ _HnT hn_emu_cg_up(unsigned mask, const _HnT &v, unsigned d, int api,
                                 const hn_emu_site &at) {
    if (_HnKind <= 32 || mask == 0xffffffffu)
        return hn_emu_cg_shfl(HN_EMU_OP_SHFL_UP, api, mask, v, (int)d, _HnKind <= 32 ? (int)_HnKind : 32,
                              at);
    unsigned rank = (unsigned)__builtin_popcount(mask & hn_emu_cg_lanemask_lt());
    unsigned src = d <= rank ? hn_emu_cg_nth_lane(mask, rank - d) : hn_emu_cg_lane();
    return hn_emu_cg_shfl(HN_EMU_OP_SHFL, api, mask, v, (int)src, 32, at);
}

/* Inclusive scan by rank (CUDA's inclusive_scan_contiguous and, for a coalesced
 * group that is not a whole warp, inclusive_scan_non_contiguous: the same
 * combining order). */
template <unsigned _HnKind, class _HnT, class _HnOp>
static __inline__ _HnT hn_emu_cg_scan(unsigned mask, _HnT out, _HnOp &op, int api, const hn_emu_site &at) {
    unsigned size = (unsigned)__builtin_popcount(mask);
    unsigned rank = (unsigned)__builtin_popcount(mask & hn_emu_cg_lanemask_lt());
    for (unsigned d = 1; d < size; d <<= 1) {
        _HnT tmp = hn_emu_cg_up<_HnKind>(mask, out, d, api, at);
        if (d <= rank) out = op(out, tmp);
    }
    return out;
}

} // namespace cooperative_groups

#endif
