/*
 * conv2d_ref.c: see conv2d_ref.h.
 *
 * The output is a product C = A * B with
 *   A  (out_ch, K)      the filter, K = in_ch*fs*fs (row o is filter[o] as it lies)
 *   B  (K, n_pix)       im2col: B[(c*fs + p)*fs + q][j] = X(c, y_j + p - r, x_j + q - r)
 *   C  (out_ch, n_pix)  the output, row-major, leading dimension n_pix
 * where pixel j is j itself (full output) or pix[j] (the _at variant). B is never
 * built whole. Threads take blocks of pixels from a shared counter and write only
 * those columns of C. Per block:
 *   ours      for each CONV_KC rows of B, for each panel of 24 (AVX-512) pixels:
 *             im2col straight into the packed panel (L1), then every 8-channel
 *             panel of the packed filter times it (conv_block_own);
 *   OpenBLAS  for each block of input channels: im2col into a plain (rows, pixels)
 *             buffer, then cblas_dgemm, beta 0 for the first block and 1 after
 *             (conv_block_blas).
 * im2col walks the block's pixels as runs (consecutive pixels of one image row) so
 * the inside of the image is converted a vector at a time and the pad is written
 * only where a run leaves the image.
 *
 * A batch: blocks of pixels of every image share one counter (block ci is block
 * ci % chunks_per_img of image ci / chunks_per_img).
 *
 * Sections: micro-kernels, im2col, the driver, the backward passes, border pixels,
 * the bench.
 */
#include "ref.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#if defined(HN_HAVE_OPENBLAS)
#include <cblas.h>
/* OpenBLAS's own (process-global) thread count; declared here too because not every
 * cblas.h on the include path declares them. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
#endif

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CONV_X86 1 /* AVX2 and AVX-512 kernels, picked at run time */
#endif

/* ------------------------------------------------------------------------------------
 * Micro-kernels of our multiply: c (an mr_v x nr_v corner of an MR x NR tile, row
 * stride ldc) = (beta_zero ? 0 : c) + a * b over kc steps, with
 *   a  kc x MR_PACK, packed: MR_PACK filter values (output channels) per step
 *   b  kc x NR: NR im2col values (pixels) per step, steps ldb apart, zero past nr_v
 * Rows are output channels, columns pixels, so C's rows are stored contiguously.
 */

typedef void (*conv_kernel_fn)(int kc, const double *a, const double *b, int64_t ldb,
                               double *c, int64_t ldc, int beta_zero, int mr_v, int nr_v);
/* dst[0..n) = src[0..n), float to double (exact). */
typedef void (*conv_cvt_fn)(double *dst, const float *src, int n);
typedef struct {
    int mr, nr;
    conv_kernel_fn fn;
    conv_cvt_fn cvt; /* for im2col, with the same instruction set */
    const char *name;
} conv_kernel;

static void cvt_generic(double *dst, const float *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = src[i];
}

/* Stores a tile held in t (row stride nr) into c, for the edge tiles. */
static void tile_store(double *c, int64_t ldc, const double *t, int nr, int beta_zero,
                       int mr_v, int nr_v) {
    for (int i = 0; i < mr_v; i++)
        for (int j = 0; j < nr_v; j++)
            c[i * ldc + j] = (beta_zero ? 0.0 : c[i * ldc + j]) + t[i * nr + j];
}

#if defined(__GNUC__)
/* 4 x 4 on 2-wide vectors, for any CPU (SSE2, NEON, or scalar code as needed). */
typedef double conv_v2d __attribute__((vector_size(16)));

static conv_v2d v2d_load(const double *p) {
    conv_v2d v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void kernel_generic(int kc, const double *a, const double *b, int64_t ldb, double *c,
                           int64_t ldc, int beta_zero, int mr_v, int nr_v) {
    conv_v2d c00 = {0, 0}, c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
             c31 = c00;
    for (int k = 0; k < kc; k++, a += 4, b += ldb) {
        conv_v2d b0 = v2d_load(b), b1 = v2d_load(b + 2);
        c00 += a[0] * b0, c01 += a[0] * b1;
        c10 += a[1] * b0, c11 += a[1] * b1;
        c20 += a[2] * b0, c21 += a[2] * b1;
        c30 += a[3] * b0, c31 += a[3] * b1;
    }
    double t[16];
    memcpy(t + 0, &c00, 16), memcpy(t + 2, &c01, 16);
    memcpy(t + 4, &c10, 16), memcpy(t + 6, &c11, 16);
    memcpy(t + 8, &c20, 16), memcpy(t + 10, &c21, 16);
    memcpy(t + 12, &c30, 16), memcpy(t + 14, &c31, 16);
    tile_store(c, ldc, t, 4, beta_zero, mr_v, nr_v);
}
#else
static void kernel_generic(int kc, const double *a, const double *b, int64_t ldb, double *c,
                           int64_t ldc, int beta_zero, int mr_v, int nr_v) {
    double t[16] = {0};
    for (int k = 0; k < kc; k++, a += 4, b += ldb)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) t[i * 4 + j] += a[i] * b[j];
    tile_store(c, ldc, t, 4, beta_zero, mr_v, nr_v);
}
#endif
static const conv_kernel kernel_generic_4x4 = {4, 4, kernel_generic, cvt_generic, "generic 4x4"};

#if defined(CONV_X86)
/* 6 x 8 with AVX2 + FMA: 12 accumulators, 2 B vectors, 1 broadcast of 16 registers.
 * Like the AVX-512 kernel below, R (a constant after inlining) rows are computed. */
__attribute__((target("avx2,fma"), always_inline)) static inline void
kernel_avx2_rows(const int R, int kc, const double *a, const double *b, int64_t ldb, double *c,
                 int64_t ldc, int beta_zero, int mr_v, int nr_v) {
    __m256d acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm256_setzero_pd();
    for (int k = 0; k < kc; k++, a += 6, b += ldb) {
        __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            __m256d ai = _mm256_broadcast_sd(a + i);
            acc[i][0] = _mm256_fmadd_pd(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_pd(ai, b1, acc[i][1]);
        }
    }
    if (nr_v == 8) {
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            if (i >= mr_v) break;
            double *ci = c + i * ldc;
            if (!beta_zero) {
                acc[i][0] = _mm256_add_pd(acc[i][0], _mm256_loadu_pd(ci));
                acc[i][1] = _mm256_add_pd(acc[i][1], _mm256_loadu_pd(ci + 4));
            }
            _mm256_storeu_pd(ci, acc[i][0]);
            _mm256_storeu_pd(ci + 4, acc[i][1]);
        }
        return;
    }
    double t[48];
#pragma GCC unroll 6
    for (int i = 0; i < R; i++) {
        _mm256_storeu_pd(t + 8 * i, acc[i][0]);
        _mm256_storeu_pd(t + 8 * i + 4, acc[i][1]);
    }
    tile_store(c, ldc, t, 8, beta_zero, mr_v < R ? mr_v : R, nr_v);
}

