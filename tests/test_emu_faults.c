/*
 * test_emu_faults.c: the emulator turns broken kernels (tests/kernels/emu/broken.cu)
 * into messages, not hangs or crashes: divergent barriers, deadlocks, warp masks
 * naming lanes that never arrive, out-of-range writes (also into a buffer's slack, which no
 * guard page covers: found after the launch), stack overflow, time-outs,
 * assert, division by zero. Each message must name the kernel, block, thread and
 * line; after each failure a correct kernel must still run in the same process.
 */
#include "emu/shim/hn_emu_abi.h"
#include "test_emu_common.h"

static const char *const kernels[] = {
    "divergent_barrier", "same_line_barrier", "exit_at_barrier", "warp_deadlock",
    "missing_lanes",     "exited_lane",       "oob_write",       "null_write",
    "deep_recursion",    "spin_forever",      "spin_atomic",     "crash_while_spinning",
    "failed_assert",     "divide_by_zero",    "dyn_overflow",    "dyn_read_overflow",
    "dyn_pad_write",     "static_overflow",   "static_read_overflow", "ok_sum",
    "early_exit_shfl",   "late_exit_shfl",    "bad_width",       "mask_without_self",
    "mask_mismatch",     "barrier_deadlock",  "exit_before_barrier", "spin_alone",
    "bad_collective",    "under_write",       "misaligned_float4",
};
enum {
    K_DIVERGENT, K_SAME_LINE, K_EXIT, K_DEADLOCK, K_MISSING, K_EXITED, K_OOB, K_NULL, K_DEEP,
    K_SPIN, K_SPIN_ATOMIC, K_CRASH_SPIN, K_ASSERT, K_DIV, K_DYN, K_DYN_READ, K_DYN_PAD,
    K_STATIC, K_STATIC_READ, K_OK, K_EARLY_EXIT, K_LATE_EXIT, K_BAD_WIDTH, K_NO_SELF, K_MISMATCH,
    K_BAR_DEADLOCK, K_EXIT_BEFORE, K_SPIN_ALONE, K_BAD_OP, K_UNDER, K_MISALIGNED, K_COUNT
};

static hn_module_image img;
static char *source;
static hn_backend *be;       /* generous time-out: nothing here should hit it */
static hn_backend *be_short; /* 0.5 s time-out */
static hn_kernel *ks[K_COUNT], *ks_short[K_COUNT];

/* "broken.cu:<line>" of the line carrying the comment "@name". */
static char *at(const char *name) {
    return xasprintf("broken.cu:%d", emu_marker_line(source, name));
}

#define CHECK_AT(msg, name)                                                                   \
    do {                                                                                       \
        char *_where = at(name);                                                               \
        CHECK_CONTAINS(msg, _where);                                                           \
        free(_where);                                                                          \
    } while (0)

/* A correct kernel still runs, on both backends. */
static void check_still_works(void) {
    int in[128], out = 0, ref = 0;
    for (int i = 0; i < 128; i++) ref += in[i] = i * 3 - 50;
    hn_backend *bs[2] = {be, be_short};
    hn_kernel *kk[2] = {ks[K_OK], ks_short[K_OK]};
    for (int j = 0; j < 2; j++) {
        hn_dptr d_in = emu_buf(bs[j], in, sizeof in), d_out = emu_buf(bs[j], NULL, 4);
        void *args[] = {&d_in, &d_out};
        hn_err err;
        CHECK_MSG(emu_launch(bs[j], kk[j], 1, 1, 1, 128, 1, 1, 0, args, &err) == 0, "%s", err.msg);
        emu_get(bs[j], &out, d_out, 4);
        CHECK_INT(out, ref);
        bs[j]->ops->free(bs[j], d_in);
        bs[j]->ops->free(bs[j], d_out);
    }
}

/* Launches kernel `k` expecting failure; returns the message (static). */
static const char *expect_fail(hn_backend *b, hn_kernel *k, unsigned grid, unsigned block,
                               size_t shared, void **args) {
    static hn_err err;
    double t0 = hn_now();
    int rc = emu_launch(b, k, grid, 1, 1, block, 1, 1, shared, args, &err);
    CHECK_MSG(rc != 0, "launch should have failed");
    CHECK_MSG(hn_now() - t0 < 5.0, "took %.1f s to fail", hn_now() - t0);
    fprintf(stderr, "  message: %s\n", err.msg);
    return err.msg;
}

