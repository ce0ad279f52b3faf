/*
 * test_emu_wmma.c: tensor-core and asynchronous-copy APIs on the CPU emulator
 * (the shim's mma.h, cuda_pipeline.h and cooperative_groups' memcpy_async),
 * with kernels in tests/kernels/wmma/.
 *
 *   test_gemm        wmma GEMMs (D = A B + C0 over several tiles and K steps,
 *                    padded ldm, both memory layouts of A, B and C) for __half,
 *                    __nv_bfloat16, tf32 and double inputs against a double
 *                    product of the same (converted) inputs
 *   test_frag        element-wise work on fragments; num_elements
 *   test_tf32        __float_to_tf32 against a frexp/round reference (ties away
 *                    from zero), and mma on unrounded floats (low bits ignored)
 *   test_copies      __pipeline_memcpy_async (4, 8, 16 bytes, zero fill) and
 *                    cooperative_groups::memcpy_async (bytes, aligned_size_t,
 *                    element counts) with wait_prior / wait; without the wait,
 *                    reads see the old bytes (test_faults)
 *   test_faults      wmma_broken.cu: divergence, exits, alignment, ldm,
 *                    per-lane arguments, a load past the end, a bad pipeline
 *                    size, each with its message and the user's line
 *   test_sanitized   harness check's view, each at the user's line: a wmma
 *                    load of unwritten device memory (initcheck) and past a
 *                    buffer (memcheck); a read of a pipeline copy's
 *                    destination before the wait (initcheck) and, after a
 *                    barrier standing in for cg::wait, a race with the copy
 *                    that lands at the wait
 *   test_nvrtc       the same kernel files and kernels/linear/linear_wmma.cu
 *                    through NVRTC for sm_90 (CUDA's own mma.h, cuda_pipeline.h)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>

#include "test_emu_common.h"

static hn_backend *be;
static uint64_t seed = 777;

static char *wmma_path(const char *name) {
    return xasprintf("%s/tests/kernels/wmma/%s", emu_root(), name);
}

/* ------------------------------------------------------------------------- */
/* host conversions (normal numbers and zero are all the tests use) */

static uint16_t f2h(float f) { /* round to nearest even */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    uint32_t m = u & 0x7fffffu;
    if ((u & 0x7fffffffu) == 0) return (uint16_t)sign;
    if (e <= 0 || e >= 31) emu_die("f2h: value outside the normal half range", NULL);
    uint32_t h = ((uint32_t)e << 10) | (m >> 13), rest = m & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}
