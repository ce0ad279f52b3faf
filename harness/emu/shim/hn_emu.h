/*
 * hn_emu.h: the CUDA device-side API for the CPU emulator, in C++17.
 *
 * The harness force-includes this header (-include) in front of a kernel's .cu
 * file and compiles the pair with the host C++ compiler into a shared object.
 * It supplies the qualifiers (__global__, __device__, __shared__ ...), the
 * built-in variables (threadIdx, blockIdx, blockDim, gridDim, warpSize),
 * barriers, warp intrinsics, atomics, printf, the common math intrinsics and the
 * vector types, all mapped onto the emulator's runtime through hn_emu_abi.h.
 *
 * Invariants and rules:
 *   - Code between scheduling points (barriers, warp collectives, the yields of
 *     spinning atomics) runs without interruption: one emulated thread at a time
 *     per worker OS thread; a block never changes worker.
 *   - __shared__ is `static thread_local`: one copy per worker, hence per block.
 *     `extern __shared__ T x[];` is rewritten by the harness before compiling
 *     (into a pointer at the launch's dynamic shared buffer); it is never seen
 *     here.
 *   - Every barrier and warp collective passes a per-call-site id and the
 *     user's line and file, so divergence can be reported by line: the macros
 *     take __COUNTER__, __LINE__, __FILE__; member functions (cooperative groups)
 *     take the caller's source location from a default argument (hn_emu_site).
 *   - Collectives made on behalf of another API carry its name in the bits of
 *     `op` above HN_EMU_OP_MASK (hn_emu_coll_at), for messages.
 *   - Constructs the emulator cannot run fail to compile with a message naming
 *     them (static_assert in templates below and in cooperative_groups.h, #error
 *     stub headers beside this one, and a token scan in emu_compile.c for inline
 *     asm and <<<...>>>). Beside this header: cooperative_groups.h (and
 *     cooperative_groups/), cuda_fp16.h, cuda_bf16.h, mma.h (nvcuda::wmma) and
 *     cuda_pipeline.h implement those APIs.
 *
 * Everything private uses the hn_emu_ prefix.
 */
#ifndef HN_EMU_H
#define HN_EMU_H

/* Standard headers first: the macros below (printf, __noinline__ ...) must not
 * leak into them. Later #includes of these by the kernel are no-ops. */
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>
#if __cplusplus > 201703L && defined(__has_include)
#if __has_include(<source_location>)
#include <source_location> /* for hn_emu_site */
#endif
#endif

#include "hn_emu_abi.h"

#if !defined(__x86_64__)
#error "the harness CPU emulator supports x86-64 hosts only"
#endif

#define HN_EMU 1
#define __CUDACC__ 1
#define __NVCC__ 1
#define __CUDA_ARCH__ 700

/* ------------------------------------------------------------------------- */
/* qualifiers */

#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __shared__ static thread_local
#define __forceinline__ __inline__ __attribute__((always_inline))
/* libstdc++'s <memory> writes __attribute__((__noinline__)), which this macro
 * would break; the harness defines HN_EMU_NOINLINE only when the kernel's
 * sources use __noinline__, and then <memory> is read first. */
#ifdef HN_EMU_NOINLINE
#include <memory>
#define __noinline__ __attribute__((noinline))
#endif
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(n)
/* __restrict__ is a GNU C++ keyword already. */

#define HN_EMU_EXPORT extern "C" __attribute__((visibility("default")))

/* ------------------------------------------------------------------------- */
/* the runtime link: set once by hn_emu_module_init */

inline const hn_emu_rt *hn_emu_rt_ = nullptr;
inline long hn_emu_tls_off_ = 0;

/* Reads of the runtime's own state (the %fs offset, the thread's indices): in
 * an instrumented module (HN_EMU_INSTRUMENTED, see emu_compile.c) through an
 * asm operand, which the instrumentation does not see, so only the kernel's
 * own loads and stores reach the sanitizer and the profile. */
#ifdef HN_EMU_INSTRUMENTED
template <class _HnT>
static __inline__ __attribute__((always_inline)) _HnT hn_emu_peek(const _HnT &x) {
    static_assert(sizeof(_HnT) == 4 || sizeof(_HnT) == 8, "a 4- or 8-byte value");
    _HnT v;
    __asm__("mov %1, %0" : "=r"(v) : "m"(x));
    return v;
}
#define HN_EMU_PEEK(x) hn_emu_peek(x)
#else
#define HN_EMU_PEEK(x) (x)
#endif

/* The running emulated thread. The runtime keeps its pointer in a thread-local
 * of the harness at a fixed offset from %fs; it is constant for the life of an
 * emulated thread, so the compiler may reuse the value. */
static __inline__ __attribute__((always_inline)) hn_emu_tctx *hn_emu_self() {
    hn_emu_tctx *p;
    __asm__("movq %%fs:(%1), %0" : "=r"(p) : "r"(HN_EMU_PEEK(hn_emu_tls_off_)));
    return p;
}

HN_EMU_EXPORT int hn_emu_module_abi(void) {
    return HN_EMU_ABI_VERSION;
}

HN_EMU_EXPORT void hn_emu_module_init(const hn_emu_rt *rt, long tls_offset) {
    hn_emu_rt_ = rt;
    hn_emu_tls_off_ = tls_offset;
}

#ifdef HN_EMU_INSTRUMENTED
/* Called by the callback stub before every volatile load and store. The thread
 * yields, so the other ready threads of the block make their own next access
 * first: a warp's lanes take turns access by access, as in SIMT lockstep, and
 * the pre-Volta warp-synchronous code through volatile shared memory (the
 * classic `warpReduce(volatile float *s, tid)` without __syncwarp) computes
 * what a GPU computes. A module whose source uses `volatile` is always built
 * instrumented for this (emu_compile.c). */