__attribute__((target("avx2,fma"))) static void kernel_avx2(int kc, const double *a,
                                                            const double *b, int64_t ldb,
                                                            double *c, int64_t ldc,
                                                            int beta_zero, int mr_v, int nr_v) {
    if (mr_v > 4)
        kernel_avx2_rows(6, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else if (mr_v > 2)
        kernel_avx2_rows(4, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else if (mr_v > 1)
        kernel_avx2_rows(2, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else
        kernel_avx2_rows(1, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
}

__attribute__((target("avx2"))) static void cvt_avx2(double *dst, const float *src, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(dst + i, _mm256_cvtps_pd(_mm_loadu_ps(src + i)));
    for (; i < n; i++) dst[i] = src[i];
}
static const conv_kernel kernel_avx2_6x8 = {6, 8, kernel_avx2, cvt_avx2, "avx2 6x8"};

/* 8 x 24 with AVX-512: 24 accumulators, 3 B vectors, 1 broadcast of 32 registers.
 * R (a constant after inlining) rows are computed, so a panel with 1, 2 or 4 live
 * output channels costs no more than it needs; partial columns use masks. */
__attribute__((target("avx512f"), always_inline)) static inline void
kernel_avx512_rows(const int R, int kc, const double *a, const double *b, int64_t ldb,
                   double *c, int64_t ldc, int beta_zero, int mr_v, int nr_v) {
    __m512d acc[8][3];
#pragma GCC unroll 8
    for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = acc[i][2] = _mm512_setzero_pd();
    for (int k = 0; k < kc; k++, a += 8, b += ldb) {
        __m512d b0 = _mm512_loadu_pd(b), b1 = _mm512_loadu_pd(b + 8),
                b2 = _mm512_loadu_pd(b + 16);
#pragma GCC unroll 8
        for (int i = 0; i < R; i++) {
            __m512d ai = _mm512_set1_pd(a[i]);
            acc[i][0] = _mm512_fmadd_pd(ai, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_pd(ai, b1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_pd(ai, b2, acc[i][2]);
        }
    }
    const int n0 = nr_v < 8 ? nr_v : 8, n1 = nr_v < 16 ? nr_v - n0 : 8, n2 = nr_v - n0 - n1;
    const __mmask8 m0 = (__mmask8)((1u << n0) - 1), m1 = (__mmask8)((1u << n1) - 1),
                   m2 = (__mmask8)((1u << n2) - 1);
#pragma GCC unroll 8
    for (int i = 0; i < R; i++) {
        if (i >= mr_v) break;
        double *ci = c + i * ldc;
        if (!beta_zero) {
            acc[i][0] = _mm512_add_pd(acc[i][0], _mm512_maskz_loadu_pd(m0, ci));
            acc[i][1] = _mm512_add_pd(acc[i][1], _mm512_maskz_loadu_pd(m1, ci + 8));
            acc[i][2] = _mm512_add_pd(acc[i][2], _mm512_maskz_loadu_pd(m2, ci + 16));
        }
        _mm512_mask_storeu_pd(ci, m0, acc[i][0]);
        _mm512_mask_storeu_pd(ci + 8, m1, acc[i][1]);
        _mm512_mask_storeu_pd(ci + 16, m2, acc[i][2]);
    }
}

__attribute__((target("avx512f"))) static void kernel_avx512(int kc, const double *a,
                                                             const double *b, int64_t ldb,
                                                             double *c, int64_t ldc,
                                                             int beta_zero, int mr_v, int nr_v) {
    if (mr_v > 4)
        kernel_avx512_rows(8, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else if (mr_v > 2)
        kernel_avx512_rows(4, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else if (mr_v > 1)
        kernel_avx512_rows(2, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
    else
        kernel_avx512_rows(1, kc, a, b, ldb, c, ldc, beta_zero, mr_v, nr_v);
}

__attribute__((target("avx512f"))) static void cvt_avx512(double *dst, const float *src, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(dst + i, _mm512_cvtps_pd(_mm256_loadu_ps(src + i)));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, src + i);
        _mm512_mask_storeu_pd(dst + i, (__mmask8)m, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    }
}
static const conv_kernel kernel_avx512_8x24 = {8, 24, kernel_avx512, cvt_avx512, "avx512 8x24"};
#endif

enum { CONV_MR_MAX = 8, CONV_NR_MAX = 24 };

/* The best kernel this CPU runs, at most isa. */
static const conv_kernel *conv_pick_kernel(conv2d_isa isa) {
    (void)isa;
#if defined(CONV_X86)
    if ((isa == CONV2D_ISA_BEST || isa >= CONV2D_ISA_AVX512) && __builtin_cpu_supports("avx512f"))
        return &kernel_avx512_8x24;
    if ((isa == CONV2D_ISA_BEST || isa >= CONV2D_ISA_AVX2) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return &kernel_avx2_6x8;
#endif
    return &kernel_generic_4x4;
}

/* Whether a call with these settings multiplies with OpenBLAS. */
static int conv_use_blas(conv2d_gemm gemm, const conv_kernel *kern) {
#if defined(HN_HAVE_OPENBLAS)
    return gemm == CONV2D_GEMM_BLAS || (gemm == CONV2D_GEMM_AUTO && kern == &kernel_generic_4x4);
#else
    (void)gemm, (void)kern;
    return 0;
#endif
}

const char *conv2d_ref_method(void) {
    const conv_kernel *kern = conv_pick_kernel(CONV2D_ISA_BEST);
    if (conv_use_blas(CONV2D_GEMM_AUTO, kern)) return "im2col + OpenBLAS dgemm";
    if (kern == &kernel_generic_4x4) return "im2col + own dgemm (generic 4x4 kernel)";
    if (kern->nr == 8) return "im2col + own dgemm (avx2 6x8 kernel)";
    return "im2col + own dgemm (avx512 8x24 kernel)";
}

/* ------------------------------------------------------------------------------------
 * im2col. The source, and the pixels of a block as runs: pixels consecutive in one
 * image row, whose columns of B are consecutive too.
 */

typedef struct {
    const float *in; /* (in_ch, h, w) */
    int h, w, fs, r; /* r: the padding above and left (the window of output pixel
                        (y, x) starts at input (y - r, x - r)) */
    int ow;          /* the output's width (pixel numbers are y * ow + x) */
    double pad;
    conv_cvt_fn cvt;
} conv_src;

typedef struct {
    int y, x, len; /* pixels (y, x .. x+len-1) */
    int col;       /* their first column in B */
} conv_run;

/* The n pixels j0.. (pix == NULL: pixel numbers j0 .. j0+n-1; else pix[j0 ..]) as
 * runs; runs holds n entries at most. Returns the number of runs. */
static int conv_runs(conv_run *runs, const int64_t *pix, int64_t j0, int n, int w) {
    int nr = 0;
    for (int j = 0; j < n;) {
        int64_t v = pix ? pix[j0 + j] : j0 + j;
        conv_run run = {(int)(v / w), (int)(v % w), 1, j};
        for (j++; j < n && run.x + run.len < w; j++, run.len++) {
            int64_t next = pix ? pix[j0 + j] : j0 + j;
            if (next != v + run.len) break;
        }
        runs[nr++] = run;
    }
    return nr;
}

static void fill(double *dst, int n, double v) {
    for (int i = 0; i < n; i++) dst[i] = v;
}

/* Row k of B (k = (c*fs + p)*fs + q) over the runs into dst (dst[col] per pixel). */
static void im2col_row(double *dst, const conv_src *s, int c, int p, int q, const conv_run *runs,
                       int n_runs) {
    const int h = s->h, w = s->w, dy = p - s->r, dx = q - s->r;
    const float *plane = s->in + (int64_t)c * h * w;
    for (int i = 0; i < n_runs; i++) {
        const int x = runs[i].x, len = runs[i].len, yy = runs[i].y + dy;
        double *d = dst + runs[i].col; /* d[j] for pixel (y, x + j) */
        if (yy < 0 || yy >= h) {
            fill(d, len, s->pad);
            continue;
        }
        const float *srow = plane + (int64_t)yy * w;
        if (len < 8) { /* sparse pixels, image edges: no calls */
            for (int j = 0; j < len; j++) {
                const int xx = x + j + dx;
                d[j] = xx >= 0 && xx < w ? (double)srow[xx] : s->pad;
            }
            continue;
        }
        /* xx = x + j + dx lies in [0, w) for j in [lo, hi) */
        int lo = -dx - x > 0 ? -dx - x : 0, hi = w - dx - x < len ? w - dx - x : len;
        if (lo > len) lo = len;
        if (hi < lo) hi = lo;
        fill(d, lo, s->pad);
        if (hi > lo) s->cvt(d + lo, srow + x + lo + dx, hi - lo);
        fill(d + hi, len - hi, s->pad);
    }
}

#if defined(HN_HAVE_OPENBLAS)
/* For the BLAS path: B (nc*fs*fs, n) for input channels c0 .. c0+nc-1, ldb = n. */
static void im2col_block(double *B, const conv_src *s, int c0, int nc, const conv_run *runs,
                         int n_runs, int n) {
    const int fs = s->fs;
    for (int c = c0; c < c0 + nc; c++)
        for (int p = 0; p < fs; p++)
            for (int q = 0; q < fs; q++)
                im2col_row(B + ((int64_t)((c - c0) * fs + p) * fs + q) * n, s, c, p, q, runs,
                           n_runs);
}
#endif

/* For our multiply: rows k0 .. k0+kc-1 of B into a panel of width nw (bp[k*nw + col]),
 * columns n .. nw-1 zeroed. */
static void im2col_panel(double *bp, const conv_src *s, int k0, int kc, const conv_run *runs,
                         int n_runs, int n, int nw) {
    const int fs = s->fs;
    int c = k0 / (fs * fs), p = k0 / fs % fs, q = k0 % fs;
    for (int k = 0; k < kc; k++, bp += nw) {
        im2col_row(bp, s, c, p, q, runs, n_runs);
        for (int j = n; j < nw; j++) bp[j] = 0.0;
        if (++q == fs) {
            q = 0;
            if (++p == fs) p = 0, c++;
        }
    }
}

/* ------------------------------------------------------------------------------------
 * The driver.
 */

enum {
    CONV_KC = 192,                  /* steps per packed panel of our multiply */
    CONV_WIDE = 8,                  /* kernel panels per im2col panel, few channels */
    CONV_OWN_PIX = 1536,            /* pixels per block of our multiply */
    CONV_BUDGET_DOUBLES = 4 << 20,  /* BLAS path: 32 MB of im2col per thread */
    CONV_BLAS_PIX = 1024            /* BLAS path: columns that keep dgemm efficient */
};

typedef struct {
    conv_src src;       /* image 0's; image b's input starts in_stride floats further */
    int in_ch, out_ch, k;
    const int64_t *pix; /* NULL: pixels 0 .. n_pix-1 */
    int64_t n_pix;
    double *out; /* (n_img, out_ch, n_pix) */
    int n_img;
    int64_t in_stride;  /* in_ch * h * w */
    int64_t chunk_pix, chunks_per_img, n_chunks; /* n_chunks = n_img * chunks_per_img */
    int chunk_ch;           /* BLAS path: input channels per im2col block */
    int use_blas;
    const double *a;        /* BLAS path: the filter in double, (out_ch, k) */
    const conv_kernel *kern;
    const double *ap;       /* our path: the filter packed, see pack_filter */
    int m_pad;              /* out_ch rounded up to kern->mr */
    int nw;                 /* our path: pixels per im2col panel */
    atomic_llong next;      /* the next pixel block to take */
} conv_job;

/* The filter (out_ch, k) in double, for our multiply: for each block of CONV_KC steps
 * k0 .., for each panel of mr output channels, kc x mr values (zero past out_ch).
 * The block at k0 starts at ap + k0*m_pad, its panel i at + i*kc*mr. */
static double *pack_filter(const float *filter, int out_ch, int k, int mr, int m_pad) {
    double *ap = xmalloc(sizeof(double) * (size_t)m_pad * k);
    for (int k0 = 0; k0 < k; k0 += CONV_KC) {
        const int kc = k - k0 < CONV_KC ? k - k0 : CONV_KC;
        double *blk = ap + (int64_t)k0 * m_pad;
        for (int o = 0; o < m_pad; o++) {
            double *dst = blk + (int64_t)(o / mr) * kc * mr + o % mr;
            const float *src = filter + (int64_t)o * k + k0;
            for (int kk = 0; kk < kc; kk++) dst[kk * mr] = o < out_ch ? src[kk] : 0.0;
        }
    }
    return ap;
}

static void *aligned_buf(size_t bytes, void **raw) {
    *raw = xmalloc(bytes + 64);
    return (void *)(((uintptr_t)*raw + 63) & ~(uintptr_t)63);
}

/* Our path, one pixel block: for each block of CONV_KC steps, for each panel of pixels,
 * im2col the panel and multiply every channel panel by it. With many channel panels
 * a pixel panel is nr wide, packed, and stays in L1 while it is reused; with one or
 * two it is CONV_WIDE panels wide (read once from L2), which spreads im2col's
 * per-row overhead over more pixels. */
static void conv_block_own(conv_job *job, const conv_src *src, double *out, double *bp, conv_run *runs,
                           int64_t j0, int n) {
    const conv_kernel *kern = job->kern;
    const int mr = kern->mr, nr = kern->nr, m = job->out_ch, nw = job->nw;
    for (int k0 = 0; k0 < job->k; k0 += CONV_KC) {
        const int kc = job->k - k0 < CONV_KC ? job->k - k0 : CONV_KC;
        const double *ablk = job->ap + (int64_t)k0 * job->m_pad;
        for (int jw = 0; jw < n; jw += nw) {
            const int nv = n - jw < nw ? n - jw : nw;
            const int n_runs = conv_runs(runs, job->pix, j0 + jw, nv, src->ow);
            im2col_panel(bp, src, k0, kc, runs, n_runs, nv, nw);
            for (int jr = 0; jr < nv; jr += nr) {
                double *c = out + j0 + jw + jr;
                for (int ir = 0; ir < m; ir += mr)
                    kern->fn(kc, ablk + (int64_t)ir * kc, bp + jr, nw, c + ir * job->n_pix,
                             job->n_pix, k0 == 0, m - ir < mr ? m - ir : mr,
                             nv - jr < nr ? nv - jr : nr);
            }
        }
    }
}

#if defined(HN_HAVE_OPENBLAS)
/* The BLAS path, one pixel block: im2col blocks of input channels into b, each
 * multiplied into the block's columns by cblas_dgemm. */
static void conv_block_blas(conv_job *job, const conv_src *src, double *out, double *b, conv_run *runs,
                            int64_t j0, int n) {
    const int fs2 = src->fs * src->fs;
    const int n_runs = conv_runs(runs, job->pix, j0, n, src->ow);
    for (int c0 = 0; c0 < job->in_ch; c0 += job->chunk_ch) {
        const int nc = job->in_ch - c0 < job->chunk_ch ? job->in_ch - c0 : job->chunk_ch;
        im2col_block(b, src, c0, nc, runs, n_runs, n);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, job->out_ch, n, nc * fs2, 1.0,
                    job->a + (int64_t)c0 * fs2, job->k, b, n, c0 == 0 ? 0.0 : 1.0,
                    out + j0, (int)job->n_pix);
    }
}
#endif

static void *conv_worker(void *arg) {
    conv_job *job = arg;
    const int fs2 = job->src.fs * job->src.fs;
    conv_run *runs = xmalloc(sizeof *runs * (size_t)job->chunk_pix);
    void *raw;
    double *b = job->use_blas
                    ? aligned_buf(sizeof(double) * (size_t)job->chunk_ch * fs2 * job->chunk_pix,
                                  &raw)
                    : aligned_buf(sizeof(double) * CONV_KC * job->nw, &raw);
    for (;;) {
        const int64_t ci = atomic_fetch_add(&job->next, 1);
        if (ci >= job->n_chunks) break;
        const int64_t img = ci / job->chunks_per_img, j0 = ci % job->chunks_per_img * job->chunk_pix;
        const int n = (int)(job->n_pix - j0 < job->chunk_pix ? job->n_pix - j0 : job->chunk_pix);
        conv_src src = job->src;
        src.in += img * job->in_stride;
        double *out = job->out + img * job->out_ch * job->n_pix;
#if defined(HN_HAVE_OPENBLAS)
        if (job->use_blas) {
            conv_block_blas(job, &src, out, b, runs, j0, n);
            continue;
        }
#endif
        conv_block_own(job, &src, out, b, runs, j0, n);
    }
    free(raw);
    free(runs);
    return NULL;
}

#if defined(HN_HAVE_OPENBLAS)
/* Serializes the calls that change OpenBLAS's global thread count. */
static pthread_mutex_t conv_blas_lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void conv2d_ref_shape(conv2d_shape *s, int h, int w, int fs, int padding) {
    s->h = h;
    s->w = w;
    s->fs = fs;
    if (padding < 0) { /* "same": the output as large as the input */
        s->pad_lo = (fs - 1) / 2;
        s->oh = h;
        s->ow = w;
    } else {
        s->pad_lo = padding;
        s->oh = h + 2 * padding - fs + 1;
        s->ow = w + 2 * padding - fs + 1;
    }
}

void conv2d_forward_ref_opts(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                             const float *filter, int in_ch, int out_ch, int h, int w, int fs,
                             float pad, int threads, const conv2d_ref_opts *opts) {
    conv2d_shape sh;
    conv2d_ref_shape(&sh, h, w, fs, -1);
    conv2d_ref_general(out, pix, n_pix, in, filter, in_ch, out_ch, &sh, pad, threads, opts);
}

void conv2d_ref_general(double *out, const int64_t *pix, int64_t n_pix, const float *in, const float *filter,
                        int in_ch, int out_ch, const conv2d_shape *sh, float pad, int threads,
                        const conv2d_ref_opts *opts) {
    conv2d_ref_general_batch(out, pix, n_pix, in, filter, 1, in_ch, out_ch, sh, pad, threads, opts);
}

void conv2d_ref_general_batch(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                              const float *filter, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                              float pad, int threads, const conv2d_ref_opts *opts) {
    static const conv2d_ref_opts no_opts;
    if (!opts) opts = &no_opts;
    const int h = sh->h, w = sh->w, fs = sh->fs;
    const int64_t n_out = (int64_t)sh->oh * sh->ow;
    (void)n_out; /* in asserts only */
    assert(n >= 1 && in_ch >= 1 && out_ch >= 1 && h >= 1 && w >= 1 && fs >= 1 && sh->oh >= 1 && sh->ow >= 1);
    assert(pix || n_pix == n_out);
    assert(n_pix >= 0 && n_pix <= INT_MAX && (int64_t)in_ch * fs * fs <= INT_MAX);
    for (int64_t j = 0; pix && j < n_pix; j++) assert(pix[j] >= 0 && pix[j] < n_out);
    if (n_pix == 0) return;
    if (threads <= 0) threads = hn_cpu_count();
    const int fs2 = fs * fs, k = in_ch * fs2;

    conv_job job = {
        .src = {in, h, w, fs, sh->pad_lo, sh->ow, pad, NULL},
        .in_ch = in_ch,
        .out_ch = out_ch,
        .k = k,
        .pix = pix,
        .n_pix = n_pix,
        .out = out,
        .n_img = n,
        .in_stride = (int64_t)in_ch * h * w,
        .kern = conv_pick_kernel(opts->isa),
    };
    job.use_blas = conv_use_blas(opts->gemm, job.kern);
    job.src.cvt = job.kern->cvt;

    /* Pixel blocks (of one image): ours of CONV_OWN_PIX; the BLAS path's as many as
     * fit the budget with all channels, or with as many channels as leave
     * CONV_BLAS_PIX columns. At least one block per thread, and a whole number per
     * thread when few. */
    int64_t cp;
    if (job.use_blas) {
        const int64_t budget = CONV_BUDGET_DOUBLES;
        job.chunk_ch = opts->chunk_ch > 0 ? opts->chunk_ch
                       : (int64_t)k * CONV_BLAS_PIX <= budget
                           ? in_ch
                           : (int)(budget / ((int64_t)fs2 * CONV_BLAS_PIX));
        if (job.chunk_ch < 1) job.chunk_ch = 1;
        if (job.chunk_ch > in_ch) job.chunk_ch = in_ch;
        cp = budget / ((int64_t)job.chunk_ch * fs2);
        if (cp < 8) cp = 8;
    } else {
        cp = CONV_OWN_PIX;
    }
    if (opts->chunk_pix > 0) {
        job.chunk_pix = opts->chunk_pix;
    } else {
        int64_t per_img = ceil_div(n_pix, cp);
        if (per_img * n < 4 * (int64_t)threads) per_img = ceil_div(ceil_div(per_img * n, threads) * threads, n);
        job.chunk_pix = ceil_div(n_pix, per_img);
    }
    if (job.chunk_pix > n_pix) job.chunk_pix = n_pix;
    job.chunks_per_img = ceil_div(n_pix, job.chunk_pix);
    job.n_chunks = job.chunks_per_img * n;
    if (threads > job.n_chunks) threads = (int)job.n_chunks;
    atomic_init(&job.next, 0);

    double *a = NULL;
    if (job.use_blas) {
        a = xmalloc(sizeof(double) * (size_t)out_ch * k);
        for (int64_t i = 0; i < (int64_t)out_ch * k; i++) a[i] = filter[i];
        job.a = a;
    } else {
        job.m_pad = (int)ceil_div(out_ch, job.kern->mr) * job.kern->mr;
        job.nw = job.kern->nr * (job.m_pad / job.kern->mr <= 2 ? CONV_WIDE : 1);
        a = pack_filter(filter, out_ch, k, job.kern->mr, job.m_pad);
        job.ap = a;
    }

#if defined(HN_HAVE_OPENBLAS)
    int blas_threads = 0;
    if (job.use_blas) {
        pthread_mutex_lock(&conv_blas_lock);
        blas_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
#endif
    pthread_t *tids = xcalloc((size_t)threads, sizeof *tids);
    int started = 0;
    for (int t = 1; t < threads; t++, started++)
        if (pthread_create(&tids[t], NULL, conv_worker, &job) != 0) break;
    conv_worker(&job); /* the caller works too, and finishes alone if no thread started */
    for (int t = 1; t <= started; t++) pthread_join(tids[t], NULL);
    free(tids);
#if defined(HN_HAVE_OPENBLAS)
    if (job.use_blas) {
        openblas_set_num_threads(blas_threads);
        pthread_mutex_unlock(&conv_blas_lock);
    }
#endif
    free(a);
}

void conv2d_forward_ref(double *out, const float *in, const float *filter, int in_ch,
                        int out_ch, int h, int w, int fs, float pad, int threads) {
    conv2d_forward_ref_opts(out, NULL, (int64_t)h * w, in, filter, in_ch, out_ch, h, w, fs, pad,
                            threads, NULL);
}

void conv2d_forward_ref_at(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                           const float *filter, int in_ch, int out_ch, int h, int w, int fs,
                           float pad, int threads) {
    assert(pix || n_pix == 0);
    if (n_pix == 0) return;
    conv2d_forward_ref_opts(out, pix, n_pix, in, filter, in_ch, out_ch, h, w, fs, pad, threads,
                            NULL);
}

/* ------------------------------------------------------------------------------------
 * The backward passes.
 *
 * Data: dX is the forward convolution of dout (zeros outside it) with the filter
 * flipped in both spatial axes and its channels swapped, filter'[c][o][p][q] =
 * filter[o][c][fs-1-p][fs-1-q], on the transposed geometry: input oh x ow, output
 * h x w, the window of pixel (y, x) starting at dout (y - (fs-1-pad_lo), ...).
 *
 * Filter: dW (out_ch, K) = sum over images b of dout_b (out_ch, P) x B_b^T with B_b
 * (K, P) the im2col of image b (P = oh*ow, K = in_ch*fs*fs): a GEMM whose reduction
 * runs over the n*P pixels of the batch. On our micro-kernels: rows are output
 * channels (dout packed per block of pixels as pack_filter packs the filter), columns
 * are filter entries (the im2col, written transposed, a pixel per step), steps are
 * pixels. Work items are (column group, pixel segment) pairs: with enough columns,
 * one group per thread and one segment; with few, segments of the pixels, each into
 * its own copy of dW, summed in order at the end.
 */

void conv2d_ref_transposed_shape(conv2d_shape *t, const conv2d_shape *sh) {
    t->h = sh->oh;
    t->w = sh->ow;
    t->fs = sh->fs;
    t->pad_lo = sh->fs - 1 - sh->pad_lo;
    t->oh = sh->h;
    t->ow = sh->w;
}

void conv2d_ref_backward_data(double *din, const int64_t *pix, int64_t n_pix, const float *dout,
                              const float *filter, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                              int threads, const conv2d_ref_opts *opts) {
    const int fs = sh->fs;
    float *flipped = xmalloc(sizeof(float) * (size_t)in_ch * out_ch * fs * fs); /* (in_ch, out_ch, fs, fs) */
    for (int c = 0; c < in_ch; c++)
        for (int o = 0; o < out_ch; o++) {
            const float *src = filter + ((int64_t)o * in_ch + c) * fs * fs;
            float *dst = flipped + ((int64_t)c * out_ch + o) * fs * fs;
            for (int i = 0; i < fs * fs; i++) dst[i] = src[fs * fs - 1 - i];
        }
    conv2d_shape t;
    conv2d_ref_transposed_shape(&t, sh);
    conv2d_ref_general_batch(din, pix, n_pix, dout, flipped, n, out_ch, in_ch, &t, 0.0f, threads, opts);
    free(flipped);
}

typedef struct {
    const float *img; /* the input of the run's image, (in_ch, h, w) */
    int y, x, len;    /* pixels (y, x .. x+len-1) */
    int t;            /* the step (row of the panel) of the first one */
} bwf_run;

typedef struct {
    const float *in;   /* (n, in_ch, h, w) */
    const float *dout; /* (n, out_ch, oh, ow) */
    int in_ch, out_ch;
    conv2d_shape sh;
    double pad;
    const int64_t *cols; /* NULL: columns 0 .. n_cols-1 */
    int n_cols;
    const conv_kernel *kern;
    int m_pad, kc_max;
    int64_t n_q; /* n * oh * ow, the pixels of the batch */
    int n_panels, n_groups, n_segs;
    double *out;     /* (out_ch, n_cols) */
    double *partial; /* (n_segs - 1, out_ch, n_cols) */
    atomic_int next; /* the next item: group next % n_groups, segment next / n_groups */
} bwf_job;

/* The kc pixels q0 .. of the batch (q = b*oh*ow + y*ow + x) as runs. */
static int bwf_runs(bwf_run *runs, const bwf_job *job, int64_t q0, int kc) {
    const int64_t npix = (int64_t)job->sh.oh * job->sh.ow, img = (int64_t)job->in_ch * job->sh.h * job->sh.w;
    int nr = 0;
    for (int t = 0; t < kc;) {
        const int64_t q = q0 + t, b = q / npix, p = q % npix;
        bwf_run r = {job->in + b * img, (int)(p / job->sh.ow), (int)(p % job->sh.ow), 0, t};
        r.len = job->sh.ow - r.x < kc - t ? job->sh.ow - r.x : kc - t;
        runs[nr++] = r;
        t += r.len;
    }
    return nr;
}

/* dout at the kc pixels q0 .. packed like pack_filter's blocks: panel i (output
 * channels i*mr ..) at ap + i*kc*mr, mr channels per step, zero past out_ch. */
static void bwf_pack_dout(double *ap, const bwf_job *job, int64_t q0, int kc) {
    const int mr = job->kern->mr, m = job->out_ch;
    const int64_t npix = (int64_t)job->sh.oh * job->sh.ow;
    for (int t = 0; t < kc;) {
        const int64_t q = q0 + t, b = q / npix, p = q % npix;
        const int len = npix - p < kc - t ? (int)(npix - p) : kc - t;
        for (int o = 0; o < job->m_pad; o++) {
            double *dst = ap + (int64_t)(o / mr) * kc * mr + o % mr + (int64_t)t * mr;
            if (o >= m) {
                for (int u = 0; u < len; u++) dst[u * mr] = 0.0;
                continue;
            }
            const float *src = job->dout + (b * m + o) * npix + p;
            for (int u = 0; u < len; u++) dst[u * mr] = src[u];
        }
        t += len;
    }
}

/* The im2col of the runs' pixels, transposed, for columns c0 .. c0+nv-1 (of the
 * column list): bp[t*nw + col] for step t < kc; columns nv .. nw-1 zeroed. */
static void bwf_panel(double *bp, const bwf_job *job, const bwf_run *runs, int n_runs, int kc, int c0, int nv,
                      int nw) {
    const int h = job->sh.h, w = job->sh.w, fs = job->sh.fs;
    const double pad = job->pad;
    for (int col = 0; col < nv; col++) {
        const int64_t k = job->cols ? job->cols[c0 + col] : c0 + col;
        const int c = (int)(k / (fs * fs)), dy = (int)(k / fs % fs) - job->sh.pad_lo,
                  dx = (int)(k % fs) - job->sh.pad_lo;
        for (int i = 0; i < n_runs; i++) {
            const bwf_run *r = &runs[i];
            double *d = bp + (int64_t)r->t * nw + col; /* d[u*nw] for pixel (y, x + u) */
            const int yy = r->y + dy, len = r->len;
            if (yy < 0 || yy >= h) {
                for (int u = 0; u < len; u++) d[u * nw] = pad;
                continue;
            }
            const float *srow = r->img + ((int64_t)c * h + yy) * w + r->x + dx;
            /* x + u + dx lies in [0, w) for u in [lo, hi) */
            int lo = -dx - r->x > 0 ? -dx - r->x : 0, hi = w - dx - r->x < len ? w - dx - r->x : len;
            if (lo > len) lo = len;
            if (hi < lo) hi = lo;
            int u = 0;
            for (; u < lo; u++) d[u * nw] = pad;
            for (; u < hi; u++) d[u * nw] = srow[u];
            for (; u < len; u++) d[u * nw] = pad;
        }
    }
    for (int t = 0; nv < nw && t < kc; t++)
        for (int col = nv; col < nw; col++) bp[(int64_t)t * nw + col] = 0.0;
}

static void *bwf_worker(void *arg) {
    bwf_job *job = arg;
    const conv_kernel *kern = job->kern;
    const int mr = kern->mr, nr = kern->nr, nw = nr, m = job->out_ch, kc_max = job->kc_max;
    void *raw_a, *raw_b;
    double *ap = aligned_buf(sizeof(double) * (size_t)job->m_pad * kc_max, &raw_a);
    double *bp = aligned_buf(sizeof(double) * (size_t)kc_max * nw, &raw_b);
    bwf_run *runs = xmalloc(sizeof *runs * (size_t)kc_max);
    for (;;) {
        const int item = atomic_fetch_add(&job->next, 1);
        if (item >= job->n_groups * job->n_segs) break;
        const int g = item % job->n_groups, s = item / job->n_groups;
        /* The group's panels and columns, the segment's pixels. */
        const int pa = (int)((int64_t)job->n_panels * g / job->n_groups),
                  pb = (int)((int64_t)job->n_panels * (g + 1) / job->n_groups);
        const int ca = pa * nw, cb = pb * nw < job->n_cols ? pb * nw : job->n_cols;
        const int64_t qa = job->n_q * s / job->n_segs, qb = job->n_q * (s + 1) / job->n_segs;
        const int64_t ldc = job->n_cols;
        double *dst = s == 0 ? job->out : job->partial + (int64_t)(s - 1) * m * ldc;
        for (int64_t q0 = qa; q0 < qb; q0 += kc_max) {
            const int kc = qb - q0 < kc_max ? (int)(qb - q0) : kc_max;
            bwf_pack_dout(ap, job, q0, kc);
            const int n_runs = bwf_runs(runs, job, q0, kc);
            for (int c0 = ca; c0 < cb; c0 += nw) {
                const int nv = cb - c0 < nw ? cb - c0 : nw;
                bwf_panel(bp, job, runs, n_runs, kc, c0, nv, nw);
                for (int jr = 0; jr < nv; jr += nr)
                    for (int ir = 0; ir < m; ir += mr)
                        kern->fn(kc, ap + (int64_t)ir * kc, bp + jr, nw, dst + ir * ldc + c0 + jr, ldc, q0 == qa,
                                 m - ir < mr ? m - ir : mr, nv - jr < nr ? nv - jr : nr);
            }
        }
    }
    free(runs);
    free(raw_b);
    free(raw_a);
    return NULL;
}

void conv2d_ref_backward_filter(double *dfilter, const int64_t *cols, int64_t n_cols, const float *in,
                                const float *dout, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                                float pad, int threads, const conv2d_ref_opts *opts) {
    static const conv2d_ref_opts no_opts;
    if (!opts) opts = &no_opts;
    const int64_t k = (int64_t)in_ch * sh->fs * sh->fs;
    (void)k; /* in asserts only */
    assert(n >= 1 && in_ch >= 1 && out_ch >= 1 && sh->h >= 1 && sh->w >= 1 && sh->fs >= 1 && sh->oh >= 1 &&
           sh->ow >= 1);
    assert(cols || n_cols == k);
    assert(n_cols >= 0 && n_cols <= INT_MAX / 2);
    for (int64_t j = 0; cols && j < n_cols; j++) assert(cols[j] >= 0 && cols[j] < k);
    if (n_cols == 0) return;
    if (threads <= 0) threads = hn_cpu_count();

    bwf_job job = {
        .in = in,
        .dout = dout,
        .in_ch = in_ch,
        .out_ch = out_ch,
        .sh = *sh,
        .pad = pad,
        .cols = cols,
        .n_cols = (int)n_cols,
        .kern = conv_pick_kernel(opts->isa),
        .kc_max = opts->chunk_pix > 0 && opts->chunk_pix < CONV_KC ? (int)opts->chunk_pix : CONV_KC,
        .n_q = (int64_t)n * sh->oh * sh->ow,
        .out = dfilter,
    };
    job.m_pad = (int)ceil_div(out_ch, job.kern->mr) * job.kern->mr;
    job.n_panels = (int)ceil_div(n_cols, job.kern->nr);
    job.n_groups = threads < job.n_panels ? threads : job.n_panels;
    job.n_segs = (int)ceil_div(threads, job.n_groups);
    if (job.n_segs > ceil_div(job.n_q, job.kc_max)) job.n_segs = (int)ceil_div(job.n_q, job.kc_max);
    if (threads > job.n_groups * job.n_segs) threads = job.n_groups * job.n_segs;
    if (job.n_segs > 1) job.partial = xmalloc(sizeof(double) * (size_t)(job.n_segs - 1) * out_ch * n_cols);
    atomic_init(&job.next, 0);

    pthread_t *tids = xcalloc((size_t)threads, sizeof *tids);
    int started = 0;
    for (int t = 1; t < threads; t++, started++)
        if (pthread_create(&tids[t], NULL, bwf_worker, &job) != 0) break;
    bwf_worker(&job); /* the caller works too, and finishes alone if no thread started */
    for (int t = 1; t <= started; t++) pthread_join(tids[t], NULL);
    free(tids);
    for (int s = 1; s < job.n_segs; s++) {
        const double *part = job.partial + (int64_t)(s - 1) * out_ch * n_cols;
        for (int64_t i = 0; i < (int64_t)out_ch * n_cols; i++) dfilter[i] += part[i];
    }
    free(job.partial);
}

/* Bias: dbias[o] = sum over b and pixels of dout[b][o][.], memory-bound. The planes
 * (b, o) are cut into pieces of at most BWB_PIECE values; threads take pieces from a
 * counter and sum each with a vector kernel into its own slot; the slots are then
 * added in order, so the result does not depend on the thread count. */

enum { BWB_PIECE = 1 << 16 };

typedef double (*bwb_sum_fn)(const float *x, int64_t n);

static double bwb_sum_generic(const float *x, int64_t n) {
    double s[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += x[i + j];
    for (; i < n; i++) s[0] += x[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

#if defined(CONV_X86)
__attribute__((target("avx2"))) static double bwb_sum_avx2(const float *x, int64_t n) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
        s2 = _mm256_add_pd(s2, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 8)));
        s3 = _mm256_add_pd(s3, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 12)));
    }
    double t[4];
    _mm256_storeu_pd(t, _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)));
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; i < n; i++) s += x[i];
    return s;
}

__attribute__((target("avx512f"))) static double bwb_sum_avx512(const float *x, int64_t n) {
    __m512d s0 = _mm512_setzero_pd(), s1 = s0, s2 = s0, s3 = s0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8)));
        s2 = _mm512_add_pd(s2, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 16)));
        s3 = _mm512_add_pd(s3, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 24)));
    }
    double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
    for (; i < n; i++) s += x[i];
    return s;
}
#endif

