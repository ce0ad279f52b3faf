/* emu_run.c: worker pool, launches, fault and time-out handling; see emu_run.h. */
#define _GNU_SOURCE
#include "emu_run.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "emu_sched.h"


#define ALTSTACK_BYTES (256 * 1024)
#define MAX_FRAMES 32
#define INTERRUPT_EVERY_NS 2000000L /* 2 ms between stop signals */

#define DYN_ALIGN 16            /* CUDA guarantees dynamic shared memory this alignment */
#define DYN_CANARY 0xA5         /* the padding after dynamic shared memory holds this */

enum { FAULT_NONE, FAULT_SIGNAL, FAULT_INTERRUPT };

/* One static __shared__ variable's storage on one worker. */
typedef struct {
    emu_region reg;
    const void *module;
    int line;
    char name[64];
    char file[128];
} emu_static;

typedef struct emu_worker {
    emu_pool *pool;
    int idx;
    pthread_t th;
    int started;
    emu_sched *sched;
    emu_region dyn;               /* dynamic shared memory of this worker's blocks */
    size_t dyn_cap;
    char *dyn_ptr;                /* the launch's extern __shared__ start */
    size_t dyn_bytes;
    size_t dyn_pad;               /* canary bytes after dyn_ptr + dyn_bytes (< DYN_ALIGN) */
    emu_static *statics;          /* static __shared__ storage this worker handed out */
    emu_san_worker *san;          /* its sanitizer state (created on first use) */
    const void *cur_module;       /* the module the running block's code is from */
    int n_statics, cap_statics;
    void *altstack;
    sigjmp_buf jb;
    volatile sig_atomic_t armed;  /* jb is valid and the worker runs a launch */
    int active;                   /* inside a launch (under pool->mu) */
    /* written by the signal handler */
    volatile sig_atomic_t fault;
    int f_sig, f_code, f_write;
    uintptr_t f_addr, f_pc;
    struct hn_emu_u3 f_tid, f_bid;
    void *f_frames[MAX_FRAMES];
    int f_nframes;
    /* outcome of the worker's part of the launch */
    int result;                   /* 0 done, -1 failed, -2 stopped */
    unsigned long long fail_block;
    char msg[2048];
    uintptr_t stop_pc;
    int stop_frames; /* f_frames are the stop's (an interrupt) */
    int stop_thread;
    struct hn_emu_u3 stop_bid;
} emu_worker;

struct emu_pool {
    int n;
    emu_worker *w;
    pthread_mutex_t launch_mu;    /* one launch at a time */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    int busy, quit, failed;
    /* the current launch */
    const emu_launch_req *req;
    hn_emu_block proto;
    unsigned long long nblocks;
    /* each on its own cache line: workers bump `next` once per block and read
     * `abort` at every scheduling point */
    _Alignas(64) _Atomic unsigned long long next;
    _Alignas(64) atomic_int abort;
    char pad_[60];
};

static _Thread_local emu_worker *tl_worker __attribute__((tls_model("initial-exec")));

/* ------------------------------------------------------------------------- */
/* signals */

static int sig_intr;                        /* the stop signal (a real-time one) */
static struct sigaction old_act[NSIG];      /* what was there before ours, to chain to */
static pthread_mutex_t sig_mu = PTHREAD_MUTEX_INITIALIZER;
/* SIGABRT too: a kernel compiled for the host (#ifdef HN_EMU) may call abort(),
 * which took the whole process down where kernels run in it (harness train,
 * debug) instead of failing the launch; outside a kernel it is chained to */
static const int fault_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static void chain(int sig, siginfo_t *si, void *uc) {
    const struct sigaction *o = &old_act[sig];
    if (o->sa_flags & SA_SIGINFO) {
        if (o->sa_sigaction) {
            o->sa_sigaction(sig, si, uc);
            return;
        }
    } else if (o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
        return;
    }
    /* default action: restore it and let the fault happen again */
    signal(sig, SIG_DFL);
}