extern "C" __attribute__((visibility("hidden"), noinline)) void hn_emu_volatile_step(void *pc) {
    hn_emu_tctx *s = hn_emu_self();
    if (s) HN_EMU_PEEK(hn_emu_rt_)->yield_at(s, pc);
}
/* Called by the stub for an access whose type wants 16-byte alignment or more
 * at an address without it, outside a sanitized launch: fails as the plain
 * module's aligned vector instruction does (a general-protection fault, which
 * the runtime reports as a misaligned vector access at the user's line). */
extern "C" __attribute__((visibility("hidden"), noinline)) void hn_emu_misaligned_vector(const void *p) {
    __asm__ volatile("movaps (%0), %%xmm0" : : "r"(p) : "xmm0", "memory");
}
#endif

static __inline__ void *hn_emu_dyn_shared() {
    return HN_EMU_PEEK(HN_EMU_PEEK(hn_emu_self()->blk)->dyn_shared);
}

/* Storage of one static __shared__ variable for the running block: the harness
 * rewrites `__shared__ T x[N];` in the kernel's file into a thread_local
 * reference bound, on each worker's first use, to what this returns (see
 * emu_source.h); declarations it does not rewrite (in headers, made by macros)
 * keep the `static thread_local` of the __shared__ macro below. */
static __inline__ void *hn_emu_static_shared(unsigned long size, unsigned long align, int line,
                                             const char *file, const char *name) {
    return hn_emu_rt_->static_shared(hn_emu_self(), size, align, line, file, name);
}

/* ------------------------------------------------------------------------- */
/* vector types and dim3 */

typedef struct hn_emu_u3 uint3;

#define HN_EMU_VEC1(_HnT, N)                                                                   \
    struct N##1 {                                                                           \
        _HnT x;                                                                                \
    };                                                                                      \
    static __inline__ N##1 make_##N##1(_HnT x) {                                               \
        N##1 v = {x};                                                                       \
        return v;                                                                           \
    }
#define HN_EMU_VEC2(_HnT, N, _HnA)                                                                \
    struct __attribute__((aligned(_HnA))) N##2 {                                               \
        _HnT x, y;                                                                             \
    };                                                                                      \
    static __inline__ N##2 make_##N##2(_HnT x, _HnT y) {                                          \
        N##2 v = {x, y};                                                                    \
        return v;                                                                           \
    }
#define HN_EMU_VEC3(_HnT, N)                                                                   \
    struct N##3 {                                                                           \
        _HnT x, y, z;                                                                          \
    };                                                                                      \
    static __inline__ N##3 make_##N##3(_HnT x, _HnT y, _HnT z) {                                     \
        N##3 v = {x, y, z};                                                                 \
        return v;                                                                           \
    }
#define HN_EMU_VEC4(_HnT, N, _HnA)                                                                \
    struct __attribute__((aligned(_HnA))) N##4 {                                               \
        _HnT x, y, z, w;                                                                       \
    };                                                                                      \
    static __inline__ N##4 make_##N##4(_HnT x, _HnT y, _HnT z, _HnT w) {                                \
        N##4 v = {x, y, z, w};                                                              \
        return v;                                                                           \
    }
#define HN_EMU_VECS(_HnT, N, A2, A4)                                                           \
    HN_EMU_VEC1(_HnT, N) HN_EMU_VEC2(_HnT, N, A2) HN_EMU_VEC3(_HnT, N) HN_EMU_VEC4(_HnT, N, A4)

HN_EMU_VECS(signed char, char, 2, 4)
HN_EMU_VECS(unsigned char, uchar, 2, 4)
HN_EMU_VECS(short, short, 4, 8)
HN_EMU_VECS(unsigned short, ushort, 4, 8)
HN_EMU_VECS(int, int, 8, 16)
HN_EMU_VECS(long, long, 16, 16)
HN_EMU_VECS(unsigned long, ulong, 16, 16)
HN_EMU_VECS(long long, longlong, 16, 16)
HN_EMU_VECS(unsigned long long, ulonglong, 16, 16)
HN_EMU_VECS(float, float, 8, 16)
HN_EMU_VECS(double, double, 16, 16)
HN_EMU_VEC1(unsigned int, uint)
HN_EMU_VEC2(unsigned int, uint, 8)
HN_EMU_VEC4(unsigned int, uint, 16)
static __inline__ uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
    uint3 v = {x, y, z};
    return v;
}

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const {
        return uint3{x, y, z};
    }
};

/* ------------------------------------------------------------------------- */
/* built-in variables */

#ifdef HN_EMU_INSTRUMENTED
static __inline__ __attribute__((always_inline)) uint3 hn_emu_peek3(const uint3 &v) {
    return uint3{hn_emu_peek(v.x), hn_emu_peek(v.y), hn_emu_peek(v.z)};
}
#define threadIdx (hn_emu_peek3(hn_emu_self()->tid))
#define blockIdx (hn_emu_peek3(hn_emu_peek(hn_emu_self()->blk)->block_idx))
#define blockDim (hn_emu_peek3(hn_emu_peek(hn_emu_self()->blk)->block_dim))
#define gridDim (hn_emu_peek3(hn_emu_peek(hn_emu_self()->blk)->grid_dim))
#else
#define threadIdx (static_cast<const uint3 &>(hn_emu_self()->tid))
#define blockIdx (static_cast<const uint3 &>(hn_emu_self()->blk->block_idx))
#define blockDim (static_cast<const uint3 &>(hn_emu_self()->blk->block_dim))
#define gridDim (static_cast<const uint3 &>(hn_emu_self()->blk->grid_dim))
#endif
static constexpr int warpSize = HN_EMU_WARP_SIZE;

/* ------------------------------------------------------------------------- */
/* barriers and warp collectives */