typedef struct {
    const float *dout;
    int64_t npix, pieces_per_plane, n_pieces;
    double *sums; /* (n_pieces) */
    bwb_sum_fn sum;
    atomic_llong next;
} bwb_job;

static void *bwb_worker(void *arg) {
    bwb_job *job = arg;
    for (;;) {
        /* Pieces in runs of 8 per claim, so the counter is not the bottleneck. */
        const int64_t i0 = atomic_fetch_add(&job->next, 8);
        if (i0 >= job->n_pieces) break;
        for (int64_t i = i0; i < i0 + 8 && i < job->n_pieces; i++) {
            const int64_t plane = i / job->pieces_per_plane, j0 = i % job->pieces_per_plane * BWB_PIECE;
            const int64_t len = job->npix - j0 < BWB_PIECE ? job->npix - j0 : BWB_PIECE;
            job->sums[i] = job->sum(job->dout + plane * job->npix + j0, len);
        }
    }
    return NULL;
}

void conv2d_ref_backward_bias(double *dbias, const float *dout, int n, int out_ch, int64_t npix, int threads,
                              conv2d_isa isa) {
    assert(n >= 1 && out_ch >= 1 && npix >= 1);
    if (threads <= 0) threads = hn_cpu_count();
    bwb_job job = {.dout = dout, .npix = npix, .pieces_per_plane = ceil_div(npix, BWB_PIECE), .sum = bwb_sum_generic};
    (void)isa;
#if defined(CONV_X86)
    if ((isa == CONV2D_ISA_BEST || isa >= CONV2D_ISA_AVX512) && __builtin_cpu_supports("avx512f"))
        job.sum = bwb_sum_avx512;
    else if ((isa == CONV2D_ISA_BEST || isa >= CONV2D_ISA_AVX2) && __builtin_cpu_supports("avx2"))
        job.sum = bwb_sum_avx2;
#endif
    job.n_pieces = job.pieces_per_plane * n * out_ch;
    job.sums = xmalloc(sizeof(double) * (size_t)job.n_pieces);
    atomic_init(&job.next, 0);
    /* A thread per 8 MB of dout, at most `threads`: below that, starting a thread
     * costs about what it saves (measured: 4 MB took 0.07 ms on one thread, 0.1 ms
     * on two). */
    const int64_t want = ceil_div((int64_t)n * out_ch * npix, 1 << 21);
    if (threads > want) threads = (int)want;
    pthread_t *tids = xcalloc((size_t)threads, sizeof *tids);
    int started = 0;
    for (int t = 1; t < threads; t++, started++)
        if (pthread_create(&tids[t], NULL, bwb_worker, &job) != 0) break;
    bwb_worker(&job);
    for (int t = 1; t <= started; t++) pthread_join(tids[t], NULL);
    free(tids);
    for (int o = 0; o < out_ch; o++) {
        double s = 0;
        for (int b = 0; b < n; b++)
            for (int64_t k = 0; k < job.pieces_per_plane; k++)
                s += job.sums[((int64_t)b * out_ch + o) * job.pieces_per_plane + k];
        dbias[o] = s;
    }
    free(job.sums);
}