/* Whether pc is in the code of the launch's module(s). */
static int in_kernel_text(const emu_launch_req *r, uintptr_t pc) {
    return (pc >= r->text_lo && pc < r->text_hi) || (r->plain.fn && pc >= r->plain.text_lo && pc < r->plain.text_hi);
}

static void on_signal(int sig, siginfo_t *si, void *ucv) {
    int saved_errno = errno;
    emu_worker *w = tl_worker;
    const hn_emu_tctx *cur = emu_sched_current();
    ucontext_t *uc = ucv;
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    void *sp = (void *)uc->uc_mcontext.gregs[REG_RSP];
    int write_fault = (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    uintptr_t pc = 0;
    void *sp = NULL;
    int write_fault = 0;
    (void)uc;
#endif
    if (w && w->armed && cur) {
        emu_pool *p = w->pool;
        const emu_launch_req *r = p->req;
        if (sig == sig_intr) {
            if (!atomic_load_explicit(&p->abort, memory_order_relaxed) || !in_kernel_text(r, pc)) {
                errno = saved_errno;
                return; /* not in kernel code: it stops at its next scheduling point */
            }
            w->fault = FAULT_INTERRUPT;
        } else {
            w->fault = FAULT_SIGNAL;
            w->f_sig = sig;
            w->f_code = si->si_code;
            w->f_addr = (uintptr_t)si->si_addr;
            w->f_write = sig == SIGSEGV && write_fault;
        }
        /* an interrupt inside a callback of an instrumented module (an atomic,
         * a volatile access) names the kernel's line through the frames */
        w->f_nframes = backtrace(w->f_frames, MAX_FRAMES);
        w->f_pc = pc;
        w->f_tid = cur->tid;
        w->f_bid = cur->blk->block_idx;
        w->armed = 0;
        emu_sched_abandon(w->sched, sp);
        siglongjmp(w->jb, 1);
    }
    errno = saved_errno;
    if (sig != sig_intr) chain(sig, si, ucv);
}

/* Installs on_signal for the fault signals and the stop signal, unless it is
 * already there (a library that replaced it since gets chained to). */
static void install_handlers(void) {
    pthread_mutex_lock(&sig_mu);
    if (!sig_intr) {
        sig_intr = SIGRTMIN + 3;
        /* backtrace() loads libgcc_s on first use; do it now, not in a handler */
        void *frames[4];
        (void)backtrace(frames, 4);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int sigs[HN_ARRAY_LEN(fault_sigs) + 1];
    memcpy(sigs, fault_sigs, sizeof fault_sigs);
    sigs[HN_ARRAY_LEN(fault_sigs)] = sig_intr;
    for (size_t i = 0; i < HN_ARRAY_LEN(sigs); i++) {
        struct sigaction cur;
        if (sigaction(sigs[i], NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == on_signal)
            continue;
        sigaction(sigs[i], &sa, &old_act[sigs[i]]);
    }
    pthread_mutex_unlock(&sig_mu);
}

/* The first padding byte after the dynamic shared memory that a block changed,
 * or -1. */
static long dyn_canary_broken(const emu_worker *w) {
    for (size_t i = 0; i < w->dyn_pad; i++)
        if ((unsigned char)w->dyn_ptr[w->dyn_bytes + i] != DYN_CANARY) return (long)i;
    return -1;
}

/* Tells the bound sanitizer about a static __shared__ variable. */
static void san_static(const emu_static *st) {
    char decl[160];
    snprintf(decl, sizeof decl, "%s:%d", st->file, st->line);
    emu_san_shared_add(st->reg.data, st->reg.size, st->reg.map, st->reg.map + st->reg.map_len, st->name, decl);
}

/* static __shared__ storage */

static void *static_shared(unsigned long size, unsigned long align, int line, const char *file,
                           const char *name, char *why, size_t why_size) {
    emu_worker *w = tl_worker;
    if (!w || !w->pool->req) {
        snprintf(why, why_size, "used outside a launch");
        return NULL;
    }
    const emu_launch_req *r = w->pool->req;
    size_t total = w->dyn_bytes + size;
    for (int i = 0; i < w->n_statics; i++)
        if (w->statics[i].module == w->cur_module) total += w->statics[i].reg.size;
    if (r->shared_limit && total > r->shared_limit) {
        snprintf(why, why_size,
                 "%lu bytes bring the block's shared memory (static %zu + dynamic %zu) over the "
                 "device limit of %zu bytes",
                 size, total - w->dyn_bytes, w->dyn_bytes, r->shared_limit);
        return NULL;
    }
    if (align == 0 || (align & (align - 1)) || align > 4096) align = 16;
    emu_static st = {.module = w->cur_module, .line = line};
    hn_err err;
    if (emu_region_map(&st.reg, size, align, &err) != 0) {
        snprintf(why, why_size, "%s", err.msg);
        return NULL;
    }
    snprintf(st.name, sizeof st.name, "%s", name ? name : "?");
    const char *slash = file ? strrchr(file, '/') : NULL;
    snprintf(st.file, sizeof st.file, "%s", slash ? slash + 1 : file ? file : "?");
    if (w->n_statics == w->cap_statics) {
        w->cap_statics = w->cap_statics ? 2 * w->cap_statics : 8;
        w->statics = xrealloc(w->statics, (size_t)w->cap_statics * sizeof *w->statics);
    }
    w->statics[w->n_statics++] = st;
    if (r->san && w->cur_module == r->module) san_static(&w->statics[w->n_statics - 1]);
    return st.reg.data;
}

void emu_pool_forget_module(emu_pool *p, const void *module) {
    if (!p) return;
    pthread_mutex_lock(&p->launch_mu);
    for (int i = 0; i < p->n; i++) {
        emu_worker *w = &p->w[i];
        int k = 0;
        for (int j = 0; j < w->n_statics; j++) {
            if (w->statics[j].module == module) emu_region_unmap(&w->statics[j].reg);
            else w->statics[k++] = w->statics[j];
        }
        w->n_statics = k;
    }
    pthread_mutex_unlock(&p->launch_mu);
}

/* ------------------------------------------------------------------------- */
/* workers */

static void run_launch(emu_worker *w) {
    emu_pool *p = w->pool;
    const emu_launch_req *r = p->req;
    w->result = 0;
    w->fault = FAULT_NONE;
    w->stop_pc = 0;
    w->stop_frames = 0;
    w->msg[0] = '\0';
    emu_sched_kernel k = {.name = r->name, .fn = r->fn, .args = r->args, .abort = &p->abort};
    if (sigsetjmp(w->jb, 1)) {
        /* back from a signal handler that left the kernel */
        emu_sched_landed(w->sched);
        if (r->san) emu_san_worker_bind(w->san, NULL);
        if (w->fault == FAULT_SIGNAL) {
            w->result = -1;
            pthread_mutex_lock(&p->mu);
            atomic_store(&p->abort, 1);
            p->failed = 1;
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
        } else {
            w->result = -2;
            w->stop_pc = w->f_pc;
            w->stop_frames = 1;
            w->stop_thread = (int)(w->f_tid.x + w->f_tid.y * r->block.x +
                                   w->f_tid.z * r->block.x * r->block.y);
            w->stop_bid = w->f_bid;
        }
        return;
    }
    hn_emu_block blk = p->proto;
    blk.dyn_shared = w->dyn_ptr;
    w->cur_module = r->module;
    if (r->san) {
        if (!w->san) w->san = emu_san_worker_create();
        emu_san_worker_bind(w->san, r->san);
        emu_san_shared_add(w->dyn_ptr, w->dyn_bytes, w->dyn.map, w->dyn.map + w->dyn.map_len, NULL, NULL);
        for (int i = 0; i < w->n_statics; i++)
            if (w->statics[i].module == r->module) san_static(&w->statics[i]);
    }
    w->armed = 1;
    for (;;) {
        if (atomic_load_explicit(&p->abort, memory_order_relaxed)) break;
        unsigned long long b = atomic_fetch_add(&p->next, 1);
        if (b >= p->nblocks) break;
        blk.block_idx.x = (unsigned)(b % r->grid.x);
        blk.block_idx.y = (unsigned)(b / r->grid.x % r->grid.y);
        blk.block_idx.z = (unsigned)(b / r->grid.x / r->grid.y);
        w->fail_block = b;
        /* a profile runs the blocks it does not record in the plain module */
        int plain = r->plain.fn && !emu_san_profiles_block(r->san, b);
        k.fn = plain ? r->plain.fn : r->fn;
        w->cur_module = plain ? r->plain.module : r->module;
        int rc = emu_sched_run_block(w->sched, &k, &blk);
        long pad = rc == EMU_BLOCK_DONE && w->dyn_pad ? dyn_canary_broken(w) : -1;
        if (pad >= 0) {
            w->result = -1;
            snprintf(w->msg, sizeof w->msg,
                     "kernel '%s' block (%u,%u,%u): a write %ld bytes past the end of the "
                     "dynamic shared memory (%zu bytes) (found after the block: the emulator "
                     "checks the padding up to the next 16 bytes when a block ends)",
                     r->name, blk.block_idx.x, blk.block_idx.y, blk.block_idx.z, pad, w->dyn_bytes);
            pthread_mutex_lock(&p->mu);
            atomic_store(&p->abort, 1);
            p->failed = 1;
            pthread_cond_broadcast(&p->done);
            pthread_mutex_unlock(&p->mu);
            break;
        }
        if (rc == EMU_BLOCK_DONE) continue;
        if (rc == EMU_BLOCK_STOPPED) {
            w->result = -2;
            w->stop_pc = (uintptr_t)emu_sched_stop_pc(w->sched, &w->stop_thread);
            w->stop_bid = blk.block_idx;
            break;
        }
        w->result = -1;
        snprintf(w->msg, sizeof w->msg, "%s", emu_sched_error(w->sched));
        if (r->san && emu_sched_error_kind(w->sched) == EMU_FAIL_SYNC) emu_san_add_sync(r->san, b, w->msg);
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->abort, 1);
        p->failed = 1;
        pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
        break;
    }
    w->armed = 0;
    if (r->san) emu_san_worker_bind(w->san, NULL);
}

static void *worker_main(void *arg) {
    emu_worker *w = arg;
    emu_pool *p = w->pool;
    tl_worker = w;
    stack_t ss = {.ss_sp = w->altstack, .ss_size = ALTSTACK_BYTES, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->gen == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->gen;
        w->active = 1;
        pthread_mutex_unlock(&p->mu);
        run_launch(w);
        pthread_mutex_lock(&p->mu);
        w->active = 0;
        if (--p->busy == 0) pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    tl_worker = NULL;
    return NULL;
}

int emu_pool_create(int n, size_t stack_bytes, emu_pool **out, hn_err *err) {
    *out = NULL;
    if (n < 1) n = 1;
    install_handlers();
    emu_sched_set_static_shared(static_shared);
    emu_pool *p = xcalloc(1, sizeof *p);
    p->n = n;
    p->w = xcalloc((size_t)n, sizeof *p->w);
    pthread_mutex_init(&p->launch_mu, NULL);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->done, &ca);
    pthread_condattr_destroy(&ca);
    for (int i = 0; i < n; i++) {
        emu_worker *w = &p->w[i];
        w->pool = p;
        w->idx = i;
        w->altstack = xmalloc(ALTSTACK_BYTES);
        if (emu_sched_create(stack_bytes, &w->sched, err) != 0) goto fail;
    }
    for (int i = 0; i < n; i++) {
        int rc = pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]);
        if (rc != 0) {
            hn_errf(err, "emulator: cannot start worker thread %d: %s", i, strerror(rc));
            goto fail;
        }
        p->w[i].started = 1;
    }
    *out = p;
    return 0;
fail:
    emu_pool_destroy(p);
    return -1;
}

