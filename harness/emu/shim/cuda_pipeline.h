/*
 * cuda_pipeline.h: the pipeline primitives (asynchronous copies from global to
 * shared memory) for the CPU emulator; cooperative_groups::memcpy_async uses
 * them too.
 *
 * __pipeline_memcpy_async(dst, src, size_and_align, zfill = 0) reads
 * size_and_align - zfill bytes of src at once and keeps them, with zfill zero
 * bytes after them, in a list of pending copies of the calling thread (the
 * runtime's thread scratch, hn_emu_abi.h); __pipeline_commit() closes the
 * current batch; __pipeline_wait_prior(n) writes the pending copies of every
 * committed batch but the n most recent ones to their destinations. So a copy
 * lands as late as CUDA allows, which is one execution a GPU may make: a read
 * of the destination before the wait sees the old bytes, and harness check
 * reports it (an uninitialised read, or a race with the write the wait makes
 * when another thread reads after a barrier but before the copying thread's
 * wait). The source is read at the issuing line and the destination written at
 * the wait's, through the kernel's own loads and stores, so harness check sees
 * both with those lines. Copies never waited for are dropped with the block.
 * When a thread has more than HN_EMU_PIPE_SLOTS copies pending, the oldest one
 * lands early (also valid: a copy may complete at any time).
 *
 * The size must be 4, 8 or 16, both pointers aligned to it, and zfill at most
 * the size, or the launch fails with the user's file:line (a GPU faults or
 * copies something else). __pipeline_arrive_on is refused at compile time.
 */
#ifndef HN_EMU_CUDA_PIPELINE_H
#define HN_EMU_CUDA_PIPELINE_H

/* one pending copy */
struct hn_emu_pipe_copy {
    void *dst;
    unsigned batch;               /* the commits made before it was issued */
    unsigned char size, zfill;    /* bytes written at dst; the last zfill are 0 */
    unsigned char data[16] __attribute__((aligned(16)));
};
#define HN_EMU_PIPE_SLOTS 63
/* a thread's pending copies (its thread scratch, zero at the block's start) */
struct hn_emu_pipe {
    unsigned commits;             /* batches committed */
    unsigned first, n;            /* a ring of n copies from slot first */
    unsigned pad[5];
    hn_emu_pipe_copy c[HN_EMU_PIPE_SLOTS];
};
static_assert(sizeof(hn_emu_pipe) <= HN_EMU_THREAD_SCRATCH, "the pipeline fits the thread scratch");

static __inline__ hn_emu_pipe *hn_emu_pipe_self() {
    return (hn_emu_pipe *)HN_EMU_PEEK(hn_emu_rt_)->thread_scratch(hn_emu_self());
}

/* Copies n <= 16 bytes in pieces of constant size (16, 8, 4, 2, 1), so the
 * instrumentation of harness check sees each piece: GCC expands a memcpy whose
 * size it can bound (here by 16) inline and uninstrumented. */
static __inline__ __attribute__((always_inline)) void hn_emu_pipe_move(void *dst, const void *src, unsigned n) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    unsigned o = 0;
    if (n & 16) memcpy(d + o, s + o, 16), o += 16;
    if (n & 8) memcpy(d + o, s + o, 8), o += 8;
    if (n & 4) memcpy(d + o, s + o, 4), o += 4;
    if (n & 2) memcpy(d + o, s + o, 2), o += 2;
    if (n & 1) memcpy(d + o, s + o, 1);
}

/* Writes the oldest pending copy to its destination (a store of the kernel's:
 * inlined at the user's call, so harness check names that line). */
static __inline__ __attribute__((always_inline)) void hn_emu_pipe_land(hn_emu_pipe *q) {
    hn_emu_pipe_copy *c = &q->c[q->first];
    hn_emu_pipe_move(c->dst, c->data, c->size);
    q->first = (q->first + 1) % HN_EMU_PIPE_SLOTS;
    q->n--;
}

/* Queues a copy of size - zfill bytes of src (read now) and zfill zeros to dst. */
static __inline__ __attribute__((always_inline)) void hn_emu_pipe_issue(void *dst, const void *src, unsigned size,
                                                                       unsigned zfill) {
    hn_emu_pipe *q = hn_emu_pipe_self();
    if (q->n == HN_EMU_PIPE_SLOTS) hn_emu_pipe_land(q);
    hn_emu_pipe_copy *c = &q->c[(q->first + q->n) % HN_EMU_PIPE_SLOTS];
    q->n++;
    c->dst = dst;
    c->batch = q->commits;
    c->size = (unsigned char)size;
    c->zfill = (unsigned char)zfill;
    hn_emu_pipe_move(c->data, src, size - zfill);
    if (zfill) memset(c->data + (size - zfill), 0, zfill);
}

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
    hn_emu_pipe_issue(dst, src, (unsigned)n, (unsigned)zfill);
}

static __inline__ void __pipeline_commit() {
    hn_emu_pipe_self()->commits++;
}

static __inline__ __attribute__((always_inline)) void __pipeline_wait_prior(size_t prior) {
    hn_emu_pipe *q = hn_emu_pipe_self();
    /* the batches before commits - prior land, oldest first */
    unsigned upto = q->commits > prior ? q->commits - (unsigned)prior : 0;
    while (q->n && q->c[q->first].batch < upto) hn_emu_pipe_land(q);
}

template <class... _HnA>
static __inline__ void __pipeline_arrive_on(_HnA...) {
    static_assert(hn_emu_false<_HnA...>::value,
                  "harness CPU emulator: __pipeline_arrive_on is not supported (cuda::barrier is not)");
}

#endif