/* ------------------------------------------------------------------------------------
 * Border pixels: rows/columns y < lo or y >= h - hi, with lo = r above/left and
 * hi = fs-1-r below/right (the window spans y-r .. y+fs-1-r).
 */

int64_t conv2d_border_pixels(int64_t *pix, int h, int w, int fs) {
    conv2d_shape sh;
    conv2d_ref_shape(&sh, h, w, fs, -1);
    return conv2d_border_pixels_general(pix, &sh);
}

int64_t conv2d_border_pixels_general(int64_t *pix, const conv2d_shape *sh) {
    assert(sh->h >= 1 && sh->w >= 1 && sh->fs >= 1 && sh->oh >= 1 && sh->ow >= 1);
    /* Output row y reads input rows y - pad_lo .. y - pad_lo + fs - 1: inside the
     * image for y in [lo, hi_y), likewise columns. */
    const int lo = sh->pad_lo, hi_y = sh->h - sh->fs + 1 + sh->pad_lo, hi_x = sh->w - sh->fs + 1 + sh->pad_lo;
    const int oh = sh->oh, ow = sh->ow;
    int64_t n = 0;
    for (int y = 0; y < oh; y++) {
        int64_t row = (int64_t)y * ow;
        if (y < lo || y >= hi_y) {
            for (int x = 0; x < ow; x++, n++)
                if (pix) pix[n] = row + x;
            continue;
        }
        for (int x = 0; x < ow; x++) {
            if (x >= lo && x < hi_x) {
                x = hi_x - 1; /* skip the interior */
                continue;
            }
            if (pix) pix[n] = row + x;
            n++;
        }
    }
    return n;
}

