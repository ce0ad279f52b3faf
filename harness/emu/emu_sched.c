/* emu_sched.c: one block on one OS thread, loop mode then fibers; see emu_sched.h. */
#define _GNU_SOURCE
#include "emu_sched.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_fiber.h"
#include "emu_san.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define EMU_ASAN 1
#else
#define EMU_ASAN 0
#endif

#define LOOP_SLOT HN_EMU_MAX_THREADS /* the loop fiber's stack and struct */
#define NWARPS (HN_EMU_MAX_THREADS / HN_EMU_WARP_SIZE)

enum { F_READY, F_RUNNING, F_BARRIER, F_WARP, F_DONE };
enum { MODE_LOOP, MODE_FIBERS };

typedef struct emu_fiber {
    hn_emu_tctx ctx;            /* first member: the kernel's hn_emu_tctx* is the fiber */
    void *sp;                   /* saved stack pointer while switched out */
    char *lo, *hi;              /* its stack */
    int id;                     /* linear thread id */
    int state;
    unsigned long long ret;     /* result of the collective it waited in */
    /* the collective it waits in, for reports */
    int w_op, w_line;
    const char *w_file;
    unsigned w_mask;
    /* its input to a warp collective */
    unsigned long long w_val;
    int w_param, w_width;
    void *yield_pc; /* where it yielded (a spin, a volatile access): a stop names it */
    void *asan_fake;
} emu_fiber;

typedef struct {
    unsigned mask, arrived;
    int op, site, line;
    const char *file;
} emu_wgroup;

typedef struct {
    emu_wgroup g[HN_EMU_WARP_SIZE];
    int n;
    unsigned done;              /* lanes that have exited */
    /* coalesced_threads() calls waiting for the warp to settle, one per site
     * (their `mask` is unused: the group is whoever arrived) */
    emu_wgroup co[HN_EMU_WARP_SIZE];
    int nco;
} emu_warp;

struct emu_sched {
    emu_stacks stacks;                       /* HN_EMU_MAX_THREADS + 1 slots */
    emu_fiber fibers[HN_EMU_MAX_THREADS + 1];
    emu_fiber *f[HN_EMU_MAX_THREADS];        /* by thread id, in fiber mode */
    const emu_sched_kernel *k;
    const atomic_int *abort;                 /* k->abort */
    hn_emu_block blk;
    int n, ndone, mode, loop_t, upgraded_at;
    /* ready queue (ring of thread ids) */
    int q[HN_EMU_MAX_THREADS];
    int qh, qn;
    /* the current barrier generation */
    int bar_n, bar_site, bar_line, bar_op, bar_true, bar_first;
    const char *bar_file;
    int bar_wait[HN_EMU_MAX_THREADS];
    emu_warp warps[NWARPS];
    unsigned char *scratch;                  /* NWARPS x HN_EMU_WARP_SCRATCH, on first use */
    unsigned char *tscratch;                 /* HN_EMU_MAX_THREADS x HN_EMU_THREAD_SCRATCH, on first use */
    unsigned *tscratch_gen;                  /* per thread: the block_gen its area was zeroed for */
    unsigned block_gen;                      /* blocks run, from 1 */
    /* the worker's own context */
    void *main_sp;
    const void *main_lo;
    size_t main_size;
    void *main_fake;
    int status;
    int fail_kind;                           /* EMU_FAIL_* of a failed block */
    void *stop_pc;
    int stop_thread;
    char msg[2048];
};

_Thread_local hn_emu_tctx *emu_tl_cur __attribute__((tls_model("initial-exec")));
static _Thread_local emu_sched *tl_sched __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------------- */
/* sanitizer hooks: every stack switch is announced */

static void asan_start(void **fake, const void *lo, size_t size) {
#if EMU_ASAN
    __sanitizer_start_switch_fiber(fake, lo, size);
#else
    (void)fake, (void)lo, (void)size;
#endif
}

static void asan_finish(void *fake) {
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    (void)fake;
#endif
}

/* ------------------------------------------------------------------------- */
/* names for messages */