void emu_pool_destroy(emu_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        emu_worker *w = &p->w[i];
        if (w->started) pthread_join(w->th, NULL);
        emu_sched_destroy(w->sched);
        emu_san_worker_destroy(w->san);
        emu_region_unmap(&w->dyn);
        for (int j = 0; j < w->n_statics; j++) emu_region_unmap(&w->statics[j].reg);
        free(w->statics);
        free(w->altstack);
    }
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->launch_mu);
    free(p->w);
    free(p);
}

int emu_pool_threads(const emu_pool *p) {
    return p->n;
}

/* ------------------------------------------------------------------------- */
/* source lines */

/* Runs addr2line on the module; fills out with "file:line (in function)". */
static int addr2line(const char *so, uintptr_t off, char *out, size_t size) {
    char addr[32];
    snprintf(addr, sizeof addr, "0x%lx", (unsigned long)off);
    char *argv[] = {"addr2line", "-f", "-i", "-C", "-e", (char *)so, addr, NULL};
    hn_sb sb;
    hn_sb_init(&sb);
    if (hn_spawn(argv, HN_SPAWN_STDOUT, &sb, NULL) != 0) {
        hn_sb_free(&sb);
        return -1;
    }
    /* pairs of lines: function, file:line; innermost inlined frame first. Take
     * the first frame not in the shim (hn_emu.h, or any header of the shim's
     * folder: mma.h, cuda_pipeline.h ...), else the first. */
    int found = -1;
    char *save = NULL, *fn = strtok_r(sb.buf, "\n", &save);
    while (fn) {
        char *loc = strtok_r(NULL, "\n", &save);
        if (!loc) break;
        /* hn_emu_ functions are the shim's wherever the line tables put them;
         * but an extern "C" kernel inlined into its launch wrapper is named as
         * the wrapper (hn_emu_kernel_N) at the kernel's own line */
        int shim_loc = strncmp(loc, "??", 2) == 0 || strstr(loc, "hn_emu.h:") || strstr(loc, "/emu-shim-") ||
                       strstr(loc, "<harness emu");
        int wrapper = strncmp(fn, "hn_emu_kernel_", 14) == 0;
        if (!shim_loc && (strncmp(fn, "hn_emu_", 7) != 0 || wrapper)) {
            const char *slash = strrchr(loc, '/');
            char *disc = strstr(loc, " (discriminator");
            if (disc) *disc = '\0';
            if (wrapper) snprintf(out, size, "%s", slash ? slash + 1 : loc);
            else snprintf(out, size, "%s (in %s)", slash ? slash + 1 : loc, fn);
            found = 0;
            break;
        }
        fn = strtok_r(NULL, "\n", &save);
    }
    hn_sb_free(&sb);
    return found;
}