/* ------------------------------------------------------------------------------------
 * The bench: seed-like shapes, the reference's rate with each multiply, and on small
 * shapes the naive 7-deep loop's for the ratio (and as a check).
 */

static void conv_naive(double *out, const float *in, const float *filter, int in_ch,
                       int out_ch, int h, int w, int fs, float pad) {
    const int r = (fs - 1) / 2;
    for (int o = 0; o < out_ch; o++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double acc = 0.0;
                for (int c = 0; c < in_ch; c++)
                    for (int p = 0; p < fs; p++)
                        for (int q = 0; q < fs; q++) {
                            int yy = y + p - r, xx = x + q - r;
                            double v = yy >= 0 && yy < h && xx >= 0 && xx < w
                                           ? in[((int64_t)c * h + yy) * w + xx]
                                           : pad;
                            acc += v * filter[(((int64_t)o * in_ch + c) * fs + p) * fs + q];
                        }
                out[((int64_t)o * h + y) * w + x] = acc;
            }
}

/* Best seconds of repeated runs (at least one, until `window` seconds have passed). */
static double bench_time(double *out, const float *in, const float *filter, int in_ch,
                         int out_ch, int img, int fs, const conv2d_ref_opts *opts, int naive,
                         double window) {
    double best = INFINITY, start = hn_now();
    do {
        double t0 = hn_now();
        if (naive)
            conv_naive(out, in, filter, in_ch, out_ch, img, img, fs, 0.5f);
        else
            conv2d_forward_ref_opts(out, NULL, (int64_t)img * img, in, filter, in_ch, out_ch,
                                    img, img, fs, 0.5f, 0, opts);
        double t = hn_now() - t0;
        if (t < best) best = t;
    } while (hn_now() - start < window);
    return best;
}