static const char *base_name(const char *path) {
    if (!path) return "?";
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The name of a collective for messages: the op, and the API that called it
 * (the bits above HN_EMU_OP_MASK). */
#define CG_NAMES(P)                                                                          \
    {P "sync", P "sync", P "sync", P "sync", P "sync", P "shfl", P "shfl_up",              \
     P "shfl_down", P "shfl_xor", P "ballot", P "any", P "all", P "match_any",             \
     P "match_all", P "reduce", P "reduce", P "reduce", P "reduce", P "reduce", P "reduce", \
     P "reduce", P "reduce", P "activemask", "coalesced_threads"}
#define CG_ONE_NAME(N)                                                                       \
    {N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N}
static const char *op_name(int op) {
    static const char *names[HN_EMU_API_COUNT_][HN_EMU_OP_COUNT_] = {
        {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or",
         "__syncwarp", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
         "__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync",
         "__reduce_add_sync", "__reduce_min_sync", "__reduce_min_sync", "__reduce_max_sync",
         "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
         "__activemask", "coalesced_threads"},
        CG_NAMES("thread_block::"),
        CG_NAMES("thread_block_tile::"),
        CG_NAMES("coalesced_group::"),
        CG_ONE_NAME("cooperative_groups::reduce"),
        CG_ONE_NAME("cooperative_groups scan"),
        CG_ONE_NAME("nvcuda::wmma::load_matrix_sync"),
        CG_ONE_NAME("nvcuda::wmma::store_matrix_sync"),
        CG_ONE_NAME("nvcuda::wmma::mma_sync"),
    };
    int base = op & HN_EMU_OP_MASK, api = op >> HN_EMU_OP_API_SHIFT;
    if (base < 0 || base >= HN_EMU_OP_COUNT_) return "collective";
    return api >= 0 && api < HN_EMU_API_COUNT_ ? names[api][base] : names[0][base];
}

static void tid_of(const emu_sched *s, int id, char *buf, size_t size) {
    unsigned bx = s->blk.block_dim.x, by = s->blk.block_dim.y;
    unsigned u = (unsigned)id;
    snprintf(buf, size, "(%u,%u,%u)", u % bx, u / bx % by, u / bx / by);
}

/* "0-15,17" for the set bits of m. */
static void lanes_str(unsigned m, char *buf, size_t size) {
    hn_sb sb;
    hn_sb_init(&sb);
    for (int l = 0; l < 32;) {
        if (!(m >> l & 1u)) {
            l++;
            continue;
        }
        int e = l;
        while (e + 1 < 32 && (m >> (e + 1) & 1u)) e++;
        if (sb.len) hn_sb_addc(&sb, ',');
        if (e == l) hn_sb_addf(&sb, "%d", l);
        else hn_sb_addf(&sb, "%d-%d", l, e);
        l = e + 1;
    }
    snprintf(buf, size, "%s", sb.len ? sb.buf : "none");
    hn_sb_free(&sb);
}

/* ------------------------------------------------------------------------- */
/* the ready queue */

static void push(emu_sched *s, int id) {
    s->q[(s->qh + s->qn++) % HN_EMU_MAX_THREADS] = id;
}

static int pop(emu_sched *s) {
    if (!s->qn) return -1;
    int id = s->q[s->qh];
    s->qh = (s->qh + 1) % HN_EMU_MAX_THREADS;
    s->qn--;
    return id;
}

/* ------------------------------------------------------------------------- */
/* switching */

/* Leaves fiber `from` for the worker's own context, for good. */
__attribute__((noreturn)) static void to_main(emu_sched *s, emu_fiber *from, int status) {
    s->status = status;
    emu_tl_cur = NULL;
    asan_start(NULL, s->main_lo, s->main_size);
    hn_emu_switch(&from->sp, s->main_sp);
    __builtin_unreachable();
}

/* Stops the block because the launch is being abandoned. */
__attribute__((noreturn)) static void stop(emu_sched *s, emu_fiber *me, void *pc) {
    s->stop_pc = pc;
    s->stop_thread = me->id;
    to_main(s, me, EMU_BLOCK_STOPPED);
}

__attribute__((format(printf, 3, 4), noreturn)) static void fail(emu_sched *s, emu_fiber *me,
                                                                 const char *fmt, ...) {
    char t[48];
    tid_of(s, me->id, t, sizeof t);
    int n = snprintf(s->msg, sizeof s->msg, "kernel '%s' block (%u,%u,%u) thread %s: ", s->k->name,
                     s->blk.block_idx.x, s->blk.block_idx.y, s->blk.block_idx.z, t);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof s->msg) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->msg + n, sizeof s->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    to_main(s, me, EMU_BLOCK_FAILED);
}

static void check_abort(emu_sched *s, emu_fiber *me) {
    if (atomic_load_explicit(s->abort, memory_order_relaxed))
        stop(s, me, me->yield_pc);
}

/* Switches from `from` (which has recorded why it waits) to `to`; returns when
 * something switches back to `from`. */
static void switch_to(emu_fiber *from, emu_fiber *to) {
    to->state = F_RUNNING;
    emu_tl_cur = &to->ctx;
    asan_start(&from->asan_fake, to->lo, (size_t)(to->hi - to->lo));
    hn_emu_switch(&from->sp, to->sp);
    asan_finish(from->asan_fake);
}

__attribute__((noreturn)) static void deadlock(emu_sched *s, emu_fiber *me);

/* Warms the cache for the fiber that will run after the next one: its saved
 * frames (the switch frame, the runtime's frames, the kernel's) sit just above
 * its stack pointer, and with hundreds of fibers they are no longer in L1 by
 * the time their turn comes. The queue says whose turn is next, so fetch them
 * one switch ahead. */
static void prefetch_after_next(const emu_sched *s) {
    if (s->qn < 1) return;
    const emu_fiber *f = s->f[s->q[s->qh]];
    const char *sp = f->sp;
    __builtin_prefetch(f, 1);
    for (int i = 0; i < 12; i++) __builtin_prefetch(sp + 64 * i, 1);
}

/* The calling fiber waits; runs the next ready one. */
static void block_me(emu_sched *s, emu_fiber *me) {
    int next = pop(s);
    if (next < 0) deadlock(s, me);
    prefetch_after_next(s);
    switch_to(me, s->f[next]);
    check_abort(s, me);
}

/* ------------------------------------------------------------------------- */
/* loop mode, fiber mode and the upgrade between them */

static void thread_entry(void *arg);
static void fiber_exit(emu_sched *s, emu_fiber *me) __attribute__((noreturn));

static void set_tid(const emu_sched *s, hn_emu_tctx *c, int id) {
    unsigned bx = s->blk.block_dim.x, by = s->blk.block_dim.y, u = (unsigned)id;
    c->tid.x = u % bx;
    c->tid.y = u / bx % by;
    c->tid.z = u / bx / by;
    c->linear = u;
}