/* The user's line of pc into out: 0, or -1 when pc has none (outside the
 * module, or in the shim). */
static int describe_line(const emu_launch_req *req, uintptr_t pc, char *out, size_t size) {
    if (req->plain.fn && pc >= req->plain.text_lo && pc < req->plain.text_hi && req->plain.so_path)
        return addr2line(req->plain.so_path, pc - req->plain.so_base, out, size);
    if (pc < req->text_lo || pc >= req->text_hi || !req->so_path) return -1;
    return addr2line(req->so_path, pc - req->so_base, out, size);
}

void emu_run_describe_pc(const emu_launch_req *req, uintptr_t pc, char *out, size_t size) {
    if (req->plain.fn && pc >= req->plain.text_lo && pc < req->plain.text_hi && req->plain.so_path) {
        emu_launch_req plain = {.text_lo = req->plain.text_lo, .text_hi = req->plain.text_hi,
                                .so_base = req->plain.so_base, .so_path = req->plain.so_path};
        emu_run_describe_pc(&plain, pc, out, size);
        return;
    }
    if (pc < req->text_lo || pc >= req->text_hi || !req->so_path) {
        snprintf(out, size, "an unknown place (pc %p)", (void *)pc);
        return;
    }
    if (addr2line(req->so_path, pc - req->so_base, out, size) == 0) return;
    const char *slash = strrchr(req->so_path, '/');
    snprintf(out, size, "%s+0x%lx", slash ? slash + 1 : req->so_path,
             (unsigned long)(pc - req->so_base));
}