static void test_divergent_barrier(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_DIVERGENT], 1, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'divergent_barrier'");
    CHECK_CONTAINS(m, "block (0,0,0)");
    CHECK_CONTAINS(m, "thread (16,0,0)");
    CHECK_CONTAINS(m, "divergent __syncthreads");
    CHECK_AT(m, "barrier_a");
    CHECK_AT(m, "barrier_b");
    be->ops->free(be, d);
    check_still_works();
}

static void test_same_line_barrier(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    int k = 10;
    void *args[] = {&d, &k};
    const char *m = expect_fail(be, ks[K_SAME_LINE], 1, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'same_line_barrier'");
    CHECK_CONTAINS(m, "thread (10,0,0)");
    CHECK_CONTAINS(m, "divergent __syncthreads");
    CHECK_AT(m, "same_line");
    /* the uniform case is fine: every thread takes the same branch */
    k = 64;
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_SAME_LINE], 1, 1, 1, 32, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    be->ops->free(be, d);
    check_still_works();
}

static void test_exit_at_barrier(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_EXIT], 1, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'exit_at_barrier'");
    CHECK_CONTAINS(m, "block (0,0,0)");
    CHECK_CONTAINS(m, "thread (5,0,0)");
    CHECK_CONTAINS(m, "exited");
    CHECK_AT(m, "exit_barrier");
    be->ops->free(be, d);
    check_still_works();
}

static void test_warp_deadlock(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_DEADLOCK], 2, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'warp_deadlock'");
    CHECK_CONTAINS(m, "block (");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "deadlock");
    CHECK_CONTAINS(m, "__shfl_sync");
    CHECK_CONTAINS(m, "lanes 16-31");
    CHECK_AT(m, "deadlock_shfl");
    CHECK_AT(m, "deadlock_bar");
    be->ops->free(be, d);
    check_still_works();
}

static void test_missing_lanes(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_MISSING], 1, 16, 0, args);
    CHECK_CONTAINS(m, "kernel 'missing_lanes'");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "mask 0xffffffff names lanes 16-31");
    CHECK_AT(m, "missing");
    m = expect_fail(be, ks[K_EXITED], 1, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'exited_lane'");
    CHECK_CONTAINS(m, "thread (8,0,0)");
    CHECK_CONTAINS(m, "__shfl_sync");
    CHECK_AT(m, "exited");
    be->ops->free(be, d);
    check_still_works();
}

static void test_oob_write(void) {
    int n = 1000;
    hn_dptr d = emu_buf(be, NULL, (size_t)n * 4);
    void *args[] = {&d, &n};
    const char *m = expect_fail(be, ks[K_OOB], 4, 256, 0, args);
    CHECK_CONTAINS(m, "kernel 'oob_write'");
    CHECK_CONTAINS(m, "block (3,0,0)");
    CHECK_CONTAINS(m, "thread (232,0,0)");
    CHECK_CONTAINS(m, "SIGSEGV");
    CHECK_CONTAINS(m, "write");
    CHECK_CONTAINS(m, "0 bytes past the end of device buffer");
    CHECK_CONTAINS(m, "4000 bytes");
    CHECK_AT(m, "oob");
    be->ops->free(be, d);
    check_still_works();

    /* one element past 1001 floats (4004 bytes) is in the 12 bytes up to the
     * guard page: no signal, found after the launch (in both slack bytes of a
     * buffer after its end and before its start), and the next launch is clean */
    n = 1001;
    d = emu_buf(be, NULL, (size_t)n * 4);
    m = expect_fail(be, ks[K_OOB], 4, 256, 0, args);
    CHECK_CONTAINS(m, "kernel 'oob_write'");
    CHECK_CONTAINS(m, "a write 0 bytes past the end of device buffer");
    CHECK_CONTAINS(m, "4004 bytes");
    CHECK_CONTAINS(m, "harness check names the thread and line");
    n = 1000;
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_OOB], 4, 1, 1, 250, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    int back = 3;
    void *au[] = {&d, &back};
    m = expect_fail(be, ks[K_UNDER], 1, 32, 0, au);
    CHECK_CONTAINS(m, "kernel 'under_write'");
    CHECK_CONTAINS(m, "a write 12 bytes before the start of device buffer");
    be->ops->free(be, d);
    check_still_works();

    hn_dptr d2 = emu_buf(be, NULL, 64 * 4);
    void *a2[] = {&d2};
    m = expect_fail(be, ks[K_NULL], 1, 32, 0, a2);
    CHECK_CONTAINS(m, "kernel 'null_write'");
    CHECK_CONTAINS(m, "thread (3,0,0)");
    CHECK_CONTAINS(m, "null pointer");
    CHECK_AT(m, "null");
    be->ops->free(be, d2);
    check_still_works();
}