static void loop_entry(void *arg) {
    emu_sched *s = arg;
    asan_finish(NULL);
    emu_fiber *lf = &s->fibers[LOOP_SLOT];
    unsigned bx = s->blk.block_dim.x, by = s->blk.block_dim.y;
    unsigned x = 0, y = 0, z = 0;
    for (int t = 0; t < s->n; t++) {
        lf->ctx.tid.x = x;
        lf->ctx.tid.y = y;
        lf->ctx.tid.z = z;
        lf->ctx.linear = (unsigned)t;
        lf->ctx.spins = 0;
        lf->id = t;
        s->loop_t = t;
        s->k->fn(s->k->args);
        if (s->mode != MODE_LOOP) fiber_exit(s, lf);
        if (++x == bx) {
            x = 0;
            if (++y == by) {
                y = 0;
                z++;
            }
        }
    }
    s->ndone = s->n;
    to_main(s, lf, EMU_BLOCK_DONE);
}

static void thread_entry(void *arg) {
    emu_fiber *me = arg;
    emu_sched *s = tl_sched;
    asan_finish(NULL);
    check_abort(s, me);
    s->k->fn(s->k->args);
    fiber_exit(s, me);
}

/* Called by the thread running in loop mode at its first scheduling point:
 * the threads before it are done, it keeps the loop fiber, the rest get
 * fibers of their own and queue up in order. */
static void upgrade(emu_sched *s) {
    emu_fiber *lf = &s->fibers[LOOP_SLOT];
    int t = s->loop_t;
    for (int u = 0; u < t; u++) {
        s->fibers[u].id = u;
        s->fibers[u].state = F_DONE;
        s->f[u] = &s->fibers[u];
        s->warps[u / HN_EMU_WARP_SIZE].done |= 1u << (u % HN_EMU_WARP_SIZE);
    }
    s->f[t] = lf;
    lf->state = F_RUNNING;
    lf->yield_pc = NULL;
    s->ndone = t;
    s->upgraded_at = t;
    hn_emu_tctx c;
    set_tid(s, &c, t);
    unsigned bx = s->blk.block_dim.x, by = s->blk.block_dim.y;
    for (int u = t + 1; u < s->n; u++) {
        emu_fiber *fu = &s->fibers[u];
        if (!s->stacks.ready[u]) {
            hn_err err;
            if (emu_stacks_get(&s->stacks, u, &fu->lo, &fu->hi, &err) != 0) fail(s, lf, "%s", err.msg);
        }
        fu->id = u;
        if (++c.tid.x == bx) {
            c.tid.x = 0;
            if (++c.tid.y == by) {
                c.tid.y = 0;
                c.tid.z++;
            }
        }
        fu->ctx.tid = c.tid;
        fu->ctx.linear = (unsigned)u;
        fu->ctx.blk = &s->blk;
        fu->ctx.spins = 0;
        fu->yield_pc = NULL;
        fu->state = F_READY;
        /* staggered starts keep the fibers' hot frames out of one cache set */
        fu->sp = emu_fiber_prepare(fu->hi - (u % 64) * 64, thread_entry, fu);
        s->f[u] = fu;
        push(s, u);
    }
    s->mode = MODE_FIBERS;
}

/* ------------------------------------------------------------------------- */
/* reports */

__attribute__((noreturn)) static void deadlock(emu_sched *s, emu_fiber *me) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "deadlock: no thread can run:");
    if (s->bar_n)
        hn_sb_addf(&sb, " %d of %d threads wait at __syncthreads (%s:%d);", s->bar_n, s->n,
                   base_name(s->bar_file), s->bar_line);
    for (int w = 0; w < (s->n + HN_EMU_WARP_SIZE - 1) / HN_EMU_WARP_SIZE; w++) {
        for (int i = 0; i < s->warps[w].n; i++) {
            const emu_wgroup *g = &s->warps[w].g[i];
            char a[128], m[128];
            lanes_str(g->arrived, a, sizeof a);
            lanes_str(g->mask & ~g->arrived, m, sizeof m);
            hn_sb_addf(&sb, " warp %d lanes %s wait in %s (%s:%d) with mask 0x%08x for lanes %s;",
                       w, a, op_name(g->op), base_name(g->file), g->line, g->mask, m);
        }
    }
    if (sb.len && sb.buf[sb.len - 1] == ';') sb.buf[--sb.len] = '\0';
    /* name the lowest waiting thread */
    emu_fiber *who = me;
    for (int i = 0; i < s->n; i++)
        if (s->f[i]->state == F_BARRIER || s->f[i]->state == F_WARP) {
            who = s->f[i];
            break;
        }
    char copy[1536];
    snprintf(copy, sizeof copy, "%s", sb.buf);
    hn_sb_free(&sb);
    s->fail_kind = EMU_FAIL_SYNC;
    fail(s, who, "%s", copy);
}

/* ------------------------------------------------------------------------- */
/* coalesced_threads() */

/* A GPU knows which lanes of a warp run together; the emulator, one thread at a
 * time, does not. So coalesced_threads() waits until the warp has settled: every
 * other lane has exited or waits in a collective (a barrier, a warp collective,
 * another coalesced_threads()), or yielded while spinning. The lanes that wait at
 * the same call site then form the group, as the converged lanes would on a GPU
 * (`if (p) { auto g = coalesced_threads(); ... }`: the lanes with p). Called by
 * every lane that is about to wait or exit (`me`, which counts as settled); when
 * the warp of `me` has settled, releases its pending groups, each with its mask
 * as the result. Returns 1 if `me` was in one of them (it must not block). */
