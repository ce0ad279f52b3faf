/*
 * hn_emu_san_stub.cc: the memory-access callbacks of an instrumented kernel
 * module (`harness check`, `--sanitize`, `--profile`).
 *
 * The kernel's translation unit is compiled with the host compiler's thread
 * sanitizer instrumentation (-fsanitize=thread, function entry/exit off,
 * volatile accesses told apart), which turns every load and store the
 * compiler cannot prove thread-private into a call such as
 * __tsan_read4(addr), and every atomic into __tsan_atomic32_fetch_add(...).
 * This file, compiled WITHOUT instrumentation and linked into the same shared
 * object (never the sanitizer's own runtime), defines those callbacks: each
 * forwards the access to the harness's runtime (hn_emu_san_rt, set by
 * hn_emu_module_san when the module is loaded) with its size, its kind and
 * the return address (which names the source line), then atomics perform the
 * operation. memcpy, memmove and memset calls of the module arrive here too
 * (linked with --wrap).
 *
 * Plain aligned accesses inside the device buffers the worker touched last are
 * decided here, without a call (hn_emu_san_fast, read at %fs like the
 * emulated thread); the rest goes to the runtime.
 *
 * Invariants: nothing here is instrumented; until hn_emu_module_san runs, the
 * callbacks forward to a table that ignores every access.
 */
#include <stddef.h>

#include "hn_emu_abi.h"

#define HN_SAN_HIDDEN extern "C" __attribute__((visibility("hidden")))

static void hn_san_ignore(void *, unsigned long long, void *) {}
static void hn_san_ignore_fence(void *) {}
static void hn_san_ignore_shared(void *, unsigned long long, void *, int) {}
static const hn_emu_san_rt hn_san_none = {HN_EMU_SAN_ABI, hn_san_ignore, hn_san_ignore_fence, 0,
                                          hn_san_ignore_shared};
static const hn_emu_san_rt *hn_san_rt = &hn_san_none;
static long hn_san_tls_off; /* 0 until set: static TLS lives below %fs, never at 0 */

/* A module instrumented only for its volatile accesses (HN_EMU_SAN_DETACHED)
 * does not export the hook, so no backend attaches its sanitizer to it: its
 * callbacks stay the no-ops above, and the volatile ones still take turns. */
#ifndef HN_EMU_SAN_DETACHED
extern "C" __attribute__((visibility("default"))) void hn_emu_module_san(const hn_emu_san_rt *rt) {
    hn_san_rt = rt && rt->abi == HN_EMU_SAN_ABI ? rt : &hn_san_none;
    hn_san_tls_off = hn_san_rt->tls_offset;
}
#endif

#define HN_SAN_PC __builtin_return_address(0)
#define HN_SAN_ACCESS(a, info) hn_san_rt->access((void *)(a), (info), HN_SAN_PC)

/* The worker's fast-path state, or NULL. */
static inline __attribute__((always_inline)) const hn_emu_san_fast *hn_san_fast() {
    long off = hn_san_tls_off;
    if (!off) return 0;
    const hn_emu_san_fast *p;
    __asm__("movq %%fs:(%1), %0" : "=r"(p) : "r"(off));
    return p;
}

/* Settles the aligned plain access of N bytes at a (see hn_emu_san_fast):
 * returns true when it is done (nothing to do, a write recorded, or handed to
 * the runtime's shared-memory entry); false: call `access`. */
