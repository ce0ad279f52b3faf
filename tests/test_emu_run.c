/*
 * test_emu_run.c: correct kernels on the CPU emulator (tests/kernels/emu/basic.cu),
 * each checked against a CPU computation: barriers, warp intrinsics, atomics,
 * dynamic and static shared memory, templates, __constant__, grid-stride loops,
 * printf order under a SINGLE_BLOCK-style spin, launch limits.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "test_emu_common.h"
#include "emu/emu_mem.h"

static const char *const kernels[] = {
    "reduce_shared", "reduce_warp", "ballot_count", "histogram", "sum_float",
    "sum_double",    "dyn_cast",    "scale<3>",     "poly_const", "saxpy_stride",
    "ordered_print", "sync_votes",  "warp_misc",    "dyn_file_scope", "handoff",
    "index3d",       "noinline_call", "votes",          "late_upgrade",   "shfl_edges",
    "print_lines",
};
enum {
    K_REDUCE_SHARED, K_REDUCE_WARP, K_BALLOT, K_HIST, K_SUM_F, K_SUM_D, K_DYN_CAST, K_SCALE,
    K_POLY, K_SAXPY, K_ORDERED, K_VOTES, K_WARP_MISC, K_DYN_FS, K_HANDOFF, K_INDEX3D, K_NOINLINE, K_VOTES_ALL,
    K_LATE, K_SHFL_EDGES, K_PRINT_LINES, K_COUNT
};

static hn_module_image img;
static hn_backend *be;
static hn_kernel *ks[K_COUNT];

static float *rand_floats(int n, uint64_t seed) {
    float *x = xmalloc((size_t)n * sizeof *x);
    for (int i = 0; i < n; i++) x[i] = (float)(hn_rand_unit(&seed) * 2.0 - 1.0);
    return x;
}

static void test_reduce_shared(void) {
    int n = 1000, nb = 4;
    float *x = rand_floats(n, 1), out[4];
    hn_dptr d_in = emu_buf(be, x, (size_t)n * 4), d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_in, &d_out, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_REDUCE_SHARED], nb, 1, 1, 256, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    for (int b = 0; b < nb; b++) {
        double ref = 0;
        for (int i = b * 256; i < (b + 1) * 256 && i < n; i++) ref += x[i];
        CHECK_NEAR(out[b], ref, 1e-3);
    }
    be->ops->free(be, d_in);
    be->ops->free(be, d_out);
    free(x);
}

static void test_reduce_warp(void) {
    int n = 500; /* the last warp is partly past n */
    float *x = rand_floats(512, 2), out[16];
    hn_dptr d_in = emu_buf(be, x, 512 * 4), d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_in, &d_out, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_REDUCE_WARP], 2, 1, 1, 256, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    for (int w = 0; w < 16; w++) {
        double ref = 0;
        for (int i = w * 32; i < (w + 1) * 32 && i < n; i++) ref += x[i];
        CHECK_NEAR(out[w], ref, 1e-4);
    }
    be->ops->free(be, d_in);
    be->ops->free(be, d_out);
    free(x);
}

static void test_ballot_count(void) {
    int n = 1000, *x = xmalloc(1024 * sizeof *x), ref = 0, out = 0;
    uint64_t s = 3;
    for (int i = 0; i < 1024; i++) {
        x[i] = (int)hn_rand_below(&s, 200) - 100;
        if (i < n && x[i] > 0) ref++;
    }
    hn_dptr d_in = emu_buf(be, x, 1024 * 4), d_out = emu_buf(be, NULL, 4);
    void *args[] = {&d_in, &d_out, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_BALLOT], 4, 1, 1, 256, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, &out, d_out, 4);
    CHECK_INT(out, ref);
    be->ops->free(be, d_in);
    be->ops->free(be, d_out);
    free(x);
}

static void test_histogram(void) {
    int n = 20000, bins = 64, *x = xmalloc((size_t)n * sizeof *x);
    unsigned ref[64] = {0}, out[64];
    uint64_t s = 4;
    for (int i = 0; i < n; i++) {
        x[i] = (int)hn_rand_below(&s, 1000);
        ref[x[i] % bins]++;
    }
    hn_dptr d_in = emu_buf(be, x, (size_t)n * 4), d_h = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_in, &n, &d_h, &bins};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_HIST], 8, 1, 1, 128, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_h, sizeof out);
    for (int b = 0; b < bins; b++) CHECK_INT(out[b], ref[b]);
    be->ops->free(be, d_in);
    be->ops->free(be, d_h);
    free(x);
}

