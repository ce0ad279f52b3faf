/*
 * conv2d_ref: the fp64 CPU reference for the conv2d forward pass, the judge every
 * CUDA conv2d variant is checked against.
 *
 * Semantics (those of the kernels in kernels/conv2d/): one channel-first image, no
 * batch, "same" output size, cross-correlation with a constant pad value.
 *
 *   in      (in_ch, h, w)            float
 *   filter  (out_ch, in_ch, fs, fs)  float
 *   out     (out_ch, h, w)           double
 *
 *   r = (fs - 1) / 2   (integer division; an even fs reaches one further down/right)
 *   out[o][y][x] = sum over c < in_ch, p < fs, q < fs of
 *                  X(c, y + p - r, x + q - r) * filter[o][c][p][q]
 *   X(c, yy, xx) = in[c][yy][xx] inside the image, `pad` outside.
 *
 * Every input is converted exactly to double; products and sums are in double, so
 * two correct implementations differ only by summation order (~1e-15 relative).
 *
 * How: C (out_ch, pixels) = A (out_ch, in_ch*fs*fs) * B (in_ch*fs*fs, pixels), B the
 * im2col of the input, never built whole. Two multiplies:
 *   ours     (the default where this CPU runs one of its SIMD kernels: AVX-512 8x24 or
 *            AVX2 6x8, picked at run time; else a portable 4x4): Goto-style blocking
 *            where im2col writes B straight into the packed panels the micro-kernel
 *            reads, a few KB at a time, so B never goes to memory. Memory: the filter
 *            packed in double (2x its float size) plus ~0.3 MB per thread.
 *   OpenBLAS (where linked, HN_HAVE_OPENBLAS, and our kernel would be the portable
 *            one): im2col blocks of pixels and input channels (<= 32 MB per thread),
 *            cblas_dgemm each. OpenBLAS's thread count is set to 1 for the duration
 *            of a call and restored after, so the cores are not oversubscribed.
 * Measured on a 2-core AVX-512 machine, ours was 2-5x faster than OpenBLAS 0.3.21
 * (which ran its SSE3 kernels there: it did not know the CPU) and still faster than
 * OpenBLAS forced to its AVX-512 kernels; see conv2d_ref_bench.
 * Threads take blocks of pixels; every thread writes only its own output columns.
 *
 * Preconditions (asserted): in_ch, out_ch, h, w, fs >= 1; pixel indices in
 * [0, h*w). Every function here is thread-safe; none keeps state between calls.
 */
#ifndef HN_CONV2D_REF_H
#define HN_CONV2D_REF_H

#include <stdint.h>
#include <stdio.h>

/* The full output: out is (out_ch, h, w), written entirely. threads <= 0: one per
 * online CPU. */
void conv2d_forward_ref(double *out, const float *in, const float *filter, int in_ch,
                        int out_ch, int h, int w, int fs, float pad, int threads);

/* Only at the given pixels (pix[j] = y*w + x, any order, repeats allowed), for every
 * output channel: out is (out_ch, n_pix), out[o*n_pix + j] the value at pix[j]. For
 * cases too large for a full reference (check a sample plus the border). */
void conv2d_forward_ref_at(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                           const float *filter, int in_ch, int out_ch, int h, int w, int fs,
                           float pad, int threads);

/* The pixels whose window reaches the padding, in increasing order of y*w + x: those
 * with y < r or x < r, or y >= h - (fs-1-r) or x >= w - (fs-1-r) (for odd fs: within
 * r of an edge). Writes them to pix unless pix is NULL; returns the count. */
int64_t conv2d_border_pixels(int64_t *pix, int h, int w, int fs);

/* Which multiply and kernel to use, and the block sizes; for tests and the bench.
 * Zeroed means automatic. */
typedef enum {
    CONV2D_GEMM_AUTO, /* ours where this CPU has a SIMD kernel for it, else OpenBLAS */
    CONV2D_GEMM_OWN,  /* ours */
    CONV2D_GEMM_BLAS  /* OpenBLAS (ours when it is not linked) */
} conv2d_gemm;

typedef enum {
    CONV2D_ISA_BEST,    /* the best kernel this CPU runs */
    CONV2D_ISA_GENERIC, /* the portable one */
    CONV2D_ISA_AVX2,    /* at most AVX2 + FMA */
    CONV2D_ISA_AVX512   /* at most AVX-512 */
} conv2d_isa;

typedef struct {
    int64_t chunk_pix; /* at most this many pixels per block (a thread's unit of work) */
    int chunk_ch;      /* OpenBLAS path: at most this many input channels per im2col */
    conv2d_gemm gemm;
    conv2d_isa isa; /* our multiply's kernel (falls back to what the CPU runs) */
} conv2d_ref_opts;

/* conv2d_forward_ref_at with knobs; pix == NULL means every pixel in order
 * (n_pix must then be h*w), which is conv2d_forward_ref. opts may be NULL. */
void conv2d_forward_ref_opts(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                             const float *filter, int in_ch, int out_ch, int h, int w, int fs,
                             float pad, int threads, const conv2d_ref_opts *opts);

/* How the automatic choice computes on this machine, e.g. "im2col + own dgemm
 * (avx512 8x24 kernel)"; a static string. */
const char *conv2d_ref_method(void);

/* Times the reference on a fixed list of seed-like shapes and prints one line each:
 * GFLOP of the case (2*in_ch*out_ch*h*w*fs*fs), seconds and GFLOP/s of our multiply
 * and of OpenBLAS's (if linked), and on small shapes the naive 7-deep loop's GFLOP/s.
 * Takes about 10 s on 2 cores; quick: only the small shapes, each timed once
 * (well under a second). Returns 0, or -1 if two results disagree. */
int conv2d_ref_bench(FILE *out, int quick);

#endif
