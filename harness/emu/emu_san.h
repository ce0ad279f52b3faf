/*
 * emu_san.h: the emulator's sanitizer: what an instrumented kernel module
 * (emu_compile.c, hn_emu_san_stub.cc) reports about every load and store,
 * checked against the state of device and shared memory.
 *
 *   race  shared memory: a write and a read or write of the same byte by two
 *         threads of a block with nothing ordering them: no __syncthreads
 *         between them, no warp collective (__syncwarp, a shuffle, a tile's
 *         sync ...) both took part in when they are in one warp, and not both
 *         an atomic or fence after the first access (a hand-off through an
 *         atomic flag). Atomic and volatile accesses are never racy.
 *         global memory: the same within a block; across blocks, a plain
 *         access and a write of another block with no hand-off between them
 *         (a fence or atomic of the earlier block after its access, an atomic
 *         or volatile read of the later one before). Atomics and volatile
 *         accesses race with neither each other nor plain reads. Off, with a
 *         note in the findings (hn_san_findings.note), past 64 MiB of device
 *         buffers or 2^24 blocks.
 *   mem   device memory read or written outside its buffer (the 16-byte slack
 *         after its end included), shared memory outside the declared static
 *         or dynamic size, accesses not aligned to their size.
 *   init  shared memory read before any thread of the block wrote it; device
 *         memory read before anything wrote it since it was allocated (uploads
 *         and fills write, emu_san_mark(.., 0) poisons: outputs before a run).
 *   sync  the scheduler's own failures (divergent barriers, warp masks,
 *         deadlocks), added by emu_run.c in the same format.
 *
 * The shadow state: per device buffer one byte per byte (written or not) and,
 * when races are checked, a cell per 4-byte word (last writer, two readers:
 * block, thread, time, pc, bytes), mapped once and zeroed per launch; per
 * shared variable of a worker one cell per 4-byte word, split into a cell per
 * byte once a thread touches part of the word (the last writer, up to two
 * readers, each with its thread, time and pc, and the bytes before the last
 * write). Time is a per-worker counter that moves at every synchronisation
 * (barrier, warp collective, atomic); a barrier's time orders everything
 * before it; warp collectives keep a vector clock over the 32 lanes of each
 * warp. The module's callbacks settle plain accesses to device buffers the
 * worker touched last without a call (hn_emu_san_fast, the worker's first
 * member); a write that races is reported only once its store shows that it
 * changed the bytes.
 *
 * A worker profiling instead (emu_san_profile) hands every access of the
 * blocks the profile records to emu_prof.c and ignores the others.
 *
 * Findings are deduplicated by (kind, source lines), counted, and ordered by
 * the block (and the access within it) where each first happened, so the
 * first finding does not depend on how blocks were spread over workers.
 *
 * Invariants: one emu_san per backend; buffers are added and removed only
 * between launches; an emu_san_worker belongs to one worker thread and is
 * bound (emu_san_tl) only while that worker runs a launch of a sanitizing
 * backend; callbacks with no bound worker do nothing.
 */
#ifndef HN_EMU_SAN_H
#define HN_EMU_SAN_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "emu_mem.h"
#include "shim/hn_emu_abi.h"
#include "util.h"

typedef struct emu_san emu_san;
typedef struct emu_san_worker emu_san_worker;

/* The callbacks' table handed to instrumented modules (hn_emu_module_san). */
const hn_emu_san_rt *emu_san_rt(void);

/* checks: HN_SAN_* (backend.h). */
emu_san *emu_san_create(unsigned checks);
/* Makes s profile memory accesses instead of checking them (emu_prof.h):
 * `blocks` blocks of each launch (0: all). */
void emu_san_profile(emu_san *s, int blocks);
/* Whether the profile records block `linear` of the launch begun last (1 when
 * s does not profile: every block runs the instrumented module). */
int emu_san_profiles_block(const emu_san *s, unsigned long long linear);
/* The profile since the last take (then forgotten); empty if not profiling. */
void emu_san_profile_take(emu_san *s, hn_profile *out);
void emu_san_destroy(emu_san *s); /* NULL-safe */
unsigned emu_san_checks(const emu_san *s);

/* Device buffers: r as emu_mem mapped it, id its number in messages. */
void emu_san_buffer_add(emu_san *s, const emu_region *r, unsigned long id);
/* Names the buffer whose data starts at data, for messages. */
void emu_san_buffer_label(emu_san *s, const void *data, const char *name);
void emu_san_buffer_remove(emu_san *s, const void *data);
/* Marks [p, p + n) of a buffer written (1) or never written (0). */
void emu_san_mark(emu_san *s, const void *p, size_t n, int written);

/* The kernel module of the launch about to run (for source lines). */
typedef struct {
    const char *kernel;       /* name expression */
    const char *so_path;
    uintptr_t so_base, text_lo, text_hi;
    struct hn_emu_u3 grid, block;
} emu_san_launch;
void emu_san_launch_begin(emu_san *s, const emu_san_launch *l);

/* A worker's state; created on the worker's first sanitized launch. */
emu_san_worker *emu_san_worker_create(void);
void emu_san_worker_destroy(emu_san_worker *w); /* NULL-safe */
/* Binds w to the calling thread for a launch of s (s NULL: unbinds), with no
 * shared memory known yet. */
void emu_san_worker_bind(emu_san_worker *w, emu_san *s);
/* Shared memory of the bound worker: [data, data + size) is the variable,
 * [lo, hi) the mapping around it (guard pages included); name and decl (its
 * file:line) for messages, name NULL for the dynamic shared memory. */
void emu_san_shared_add(void *data, size_t size, const void *lo, const void *hi, const char *name,
                        const char *decl);

/* The bound worker's thread is current (set while kernel code runs). */
extern _Thread_local emu_san_worker *emu_san_tl __attribute__((tls_model("initial-exec")));

/* Scheduler hooks, called on the worker only when emu_san_tl is set. */
void emu_san_block_begin(const hn_emu_block *blk);
/* The block ended (done = 0: it failed). */
void emu_san_block_end(int done);
void emu_san_barrier(void);
void emu_san_warp_sync(int warp, unsigned mask);

/* A scheduler failure (divergence, masks, deadlock) as a sync finding; block
 * is the failing block's linear index. */
void emu_san_add_sync(emu_san *s, unsigned long long block, const char *msg);

/* What was found since the last take (backend.h), source lines resolved with
 * addr2line; clears the findings. */
void emu_san_take(emu_san *s, hn_san_findings *out);

#endif