static __inline__ unsigned long long hn_emu_coll(int op, unsigned mask, unsigned long long v,
                                                 int param, int width, int site, int line,
                                                 const char *file) {
    return HN_EMU_PEEK(hn_emu_rt_)->collective(hn_emu_self(), op, mask, v, param, width, site, line, file);
}

#define __syncthreads()                                                                     \
    ((void)hn_emu_coll(HN_EMU_OP_SYNCTHREADS, 0u, 0ull, 0, 0, __COUNTER__, __LINE__, __FILE__))
#define __syncthreads_count(p)                                                              \
    ((int)hn_emu_coll(HN_EMU_OP_SYNCTHREADS_COUNT, 0u, (p) ? 1ull : 0ull, 0, 0, __COUNTER__,  \
                      __LINE__, __FILE__))
#define __syncthreads_and(p)                                                                \
    ((int)hn_emu_coll(HN_EMU_OP_SYNCTHREADS_AND, 0u, (p) ? 1ull : 0ull, 0, 0, __COUNTER__,    \
                      __LINE__, __FILE__))
#define __syncthreads_or(p)                                                                 \
    ((int)hn_emu_coll(HN_EMU_OP_SYNCTHREADS_OR, 0u, (p) ? 1ull : 0ull, 0, 0, __COUNTER__,     \
                      __LINE__, __FILE__))

/* Warp intrinsics are macros that capture the call's position and then call a
 * member of this helper, so optional arguments (width, mask) keep working. */
struct hn_emu_warp_at {
    int site, line;
    const char *file;

    template <class _HnT>
    static unsigned long long bits(_HnT v) {
        static_assert(sizeof(_HnT) <= 8 && std::is_trivially_copyable<_HnT>::value,
                      "warp shuffles take trivially copyable values of at most 8 bytes");
        unsigned long long b = 0;
        memcpy(&b, &v, sizeof v);
        return b;
    }
    template <class _HnT>
    static _HnT unbits(unsigned long long b) {
        _HnT v;
        memcpy((void *)&v, &b, sizeof v);
        return v;
    }
    unsigned long long op(int o, unsigned mask, unsigned long long v, int param,
                          int width) const {
        return hn_emu_coll(o, mask, v, param, width, site, line, file);
    }
    template <class _HnT>
    _HnT shfl(unsigned mask, _HnT v, int src, int width = warpSize) const {
        return unbits<_HnT>(op(HN_EMU_OP_SHFL, mask, bits(v), src, width));
    }
    template <class _HnT>
    _HnT shfl_up(unsigned mask, _HnT v, unsigned delta, int width = warpSize) const {
        return unbits<_HnT>(op(HN_EMU_OP_SHFL_UP, mask, bits(v), (int)delta, width));
    }
    template <class _HnT>
    _HnT shfl_down(unsigned mask, _HnT v, unsigned delta, int width = warpSize) const {
        return unbits<_HnT>(op(HN_EMU_OP_SHFL_DOWN, mask, bits(v), (int)delta, width));
    }
    template <class _HnT>
    _HnT shfl_xor(unsigned mask, _HnT v, int lane_mask, int width = warpSize) const {
        return unbits<_HnT>(op(HN_EMU_OP_SHFL_XOR, mask, bits(v), lane_mask, width));
    }
    unsigned ballot(unsigned mask, int pred) const {
        return (unsigned)op(HN_EMU_OP_BALLOT, mask, pred != 0, 0, warpSize);
    }
    int any(unsigned mask, int pred) const {
        return (int)op(HN_EMU_OP_ANY, mask, pred != 0, 0, warpSize);
    }
    int all(unsigned mask, int pred) const {
        return (int)op(HN_EMU_OP_ALL, mask, pred != 0, 0, warpSize);
    }
    void syncwarp(unsigned mask = 0xffffffffu) const {
        (void)op(HN_EMU_OP_SYNCWARP, mask, 0, 0, warpSize);
    }
    unsigned activemask() const {
        return (unsigned)op(HN_EMU_OP_ACTIVEMASK, 0u, 0, 0, warpSize);
    }
    template <class _HnT>
    unsigned match_any(unsigned mask, _HnT v) const {
        return (unsigned)op(HN_EMU_OP_MATCH_ANY, mask, bits(v), 0, warpSize);
    }
    template <class _HnT>
    unsigned match_all(unsigned mask, _HnT v, int *pred) const {
        unsigned long long r = op(HN_EMU_OP_MATCH_ALL, mask, bits(v), 0, warpSize);
        *pred = (int)(r >> 32);
        return (unsigned)r;
    }
    unsigned reduce(int o_unsigned, int o_signed, unsigned mask, unsigned v) const {
        (void)o_signed;
        return (unsigned)op(o_unsigned, mask, v, 0, warpSize);
    }
    int reduce(int o_unsigned, int o_signed, unsigned mask, int v) const {
        (void)o_unsigned;
        return (int)(unsigned)op(o_signed, mask, (unsigned)v, 0, warpSize);
    }
};

#define HN_EMU_WARP hn_emu_warp_at{__COUNTER__, __LINE__, __FILE__}
#define __shfl_sync(...) HN_EMU_WARP.shfl(__VA_ARGS__)
#define __shfl_up_sync(...) HN_EMU_WARP.shfl_up(__VA_ARGS__)
#define __shfl_down_sync(...) HN_EMU_WARP.shfl_down(__VA_ARGS__)
#define __shfl_xor_sync(...) HN_EMU_WARP.shfl_xor(__VA_ARGS__)
#define __ballot_sync(...) HN_EMU_WARP.ballot(__VA_ARGS__)
#define __any_sync(...) HN_EMU_WARP.any(__VA_ARGS__)
#define __all_sync(...) HN_EMU_WARP.all(__VA_ARGS__)
#define __uni_sync(...) HN_EMU_WARP.all(__VA_ARGS__)
#define __syncwarp(...) HN_EMU_WARP.syncwarp(__VA_ARGS__)
#define __activemask() HN_EMU_WARP.activemask()
#define __match_any_sync(...) HN_EMU_WARP.match_any(__VA_ARGS__)
#define __match_all_sync(...) HN_EMU_WARP.match_all(__VA_ARGS__)
#define __reduce_add_sync(m, v) HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_ADD, HN_EMU_OP_REDUCE_ADD, m, v)
#define __reduce_min_sync(m, v)                                                             \
    HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_MIN_U, HN_EMU_OP_REDUCE_MIN_S, m, v)
