/* emu_san.c: the emulator's sanitizer (race, mem, init, sync); see emu_san.h. */
#define _GNU_SOURCE
#include "emu_san.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_prof.h"
#include "emu_run.h"
#include "emu_sched.h"

/* the running emulated thread (emu_sched.c) */
extern _Thread_local hn_emu_tctx *emu_tl_cur __attribute__((tls_model("initial-exec")));

_Thread_local emu_san_worker *emu_san_tl __attribute__((tls_model("initial-exec")));

#define MAX_FINDINGS 256        /* distinct findings kept per launch (the rest counted) */
#define SEEN_SLOTS 512          /* a worker's table of findings it has already reported */
#define SYNC_ID 0x7ffu          /* "writer" of bytes written by atomics and volatile stores */
#define GRACE_MAX_BYTES (64ull << 20) /* device buffers the global race check covers, in all */
#define GRACE_MAX_BLOCKS (1ull << 24) /* blocks of a launch it covers */

/* What a finding is. */
enum {
    W_RAW, W_WAR, W_WAW,                 /* race */
    W_OOB_GLOBAL, W_OOB_SHARED, W_MISALIGNED, /* mem */
    W_UNINIT_SHARED, W_UNINIT_GLOBAL,    /* init */
    W_SYNC,                              /* sync */
    W_OOB_INDEX,                         /* mem */
};
static const int what_class[] = {HN_SAN_C_RACE, HN_SAN_C_RACE, HN_SAN_C_RACE,
                                 HN_SAN_C_MEM,  HN_SAN_C_MEM,  HN_SAN_C_MEM,
                                 HN_SAN_C_INIT, HN_SAN_C_INIT, HN_SAN_C_SYNC,
                                 HN_SAN_C_MEM};
static const char *const class_names[HN_SAN_NCLASS] = {"race", "memcheck", "initcheck", "synccheck"};

/* ------------------------------------------------------------------------- */
/* state */

/* The global race check's cell of one 4-byte word of a device buffer: its
 * last writer and up to two readers in the current launch (all zero: none).
 * b: linear block + 1; t: the time on that block's worker; pc: offset in the
 * module's code; thr: linear thread; mask: the bytes of the word accessed;
 * wsync: the write was an atomic or volatile store. */
typedef struct {
    uint32_t wb, wt, wpc;
    uint16_t wthr;
    uint8_t wmask, wsync;
    uint32_t rb[2], rt[2], rpc[2];
    uint16_t rthr[2];
    uint8_t rmask[2], pad[2];
} san_gcell;

typedef struct {
    uintptr_t lo, hi;           /* the whole mapping, guard pages included */
    uintptr_t acc_lo, acc_hi;   /* what can be touched without a fault */
    uintptr_t data;
    size_t size;
    unsigned char *init;        /* one byte per byte: 1 = written */
    size_t init_len;            /* its mapping */
    size_t unwritten;           /* bytes not written as far as uploads, fills and poisons
                                   tell (kernels' writes are not counted): 0 means every
                                   read is of written bytes */
    unsigned long id;
    char name[48];              /* emu_san_buffer_label's, or "" */
    san_gcell *gc;              /* a cell per word (global race check), zeroed per launch; or NULL */
    size_t gc_len;              /* its mapping */
} san_buf;

/* One unit of shared memory, a 4-byte word (or, once a thread touches part
 * of a word, each of its bytes: the word is "split"): its last writer and up
 * to two readers, since the block began. A time below the block's start means
 * "none". */
typedef struct {
    uint32_t wt, r1t, r2t;      /* times */
    uint32_t wpc, r1pc, r2pc;   /* pc offsets in the module's code */
    uint32_t prev;              /* the bytes before the last write (a write that left them
                                   as they were cannot race with a read) */
    uint16_t w, r1, r2;         /* linear thread ids (w: SYNC_ID for atomic writes) */
    uint16_t split;             /* word cells: its bytes have cells of their own */
} san_cell;

typedef struct {
    uintptr_t data;
    size_t size;
    uintptr_t lo, span;         /* the mapping around it */
    uintptr_t acc_lo, acc_hi;
    san_cell *cells;            /* a cell per 4-byte word */
    size_t cells_len;
    san_cell *bytes;            /* a cell per byte, for split words (made on first use) */
    size_t bytes_len;
    int live;                   /* part of the current launch */
    char name[64];              /* "" for the dynamic shared memory */
    char decl[128];
} san_region;

typedef struct {
    int what;
    uintptr_t pc, pc2;          /* the access; the earlier one of a race (or 0) */
    unsigned launch;            /* the launch of the first occurrence, counted since the last take */
    char *kernel;               /* that launch's kernel (a variant of several launches names each) */
    unsigned long long block;   /* linear index of the block of the first occurrence */
    unsigned seq;               /* its order in that block */
    struct hn_emu_u3 bid, tid, tid2;
    long count;
    char *text;                 /* what and where, without the source lines */
    char *msg;                  /* sync: the scheduler's message */
} san_finding;

struct emu_san {
    unsigned checks;
    pthread_mutex_t mu;
    san_buf *bufs;              /* sorted by lo */
    int n_bufs, cap_bufs;
    emu_san_launch launch;
    char *kernel, *so_path;
    unsigned n_launch;          /* launches begun since the last take; findings say which */
    san_finding *f;
    int n_f;
    long dropped;
    /* source lines already resolved: pc -> "file:line (in fn)" */
    uintptr_t *line_pc;
    char **line_text;
    int n_lines, cap_lines;
    char *lines_of;             /* the module they belong to */
    emu_prof *prof;             /* the profile (instead of checks), or NULL */
    /* the global race check of the launch begun last */
    int grace;                  /* on: every buffer has cells, rel and acq a slot per block */
    char gnote[192];            /* why it is off when race is checked ("" otherwise) */
    uint32_t *rel, *acq;        /* per block: the time of its last fence or atomic (a release of
                                   what it wrote before), of its last atomic or volatile read
                                   (an acquire); 0: none */
    size_t relacq_len;          /* each one's mapping */
    char *notes;                /* gnotes since the last take, a line each, or NULL */
};

typedef struct {
    uint64_t key;
    long count;
} san_seen;

/* Which thread a finding is about. */
typedef struct {
    struct hn_emu_u3 bid, tid, bdim;
    unsigned long long block; /* linear block index */
} san_who;

/* A write's race finding, waiting to see whether the write changed anything. */
typedef struct {
    int active;
    san_who who;
    int what;
    int atomic;                 /* the later access is an atomic (1: its name in the message) or
                                   volatile (2: the message's hint when both are lanes of a warp) */
    unsigned other;
    uint32_t other_pc;
    const san_region *r;
    size_t off, n;
    uintptr_t pc;
    unsigned char old[16];
} san_pending;

struct emu_san_worker {
    hn_emu_san_fast fast;       /* first: what the module's callbacks read (recent buffers) */
    const san_buf *recent_buf[HN_EMU_SAN_RECENT];
    emu_san *san;
    unsigned checks;
    uintptr_t gap_lo[2], gap_len[2]; /* addresses known to hold no device buffer */
    uintptr_t bufs_lo, bufs_hi; /* every buffer's mapping lies in [bufs_lo, bufs_hi) */
    san_region *regs;           /* every shared variable seen (cells kept) */
    int n_regs, cap_regs;
    san_region **cur;           /* those of the current launch */
    int n_cur;
    uintptr_t text_lo;
    uint32_t gclk, tstart, tb;  /* now, the block's start, its last barrier */
    unsigned long long block;   /* linear index of the running block */
    unsigned seq;
    san_seen seen[SEEN_SLOTS];
    int n_seen;
    san_pending pending;
    uintptr_t type_told;        /* the address of the access whose type's alignment was just
                                   reported (its size's alignment is the same finding) */
    emu_prof_worker *prof;      /* created on the first profiled launch */
    int profiling;              /* bound to a profiling emu_san */
    int profiled_block;         /* the running block is one the profile records */
    int grace;                  /* the launch's global race check is on */
    uint32_t atl[HN_EMU_MAX_THREADS];                  /* time of each thread's last atomic */
    uint32_t vc[HN_EMU_MAX_THREADS][HN_EMU_WARP_SIZE]; /* what each knows of its warp's lanes */
};

static void flush_pending(emu_san_worker *w);

/* ------------------------------------------------------------------------- */
/* lifetime */

emu_san *emu_san_create(unsigned checks) {
    emu_san *s = xcalloc(1, sizeof *s);
    s->checks = checks & HN_SAN_ALL;
    pthread_mutex_init(&s->mu, NULL);
    return s;
}

static void clear_findings(emu_san *s) {
    for (int i = 0; i < s->n_f; i++) {
        free(s->f[i].text);
        free(s->f[i].msg);
        free(s->f[i].kernel);
    }
    s->n_f = 0;
    s->n_launch = 0;
    s->dropped = 0;
}

static void clear_lines(emu_san *s) {
    for (int i = 0; i < s->n_lines; i++) free(s->line_text[i]);
    s->n_lines = 0;
}

