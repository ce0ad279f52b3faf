/* emu_mem.c: guarded device buffers; see emu_mem.h. */
#define _GNU_SOURCE
#include "emu_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h> /* _mm_clflush, _mm_mfence */
#endif

/* How far past a buffer a fault still counts as "near" it: up to the next
 * region of the zone (below). */
#define NEAR_AFTER ((size_t)4 << 30)

/* What a device buffer's slack (the bytes of its pages outside its data) holds:
 * a byte that differs from one buffer to the next, so a kernel that copies one
 * element past the end of its input to one past the end of its output still
 * changes the output's slack. */
static unsigned char slack_canary(unsigned long id) {
    unsigned char c = (unsigned char)(0x5A + 0x3B * id);
    return c == 0 || c == 0xff ? 0xA5 : c; /* never the bytes kernels write most */
}

static size_t page_size(void) {
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

/* Where regions are mapped: a zone of the address space of their own (32 TiB to
 * 95 TiB: above ASan's shadow, below its allocator, far from the heap, the
 * libraries and the stacks), each region ZONE_GAP after the one before. A
 * GPU's device memory is not the host's: an index that strays a long way from
 * its buffer should fault there, not write into the harness. With regions
 * mapped wherever the kernel put them, a write 1 GiB past an output had landed
 * in writable memory and passed unseen. Past the zone's end the next region
 * starts over at its beginning (freed regions leave holes there); a place
 * already taken is skipped (MAP_FIXED_NOREPLACE), and after a few tries the
 * region goes wherever the kernel puts it. */
#define ZONE_LO ((uintptr_t)0x200000000000ull)
#define ZONE_HI ((uintptr_t)0x5f0000000000ull)
#define ZONE_GAP ((uintptr_t)4 << 30)
static uintptr_t zone_next = ZONE_LO;

static void *zone_map(size_t len) {
#if defined(__x86_64__) && defined(MAP_FIXED_NOREPLACE)
    uintptr_t step = ((uintptr_t)len + ZONE_GAP + ZONE_GAP - 1) / ZONE_GAP * ZONE_GAP;
    for (int tries = 0; tries < 16 && len < ZONE_HI - ZONE_LO; tries++) {
        uintptr_t at = __atomic_fetch_add(&zone_next, step, __ATOMIC_RELAXED);
        if (at < ZONE_LO || at + len > ZONE_HI) { /* wrapped: start the zone over */
            uintptr_t seen = at + step;
            __atomic_compare_exchange_n(&zone_next, &seen, ZONE_LO, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
            continue;
        }
        void *p = mmap((void *)at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                       -1, 0);
        if (p != MAP_FAILED) return p; /* (a kernel before 4.17 takes the flag as a hint) */
    }
#endif
    return mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

int emu_region_map(emu_region *r, size_t size, size_t align, hn_err *err) {
    memset(r, 0, sizeof *r);
    size_t pg = page_size();
    if (align < 1) align = 1;
    size_t rounded = (size + align - 1) & ~(align - 1);
    if (rounded < size) return hn_errf(err, "emulator: allocation of %zu bytes is too large", size);
    size_t data_pages = (rounded + pg - 1) / pg;
    size_t guard = (EMU_GUARD_BYTES + pg - 1) / pg * pg;
    if (data_pages > (SIZE_MAX - 2 * guard) / pg)
        return hn_errf(err, "emulator: allocation of %zu bytes is too large", size);
    size_t len = data_pages * pg + 2 * guard;
    void *p = zone_map(len);
    if (p == MAP_FAILED)
        return hn_errf(err, "emulator: cannot allocate %zu bytes: %s", size, strerror(errno));
    char *m = p;
    if (data_pages && mprotect(m + guard, data_pages * pg, PROT_READ | PROT_WRITE) != 0) {
        int e = errno;
        munmap(p, len);
        return hn_errf(err, "emulator: cannot allocate %zu bytes: %s", size, strerror(e));
    }
    r->map = m;
    r->map_len = len;
    r->guard = guard;
    r->data = m + guard + data_pages * pg - rounded;
    r->size = size;
    return 0;
}

void emu_region_unmap(emu_region *r) {
    if (!r || !r->map) return;
    munmap(r->map, r->map_len);
    memset(r, 0, sizeof *r);
}

int emu_region_where(const emu_region *r, const void *addr, size_t slack, char *out, size_t size) {
    if (!r->map) return 0;
    uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)r->data, hi = lo + r->size;
    if (a >= hi && a - hi < slack) {
        snprintf(out, size, "%zu bytes past the end", (size_t)(a - hi));
        return 1;
    }
    if (a < lo && lo - a <= (uintptr_t)(r->data - r->map)) { /* the slack and the guard below */
        snprintf(out, size, "%zu bytes before the start", (size_t)(lo - a));
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------- */

typedef struct {
    emu_region r;
    unsigned long id;
    char name[48]; /* emu_mem_label's, or "" */
} emu_buf;

void emu_buf_text(unsigned long id, const char *name, char *out, size_t size) {
    if (name && *name)
        snprintf(out, size, "device buffer '%s'", name);
    else
        snprintf(out, size, "device buffer #%lu", id);
}

/* A buffer's slack: the bytes of its data pages below its start (its first page
 * up to the start) and past its end (up to the next multiple of 16, where the
 * guard page begins). The guard pages cannot see a write there, so the slack
 * holds a canary byte and emu_mem_check_slack looks at it after each launch. */
static void slack_of(const emu_region *r, char **front, size_t *front_n, char **tail, size_t *tail_n) {
    *front = r->map + r->guard;
    *front_n = (size_t)(r->data - *front);
    *tail = r->data + r->size;
    *tail_n = (size_t)(r->map + r->map_len - r->guard - *tail);
}

/* Whether n bytes at p (n a multiple of 8) all hold byte c: a word at a time,
 * since a first page's slack is up to a page long. */
static int words_intact(const char *p, size_t n, unsigned char c) {
    uint64_t acc = 0, word = 0x0101010101010101ULL * c;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        acc |= v ^ word;
    }
    return acc == 0;
}

struct emu_mem {
    pthread_mutex_t mu;
    emu_buf *bufs;
    int n, cap;
    unsigned long next_id;
};

emu_mem *emu_mem_create(void) {
    emu_mem *m = xcalloc(1, sizeof *m);
    pthread_mutex_init(&m->mu, NULL);
    return m;
}

void emu_mem_destroy(emu_mem *m) {
    if (!m) return;
    for (int i = 0; i < m->n; i++) emu_region_unmap(&m->bufs[i].r);
    free(m->bufs);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

int emu_mem_alloc(emu_mem *m, size_t bytes, void **out, hn_err *err) {
    emu_region r;
    if (emu_region_map(&r, bytes, 16, err) != 0) return -1;
    pthread_mutex_lock(&m->mu);
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 16;
        m->bufs = xrealloc(m->bufs, (size_t)m->cap * sizeof *m->bufs);
    }
    unsigned long id = ++m->next_id;
    m->bufs[m->n].r = r;
    m->bufs[m->n].id = id;
    m->bufs[m->n].name[0] = '\0';
    m->n++;
    pthread_mutex_unlock(&m->mu);
    char *front, *tail;
    size_t front_n, tail_n;
    slack_of(&r, &front, &front_n, &tail, &tail_n);
    memset(front, slack_canary(id), front_n);
    memset(tail, slack_canary(id), tail_n);
    *out = r.data;
    return 0;
}

int emu_mem_check_slack(emu_mem *m, char *out, size_t size) {
    int broken = 0;
    unsigned long first = 0;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n; i++) {
        const emu_buf *b = &m->bufs[i];
        char *front, *tail;
        size_t front_n, tail_n;
        slack_of(&b->r, &front, &front_n, &tail, &tail_n);
        unsigned char c = slack_canary(b->id);
        long past = -1, before = -1;
        for (size_t k = 0; k < tail_n && past < 0; k++)
            if ((unsigned char)tail[k] != c) past = (long)k;
        if (!words_intact(front, front_n, c)) /* the lowest byte written: where the access began */
            for (size_t k = 0; k < front_n && before < 0; k++)
                if ((unsigned char)front[k] != c) before = (long)(front_n - k);
        if (past < 0 && before < 0) continue;
        if (!broken++ || b->id < first) {
            first = b->id;
            char text[80];
            emu_buf_text(b->id, b->name, text, sizeof text);
            if (past >= 0)
                snprintf(out, size, "a write %ld bytes past the end of %s (%p, %zu bytes)", past, text,
                         (void *)b->r.data, b->r.size);
            else
                snprintf(out, size, "a write %ld bytes before the start of %s (%p, %zu bytes)", before, text,
                         (void *)b->r.data, b->r.size);
        }
        memset(front, c, front_n);
        memset(tail, c, tail_n);
    }
    pthread_mutex_unlock(&m->mu);
    return broken;
}

int emu_mem_evict(emu_mem *m, size_t limit) {
    pthread_mutex_lock(&m->mu);
    size_t total = 0;
    for (int i = 0; i < m->n; i++) total += m->bufs[i].r.size;
#if defined(__x86_64__)
    int evicted = total <= limit;
#else
    int evicted = 0;
#endif
    for (int i = 0; evicted && i < m->n; i++) {
        const char *p = m->bufs[i].r.data, *end = p + m->bufs[i].r.size;
#if defined(__x86_64__) /* x86-64's cache lines are 64 bytes */
        for (p = (const char *)((uintptr_t)p & ~(uintptr_t)63); p < end; p += 64) _mm_clflush(p);
#else
        (void)p, (void)end;
#endif
    }
#if defined(__x86_64__)
    if (evicted) _mm_mfence(); /* the evictions done before the launch that follows */
#endif
    pthread_mutex_unlock(&m->mu);
    return evicted;
}

void emu_mem_free(emu_mem *m, void *p) {
    if (!m || !p) return;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n; i++) {
        if (m->bufs[i].r.data != p) continue;
        emu_region_unmap(&m->bufs[i].r);
        m->bufs[i] = m->bufs[--m->n];
        break;
    }
    pthread_mutex_unlock(&m->mu);
}

int emu_mem_info(emu_mem *m, const void *p, emu_region *out, unsigned long *id) {
    int found = 0;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n && !found; i++) {
        if (m->bufs[i].r.data != p) continue;
        *out = m->bufs[i].r;
        *id = m->bufs[i].id;
        found = 1;
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

void emu_mem_label(emu_mem *m, const void *p, const char *name) {
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n; i++)
        if (m->bufs[i].r.data == p) snprintf(m->bufs[i].name, sizeof m->bufs[i].name, "%s", name);
    pthread_mutex_unlock(&m->mu);
}

int emu_mem_contains(emu_mem *m, const void *p, size_t bytes) {
    uintptr_t a = (uintptr_t)p;
    int found = 0;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n && !found; i++) {
        uintptr_t lo = (uintptr_t)m->bufs[i].r.data, hi = lo + m->bufs[i].r.size;
        found = a >= lo && a <= hi && bytes <= hi - a;
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}

int emu_mem_describe(emu_mem *m, const void *addr, char *out, size_t size) {
    int found = 0;
    pthread_mutex_lock(&m->mu);
    /* the closest buffer that the address is near */
    size_t best = (size_t)-1;
    for (int i = 0; i < m->n; i++) {
        const emu_buf *b = &m->bufs[i];
        char where[96];
        if (!emu_region_where(&b->r, addr, NEAR_AFTER, where, sizeof where)) continue;
        uintptr_t a = (uintptr_t)addr, lo = (uintptr_t)b->r.data, hi = lo + b->r.size;
        size_t d = a >= hi ? a - hi : lo - a;
        if (d >= best) continue;
        best = d;
        char text[80];
        emu_buf_text(b->id, b->name, text, sizeof text);
        snprintf(out, size, "%s of %s (%p, %zu bytes)", where, text, (void *)b->r.data, b->r.size);
        found = 1;
    }
    pthread_mutex_unlock(&m->mu);
    return found;
}
