/*
 * emu_sched.h: runs one CUDA block on the calling OS thread, with GPU semantics.
 *
 * A block starts in "loop mode": its threads run one after another, each a plain
 * call of the kernel on one fiber stack (about as cheap as a loop). The first
 * time any thread reaches a scheduling point (a barrier, a warp collective,
 * __activemask, or the yield of a spinning atomic), the block is upgraded in
 * place: the threads before it have finished, the running thread keeps its
 * stack, and every later thread gets a fiber of its own. From then on threads
 * switch cooperatively (emu_switch.S) from one scheduling point to the next,
 * in FIFO order of readiness. So kernels without collectives never pay for
 * fibers, and no source analysis is needed to decide.
 *
 * Barriers count arrivals per generation and check that every arrival comes
 * from the same call site; warp collectives gather the lanes of their mask and
 * exchange values when the last one arrives. Divergent barriers, masks naming
 * lanes that exited or do not exist, and deadlocks (no thread can run) fail
 * the block with a message naming the kernel, block, thread and source line.
 *
 * Invariants: one emu_sched per worker thread, used only by that thread; while
 * a kernel runs, emu_tl_cur (thread-local, initial-exec) points at the running
 * emulated thread and the kernel module reads it at %fs:emu_sched_tls_offset();
 * it is NULL whenever the worker runs its own code.
 */
#ifndef HN_EMU_SCHED_H
#define HN_EMU_SCHED_H

#include <stdatomic.h>
#include <stddef.h>

#include "shim/hn_emu_abi.h"
#include "util.h"

typedef struct emu_sched emu_sched;

/* What a block runs. */
typedef struct {
    const char *name;            /* the kernel's name expression, for messages */
    void (*fn)(void **args);     /* the module's launch wrapper */
    void **args;
    const atomic_int *abort;     /* set when the launch must stop */
} emu_sched_kernel;

enum { EMU_BLOCK_DONE = 0, EMU_BLOCK_FAILED = -1, EMU_BLOCK_STOPPED = -2 };

/* Creates a scheduler whose fibers get stack_bytes of stack each. */
int emu_sched_create(size_t stack_bytes, emu_sched **out, hn_err *err);
void emu_sched_destroy(emu_sched *s);

/* Runs block `blk` of kernel k to completion on the calling thread. Returns
 * EMU_BLOCK_DONE, EMU_BLOCK_FAILED (emu_sched_error says why) or
 * EMU_BLOCK_STOPPED (k->abort was seen). */
int emu_sched_run_block(emu_sched *s, const emu_sched_kernel *k, const hn_emu_block *blk);
const char *emu_sched_error(const emu_sched *s);
/* What a failed block's error is: the scheduler's checks of barriers and warp
 * collectives (divergence, masks, deadlock), a sanitizer finding that had to
 * stop the block, or anything else (a trap, an assert). */
enum { EMU_FAIL_OTHER = 0, EMU_FAIL_SYNC, EMU_FAIL_SANITIZER };
int emu_sched_error_kind(const emu_sched *s);
/* Fails the running block with msg (from a sanitizer callback in kernel
 * code, on the emulated thread's stack); does not return. */
__attribute__((noreturn)) void emu_sched_sanitizer_trap(const char *msg);
/* Where the last stopped thread was: a return address in the kernel module (or
 * NULL), and its linear thread id in *thread. */
void *emu_sched_stop_pc(const emu_sched *s, int *thread);

/* The runtime entry points handed to kernel modules. */
const hn_emu_rt *emu_sched_rt(void);
/* Who provides static __shared__ storage (the worker pool, emu_run.c): returns
 * the storage, or NULL with the reason in why. Called on a worker thread from
 * kernel code. */
typedef void *(*emu_static_shared_fn)(unsigned long size, unsigned long align, int line,
                                      const char *file, const char *name, char *why,
                                      size_t why_size);
void emu_sched_set_static_shared(emu_static_shared_fn fn);

/* Kernel printf: at most max_lines lines per launch reach stdout (< 0: all);
 * emu_sched_print_launch starts a launch's count; emu_sched_print_dropped
 * returns the lines held back since its last call. Process-wide. */
void emu_sched_print_limit(long max_lines);
void emu_sched_print_launch(void);
long emu_sched_print_dropped(void);
/* The offset from the %fs base of emu_tl_cur (the same in every thread). */
long emu_sched_tls_offset(void);
/* The running emulated thread of the calling worker, or NULL. */
const hn_emu_tctx *emu_sched_current(void);

/* For the fault handler (async-signal-safe): the fiber-stack slot whose guard
 * page holds addr, or -1; and the stack size. */
int emu_sched_guard_slot(const emu_sched *s, const void *addr);
size_t emu_sched_stack_bytes(const emu_sched *s);
/* Called by a signal handler just before it leaves the running fiber for good
 * with siglongjmp (sp: the fiber's stack pointer when interrupted; tells the
 * sanitizer, forgets the fiber); and by the worker once it has landed. */
void emu_sched_abandon(emu_sched *s, void *sp);
void emu_sched_landed(emu_sched *s);

#endif
