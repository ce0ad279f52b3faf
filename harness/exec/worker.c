/*
 * worker.c: the worker process of `harness run` and its pipe protocol (see
 * worker.h).
 *
 * Frames, worker to parent: a header {u32 type, u32 length} and `length` bytes.
 *   DEVICE     hn_run_device, u32 n, then n NUL-terminated compile keys
 *   CASE       i64 case, i32 helping, label (NUL-terminated)
 *   ROW_BEGIN  i64 case, i32 slot
 *   ROW        i64 case, i32 slot, i32 status, f64 median_ms, f64 noise, line (NUL-terminated)
 *   STATS      hn_run_stats
 * Parent to worker: one byte after DEVICE, 1 to go on, 0 to stop. Both ends
 * are the same program, so structs travel as their bytes.
 */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

struct hn_worker {
    pid_t pid;
    int from;           /* frames from the worker */
    int to;             /* the go byte to the worker */
    unsigned char *buf; /* bytes read, not yet decoded */
    size_t len, cap;
    int eof;
    int reaped, code, sig;
};

/* ---------------------------------------------------------------------- */
/* the worker's side */

typedef struct {
    int out, in;
    int n_variants;
} child_sink;

static void write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) _exit(HN_RUN_FAILED); /* the parent is gone: nobody to report to */
        p += k;
        n -= (size_t)k;
    }
}

static void send_frame(child_sink *cs, int type, const hn_sb *payload) {
    uint32_t head[2] = {(uint32_t)type, (uint32_t)payload->len};
    write_all(cs->out, head, sizeof head);
    write_all(cs->out, payload->buf, payload->len);
}

static int sink_device(void *ctx, const hn_run_device *d, char *const *keys) {
    child_sink *cs = ctx;
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_add(&sb, d, sizeof *d);
    uint32_t n = (uint32_t)cs->n_variants;
    hn_sb_add(&sb, &n, sizeof n);
    for (int i = 0; i < cs->n_variants; i++) hn_sb_add(&sb, keys[i], strlen(keys[i]) + 1);
    send_frame(cs, HN_MSG_DEVICE, &sb);
    hn_sb_free(&sb);
    unsigned char go = 0;
    ssize_t k;
    do k = read(cs->in, &go, 1);
    while (k < 0 && errno == EINTR);
    return k == 1 && go == 1 ? 0 : -1;
}

static void sink_case(void *ctx, int64_t case_id, const char *label, int helping) {
    hn_sb sb;
    hn_sb_init(&sb);
    int32_t h = helping;
    hn_sb_add(&sb, &case_id, sizeof case_id);
    hn_sb_add(&sb, &h, sizeof h);
    hn_sb_add(&sb, label, strlen(label) + 1);
    send_frame(ctx, HN_MSG_CASE, &sb);
    hn_sb_free(&sb);
}

static void sink_row_begin(void *ctx, int64_t case_id, int slot) {
    hn_sb sb;
    hn_sb_init(&sb);
    int32_t s = slot;
    hn_sb_add(&sb, &case_id, sizeof case_id);
    hn_sb_add(&sb, &s, sizeof s);
    send_frame(ctx, HN_MSG_ROW_BEGIN, &sb);
    hn_sb_free(&sb);
}

static void sink_row(void *ctx, const hn_run_row *r) {
    hn_sb sb;
    hn_sb_init(&sb);
    int32_t slot = r->slot, status = r->status;
    hn_sb_add(&sb, &r->case_id, sizeof r->case_id);
    hn_sb_add(&sb, &slot, sizeof slot);
    hn_sb_add(&sb, &status, sizeof status);
    hn_sb_add(&sb, &r->median_ms, sizeof r->median_ms);
    hn_sb_add(&sb, &r->noise, sizeof r->noise);
    hn_sb_add(&sb, r->line, strlen(r->line) + 1);
    send_frame(ctx, HN_MSG_ROW, &sb);
    hn_sb_free(&sb);
}

/* Serve mode: the next request frame from the parent. */
static int sink_request(void *ctx, hn_run_request *req) {
    child_sink *cs = ctx;
    size_t got = 0;
    char *dst = (char *)req;
    while (got < sizeof *req) {
        ssize_t k = read(cs->in, dst + got, sizeof *req - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        got += (size_t)k;
    }
    return 0;
}

static void sink_stats(void *ctx, const hn_run_stats *s) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_add(&sb, s, sizeof *s);
    send_frame(ctx, HN_MSG_STATS, &sb);
    hn_sb_free(&sb);
}

/* ---------------------------------------------------------------------- */
/* the parent's side */