/* NaN as soon as a value is NaN (a value never written: the buffers are
 * poisoned before each run). */
static double max_rel_diff(const double *a, const double *b, int64_t n) {
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]) / (fabs(b[i]) > 1.0 ? fabs(b[i]) : 1.0);
        if (d != d) return d;
        if (d > worst) worst = d;
    }
    return worst;
}

static void poison(double *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = NAN;
}

int conv2d_ref_bench(FILE *out, int quick) {
    static const struct {
        int in_ch, out_ch, fs, img, naive;
    } shapes[] = {
        /* small (the naive loop runs too) */
        {3, 8, 3, 64, 1}, {1, 4, 5, 128, 1}, {8, 32, 5, 64, 1},
        /* mid */
        {1, 128, 9, 128, 0}, {128, 1, 9, 256, 0}, {512, 8, 3, 256, 0}, {32, 32, 3, 256, 0},
        {128, 128, 1, 256, 0}, {32, 128, 5, 128, 0},
        /* large */
        {512, 128, 3, 64, 0}, {128, 128, 9, 128, 0},
    };
    const conv2d_ref_opts own = {.gemm = CONV2D_GEMM_OWN};
    const conv2d_ref_opts blas = {.gemm = CONV2D_GEMM_BLAS};
#if defined(HN_HAVE_OPENBLAS)
    const int have_blas = 1;
#else
    const int have_blas = 0;
#endif
    int rc = 0;
    fprintf(out, "conv2d fp64 reference, %d threads; default: %s\n", hn_cpu_count(),
            conv2d_ref_method());
    fprintf(out, "own: our multiply, %s kernel; blas: OpenBLAS dgemm%s; pad 0.5\n",
            conv_pick_kernel(CONV2D_ISA_BEST)->name, have_blas ? "" : " (not linked)");
    fprintf(out, "%6s %6s %3s %5s %9s %9s %11s %9s %11s %12s\n", "in_ch", "out_ch", "fs", "img",
            "(GFLOP)", "own (s)", "own (GF/s)", "blas (s)", "blas (GF/s)", "naive (GF/s)");
    const double window = quick ? 0.0 : 0.3;
    for (size_t i = 0; i < HN_ARRAY_LEN(shapes); i++) {
        if (quick && !shapes[i].naive) continue; /* the small shapes only */
        const int ic = shapes[i].in_ch, oc = shapes[i].out_ch, fs = shapes[i].fs,
                  img = shapes[i].img;
        const int64_t n_in = (int64_t)ic * img * img, n_f = (int64_t)oc * ic * fs * fs,
                      n_out = (int64_t)oc * img * img;
        const double gflop = 2e-9 * ic * oc * (double)img * img * fs * fs;
        float *in = xmalloc(sizeof(float) * (size_t)n_in);
        float *filter = xmalloc(sizeof(float) * (size_t)n_f);
        double *res = xmalloc(sizeof(double) * (size_t)n_out);
        double *chk = xmalloc(sizeof(double) * (size_t)n_out);
        uint64_t seed = 1234 + i;
        for (int64_t j = 0; j < n_in; j++) in[j] = (float)(2.0 * hn_rand_unit(&seed) - 1.0);
        for (int64_t j = 0; j < n_f; j++) filter[j] = (float)(2.0 * hn_rand_unit(&seed) - 1.0);

        double t_blas = NAN, t_naive = NAN, diff = 0.0;
        poison(res, n_out);
        const double t_own = bench_time(res, in, filter, ic, oc, img, fs, &own, 0, window);
        if (have_blas) {
            poison(chk, n_out);
            t_blas = bench_time(chk, in, filter, ic, oc, img, fs, &blas, 0, window);
            diff = max_rel_diff(res, chk, n_out);
        }
        if (shapes[i].naive) {
            poison(chk, n_out);
            t_naive = bench_time(chk, in, filter, ic, oc, img, fs, NULL, 1, window);
            double d = max_rel_diff(res, chk, n_out);
            if (!(d <= diff)) diff = d; /* a NaN sticks */
        }
        char blas_s[32] = "-", blas_r[32] = "-", naive_r[32] = "-";
        if (have_blas) {
            snprintf(blas_s, sizeof blas_s, "%.4f", t_blas);
            snprintf(blas_r, sizeof blas_r, "%.2f", gflop / t_blas);
        }
        if (shapes[i].naive) snprintf(naive_r, sizeof naive_r, "%.2f", gflop / t_naive);
        fprintf(out, "%6d %6d %3d %5d %9.3f %9.4f %11.2f %9s %11s %12s%s\n", ic, oc, fs, img,
                gflop, t_own, gflop / t_own, blas_s, blas_r, naive_r,
                !(diff <= 1e-12) ? "  MISMATCH" : "");
        if (!(diff <= 1e-12)) rc = -1;
        free(in), free(filter), free(res), free(chk);
    }
    return rc;
}
