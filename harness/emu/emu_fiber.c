/* emu_fiber.c: guarded fiber stacks and first frames; see emu_fiber.h. */
#define _GNU_SOURCE
#include "emu_fiber.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int emu_stacks_init(emu_stacks *s, int n, size_t stack_bytes, hn_err *err) {
    memset(s, 0, sizeof *s);
    long pg = sysconf(_SC_PAGESIZE);
    s->page = pg > 0 ? (size_t)pg : 4096;
    s->stack_bytes = (stack_bytes + s->page - 1) / s->page * s->page;
    s->slot_bytes = s->page + s->stack_bytes;
    s->n = n;
    size_t total = s->slot_bytes * (size_t)n;
    void *p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return hn_errf(err, "emulator: cannot reserve %zu bytes for fiber stacks: %s", total,
                       strerror(errno));
    s->base = p;
    s->ready = xcalloc((size_t)n, 1);
    return 0;
}

void emu_stacks_free(emu_stacks *s) {
    if (!s || !s->base) return;
    munmap(s->base, s->slot_bytes * (size_t)s->n);
    free(s->ready);
    s->base = NULL;
    s->ready = NULL;
}

int emu_stacks_get(emu_stacks *s, int i, char **lo, char **hi, hn_err *err) {
    char *slot = s->base + (size_t)i * s->slot_bytes;
    if (!s->ready[i]) {
        if (mprotect(slot + s->page, s->stack_bytes, PROT_READ | PROT_WRITE) != 0)
            return hn_errf(err, "emulator: cannot map a %zu-byte fiber stack: %s", s->stack_bytes,
                           strerror(errno));
        s->ready[i] = 1;
    }
    *lo = slot + s->page;
    *hi = slot + s->slot_bytes;
    return 0;
}

int emu_stacks_guard_slot(const emu_stacks *s, const void *addr) {
    uintptr_t a = (uintptr_t)addr, b = (uintptr_t)s->base;
    if (!s->base || a < b || a >= b + s->slot_bytes * (size_t)s->n) return -1;
    size_t i = (a - b) / s->slot_bytes;
    return (a - b) % s->slot_bytes < s->page ? (int)i : -1;
}

#if !defined(__x86_64__)
/* The switch is x86-64 assembly; elsewhere hn_backend_emu_create refuses to
 * start, so these are never called. They keep the library linkable. */
void hn_emu_switch(void **save_sp, void *new_sp) {
    (void)save_sp, (void)new_sp;
    abort();
}

void hn_emu_fiber_start(void) {
    abort();
}
#endif

void *emu_fiber_prepare(char *hi, void (*entry)(void *), void *arg) {
    /* 16-byte aligned, with the 64-byte frame emu_switch.S pops: after its
     * final `ret`, rsp is 16-byte aligned at hn_emu_fiber_start's call. */
    uintptr_t top = ((uintptr_t)hi - 64) & ~(uintptr_t)15;
    uint64_t *f = (uint64_t *)(top - 64);
    uint32_t mxcsr = 0x1f80;   /* all exceptions masked, round to nearest */
    uint16_t fpucw = 0x037f;   /* x87 default */
    memset(f, 0, 64);
    memcpy(&f[0], &mxcsr, 4);
    memcpy((char *)&f[0] + 4, &fpucw, 2);
    f[3] = (uint64_t)(uintptr_t)entry; /* r13 */
    f[4] = (uint64_t)(uintptr_t)arg;   /* r12 */
    f[7] = (uint64_t)(uintptr_t)&hn_emu_fiber_start;
    return f;
}