/* A misaligned float4 store is a general-protection fault on the CPU, which reports
 * no address: the message says what that most likely is (a GPU says "misaligned
 * address") rather than "invalid access at address (nil)". */
static void test_misaligned_vector(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_MISALIGNED], 1, 8, 0, args);
    CHECK_CONTAINS(m, "kernel 'misaligned_float4'");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "misaligned vector access");
    CHECK_CONTAINS(m, "harness check");
    CHECK(strstr(m, "(nil)") == NULL);
    CHECK_AT(m, "misaligned");
    be->ops->free(be, d);
    check_still_works();
}

static void test_stack_overflow(void) {
    hn_dptr d = emu_buf(be, NULL, 64);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_DEEP], 1, 4, 0, args);
    CHECK_CONTAINS(m, "kernel 'deep_recursion'");
    CHECK_CONTAINS(m, "block (0,0,0)");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "stack overflow");
    CHECK_CONTAINS(m, "broken.cu:");
    be->ops->free(be, d);
    check_still_works();
}

static void test_timeouts(void) {
    hn_dptr d = emu_buf(be_short, NULL, 64);
    void *args[] = {&d};
    double t0 = hn_now();
    const char *m = expect_fail(be_short, ks_short[K_SPIN], 3, 64, 0, args);
    double dt = hn_now() - t0;
    CHECK_MSG(dt >= 0.45 && dt < 3.0, "took %.2f s", dt);
    CHECK_CONTAINS(m, "kernel 'spin_forever'");
    CHECK_CONTAINS(m, "timed out after 0.5 s");
    CHECK_CONTAINS(m, "block (");
    CHECK_CONTAINS(m, "thread (");
    CHECK_AT(m, "spin");
    check_still_works();

    m = expect_fail(be_short, ks_short[K_SPIN_ATOMIC], 2, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'spin_atomic'");
    CHECK_CONTAINS(m, "timed out");
    CHECK_CONTAINS(m, "thread (");
    CHECK_AT(m, "spin_atomic");
    be_short->ops->free(be_short, d);
    check_still_works();
}

/* one block faults while the other workers spin forever on a plain load: the
 * launch must stop them (no time-out is set on `be`'s kernels here) */
static void test_crash_while_spinning(void) {
    hn_dptr flag = emu_buf(be, NULL, 64), d = emu_buf(be, NULL, 64);
    void *args[] = {&flag, &d};
    const char *m = expect_fail(be, ks[K_CRASH_SPIN], 8, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'crash_while_spinning'");
    CHECK_CONTAINS(m, "block (0,0,0)");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "SIGSEGV");
    CHECK_CONTAINS(m, "0 bytes past the end of device buffer");
    CHECK_AT(m, "crash (bad has 16 floats)");
    be->ops->free(be, flag);
    be->ops->free(be, d);
    check_still_works();
}

static void test_assert_and_div(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_ASSERT], 1, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'failed_assert'");
    CHECK_CONTAINS(m, "thread (20,0,0)");
    CHECK_CONTAINS(m, "assertion 'v < 20' failed");
    CHECK_AT(m, "assert");
    check_still_works();
    int zero = 0;
    void *a2[] = {&d, &zero};
    m = expect_fail(be, ks[K_DIV], 1, 8, 0, a2);
    CHECK_CONTAINS(m, "kernel 'divide_by_zero'");
    CHECK_CONTAINS(m, "thread (0,0,0)");
    CHECK_CONTAINS(m, "division by zero");
    CHECK_AT(m, "div");
    be->ops->free(be, d);
    check_still_works();
}