template <int _HnN, bool _HnW, bool _HnRW = false>
static inline __attribute__((always_inline)) bool hn_san_quick(void *a, void *pc) {
    const hn_emu_san_fast *f = hn_san_fast();
    if (!f) return false;
    if (f->mode != HN_EMU_SAN_FAST_CHECK && f->mode != HN_EMU_SAN_FAST_SHARED_ONLY)
        return f->mode == HN_EMU_SAN_FAST_SKIP;
    unsigned long long x = (unsigned long long)a;
    for (int i = 0; i < HN_EMU_SAN_RECENT && f->mode == HN_EMU_SAN_FAST_CHECK; i++) {
        unsigned long long off = x - f->recent[i].data;
        if (off >= f->recent[i].size || (unsigned long long)_HnN > f->recent[i].size - off) continue;
        if ((x & (_HnN - 1)) && f->check_align) return false;
        if (!f->recent[i].init) return true; /* every byte written already */
        unsigned char *sh = f->recent[i].init + off;
        if (_HnW) {
            __builtin_memset(sh, 1, _HnN);
            return true;
        }
        if (!f->check_init) return true;
        if (_HnN == 1) return sh[0] != 0;
        if (_HnN == 2) {
            unsigned short v;
            __builtin_memcpy(&v, sh, 2);
            return v == 0x0101u;
        }
        if (_HnN == 4) {
            unsigned int v;
            __builtin_memcpy(&v, sh, 4);
            return v == 0x01010101u;
        }
        unsigned long long v[2] = {0, 0x0101010101010101ull};
        __builtin_memcpy(v, sh, 8);
        if (_HnN == 16) __builtin_memcpy(&v[1], sh + 8, 8);
        return v[0] == 0x0101010101010101ull && v[1] == 0x0101010101010101ull;
    }
    for (int i = 0; i < f->n_shared; i++)
        if (x - f->shared[i].lo < f->shared[i].span) {
            hn_san_rt->shared(a, _HnN | (_HnRW ? HN_EMU_SAN_READ | HN_EMU_SAN_WRITE : _HnW ? HN_EMU_SAN_WRITE : HN_EMU_SAN_READ),
                              pc, i);
            return true;
        }
    return false;
}

/* plain, unaligned and volatile loads and stores */
/* the module's (hn_emu.h): a volatile access lets the other threads make theirs first */
HN_SAN_HIDDEN void hn_emu_volatile_step(void *pc);
HN_SAN_HIDDEN void hn_emu_misaligned_vector(const void *p);
#define HN_SAN_RW(_HnN)                                                                        \
    HN_SAN_HIDDEN void __tsan_read##_HnN(void *a) {                                            \
        if (!hn_san_quick<_HnN, false>(a, HN_SAN_PC)) HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_READ);   \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_write##_HnN(void *a) {                                           \
        if (!hn_san_quick<_HnN, true>(a, HN_SAN_PC)) HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_WRITE);   \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_unaligned_read##_HnN(void *a) {                                  \
        HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_READ | HN_EMU_SAN_UNALIGNED);                      \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_unaligned_write##_HnN(void *a) {                                 \
        HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);                     \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_volatile_read##_HnN(void *a) {                                   \
        hn_emu_volatile_step(HN_SAN_PC);                                                    \
        HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_READ | HN_EMU_SAN_VOLATILE);                       \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_volatile_write##_HnN(void *a) {                                  \
        hn_emu_volatile_step(HN_SAN_PC);                                                    \
        HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_WRITE | HN_EMU_SAN_VOLATILE);                      \
    }
HN_SAN_RW(1)
HN_SAN_RW(2)
HN_SAN_RW(4)
HN_SAN_RW(8)
HN_SAN_RW(16)

/* clang's read-modify-write of one place (x += y), with
 * -tsan-compound-read-before-write: a read then a write (the read's bytes all
 * written already means the write changes nothing the fast path tracks) */
#define HN_SAN_COMPOUND(_HnN)                                                                  \
    HN_SAN_HIDDEN void __tsan_read_write##_HnN(void *a) {                                      \
        if (!hn_san_quick<_HnN, false, true>(a, HN_SAN_PC))                                    \
            HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_READ | HN_EMU_SAN_WRITE);                       \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_unaligned_read_write##_HnN(void *a) {                            \
        HN_SAN_ACCESS(a, _HnN | HN_EMU_SAN_READ | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);    \
    }
HN_SAN_COMPOUND(1)
HN_SAN_COMPOUND(2)
HN_SAN_COMPOUND(4)
HN_SAN_COMPOUND(8)
HN_SAN_COMPOUND(16)

HN_SAN_HIDDEN void __tsan_read_range(void *a, long n) {
    if (n > 0) HN_SAN_ACCESS(a, (unsigned long long)n | HN_EMU_SAN_READ | HN_EMU_SAN_UNALIGNED);
}
HN_SAN_HIDDEN void __tsan_write_range(void *a, long n) {
    if (n > 0) HN_SAN_ACCESS(a, (unsigned long long)n | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);
}