#define __reduce_max_sync(m, v)                                                             \
    HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_MAX_U, HN_EMU_OP_REDUCE_MAX_S, m, v)
#define __reduce_and_sync(m, v) HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_AND, HN_EMU_OP_REDUCE_AND, m, (unsigned)(v))
#define __reduce_or_sync(m, v) HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_OR, HN_EMU_OP_REDUCE_OR, m, (unsigned)(v))
#define __reduce_xor_sync(m, v) HN_EMU_WARP.reduce(HN_EMU_OP_REDUCE_XOR, HN_EMU_OP_REDUCE_XOR, m, (unsigned)(v))

/* ------------------------------------------------------------------------- */
/* call sites of member functions (cooperative groups)
 *
 * A collective's site id must tell two call sites of the user apart (a barrier
 * reached at two different sites is divergent) and be the same for every thread
 * at one site. The macros above take it from __COUNTER__, but member functions
 * (block.sync(), tile.shfl(v, 0)) and function templates (cg::reduce) cannot be
 * macros. So they take a last parameter `hn_emu_site at = HN_EMU_HERE`: a
 * default argument is evaluated at the caller, so the builtins in it describe
 * the user's call, not the shim's code, and a shim function passes its `at` on
 * to the ones it calls (cg::reduce to tile.shfl_xor, ...).
 *
 * With GCC (11 and later), __builtin_source_location() returns the address of a
 * constant that the compiler emits once per distinct (file, function, line,
 * column); the id is derived from that address. Two call sites differ at least
 * in their column, so they get two constants and two ids; every thread at one
 * site passes the same constant. With clang (__builtin_COLUMN) and in C++20
 * (std::source_location), the id is line * 1024 + column xor a hash of the
 * file name: a bijection within one file, so two sites of one file never share
 * an id (sites in two files could, by a 1 in 2^30 chance). Bit 30 is set in
 * these ids and never in __COUNTER__ values, so they cannot meet the macros'
 * ids. GCC's id is a link-time constant; the hashed one costs a loop over the
 * file name per call (often folded by the compiler), small next to a switch.
 *
 * Limit: two calls inside one expansion of a user's macro share the position of
 * the expansion, hence the id, and the runtime cannot tell them apart (the
 * macros above, with __COUNTER__, can). */
struct hn_emu_site {
    int id, line;
    const char *file;
};
#define HN_EMU_SITE_TAG 0x40000000u

/* The id of (file, line, column) where there is no unique address for it. */
static __inline__ hn_emu_site hn_emu_site_at(const char *file, int line, int column) {
    unsigned h = 2166136261u;
    for (const char *p = file; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    unsigned pos = ((unsigned)line << 10) | ((unsigned)column & 0x3ffu);
    return hn_emu_site{(int)(HN_EMU_SITE_TAG | ((pos ^ h) & 0x3fffffffu)), line, file};
}

#if defined(__cpp_lib_source_location)
/* C++20 (HARNESS_EMU_CXXFLAGS=-std=c++20): the standard way; libstdc++ keeps
 * the constant's address private */
static __inline__ hn_emu_site hn_emu_site_loc(const std::source_location &l) {
    return hn_emu_site_at(l.file_name(), (int)l.line(), (int)l.column());
}
#define HN_EMU_HERE hn_emu_site_loc(std::source_location::current())
#elif defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
/* the type __builtin_source_location() returns a pointer to; libstdc++ declares
 * it in <source_location>, from C++20 on only */
namespace std {
struct source_location {
    struct __impl {
        const char *_M_file_name;
        const char *_M_function_name;
        unsigned _M_line;
        unsigned _M_column;
    };
};
} // namespace std
static __inline__ hn_emu_site hn_emu_site_of(const void *loc) {
    const std::source_location::__impl *l = static_cast<const std::source_location::__impl *>(loc);
    unsigned id = HN_EMU_SITE_TAG | (unsigned)(((unsigned long)loc >> 3) & 0x3fffffffu);
    return hn_emu_site{(int)id, (int)l->_M_line, l->_M_file_name};
}
#define HN_EMU_HERE hn_emu_site_of(__builtin_source_location())
#elif defined(__has_builtin)
#if __has_builtin(__builtin_COLUMN)
#define HN_EMU_HERE hn_emu_site_at(__builtin_FILE(), __builtin_LINE(), __builtin_COLUMN())
#endif
#endif
#ifndef HN_EMU_HERE /* no column: two sites on one line share an id */
#define HN_EMU_HERE hn_emu_site_at(__builtin_FILE(), __builtin_LINE(), 0)
#endif

/* A collective on behalf of `api` (HN_EMU_API_*, for messages) at `at`. */
static __inline__ unsigned long long hn_emu_coll_at(int op, int api, unsigned mask,
                                                    unsigned long long v, int param, int width,
                                                    const hn_emu_site &at) {
    return hn_emu_coll(op | (api << HN_EMU_OP_API_SHIFT), mask, v, param, width, at.id, at.line,
                       at.file);
}

/* ------------------------------------------------------------------------- */
/* fences, spinning, traps, clocks */

/* Counts an atomic; a thread that makes many in a row without reaching a
 * scheduling point is probably spinning on one, so let the others run. */
static __inline__ __attribute__((always_inline)) void hn_emu_spin_tick() {
    hn_emu_tctx *s = hn_emu_self();
    if (__builtin_expect(++s->spins >= HN_EMU_SPIN_LIMIT, 0)) hn_emu_rt_->yield(s);
}

static __inline__ void __threadfence() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    hn_emu_spin_tick();
}
static __inline__ void __threadfence_block() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    hn_emu_spin_tick();
}
static __inline__ void __threadfence_system() {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    hn_emu_spin_tick();
}
static __inline__ void __nanosleep(unsigned int ns) {
    (void)ns;
    hn_emu_rt_->yield(hn_emu_self());
}
static __inline__ long long clock64() {
    return (long long)__builtin_ia32_rdtsc();
}
static __inline__ unsigned long long __globaltimer() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
#if !defined(__clang__)
/* clang's (and NVCC's) optimisation hint; GCC has none: the condition is not evaluated */
#define __builtin_assume(cond) ((void)sizeof((cond) ? 1 : 0))
#endif