void emu_san_destroy(emu_san *s) {
    if (!s) return;
    for (int i = 0; i < s->n_bufs; i++) {
        if (s->bufs[i].init) munmap(s->bufs[i].init, s->bufs[i].init_len);
        if (s->bufs[i].gc) munmap(s->bufs[i].gc, s->bufs[i].gc_len);
    }
    free(s->bufs);
    if (s->rel) munmap(s->rel, s->relacq_len);
    if (s->acq) munmap(s->acq, s->relacq_len);
    clear_findings(s);
    free(s->f);
    clear_lines(s);
    free(s->line_pc);
    free(s->line_text);
    free(s->lines_of);
    free(s->kernel);
    free(s->so_path);
    free(s->notes);
    emu_prof_destroy(s->prof);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

void emu_san_profile(emu_san *s, int blocks) {
    if (!s->prof) s->prof = emu_prof_create(blocks);
    s->checks = 0; /* a profile checks nothing */
}

int emu_san_profiles_block(const emu_san *s, unsigned long long linear) {
    return !s || !s->prof || emu_prof_records(s->prof, linear);
}

void emu_san_profile_take(emu_san *s, hn_profile *out) {
    if (s && s->prof) emu_prof_take(s->prof, out);
    else memset(out, 0, sizeof *out);
}

unsigned emu_san_checks(const emu_san *s) {
    return s ? s->checks : 0;
}

/* ------------------------------------------------------------------------- */
/* device buffers */

void emu_san_buffer_add(emu_san *s, const emu_region *r, unsigned long id) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    san_buf b = {.lo = (uintptr_t)r->map,
                 .hi = (uintptr_t)r->map + r->map_len,
                 .acc_lo = (uintptr_t)r->map + r->guard,
                 .acc_hi = (uintptr_t)r->map + r->map_len - r->guard,
                 .data = (uintptr_t)r->data,
                 .size = r->size,
                 .id = id};
    b.init_len = r->size ? (r->size + pg - 1) / pg * pg : pg;
    b.unwritten = r->size;
    void *m = mmap(NULL, b.init_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) { /* no shadow: the buffer counts as written everywhere */
        b.init = NULL;
        b.init_len = 0;
    } else {
        b.init = m;
    }
    if (s->n_bufs == s->cap_bufs) {
        s->cap_bufs = s->cap_bufs ? 2 * s->cap_bufs : 16;
        s->bufs = xrealloc(s->bufs, (size_t)s->cap_bufs * sizeof *s->bufs);
    }
    int i = s->n_bufs++;
    while (i > 0 && s->bufs[i - 1].lo > b.lo) {
        s->bufs[i] = s->bufs[i - 1];
        i--;
    }
    s->bufs[i] = b;
}

void emu_san_buffer_label(emu_san *s, const void *data, const char *name) {
    for (int i = 0; i < s->n_bufs; i++)
        if (s->bufs[i].data == (uintptr_t)data) snprintf(s->bufs[i].name, sizeof s->bufs[i].name, "%s", name);
}

void emu_san_buffer_remove(emu_san *s, const void *data) {
    for (int i = 0; i < s->n_bufs; i++) {
        if (s->bufs[i].data != (uintptr_t)data) continue;
        if (s->bufs[i].init) munmap(s->bufs[i].init, s->bufs[i].init_len);
        if (s->bufs[i].gc) munmap(s->bufs[i].gc, s->bufs[i].gc_len);
        memmove(&s->bufs[i], &s->bufs[i + 1], (size_t)(s->n_bufs - i - 1) * sizeof *s->bufs);
        s->n_bufs--;
        return;
    }
}

/* The buffer whose mapping holds a, or NULL; *gap_lo and *gap_hi get the
 * addresses around a that hold no buffer when there is none. */
static san_buf *find_buf(const emu_san *s, uintptr_t a, uintptr_t *gap_lo, uintptr_t *gap_hi) {
    int lo = 0, hi = s->n_bufs;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->bufs[mid].hi <= a) lo = mid + 1;
        else hi = mid;
    }
    if (lo < s->n_bufs && s->bufs[lo].lo <= a) return &s->bufs[lo];
    *gap_lo = lo > 0 ? s->bufs[lo - 1].hi : 0;
    *gap_hi = lo < s->n_bufs ? s->bufs[lo].lo : UINTPTR_MAX;
    return NULL;
}

void emu_san_mark(emu_san *s, const void *p, size_t n, int written) {
    uintptr_t a = (uintptr_t)p, gl, gh;
    san_buf *b = find_buf(s, a, &gl, &gh);
    if (!b || !b->init || a < b->data || a >= b->data + b->size) return;
    size_t off = a - b->data;
    if (n > b->size - off) n = b->size - off;
    size_t before = 0;
    for (size_t i = 0; i < n; i++) before += b->init[off + i] == 0;
    memset(b->init + off, written ? 1 : 0, n);
    b->unwritten = b->unwritten - before + (written ? 0 : n);
}

/* ------------------------------------------------------------------------- */
/* findings */

static uint64_t finding_key(int what, uintptr_t pc, uintptr_t pc2) {
    uint64_t h = (uint64_t)what * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)pc + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)pc2 + 0x94d049bb133111ebull + (h << 6) + (h >> 2);
    return h ? h : 1;
}

static void tid3(unsigned linear, struct hn_emu_u3 bdim, struct hn_emu_u3 *t) {
    t->x = linear % bdim.x;
    t->y = linear / bdim.x % bdim.y;
    t->z = linear / bdim.x / bdim.y;
}

/* The running thread. */
static void who_now(const emu_san_worker *w, san_who *who) {
    const hn_emu_tctx *t = emu_tl_cur;
    memset(who, 0, sizeof *who);
    who->block = w->block;
    if (!t) return;
    who->bid = t->blk->block_idx;
    who->tid = t->tid;
    who->bdim = t->blk->block_dim;
}

/* Records a finding of thread `who` (NULL: the running one) unless this
 * worker has already reported the same one in this launch, which only counts
 * it. `text` is built only the first time: fmt and its arguments describe
 * what and where. */
__attribute__((noinline, format(printf, 7, 8))) static void found_by(emu_san_worker *sw, const san_who *who,
                                                                     int what, uintptr_t pc, uintptr_t pc2,
                                                                     int other, const char *fmt, ...) {
    uint64_t key = finding_key(what, pc, pc2);
    unsigned h = (unsigned)(key ^ (key >> 29)) % SEEN_SLOTS;
    for (unsigned i = 0; i < SEEN_SLOTS; i++) {
        san_seen *e = &sw->seen[(h + i) % SEEN_SLOTS];
        if (e->key == key) {
            e->count++;
            return;
        }
        if (!e->key) {
            if (sw->n_seen < SEEN_SLOTS * 3 / 4) {
                e->key = key;
                e->count = 0; /* counted into the global one when the worker unbinds */
                sw->n_seen++;
            }
            break;
        }
    }
    san_who now;
    if (!who) {
        who_now(sw, &now);
        who = &now;
    }
    emu_san *s = sw->san;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    unsigned seq = sw->seq++;
    pthread_mutex_lock(&s->mu);
    san_finding *f = NULL;
    for (int i = 0; i < s->n_f && !f; i++)
        if (s->f[i].what == what && s->f[i].pc == pc && s->f[i].pc2 == pc2) f = &s->f[i];
    if (!f && s->n_f < MAX_FINDINGS) {
        if (!s->f) s->f = xcalloc(MAX_FINDINGS, sizeof *s->f);
        f = &s->f[s->n_f++];
        memset(f, 0, sizeof *f);
        f->what = what;
        f->pc = pc;
        f->pc2 = pc2;
        f->launch = ~0u;
        f->block = ~0ull;
    }
    if (!f) {
        s->dropped++;
    } else {
        f->count++;
        unsigned launch = s->n_launch ? s->n_launch - 1 : 0;
        if (launch < f->launch ||
            (launch == f->launch && (who->block < f->block || (who->block == f->block && seq < f->seq)))) {
            if (launch != f->launch) {
                free(f->kernel);
                f->kernel = xstrdup(s->kernel ? s->kernel : "?");
            }
            f->launch = launch;
            f->block = who->block;
            f->seq = seq;
            f->bid = who->bid;
            f->tid = who->tid;
            if (other >= 0 && who->bdim.x) tid3((unsigned)other, who->bdim, &f->tid2);
            free(f->text);
            f->text = xstrdup(text);
        }
    }
    pthread_mutex_unlock(&s->mu);
}
#define found(sw, ...) found_by(sw, NULL, __VA_ARGS__)

/* Adds what this worker counted without taking the lock. */
static void flush_seen(emu_san_worker *sw) {
    emu_san *s = sw->san;
    if (!s || !sw->n_seen) return;
    /* the counts are of repeats after the first, which found() counted; the
     * table does not remember which global finding each is, so look it up */
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < SEEN_SLOTS; i++) {
        san_seen *e = &sw->seen[i];
        if (!e->key || !e->count) continue;
        for (int j = 0; j < s->n_f; j++)
            if (finding_key(s->f[j].what, s->f[j].pc, s->f[j].pc2) == e->key) {
                s->f[j].count += e->count;
                break;
            }
    }
    pthread_mutex_unlock(&s->mu);
    memset(sw->seen, 0, sizeof sw->seen);
    sw->n_seen = 0;
}

