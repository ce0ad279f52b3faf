/*
 * cuda_pipeline.h: the pipeline primitives (asynchronous copies from global to
 * shared memory) for the CPU emulator.
 *
 * __pipeline_memcpy_async(dst, src, size_and_align, zfill = 0) copies
 * size_and_align - zfill bytes and writes zfill zero bytes after them, at
 * once: a copy that completes when it is issued is one a GPU may make, so
 * __pipeline_commit() and __pipeline_wait_prior(n) have nothing left to do.
 * The size must be 4, 8 or 16, both pointers aligned to it, and zfill at most
 * the size, or the launch fails with the user's file:line (a GPU faults or
 * copies something else). The copy goes through memcpy/memset of the kernel's
 * module, so an instrumented module (harness check) checks both ends for
 * bounds and initialisation.
 *
 * Limit: since the copy is done at issue, reading the destination before the
 * wait is not found (on a GPU it may read the old bytes).
 */
#ifndef HN_EMU_CUDA_PIPELINE_H
#define HN_EMU_CUDA_PIPELINE_H

static __inline__ __attribute__((always_inline)) void
__pipeline_memcpy_async(void *__restrict__ dst, const void *__restrict__ src, size_t size_and_align,
                        size_t zfill = 0, hn_emu_site at = HN_EMU_HERE) {
    char msg[256];
    size_t n = size_and_align;
    if (n != 4 && n != 8 && n != 16) {
        snprintf(msg, sizeof msg, "__pipeline_memcpy_async: size_and_align %zu is not 4, 8 or 16", n);
        hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
    }
    if ((unsigned long long)dst % n || (unsigned long long)src % n) {
        snprintf(msg, sizeof msg,
                 "__pipeline_memcpy_async: %s %p is not aligned to the size (%zu bytes)",
                 (unsigned long long)dst % n ? "destination" : "source",
                 (unsigned long long)dst % n ? dst : src, n);
        hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
    }
    if (zfill > n) {
        snprintf(msg, sizeof msg, "__pipeline_memcpy_async: zfill %zu exceeds the size %zu", zfill, n);
        hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
    }
    if (n - zfill) memcpy(dst, src, n - zfill);
    if (zfill) memset((char *)dst + (n - zfill), 0, zfill);
}

static __inline__ void __pipeline_commit() {}
static __inline__ void __pipeline_wait_prior(size_t prior) { (void)prior; }

template <class... _HnA>
static __inline__ void __pipeline_arrive_on(_HnA...) {
    static_assert(hn_emu_false<_HnA...>::value,
                  "harness CPU emulator: __pipeline_arrive_on is not supported (cuda::barrier is not)");
}

#endif
