/*
 * emu_fiber.h: user-space fibers for the CPU emulator: guarded stacks and the
 * hand-written context switch (emu_switch.S).
 *
 * An emu_stacks is one address-space reservation cut into n slots; slot i is a
 * guard page (never accessible) followed by `stack_bytes` of stack, made
 * read-write the first time the slot is used. A fiber running on slot i that
 * overflows its stack faults on the guard page (kernels are compiled with
 * -fstack-clash-protection, so large frames probe it too) instead of writing
 * into its neighbour.
 *
 * Invariants: slots never move; [lo, hi) of a ready slot stays read-write until
 * emu_stacks_free; emu_stacks_guard_slot is async-signal-safe (pure arithmetic).
 */
#ifndef HN_EMU_FIBER_H
#define HN_EMU_FIBER_H

#include <stddef.h>

#include "util.h"

typedef struct {
    char *base;            /* the reservation; slot i starts at base + i * slot_bytes */
    size_t slot_bytes;     /* page + stack_bytes */
    size_t stack_bytes;
    size_t page;
    int n;
    unsigned char *ready;  /* ready[i]: slot i is read-write */
} emu_stacks;

/* Reserves n slots of stack_bytes (rounded up to pages) each. */
int emu_stacks_init(emu_stacks *s, int n, size_t stack_bytes, hn_err *err);
/* Releases the reservation; NULL-safe and idempotent. */
void emu_stacks_free(emu_stacks *s);
/* The usable range [*lo, *hi) of slot i, made read-write on first use. */
int emu_stacks_get(emu_stacks *s, int i, char **lo, char **hi, hn_err *err);
/* The slot whose guard page holds addr, or -1. */
int emu_stacks_guard_slot(const emu_stacks *s, const void *addr);

/* Builds the first frame of a fiber whose stack ends at hi (exclusive) so that
 * switching to the returned stack pointer calls entry(arg) on that stack with a
 * default floating-point environment. entry must never return. */
void *emu_fiber_prepare(char *hi, void (*entry)(void *), void *arg);

/* emu_switch.S: saves the current context's registers on its stack, stores its
 * stack pointer in *save_sp, and resumes the context saved at new_sp. */
void hn_emu_switch(void **save_sp, void *new_sp);
void hn_emu_fiber_start(void);

#endif