static double h2d(uint16_t h) {
    int e = (h >> 10) & 0x1f;
    double v = e ? ldexp(1.0 + (h & 0x3ff) / 1024.0, e - 15) : ldexp((h & 0x3ff) / 1024.0, -14);
    return h & 0x8000u ? -v : v;
}
static uint16_t f2bf(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
static double bf2d(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* tf32 by arithmetic: 11 significant bits, ties away from zero */
static float tf32_ref(float x) {
    if (!isfinite(x) || x == 0.0f) return x;
    if (fabsf(x) < 0x1p-126f) return (float)(round((double)x * 0x1p136) * 0x1p-136); /* subnormal: a fixed quantum */
    int e;
    double m = frexp((double)x, &e);      /* 0.5 <= |m| < 1 */
    double r = round(m * 2048.0) / 2048.0; /* round(): halves away from zero */
    return (float)ldexp(r, e);
}
static float tf32_trunc(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    u &= 0xffffe000u;
    memcpy(&x, &u, 4);
    return x;
}

/* ------------------------------------------------------------------------- */
/* GEMM */

enum { T_HALF, T_BF16, T_TF32, T_DOUBLE };
typedef struct {
    const char *kernel;
    int type, a_row, b_row, acc_half;
    int M, N, K;
} gemm_case;

static const gemm_case gemm_cases[] = {
    {"gemm_h_rr_f_16x16x16", T_HALF, 1, 1, 0, 16, 16, 16},
    {"gemm_h_rc_f_16x16x16", T_HALF, 1, 0, 0, 16, 16, 16},
    {"gemm_h_cr_f_16x16x16", T_HALF, 0, 1, 0, 16, 16, 16},
    {"gemm_h_cc_f_16x16x16", T_HALF, 0, 0, 0, 16, 16, 16},
    {"gemm_h_rc_h_16x16x16", T_HALF, 1, 0, 1, 16, 16, 16},
    {"gemm_h_rr_f_32x8x16", T_HALF, 1, 1, 0, 32, 8, 16},
    {"gemm_h_cc_h_8x32x16", T_HALF, 0, 0, 1, 8, 32, 16},
    {"gemm_b_rr_f_16x16x16", T_BF16, 1, 1, 0, 16, 16, 16},
    {"gemm_b_cr_f_32x8x16", T_BF16, 0, 1, 0, 32, 8, 16},
    {"gemm_b_rc_f_8x32x16", T_BF16, 1, 0, 0, 8, 32, 16},
    {"gemm_t_rr_f_16x16x8", T_TF32, 1, 1, 0, 16, 16, 8},
    {"gemm_t_cc_f_16x16x8", T_TF32, 0, 0, 0, 16, 16, 8},
    {"gemm_d_rc_d_8x8x4", T_DOUBLE, 1, 0, 0, 8, 8, 4},
    {"gemm_d_cr_d_8x8x4", T_DOUBLE, 0, 1, 0, 8, 8, 4},
};
#define N_GEMM ((int)(sizeof gemm_cases / sizeof *gemm_cases))

static hn_module_image gemm_img;

static size_t in_bytes(int type) { return type == T_HALF || type == T_BF16 ? 2 : type == T_TF32 ? 4 : 8; }

/* a random input value: exactly representable in half and bf16 for those
 * (so products and float sums are exact), any float or double otherwise */
static double rand_in(int type) {
    if (type == T_HALF || type == T_BF16) return (double)((int)hn_rand_below(&seed, 129) - 64) / 32.0;
    return (double)((int)hn_rand_below(&seed, 2000001) - 1000000) / 1000000.0;
}

/* writes v into element i of a buffer of the type; returns the value stored */
static double put(void *buf, int type, size_t i, double v) {
    switch (type) {
    case T_HALF: ((uint16_t *)buf)[i] = f2h((float)v); return h2d(((uint16_t *)buf)[i]);
    case T_BF16: ((uint16_t *)buf)[i] = f2bf((float)v); return bf2d(((uint16_t *)buf)[i]);
    case T_TF32: ((float *)buf)[i] = (float)v; return tf32_ref((float)v); /* the kernel rounds */
    default: ((double *)buf)[i] = v; return v;
    }
}

static void test_gemm_case(int ci, int c_col) {
    const gemm_case *g = &gemm_cases[ci];
    /* several tiles, 3 steps of K; one tile where a side is 8 (a second one
     * would start 16 bytes in, which breaks the 32-byte rule for __half) */
    int m = g->M == 8 ? 8 : 2 * g->M, n = g->N == 8 ? 8 : 3 * g->N, k = 3 * g->K;
    size_t es = in_bytes(g->type), pad = 16 / es;     /* the smallest legal padding */
    size_t cs = g->type == T_DOUBLE ? 8 : g->acc_half ? 2 : 4, cpad = 16 / cs;
    int lda = (int)((g->a_row ? (size_t)k : (size_t)m) + pad);
    int ldb = (int)((g->b_row ? (size_t)n : (size_t)k) + 2 * pad);
    int ldc = (int)((c_col ? (size_t)m : (size_t)n) + cpad);
    size_t a_n = (size_t)lda * (g->a_row ? m : k), b_n = (size_t)ldb * (g->b_row ? k : n);
    size_t c_n = (size_t)ldc * (c_col ? n : m);
    void *ha = xcalloc(a_n, es), *hb = xcalloc(b_n, es), *hc = xcalloc(c_n, cs), *hd = xcalloc(c_n, cs);
    double *ra = xcalloc((size_t)m * k, sizeof *ra), *rb = xcalloc((size_t)k * n, sizeof *rb);
    double *rc = xcalloc((size_t)m * n, sizeof *rc);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < k; j++)
            ra[(size_t)i * k + j] = put(ha, g->type, g->a_row ? (size_t)i * lda + j : (size_t)j * lda + i, rand_in(g->type));
    for (int i = 0; i < k; i++)
        for (int j = 0; j < n; j++)
            rb[(size_t)i * n + j] = put(hb, g->type, g->b_row ? (size_t)i * ldb + j : (size_t)j * ldb + i, rand_in(g->type));
    int ctype = g->type == T_DOUBLE ? T_DOUBLE : g->acc_half ? T_HALF : T_TF32;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            size_t at = c_col ? (size_t)j * ldc + i : (size_t)i * ldc + j;
            double v = (double)((int)hn_rand_below(&seed, 257) - 128) / 64.0;
            if (ctype == T_TF32) ((float *)hc)[at] = (float)v; /* float accumulator: exact */
            else put(hc, ctype, at, v);
            rc[(size_t)i * n + j] = v;
        }
    hn_dptr da = emu_buf(be, ha, a_n * es), db = emu_buf(be, hb, b_n * es), dc = emu_buf(be, hc, c_n * cs);
    hn_dptr dd = emu_buf(be, NULL, c_n * cs);
    hn_kernel *kern = emu_load(be, &gemm_img, ci);
    void *args[] = {&da, &db, &dc, &dd, &m, &n, &k, &lda, &ldb, &ldc, &c_col};
    hn_err err;
    int rc_launch = emu_launch(be, kern, 3, 1, 1, 64, 1, 1, 0, args, &err); /* 2 warps a block */
    CHECK_MSG(rc_launch == 0, "%s: %s", g->kernel, err.msg);
    emu_get(be, hd, dd, c_n * cs);
    int bad = 0;
    double worst = 0;
    for (int i = 0; i < m && rc_launch == 0; i++)
        for (int j = 0; j < n; j++) {
            double ref = rc[(size_t)i * n + j], mag = fabs(ref);
            for (int t = 0; t < k; t++) {
                double p = ra[(size_t)i * k + t] * rb[(size_t)t * n + j];
                ref += p;
                mag += fabs(p);
                /* a __half accumulator is rounded after each mma_sync (the sums
                 * before are exact: multiples of 2^-10 below 2^13) */
                if (ctype == T_HALF && (t + 1) % g->K == 0) ref = h2d(f2h((float)ref));
            }
            size_t at = c_col ? (size_t)j * ldc + i : (size_t)i * ldc + j;
            double got = ctype == T_DOUBLE ? ((double *)hd)[at] : ctype == T_HALF ? h2d(((uint16_t *)hd)[at]) : ((float *)hd)[at];
            /* float sums of exact products: k roundings of 2^-24 relative to the
             * magnitude (exact for the half and bf16 inputs, checked below); a
             * half accumulator rounded as the reference does: exact; double:
             * 2^-53 per step */
            double tol = ctype == T_DOUBLE ? 1e-14 * mag : ctype == T_HALF ? 0.0 : 4e-7 * k * mag;
            if (fabs(got - ref) > tol || got != got) {
                if (bad++ < 3) fprintf(stderr, "  %s c_col %d: d[%d][%d] = %.9g, want %.9g (tol %.3g)\n", g->kernel, c_col, i, j, got, ref, tol);
            }
            if (fabs(got - ref) > worst) worst = fabs(got - ref);
        }
    CHECK_MSG(bad == 0, "%s (C %s-major): %d of %d elements wrong", g->kernel, c_col ? "column" : "row", bad, m * n);
    /* exact inputs and sums for half/bf16 with a float accumulator */
    if (g->type == T_HALF || g->type == T_BF16)
        CHECK_MSG(worst == 0, "%s: exact case off by %g", g->kernel, worst);
    /* the padding columns of D were never written */
    be->ops->kernel_free(be, kern);
    be->ops->free(be, da);
    be->ops->free(be, db);
    be->ops->free(be, dc);
    be->ops->free(be, dd);
    free(ha), free(hb), free(hc), free(hd), free(ra), free(rb), free(rc);
}