/* programmatic dependent launch (sm_90): launches are synchronous here, so the
 * previous grid has always finished and there is nothing to wait for or signal */
static __inline__ void cudaGridDependencySynchronize() {}
static __inline__ void cudaTriggerProgrammaticLaunchCompletion() {}
#define __trap() hn_emu_rt_->trap(hn_emu_self(), "__trap() called", __LINE__, __FILE__)
#define __brkpt() hn_emu_rt_->trap(hn_emu_self(), "__brkpt() called", __LINE__, __FILE__)

/* Device-side assert(): glibc's assert calls __assert_fail; this definition is
 * local to the module (hidden, -Bsymbolic) and fails the launch instead of
 * aborting the harness. */
extern "C" __attribute__((visibility("hidden"), noreturn)) void
__assert_fail(const char *expr, const char *file, unsigned int line, const char *func) noexcept {
    char what[512];
    snprintf(what, sizeof what, "assertion '%s' failed in %s", expr, func);
    hn_emu_rt_->trap(hn_emu_self(), what, (int)line, file);
    __builtin_unreachable();
}

/* ------------------------------------------------------------------------- */
/* atomics (sequentially consistent; float and double by compare-and-swap on the
 * bit pattern) */

/* The loop's first read, outside the sanitizer's instrumentation: the
 * compare-and-swap after it reads the same bytes, and is the one access a
 * finding (an atomicAdd on a never-written output) should name, once. */
template <class _HnU>
__attribute__((noinline, no_sanitize("thread"))) static _HnU hn_emu_cas_first(_HnU *q) {
    return __atomic_load_n(q, __ATOMIC_RELAXED);
}

template <class _HnT, class _HnU, class _HnF>
static __inline__ _HnT hn_emu_cas_loop(_HnT *p, _HnF f) {
    static_assert(sizeof(_HnT) == sizeof(_HnU), "CAS width");
    hn_emu_spin_tick();
    _HnU *q = reinterpret_cast<_HnU *>(p);
    _HnU old = hn_emu_cas_first(q);
    for (;;) {
        _HnT o;
        memcpy((void *)&o, &old, sizeof o);
        _HnT n = f(o);
        _HnU nu;
        memcpy(&nu, &n, sizeof nu);
        if (__atomic_compare_exchange_n(q, &old, nu, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            return o;
    }
}

#define HN_EMU_RMW(NAME, _HnT, BUILTIN)                                                        \
    static __inline__ _HnT NAME(_HnT *p, _HnT v) {                                                   \
        hn_emu_spin_tick();                                                                 \
        return BUILTIN(p, v, __ATOMIC_SEQ_CST);                                             \
    }
#define HN_EMU_RMW_INTS(NAME, BUILTIN)                                                      \
    HN_EMU_RMW(NAME, int, BUILTIN)                                                          \
    HN_EMU_RMW(NAME, unsigned int, BUILTIN)                                                 \
    HN_EMU_RMW(NAME, long, BUILTIN)                                                         \
    HN_EMU_RMW(NAME, unsigned long, BUILTIN)                                                \
    HN_EMU_RMW(NAME, long long, BUILTIN)                                                    \
    HN_EMU_RMW(NAME, unsigned long long, BUILTIN)

HN_EMU_RMW_INTS(atomicAdd, __atomic_fetch_add)
HN_EMU_RMW_INTS(atomicSub, __atomic_fetch_sub)
HN_EMU_RMW_INTS(atomicExch, __atomic_exchange_n)
HN_EMU_RMW_INTS(atomicAnd, __atomic_fetch_and)
HN_EMU_RMW_INTS(atomicOr, __atomic_fetch_or)
HN_EMU_RMW_INTS(atomicXor, __atomic_fetch_xor)

static __inline__ float atomicAdd(float *p, float v) {
    return hn_emu_cas_loop<float, unsigned int>(p, [v](float o) { return o + v; });
}
static __inline__ double atomicAdd(double *p, double v) {
    return hn_emu_cas_loop<double, unsigned long long>(p, [v](double o) { return o + v; });
}
/* sm_90's vector atomicAdd: atomic per element, as CUDA guarantees (not as a whole) */
static __inline__ float2 atomicAdd(float2 *p, float2 v) {
    return make_float2(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y));
}
static __inline__ float4 atomicAdd(float4 *p, float4 v) {
    return make_float4(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z), atomicAdd(&p->w, v.w));
}
static __inline__ float atomicSub(float *p, float v) {
    return hn_emu_cas_loop<float, unsigned int>(p, [v](float o) { return o - v; });
}
static __inline__ float atomicExch(float *p, float v) {
    return hn_emu_cas_loop<float, unsigned int>(p, [v](float) { return v; });
}
static __inline__ double atomicExch(double *p, double v) {
    return hn_emu_cas_loop<double, unsigned long long>(p, [v](double) { return v; });
}