/* -fsanitize=alignment: a load, store or member access through a pointer not
 * aligned for its type (CUDA requires natural alignment: a float4 at an odd
 * float faults). The compiler checks the pointer, so the type's alignment is
 * known even where it splits the access into smaller aligned ones. The layout
 * is the UBSan ABI's (GCC and clang), which this file only reads. */
struct hn_san_ubsan_loc {
    const char *file;
    unsigned line, column;
};
struct hn_san_ubsan_mismatch {
    hn_san_ubsan_loc loc;
    const void *type;
    unsigned char log_alignment;
    unsigned char check_kind; /* 0 load, 1 store, others: reference binding, member access ... */
};
HN_SAN_HIDDEN void __ubsan_handle_type_mismatch_v1(hn_san_ubsan_mismatch *d, unsigned long p) {
    unsigned long align = 1ul << d->log_alignment;
    if (!p || !(p & (align - 1))) return;
    if (align >= 16 && !hn_san_fast()) hn_emu_misaligned_vector((const void *)p); /* no sanitizer */
    HN_SAN_ACCESS(p, align | (d->check_kind == 1 ? HN_EMU_SAN_WRITE : HN_EMU_SAN_READ) | HN_EMU_SAN_ALIGNCHK);
}
HN_SAN_HIDDEN void __ubsan_handle_type_mismatch_v1_abort(hn_san_ubsan_mismatch *d, unsigned long p) {
    __ubsan_handle_type_mismatch_v1(d, p);
}

/* -fsanitize=bounds: an index past the declared size of an array whose size the
 * type says (a thread's local array, a static __shared__ or __constant__ one, a
 * row of a 2D one); the runtime reports it with the array's type */
struct hn_san_ubsan_oob {
    hn_san_ubsan_loc loc;
    const void *array_type, *index_type;
};
HN_SAN_HIDDEN void __ubsan_handle_out_of_bounds(hn_san_ubsan_oob *d, unsigned long index) {
    HN_SAN_ACCESS(d, (index & HN_EMU_SAN_SIZE) | HN_EMU_SAN_BOUNDSCHK);
}
HN_SAN_HIDDEN void __ubsan_handle_out_of_bounds_abort(hn_san_ubsan_oob *d, unsigned long index) {
    __ubsan_handle_out_of_bounds(d, index);
}

/* the rest of what the instrumentation may call */
HN_SAN_HIDDEN void __tsan_init(void) {}
HN_SAN_HIDDEN void __tsan_func_entry(void *) {}
HN_SAN_HIDDEN void __tsan_func_exit(void) {}
HN_SAN_HIDDEN void __tsan_vptr_update(void **, void *) {}
HN_SAN_HIDDEN void __tsan_vptr_read(void **) {}
HN_SAN_HIDDEN void __tsan_ignore_thread_begin(void) {}
HN_SAN_HIDDEN void __tsan_ignore_thread_end(void) {}

/* memcpy, memmove, memset: the module's calls are linked to these (--wrap) */
extern "C" void *__real_memcpy(void *, const void *, size_t);
extern "C" void *__real_memmove(void *, const void *, size_t);
extern "C" void *__real_memset(void *, int, size_t);
HN_SAN_HIDDEN void *__wrap_memcpy(void *d, const void *s, size_t n) {
    if (n) {
        HN_SAN_ACCESS(s, n | HN_EMU_SAN_READ | HN_EMU_SAN_UNALIGNED);
        HN_SAN_ACCESS(d, n | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);
    }
    return __real_memcpy(d, s, n);
}
HN_SAN_HIDDEN void *__wrap_memmove(void *d, const void *s, size_t n) {
    if (n) {
        HN_SAN_ACCESS(s, n | HN_EMU_SAN_READ | HN_EMU_SAN_UNALIGNED);
        HN_SAN_ACCESS(d, n | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);
    }
    return __real_memmove(d, s, n);
}
HN_SAN_HIDDEN void *__wrap_memset(void *d, int c, size_t n) {
    if (n) HN_SAN_ACCESS(d, n | HN_EMU_SAN_WRITE | HN_EMU_SAN_UNALIGNED);
    return __real_memset(d, c, n);
}
HN_SAN_HIDDEN void *__tsan_memcpy(void *d, const void *s, size_t n) { return __wrap_memcpy(d, s, n); }
HN_SAN_HIDDEN void *__tsan_memmove(void *d, const void *s, size_t n) { return __wrap_memmove(d, s, n); }
HN_SAN_HIDDEN void *__tsan_memset(void *d, int c, size_t n) { return __wrap_memset(d, c, n); }