static void test_atomic_sums(void) {
    int n = 5000;
    float *x = rand_floats(n, 5), sum = 0;
    double *xd = xmalloc((size_t)n * sizeof *xd), sumd = 0, ref = 0;
    for (int i = 0; i < n; i++) {
        xd[i] = x[i];
        ref += x[i];
    }
    hn_dptr d_x = emu_buf(be, x, (size_t)n * 4), d_s = emu_buf(be, NULL, 4);
    hn_dptr d_xd = emu_buf(be, xd, (size_t)n * 8), d_sd = emu_buf(be, NULL, 8);
    void *a1[] = {&d_x, &d_s, &n}, *a2[] = {&d_xd, &d_sd, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_SUM_F], 20, 1, 1, 256, 1, 1, 0, a1, &err) == 0, "%s", err.msg);
    CHECK_MSG(emu_launch(be, ks[K_SUM_D], 20, 1, 1, 256, 1, 1, 0, a2, &err) == 0, "%s", err.msg);
    emu_get(be, &sum, d_s, 4);
    emu_get(be, &sumd, d_sd, 8);
    CHECK_NEAR(sum, ref, 1e-2); /* float accumulation order */
    CHECK_NEAR(sumd, ref, 1e-9);
    be->ops->free(be, d_x);
    be->ops->free(be, d_s);
    be->ops->free(be, d_xd);
    be->ops->free(be, d_sd);
    free(x);
    free(xd);
}

static void test_dyn_cast(void) {
    int n = 3 * 64;
    float *x = rand_floats(n, 6), *of = xmalloc((size_t)n * 4);
    int *oi = xmalloc((size_t)n * 4);
    hn_dptr d_x = emu_buf(be, x, (size_t)n * 4), d_f = emu_buf(be, NULL, (size_t)n * 4),
            d_i = emu_buf(be, NULL, (size_t)n * 4);
    void *args[] = {&d_x, &d_f, &d_i, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_DYN_CAST], 3, 1, 1, 64, 1, 1, 64 * 8, args, &err) == 0, "%s", err.msg);
    emu_get(be, of, d_f, (size_t)n * 4);
    emu_get(be, oi, d_i, (size_t)n * 4);
    int bad = 0;
    for (int b = 0; b < 3; b++)
        for (int t = 0; t < 64; t++) {
            int r = 63 - t;
            if (of[b * 64 + t] != x[b * 64 + r] || oi[b * 64 + t] != r * 3) bad++;
        }
    CHECK_INT(bad, 0);
    be->ops->free(be, d_x);
    be->ops->free(be, d_f);
    be->ops->free(be, d_i);
    free(x);
    free(of);
    free(oi);
}

static void test_template_and_constant(void) {
    int n = 300;
    float *x = rand_floats(n, 7), *y = xmalloc((size_t)n * 4);
    hn_dptr d_x = emu_buf(be, x, (size_t)n * 4), d_y = emu_buf(be, NULL, (size_t)n * 4);
    void *a1[] = {&d_x, &d_y, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_POLY], 3, 1, 1, 128, 1, 1, 0, a1, &err) == 0, "%s", err.msg);
    emu_get(be, y, d_y, (size_t)n * 4);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float v = x[i], r = ((3.0f * v + 0.5f) * v - 2.0f) * v + 1.0f;
        if (fabsf(y[i] - 2.0f * r) > 1e-5f) bad++;
    }
    CHECK_INT(bad, 0);
    void *a2[] = {&d_x, &n};
    CHECK_MSG(emu_launch(be, ks[K_SCALE], 3, 1, 1, 128, 1, 1, 0, a2, &err) == 0, "%s", err.msg);
    emu_get(be, y, d_x, (size_t)n * 4);
    bad = 0;
    for (int i = 0; i < n; i++)
        if (y[i] != 3.0f * x[i]) bad++;
    CHECK_INT(bad, 0);
    be->ops->free(be, d_x);
    be->ops->free(be, d_y);
    free(x);
    free(y);
}