static int coalesce_settle(emu_sched *s, emu_fiber *me) {
    int w = me->id / HN_EMU_WARP_SIZE;
    emu_warp *wp = &s->warps[w];
    if (__builtin_expect(wp->nco == 0, 1)) return 0;
    int base = w * HN_EMU_WARP_SIZE;
    int nl = s->n - base < HN_EMU_WARP_SIZE ? s->n - base : HN_EMU_WARP_SIZE;
    for (int l = 0; l < nl; l++) {
        const emu_fiber *f = s->f[base + l];
        if (f != me && f->state != F_DONE && f->state != F_BARRIER && f->state != F_WARP) return 0;
    }
    int mine = 0;
    for (int i = 0; i < wp->nco; i++) {
        unsigned mask = wp->co[i].arrived;
        /* (__activemask() orders nothing on a GPU; coalesced_threads() does) */
        if (emu_san_tl && (wp->co[i].op & HN_EMU_OP_MASK) != HN_EMU_OP_ACTIVEMASK) emu_san_warp_sync(w, mask);
        for (int l = 0; l < nl; l++) {
            if (!(mask >> l & 1u)) continue;
            emu_fiber *f = s->f[base + l];
            f->ret = mask;
            if (f == me) {
                mine = 1;
                f->state = F_RUNNING;
            } else {
                f->state = F_READY;
                push(s, f->id);
            }
        }
    }
    wp->nco = 0;
    return mine;
}

static unsigned long long coalesce(emu_sched *s, emu_fiber *me, int op, int site, int line,
                                   const char *file) {
    int w = me->id / HN_EMU_WARP_SIZE, lane = me->id % HN_EMU_WARP_SIZE;
    emu_warp *wp = &s->warps[w];
    emu_wgroup *g = NULL;
    for (int i = 0; i < wp->nco && !g; i++)
        if (wp->co[i].site == site) g = &wp->co[i];
    if (!g) {
        g = &wp->co[wp->nco++];
        g->mask = 0;
        g->arrived = 0;
        g->op = op;
        g->site = site;
        g->line = line;
        g->file = file;
    }
    g->arrived |= 1u << lane;
    me->state = F_WARP;
    me->w_op = op;
    me->w_line = line;
    me->w_file = file;
    me->w_mask = 0;
    if (coalesce_settle(s, me)) return me->ret;
    block_me(s, me);
    return me->ret;
}

/* ------------------------------------------------------------------------- */
/* barriers */

/* A thread reaches a barrier that some thread exited without reaching. */
__attribute__((noinline, cold, noreturn)) static void barrier_exited(emu_sched *s, emu_fiber *me,
                                                                   int op, int line,
                                                                   const char *file) {
    int gone = 0;
    while (gone < s->n && s->f[gone]->state != F_DONE) gone++;
    char t[48];
    tid_of(s, gone, t, sizeof t);
    s->fail_kind = EMU_FAIL_SYNC;
    fail(s, me,
         "divergent %s: waits at %s:%d, but thread %s has already exited "
         "(%d of %d threads exited) and will never arrive",
         op_name(op), base_name(file), line, t, s->ndone, s->n);
}

/* A thread reaches a barrier other than the one the others wait at. */
__attribute__((noinline, cold, noreturn)) static void barrier_diverged(emu_sched *s, emu_fiber *me,
                                                                     int op, int line,
                                                                     const char *file) {
    char t[48];
    tid_of(s, s->bar_first, t, sizeof t);
    s->fail_kind = EMU_FAIL_SYNC;
    if (line == s->bar_line && file == s->bar_file)
        fail(s, me,
             "divergent %s: waits at %s:%d while thread %s waits at another "
             "%s on the same line",
             op_name(op), base_name(file), line, t, op_name(s->bar_op));
    fail(s, me, "divergent %s: waits at %s:%d while thread %s waits at %s (%s:%d)", op_name(op),
         base_name(file), line, t, op_name(s->bar_op), base_name(s->bar_file), s->bar_line);
}

static unsigned long long barrier(emu_sched *s, emu_fiber *me, int op, int pred, int site, int line,
                                  const char *file) {
    if (__builtin_expect(s->ndone > 0, 0)) barrier_exited(s, me, op, line, file);
    if (__builtin_expect(s->bar_n > 0 && s->bar_site != site, 0))
        barrier_diverged(s, me, op, line, file);
    if (s->bar_n == 0) {
        s->bar_site = site;
        s->bar_line = line;
        s->bar_file = file;
        s->bar_op = op;
        s->bar_true = 0;
        s->bar_first = me->id;
    }
    if (pred) s->bar_true++;
    if (++s->bar_n < s->n) {
        s->bar_wait[s->bar_n - 1] = me->id;
        me->state = F_BARRIER;
        me->w_op = op;
        me->w_line = line;
        me->w_file = file;
        coalesce_settle(s, me);
        block_me(s, me);
        return me->ret;
    }
    unsigned long long r = 0;
    switch (op & HN_EMU_OP_MASK) {
    case HN_EMU_OP_SYNCTHREADS_COUNT: r = (unsigned long long)s->bar_true; break;
    case HN_EMU_OP_SYNCTHREADS_AND: r = s->bar_true == s->n; break;
    case HN_EMU_OP_SYNCTHREADS_OR: r = s->bar_true > 0; break;
    default: break;
    }
    if (emu_san_tl) emu_san_barrier();
    for (int i = 0; i < s->bar_n - 1; i++) {
        emu_fiber *w = s->f[s->bar_wait[i]];
        w->ret = r;
        w->state = F_READY;
        push(s, w->id);
    }
    s->bar_n = 0;
    return r;
}

/* ------------------------------------------------------------------------- */
/* warp collectives */

