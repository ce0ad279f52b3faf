/*
 * hn_emu_abi.h: the binary interface between the emulator's runtime (C, linked
 * into the harness) and a compiled kernel module (the user's .cu plus hn_emu.h,
 * compiled by the host C++ compiler into a shared object). Both sides include
 * this file, so it is plain C that also compiles as C++.
 *
 * A module exports (extern "C", default visibility):
 *   int  hn_emu_module_abi(void)                       returns HN_EMU_ABI_VERSION
 *   void hn_emu_module_init(const hn_emu_rt *, long)   the runtime's entry points and
 *                                                      the %fs offset of its
 *                                                      current-thread pointer
 *   void hn_emu_kernel_<i>(void **args)                runs kernel i for the
 *                                                      current emulated thread
 *   const hn_emu_kinfo hn_emu_kernel_<i>_info          its name and signature
 *
 * An instrumented module (compiled for `harness check` or `--profile`, see
 * hn_emu_san_stub.cc) also exports
 *   void hn_emu_module_san(const hn_emu_san_rt *)      where its memory-access
 *                                                      callbacks report to
 *
 * Invariants: while kernel code runs, the runtime's thread-local pointer (found
 * at %fs:offset) points at the running thread's hn_emu_tctx, which stays at the
 * same address for the whole life of that emulated thread; `blk` is never NULL
 * there. The runtime never unwinds kernel frames: a failing thread's fiber is
 * abandoned, so kernel code must not rely on destructors running.
 */
#ifndef HN_EMU_ABI_H
#define HN_EMU_ABI_H

#define HN_EMU_ABI_VERSION 6

#define HN_EMU_WARP_SIZE 32
#define HN_EMU_MAX_THREADS 1024

/* Consecutive atomics (or fences) a thread may make without reaching a
 * scheduling point before it yields to the other threads of its block. */
#define HN_EMU_SPIN_LIMIT 1024

/* Layout-compatible with CUDA's uint3 (the shim typedefs uint3 to it). */
struct hn_emu_u3 {
    unsigned int x, y, z;
};

/* One block, as its threads see it. */
typedef struct hn_emu_block {
    struct hn_emu_u3 block_idx;
    struct hn_emu_u3 block_dim;
    struct hn_emu_u3 grid_dim;
    unsigned int nthreads;
    void *dyn_shared;                  /* extern __shared__ storage, 16-byte aligned, ending
                                          at a guard page (rounded up to 16 bytes) */
    unsigned long long dyn_shared_bytes;
} hn_emu_block;

/* One emulated thread. */
typedef struct hn_emu_tctx {
    struct hn_emu_u3 tid;              /* threadIdx */
    unsigned int linear;               /* x + y * bx + z * bx * by */
    const hn_emu_block *blk;
    unsigned int spins;                /* atomics since the last scheduling point */
    unsigned int reserved;
} hn_emu_tctx;

/* Collective operations (the `op` of hn_emu_rt.collective). */
enum hn_emu_op {
    /* block barriers: value is the predicate (0/1) */
    HN_EMU_OP_SYNCTHREADS = 0,
    HN_EMU_OP_SYNCTHREADS_COUNT,
    HN_EMU_OP_SYNCTHREADS_AND,
    HN_EMU_OP_SYNCTHREADS_OR,
    /* warp collectives over the lanes of `mask` */
    HN_EMU_OP_SYNCWARP,
    HN_EMU_OP_SHFL,        /* param: source lane */
    HN_EMU_OP_SHFL_UP,     /* param: delta */
    HN_EMU_OP_SHFL_DOWN,   /* param: delta */
    HN_EMU_OP_SHFL_XOR,    /* param: lane mask */
    HN_EMU_OP_BALLOT,
    HN_EMU_OP_ANY,
    HN_EMU_OP_ALL,
    HN_EMU_OP_MATCH_ANY,
    HN_EMU_OP_MATCH_ALL,   /* result: mask, plus bit 32 set when all matched */
    HN_EMU_OP_REDUCE_ADD,
    HN_EMU_OP_REDUCE_MIN_S,
    HN_EMU_OP_REDUCE_MIN_U,
    HN_EMU_OP_REDUCE_MAX_S,
    HN_EMU_OP_REDUCE_MAX_U,
    HN_EMU_OP_REDUCE_AND,
    HN_EMU_OP_REDUCE_OR,
    HN_EMU_OP_REDUCE_XOR,
    /* not blocking: lanes of the warp that have not exited */
    HN_EMU_OP_ACTIVEMASK,
    /* coalesced_threads(): waits until no other lane of the warp can run (each
     * has exited or waits in a collective); result: the mask of the lanes that
     * wait here, at the same `site`. `mask` is ignored. */
    HN_EMU_OP_COALESCE,
    HN_EMU_OP_COUNT_
};