static void test_gemm(void) {
    for (int i = 0; i < N_GEMM; i++) {
        test_gemm_case(i, 0);
        test_gemm_case(i, 1);
    }
}

/* ------------------------------------------------------------------------- */
/* fragments, tf32, copies */

static hn_module_image misc_img;
static const char *const misc_names[] = {"frag_ops", "frag_sizes", "tf32_trunc", "tf32_round", "pipe_copy", "cg_copy"};

static void test_frag(void) {
    float x[256], y[512];
    for (int i = 0; i < 256; i++) x[i] = (float)(i % 23) - 5.0f;
    hn_dptr dx = emu_buf(be, x, sizeof x), dy = emu_buf(be, NULL, sizeof y);
    hn_kernel *k = emu_load(be, &misc_img, 0);
    void *args[] = {&dx, &dy};
    hn_err err;
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, 32, 1, 1, 0, args, &err) == 0, "frag_ops: %s", err.msg);
    emu_get(be, y, dy, sizeof y);
    int bad = 0;
    for (int i = 0; i < 256; i++) bad += y[i] != fminf(2.0f * x[i] + 1.0f, 20.0f);
    for (int i = 256; i < 512; i++) bad += y[i] != 4.0f;
    CHECK_MSG(bad == 0, "frag_ops: %d wrong", bad);
    be->ops->kernel_free(be, k);

    int sizes[5] = {0};
    hn_dptr ds = emu_buf(be, NULL, sizeof sizes);
    k = emu_load(be, &misc_img, 1);
    void *a2[] = {&ds};
    CHECK(emu_launch(be, k, 1, 1, 1, 32, 1, 1, 0, a2, &err) == 0);
    emu_get(be, sizes, ds, sizeof sizes);
    CHECK(sizes[0] == 256 && sizes[1] == 128 && sizes[2] == 256 && sizes[3] == 128 && sizes[4] == 32);
    be->ops->kernel_free(be, k);
    be->ops->free(be, dx), be->ops->free(be, dy), be->ops->free(be, ds);
}