static void warp_results(emu_sched *s, const emu_wgroup *g, int base) {
    unsigned long long v[HN_EMU_WARP_SIZE];
    unsigned mask = g->mask;
    unsigned ballot = 0;
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++) {
        if (!(mask >> l & 1u)) continue;
        v[l] = s->f[base + l]->w_val;
        if (v[l]) ballot |= 1u << l;
    }
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++) {
        if (!(mask >> l & 1u)) continue;
        emu_fiber *fl = s->f[base + l];
        int w = fl->w_width, seg = l & ~(w - 1), src = l;
        unsigned long long r = 0;
        int op = g->op & HN_EMU_OP_MASK;
        switch (op) {
        case HN_EMU_OP_SHFL: src = seg | (fl->w_param & (w - 1)); break;
        case HN_EMU_OP_SHFL_UP:
            if ((unsigned)(l & (w - 1)) >= (unsigned)fl->w_param) src = l - fl->w_param;
            break;
        case HN_EMU_OP_SHFL_DOWN:
            if ((unsigned)(l & (w - 1)) + (unsigned)fl->w_param < (unsigned)w) src = l + fl->w_param;
            break;
        case HN_EMU_OP_SHFL_XOR: {
            int x = l ^ fl->w_param;
            if (x >= 0 && x < HN_EMU_WARP_SIZE && (x & ~(w - 1)) <= seg) src = x;
            break;
        }
        default: break;
        }
        switch (op) {
        case HN_EMU_OP_SHFL:
        case HN_EMU_OP_SHFL_UP:
        case HN_EMU_OP_SHFL_DOWN:
        case HN_EMU_OP_SHFL_XOR:
            /* a source lane outside the mask is undefined on a GPU: own value */
            r = (mask >> src & 1u) ? v[src] : v[l];
            break;
        case HN_EMU_OP_BALLOT: r = ballot; break;
        case HN_EMU_OP_ANY: r = ballot != 0; break;
        case HN_EMU_OP_ALL: r = ballot == mask; break;
        case HN_EMU_OP_MATCH_ANY:
        case HN_EMU_OP_MATCH_ALL: {
            unsigned same = 0;
            for (int j = 0; j < HN_EMU_WARP_SIZE; j++)
                if ((mask >> j & 1u) && v[j] == v[l]) same |= 1u << j;
            if (op == HN_EMU_OP_MATCH_ANY) r = same;
            else r = same == mask ? (mask | (1ull << 32)) : 0;
            break;
        }
        case HN_EMU_OP_REDUCE_ADD:
        case HN_EMU_OP_REDUCE_MIN_S:
        case HN_EMU_OP_REDUCE_MIN_U:
        case HN_EMU_OP_REDUCE_MAX_S:
        case HN_EMU_OP_REDUCE_MAX_U:
        case HN_EMU_OP_REDUCE_AND:
        case HN_EMU_OP_REDUCE_OR:
        case HN_EMU_OP_REDUCE_XOR: {
            int first = 1;
            unsigned acc = 0;
            for (int j = 0; j < HN_EMU_WARP_SIZE; j++) {
                if (!(mask >> j & 1u)) continue;
                unsigned x = (unsigned)v[j];
                if (first) {
                    acc = x;
                    first = 0;
                    continue;
                }
                switch (op) {
                case HN_EMU_OP_REDUCE_ADD: acc += x; break;
                case HN_EMU_OP_REDUCE_MIN_S: acc = (int)x < (int)acc ? x : acc; break;
                case HN_EMU_OP_REDUCE_MIN_U: acc = x < acc ? x : acc; break;
                case HN_EMU_OP_REDUCE_MAX_S: acc = (int)x > (int)acc ? x : acc; break;
                case HN_EMU_OP_REDUCE_MAX_U: acc = x > acc ? x : acc; break;
                case HN_EMU_OP_REDUCE_AND: acc &= x; break;
                case HN_EMU_OP_REDUCE_OR: acc |= x; break;
                default: acc ^= x; break;
                }
            }
            r = acc;
            break;
        }
        default: r = 0; break; /* __syncwarp */
        }
        fl->ret = r;
    }
}