/* The bits of `op` above HN_EMU_OP_MASK name the API that made the call, for
 * messages only ("thread_block_tile::shfl_down" rather than
 * "__shfl_down_sync"); the runtime otherwise treats the call as the plain op,
 * so a tile's collective and a __*_sync one with the same mask meet. */
#define HN_EMU_OP_MASK 0xff
#define HN_EMU_OP_API_SHIFT 8
enum hn_emu_api {
    HN_EMU_API_CUDA = 0,      /* __syncthreads, __shfl_sync, ... */
    HN_EMU_API_BLOCK,         /* cooperative_groups::thread_block */
    HN_EMU_API_TILE,          /* thread_block_tile<N> and tiled_partition(g, n) */
    HN_EMU_API_COALESCED,     /* coalesced_group */
    HN_EMU_API_REDUCE,        /* cooperative_groups::reduce */
    HN_EMU_API_SCAN,          /* cooperative_groups::inclusive_scan, exclusive_scan */
    HN_EMU_API_WMMA_LOAD,     /* nvcuda::wmma::load_matrix_sync (mma.h) */
    HN_EMU_API_WMMA_STORE,    /* nvcuda::wmma::store_matrix_sync */
    HN_EMU_API_WMMA_MMA,      /* nvcuda::wmma::mma_sync */
    HN_EMU_API_COUNT_
};

/* The runtime's entry points, called by the shim. `site` is a per-call-site id
 * (__COUNTER__ for the macros; for cooperative groups an id derived from the
 * user's call site with bit 30 set, see hn_emu_site in hn_emu.h), `line`/`file`
 * the user's source position. */
typedef struct hn_emu_rt {
    int abi;
    unsigned long long (*collective)(hn_emu_tctx *self, int op, unsigned int mask,
                                     unsigned long long value, int param, int width, int site,
                                     int line, const char *file);
    /* Lets the other threads of the block run (spinning atomics, __nanosleep). */
    void (*yield)(hn_emu_tctx *self);
    /* The same, for a volatile access at pc (the callback's return address: a
     * launch stopped there names that line). */
    void (*yield_at)(hn_emu_tctx *self, void *pc);
    /* Fails the launch with `what` at file:line; does not return. */
    void (*trap)(hn_emu_tctx *self, const char *what, int line, const char *file);
    /* Writes kernel printf output (one call per printf, kept whole). */
    void (*print)(hn_emu_tctx *self, const char *text, unsigned long len);
    /* Storage for one static __shared__ variable on the calling thread's worker
     * (so per block): `size` bytes aligned to `align`, ending at a guard page, so
     * an access past its end faults at the first byte. Called once per worker
     * and variable (the rewritten declaration is a thread_local reference); fails
     * the launch when the block's shared memory would exceed the device's. */
    void *(*static_shared)(hn_emu_tctx *self, unsigned long size, unsigned long align, int line,
                           const char *file, const char *name);
    /* The calling warp's scratch area, HN_EMU_WARP_SCRATCH bytes, 16-byte
     * aligned, owned by the runtime: one per warp of the worker (hence of the
     * block), kept from one block to the next; neither device nor shared memory,
     * so the sanitizer and the profile ignore it and it does not count as
     * shared memory. The shim's warp-wide operations that move more
     * than a shuffle can (nvcuda::wmma::mma_sync) stage data there between two
     * warp collectives. */
    void *(*warp_scratch)(hn_emu_tctx *self);
    /* The calling thread's scratch area, HN_EMU_THREAD_SCRATCH bytes, 16-byte
     * aligned, owned by the runtime, all zero at the thread's first call in a
     * block; like the warp's, ignored by the sanitizer and the profile. The
     * pipeline primitives (cuda_pipeline.h) keep their pending copies there. */
    void *(*thread_scratch)(hn_emu_tctx *self);
} hn_emu_rt;