void emu_san_add_sync(emu_san *s, unsigned long long block, const char *msg) {
    if (!s || !(s->checks & HN_SAN_SYNC)) return;
    pthread_mutex_lock(&s->mu);
    if (s->n_f < MAX_FINDINGS) {
        if (!s->f) s->f = xcalloc(MAX_FINDINGS, sizeof *s->f);
        san_finding *f = &s->f[s->n_f++];
        memset(f, 0, sizeof *f);
        f->what = W_SYNC;
        f->launch = s->n_launch ? s->n_launch - 1 : 0;
        f->block = block;
        f->seq = ~0u; /* after anything else the block found */
        f->count = 1;
        f->msg = xstrdup(msg);
    } else {
        s->dropped++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------------------- */
/* the worker's side */

emu_san_worker *emu_san_worker_create(void) {
    emu_san_worker *w = xcalloc(1, sizeof *w);
    w->gclk = 1;
    return w;
}

void emu_san_worker_destroy(emu_san_worker *w) {
    if (!w) return;
    for (int i = 0; i < w->n_regs; i++) {
        if (w->regs[i].cells) munmap(w->regs[i].cells, w->regs[i].cells_len);
        if (w->regs[i].bytes) munmap(w->regs[i].bytes, w->regs[i].bytes_len);
    }
    free(w->regs);
    free(w->cur);
    emu_prof_worker_destroy(w->prof);
    free(w);
}

void emu_san_worker_bind(emu_san_worker *w, emu_san *s) {
    if (!s) {
        if (w) {
            flush_pending(w);
            flush_seen(w);
            if (w->profiling) {
                emu_prof_block_end(w->prof, 0); /* a block cut short, if any */
                emu_prof_merge(w->prof, w->san->prof);
            }
        }
        emu_san_tl = NULL;
        return;
    }
    w->san = s;
    w->checks = s->checks;
    memset(&w->fast, 0, sizeof w->fast);
    memset(w->recent_buf, 0, sizeof w->recent_buf);
    w->fast.check_align = (s->checks & HN_SAN_MEM) != 0;
    w->fast.check_init = (s->checks & HN_SAN_INIT) != 0;
    w->grace = s->grace && !s->prof;
    if (w->grace) w->fast.mode = HN_EMU_SAN_FAST_SHARED_ONLY; /* every device access has a cell to update */
    memset(w->gap_lo, 0, sizeof w->gap_lo);
    memset(w->gap_len, 0, sizeof w->gap_len);
    w->bufs_lo = s->n_bufs ? s->bufs[0].lo : 0;
    w->bufs_hi = 0;
    for (int i = 0; i < s->n_bufs; i++)
        if (s->bufs[i].hi > w->bufs_hi) w->bufs_hi = s->bufs[i].hi;
    w->text_lo = s->launch.text_lo;
    for (int i = 0; i < w->n_regs; i++) w->regs[i].live = 0;
    w->n_cur = 0;
    memset(w->seen, 0, sizeof w->seen);
    w->n_seen = 0;
    w->profiling = s->prof != NULL;
    w->profiled_block = 0;
    if (w->profiling && !w->prof) w->prof = emu_prof_worker_create();
    emu_san_tl = w;
}

void emu_san_shared_add(void *data, size_t size, const void *lo, const void *hi, const char *name,
                        const char *decl) {
    emu_san_worker *w = emu_san_tl;
    if (!w) return;
    flush_pending(w); /* it points into regs, which may move */
    san_region *r = NULL;
    for (int i = 0; i < w->n_regs && !r; i++)
        if (w->regs[i].data == (uintptr_t)data && w->regs[i].size == size) r = &w->regs[i];
    if (!r) {
        if (w->n_regs == w->cap_regs) {
            w->cap_regs = w->cap_regs ? 2 * w->cap_regs : 8;
            w->regs = xrealloc(w->regs, (size_t)w->cap_regs * sizeof *w->regs);
            w->cur = xrealloc(w->cur, (size_t)w->cap_regs * sizeof *w->cur);
            /* cur points into regs: rebuild it */
            int k = 0;
            for (int i = 0; i < w->n_regs; i++)
                if (w->regs[i].live) w->cur[k++] = &w->regs[i];
            w->n_cur = k;
        }
        r = &w->regs[w->n_regs++];
        memset(r, 0, sizeof *r);
        r->data = (uintptr_t)data;
        r->size = size;
        size_t pg = (size_t)sysconf(_SC_PAGESIZE);
        r->cells_len = (size / 4 + 1) * sizeof(san_cell);
        r->cells_len = (r->cells_len + pg - 1) / pg * pg;
        void *m = mmap(NULL, r->cells_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        r->cells = m == MAP_FAILED ? NULL : m;
        if (!r->cells) r->cells_len = 0;
    }
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    r->lo = (uintptr_t)lo;
    r->span = (uintptr_t)hi - (uintptr_t)lo;
    r->acc_lo = (uintptr_t)lo + pg;
    r->acc_hi = (uintptr_t)hi - pg;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    snprintf(r->decl, sizeof r->decl, "%s", decl ? decl : "");
    if (!r->live) {
        r->live = 1;
        w->cur[w->n_cur++] = r;
    }
    /* the first few go to the module's callbacks' table, in the same order */
    for (int i = 0; i < w->n_cur && i < HN_EMU_SAN_SHARED; i++) {
        w->fast.shared[i].lo = w->cur[i]->lo;
        w->fast.shared[i].span = w->cur[i]->span;
    }
    w->fast.n_shared = w->n_cur < HN_EMU_SAN_SHARED ? w->n_cur : HN_EMU_SAN_SHARED;
}

void emu_san_block_begin(const hn_emu_block *blk) {
    emu_san_worker *w = emu_san_tl;
    flush_pending(w);
    if (w->gclk > 0xf0000000u) {
        /* the clock would wrap: forget every time recorded */
        for (int i = 0; i < w->n_regs; i++)
            if (w->regs[i].cells) memset(w->regs[i].cells, 0, w->regs[i].cells_len);
        for (int i = 0; i < w->n_regs; i++)
            if (w->regs[i].bytes) memset(w->regs[i].bytes, 0, w->regs[i].bytes_len);
        memset(w->atl, 0, sizeof w->atl);
        memset(w->vc, 0, sizeof w->vc);
        w->gclk = 1;
    }
    w->tstart = w->tb = ++w->gclk;
    w->block = blk->block_idx.x + (unsigned long long)blk->grid_dim.x *
                                      (blk->block_idx.y + (unsigned long long)blk->grid_dim.y * blk->block_idx.z);
    w->seq = 0;
    if (w->profiling) {
        w->profiled_block = emu_prof_block_begin(w->prof, w->san->prof, w->block, blk->nthreads);
        w->fast.mode = w->profiled_block ? HN_EMU_SAN_FAST_ALL_SLOW : HN_EMU_SAN_FAST_SKIP;
    }
}

void emu_san_block_end(int done) {
    emu_san_worker *w = emu_san_tl;
    flush_pending(w);
    if (w->profiling) emu_prof_block_end(w->prof, done);
}

void emu_san_barrier(void) {
    emu_san_worker *w = emu_san_tl;
    flush_pending(w);
    w->tb = ++w->gclk;
}

void emu_san_warp_sync(int warp, unsigned mask) {
    emu_san_worker *w = emu_san_tl;
    flush_pending(w);
    uint32_t s = ++w->gclk;
    uint32_t j[HN_EMU_WARP_SIZE] = {0};
    int base = warp * HN_EMU_WARP_SIZE;
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++) {
        if (!(mask >> l & 1u)) continue;
        const uint32_t *v = w->vc[base + l];
        for (int m = 0; m < HN_EMU_WARP_SIZE; m++) j[m] = v[m] > j[m] ? v[m] : j[m];
    }
    for (int m = 0; m < HN_EMU_WARP_SIZE; m++)
        if (mask >> m & 1u) j[m] = s;
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++)
        if (mask >> l & 1u) memcpy(w->vc[base + l], j, sizeof j);
}

/* ------------------------------------------------------------------------- */
/* the checks */

/* Whether thread a's access at time ta is ordered before what thread b does
 * now: a barrier since, a warp collective both took part in (one warp), or
 * both made an atomic or fence since (a hand-off through an atomic flag; the
 * flag is not checked, which can hide a race but never reports one). */
static inline int ordered(const emu_san_worker *w, unsigned b, unsigned a, uint32_t ta) {
    if (ta < w->tb) return 1;
    if ((a >> 5) == (b >> 5) && w->vc[b][a & 31] > ta) return 1;
    return w->atl[a] > ta && w->atl[b] > ta;
}

static const char *access_name(unsigned long long info) {
    if (info & HN_EMU_SAN_ATOMIC) return (info & HN_EMU_SAN_READ) && (info & HN_EMU_SAN_WRITE) ? "atomic" : (info & HN_EMU_SAN_WRITE) ? "atomic store" : "atomic load";
    return info & HN_EMU_SAN_WRITE ? "write" : "read";
}

static void shared_name(const san_region *r, size_t off, size_t n, char *buf, size_t size) {
    if (r->name[0])
        snprintf(buf, size, "__shared__ '%s' (%zu byte%s at byte %zu of %zu, declared at %s)", r->name, n,
                 n == 1 ? "" : "s", off, r->size, r->decl);
    else
        snprintf(buf, size, "the dynamic shared memory (%zu byte%s at byte %zu of %zu)", n, n == 1 ? "" : "s", off,
                 r->size);
}

/* An access outside every buffer and variable but inside the mapping of one:
 * records it, and when the access would fault, fails the block now. */
__attribute__((noinline)) static void out_of_bounds(emu_san_worker *w, int what, uintptr_t a, size_t n,
                                                    unsigned long long info, uintptr_t pc, const char *where,
                                                    int faults) {
    if (!(w->checks & HN_SAN_MEM) && !faults) return;
    found(w, what, pc, 0, -1, "%s of %zu byte%s at %p, %s", access_name(info), n, n == 1 ? "" : "s", (void *)a,
          where);
    if (faults) {
        char msg[768];
        snprintf(msg, sizeof msg, "memcheck: %s of %zu bytes at %p, %s (stopped here: the access would fault)",
                 access_name(info), n, (void *)a, where);
        emu_sched_sanitizer_trap(msg);
    }
}

static void global_oob(emu_san_worker *w, const san_buf *b, uintptr_t a, size_t n, unsigned long long info,
                       uintptr_t pc) {
    char where[256], text[80];
    emu_buf_text(b->id, b->name, text, sizeof text);
    if (a >= b->data + b->size || a + n <= b->data) {
        if (a >= b->data)
            snprintf(where, sizeof where, "%zu bytes past the end of %s (%p, %zu bytes)",
                     (size_t)(a - b->data - b->size), text, (void *)b->data, b->size);
        else
            snprintf(where, sizeof where, "%zu bytes before the start of %s (%p, %zu bytes)", (size_t)(b->data - a),
                     text, (void *)b->data, b->size);
    } else {
        snprintf(where, sizeof where, "across the %s of %s (%p, %zu bytes)", a < b->data ? "start" : "end", text,
                 (void *)b->data, b->size);
    }
    out_of_bounds(w, W_OOB_GLOBAL, a, n, info, pc, where, a < b->acc_lo || a + n > b->acc_hi);
}

/* n bytes at sh all written? */
static inline int all_written(const unsigned char *sh, size_t n) {
    switch (n) {
    case 1: return sh[0] != 0;
    case 2: { uint16_t v; memcpy(&v, sh, 2); return v == 0x0101u; }
    case 4: { uint32_t v; memcpy(&v, sh, 4); return v == 0x01010101u; }
    case 8: { uint64_t v; memcpy(&v, sh, 8); return v == 0x0101010101010101ull; }
    default: return memchr(sh, 0, n) == NULL;
    }
}

static inline void set_written(unsigned char *sh, size_t n) {
    switch (n) {
    case 1: sh[0] = 1; break;
    case 2: memcpy(sh, "\1\1", 2); break;
    case 4: memcpy(sh, "\1\1\1\1", 4); break;
    case 8: memcpy(sh, "\1\1\1\1\1\1\1\1", 8); break;
    default: memset(sh, 1, n); break;
    }
}

static inline int misaligned(uintptr_t a, size_t n, unsigned long long info) {
    return !(info & HN_EMU_SAN_UNALIGNED) && n <= 16 && (n & (n - 1)) == 0 && (a & (n - 1));
}

__attribute__((noinline)) static void report_misaligned(emu_san_worker *w, uintptr_t a, size_t n,
                                                        unsigned long long info, uintptr_t pc, const char *what) {
    found(w, W_MISALIGNED, pc, 0, -1, "misaligned %zu-byte %s at %p (%s), not a multiple of %zu", n,
          access_name(info), (void *)a, what, n);
}

/* The block and thread of linear block b1 - 1 and thread thr, as "(x,y,z) thread (x,y,z)". */
static void block_thread_text(const emu_san *s, uint32_t b1, unsigned thr, char *out, size_t size) {
    struct hn_emu_u3 g = s->launch.grid, bd = s->launch.block, t;
    unsigned long long b = b1 - 1ull;
    if (!g.x || !g.y) g.x = g.y = 1;
    if (!bd.x || !bd.y) bd.x = bd.y = 1;
    tid3(thr, bd, &t);
    snprintf(out, size, "(%llu,%llu,%llu) thread (%u,%u,%u)", b % g.x, b / g.x % g.y, b / g.x / g.y, t.x, t.y, t.z);
}

/* A global race of the running thread with the access (block ob - 1, thread
 * othr, at module offset opc) kept in a cell. */
__attribute__((noinline)) static void global_race_found(emu_san_worker *w, const san_buf *b, int what, int sync,
                                                        uint32_t ob, unsigned othr, uint32_t opc, size_t off,
                                                        size_t n, uintptr_t pc, int same_block) {
    static const char *const kind[] = {"read after write", "write after read", "write after write"};
    static const char *const mine[] = {"read", "write", "write"};
    static const char *const mine_sync[] = {"atomic load", "atomic", "atomic"};
    static const char *const theirs[] = {"wrote", "read", "wrote"};
    char text[80], other[96];
    emu_buf_text(b->id, b->name, text, sizeof text);
    block_thread_text(w->san, ob, othr, other, sizeof other);
    /* (element: the access's own size, the unit a kernel indexes in) */
    size_t el = n && (n & (n - 1)) == 0 && n <= 16 && !(off % n) ? n : 1;
    found(w, what, pc, w->text_lo + opc, -1,
          "%s of %s (%zu byte%s at element %zu of %zu-byte elements, byte %zu of %zu)\x1f after block %s %s "
          "it\x1f, %s (%s hazard on global memory)",
          (sync ? mine_sync : mine)[what], text, n, n == 1 ? "" : "s", off / el, el, off, b->size, other,
          theirs[what],
          same_block ? "with no barrier or other synchronisation between them"
                     : "and nothing orders the two blocks (no __threadfence() and atomic hand-off between them)",
          kind[what]);
}

/* Whether the access in a cell (block ob - 1, thread othr, time ot) is ordered
 * before what thread me of the running block does now: in one block as for
 * shared memory; across blocks only by a hand-off, a fence or atomic of the
 * other block after its access and an atomic or volatile read of this block
 * since it began (the flag or counter itself is not checked: lenient). */
static inline int gordered(const emu_san_worker *w, uint32_t ob, unsigned othr, uint32_t ot, unsigned me) {
    if (ob == (uint32_t)w->block + 1) return othr == me || ordered(w, me, othr, ot);
    return w->san->rel[ob - 1] > ot && w->san->acq[w->block] != 0;
}

/* The global race check of an access inside device buffer b (w->grace). A
 * plain read races with a plain write of another thread that nothing orders
 * before it; a plain write with any earlier write or plain read so; an atomic
 * or volatile access with a plain write so. Atomics and volatile accesses
 * never race with each other, nor with plain reads (a naturally aligned load
 * is single-copy atomic on a GPU: the first read of an atomicCAS loop). */
static void global_race(emu_san_worker *w, const san_buf *b, uintptr_t a, size_t n, unsigned long long info,
                        uintptr_t pc) {
    const hn_emu_tctx *t = emu_tl_cur;
    if (!t || !b->gc || !n || a < b->data || a - b->data >= b->size) return;
    size_t off = a - b->data;
    if (n > b->size - off) n = b->size - off;
    uint32_t me_b = (uint32_t)w->block + 1, now = w->gclk, pco = (uint32_t)(pc - w->text_lo);
    unsigned me = t->linear;
    int writes = (info & HN_EMU_SAN_WRITE) != 0, sync = (info & (HN_EMU_SAN_ATOMIC | HN_EMU_SAN_VOLATILE)) != 0;
    int race_on = 1;
    if (sync && (info & HN_EMU_SAN_READ)) w->san->acq[w->block] = now; /* reads a flag: what it releases is ordered */
    if (!writes && !sync && (off & 3) + n <= 4) {
        /* the common case, a plain read inside one word: no writer it could race
         * with (none, an atomic, its own, or ordered), then it becomes a reader */
        san_gcell *c = &b->gc[off / 4];
        uint8_t mask = (uint8_t)(((1u << n) - 1u) << (off & 3));
        if (c->wb && !c->wsync && (c->wmask & mask) && !(c->wb == me_b && c->wthr == me) &&
            !gordered(w, c->wb, c->wthr, c->wt, me)) {
            global_race_found(w, b, W_RAW, 0, c->wb, c->wthr, c->wpc, off, n, pc, c->wb == me_b);
        }
        if (!(c->rb[0] == me_b && c->rthr[0] == me)) {
            if (c->rb[0]) {
                c->rb[1] = c->rb[0];
                c->rt[1] = c->rt[0];
                c->rpc[1] = c->rpc[0];
                c->rthr[1] = c->rthr[0];
                c->rmask[1] = c->rmask[0];
            }
            c->rb[0] = me_b;
            c->rthr[0] = (uint16_t)me;
        }
        c->rt[0] = now;
        c->rpc[0] = pco;
        c->rmask[0] = mask;
        return;
    }
    for (size_t k = off / 4; k <= (off + n - 1) / 4; k++) {
        san_gcell *c = &b->gc[k];
        size_t lo = k * 4 > off ? k * 4 : off, hi = k * 4 + 4 < off + n ? k * 4 + 4 : off + n;
        uint8_t mask = (uint8_t)(((1u << (hi - lo)) - 1u) << (lo - k * 4));
        /* the fast case: a word only this thread has touched */
        if (c->wb == me_b && c->wthr == me && (!c->rb[0] || (c->rb[0] == me_b && c->rthr[0] == me)) && !c->rb[1]) {
        } else if (race_on) {
            int plain_writer = c->wb && (c->wmask & mask) && !c->wsync;
            int any_writer = c->wb && (c->wmask & mask);
            if ((writes ? (sync ? plain_writer : any_writer) : (!sync && plain_writer)) &&
                !(c->wb == me_b && c->wthr == me) && !gordered(w, c->wb, c->wthr, c->wt, me)) {
                global_race_found(w, b, writes ? W_WAW : W_RAW, sync, c->wb, c->wthr, c->wpc, off, n, pc,
                                  c->wb == me_b);
                race_on = 0;
            } else if (writes && !sync) {
                for (int r = 0; r < 2 && race_on; r++)
                    if (c->rb[r] && (c->rmask[r] & mask) && !(c->rb[r] == me_b && c->rthr[r] == me) &&
                        !gordered(w, c->rb[r], c->rthr[r], c->rt[r], me)) {
                        global_race_found(w, b, W_WAR, 0, c->rb[r], c->rthr[r], c->rpc[r], off, n, pc,
                                          c->rb[r] == me_b);
                        race_on = 0;
                    }
            }
        }
        if (writes) {
            /* an atomic keeps an unordered plain writer as the cell's (the others' atomics are checked
             * against it) */
            if (!(sync && c->wb && !c->wsync && !(c->wb == me_b && c->wthr == me) &&
                  !gordered(w, c->wb, c->wthr, c->wt, me))) {
                c->wb = me_b;
                c->wt = now;
                c->wpc = pco;
                c->wthr = (uint16_t)me;
                c->wmask = mask;
                c->wsync = (uint8_t)sync;
            }
            if (!sync) c->rb[0] = c->rb[1] = 0;
        } else if (!sync) {
            if (c->rb[0] && !(c->rb[0] == me_b && c->rthr[0] == me)) {
                c->rb[1] = c->rb[0];
                c->rt[1] = c->rt[0];
                c->rpc[1] = c->rpc[0];
                c->rthr[1] = c->rthr[0];
                c->rmask[1] = c->rmask[0];
            }
            c->rb[0] = me_b;
            c->rt[0] = now;
            c->rpc[0] = pco;
            c->rthr[0] = (uint16_t)me;
            c->rmask[0] = mask;
        }
    }
}

/* An access inside device buffer b. */
static inline void global_access(emu_san_worker *w, const san_buf *b, uintptr_t a, size_t n,
                                 unsigned long long info, uintptr_t pc) {
    if (__builtin_expect((w->checks & HN_SAN_MEM) && misaligned(a, n, info), 0) && a != w->type_told) {
        char what[128], text[80];
        emu_buf_text(b->id, b->name, text, sizeof text);
        snprintf(what, sizeof what, "%s + %zu", text, (size_t)(a - b->data));
        report_misaligned(w, a, n, info, pc, what);
    }
    if (w->grace) global_race(w, b, a, n, info, pc);
    if (!b->init || !b->unwritten) return;
    unsigned char *sh = b->init + (a - b->data);
    /* atomic stores and exchanges only write; other atomics read first */
    int reads = (info & HN_EMU_SAN_READ) != 0;
    if (reads && (w->checks & HN_SAN_INIT) && __builtin_expect(!all_written(sh, n), 0) &&
        (n <= 4 || !memchr(sh, 1, n))) {
        /* (a read of more than 4 bytes, a struct or vector copied whole, counts
         * only when none of them was written: a struct's padding never is) */
        size_t first = 0;
        while (first < n && sh[first]) first++;
        char text[80];
        emu_buf_text(b->id, b->name, text, sizeof text);
        found(w, W_UNINIT_GLOBAL, pc, 0, -1,
              "%s of %zu byte%s at %p (%s + %zu, %zu bytes) that was never written since it "
              "was allocated (byte %zu of the access first)",
              access_name(info), n, n == 1 ? "" : "s", (void *)a, text, (size_t)(a - b->data), b->size, first);
    }
    if (info & HN_EMU_SAN_WRITE) set_written(sh, n);
}

/* A race of `who` (the thread of the later access) with thread `other`. */
__attribute__((noinline)) static void race_by(emu_san_worker *w, const san_who *who, int what, int atomic,
                                              unsigned other, uint32_t other_pc, const san_region *r, size_t off,
                                              size_t n, uintptr_t pc) {
    char obj[256], o[48];
    shared_name(r, off, n, obj, sizeof obj);
    struct hn_emu_u3 ot;
    tid3(other, who->bdim, &ot);
    snprintf(o, sizeof o, "(%u,%u,%u)", ot.x, ot.y, ot.z);
    static const char *const kind[] = {"read after write", "write after read", "write after write"};
    static const char *const mine[] = {"read", "write", "write"};
    static const char *const mine_atomic[] = {"atomic load", "atomic", "atomic"};
    static const char *const theirs[] = {"wrote", "read", "wrote"};
    /* the pre-Volta warp-synchronous idiom: the message says what replaced it */
    unsigned me = who->tid.x + who->bdim.x * (who->tid.y + who->bdim.y * who->tid.z);
    const char *hint = atomic == 2 && me / HN_EMU_WARP_SIZE == other / HN_EMU_WARP_SIZE
                           ? "; volatile does not keep the lanes of a warp in step, which are not in lockstep "
                             "since Volta: put __syncwarp() between the steps"
                           : "";
    /* \x1f: where the source lines of this access and of the other go */
    found_by(w, who, what, pc, w->text_lo + other_pc, (int)other,
             "%s of %s\x1f after thread %s %s it\x1f, with no barrier or other synchronisation between them (%s "
             "hazard%s)",
             (atomic == 1 ? mine_atomic : mine)[what], obj, o, theirs[what], kind[what], hint);
}

/* A write that races with an earlier read or write is harmless when it leaves
 * the bytes as they were (threads storing the same flag): whether it did is
 * known only once the store is done, so the finding waits here until the
 * worker's next access or scheduling point. */
static void flush_pending(emu_san_worker *w) {
    san_pending *p = &w->pending;
    if (!p->active) return;
    p->active = 0;
    if (memcmp((const void *)(p->r->data + p->off), p->old, p->n) == 0) return; /* the same bytes */
    race_by(w, &p->who, p->what, p->atomic, p->other, p->other_pc, p->r, p->off, p->n, p->pc);
}

/* Returns 1 when the finding waits (flush_pending decides), 0 when it is made. */
static int race(emu_san_worker *w, int what, int atomic, unsigned other, uint32_t other_pc, const san_region *r,
                size_t off, size_t n, uintptr_t pc) {
    san_who who;
    who_now(w, &who);
    if (what == W_RAW || n > sizeof w->pending.old || w->pending.active) {
        race_by(w, &who, what, atomic, other, other_pc, r, off, n, pc);
        return 0;
    }
    san_pending *p = &w->pending;
    p->active = 1;
    p->who = who;
    p->what = what;
    p->atomic = atomic;
    p->other = other;
    p->other_pc = other_pc;
    p->r = r;
    p->off = off;
    p->n = n;
    p->pc = pc;
    memcpy(p->old, (const void *)(r->data + off), n);
    return 1;
}

__attribute__((noinline)) static void uninit_shared(emu_san_worker *w, const san_region *r, size_t off, size_t n,
                                                    unsigned long long info, uintptr_t pc) {
    char obj[256];
    shared_name(r, off, n, obj, sizeof obj);
    found(w, W_UNINIT_SHARED, pc, 0, -1, "%s of %s that no thread of the block has written", access_name(info),
          obj);
}

/* What one access does to each unit (word or byte) it covers. */
typedef struct {
    emu_san_worker *w;
    const san_region *r;
    size_t off, n;
    uintptr_t pc;
    unsigned long long info;
    unsigned me;
    uint32_t now, start, tb, pco;
    int reads, writes, sync, atomic, race_on, check_init;
    int plain;                  /* what race() is told of a plain access: 2 when volatile */
} san_unit_ctx;

/* The checks and updates of one access on one unit of `len` bytes (4: a word
 * cell; 1: a byte cell) whose memory is at mem (one finding per access: the
 * first unit that races). */
static inline void unit_access(san_unit_ctx *u, san_cell *c, const unsigned char *mem, int len) {
    emu_san_worker *w = u->w;
    unsigned me = u->me;
    if (u->sync) {
        if (u->check_init && u->reads && c->wt < u->start) {
            uninit_shared(w, u->r, u->off, u->n, u->info, u->pc);
            u->check_init = 0;
        }
        /* An atomic never races with another atomic, but it does with a plain
         * access of another thread that nothing orders before it (a counter
         * zeroed by one thread while the others already add to it; a plain read
         * of it before the others' additions). The thread's own atomic is not
         * yet counted in `ordered` (san_access moves its clock afterwards). */
        if (u->atomic && u->race_on && c->wt >= u->tb && c->wt >= u->start && c->w != me && c->w != SYNC_ID &&
            (u->writes || memcmp(&c->prev, mem, (size_t)len) != 0) && !ordered(w, me, c->w, c->wt)) {
            race(w, u->writes ? W_WAW : W_RAW, 1, c->w, c->wpc, u->r, u->off, u->n, u->pc);
            u->race_on = 0;
        } else if (u->atomic && u->race_on && u->writes) {
            if (c->r1t >= u->tb && c->r1 != me && !ordered(w, me, c->r1, c->r1t)) {
                race(w, W_WAR, 1, c->r1, c->r1pc, u->r, u->off, u->n, u->pc);
                u->race_on = 0;
            } else if (c->r2t >= u->tb && c->r2 != me && !ordered(w, me, c->r2, c->r2t)) {
                race(w, W_WAR, 1, c->r2, c->r2pc, u->r, u->off, u->n, u->pc);
                u->race_on = 0;
            }
        }
        /* an atomic keeps a plain write of this barrier interval as the cell's
         * writer, so that the other threads' atomics and reads are checked
         * against it (the bytes are written either way) */
        if (u->writes && !(u->atomic && c->wt >= u->tb && c->wt >= u->start && c->w != SYNC_ID)) {
            memcpy(&c->prev, mem, (size_t)len);
            c->wt = u->now;
            c->w = SYNC_ID;
            c->wpc = u->pco;
        }
        return;
    }
    uint32_t tb = u->tb;
    if (u->writes) {
        if (u->reads && u->check_init && c->wt < u->start) { /* a read-modify-write */
            uninit_shared(w, u->r, u->off, u->n, u->info, u->pc);
            u->check_init = 0;
        }
        /* A racing write whose finding waits (it may leave the bytes as they
         * were) keeps the cell's readers. Otherwise a thread that first adds
         * 0 to a cell (s[t] += s[t + k], the partner's value still 0) and then
         * really changes it hides the race behind its harmless first write. */
        int waits = 0;
        if (u->race_on) {
            if (c->wt >= tb && c->w != me && c->w != SYNC_ID && !ordered(w, me, c->w, c->wt)) {
                waits = race(w, W_WAW, u->plain, c->w, c->wpc, u->r, u->off, u->n, u->pc);
                u->race_on = 0;
            } else if (c->r1t >= tb && c->r1 != me && !ordered(w, me, c->r1, c->r1t)) {
                waits = race(w, W_WAR, u->plain, c->r1, c->r1pc, u->r, u->off, u->n, u->pc);
                u->race_on = 0;
            } else if (c->r2t >= tb && c->r2 != me && !ordered(w, me, c->r2, c->r2t)) {
                waits = race(w, W_WAR, u->plain, c->r2, c->r2pc, u->r, u->off, u->n, u->pc);
                u->race_on = 0;
            }
        }
        memcpy(&c->prev, mem, (size_t)len);
        c->wt = u->now;
        c->w = (uint16_t)me;
        c->wpc = u->pco;
        if (!waits) c->r1t = c->r2t = 0;
        return;
    }
    if (c->wt < u->start) {
        if (u->check_init) {
            uninit_shared(w, u->r, u->off, u->n, u->info, u->pc);
            u->check_init = 0;
        }
    } else if (u->race_on && c->wt >= tb && c->w != me && c->w != SYNC_ID && memcmp(&c->prev, mem, (size_t)len) != 0 &&
               !ordered(w, me, c->w, c->wt)) {
        /* (a write that left the bytes as they were cannot be read out of order) */
        race(w, W_RAW, u->plain, c->w, c->wpc, u->r, u->off, u->n, u->pc);
        u->race_on = 0;
    }
    if (!(w->checks & HN_SAN_RACE)) return;
    /* the readers since the last barrier: this one, and the last other one
     * (whether or not ordered before this read: a write checks both, and an
     * older third reader forgotten here can only hide a race) */
    if (c->r1t >= tb && c->r1 != me) {
        c->r2 = c->r1;
        c->r2t = c->r1t;
        c->r2pc = c->r1pc;
    }
    c->r1 = (uint16_t)me;
    c->r1t = u->now;
    c->r1pc = u->pco;
}

/* The byte cells of r, made on the first split. */
__attribute__((noinline)) static int make_bytes(san_region *r) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    r->bytes_len = ((r->size + 4) * sizeof(san_cell) + pg - 1) / pg * pg;
    void *m = mmap(NULL, r->bytes_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        r->bytes_len = 0;
        return 0;
    }
    r->bytes = m;
    return 1;
}