static void test_dyn_overflow(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_DYN], 1, 64, 64 * 4, args);
    CHECK_CONTAINS(m, "kernel 'dyn_overflow'");
    CHECK_CONTAINS(m, "thread (63,0,0)");
    CHECK_CONTAINS(m, "0 bytes past the end of the dynamic shared memory (256 bytes)");
    CHECK_AT(m, "dyn");
    be->ops->free(be, d);
    check_still_works();
}

/* Shared memory overruns fault at the first byte past the size: reads too,
 * and for static __shared__ arrays as for the dynamic buffer. */
static void test_shared_overruns(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_DYN_READ], 1, 64, 64 * 4, args);
    CHECK_CONTAINS(m, "thread (63,0,0)");
    CHECK_CONTAINS(m, "invalid access");
    CHECK_CONTAINS(m, "0 bytes past the end of the dynamic shared memory (256 bytes)");
    CHECK_AT(m, "dyn_read");
    /* the same kernel with one more float of shared memory is correct */
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_DYN_READ], 1, 1, 1, 64, 1, 1, 65 * 4, args, &err) == 0, "%s", err.msg);

    /* 13 bytes: the 3 bytes of padding up to 16 are checked when the block ends */
    m = expect_fail(be, ks[K_DYN_PAD], 1, 14, 13, args);
    CHECK_CONTAINS(m, "kernel 'dyn_pad_write' block (0,0,0)");
    CHECK_CONTAINS(m, "a write 0 bytes past the end of the dynamic shared memory (13 bytes)");
    CHECK_MSG(emu_launch(be, ks[K_DYN_PAD], 1, 1, 1, 13, 1, 1, 13, args, &err) == 0, "%s", err.msg);

    m = expect_fail(be, ks[K_STATIC], 3, 32, 0, args);
    CHECK_CONTAINS(m, "kernel 'static_overflow'");
    CHECK_CONTAINS(m, "thread (31,0,0)");
    CHECK_CONTAINS(m, "invalid write");
    {
        char *decl = at("tile_decl");
        char *want = xasprintf("0 bytes past the end of __shared__ 'tile' (128 bytes, %s)", decl);
        CHECK_CONTAINS(m, want);
        free(want);
        free(decl);
    }
    CHECK_AT(m, "tile");

    m = expect_fail(be, ks[K_STATIC_READ], 1, 32, 0, args);
    CHECK_CONTAINS(m, "thread (31,0,0)");
    CHECK_CONTAINS(m, "0 bytes past the end of __shared__ 'grid2' (128 bytes");
    CHECK_AT(m, "grid2");
    be->ops->free(be, d);
    check_still_works();
}


/* The whole message, with "@name" markers replaced by broken.cu:<line>. */
static void check_message(const char *m, const char *want_fmt, const char *const *marks, int n_marks) {
    char *want = xstrdup(want_fmt);
    for (int i = 0; i < n_marks; i++) {
        char *tag = xasprintf("@%s", marks[i]);
        char *where = at(marks[i]);
        char *p = strstr(want, tag);
        if (p) {
            char *next = xasprintf("%.*s%s%s", (int)(p - want), want, where, p + strlen(tag));
            free(want);
            want = next;
        }
        free(tag);
        free(where);
    }
    CHECK_STR(m, want);
    free(want);
}

/* Collectives whose lanes can never all arrive, or that are called wrongly:
 * every message in full (which thread, which lanes, which line). */