static void test_tf32(void) {
    enum { N = 4096 };
    static float x[N], y[N];
    static const uint32_t special[] = {0x3f801000u, 0xbf801000u, 0x3f800fffu, 0x3f803000u, 0x3f802fffu,
                                       0x7f7ff000u, 0x00001000u, 0x7f800000u, 0xff800000u, 0x00000000u,
                                       0x80000000u, 0x7fc00000u, 0x33800000u};
    int ns = (int)(sizeof special / sizeof *special);
    for (int i = 0; i < N; i++) {
        uint32_t u = i < ns ? special[i] : (uint32_t)hn_rand_below(&seed, 0x7f000000u) | (i & 1 ? 0x80000000u : 0);
        if (i >= ns && i % 4 == 0) u = (u & 0xffffe000u) | 0x1000u; /* a tie */
        memcpy(&x[i], &u, 4);
    }
    hn_dptr dx = emu_buf(be, x, sizeof x), dy = emu_buf(be, NULL, sizeof y);
    hn_kernel *k = emu_load(be, &misc_img, 3);
    int n = N;
    void *args[] = {&dx, &dy, &n};
    hn_err err;
    CHECK(emu_launch(be, k, N / 256, 1, 1, 256, 1, 1, 0, args, &err) == 0);
    emu_get(be, y, dy, sizeof y);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float want = tf32_ref(x[i]);
        uint32_t a, b;
        memcpy(&a, &y[i], 4);
        memcpy(&b, &want, 4);
        if (a != b && !(x[i] != x[i] && y[i] != y[i])) {
            if (bad++ < 3) fprintf(stderr, "  __float_to_tf32(%a) = %a, want %a\n", x[i], y[i], want);
        }
    }
    CHECK_MSG(bad == 0, "__float_to_tf32: %d of %d wrong", bad, N);
    CHECK(y[0] == 0x1.004p0f); /* a tie goes away from zero */
    be->ops->kernel_free(be, k);
    be->ops->free(be, dx), be->ops->free(be, dy);

    /* mma on unrounded floats: the product of the truncated values */
    float a[16 * 8], b[8 * 16], d[256];
    for (int i = 0; i < 128; i++) a[i] = 1.0f + (float)(i + 1) * 0x1p-20f; /* low bits only */
    for (int i = 0; i < 128; i++) b[i] = (float)(i % 7) - 3.0f + 0x1p-16f * (float)(i % 5);
    hn_dptr da = emu_buf(be, a, sizeof a), db = emu_buf(be, b, sizeof b), dd = emu_buf(be, NULL, sizeof d);
    k = emu_load(be, &misc_img, 2);
    void *a3[] = {&da, &db, &dd};
    CHECK(emu_launch(be, k, 1, 1, 1, 32, 1, 1, 0, a3, &err) == 0);
    emu_get(be, d, dd, sizeof d);
    bad = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            double ref = 0, mag = 0;
            for (int t = 0; t < 8; t++) {
                double p = (double)tf32_trunc(a[i * 8 + t]) * tf32_trunc(b[t * 16 + j]);
                ref += p;
                mag += fabs(p);
            }
            bad += fabs(d[i * 16 + j] - ref) > 1e-6 * mag;
        }
    CHECK_MSG(bad == 0, "tf32 mma of unrounded floats: %d wrong", bad);
    be->ops->kernel_free(be, k);
    be->ops->free(be, da), be->ops->free(be, db), be->ops->free(be, dd);
}