/* ------------------------------------------------------------------------- */
/* fault reports */

static const char *sig_text(int sig, int code) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGABRT: return "SIGABRT (abort() called)";
    case SIGFPE:
        if (code == FPE_INTDIV) return "SIGFPE (integer division by zero)";
        if (code == FPE_INTOVF) return "SIGFPE (integer overflow in division)";
        return "SIGFPE (arithmetic exception)";
    default: return "signal";
    }
}

/* The first program counter of the fault that lies in kernel code. */
static uintptr_t kernel_pc(const emu_launch_req *r, const emu_worker *w) {
    if (in_kernel_text(r, w->f_pc)) return w->f_pc;
    for (int i = 0; i < w->f_nframes; i++) {
        uintptr_t a = (uintptr_t)w->f_frames[i];
        if (in_kernel_text(r, a)) return a - 1; /* a return address */
    }
    return w->f_pc;
}

static void fault_message(const emu_launch_req *r, const emu_worker *w, hn_err *err) {
    char where[512], near[512] = "";
    int found = describe_line(r, kernel_pc(r, w), where, sizeof where) == 0;
    /* a fault inside the shim's code (hn_emu_misaligned_vector): the first frame with a line */
    for (int i = 0; !found && i < w->f_nframes; i++)
        found = describe_line(r, (uintptr_t)w->f_frames[i] - 1, where, sizeof where) == 0;
    if (!found) emu_run_describe_pc(r, kernel_pc(r, w), where, sizeof where);
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_addf(&sb, "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u): ", r->name, w->f_bid.x,
               w->f_bid.y, w->f_bid.z, w->f_tid.x, w->f_tid.y, w->f_tid.z);
    const void *a = (const void *)w->f_addr;
    int slot = w->f_sig == SIGSEGV ? emu_sched_guard_slot(w->sched, a) : -1;
    if (slot >= 0) {
        hn_sb_addf(&sb,
                   "stack overflow (each emulated thread has a %zu KB stack; deep recursion or "
                   "large local arrays?) at %s",
                   emu_sched_stack_bytes(w->sched) / 1024, where);
    } else if ((w->f_sig == SIGSEGV || w->f_sig == SIGBUS) && w->f_code == SI_KERNEL) {
        /* A general-protection fault: the CPU gives no address. In a kernel it is
         * most often an aligned vector instruction (a float4 load or store) on an
         * address that is not a multiple of 16, which a GPU reports as a
         * misaligned address; the sanitizer checks every access's alignment. */
        hn_sb_addf(&sb,
                   "%s: a general-protection fault, for which the CPU reports no address: "
                   "most likely a misaligned vector access (a float4, int4 or double2 "
                   "whose address is not a multiple of 16; a GPU says 'misaligned "
                   "address'), else an address far outside memory (harness check names "
                   "the access) at %s",
                   sig_text(w->f_sig, w->f_code), where);
    } else if (w->f_sig == SIGSEGV || w->f_sig == SIGBUS) {
        hn_sb_addf(&sb, "%s: invalid %s at address %p", sig_text(w->f_sig, w->f_code),
                   w->f_write ? "write" : "access", a);
        if (w->f_addr < 65536) {
            snprintf(near, sizeof near, "a null pointer");
        } else if (r->mem && emu_mem_describe(r->mem, a, near, sizeof near)) {
        } else {
            char pos[96];
            const emu_region dyn = {.map = w->dyn.map,
                                    .map_len = w->dyn.map_len,
                                    .guard = w->dyn.guard,
                                    .data = w->dyn_ptr,
                                    .size = w->dyn_bytes};
            /* an overrun lands in the guard right after the data */
            size_t guard = EMU_GUARD_BYTES;
            for (int i = 0; !near[0] && i < w->n_statics; i++) {
                const emu_static *st = &w->statics[i];
                if (emu_region_where(&st->reg, a, guard, pos, sizeof pos))
                    snprintf(near, sizeof near, "%s of __shared__ '%s' (%zu bytes, %s:%d)", pos,
                             st->name, st->reg.size, st->file, st->line);
            }
            if (!near[0] && emu_region_where(&dyn, a, guard, pos, sizeof pos))
                snprintf(near, sizeof near, "%s of the dynamic shared memory (%zu bytes)", pos,
                         w->dyn_bytes);
        }
        if (near[0]) hn_sb_addf(&sb, " (%s)", near);
        hn_sb_addf(&sb, " at %s", where);
    } else {
        hn_sb_addf(&sb, "%s at %s", sig_text(w->f_sig, w->f_code), where);
    }
    hn_errf(err, "%s", sb.buf);
    hn_sb_free(&sb);
}