/* Gives word `word` of r a cell per byte, each a copy of the word's. */
static void split_word(san_region *r, size_t word) {
    san_cell *c = r->cells + word, *b = r->bytes + word * 4;
    for (int k = 0; k < 4; k++) {
        b[k] = *c;
        b[k].prev = (c->prev >> (8 * k)) & 0xffu;
        b[k].split = 0;
    }
    c->split = 1;
}

/* Whether any byte of [off, off + n) of r was written since `start`. */
static int any_written(const san_region *r, size_t off, size_t n, uint32_t start) {
    for (size_t o = off; o < off + n; o++) {
        const san_cell *c = r->cells + o / 4;
        if (c->split ? r->bytes[o].wt >= start : c->wt >= start) return 1;
    }
    return 0;
}

/* An access to shared variable r (or its mapping). */
static void shared_access(emu_san_worker *w, const san_region *r, uintptr_t a, size_t n, unsigned long long info,
                          uintptr_t pc) {
    if (__builtin_expect(a < r->data || a + n > r->data + r->size, 0)) {
        char where[256];
        if (r->name[0])
            snprintf(where, sizeof where, "%s __shared__ '%s' (%zu bytes, declared at %s)",
                     a >= r->data ? "past the end of" : "before the start of", r->name, r->size, r->decl);
        else
            snprintf(where, sizeof where, "%s the dynamic shared memory (%zu bytes)",
                     a >= r->data ? "past the end of" : "before the start of", r->size);
        char where2[320];
        if (a >= r->data + r->size)
            snprintf(where2, sizeof where2, "%zu bytes %s", (size_t)(a - r->data - r->size), where);
        else if (a < r->data)
            snprintf(where2, sizeof where2, "%zu bytes %s", (size_t)(r->data - a), where);
        else
            snprintf(where2, sizeof where2, "across the end of %s", where + strlen("past the end of "));
        out_of_bounds(w, W_OOB_SHARED, a, n, info, pc, where2, a < r->acc_lo || a + n > r->acc_hi);
        return;
    }
    size_t off = a - r->data;
    if (__builtin_expect((w->checks & HN_SAN_MEM) && misaligned(a, n, info), 0) && a != w->type_told) {
        char what[256];
        shared_name(r, off, n, what, sizeof what);
        report_misaligned(w, a, n, info, pc, what);
    }
    if (!r->cells) return;
    const hn_emu_tctx *t = emu_tl_cur;
    san_unit_ctx u = {.w = w,
                      .r = r,
                      .off = off,
                      .n = n,
                      .pc = pc,
                      .info = info,
                      .me = t->linear,
                      .now = w->gclk,
                      .start = w->tstart,
                      .tb = w->tb,
                      .pco = (uint32_t)(pc - w->text_lo),
                      .reads = (info & HN_EMU_SAN_READ) != 0,
                      .writes = (info & HN_EMU_SAN_WRITE) != 0,
                      .race_on = (w->checks & HN_SAN_RACE) != 0};
    u.check_init = (w->checks & HN_SAN_INIT) && u.reads;
    if (info & HN_EMU_SAN_ATOMIC) {
        u.sync = 1; /* never racy with each other; atomic exchanges and stores only write */
        u.atomic = 1;
        u.reads = u.reads && u.writes ? 1 : !u.writes;
    }
    /* volatile orders nothing: the lanes of a warp do not run in lockstep (Volta
     * and later, and the emulator), so the old warp-synchronous reduction through
     * volatile shared memory without __syncwarp is a race (and computes wrong) */
    u.plain = (info & HN_EMU_SAN_VOLATILE) ? 2 : 0;
    if (u.check_init && n > 4 && any_written(r, off, n, u.start)) u.check_init = 0; /* see global_access */
    const unsigned char *mem = (const unsigned char *)a;
    if (!(off & 3) && !(n & 3)) {
        /* whole words: a cell each, unless split */
        san_cell *c = r->cells + off / 4;
        for (size_t i = 0; i < n; i += 4, c++) {
            if (__builtin_expect(!c->split, 1)) {
                unit_access(&u, c, mem + i, 4);
            } else {
                san_cell *b = r->bytes + off + i;
                for (int k = 0; k < 4; k++) unit_access(&u, b + k, mem + i + k, 1);
            }
        }
        return;
    }
    /* part of a word: its bytes get cells of their own */
    if (!r->bytes && !make_bytes((san_region *)r)) return;
    for (size_t i = 0; i < n; i++) {
        size_t o = off + i;
        san_cell *c = r->cells + o / 4;
        if (!c->split) split_word((san_region *)r, o / 4);
        unit_access(&u, r->bytes + o, mem + i, 1);
    }
}