static int start(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *sh, int lane,
                 int serve, hn_worker **out, hn_err *err);

int hn_worker_start(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *sh, int lane,
                    hn_worker **out, hn_err *err) {
    return start(cli, p, selected, sh, lane, 0, out, err);
}

int hn_worker_start_serve(const hn_cli *cli, const hn_plan *p, hn_run_shared *sh, int lane, hn_worker **out,
                          hn_err *err) {
    return start(cli, p, NULL, sh, lane, 1, out, err);
}

/* A worker that has just exited (after a faulting kernel it exits for a fresh
 * process) has closed its end: the write fails with EPIPE, and the SIGPIPE it
 * raises, which would kill the harness (exit 141, tune's summary and outputs
 * lost), is blocked for the write and taken back if it came. */
int hn_worker_request(hn_worker *w, const hn_run_request *req) {
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    const char *src = (const char *)req;
    size_t put = 0;
    int rc = 0;
    while (put < sizeof *req) {
        ssize_t k = write(w->to, src + put, sizeof *req - put);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            rc = -1;
            break;
        }
        put += (size_t)k;
    }
    if (rc != 0 && !was_pending) {
        const struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int start(const hn_cli *cli, const hn_plan *p, const unsigned char *selected, hn_run_shared *sh, int lane,
                 int serve, hn_worker **out, hn_err *err) {
    *out = NULL;
    int up[2], down[2];
    if (pipe2(up, O_CLOEXEC) != 0) return hn_errf(err, "cannot create a pipe for the worker: %s", strerror(errno));
    if (pipe2(down, O_CLOEXEC) != 0) {
        int e = errno;
        close(up[0]);
        close(up[1]);
        return hn_errf(err, "cannot create a pipe for the worker: %s", strerror(e));
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(up[0]), close(up[1]), close(down[0]), close(down[1]);
        return hn_errf(err, "cannot start the worker process: %s", strerror(e));
    }
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(HN_RUN_FAILED);
        setpgid(0, 0); /* its compilers join its group, and die with it */
        signal(SIGINT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        child_sink cs = {.out = up[1], .in = down[0], .n_variants = p->n_variants};
        hn_run_sink sink = {.ctx = &cs,
                            .device = sink_device,
                            .case_begin = sink_case,
                            .row_begin = sink_row_begin,
                            .row = sink_row,
                            .stats = sink_stats,
                            .request = sink_request};
        int rc = serve ? hn_runner_serve(cli, p, sh, lane, &sink) : hn_runner_run(cli, p, selected, sh, lane, &sink);
        fflush(stdout);
        fflush(stderr);
        close(up[1]);
        close(down[0]);
        exit(rc);
    }
    close(up[1]);
    close(down[0]);
    hn_worker *w = xcalloc(1, sizeof *w);
    w->pid = pid;
    w->from = up[0];
    w->to = down[1];
    *out = w;
    return 0;
}

/* Decodes one frame if the buffer holds a whole one. */
static int decode(hn_worker *w, hn_msg *m) {
    uint32_t head[2];
    if (w->len < sizeof head) return 0;
    memcpy(head, w->buf, sizeof head);
    if (w->len < sizeof head + head[1]) return 0;
    const unsigned char *p = w->buf + sizeof head, *end = p + head[1];
    memset(m, 0, sizeof *m);
    m->type = (int)head[0];
#define TAKE(dst)                                                                                 \
    do {                                                                                          \
        if ((size_t)(end - p) < sizeof(dst)) goto bad;                                            \
        memcpy(&(dst), p, sizeof(dst));                                                           \
        p += sizeof(dst);                                                                         \
    } while (0)
#define TAKE_STR(dst)                                                                             \
    do {                                                                                          \
        const unsigned char *nul = memchr(p, 0, (size_t)(end - p));                               \
        if (!nul) goto bad;                                                                       \
        (dst) = xstrdup((const char *)p);                                                         \
        p = nul + 1;                                                                              \
    } while (0)
    int32_t i32;
    switch (m->type) {
    case HN_MSG_DEVICE: {
        uint32_t n;
        TAKE(m->device);
        TAKE(n);
        m->keys = xcalloc((size_t)n + 1, sizeof *m->keys);
        for (uint32_t i = 0; i < n; i++) {
            TAKE_STR(m->keys[i]);
            m->n_keys++;
        }
        break;
    }
    case HN_MSG_CASE:
        TAKE(m->case_id);
        TAKE(i32);
        m->helping = i32;
        TAKE_STR(m->label);
        break;
    case HN_MSG_ROW_BEGIN:
        TAKE(m->case_id);
        TAKE(i32);
        m->slot = i32;
        break;
    case HN_MSG_ROW: {
        char *line;
        TAKE(m->case_id);
        TAKE(i32);
        m->slot = i32;
        TAKE(i32);
        m->row.status = i32;
        TAKE(m->row.median_ms);
        TAKE(m->row.noise);
        TAKE_STR(line);
        m->row.line = line;
        m->row.case_id = m->case_id;
        m->row.slot = m->slot;
        break;
    }
    case HN_MSG_STATS: TAKE(m->stats); break;
    default: goto bad;
    }
#undef TAKE
#undef TAKE_STR
    {
        size_t used = sizeof head + head[1];
        memmove(w->buf, w->buf + used, w->len - used);
        w->len -= used;
    }
    return 1;
bad:
    /* A malformed frame cannot come from our worker; treat it as its death. */
    hn_msg_free(m);
    w->eof = 1;
    w->len = 0;
    return -1;
}

/* Reads what is waiting on w's pipe without decoding it. */
static void fill(hn_worker *w) {
    if (w->cap - w->len < 65536) {
        w->cap = w->cap ? 2 * w->cap : 1 << 17;
        w->buf = xrealloc(w->buf, w->cap);
    }
    ssize_t k = read(w->from, w->buf + w->len, w->cap - w->len);
    if (k < 0 && errno == EINTR) return;
    if (k <= 0) w->eof = 1;
    else w->len += (size_t)k;
}

int hn_worker_next(hn_worker *w, double timeout, hn_msg *m) {
    for (;;) {
        int d = decode(w, m);
        if (d != 0) return d;
        if (w->eof) return -1;
        struct pollfd pf = {.fd = w->from, .events = POLLIN};
        int ms = timeout <= 0 ? 0 : (int)(timeout * 1000.0 + 0.5);
        int r = poll(&pf, 1, ms);
        if (r == 0 || (r < 0 && errno == EINTR)) return 0;
        if (r < 0) {
            w->eof = 1;
            continue;
        }
        fill(w);
        timeout = 0; /* what came is decoded next; do not wait again */
    }
}

int hn_worker_wait_any(hn_worker *const *ws, int n, double timeout) {
    struct pollfd pf[HN_MAX_LANES];
    int idx[HN_MAX_LANES], k = 0;
    for (int i = 0; i < n && k < HN_MAX_LANES; i++) {
        hn_worker *w = ws[i];
        if (!w) continue;
        uint32_t head[2];
        int whole = 0;
        if (w->len >= sizeof head) {
            memcpy(head, w->buf, sizeof head);
            whole = w->len >= sizeof head + head[1];
        }
        if (whole || w->eof) return 1; /* something to take already */
        pf[k] = (struct pollfd){.fd = w->from, .events = POLLIN};
        idx[k++] = i;
    }
    if (!k) return 0;
    int ms = timeout <= 0 ? 0 : (int)(timeout * 1000.0 + 0.5);
    int r = poll(pf, (nfds_t)k, ms);
    if (r <= 0) return 0;
    for (int j = 0; j < k; j++)
        if (pf[j].revents) fill(ws[idx[j]]);
    return 1;
}

int hn_worker_go(hn_worker *w, int go) {
    unsigned char b = go ? 1 : 0;
    ssize_t k;
    do k = write(w->to, &b, 1);
    while (k < 0 && errno == EINTR);
    return k == 1 ? 0 : -1;
}

void hn_worker_kill(hn_worker *w) {
    if (!w || w->reaped) return;
    kill(-w->pid, SIGKILL); /* the worker's process group: it and its compilers */
    kill(w->pid, SIGKILL);
}

void hn_worker_wait(hn_worker *w, int *code, int *sig) {
    if (!w->reaped) {
        int st = 0;
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {
        }
        w->reaped = 1;
        w->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        w->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    }
    if (code) *code = w->code;
    if (sig) *sig = w->sig;
}

void hn_worker_destroy(hn_worker *w) {
    if (!w) return;
    if (!w->reaped) {
        hn_worker_kill(w);
        hn_worker_wait(w, NULL, NULL);
    }
    close(w->from);
    close(w->to);
    free(w->buf);
    free(w);
}

void hn_msg_free(hn_msg *m) {
    if (!m) return;
    for (int i = 0; i < m->n_keys; i++) free(m->keys[i]);
    free(m->keys);
    free(m->label);
    free((char *)m->row.line);
    memset(m, 0, sizeof *m);
}
