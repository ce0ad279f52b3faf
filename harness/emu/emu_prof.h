/*
 * emu_prof.h: the emulator's memory profile: per instruction of the kernel
 * (its return address in an instrumented module, hence a source line),
 * global and shared memory requests as a GPU would issue them, the 32-byte
 * sectors each global request touches (coalescing) and the bank conflicts of
 * each shared one.
 *
 * A request is one warp-wide instance of a memory instruction: the k-th time
 * lane l executes the instruction at pc is grouped with the k-th time every
 * other lane of its warp does, so divergent lanes join the requests they
 * share and make their own otherwise. A global request costs as many 32-byte
 * sectors as its lanes' bytes touch; a shared request as many wavefronts as
 * the most distinct 4-byte words any of the 32 banks holds in each phase
 * (a phase is 32 lanes for accesses of 4 bytes or less, 16 for 8 bytes, 8 for
 * 16), so conflicts = wavefronts - phases; lanes reading one word share it.
 *
 * Profiling every access of every block costs several times the plain
 * emulator, so by default a few blocks of each launch are profiled (every
 * stride-th block in linear order, the stride a prime so it never follows the
 * grid's shape) and the counts scaled by blocks / profiled blocks; ratios are
 * exact for the blocks profiled. The other blocks run the same instrumented
 * code, their accesses ignored.
 *
 * Invariants: an emu_prof_worker is used by one worker thread; a block's
 * requests are finished when the block ends (emu_prof_block_end) and merged
 * into the emu_prof when the worker leaves the launch (emu_prof_merge, under
 * the emu_prof's lock).
 */
#ifndef HN_EMU_PROF_H
#define HN_EMU_PROF_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "shim/hn_emu_abi.h"

typedef struct emu_prof emu_prof;
typedef struct emu_prof_worker emu_prof_worker;

enum { EMU_PROF_GLOBAL = 0, EMU_PROF_SHARED = 1 };

/* blocks: blocks of each launch to profile (0: every block). */
emu_prof *emu_prof_create(int blocks);
void emu_prof_destroy(emu_prof *p); /* NULL-safe */

/* A launch of `nblocks` blocks of the module at so_path (base, text range). */
void emu_prof_launch_begin(emu_prof *p, unsigned long long nblocks, const char *kernel, const char *so_path,
                           uintptr_t so_base, uintptr_t text_lo, uintptr_t text_hi);

/* Whether block `linear` of the current launch is one the profile records. */
int emu_prof_records(const emu_prof *p, unsigned long long linear);

emu_prof_worker *emu_prof_worker_create(void);
void emu_prof_worker_destroy(emu_prof_worker *w); /* NULL-safe */

/* Whether block `linear` of the launch is profiled; when it is, the worker
 * starts recording it (nthreads threads). */
int emu_prof_block_begin(emu_prof_worker *w, const emu_prof *p, unsigned long long linear, unsigned nthreads);
/* One access of a profiled block: thread `thread` (linear), n bytes at
 * offset `off` of object `obj` (a device buffer's or shared variable's
 * number), info as the module passed it, pc the instruction. */
void emu_prof_access(emu_prof_worker *w, int space, unsigned obj, uintptr_t off, size_t n,
                     unsigned long long info, uintptr_t pc, unsigned thread);
/* The block ended (done = 0: it failed; its requests are dropped). */
void emu_prof_block_end(emu_prof_worker *w, int done);
/* Adds what the worker recorded to p and forgets it. */
void emu_prof_merge(emu_prof_worker *w, emu_prof *p);

/* The profile since the last take, per source line (addr2line), ordered by
 * file and line; then forgets it. */
void emu_prof_take(emu_prof *p, hn_profile *out);

#endif