/* Not the last buffer, no shared variable, not the last gap: look it up. */
__attribute__((noinline)) static void access_slow(emu_san_worker *w, uintptr_t a, size_t n, unsigned long long info,
                                                  uintptr_t pc) {
    uintptr_t gl = 0, gh = 0;
    const san_buf *b = find_buf(w->san, a, &gl, &gh);
    if (!b) {
        w->gap_lo[1] = w->gap_lo[0];
        w->gap_len[1] = w->gap_len[0];
        w->gap_lo[0] = gl;
        w->gap_len[0] = gh - gl;
        return;
    }
    if (a >= b->data && a - b->data < b->size && n <= b->size - (a - b->data)) {
        if (b->init) {
            memmove(&w->fast.recent[1], &w->fast.recent[0], (HN_EMU_SAN_RECENT - 1) * sizeof w->fast.recent[0]);
            memmove(&w->recent_buf[1], &w->recent_buf[0], (HN_EMU_SAN_RECENT - 1) * sizeof w->recent_buf[0]);
            w->fast.recent[0].data = b->data;
            w->fast.recent[0].size = b->size;
            w->fast.recent[0].init = b->unwritten ? b->init : NULL; /* NULL: all written */
            w->recent_buf[0] = b;
        }
        global_access(w, b, a, n, info, pc);
        return;
    }
    global_oob(w, b, a, n, info, pc);
}