#define HN_EMU_WARP_SCRATCH 8192
#define HN_EMU_THREAD_SCRATCH 2048

/* The sanitizer's entry points, handed to an instrumented module: every load
 * and store the compiler instrumented calls `access` with its address, its
 * size and HN_EMU_SAN_* flags in `info`, and the return address inside the
 * module (`pc`, the source line of the access); atomics call `atomic`
 * (before the operation), fences `fence`. The runtime decides what the access
 * is (device memory, shared memory, anything else) and what to record. */
#define HN_EMU_SAN_SIZE 0xffffffffu     /* bits of info: the size in bytes */
#define HN_EMU_SAN_WRITE (1ull << 32)
#define HN_EMU_SAN_READ (1ull << 33)    /* both for read-modify-write atomics */
#define HN_EMU_SAN_VOLATILE (1ull << 34)
#define HN_EMU_SAN_UNALIGNED (1ull << 35) /* the compiler did not know the alignment */
#define HN_EMU_SAN_ATOMIC (1ull << 36)
/* not an access: the type of an access at addr wants an alignment (the size
 * bits) that addr lacks (-fsanitize=alignment: a float4 load at an odd float,
 * which the compiler may then split into aligned 4-byte loads) */
#define HN_EMU_SAN_ALIGNCHK (1ull << 37)
/* not an access: an array indexed out of its declared bounds (-fsanitize=bounds:
 * `float acc[4]; acc[i]`, `__shared__ float t[8][8]; t[r][8]`); addr is the UBSan
 * out-of-bounds data (its array type's name), the size bits the index's low 32 */
#define HN_EMU_SAN_BOUNDSCHK (1ull << 38)
#define HN_EMU_SAN_ABI 8
typedef struct hn_emu_san_rt {
    int abi;
    void (*access)(void *addr, unsigned long long info, void *pc);
    void (*fence)(void *pc);
    long tls_offset;   /* %fs offset of the worker's hn_emu_san_fast pointer */
    /* an access inside shared variable number `var` of hn_emu_san_fast.shared */
    void (*shared)(void *addr, unsigned long long info, void *pc, int var);
} hn_emu_san_rt;

/* What the callbacks decide without calling the runtime: an aligned plain load
 * or store inside one of the device buffers the worker touched last, that
 * reads bytes already written (or writes). The runtime keeps it up to date;
 * the pointer at %fs:tls_offset is NULL when no sanitized launch runs on the
 * calling thread (then every access goes to `access`, which ignores it). */
#define HN_EMU_SAN_RECENT 4
#define HN_EMU_SAN_SHARED 4
typedef struct hn_emu_san_fast {
    int mode;                           /* HN_EMU_SAN_FAST_*: what plain accesses need */
    int check_align;                    /* misaligned accesses go to `access` */
    int check_init;                     /* reads of unwritten bytes go to `access` */
    int n_shared;
    struct {
        unsigned long long data, size;  /* the buffer */
        unsigned char *init;            /* a byte per byte: 1 = written; NULL: every byte is */
    } recent[HN_EMU_SAN_RECENT];        /* unused entries have size 0 */
    struct {
        unsigned long long lo, span;    /* a shared variable's mapping, guard pages included */
    } shared[HN_EMU_SAN_SHARED];        /* the first n_shared of the block's: their accesses
                                           go to `shared` at once */
} hn_emu_san_fast;
enum {
    HN_EMU_SAN_FAST_CHECK = 0,          /* the fast path above, the rest to the runtime */
    HN_EMU_SAN_FAST_ALL_SLOW = 1,       /* every access to the runtime (a block the profile records) */
    HN_EMU_SAN_FAST_SKIP = 2,           /* nothing to do (a block the profile leaves out) */
    HN_EMU_SAN_FAST_SHARED_ONLY = 3,    /* device buffers to the runtime (global race cells),
                                           shared variables to `shared` as in CHECK */
};

/* A kernel's name expression and parameter signature: kinds[i] is 'p' pointer,
 * 'i' signed integer, 'u' unsigned integer (and bool), 'f' floating point, 'o'
 * anything else; sizes[i] its size in bytes. */
typedef struct hn_emu_kinfo {
    const char *name;
    int n_params;
    const char *kinds;
    const int *sizes;
} hn_emu_kinfo;

#endif