static void test_copies(void) {
    enum { T = 64 };
    int x[T * 8], y[T * 7];
    for (int i = 0; i < T * 8; i++) x[i] = i * 3 + 1;
    hn_dptr dx = emu_buf(be, x, sizeof x), dy = emu_buf(be, NULL, sizeof y);
    hn_kernel *k = emu_load(be, &misc_img, 4);
    void *args[] = {&dx, &dy};
    hn_err err;
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, T, 1, 1, 0, args, &err) == 0, "pipe_copy: %s", err.msg);
    emu_get(be, y, dy, sizeof y);
    int bad = 0;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < 7; i++) {
            int from = (t + 1) % T * 8 + i;  /* the next thread's copy */
            int want = i == 3 ? 0 : x[from]; /* the 4th int of the 16 bytes: zero fill */
            bad += y[t * 7 + i] != want;
        }
    CHECK_MSG(bad == 0, "pipe_copy: %d wrong", bad);
    be->ops->kernel_free(be, k);
    be->ops->free(be, dx), be->ops->free(be, dy);

    enum { N = 64 };
    float fx[3 * N], fy[3 * N];
    for (int i = 0; i < 3 * N; i++) fx[i] = (float)i * 0.5f;
    dx = emu_buf(be, fx, sizeof fx), dy = emu_buf(be, NULL, sizeof fy);
    k = emu_load(be, &misc_img, 5);
    int n = N;
    void *a2[] = {&dx, &dy, &n};
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, 64, 1, 1, 0, a2, &err) == 0, "cg_copy: %s", err.msg);
    emu_get(be, fy, dy, sizeof fy);
    bad = 0;
    for (int i = 0; i < 3 * N; i++) bad += fy[i] != 2.0f * fx[i];
    CHECK_MSG(bad == 0, "cg_copy: %d wrong", bad);
    be->ops->kernel_free(be, k);
    be->ops->free(be, dx), be->ops->free(be, dy);
}

/* ------------------------------------------------------------------------- */
/* faults */

/* "wmma_broken.cu:<line>" of the line carrying "// @name" */
static char *at(const char *name) {
    char *path = wmma_path("wmma_broken.cu");
    char *where = emu_marker_at(path, "wmma_broken.cu", name);
    free(path);
    return where;
}

static const char *const broken_names[] = {"half_warp_load", "exit_before_mma", "misaligned_load", "bad_ldm",
                                           "bad_ldm_float", "lane_pointers", "load_past_end", "uninit_load",
                                           "early_read", "pipe_bad_size", "cg_no_wait"};
#define N_BROKEN ((int)(sizeof broken_names / sizeof *broken_names))

/* Runs broken kernel i (one warp) and returns the launch's result; out, when
 * not NULL, gets the first 32 floats of d. */
static int run_broken(hn_backend *b, const hn_module_image *img, int i, hn_err *err, float *out) {
    uint16_t a[256 + 128];
    for (int j = 0; j < 384; j++) a[j] = f2h((float)(j % 9));
    /* a: 384 halves (768 bytes); load_past_end reads 256 from half 128 on */
    hn_dptr da, dd;
    hn_err e;
    if (b->ops->alloc(b, sizeof a, &da, &e) != 0 || b->ops->alloc(b, 512 * 4, &dd, &e) != 0) emu_die("alloc", &e);
    b->ops->upload(b, da, a, sizeof a, &e);
    if (strcmp(broken_names[i], "uninit_load") == 0) b->ops->poison(b, dd, 512 * 4, &e);
    else b->ops->fill(b, dd, 0, 512 * 4, &e);
    hn_kernel *k = emu_load(b, img, i);
    void *args[] = {&da, &dd};
    int rc = emu_launch(b, k, 1, 1, 1, 32, 1, 1, 0, args, err);
    if (out) emu_get(b, out, dd, 32 * sizeof *out);
    b->ops->kernel_free(b, k);
    b->ops->free(b, da), b->ops->free(b, dd);
    return rc;
}