#define HN_EMU_MINMAX(_HnT, _HnU)                                                                 \
    static __inline__ _HnT atomicMin(_HnT *p, _HnT v) {                                              \
        return hn_emu_cas_loop<_HnT, _HnU>(p, [v](_HnT o) { return o < v ? o : v; });                \
    }                                                                                       \
    static __inline__ _HnT atomicMax(_HnT *p, _HnT v) {                                              \
        return hn_emu_cas_loop<_HnT, _HnU>(p, [v](_HnT o) { return o > v ? o : v; });                \
    }
HN_EMU_MINMAX(int, unsigned int)
HN_EMU_MINMAX(unsigned int, unsigned int)
HN_EMU_MINMAX(long, unsigned long)
HN_EMU_MINMAX(unsigned long, unsigned long)
HN_EMU_MINMAX(long long, unsigned long long)
HN_EMU_MINMAX(unsigned long long, unsigned long long)

static __inline__ unsigned int atomicInc(unsigned int *p, unsigned int val) {
    return hn_emu_cas_loop<unsigned int, unsigned int>(
        p, [val](unsigned int o) { return o >= val ? 0u : o + 1u; });
}
static __inline__ unsigned int atomicDec(unsigned int *p, unsigned int val) {
    return hn_emu_cas_loop<unsigned int, unsigned int>(
        p, [val](unsigned int o) { return (o == 0u || o > val) ? val : o - 1u; });
}

#define HN_EMU_CAS(_HnT)                                                                       \
    static __inline__ _HnT atomicCAS(_HnT *p, _HnT compare, _HnT val) {                                 \
        hn_emu_spin_tick();                                                                 \
        __atomic_compare_exchange_n(p, &compare, val, false, __ATOMIC_SEQ_CST,              \
                                    __ATOMIC_SEQ_CST);                                      \
        return compare;                                                                     \
    }
HN_EMU_CAS(int)
HN_EMU_CAS(unsigned int)
HN_EMU_CAS(unsigned short)
HN_EMU_CAS(long)
HN_EMU_CAS(unsigned long)
HN_EMU_CAS(long long)
HN_EMU_CAS(unsigned long long)

#define HN_EMU_SCOPED(NAME)                                                                 \
    template <class... _HnA>                                                                   \
    static __inline__ auto NAME##_block(_HnA... a) -> decltype(NAME(a...)) {                   \
        return NAME(a...);                                                                  \
    }                                                                                       \
    template <class... _HnA>                                                                   \
    static __inline__ auto NAME##_system(_HnA... a) -> decltype(NAME(a...)) {                  \
        return NAME(a...);                                                                  \
    }
HN_EMU_SCOPED(atomicAdd)
HN_EMU_SCOPED(atomicSub)
HN_EMU_SCOPED(atomicExch)
HN_EMU_SCOPED(atomicMin)
HN_EMU_SCOPED(atomicMax)
HN_EMU_SCOPED(atomicInc)
HN_EMU_SCOPED(atomicDec)
HN_EMU_SCOPED(atomicCAS)
HN_EMU_SCOPED(atomicAnd)
HN_EMU_SCOPED(atomicOr)
HN_EMU_SCOPED(atomicXor)

/* ------------------------------------------------------------------------- */
/* loads and stores with cache hints */

template <class _HnT> static __inline__ _HnT __ldg(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ _HnT __ldcg(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ _HnT __ldca(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ _HnT __ldcs(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ _HnT __ldlu(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ _HnT __ldcv(const _HnT *p) { return *p; }
template <class _HnT> static __inline__ void __stwb(_HnT *p, _HnT v) { *p = v; }
template <class _HnT> static __inline__ void __stcg(_HnT *p, _HnT v) { *p = v; }
template <class _HnT> static __inline__ void __stcs(_HnT *p, _HnT v) { *p = v; }
template <class _HnT> static __inline__ void __stwt(_HnT *p, _HnT v) { *p = v; }

/* ------------------------------------------------------------------------- */
/* integer intrinsics */

static __inline__ int __popc(unsigned int x) { return __builtin_popcount(x); }
static __inline__ int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static __inline__ int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static __inline__ int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static __inline__ int __ffs(int x) { return __builtin_ffs(x); }
static __inline__ int __ffsll(long long x) { return __builtin_ffsll(x); }
static __inline__ unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static __inline__ unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
static __inline__ unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++) {
        unsigned int sel = (s >> (4 * i)) & 7u;
        r |= (unsigned int)((v >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}
static __inline__ unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((v << (s & 31u)) >> 32);
}
static __inline__ unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((v << (s > 32u ? 32u : s)) >> 32);
}
static __inline__ unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(v >> (s & 31u));
}
static __inline__ unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(v >> (s > 32u ? 32u : s));
}
static __inline__ int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static __inline__ unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static __inline__ long long __mul64hi(long long a, long long b) {
    return (long long)(((__int128)a * b) >> 64);
}
static __inline__ unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static __inline__ int __mul24(int a, int b) {
    return (int)((long long)((a << 8) >> 8) * (long long)((b << 8) >> 8));
}
static __inline__ unsigned int __umul24(unsigned int a, unsigned int b) {
    return (a & 0xffffffu) * (b & 0xffffffu);
}
static __inline__ unsigned int __sad(int x, int y, unsigned int z) {
    return z + (unsigned int)(x > y ? (long long)x - y : (long long)y - x);
}
static __inline__ unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
    return z + (x > y ? x - y : y - x);
}
static __inline__ int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static __inline__ int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static __inline__ unsigned int __uhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b) >> 1);
}
static __inline__ unsigned int __urhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b + 1) >> 1);
}