static void test_grid_stride(void) {
    int n = 10007;
    float a = 2.5f, *x = rand_floats(n, 8), *y = rand_floats(n, 9), *o = xmalloc((size_t)n * 4);
    hn_dptr d_x = emu_buf(be, x, (size_t)n * 4), d_y = emu_buf(be, y, (size_t)n * 4);
    void *args[] = {&a, &d_x, &d_y, &n};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_SAXPY], 3, 1, 1, 64, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, o, d_y, (size_t)n * 4);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (o[i] != a * x[i] + y[i]) bad++;
    CHECK_INT(bad, 0);
    be->ops->free(be, d_x);
    be->ops->free(be, d_y);
    free(x);
    free(y);
    free(o);
}

static void test_ordered_print(void) {
    char *dir = emu_tmp_dir("emu-run");
    char *path = xasprintf("%s/printf.txt", dir);
    hn_dptr d_c = emu_buf(be, NULL, 4);
    void *args[] = {&d_c};
    hn_err err;
    fflush(stdout);
    int saved = dup(1);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, 1);
    close(fd);
    int rc = emu_launch(be, ks[K_ORDERED], 4, 3, 2, 64, 1, 1, 0, args, &err);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    CHECK_MSG(rc == 0, "%s", err.msg);
    char *text = NULL;
    CHECK(hn_read_file(path, &text, NULL, &err) == 0);
    hn_sb want;
    hn_sb_init(&want);
    for (int b = 0; b < 24; b++)
        for (int t = 0; t < 2; t++) hn_sb_addf(&want, "block %d thread %d\n", b, t);
    CHECK_STR(text, want.buf);
    hn_sb_free(&want);
    free(text);
    be->ops->free(be, d_c);
    free(path);
    free(dir);
}

static void test_sync_votes(void) {
    int in[100], out[3];
    for (int i = 0; i < 100; i++) in[i] = i % 3 == 0 ? 1 : -1;
    hn_dptr d_in = emu_buf(be, in, sizeof in), d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_in, &d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_VOTES], 1, 1, 1, 100, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    CHECK_INT(out[0], 34);
    CHECK_INT(out[1], 0);
    CHECK_INT(out[2], 1);
    for (int i = 0; i < 100; i++) in[i] = 1;
    be->ops->upload(be, d_in, in, sizeof in, &err);
    CHECK_MSG(emu_launch(be, ks[K_VOTES], 1, 1, 1, 100, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    CHECK_INT(out[0], 100);
    CHECK_INT(out[1], 1);
    CHECK_INT(out[2], 1);
    for (int i = 0; i < 100; i++) in[i] = -i; /* none: __syncthreads_or is 0 */
    be->ops->upload(be, d_in, in, sizeof in, &err);
    CHECK_MSG(emu_launch(be, ks[K_VOTES], 1, 1, 1, 100, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    CHECK_INT(out[0], 0);
    CHECK_INT(out[1], 0);
    CHECK_INT(out[2], 0);
    be->ops->free(be, d_in);
    be->ops->free(be, d_out);
}

static void test_warp_misc(void) {
    int out[64 * 7];
    hn_dptr d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_WARP_MISC], 1, 1, 1, 64, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        int lane = t & 31, *o = &out[t * 7];
        unsigned m = 0;
        for (int j = 0; j < 32; j++)
            if (j / 4 == lane / 4) m |= 1u << j;
        int want[7] = {lane % 8 >= 1 ? lane - 1 : lane, 1, 0, -1, (int)m, 496,
                       lane < 16 ? (15 - lane) * 10 : -1};
        for (int j = 0; j < 7; j++)
            if (o[j] != want[j]) {
                if (bad++ < 5) fprintf(stderr, "warp_misc thread %d value %d: %d != %d\n", t, j, o[j], want[j]);
            }
    }
    CHECK_INT(bad, 0);
    be->ops->free(be, d_out);
}

static void test_dyn_file_scope(void) {
    int out[2 * 64];
    hn_dptr d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_DYN_FS], 2, 1, 1, 64, 1, 1, 64 * 4, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    int bad = 0;
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 64; t++)
            if (out[b * 64 + t] != (t + 1) % 64 + 100 * b) bad++;
    CHECK_INT(bad, 0);
    be->ops->free(be, d_out);
}

static void test_handoff(void) {
    int out = 0;
    hn_dptr d_flags = emu_buf(be, NULL, 8), d_out = emu_buf(be, NULL, 4);
    void *args[] = {&d_flags, &d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_HANDOFF], 1, 1, 1, 32, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, &out, d_out, 4);
    CHECK_INT(out, 42);
    be->ops->free(be, d_flags);
    be->ops->free(be, d_out);
}