__attribute__((noinline)) static unsigned long long warp_op(emu_sched *s, emu_fiber *me, int op,
                                                           unsigned mask,
                                  unsigned long long value, int param, int width, int site,
                                  int line, const char *file) {
    int w = me->id / HN_EMU_WARP_SIZE, lane = me->id % HN_EMU_WARP_SIZE;
    int base = w * HN_EMU_WARP_SIZE;
    int nl = s->n - base < HN_EMU_WARP_SIZE ? s->n - base : HN_EMU_WARP_SIZE;
    unsigned exist = nl == HN_EMU_WARP_SIZE ? 0xffffffffu : (1u << nl) - 1u;
    emu_warp *wp = &s->warps[w];
    char buf[128];
    int bop = op & HN_EMU_OP_MASK;
    /* __activemask() groups like coalesced_threads(): the lanes after this one
     * have not run yet, so "not exited" would name lanes a tail guard ends */
    if (bop == HN_EMU_OP_ACTIVEMASK || bop == HN_EMU_OP_COALESCE) return coalesce(s, me, op, site, line, file);
    s->fail_kind = EMU_FAIL_SYNC; /* what fails from here on is the collective's use */
    if (width < 1 || width > HN_EMU_WARP_SIZE || (width & (width - 1)))
        fail(s, me, "%s at %s:%d: width %d is not a power of two from 1 to 32", op_name(op),
             base_name(file), line, width);
    if (!(mask >> lane & 1u))
        fail(s, me, "%s at %s:%d: mask 0x%08x does not include the calling lane %d", op_name(op),
             base_name(file), line, mask, lane);
    if (mask & ~exist) {
        lanes_str(mask & ~exist, buf, sizeof buf);
        fail(s, me,
             "%s at %s:%d: mask 0x%08x names lanes %s of warp %d, which do not exist "
             "(the block has %d threads); they will never arrive (a GPU runs on, and what a "
             "shuffle or vote takes from them is undefined): name only the lanes that exist",
             op_name(op), base_name(file), line, mask, buf, w, s->n);
    }
    if (mask & wp->done) {
        int l = __builtin_ctz(mask & wp->done);
        char t[48];
        tid_of(s, base + l, t, sizeof t);
        fail(s, me,
             "%s at %s:%d: mask 0x%08x names lane %d (thread %s), which has exited and will "
             "never arrive",
             op_name(op), base_name(file), line, mask, l, t);
    }
    emu_wgroup *g = NULL;
    for (int i = 0; i < wp->n; i++) {
        emu_wgroup *o = &wp->g[i];
        if (o->mask == mask) {
            g = o;
        } else if ((o->mask >> lane & 1u) && (o->arrived & mask)) {
            /* a deadlock: that collective waits for this lane, this one for
             * lanes waiting there. Overlapping masks alone are fine: lanes
             * 0-15 done with a 16-lane tile's reduce may wait in a whole
             * warp's collective while lanes 16-31 do their tile's reduce */
            lanes_str(o->arrived, buf, sizeof buf);
            fail(s, me,
                 "%s at %s:%d with mask 0x%08x, while lanes %s wait in %s at %s:%d with mask "
                 "0x%08x: the masks must match",
                 op_name(op), base_name(file), line, mask, buf, op_name(o->op),
                 base_name(o->file), o->line, o->mask);
        }
    }
    if (!g) {
        g = &wp->g[wp->n++];
        g->mask = mask;
        g->arrived = 0;
        g->op = op;
        g->site = site;
        g->line = line;
        g->file = file;
    } else if ((g->op & HN_EMU_OP_MASK) != bop) {
        lanes_str(g->arrived, buf, sizeof buf);
        fail(s, me, "divergent warp collectives: calls %s at %s:%d while lanes %s wait in %s at %s:%d",
             op_name(op), base_name(file), line, buf, op_name(g->op), base_name(g->file), g->line);
    }
    s->fail_kind = EMU_FAIL_OTHER;
    me->w_val = value;
    me->w_param = param;
    me->w_width = width;
    g->arrived |= 1u << lane;
    if (g->arrived != mask) {
        me->state = F_WARP;
        me->w_op = op;
        me->w_line = line;
        me->w_file = file;
        me->w_mask = mask;
        coalesce_settle(s, me);
        block_me(s, me);
        return me->ret;
    }
    warp_results(s, g, base);
    if (emu_san_tl) emu_san_warp_sync(w, mask);
    *g = wp->g[--wp->n];
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++) {
        if (!(mask >> l & 1u) || l == lane) continue;
        emu_fiber *o = s->f[base + l];
        o->state = F_READY;
        push(s, o->id);
    }
    return me->ret;
}

/* ------------------------------------------------------------------------- */
/* thread exit */

static void fiber_exit(emu_sched *s, emu_fiber *me) {
    int w = me->id / HN_EMU_WARP_SIZE, lane = me->id % HN_EMU_WARP_SIZE;
    emu_warp *wp = &s->warps[w];
    me->state = F_DONE;
    s->ndone++;
    wp->done |= 1u << lane;
    s->fail_kind = EMU_FAIL_SYNC;
    if (s->bar_n > 0)
        fail(s, me,
             "exited while %d thread%s wait%s at __syncthreads (%s:%d): divergent __syncthreads "
             "(every thread of the block must reach it)",
             s->bar_n, s->bar_n == 1 ? "" : "s", s->bar_n == 1 ? "s" : "", base_name(s->bar_file),
             s->bar_line);
    for (int i = 0; i < wp->n; i++) {
        const emu_wgroup *g = &wp->g[i];
        if (!(g->mask >> lane & 1u)) continue;
        char a[128];
        lanes_str(g->arrived, a, sizeof a);
        fail(s, me,
             "exited while lanes %s of warp %d wait in %s (%s:%d) with mask 0x%08x, which "
             "names this lane: divergent %s (every lane of the mask must reach it)",
             a, w, op_name(g->op), base_name(g->file), g->line, g->mask, op_name(g->op));
    }
    s->fail_kind = EMU_FAIL_OTHER;
    coalesce_settle(s, me);
    int next = pop(s);
    if (next >= 0) {
        emu_fiber *to = s->f[next];
        to->state = F_RUNNING;
        emu_tl_cur = &to->ctx;
        asan_start(NULL, to->lo, (size_t)(to->hi - to->lo));
        hn_emu_switch(&me->sp, to->sp);
        __builtin_unreachable();
    }
    if (s->ndone == s->n) to_main(s, me, EMU_BLOCK_DONE);
    deadlock(s, me);
}

/* ------------------------------------------------------------------------- */
/* the runtime entry points of hn_emu_rt */