#define INSIDE(w, i, a, n)                                                                                     \
    ((a) - (w)->fast.recent[i].data < (w)->fast.recent[i].size &&                                            \
     (n) <= (w)->fast.recent[i].size - ((a) - (w)->fast.recent[i].data))

/* An access of a block the profile records: device or shared memory (the
 * rest, a thread's own stack and the module's variables, is no request). */
__attribute__((noinline)) static void profile_access(emu_san_worker *w, uintptr_t a, size_t n,
                                                     unsigned long long info, uintptr_t pc) {
    const hn_emu_tctx *t = emu_tl_cur;
    if (!t) return;
    for (int i = 0; i < w->n_cur; i++) {
        const san_region *r = w->cur[i];
        if (a - r->lo < r->span) {
            emu_prof_access(w->prof, EMU_PROF_SHARED, (unsigned)i, a - r->data, n, info, pc, t->linear);
            return;
        }
    }
    for (int i = 0; i < HN_EMU_SAN_RECENT; i++)
        if (a - w->fast.recent[i].data < w->fast.recent[i].size + 16) {
            emu_prof_access(w->prof, EMU_PROF_GLOBAL, (unsigned)w->recent_buf[i]->id, a - w->fast.recent[i].data, n,
                            info, pc, t->linear);
            return;
        }
    if (a - w->bufs_lo >= w->bufs_hi - w->bufs_lo || a - w->gap_lo[0] < w->gap_len[0] ||
        a - w->gap_lo[1] < w->gap_len[1])
        return;
    uintptr_t gl = 0, gh = 0;
    const san_buf *b = find_buf(w->san, a, &gl, &gh);
    if (!b) {
        w->gap_lo[1] = w->gap_lo[0];
        w->gap_len[1] = w->gap_len[0];
        w->gap_lo[0] = gl;
        w->gap_len[0] = gh - gl;
        return;
    }
    if (b->init) {
        memmove(&w->fast.recent[1], &w->fast.recent[0], (HN_EMU_SAN_RECENT - 1) * sizeof w->fast.recent[0]);
        memmove(&w->recent_buf[1], &w->recent_buf[0], (HN_EMU_SAN_RECENT - 1) * sizeof w->recent_buf[0]);
        w->fast.recent[0].data = b->data;
        w->fast.recent[0].size = b->size;
        w->fast.recent[0].init = b->unwritten ? b->init : NULL;
        w->recent_buf[0] = b;
    }
    emu_prof_access(w->prof, EMU_PROF_GLOBAL, (unsigned)b->id, a - b->data, n, info, pc, t->linear);
}