/* A block of 1024 threads (the most) with a barrier: all of them on fibers. */
static void test_full_block(void) {
    int *out = xmalloc(1024 * sizeof *out), sync = 1;
    hn_dptr d_out = emu_buf(be, NULL, 1024 * 4);
    void *args[] = {&d_out, &sync};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_INDEX3D], 1, 1, 1, 32, 32, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, 1024 * 4);
    int bad = 0;
    for (int t = 0; t < 1024; t++) bad += out[t] != t;
    CHECK_INT(bad, 0);
    be->ops->free(be, d_out);
    free(out);
}

static void test_index3d(void) {
    unsigned g[3] = {3, 2, 2}, bl[3] = {8, 4, 2};
    int per = 64, nb = 12, *out = xmalloc((size_t)(per * nb) * sizeof *out);
    hn_dptr d_out = emu_buf(be, NULL, (size_t)(per * nb) * 4);
    for (int sync = 0; sync < 2; sync++) {
        void *args[] = {&d_out, &sync};
        hn_err err;
        CHECK_MSG(emu_launch(be, ks[K_INDEX3D], g[0], g[1], g[2], bl[0], bl[1], bl[2], 0, args, &err) == 0,
                  "%s", err.msg);
        emu_get(be, out, d_out, (size_t)(per * nb) * 4);
        int bad = 0;
        for (int b = 0; b < nb; b++)
            for (int t = 0; t < per; t++)
                if (out[b * per + t] != b * 10000 + t) bad++;
        CHECK_INT(bad, 0);
    }
    be->ops->free(be, d_out);
    free(out);
}

static void test_noinline(void) {
    int out[32];
    hn_dptr d = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_NOINLINE], 1, 1, 1, 32, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d, sizeof out);
    for (int i = 0; i < 32; i++) CHECK_INT(out[i], 7 * i);
    be->ops->free(be, d);
}

/* The reference of the votes kernel (basic.cu): what each of the 64 threads
 * writes, from the inputs of its warp (lanes base..base+31) and of the block. */
enum { VOTES_OUT = 24 };

static void votes_ref(const int *in, unsigned *want) {
    int count = 0;
    for (int t = 0; t < 64; t++) count += in[t] > 0;
    for (int t = 0; t < 64; t++) {
        int base = t & ~31, lane = t & 31;
        unsigned *w = &want[t * VOTES_OUT];
        for (int half = 0; half < 2; half++) {
            int nl = half ? 16 : 32;
            unsigned ballot = 0, same = 0, add = 0, and_ = ~0u, or_ = 0, xor_ = 0, umin = ~0u, umax = 0;
            int smin = in[base], smax = in[base];
            for (int l = 0; l < nl; l++) {
                int x = in[base + l];
                if (x > 0) ballot |= 1u << l;
                if (x == in[t]) same |= 1u << l;
                add += (unsigned)x;
                and_ &= (unsigned)x;
                or_ |= (unsigned)x;
                xor_ ^= (unsigned)x;
                if (x < smin) smin = x;
                if (x > smax) smax = x;
                if ((unsigned)x < umin) umin = (unsigned)x;
                if ((unsigned)x > umax) umax = (unsigned)x;
            }
            unsigned mask = half ? 0xffffu : 0xffffffffu;
            if (!half) {
                w[0] = ballot;
                w[1] = ballot != 0;
                w[2] = ballot == mask;
                w[3] = add;
                w[4] = (unsigned)smin;
                w[5] = umin;
                w[6] = (unsigned)smax;
                w[7] = umax;
                w[8] = and_;
                w[9] = or_;
                w[10] = xor_;
                w[11] = same;
                w[12] = same == mask ? mask : 0;
                w[13] = same == mask;
                w[14] = (unsigned)count;
                w[15] = count == 64;
                w[16] = count > 0;
            } else if (lane < 16) {
                w[17] = ballot;
                w[18] = ballot != 0;
                w[19] = ballot == mask;
                w[20] = (unsigned)smin;
                w[21] = same;
                w[22] = same == mask ? mask : 0;
                w[23] = same == mask;
            } else {
                for (int k = 17; k < VOTES_OUT; k++) w[k] = 0xdeadu;
            }
        }
    }
}