static void expect_fault(const hn_module_image *img, const char *name, const char *what) {
    int i = 0;
    while (strcmp(broken_names[i], name) != 0) i++;
    hn_err err;
    int rc = run_broken(be, img, i, &err, NULL);
    CHECK_MSG(rc != 0, "%s did not fail", name);
    fprintf(stderr, "  %s: %s\n", name, err.msg);
    CHECK_CONTAINS(err.msg, what);
    char *w = at(name);
    CHECK_CONTAINS(err.msg, w);
    free(w);
}

static void test_faults(void) {
    char *path = wmma_path("wmma_broken.cu");
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, broken_names, N_BROKEN, NULL, 0, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    /* whichever half arrives last reports; both lines are named */
    expect_fault(&img, "half_warp_load", "of warp 0 call it here while lanes");
    char *other = at("half_warp_load");
    *strrchr(other, ':') = '\0';
    char *store_line = xasprintf("%s:%d", other, atoi(other + strlen(other) + 1) + 1);
    free(other);
    expect_fault(&img, "half_warp_load", store_line);
    free(store_line);
    expect_fault(&img, "exit_before_mma", "nvcuda::wmma::mma_sync at wmma_broken.cu");
    expect_fault(&img, "exit_before_mma", "which has exited and will never arrive");
    expect_fault(&img, "misaligned_load", "is not 256-bit (32-byte) aligned (it is 2 bytes past");
    expect_fault(&img, "bad_ldm", "ldm 12 is not a multiple of 8 elements (16 bytes) for __half");
    expect_fault(&img, "bad_ldm_float", "nvcuda::wmma::store_matrix_sync: ldm 18 is not a multiple of 4 elements (16 bytes) for float");
    expect_fault(&img, "lane_pointers", "called with different arguments by the lanes of warp 0");
    expect_fault(&img, "load_past_end", "past the end of device buffer");
    expect_fault(&img, "pipe_bad_size", "__pipeline_memcpy_async: size_and_align 12 is not 4, 8 or 16");
    /* without the sanitizer, cg_no_wait reads the old zeros where the copy has
     * not landed: it lands at the copying thread's wait */
    {
        int i = 0;
        while (strcmp(broken_names[i], "cg_no_wait") != 0) i++;
        float d[32];
        CHECK(run_broken(be, &img, i, &err, d) == 0);
        int zeros = 0;
        for (int j = 0; j < 32; j++) zeros += d[j] == 0.0f;
        /* most reads see the old zeros (a few may see a part its thread has
         * landed already: which depends on the order threads run after the
         * barrier); with copies done at issue none would */
        CHECK_MSG(zeros >= 16, "cg_no_wait: only %d of 32 reads saw the old zeros", zeros);
    }
    hn_module_image_free(&img);
    free(path);
}

/* ------------------------------------------------------------------------- */
/* under the sanitizer */

static void test_sanitized(void) {
    hn_backend_opts o = {0};
    o.emu_threads = 1;
    o.kernel_timeout = 30;
    o.sanitize = HN_SAN_ALL;
    hn_backend *b = NULL;
    hn_err err;
    if (hn_backend_emu_create(&o, &b, &err) != 0) emu_die("backend", &err);
    char *path = wmma_path("wmma_broken.cu"), *cache = emu_cache();
    hn_compile_req req = {0};
    req.src_path = path;
    req.kernels = broken_names;
    req.n_kernels = N_BROKEN;
    req.cache_dir = cache;
    req.instrument = 1;
    hn_module_image img;
    char *log = NULL;
    if (hn_compile_emu(&req, &img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        exit(1);
    }
    free(log);
    static const struct {
        const char *kernel;
        int cls;
        const char *what;
    } want[] = {
        {"uninit_load", HN_SAN_C_INIT, "that was never written since it was allocated"},
        {"load_past_end", HN_SAN_C_MEM, "past the end of device buffer"},
        {"early_read", HN_SAN_C_INIT, "read of __shared__ 's'"},
        {"cg_no_wait", HN_SAN_C_RACE, "(write after read hazard)"},
    };
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
        int i = 0;
        while (strcmp(broken_names[i], want[w].kernel) != 0) i++;
        hn_san_findings f = {0};
        int rc = run_broken(b, &img, i, &err, NULL);
        b->ops->sanitizer_take(b, &f);
        fprintf(stderr, "  sanitized %s: rc %d, %s\n", want[w].kernel, rc, f.first ? f.first : "no finding");
        CHECK_MSG(f.first_class == want[w].cls, "%s: class %d, want %d", want[w].kernel, f.first_class, want[w].cls);
        char *line = at(want[w].kernel);
        CHECK_CONTAINS(f.first, line);
        CHECK_CONTAINS(f.first, want[w].what);
        free(line);
        hn_san_findings_free(&f);
    }
    hn_module_image_free(&img);
    free(path), free(cache);
    hn_backend_destroy(b);
}