/* ------------------------------------------------------------------------- */
/* launches */

static int prepare_dyn(emu_worker *w, size_t bytes, hn_err *err) {
    size_t need = (bytes + DYN_ALIGN - 1) & ~(size_t)(DYN_ALIGN - 1);
    if (!w->dyn.map || need > w->dyn_cap) {
        emu_region_unmap(&w->dyn);
        size_t cap = need < 64 * 1024 ? 64 * 1024 : need;
        if (emu_region_map(&w->dyn, cap, DYN_ALIGN, err) != 0) return -1;
        w->dyn_cap = cap;
    }
    /* end-aligned: the byte just past the launch's size is the guard page, or
     * (sizes that are not a multiple of 16) padding that holds the canary */
    w->dyn_ptr = w->dyn.data + w->dyn_cap - need;
    w->dyn_bytes = bytes;
    w->dyn_pad = need - bytes;
    memset(w->dyn_ptr + bytes, DYN_CANARY, w->dyn_pad);
    return 0;
}

static void add_ns(struct timespec *t, long ns) {
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

static int ts_before(const struct timespec *a, const struct timespec *b) {
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

int emu_pool_launch(emu_pool *p, const emu_launch_req *req, hn_err *err) {
    pthread_mutex_lock(&p->launch_mu);
    int rc = 0;
    emu_sched_print_launch();
    for (int i = 0; i < p->n; i++)
        if (prepare_dyn(&p->w[i], req->dyn_shared, err) != 0) {
            pthread_mutex_unlock(&p->launch_mu);
            return -1;
        }
    p->req = req;
    memset(&p->proto, 0, sizeof p->proto);
    p->proto.block_dim = req->block;
    p->proto.grid_dim = req->grid;
    p->proto.nthreads = req->block.x * req->block.y * req->block.z;
    p->proto.dyn_shared_bytes = req->dyn_shared;
    p->nblocks = (unsigned long long)req->grid.x * req->grid.y * req->grid.z;
    atomic_store(&p->next, 0);
    atomic_store(&p->abort, 0);

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    /* whole seconds apart from the rest: a long --kernel-timeout (1e10 s) in
     * nanoseconds overflowed a long and timed the launch out at once; past 1e9
     * s (31 years) it never comes anyway */
    double timeout_s = req->timeout > 0 ? (req->timeout < 1e9 ? req->timeout : 1e9) : 0;
    deadline.tv_sec += (time_t)timeout_s;
    add_ns(&deadline, (long)((timeout_s - (double)(time_t)timeout_s) * 1e9));

    pthread_mutex_lock(&p->mu);
    p->failed = 0;
    p->busy = p->n;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    int timed_out = 0, stopping = 0;
    while (p->busy > 0) {
        if (!stopping && p->failed) stopping = 1;
        if (stopping) {
            /* interrupt every worker still running until all have returned */
            for (int i = 0; i < p->n; i++)
                if (p->w[i].active) pthread_kill(p->w[i].th, sig_intr);
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            add_ns(&t, INTERRUPT_EVERY_NS);
            pthread_cond_timedwait(&p->done, &p->mu, &t);
            continue;
        }
        if (req->timeout > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (!ts_before(&now, &deadline)) {
                timed_out = 1;
                stopping = 1;
                atomic_store(&p->abort, 1);
                continue;
            }
            pthread_cond_timedwait(&p->done, &p->mu, &deadline);
        } else {
            pthread_cond_wait(&p->done, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    fflush(stdout);

    /* report the failure of the lowest block, else the time-out */
    emu_worker *bad = NULL;
    for (int i = 0; i < p->n; i++) {
        emu_worker *w = &p->w[i];
        if (w->result == -1 && (!bad || w->fail_block < bad->fail_block)) bad = w;
    }
    if (bad) {
        if (bad->fault == FAULT_SIGNAL) fault_message(req, bad, err);
        else hn_errf(err, "%s", bad->msg);
        hn_err_kind(err, HN_ERR_FAULT);
        rc = -1;
    } else if (timed_out) {
        emu_worker *at = NULL;
        for (int i = 0; i < p->n && !at; i++)
            if (p->w[i].result == -2 && p->w[i].stop_pc) at = &p->w[i];
        if (at) {
            char where[512];
            int found = describe_line(req, at->stop_pc, where, sizeof where) == 0;
            /* stopped inside the shim's callbacks: the first frame with a line */
            for (int i = 0; !found && at->stop_frames && i < at->f_nframes; i++)
                found = describe_line(req, (uintptr_t)at->f_frames[i] - 1, where, sizeof where) == 0;
            if (!found) emu_run_describe_pc(req, at->stop_pc, where, sizeof where);
            unsigned bx = req->block.x, by = req->block.y, t = (unsigned)at->stop_thread;
            hn_errf(err,
                    "kernel '%s' block (%u,%u,%u) thread (%u,%u,%u): timed out after %.3g s "
                    "(kernel_timeout), running at %s",
                    req->name, at->stop_bid.x, at->stop_bid.y, at->stop_bid.z, t % bx, t / bx % by,
                    t / bx / by, req->timeout, where);
        } else {
            hn_errf(err, "kernel '%s': timed out after %.3g s (kernel_timeout)", req->name,
                    req->timeout);
        }
        hn_err_kind(err, HN_ERR_TIMEOUT);
        rc = -1;
    }
    /* a write into a buffer's slack, which no guard page sees; the canary is
     * restored after a failed launch too, so the next one is judged alone */
    char slack[256];
    if (req->mem && emu_mem_check_slack(req->mem, slack, sizeof slack) && rc == 0) {
        hn_errf(err,
                "kernel '%s': %s (found after the launch: a buffer whose size is not a multiple of 16 "
                "has up to 15 bytes after its end, and bytes before its start in its first page, that "
                "no guard page covers; harness check names the thread and line)",
                req->name, slack);
        hn_err_kind(err, HN_ERR_FAULT);
        rc = -1;
    }
    p->req = NULL;
    pthread_mutex_unlock(&p->launch_mu);
    return rc;
}