/* Every vote with both outcomes: mixed signs (some true, unsigned and signed
 * extremes differ), all true and all equal (match_all holds), none true, one
 * lane true, and all true but one in each half-warp. */
static void test_votes(void) {
    enum { N = 64 };
    int in[N];
    unsigned out[N * VOTES_OUT], want[N * VOTES_OUT];
    hn_dptr d_in = emu_buf(be, NULL, sizeof in), d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_in, &d_out};
    static const int preds[] = {1, 2, 13, 15, 16, 18, 19, 23}; /* the 0/1 outcomes */
    unsigned seen[VOTES_OUT] = {0};
    for (int set = 0; set < 5; set++) {
        for (int t = 0; t < N; t++) {
            switch (set) {
            case 0: in[t] = (t * 37) % 11 - 5 + (t == 40 ? 1000 : 0); break; /* mixed */
            case 1: in[t] = t < 32 ? 7 : 3; break;                            /* all true, all equal */
            case 2: in[t] = -(t % 3); break;                                   /* none true */
            case 3: in[t] = t == 37 ? 1 : 0; break;                            /* one lane */
            default: in[t] = t % 16 == 9 ? 0 : 5; break;                      /* all but one */
            }
        }
        hn_err err;
        CHECK(be->ops->upload(be, d_in, in, sizeof in, &err) == 0);
        CHECK_MSG(emu_launch(be, ks[K_VOTES_ALL], 1, 1, 1, N, 1, 1, 0, args, &err) == 0, "%s", err.msg);
        emu_get(be, out, d_out, sizeof out);
        votes_ref(in, want);
        for (size_t p = 0; p < HN_ARRAY_LEN(preds); p++)
            for (int t = 0; t < 16; t++) seen[preds[p]] |= 1u << (want[t * VOTES_OUT + preds[p]] & 1u);
        int bad = 0;
        for (int i = 0; i < N * VOTES_OUT; i++)
            if (out[i] != want[i] && bad++ < 5)
                fprintf(stderr, "votes set %d thread %d value %d: 0x%x != 0x%x\n", set, i / VOTES_OUT,
                        i % VOTES_OUT, out[i], want[i]);
        CHECK_MSG(bad == 0, "input set %d: %d wrong values", set, bad);
    }
    /* the sets do give every predicate both outcomes */
    for (size_t p = 0; p < HN_ARRAY_LEN(preds); p++) CHECK_MSG(seen[preds[p]] == 3u, "value %d", preds[p]);
    be->ops->free(be, d_in);
    be->ops->free(be, d_out);
}


/* The switch to fibers happens at thread 40 of an 8x8 block, after 40 threads
 * have run to completion in loop mode: every thread runs once, the later ones
 * keep their own (x, y), and the exited lanes are out of __activemask. */
static void test_late_upgrade(void) {
    int runs[64];
    unsigned out[24 * 4];
    hn_dptr d_runs = emu_buf(be, NULL, sizeof runs), d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_runs, &d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_LATE], 1, 1, 1, 8, 8, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, runs, d_runs, sizeof runs);
    emu_get(be, out, d_out, sizeof out);
    int bad = 0;
    for (int t = 0; t < 64; t++) bad += runs[t] != 1;
    CHECK_MSG(bad == 0, "%d threads did not run exactly once", bad);
    for (int t = 40; t < 64; t++) {
        const unsigned *o = &out[(t - 40) * 4];
        CHECK_MSG(o[0] == 0xffffff00u, "thread %d: activemask 0x%08x", t, o[0]);
        CHECK_MSG(o[1] == (unsigned)(t % 8) && o[2] == (unsigned)(t / 8), "thread %d: (%u, %u)", t, o[1], o[2]);
        CHECK_MSG(o[3] == 0xaaaaaa00u, "thread %d: ballot 0x%08x", t, o[3]);
    }
    be->ops->free(be, d_runs);
    be->ops->free(be, d_out);
}