/* ------------------------------------------------------------------------- */
/* NVRTC */

/* req compiles with NVRTC for sm_90 (what names it in a failure). */
static void nvrtc_compiles(hn_compile_req *req, const char *cache, const char *what) {
    req->arch = "sm_90";
    req->cache_dir = cache;
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    int rc = hn_compile_cuda(req, &img, &log, &err);
    CHECK_MSG(rc == 0, "NVRTC %s: %s\n%s", what, err.msg, log ? log : "");
    if (rc == 0) hn_module_image_free(&img);
    free(log);
}

static void test_nvrtc(void) {
    const char *files[] = {"wmma.cu", "wmma_broken.cu"};
    char *cache = emu_cache();
    for (int i = 0; i < 2; i++) {
        char *path = wmma_path(files[i]);
        hn_compile_req req = {0};
        req.src_path = path;
        if (i == 0) {
            static const char *ks[N_GEMM + 6];
            for (int j = 0; j < N_GEMM; j++) ks[j] = gemm_cases[j].kernel;
            for (int j = 0; j < 6; j++) ks[N_GEMM + j] = misc_names[j];
            req.kernels = ks;
            req.n_kernels = N_GEMM + 6;
        } else {
            req.kernels = broken_names;
            req.n_kernels = N_BROKEN;
        }
        nvrtc_compiles(&req, cache, files[i]);
        free(path);
    }
    /* linear's tensor-core variant, both input types, as harness run compiles it */
    for (int half = 0; half < 2; half++) {
        char *path = xasprintf("%s/kernels/linear/linear_wmma.cu", emu_root());
        char *inc = xasprintf("%s/kernels/include", emu_root());
        const char *ks[] = {"linear_wmma"}, *defs[] = {half ? "HALF=1" : "HALF=0"}, *incs[] = {inc};
        hn_compile_req req = {0};
        req.src_path = path;
        req.kernels = ks;
        req.n_kernels = 1;
        req.defines = defs;
        req.n_defines = 1;
        req.include_dirs = incs;
        req.n_include_dirs = 1;
        char what[32];
        snprintf(what, sizeof what, "linear_wmma.cu %s", defs[0]);
        nvrtc_compiles(&req, cache, what);
        free(inc), free(path);
    }
    free(cache);
}

int main(void) {
    be = emu_backend(2, 30.0);
    char *path = wmma_path("wmma.cu");
    const char *names[N_GEMM];
    for (int i = 0; i < N_GEMM; i++) names[i] = gemm_cases[i].kernel;
    char *log = NULL;
    hn_err err;
    if (emu_compile_file(path, names, N_GEMM, NULL, 0, &gemm_img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        return 1;
    }
    free(log);
    log = NULL;
    if (emu_compile_file(path, misc_names, 6, NULL, 0, &misc_img, &log, &err) != 0) {
        fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
        return 1;
    }
    free(log);
    free(path);
    test_gemm();
    test_frag();
    test_tf32();
    test_copies();
    test_faults();
    test_gemm_case(0, 1); /* still right after the faults */
    hn_module_image_free(&gemm_img);
    hn_module_image_free(&misc_img);
    hn_backend_destroy(be);
    test_sanitized();
    test_nvrtc();
    return hn_test_exit();
}