/* ------------------------------------------------------------------------- */
/* atomics: reported (with the sizes and directions they have), then done for
 * real with the compiler's builtins; memory orders are ignored (every atomic
 * is sequentially consistent, as the emulator's atomics always are) */

#define HN_SAN_R HN_EMU_SAN_READ | HN_EMU_SAN_ATOMIC
#define HN_SAN_W HN_EMU_SAN_WRITE | HN_EMU_SAN_ATOMIC
#define HN_SAN_RW_ HN_EMU_SAN_READ | HN_EMU_SAN_WRITE | HN_EMU_SAN_ATOMIC

#define HN_SAN_ATOMIC_OP(_HnN, T, OP, BUILTIN)                                                 \
    HN_SAN_HIDDEN T __tsan_atomic##_HnN##_##OP(volatile void *a, T v, int) {                  \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_RW_));                                        \
        return BUILTIN((volatile T *)a, v, __ATOMIC_SEQ_CST);                              \
    }

#define HN_SAN_ATOMICS(_HnN, T)                                                                \
    HN_SAN_HIDDEN T __tsan_atomic##_HnN##_load(const volatile void *a, int) {                 \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_R));                                          \
        return __atomic_load_n((const volatile T *)a, __ATOMIC_SEQ_CST);                   \
    }                                                                                       \
    HN_SAN_HIDDEN void __tsan_atomic##_HnN##_store(volatile void *a, T v, int) {              \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_W));                                          \
        __atomic_store_n((volatile T *)a, v, __ATOMIC_SEQ_CST);                            \
    }                                                                                       \
    HN_SAN_HIDDEN T __tsan_atomic##_HnN##_exchange(volatile void *a, T v, int) {              \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_W));                                          \
        return __atomic_exchange_n((volatile T *)a, v, __ATOMIC_SEQ_CST);                  \
    }                                                                                       \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_add, __atomic_fetch_add)                                   \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_sub, __atomic_fetch_sub)                                   \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_and, __atomic_fetch_and)                                   \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_or, __atomic_fetch_or)                                     \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_xor, __atomic_fetch_xor)                                   \
    HN_SAN_ATOMIC_OP(_HnN, T, fetch_nand, __atomic_fetch_nand)                                 \
    HN_SAN_HIDDEN int __tsan_atomic##_HnN##_compare_exchange_strong(volatile void *a, void *e, \
                                                                 T v, int, int) {           \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_RW_));                                        \
        return __atomic_compare_exchange_n((volatile T *)a, (T *)e, v, false,               \
                                           __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);             \
    }                                                                                       \
    HN_SAN_HIDDEN int __tsan_atomic##_HnN##_compare_exchange_weak(volatile void *a, void *e,   \
                                                               T v, int, int) {             \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_RW_));                                        \
        return __atomic_compare_exchange_n((volatile T *)a, (T *)e, v, true,                \
                                           __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);             \
    }                                                                                       \
    HN_SAN_HIDDEN T __tsan_atomic##_HnN##_compare_exchange_val(volatile void *a, T e, T v,     \
                                                            int, int) {                     \
        HN_SAN_ACCESS(a, sizeof(T) | (HN_SAN_RW_));                                        \
        __atomic_compare_exchange_n((volatile T *)a, &e, v, false, __ATOMIC_SEQ_CST,        \
                                    __ATOMIC_SEQ_CST);                                      \
        return e;                                                                           \
    }

HN_SAN_ATOMICS(8, unsigned char)
HN_SAN_ATOMICS(16, unsigned short)
HN_SAN_ATOMICS(32, unsigned int)
HN_SAN_ATOMICS(64, unsigned long long)

HN_SAN_HIDDEN void __tsan_atomic_thread_fence(int) {
    hn_san_rt->fence(HN_SAN_PC);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
HN_SAN_HIDDEN void __tsan_atomic_signal_fence(int) {}