static inline void san_dispatch(emu_san_worker *w, uintptr_t a, size_t n, unsigned long long info, uintptr_t pc);

/* The type of an access at a wants `align` bytes of alignment that a lacks
 * (HN_EMU_SAN_ALIGNCHK): a finding when a is device or shared memory. */
__attribute__((noinline, cold)) static void san_type_align(emu_san_worker *w, uintptr_t a, size_t align,
                                                           unsigned long long info, uintptr_t pc) {
    if (!(w->checks & HN_SAN_MEM) || w->profiling) return;
    w->type_told = a; /* the access itself comes next */
    char what[256];
    const char *kind = info & HN_EMU_SAN_WRITE ? "write" : "read";
    for (int i = 0; i < w->n_cur; i++) {
        const san_region *r = w->cur[i];
        if (a >= r->data && a < r->data + r->size) {
            shared_name(r, a - r->data, align, what, sizeof what);
            found(w, W_MISALIGNED, pc, 0, -1, "misaligned %s at %p (%s), not a multiple of %zu (the alignment of its type)", kind,
                  (void *)a, what, align);
            return;
        }
    }
    uintptr_t gl = 0, gh = 0;
    const san_buf *b = find_buf(w->san, a, &gl, &gh);
    if (!b || a < b->data || a >= b->data + b->size) return; /* not device memory, or out of bounds (found then) */
    char text[80];
    emu_buf_text(b->id, b->name, text, sizeof text);
    snprintf(what, sizeof what, "%s + %zu", text, (size_t)(a - b->data));
    found(w, W_MISALIGNED, pc, 0, -1, "misaligned %s at %p (%s), not a multiple of %zu (the alignment of its type)", kind,
          (void *)a, what, align);
}

/* UBSan's description of a type (its ABI, which GCC and clang share): the
 * name follows two 16-bit fields; integers' info is (log2 bits) << 1 | signed. */
typedef struct {
    uint16_t kind, info;
    char name[];
} san_ubsan_type;
typedef struct {
    const char *file;
    unsigned line, column;
    const san_ubsan_type *array_type, *index_type;
} san_ubsan_oob;

/* An index past an array's declared size (HN_EMU_SAN_BOUNDSCHK). The access
 * itself comes next: inside the memory of something else, it is not otherwise
 * seen (a 2D tile's next row, a thread's neighbouring local). */
__attribute__((noinline, cold)) static void san_bounds(emu_san_worker *w, const san_ubsan_oob *d, uint32_t index,
                                                       uintptr_t pc) {
    if (!(w->checks & HN_SAN_MEM) || w->profiling) return;
    const san_ubsan_type *it = d->index_type;
    long long i = it && it->kind == 0 && (it->info & 1) ? (long long)(int32_t)index : (long long)index;
    found(w, W_OOB_INDEX, pc, 0, -1, "index %lld out of bounds for type %s", i,
          d->array_type ? d->array_type->name : "?");
}

static void san_access(void *addr, unsigned long long info, void *pcv) {
    emu_san_worker *w = emu_san_tl;
    if (__builtin_expect(!w, 0)) return;
    uintptr_t a = (uintptr_t)addr, pc = (uintptr_t)pcv - 1; /* inside the calling instruction */
    size_t n = (size_t)(info & HN_EMU_SAN_SIZE);
    if (__builtin_expect(w->pending.active, 0)) flush_pending(w);
    if (__builtin_expect(info & HN_EMU_SAN_ALIGNCHK, 0)) {
        san_type_align(w, a, n, info, pc);
        return;
    }
    if (__builtin_expect(info & HN_EMU_SAN_BOUNDSCHK, 0)) {
        san_bounds(w, (const san_ubsan_oob *)addr, (uint32_t)n, pc);
        return;
    }
    if (w->profiling) {
        if (w->profiled_block) profile_access(w, a, n, info, pc);
        return;
    }
    if (__builtin_expect(info & HN_EMU_SAN_ATOMIC, 0)) {
        /* checked as of before it (a plain access of another thread is not
         * ordered before an atomic by that atomic itself), then counted */
        san_dispatch(w, a, n, info, pc);
        w->type_told = 0;
        const hn_emu_tctx *t = emu_tl_cur;
        if (t) w->atl[t->linear] = ++w->gclk;
        if (w->grace) w->san->rel[w->block] = w->gclk; /* what the block wrote before is released */
        return;
    }
    san_dispatch(w, a, n, info, pc);
    w->type_told = 0;
}

/* Where an access goes: a recent buffer, a shared variable, a gap, or a search. */
static inline void san_dispatch(emu_san_worker *w, uintptr_t a, size_t n, unsigned long long info, uintptr_t pc) {
    for (int i = 0; i < HN_EMU_SAN_RECENT; i++)
        if (INSIDE(w, i, a, n)) {
            global_access(w, w->recent_buf[i], a, n, info, pc);
            return;
        }
    for (int i = 0; i < w->n_cur; i++) {
        const san_region *r = w->cur[i];
        if (a - r->lo < r->span) {
            if (emu_tl_cur) shared_access(w, r, a, n, info, pc);
            return;
        }
    }
    if (a - w->bufs_lo >= w->bufs_hi - w->bufs_lo || a - w->gap_lo[0] < w->gap_len[0] ||
        a - w->gap_lo[1] < w->gap_len[1])
        return;
    access_slow(w, a, n, info, pc);
}

/* An access inside shared variable `var` of the worker's list (the module's
 * callbacks found it in hn_emu_san_fast.shared). */
static void san_shared(void *addr, unsigned long long info, void *pcv, int var) {
    emu_san_worker *w = emu_san_tl;
    if (__builtin_expect(!w || var >= w->n_cur, 0)) return;
    uintptr_t a = (uintptr_t)addr, pc = (uintptr_t)pcv - 1;
    size_t n = (size_t)(info & HN_EMU_SAN_SIZE);
    if (__builtin_expect(w->pending.active, 0)) flush_pending(w);
    if (w->profiling) {
        if (w->profiled_block) profile_access(w, a, n, info, pc);
        return;
    }
    if (__builtin_expect(emu_tl_cur != NULL, 1)) shared_access(w, w->cur[var], a, n, info, pc);
    w->type_told = 0;
}

static void san_fence(void *pc) {
    (void)pc;
    emu_san_worker *w = emu_san_tl;
    const hn_emu_tctx *t = emu_tl_cur;
    if (w) flush_pending(w);
    if (w && t) w->atl[t->linear] = ++w->gclk;
    if (w && t && w->grace) w->san->rel[w->block] = w->gclk;
}

static hn_emu_san_rt san_rt = {.abi = HN_EMU_SAN_ABI, .access = san_access, .fence = san_fence,
                               .shared = san_shared};