static unsigned long long rt_collective(hn_emu_tctx *self, int op, unsigned int mask,
                                        unsigned long long value, int param, int width, int site,
                                        int line, const char *file) {
    emu_sched *s = tl_sched;
    emu_fiber *me = (emu_fiber *)self;
    if (atomic_load_explicit(s->abort, memory_order_relaxed))
        stop(s, me, __builtin_return_address(0));
    int bop = op & HN_EMU_OP_MASK, api = op >> HN_EMU_OP_API_SHIFT;
    if (__builtin_expect(op < 0 || bop >= HN_EMU_OP_COUNT_ || api >= HN_EMU_API_COUNT_, 0))
        fail(s, me, "unknown collective %d", op);
    if (s->mode == MODE_LOOP) upgrade(s);
    me->ctx.spins = 0;
    if (bop <= HN_EMU_OP_SYNCTHREADS_OR) return barrier(s, me, op, value != 0, site, line, file);
    return warp_op(s, me, op, mask, value, param, width, site, line, file);
}

/* rt_yield, with pc the place a stopped launch names */
static void yield_at(hn_emu_tctx *self, void *pc) {
    emu_sched *s = tl_sched;
    emu_fiber *me = (emu_fiber *)self;
    if (atomic_load_explicit(s->abort, memory_order_relaxed)) stop(s, me, pc);
    if (s->mode == MODE_LOOP) upgrade(s);
    me->ctx.spins = 0;
    coalesce_settle(s, me); /* a spinning lane is not converged with the others */
    if (!s->qn) {
        /* nothing else in this block can run: it waits for another block
         * (SINGLE_BLOCK) or for the host; let the OS run other workers */
        sched_yield();
        return;
    }
    me->state = F_READY;
    push(s, me->id);
    me->yield_pc = pc;
    block_me(s, me);
    me->yield_pc = NULL;
}

static void rt_yield(hn_emu_tctx *self) {
    yield_at(self, __builtin_return_address(0));
}

void emu_sched_sanitizer_trap(const char *msg) {
    emu_sched *s = tl_sched;
    s->fail_kind = EMU_FAIL_SANITIZER;
    fail(s, (emu_fiber *)emu_tl_cur, "%s", msg);
}

int emu_sched_error_kind(const emu_sched *s) {
    return s->fail_kind;
}

static void rt_trap(hn_emu_tctx *self, const char *what, int line, const char *file) {
    emu_sched *s = tl_sched;
    fail(s, (emu_fiber *)self, "%s at %s:%d", what, base_name(file), line);
}

/* Kernel printf budget: lines per launch (< 0 unlimited), lines of the current
 * launch so far, lines held back since the last emu_sched_print_dropped. */
static _Atomic long print_limit = -1, print_lines, print_dropped;

void emu_sched_print_limit(long max_lines) {
    atomic_store(&print_limit, max_lines);
}

void emu_sched_print_launch(void) {
    atomic_store(&print_lines, 0);
}

long emu_sched_print_dropped(void) {
    return atomic_exchange(&print_dropped, 0);
}

static void rt_print(hn_emu_tctx *self, const char *text, unsigned long len) {
    emu_sched *s = tl_sched;
    if (atomic_load_explicit(s->abort, memory_order_relaxed))
        stop(s, (emu_fiber *)self, __builtin_return_address(0));
    long limit = atomic_load_explicit(&print_limit, memory_order_relaxed);
    if (limit < 0) {
        fwrite(text, 1, len, stdout);
        return;
    }
    long nl = 0;
    for (unsigned long i = 0; i < len; i++) nl += text[i] == '\n';
    long before = atomic_fetch_add(&print_lines, nl);
    if (before >= limit) { /* over budget: counted, not written */
        atomic_fetch_add(&print_dropped, nl);
        return;
    }
    unsigned long keep = len;
    if (before + nl > limit) { /* the budget ends inside this text */
        long room = limit - before;
        for (keep = 0; keep < len && room; keep++) room -= text[keep] == '\n';
        atomic_fetch_add(&print_dropped, before + nl - limit);
    }
    fwrite(text, 1, keep, stdout);
}

static emu_static_shared_fn static_shared_hook;

void emu_sched_set_static_shared(emu_static_shared_fn fn) {
    static_shared_hook = fn;
}

static void *rt_static_shared(hn_emu_tctx *self, unsigned long size, unsigned long align, int line,
                              const char *file, const char *name) {
    emu_sched *s = tl_sched;
    char why[512] = "no allocator";
    void *p = static_shared_hook ? static_shared_hook(size, align, line, file, name, why, sizeof why) : NULL;
    if (!p) fail(s, (emu_fiber *)self, "__shared__ '%s' at %s:%d: %s", name, base_name(file), line, why);
    return p;
}

static void *rt_warp_scratch(hn_emu_tctx *self) {
    emu_sched *s = tl_sched;
    emu_fiber *me = (emu_fiber *)self;
    if (!s->scratch) s->scratch = xcalloc(NWARPS, HN_EMU_WARP_SCRATCH);
    return s->scratch + (size_t)(me->id / HN_EMU_WARP_SIZE) * HN_EMU_WARP_SCRATCH;
}

static void *rt_thread_scratch(hn_emu_tctx *self) {
    emu_sched *s = tl_sched;
    emu_fiber *me = (emu_fiber *)self;
    if (!s->tscratch) {
        s->tscratch = xcalloc(HN_EMU_MAX_THREADS, HN_EMU_THREAD_SCRATCH);
        s->tscratch_gen = xcalloc(HN_EMU_MAX_THREADS, sizeof *s->tscratch_gen);
    }
    unsigned char *p = s->tscratch + (size_t)me->id * HN_EMU_THREAD_SCRATCH;
    if (s->tscratch_gen[me->id] != s->block_gen) { /* first use in this block */
        memset(p, 0, HN_EMU_THREAD_SCRATCH);
        s->tscratch_gen[me->id] = s->block_gen;
    }
    return p;
}