/* min and max as CUDA overloads them (global namespace) */
#define HN_EMU_MINMAX_FN(_HnA, B, R)                                                           \
    static __inline__ R min(_HnA a, B b) { return (R)a < (R)b ? (R)a : (R)b; }                \
    static __inline__ R max(_HnA a, B b) { return (R)a > (R)b ? (R)a : (R)b; }
HN_EMU_MINMAX_FN(int, int, int)
HN_EMU_MINMAX_FN(unsigned int, unsigned int, unsigned int)
HN_EMU_MINMAX_FN(int, unsigned int, unsigned int)
HN_EMU_MINMAX_FN(unsigned int, int, unsigned int)
HN_EMU_MINMAX_FN(long, long, long)
HN_EMU_MINMAX_FN(unsigned long, unsigned long, unsigned long)
HN_EMU_MINMAX_FN(long, unsigned long, unsigned long)
HN_EMU_MINMAX_FN(unsigned long, long, unsigned long)
HN_EMU_MINMAX_FN(long long, long long, long long)
HN_EMU_MINMAX_FN(unsigned long long, unsigned long long, unsigned long long)
HN_EMU_MINMAX_FN(long long, unsigned long long, unsigned long long)
HN_EMU_MINMAX_FN(unsigned long long, long long, unsigned long long)
static __inline__ float min(float a, float b) { return fminf(a, b); }
static __inline__ float max(float a, float b) { return fmaxf(a, b); }
static __inline__ double min(double a, double b) { return fmin(a, b); }
static __inline__ double max(double a, double b) { return fmax(a, b); }
static __inline__ double min(float a, double b) { return fmin(a, b); }
static __inline__ double max(float a, double b) { return fmax(a, b); }
static __inline__ double min(double a, float b) { return fmin(a, b); }
static __inline__ double max(double a, float b) { return fmax(a, b); }
static __inline__ long long llmin(long long a, long long b) { return a < b ? a : b; }
static __inline__ long long llmax(long long a, long long b) { return a > b ? a : b; }
static __inline__ unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static __inline__ unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static __inline__ unsigned long long ullmin(unsigned long long a, unsigned long long b) {
    return a < b ? a : b;
}
static __inline__ unsigned long long ullmax(unsigned long long a, unsigned long long b) {
    return a > b ? a : b;
}

/* ------------------------------------------------------------------------- */
/* floating-point intrinsics (round-to-nearest forms are the plain operations) */

template <class _HnTo, class _HnFrom>
static __inline__ _HnTo hn_emu_bitcast(_HnFrom v) {
    static_assert(sizeof(_HnTo) == sizeof(_HnFrom), "bit cast width");
    _HnTo r;
    memcpy(&r, &v, sizeof r);
    return r;
}
static __inline__ float __int_as_float(int x) { return hn_emu_bitcast<float>(x); }
static __inline__ int __float_as_int(float x) { return hn_emu_bitcast<int>(x); }
static __inline__ float __uint_as_float(unsigned int x) { return hn_emu_bitcast<float>(x); }
static __inline__ unsigned int __float_as_uint(float x) { return hn_emu_bitcast<unsigned int>(x); }
static __inline__ double __longlong_as_double(long long x) { return hn_emu_bitcast<double>(x); }
static __inline__ long long __double_as_longlong(double x) { return hn_emu_bitcast<long long>(x); }
static __inline__ int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static __inline__ int __double2loint(double x) { return (int)__double_as_longlong(x); }
static __inline__ double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}

static __inline__ float __fdividef(float a, float b) { return a / b; }
static __inline__ float fdividef(float a, float b) { return a / b; }
static __inline__ float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
/* glibc's <math.h> declares __expf, __logf ... (extern "C", noexcept) without
 * exporting them, so define them here, inline, with the same declarations. */
#define HN_EMU_FAST1(NAME, EXPR)                                                            \
    extern "C" __inline__ float NAME(float x) noexcept { return EXPR; }
HN_EMU_FAST1(__expf, expf(x))
HN_EMU_FAST1(__exp10f, powf(10.0f, x))
HN_EMU_FAST1(__logf, logf(x))
HN_EMU_FAST1(__log2f, log2f(x))
HN_EMU_FAST1(__log10f, log10f(x))
HN_EMU_FAST1(__sinf, sinf(x))
HN_EMU_FAST1(__cosf, cosf(x))
HN_EMU_FAST1(__tanf, tanf(x))
extern "C" __inline__ float __powf(float x, float y) noexcept { return powf(x, y); }
extern "C" __inline__ void __sincosf(float x, float *s, float *c) noexcept {
    *s = sinf(x);
    *c = cosf(x);
}
static __inline__ float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static __inline__ double rsqrt(double x) { return 1.0 / sqrt(x); }
static __inline__ float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static __inline__ double rcbrt(double x) { return 1.0 / cbrt(x); }
static __inline__ float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static __inline__ double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }

/* conversions with a rounding mode, directed-rounding arithmetic, the math
 * functions the host library lacks, SIMD and dot-product intrinsics */
#include "hn_emu_math.h"

/* ------------------------------------------------------------------------- */
/* printf: formatted here, written whole by the runtime (in order, to stdout) */

__attribute__((format(printf, 1, 2))) static int hn_emu_printf(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return n;
    if ((size_t)n < sizeof buf) {
        hn_emu_rt_->print(hn_emu_self(), buf, (unsigned long)n);
        return n;
    }
    char *big = (char *)malloc((size_t)n + 1);
    if (!big) return -1;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    hn_emu_rt_->print(hn_emu_self(), big, (unsigned long)n);
    free(big);
    return n;
}
namespace std {
using ::hn_emu_printf;
}
#define printf hn_emu_printf