const hn_emu_san_rt *emu_san_rt(void) {
#if defined(__x86_64__)
    char *tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    san_rt.tls_offset = (long)((char *)&emu_san_tl - tp);
#endif
    return &san_rt;
}

/* ------------------------------------------------------------------------- */
/* reports */

/* Zeroed anonymous memory of at least *len bytes at *p, reused (and zeroed
 * again, lazily: the kernel gives fresh pages) when big enough. */
static int zeroed_map(void **p, size_t *len, size_t want) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    want = (want + pg - 1) / pg * pg;
    if (*p && *len >= want) return madvise(*p, *len, MADV_DONTNEED) == 0 ? 0 : (memset(*p, 0, *len), 0);
    if (*p) munmap(*p, *len);
    *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (*p == MAP_FAILED) {
        *p = NULL;
        *len = 0;
        return -1;
    }
    *len = want;
    return 0;
}

/* Sets up the global race check for launch l: cells for every buffer, the
 * blocks' release and acquire times; off, with the reason in gnote, past the
 * limits. */
static void grace_begin(emu_san *s, const emu_san_launch *l) {
    s->grace = 0;
    s->gnote[0] = 0;
    if (!(s->checks & HN_SAN_RACE) || s->prof) return;
    unsigned long long nb = (unsigned long long)l->grid.x * l->grid.y * l->grid.z, bytes = 0;
    for (int i = 0; i < s->n_bufs; i++) bytes += s->bufs[i].size;
    if (nb > GRACE_MAX_BLOCKS) {
        snprintf(s->gnote, sizeof s->gnote,
                 "races on global memory not checked in kernel '%s': %llu blocks, more than the %llu the check "
                 "covers", l->kernel ? l->kernel : "?", nb, GRACE_MAX_BLOCKS);
        return;
    }
    if (bytes > GRACE_MAX_BYTES) {
        snprintf(s->gnote, sizeof s->gnote,
                 "races on global memory not checked in kernel '%s': %llu MiB of device buffers, more than the "
                 "%llu MiB the check covers", l->kernel ? l->kernel : "?", bytes >> 20, GRACE_MAX_BYTES >> 20);
        return;
    }
    size_t len = s->relacq_len;
    if (zeroed_map((void **)&s->rel, &s->relacq_len, nb * sizeof *s->rel) != 0 ||
        zeroed_map((void **)&s->acq, &len, nb * sizeof *s->acq) != 0 || len != s->relacq_len)
        goto fail;
    for (int i = 0; i < s->n_bufs; i++) {
        san_buf *b = &s->bufs[i];
        if (zeroed_map((void **)&b->gc, &b->gc_len, (b->size / 4 + 1) * sizeof(san_gcell)) != 0) goto fail;
    }
    s->grace = 1;
    return;
fail:
    snprintf(s->gnote, sizeof s->gnote, "races on global memory not checked in kernel '%s': no memory for its cells",
             l->kernel ? l->kernel : "?");
}

void emu_san_launch_begin(emu_san *s, const emu_san_launch *l) {
    s->launch = *l;
    s->n_launch++;
    grace_begin(s, l);
    if (s->gnote[0]) {
        /* said with the findings, once per take */
        size_t k = strlen(s->notes ? s->notes : "");
        if (!s->notes || !strstr(s->notes, s->gnote)) {
            s->notes = xrealloc(s->notes, k + strlen(s->gnote) + 2);
            sprintf(s->notes + k, "%s\n", s->gnote);
        }
    }
    if (s->prof) {
        unsigned long long nb = (unsigned long long)l->grid.x * l->grid.y * l->grid.z;
        emu_prof_launch_begin(s->prof, nb, l->kernel ? l->kernel : "?", l->so_path ? l->so_path : "", l->so_base,
                              l->text_lo, l->text_hi);
    }
    free(s->kernel);
    free(s->so_path);
    s->kernel = xstrdup(l->kernel ? l->kernel : "?");
    s->so_path = l->so_path ? xstrdup(l->so_path) : NULL;
    s->launch.kernel = s->kernel;
    s->launch.so_path = s->so_path;
    if (!s->lines_of || !s->so_path || strcmp(s->lines_of, s->so_path) != 0) {
        clear_lines(s);
        free(s->lines_of);
        s->lines_of = s->so_path ? xstrdup(s->so_path) : NULL;
    }
}

/* "file.cu:12 (in fn)" for a pc of the launch's module (cached). */
static const char *line_of(emu_san *s, uintptr_t pc) {
    for (int i = 0; i < s->n_lines; i++)
        if (s->line_pc[i] == pc) return s->line_text[i];
    char buf[512];
    emu_launch_req r = {.text_lo = s->launch.text_lo,
                        .text_hi = s->launch.text_hi,
                        .so_base = s->launch.so_base,
                        .so_path = s->so_path};
    emu_run_describe_pc(&r, pc, buf, sizeof buf);
    if (s->n_lines == s->cap_lines) {
        s->cap_lines = s->cap_lines ? 2 * s->cap_lines : 16;
        s->line_pc = xrealloc(s->line_pc, (size_t)s->cap_lines * sizeof *s->line_pc);
        s->line_text = xrealloc(s->line_text, (size_t)s->cap_lines * sizeof *s->line_text);
    }
    s->line_pc[s->n_lines] = pc;
    s->line_text[s->n_lines] = xstrdup(buf);
    return s->line_text[s->n_lines++];
}

static int cmp_finding(const void *a, const void *b) {
    const san_finding *x = a, *y = b;
    if (x->launch != y->launch) return x->launch < y->launch ? -1 : 1;
    if (x->block != y->block) return x->block < y->block ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return 0;
}

/* One finding as one line (without a trailing newline). */
static void finding_line(emu_san *s, const san_finding *f, hn_sb *sb) {
    int cls = what_class[f->what];
    hn_sb_addf(sb, "%s: ", class_names[cls]);
    if (f->what == W_SYNC) {
        hn_sb_adds(sb, f->msg);
        return;
    }
    hn_sb_addf(sb, "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u): ", f->kernel ? f->kernel : s->kernel, f->bid.x, f->bid.y, f->bid.z,
               f->tid.x, f->tid.y, f->tid.z);
    const char *sep = strchr(f->text, '\x1f');
    if (!sep) {
        hn_sb_addf(sb, "%s at %s", f->text, line_of(s, f->pc));
        return;
    }
    const char *sep2 = strchr(sep + 1, '\x1f');
    hn_sb_add(sb, f->text, (size_t)(sep - f->text));
    hn_sb_addf(sb, " at %s", line_of(s, f->pc));
    hn_sb_add(sb, sep + 1, sep2 ? (size_t)(sep2 - sep - 1) : strlen(sep + 1));
    if (sep2) hn_sb_addf(sb, " at %s%s", line_of(s, f->pc2), sep2 + 1);
}

void emu_san_take(emu_san *s, hn_san_findings *out) {
    memset(out, 0, sizeof *out);
    out->first_class = -1;
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    out->note = s->notes; /* what was not checked, a line each */
    s->notes = NULL;
    if (s->n_f == 0) {
        pthread_mutex_unlock(&s->mu);
        return;
    }
    qsort(s->f, (size_t)s->n_f, sizeof *s->f, cmp_finding);
    /* the class that decides: the first of race, mem, init, sync found (a race
     * often shows as an uninitialised read too, in the order threads ran);
     * its first finding is the one to read first */
    int top = HN_SAN_NCLASS;
    for (int i = 0; i < s->n_f; i++)
        if (what_class[s->f[i].what] < top) top = what_class[s->f[i].what];
    hn_sb rep, first;
    hn_sb_init(&rep);
    hn_sb_init(&first);
    /* Findings are told apart by program counter, and several instructions of one
     * line (an inlined helper such as a float4 load called from two places, an
     * unrolled loop) can report the same access by the same thread: their lines
     * read the same, so they are one finding, their counts added. */
    char **lines = xcalloc((size_t)s->n_f, sizeof *lines);
    long *counts = xcalloc((size_t)s->n_f, sizeof *counts);
    int n_lines = 0;
    for (int i = 0; i < s->n_f; i++) {
        const san_finding *f = &s->f[i];
        int cls = what_class[f->what];
        hn_sb line;
        hn_sb_init(&line);
        finding_line(s, f, &line);
        int same = -1;
        for (int j = 0; j < n_lines && same < 0; j++)
            if (strcmp(lines[j], line.buf) == 0) same = j;
        if (same >= 0) {
            counts[same] += f->count;
            hn_sb_free(&line);
            continue;
        }
        out->n[cls]++;
        if (cls == top && out->first_class < 0) {
            out->first_class = cls;
            hn_sb_adds(&first, line.buf);
        }
        counts[n_lines] = f->count;
        lines[n_lines++] = hn_sb_detach(&line);
    }
    for (int j = 0; j < n_lines; j++) {
        hn_sb_adds(&rep, lines[j]);
        if (counts[j] > 1) hn_sb_addf(&rep, " [%ld times]", counts[j]);
        hn_sb_addc(&rep, '\n');
        free(lines[j]);
    }
    free(lines);
    free(counts);
    if (s->dropped)
        hn_sb_addf(&rep, "(%ld more occurrences of findings beyond the first %d not shown)\n", s->dropped,
                   MAX_FINDINGS);
    out->first = hn_sb_detach(&first);
    out->report = hn_sb_detach(&rep);
    clear_findings(s);
    pthread_mutex_unlock(&s->mu);
}