static const hn_emu_rt rt_table = {
    .abi = HN_EMU_ABI_VERSION,
    .collective = rt_collective,
    .yield = rt_yield,
    .yield_at = yield_at,
    .trap = rt_trap,
    .print = rt_print,
    .static_shared = rt_static_shared,
    .warp_scratch = rt_warp_scratch,
    .thread_scratch = rt_thread_scratch,
};

const hn_emu_rt *emu_sched_rt(void) {
    return &rt_table;
}

long emu_sched_tls_offset(void) {
#if defined(__x86_64__)
    char *tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return (long)((char *)&emu_tl_cur - tp);
#else
    return 0; /* the emulator runs on x86-64 only */
#endif
}

const hn_emu_tctx *emu_sched_current(void) {
    return emu_tl_cur;
}

/* ------------------------------------------------------------------------- */
/* lifetime and the block entry */

int emu_sched_create(size_t stack_bytes, emu_sched **out, hn_err *err) {
    emu_sched *s = xcalloc(1, sizeof *s);
    if (emu_stacks_init(&s->stacks, HN_EMU_MAX_THREADS + 1, stack_bytes, err) != 0) {
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void emu_sched_destroy(emu_sched *s) {
    if (!s) return;
    emu_stacks_free(&s->stacks);
    free(s->scratch);
    free(s->tscratch);
    free(s->tscratch_gen);
    free(s);
}

const char *emu_sched_error(const emu_sched *s) {
    return s->msg;
}

void *emu_sched_stop_pc(const emu_sched *s, int *thread) {
    if (thread) *thread = s->stop_thread;
    return s->stop_pc;
}

int emu_sched_guard_slot(const emu_sched *s, const void *addr) {
    return emu_stacks_guard_slot(&s->stacks, addr);
}

size_t emu_sched_stack_bytes(const emu_sched *s) {
    return s->stacks.stack_bytes;
}

/* Fibers never return to their entry (they exit or are abandoned with a
 * switch), so the sanitizer's poison around their instrumented frames would
 * outlive them and trip the next user of the stack. Unpoison what each fiber
 * of the block used: from its last stack pointer up. */
static void asan_clean_block(emu_sched *s) {
#if EMU_ASAN
    emu_fiber *fs[HN_EMU_MAX_THREADS + 1];
    int n = 0;
    fs[n++] = &s->fibers[LOOP_SLOT];
    if (s->mode == MODE_FIBERS)
        for (int u = s->upgraded_at + 1; u < s->n; u++) fs[n++] = &s->fibers[u];
    for (int i = 0; i < n; i++) {
        char *from = (char *)fs[i]->sp - 256;
        if (from < fs[i]->lo || from > fs[i]->hi) from = fs[i]->lo;
        __asan_unpoison_memory_region(from, (size_t)(fs[i]->hi - from));
    }
#else
    (void)s;
#endif
}

void emu_sched_abandon(emu_sched *s, void *sp) {
    emu_fiber *f = (emu_fiber *)emu_tl_cur;
    if (f) f->sp = sp;
    emu_tl_cur = NULL;
    asan_start(NULL, s->main_lo, s->main_size);
}

void emu_sched_landed(emu_sched *s) {
    asan_finish(NULL);
    asan_clean_block(s);
}

static void find_main_stack(emu_sched *s) {
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getstack(&a, &lo, &size);
        pthread_attr_destroy(&a);
    }
    s->main_lo = lo;
    s->main_size = size;
}

int emu_sched_run_block(emu_sched *s, const emu_sched_kernel *k, const hn_emu_block *blk) {
    tl_sched = s;
    if (!s->main_lo) find_main_stack(s);
    s->k = k;
    s->abort = k->abort;
    s->blk = *blk;
    s->n = (int)blk->nthreads;
    if (++s->block_gen == 0) s->block_gen = 1; /* 0 marks an area never zeroed */
    s->ndone = 0;
    s->mode = MODE_LOOP;
    s->loop_t = 0;
    s->qh = s->qn = 0;
    s->bar_n = 0;
    s->status = EMU_BLOCK_DONE;
    s->fail_kind = EMU_FAIL_OTHER;
    s->stop_pc = NULL;
    s->msg[0] = '\0';
    if (emu_san_tl) emu_san_block_begin(blk);
    for (int w = 0; w < (s->n + HN_EMU_WARP_SIZE - 1) / HN_EMU_WARP_SIZE; w++) {
        s->warps[w].n = 0;
        s->warps[w].nco = 0;
        s->warps[w].done = 0;
    }
    emu_fiber *lf = &s->fibers[LOOP_SLOT];
    hn_err err;
    if (emu_stacks_get(&s->stacks, LOOP_SLOT, &lf->lo, &lf->hi, &err) != 0) {
        snprintf(s->msg, sizeof s->msg, "kernel '%.200s': %.1800s", k->name, err.msg);
        return EMU_BLOCK_FAILED;
    }
    lf->ctx.blk = &s->blk;
    lf->ctx.spins = 0;
    lf->id = 0;
    lf->state = F_RUNNING;
    lf->sp = emu_fiber_prepare(lf->hi, loop_entry, s);
    emu_tl_cur = &lf->ctx;
    asan_start(&s->main_fake, lf->lo, (size_t)(lf->hi - lf->lo));
    hn_emu_switch(&s->main_sp, lf->sp);
    asan_finish(s->main_fake);
    emu_tl_cur = NULL;
    asan_clean_block(s);
    if (emu_san_tl) emu_san_block_end(s->status == EMU_BLOCK_DONE);
    return s->status;
}
