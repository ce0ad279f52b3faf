/*
 * emu_mem.h: device memory of the CPU emulator: host memory with guard pages.
 *
 * An emu_region is its own mapping: an inaccessible guard, the data pages, and
 * another inaccessible guard, each EMU_GUARD_BYTES of address space (no memory:
 * a kernel's index that strays up to that far from its buffer faults, named,
 * rather than writing into whatever the process mapped next to it). The data is placed at the END of its pages (its
 * start rounded down to `align`), so reading or writing past the end of a
 * buffer faults at once instead of corrupting a neighbour (exactly at the first
 * byte past it when the size is a multiple of `align`); an underflow faults
 * once it leaves the slack below the start.
 *
 * An emu_mem is the set of regions a backend handed out as device buffers,
 * numbered in order of allocation, so a fault address can be described
 * ("4 bytes past the end of device buffer #2 (0x..., 1024 bytes)").
 *
 * Invariants: regions never move; emu_mem is safe to use from several threads.
 */
#ifndef HN_EMU_MEM_H
#define HN_EMU_MEM_H

#include <stddef.h>

#include "util.h"

/* The guard on either side of a region's data pages: 1 MiB. */
#define EMU_GUARD_BYTES ((size_t)1 << 20)

typedef struct {
    char *map;         /* the whole mapping, guard pages included */
    size_t map_len;
    size_t guard;      /* the inaccessible bytes at either end of the mapping */
    char *data;        /* the usable bytes: [data, data + size) */
    size_t size;
} emu_region;

/* Maps a region for `size` bytes whose start is aligned to `align` (a power of
 * two, at most a page; device buffers ask for 16). size 0 gives a region whose data is the guard page. */
int emu_region_map(emu_region *r, size_t size, size_t align, hn_err *err);
/* NULL-safe and idempotent. */
void emu_region_unmap(emu_region *r);
/* Where addr lies relative to r: writes a phrase like "12 bytes past the end"
 * into out and returns 1 when addr is within `slack` bytes of the region's
 * data (outside it); returns 0 otherwise. */
int emu_region_where(const emu_region *r, const void *addr, size_t slack, char *out, size_t size);

typedef struct emu_mem emu_mem;

emu_mem *emu_mem_create(void);
/* Unmaps every buffer still allocated; NULL-safe. */
void emu_mem_destroy(emu_mem *m);
/* A new buffer of `bytes` (16-byte aligned start, guard page after its end). */
int emu_mem_alloc(emu_mem *m, size_t bytes, void **out, hn_err *err);
/* Frees a buffer from emu_mem_alloc; unknown pointers are ignored. */
void emu_mem_free(emu_mem *m, void *p);
/* The region of the buffer that starts at p and its number; 0 if none. */
int emu_mem_info(emu_mem *m, const void *p, emu_region *out, unsigned long *id);
/* Whether [p, p + bytes) lies inside one buffer. */
int emu_mem_contains(emu_mem *m, const void *p, size_t bytes);
/* Names the buffer at p for messages ("device buffer 'dlogits'"). */
void emu_mem_label(emu_mem *m, const void *p, const char *name);
/* "device buffer 'name'", or "device buffer #id" when it has no name. */
void emu_buf_text(unsigned long id, const char *name, char *out, size_t size);
/* Whether a launch wrote into a buffer's slack, the bytes of its pages that no
 * guard page covers (below its start in its first page, and up to 15 bytes past
 * its end when its size is not a multiple of 16), which hold a canary from the
 * allocation on. Returns the number of buffers whose slack changed, describes the
 * one allocated first into out ("a write 4 bytes past the end of device buffer
 * #2 (0x7f..., 1020 bytes)"), and restores the canary. */
int emu_mem_check_slack(emu_mem *m, char *out, size_t size);
/* Evicts every buffer's bytes from the CPU's caches (clflush, every level, every
 * core) and returns 1, when the buffers hold `limit` bytes or fewer in all;
 * returns 0 and touches nothing when they hold more (writing a cache-sized
 * buffer is then the cheaper way to a cold cache). */
int emu_mem_evict(emu_mem *m, size_t limit);
/* Describes a fault address near a buffer into out ("4 bytes past the end of
 * device buffer #2 (0x7f..., 1024 bytes)"); returns 1 when one was near. */
int emu_mem_describe(emu_mem *m, const void *addr, char *out, size_t size);

#endif