static void test_shfl_edges(void) {
    int out[64 * 4];
    hn_dptr d_out = emu_buf(be, NULL, sizeof out);
    void *args[] = {&d_out};
    hn_err err;
    CHECK_MSG(emu_launch(be, ks[K_SHFL_EDGES], 1, 1, 1, 64, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, out, d_out, sizeof out);
    int bad = 0;
    for (int t = 0; t < 64; t++) {
        int lane = t & 31, base = t - lane, v = 100 + t, x = lane ^ 8;
        int want[4] = {v, (x & ~7) <= (lane & ~7) ? 100 + base + x : v, (lane & 7) + 3 < 8 ? v + 3 : v,
                       100 + base + ((lane & ~7) | ((lane + 1) & 7))};
        for (int j = 0; j < 4; j++)
            if (out[t * 4 + j] != want[j] && bad++ < 5)
                fprintf(stderr, "shfl_edges thread %d value %d: %d != %d\n", t, j, out[t * 4 + j], want[j]);
    }
    CHECK_INT(bad, 0);
    be->ops->free(be, d_out);
}

/* Runs print_lines `launches` times under a printf budget of `limit` lines
 * per launch; returns what reached stdout, *dropped the lines held back. */
static char *printed(long limit, int launches, long *dropped) {
    char *dir = emu_tmp_dir("emu-run");
    char *path = xasprintf("%s/print_lines.txt", dir);
    hn_dptr d = emu_buf(be, NULL, 4);
    void *args[] = {&d};
    hn_err err;
    CHECK(be->ops->printf_limit(be, limit, NULL, &err) == 0);
    fflush(stdout);
    int saved = dup(1);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    dup2(fd, 1);
    close(fd);
    for (int i = 0; i < launches; i++)
        CHECK_MSG(emu_launch(be, ks[K_PRINT_LINES], 1, 1, 1, 1, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    CHECK(be->ops->printf_limit(be, -1, dropped, &err) == 0);
    char *text = NULL;
    CHECK(hn_read_file(path, &text, NULL, &err) == 0);
    be->ops->free(be, d);
    free(path);
    free(dir);
    return text ? text : xstrdup("");
}

/* The printf budget counts lines per launch and may end inside one printf
 * (the first, or the second after the first fitted: limit 4). */
static void test_printf_budget(void) {
    static const struct {
        long limit;
        int launches;
        const char *out;
        long dropped;
    } cases[] = {
        {-1, 1, "a\nb\nc\nd\ne\n", 0}, {5, 1, "a\nb\nc\nd\ne\n", 0}, {4, 1, "a\nb\nc\nd\n", 1},
        {3, 1, "a\nb\nc\n", 2},        {2, 1, "a\nb\n", 3},              {1, 1, "a\n", 4},
        {0, 1, "", 5},                  {3, 2, "a\nb\nc\na\nb\nc\n", 4},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        long dropped = -1;
        char *text = printed(cases[i].limit, cases[i].launches, &dropped);
        CHECK_MSG(strcmp(text, cases[i].out) == 0, "limit %ld: printed \"%s\"", cases[i].limit, text);
        CHECK_MSG(dropped == cases[i].dropped, "limit %ld: %ld dropped", cases[i].limit, dropped);
        free(text);
    }
}

static void test_limits(void) {
    hn_device_info di;
    be->ops->device_info(be, &di);
    CHECK_STR(di.arch, "emu");
    CHECK_CONTAINS(di.name, "CPU emulator (");
    CHECK_INT(di.warp_size, 32);
    CHECK_INT(di.max_threads_per_block, 1024);
    CHECK_INT(di.max_block_dim[2], 64);
    CHECK_INT(di.max_grid_dim[1], 65535);
    CHECK_INT(di.shared_per_block, 48 * 1024);
    CHECK_INT(di.shared_per_block_optin, 227 * 1024);
    hn_dptr d_out = emu_buf(be, NULL, 64);
    int sync = 0;
    void *args[] = {&d_out, &sync};
    hn_err err;
    CHECK(emu_launch(be, ks[K_INDEX3D], 1, 1, 1, 64, 32, 1, 0, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "threads per block");
    CHECK_CONTAINS(err.msg, "index3d");
    CHECK(emu_launch(be, ks[K_INDEX3D], 1, 70000, 1, 1, 1, 1, 0, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "grid dimension y");
    CHECK(emu_launch(be, ks[K_INDEX3D], 1, 1, 1, 1, 1, 65, 0, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "block dimension z");
    CHECK(emu_launch(be, ks[K_INDEX3D], 1, 1, 1, 1, 1, 1, 300 * 1024, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "shared memory");
    be->ops->free(be, d_out);
}

/* the same reduction with one worker and with several */
static void test_thread_counts(void) {
    for (int threads = 1; threads <= 3; threads++) {
        hn_backend *b = emu_backend(threads, 0);
        hn_kernel *k = emu_load(b, &img, K_HIST);
        int n = 5000, bins = 10, *x = xmalloc((size_t)n * sizeof *x);
        unsigned ref[10] = {0}, out[10];
        for (int i = 0; i < n; i++) {
            x[i] = i * 7;
            ref[x[i] % bins]++;
        }
        hn_dptr d_in = emu_buf(b, x, (size_t)n * 4), d_h = emu_buf(b, NULL, sizeof out);
        void *args[] = {&d_in, &n, &d_h, &bins};
        hn_err err;
        CHECK_MSG(emu_launch(b, k, 9, 1, 1, 96, 1, 1, 0, args, &err) == 0, "%s", err.msg);
        emu_get(b, out, d_h, sizeof out);
        for (int i = 0; i < bins; i++) CHECK_INT(out[i], ref[i]);
        hn_device_info di;
        b->ops->device_info(b, &di);
        CHECK_INT(di.sm_count, threads);
        b->ops->free(b, d_in);
        b->ops->free(b, d_h);
        b->ops->kernel_free(b, k);
        hn_backend_destroy(b);
        free(x);
    }
}

static void test_events(void) {
    hn_event *a, *z;
    hn_err err;
    CHECK(be->ops->event_create(be, &a, &err) == 0);
    CHECK(be->ops->event_create(be, &z, &err) == 0);
    CHECK(be->ops->event_record(be, a, &err) == 0);
    CHECK(be->ops->flush_l2(be, &err) == 0);
    CHECK(be->ops->event_record(be, z, &err) == 0);
    float ms = -1;
    CHECK(be->ops->event_elapsed(be, a, z, &ms, &err) == 0);
    CHECK(ms >= 0);
    CHECK(be->ops->sync(be, &err) == 0);
    be->ops->event_destroy(be, a);
    be->ops->event_destroy(be, z);
}

/* The cold-cache flush's eviction of the device buffers: done while they hold no
 * more than the limit, refused (nothing touched) above it, the bytes unchanged. */
static void test_evict(void) {
    emu_mem *m = emu_mem_create();
    size_t sizes[] = {1, 100, 5000, 0};
    unsigned char *p[4];
    hn_err err;
    size_t total = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(emu_mem_alloc(m, sizes[i], (void **)&p[i], &err) == 0);
        for (size_t k = 0; k < sizes[i]; k++) p[i][k] = (unsigned char)(k * 7 + (size_t)i);
        total += sizes[i];
    }
    CHECK_INT(emu_mem_evict(m, total), 1);
    CHECK_INT(emu_mem_evict(m, total - 1), 0);
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < sizes[i]; k++)
            if (p[i][k] != (unsigned char)(k * 7 + (size_t)i)) {
                CHECK_MSG(0, "buffer %d byte %zu changed by the eviction", i, k);
                break;
            }
    CHECK_INT(emu_mem_check_slack(m, (char[80]){0}, 80), 0);
    emu_mem_destroy(m);
    emu_mem *none = emu_mem_create();
    CHECK_INT(emu_mem_evict(none, 0), 1);
    emu_mem_destroy(none);
}

int main(void) {
    test_evict();
    char *path = emu_kernel_path("basic.cu");
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, kernels, K_COUNT, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        return 1;
    }
    be = emu_backend(2, 30.0);
    for (int i = 0; i < K_COUNT; i++) ks[i] = emu_load(be, &img, i);
    test_reduce_shared();
    test_reduce_warp();
    test_ballot_count();
    test_histogram();
    test_atomic_sums();
    test_dyn_cast();
    test_template_and_constant();
    test_grid_stride();
    test_ordered_print();
    test_sync_votes();
    test_warp_misc();
    test_dyn_file_scope();
    test_handoff();
    test_index3d();
    test_full_block();
    test_noinline();
    test_votes();
    test_late_upgrade();
    test_shfl_edges();
    test_printf_budget();
    test_limits();
    test_thread_counts();
    test_events();
    for (int i = 0; i < K_COUNT; i++) be->ops->kernel_free(be, ks[i]);
    hn_backend_destroy(be);
    hn_module_image_free(&img);
    free(path);
    return hn_test_exit();
}
