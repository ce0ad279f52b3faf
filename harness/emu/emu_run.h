/*
 * emu_run.h: the emulator's worker pool: launches a grid on N worker OS
 * threads, turns faults, hangs and time-outs into messages.
 *
 * Blocks are handed out in increasing linear order (x fastest, then y, then z)
 * from a shared atomic counter; each block runs to completion on one worker
 * (emu_sched.c). So a block spinning until a global counter reaches its linear
 * id (SINGLE_BLOCK) always waits for blocks that already run.
 *
 * Faults: SIGSEGV, SIGBUS, SIGFPE and SIGILL raised by an emulated thread are
 * handled on the worker's alternate signal stack; the handler records the
 * address, the program counter and the thread, and siglongjmps back to the
 * worker, which abandons the block. The launch then fails with a message
 * naming the kernel, block, thread, the source line (addr2line on the kernel
 * module) and, for a bad address, what it was near: a device buffer's end, a
 * fiber stack's guard page (stack overflow), the dynamic shared memory, a
 * static __shared__ variable.
 *
 * Shared memory: each worker (so each block, as a block never changes worker)
 * has the launch's dynamic shared memory and every static __shared__ variable
 * the kernel touches in mappings of their own that end at a guard page, so an
 * access past the end faults at the first byte. Dynamic shared memory starts
 * 16-byte aligned (CUDA's guarantee); when its size is not a multiple of 16,
 * the few bytes of padding hold a pattern that is checked after every block
 * (a write there fails the launch; a read is not caught). Static variables
 * are allocated when a worker first touches them and kept, per module, until
 * the module is unloaded (emu_pool_forget_module).
 * Faults elsewhere go to whatever handler was installed before.
 *
 * Stopping: when a launch fails or runs past its timeout, the launching thread
 * sets the launch's abort flag and signals every busy worker until it returns.
 * A worker interrupted with its program counter inside the kernel module
 * leaves the block at once (kernel code holds no runtime locks); elsewhere it
 * stops at its next scheduling point. The pool stays usable afterwards.
 *
 * Invariants: launches on one pool are serialised; kernel printf output is
 * flushed before emu_pool_launch returns.
 */
#ifndef HN_EMU_RUN_H
#define HN_EMU_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "emu_mem.h"
#include "emu_san.h"
#include "shim/hn_emu_abi.h"
#include "util.h"

typedef struct emu_pool emu_pool;

typedef struct {
    const char *name;              /* kernel name expression, for messages */
    void (*fn)(void **args);       /* the module's launch wrapper */
    void **args;
    struct hn_emu_u3 grid, block;
    size_t dyn_shared;             /* bytes of extern __shared__ */
    uintptr_t text_lo, text_hi;    /* the module's executable code */
    uintptr_t so_base;             /* its load address (for addr2line) */
    const char *so_path;
    double timeout;                /* seconds; 0 = none */
    emu_mem *mem;                  /* device buffers, to describe bad addresses */
    const void *module;            /* the module's handle: owner of its static __shared__ */
    size_t shared_limit;           /* bytes of shared memory a block may have (dynamic
                                      plus static) */
    emu_san *san;                  /* the sanitizer the instrumented module reports to,
                                      or NULL (then its callbacks do nothing) */
    struct {                       /* a profile's plain module (fn NULL if none): the
                                      blocks the profile does not record run it */
        void (*fn)(void **args);
        const void *module;
        uintptr_t text_lo, text_hi, so_base;
        const char *so_path;
    } plain;
} emu_launch_req;

/* Starts n worker threads (n >= 1) with fiber stacks of stack_bytes. */
int emu_pool_create(int n, size_t stack_bytes, emu_pool **out, hn_err *err);
/* Stops and joins the workers; NULL-safe. */
void emu_pool_destroy(emu_pool *p);
int emu_pool_threads(const emu_pool *p);
/* Runs the grid to completion. Returns -1 with the fault, time-out or
 * divergence described in err. */
int emu_pool_launch(emu_pool *p, const emu_launch_req *req, hn_err *err);

/* Unmaps the static __shared__ storage of a module that has been unloaded.
 * Not during a launch. */
void emu_pool_forget_module(emu_pool *p, const void *module);

/* "file.cu:12 (in kernel_name)" for a program counter inside the module, via
 * addr2line; falls back to "module.so+0x1234". */
void emu_run_describe_pc(const emu_launch_req *req, uintptr_t pc, char *out, size_t size);

#endif