/* ------------------------------------------------------------------------- */
/* what the emulator cannot run: a compile error naming it, where it is used */

template <class... _HnA>
struct hn_emu_false {
    static constexpr bool value = false;
};
#define HN_EMU_UNSUPPORTED(NAME, WHY)                                                       \
    template <class... _HnA>                                                                   \
    static __inline__ int NAME(_HnA...) {                                                      \
        static_assert(hn_emu_false<_HnA...>::value,                                            \
                      "harness CPU emulator: " #NAME " is not supported: " WHY);            \
        return 0;                                                                           \
    }
#define HN_EMU_OLD_WARP(NAME)                                                               \
    HN_EMU_UNSUPPORTED(NAME, "the non-sync warp intrinsics were removed in CUDA 9; use " #NAME "_sync")
HN_EMU_OLD_WARP(__shfl)
HN_EMU_OLD_WARP(__shfl_up)
HN_EMU_OLD_WARP(__shfl_down)
HN_EMU_OLD_WARP(__shfl_xor)
HN_EMU_OLD_WARP(__ballot)
HN_EMU_OLD_WARP(__any)
HN_EMU_OLD_WARP(__all)
#define HN_EMU_TEXTURE(NAME) HN_EMU_UNSUPPORTED(NAME, "texture and surface objects (use global memory)")
HN_EMU_TEXTURE(tex1D)
HN_EMU_TEXTURE(tex2D)
HN_EMU_TEXTURE(tex3D)
HN_EMU_TEXTURE(tex1Dfetch)
HN_EMU_TEXTURE(tex1DLod)
HN_EMU_TEXTURE(tex2DLod)
HN_EMU_TEXTURE(tex3DLod)
HN_EMU_TEXTURE(tex1DLayered)
HN_EMU_TEXTURE(tex2DLayered)
HN_EMU_TEXTURE(tex2Dgather)
HN_EMU_TEXTURE(texCubemap)
HN_EMU_TEXTURE(surf1Dread)
HN_EMU_TEXTURE(surf1Dwrite)
HN_EMU_TEXTURE(surf2Dread)
HN_EMU_TEXTURE(surf2Dwrite)
HN_EMU_TEXTURE(surf3Dread)
HN_EMU_TEXTURE(surf3Dwrite)
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
template <class _HnT, int _HnDim = 1, int _HnMode = 0>
struct texture {
    static_assert(hn_emu_false<_HnT>::value,
                  "harness CPU emulator: texture references are not supported (use global memory)");
};
#define HN_EMU_SPACE(NAME) HN_EMU_UNSUPPORTED(NAME, "the address-space predicates (__isGlobal, __isShared, __isConstant, __isLocal) and conversions (__cvta_*) have no meaning on the CPU, where every space is host memory")
HN_EMU_SPACE(__isGlobal)
HN_EMU_SPACE(__isShared)
HN_EMU_SPACE(__isConstant)
HN_EMU_SPACE(__isLocal)
HN_EMU_SPACE(__isGridConstant)
HN_EMU_SPACE(__cvta_generic_to_shared)
HN_EMU_SPACE(__cvta_generic_to_global)
HN_EMU_SPACE(__cvta_generic_to_local)
HN_EMU_SPACE(__cvta_generic_to_constant)
HN_EMU_SPACE(__cvta_shared_to_generic)
HN_EMU_SPACE(__cvta_global_to_generic)
HN_EMU_SPACE(__cvta_local_to_generic)
HN_EMU_SPACE(__cvta_constant_to_generic)
#define HN_EMU_DYNPAR(NAME) HN_EMU_UNSUPPORTED(NAME, "dynamic parallelism (launching work from device code)")
HN_EMU_DYNPAR(cudaDeviceSynchronize)
HN_EMU_DYNPAR(cudaGetParameterBuffer)
HN_EMU_DYNPAR(cudaLaunchDevice)

/* ------------------------------------------------------------------------- */
/* launch wrappers: the harness appends, per kernel,
 *   void hn_emu_kernel_<i>(void **a) { hn_emu_invoke(&KERNEL, a); }
 * and the signature record built from hn_emu_sig<decltype(&KERNEL)>. */

template <class... _HnP, std::size_t... _HnI>
static __inline__ void hn_emu_call(void (*f)(_HnP...), void **a, std::index_sequence<_HnI...>) {
    (void)a;
    f(*static_cast<typename std::remove_cv<typename std::remove_reference<_HnP>::type>::type *>(
        a[_HnI])...);
}

template <class... _HnP>
static __inline__ void hn_emu_invoke(void (*f)(_HnP...), void **a) {
    hn_emu_call(f, a, std::index_sequence_for<_HnP...>{});
}

template <class _HnT>
constexpr char hn_emu_kind() {
    typedef typename std::remove_cv<_HnT>::type _HnU;
    return std::is_pointer<_HnU>::value                          ? 'p'
           : std::is_same<_HnU, bool>::value                     ? 'u'
           : std::is_integral<_HnU>::value && std::is_signed<_HnU>::value ? 'i'
           : std::is_integral<_HnU>::value                       ? 'u'
           : std::is_enum<_HnU>::value                           ? 'i'
           : std::is_floating_point<_HnU>::value                 ? 'f'
                                                              : 'o';
}

template <class _HnF>
struct hn_emu_sig;
template <class... _HnP>
struct hn_emu_sig<void (*)(_HnP...)> {
    static constexpr int n = (int)sizeof...(_HnP);
    static constexpr char kinds[sizeof...(_HnP) + 1] = {hn_emu_kind<_HnP>()..., '\0'};
    static constexpr int sizes[sizeof...(_HnP) + 1] = {(int)sizeof(_HnP)..., 0};
};

#endif