static void test_collective_misuse(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_EARLY_EXIT], 1, 32, 0, args);
    static const char *const early[] = {"early_exit"};
    check_message(m,
                  "kernel 'early_exit_shfl' block (0,0,0) thread (8,0,0): __shfl_sync at @early_exit: mask "
                  "0xffffffff names lane 0 (thread (0,0,0)), which has exited and will never arrive",
                  early, 1);
    m = expect_fail(be, ks[K_LATE_EXIT], 1, 32, 0, args);
    static const char *const late[] = {"late_exit"};
    check_message(m,
                  "kernel 'late_exit_shfl' block (0,0,0) thread (15,0,0): __shfl_sync at @late_exit: mask "
                  "0xffffffff names lane 31 (thread (31,0,0)), which has exited and will never arrive",
                  late, 1);
    /* the same full mask in a 48-thread block: warp 1 has lanes 0-15 only */
    m = expect_fail(be, ks[K_MISSING], 1, 48, 0, args);
    static const char *const missing[] = {"missing"};
    check_message(m,
                  "kernel 'missing_lanes' block (0,0,0) thread (32,0,0): __shfl_sync at @missing: mask 0xffffffff "
                  "names lanes 16-31 of warp 1, which do not exist (the block has 48 threads); they will never "
                  "arrive (a GPU runs on, and what a shuffle or vote takes from them is undefined): name only the "
                  "lanes that exist",
                  missing, 1);
    static const char *const width[] = {"bad_width"};
    const int widths[] = {64, 0, 12};
    for (int i = 0; i < 3; i++) {
        int w = widths[i];
        void *wargs[] = {&d, &w};
        m = expect_fail(be, ks[K_BAD_WIDTH], 1, 32, 0, wargs);
        char *fmt = xasprintf("kernel 'bad_width' block (0,0,0) thread (0,0,0): __shfl_sync at @bad_width: width %d "
                              "is not a power of two from 1 to 32",
                              w);
        check_message(m, fmt, width, 1);
        free(fmt);
    }
    m = expect_fail(be, ks[K_NO_SELF], 1, 32, 0, args);
    static const char *const no_self[] = {"no_self"};
    check_message(m,
                  "kernel 'mask_without_self' block (0,0,0) thread (0,0,0): __shfl_sync at @no_self: mask 0x00000002 "
                  "does not include the calling lane 0",
                  no_self, 1);
    m = expect_fail(be, ks[K_MISMATCH], 1, 32, 0, args);
    static const char *const mism[] = {"mismatch", "mismatch"};
    check_message(m,
                  "kernel 'mask_mismatch' block (0,0,0) thread (1,0,0): __shfl_sync at @mismatch with mask 0x00000003, "
                  "while lanes 0 wait in __shfl_sync at @mismatch with mask 0xffffffff: the masks must match",
                  mism, 2);
    m = expect_fail(be, ks[K_BAR_DEADLOCK], 1, 32, 0, args);
    static const char *const dl[] = {"bd_bar", "bd_shfl"};
    check_message(m,
                  "kernel 'barrier_deadlock' block (0,0,0) thread (0,0,0): deadlock: no thread can run: 16 of 32 "
                  "threads wait at __syncthreads (@bd_bar); warp 0 lanes 16-31 wait in __shfl_sync (@bd_shfl) with "
                  "mask 0xffffffff for lanes 0-15",
                  dl, 1 + 1);
    be->ops->free(be, d);
    check_still_works();
}

/* A thread that leaves while others wait at a barrier, or before they reach
 * it: the message names it and counts the others (one, or several). */
