/* hn_emu_atomic.h: libcu++'s cuda::atomic_ref and cuda::atomic (<cuda/atomic>), and
 * cuda::std::atomic_ref (<cuda/std/atomic>), for the CPU emulator.
 *
 * Every operation is the host's sequentially consistent atomic (whatever order or
 * scope is asked for: stronger than any, so a correct kernel stays correct) and
 * counts as an atomic for the spin detection (hn_emu_spin_tick), so a thread
 * spinning on a load waiting for another thread of its block lets it run, as
 * atomicAdd(p, 0) does. Floating-point read-modify-writes are compare-and-swap
 * loops on the bit pattern, as the shim's atomicAdd(float *). */
#ifndef HN_EMU_ATOMIC_H
#define HN_EMU_ATOMIC_H
#include <atomic>
#include <type_traits>

#include <hn_cuda_std.h>

namespace cuda {
enum thread_scope {
    thread_scope_system = 0,
    thread_scope_device = 1,
    thread_scope_block = 2,
    thread_scope_thread = 3,
};
using std::memory_order;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_consume;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;

/* the operations on *p, shared by atomic_ref and atomic */
template <class _HnT>
struct hn_emu_atomic_ops {
    static_assert(std::is_trivially_copyable<_HnT>::value, "cuda::atomic_ref needs a trivially copyable type");
    static constexpr bool is_always_lock_free = sizeof(_HnT) <= 8;
    static constexpr std::size_t required_alignment = sizeof(_HnT);
    _HnT *hn_p;

    bool is_lock_free() const noexcept { return sizeof(_HnT) <= 8; }
    void store(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        hn_emu_spin_tick();
        __atomic_store(hn_p, &v, __ATOMIC_SEQ_CST);
    }
    _HnT load(memory_order = memory_order_seq_cst) const noexcept {
        hn_emu_spin_tick();
        _HnT r;
        __atomic_load(hn_p, &r, __ATOMIC_SEQ_CST);
        return r;
    }
    operator _HnT() const noexcept { return load(); }
    _HnT exchange(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        hn_emu_spin_tick();
        _HnT r;
        __atomic_exchange(hn_p, &v, &r, __ATOMIC_SEQ_CST);
        return r;
    }
    bool compare_exchange_strong(_HnT &expected, _HnT desired, memory_order = memory_order_seq_cst,
                                 memory_order = memory_order_seq_cst) const noexcept {
        hn_emu_spin_tick();
        return __atomic_compare_exchange(hn_p, &expected, &desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    bool compare_exchange_weak(_HnT &expected, _HnT desired, memory_order o1 = memory_order_seq_cst,
                               memory_order o2 = memory_order_seq_cst) const noexcept {
        return compare_exchange_strong(expected, desired, o1, o2);
    }
    /* f(old) stored in place of old; returns old */
    template <class _HnF>
    _HnT hn_rmw(_HnF f) const noexcept {
        _HnT old = load();
        while (!compare_exchange_strong(old, f(old))) {
        }
        return old;
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_arithmetic<_HnU>::value>>
    _HnT fetch_add(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return (_HnT)(o + v); });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_arithmetic<_HnU>::value>>
    _HnT fetch_sub(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return (_HnT)(o - v); });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_integral<_HnU>::value>>
    _HnT fetch_and(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return (_HnT)(o & v); });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_integral<_HnU>::value>>
    _HnT fetch_or(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return (_HnT)(o | v); });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_integral<_HnU>::value>>
    _HnT fetch_xor(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return (_HnT)(o ^ v); });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_arithmetic<_HnU>::value>>
    _HnT fetch_min(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return v < o ? v : o; });
    }
    template <class _HnU = _HnT, class = std::enable_if_t<std::is_arithmetic<_HnU>::value>>
    _HnT fetch_max(_HnT v, memory_order = memory_order_seq_cst) const noexcept {
        return hn_rmw([v](_HnT o) { return v > o ? v : o; });
    }
    /* C++20's wait: returns once the value differs from old (spinning yields) */
    void wait(_HnT old, memory_order = memory_order_seq_cst) const noexcept {
        for (;;) {
            _HnT v = load();
            if (memcmp(&v, &old, sizeof v) != 0) return;
        }
    }
    void notify_one() const noexcept {}
    void notify_all() const noexcept {}
    _HnT operator++() const noexcept { return fetch_add(1) + 1; }
    _HnT operator++(int) const noexcept { return fetch_add(1); }
    _HnT operator--() const noexcept { return fetch_sub(1) - 1; }
    _HnT operator--(int) const noexcept { return fetch_sub(1); }
    _HnT operator+=(_HnT v) const noexcept { return fetch_add(v) + v; }
    _HnT operator-=(_HnT v) const noexcept { return fetch_sub(v) - v; }
    _HnT operator&=(_HnT v) const noexcept { return fetch_and(v) & v; }
    _HnT operator|=(_HnT v) const noexcept { return fetch_or(v) | v; }
    _HnT operator^=(_HnT v) const noexcept { return fetch_xor(v) ^ v; }
};

template <class _HnT, thread_scope _HnS = thread_scope_system>
struct atomic_ref : hn_emu_atomic_ops<_HnT> {
    typedef _HnT value_type;
    explicit atomic_ref(_HnT &r) noexcept : hn_emu_atomic_ops<_HnT>{&r} {}
    atomic_ref(const atomic_ref &) noexcept = default;
    _HnT operator=(_HnT v) const noexcept {
        this->store(v);
        return v;
    }
    atomic_ref &operator=(const atomic_ref &) = delete;
};

template <class _HnT, thread_scope _HnS = thread_scope_system>
struct atomic : hn_emu_atomic_ops<_HnT> {
    typedef _HnT value_type;
    _HnT hn_v;
    atomic() noexcept : hn_emu_atomic_ops<_HnT>{&hn_v}, hn_v() {}
    constexpr atomic(_HnT v) noexcept : hn_emu_atomic_ops<_HnT>{&hn_v}, hn_v(v) {}
    atomic(const atomic &) = delete;
    atomic &operator=(const atomic &) = delete;
    _HnT operator=(_HnT v) noexcept {
        this->store(v);
        return v;
    }
};
template <thread_scope _HnS = thread_scope_system>
using atomic_flag_scoped = atomic<bool, _HnS>;

static __inline__ void atomic_thread_fence(memory_order, thread_scope = thread_scope_system) noexcept {
    __threadfence();
}
} // namespace cuda

#endif