static void test_exit_and_barrier(void) {
    hn_dptr d = emu_buf(be, NULL, 64 * 4);
    static const char *const mark[] = {"exit_before"};
    static const struct {
        int k;
        const char *want;
    } cases[] = {
        {0, "kernel 'exit_before_barrier' block (0,0,0) thread (1,0,0): divergent __syncthreads: waits at "
            "@exit_before, but thread (0,0,0) has already exited (1 of 32 threads exited) and will never arrive"},
        {1, "kernel 'exit_before_barrier' block (0,0,0) thread (1,0,0): exited while 1 thread waits at "
            "__syncthreads (@exit_before): divergent __syncthreads (every thread of the block must reach it)"},
        {3, "kernel 'exit_before_barrier' block (0,0,0) thread (3,0,0): exited while 3 threads wait at "
            "__syncthreads (@exit_before): divergent __syncthreads (every thread of the block must reach it)"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        int k = cases[i].k;
        void *args[] = {&d, &k};
        const char *m = expect_fail(be, ks[K_EXIT_BEFORE], 1, 32, 0, args);
        check_message(m, cases[i].want, mark, 1);
    }
    /* lanes waiting in a shuffle when one of their mask leaves */
    void *args[] = {&d};
    const char *m = expect_fail(be, ks[K_EXITED], 1, 32, 0, args);
    static const char *const ex[] = {"exited", "exited"};
    check_message(m,
                  "kernel 'exited_lane' block (0,0,0) thread (8,0,0): exited while lanes 0-7 of warp 0 wait in "
                  "__shfl_sync (@exited) with mask 0xffffffff, which names this lane: divergent __shfl_sync (every "
                  "lane of the mask must reach it)",
                  ex, 1);
    m = expect_fail(be, ks[K_DIVERGENT], 1, 32, 0, args);
    CHECK_CONTAINS(m, "thread (16,0,0): divergent __syncthreads: waits at ");
    CHECK_CONTAINS(m, " while thread (0,0,0) waits at __syncthreads (broken.cu:");
    be->ops->free(be, d);
    check_still_works();
}

/* A thread spinning alone (its block has nothing else to run) is stopped by the
 * time-out, and the message names that thread; an unknown collective op is an
 * error, not a crash. */
static void test_spin_alone_and_bad_op(void) {
    hn_dptr d = emu_buf(be_short, NULL, 64 * 4);
    void *args[] = {&d};
    const char *m = expect_fail(be_short, ks_short[K_SPIN_ALONE], 1, 2, 0, args);
    CHECK_CONTAINS(m, "kernel 'spin_alone'");
    CHECK_CONTAINS(m, "timed out");
    CHECK_CONTAINS(m, "block (0,0,0) thread (1,0,0)");
    CHECK_AT(m, "spin_alone");
    be_short->ops->free(be_short, d);
    check_still_works();

    d = emu_buf(be, NULL, 64 * 4);
    const int ops[] = {-1, HN_EMU_OP_COUNT_, HN_EMU_API_COUNT_ << HN_EMU_OP_API_SHIFT};
    for (int i = 0; i < 3; i++) {
        int op = ops[i];
        void *oargs[] = {&d, &op};
        m = expect_fail(be, ks[K_BAD_OP], 1, 32, 0, oargs);
        char *want = xasprintf("kernel 'bad_collective' block (0,0,0) thread (0,0,0): unknown collective %d", op);
        CHECK_STR(m, want);
        free(want);
    }
    be->ops->free(be, d);
    check_still_works();
}

int main(void) {
    char *path = emu_kernel_path("broken.cu");
    char *log = NULL;
    hn_err err;
    if (hn_read_file(path, &source, NULL, &err) != 0) emu_die("read", &err);
    if (emu_compile_file(path, kernels, K_COUNT, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        return 1;
    }
    be = emu_backend(2, 20.0);
    be_short = emu_backend(2, 0.5);
    for (int i = 0; i < K_COUNT; i++) {
        ks[i] = emu_load(be, &img, i);
        ks_short[i] = emu_load(be_short, &img, i);
    }
    check_still_works();
    test_divergent_barrier();
    test_same_line_barrier();
    test_exit_at_barrier();
    test_warp_deadlock();
    test_missing_lanes();
    test_oob_write();
    test_misaligned_vector();
    test_stack_overflow();
    test_timeouts();
    test_crash_while_spinning();
    test_assert_and_div();
    test_dyn_overflow();
    test_shared_overruns();
    test_collective_misuse();
    test_exit_and_barrier();
    test_spin_alone_and_bad_op();
    for (int i = 0; i < K_COUNT; i++) {
        be->ops->kernel_free(be, ks[i]);
        be_short->ops->kernel_free(be_short, ks_short[i]);
    }
    hn_backend_destroy(be);
    hn_backend_destroy(be_short);
    hn_module_image_free(&img);
    free(source);
    free(path);
    return hn_test_exit();
}
