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
 * The backward passes (data and filter gradients) are built on the same multiply;
 * see conv2d_ref_backward_data.
 *
 * Preconditions (asserted): in_ch, out_ch, h, w, fs >= 1; pixel indices in
 * [0, h*w). Every function here is thread-safe; none keeps state between calls.
 */
#ifndef HN_CONV2D_REF_H
#define HN_CONV2D_REF_H

#include <stdint.h>
#include <stdio.h>

struct conv2d_ref_opts;

/* The geometry of one image's convolution: input h x w, filter fs x fs, the
 * window of output pixel (y, x) starting at input (y - pad_lo, x - pad_lo), an
 * output of oh x ow. */
typedef struct {
    int h, w, fs, pad_lo, oh, ow;
} conv2d_shape;

/* Fills s for stride 1 and `padding` pixels on every side; padding < 0 means
 * "same" (the seed's: output h x w, (fs - 1) / 2 above and left, the rest below
 * and right). */
void conv2d_ref_shape(conv2d_shape *s, int h, int w, int fs, int padding);

/* The general form of everything below: out is (out_ch, n_pix) at output pixels
 * pix (y * ow + x; NULL: every one in order, n_pix = oh * ow). */
void conv2d_ref_general(double *out, const int64_t *pix, int64_t n_pix, const float *in, const float *filter,
                        int in_ch, int out_ch, const conv2d_shape *sh, float pad, int threads,
                        const struct conv2d_ref_opts *opts);
/* conv2d_ref_general over a batch of n images: in (n, in_ch, h, w), out (n, out_ch,
 * n_pix), the same pixels in every image. Threads take blocks of pixels of any image,
 * so a batch of small images keeps every thread busy. */
void conv2d_ref_general_batch(double *out, const int64_t *pix, int64_t n_pix, const float *in,
                              const float *filter, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                              float pad, int threads, const struct conv2d_ref_opts *opts);

/* The backward passes of the convolution of geometry sh (stride 1), the gradients of
 * a loss E given dout = dE/dout (n, out_ch, oh, ow):
 *
 *   din[b][c][y][x]  = sum over o, p, q of dout[b][o][y + pad_lo - p][x + pad_lo - q] *
 *                      filter[o][c][p][q]   (terms outside dout are zero)
 *   dfilter[o][c][p][q] = sum over b, y, x of dout[b][o][y][x] * X(b, c, y + p - pad_lo, x + q - pad_lo)
 *                      (X = in inside the image, `pad` outside: the padded pixels
 *                      the forward read take part)
 *
 * Data is a forward convolution (conv2d_ref_general_batch) of dout with the filter
 * flipped and its channels swapped on the transposed geometry below; filter is a GEMM
 * of dout (out_ch x pixels) with the im2col of the input (pixels x in_ch*fs*fs)
 * summed over the batch, on the same micro-kernels (always ours: opts->gemm is not
 * read; opts->chunk_pix, if set, caps the pixels per packed block, at most 192). */

/* The geometry of the data gradient as a forward convolution: input oh x ow (dout),
 * output h x w, pad_lo' = fs - 1 - pad_lo (negative when padding >= fs). */
void conv2d_ref_transposed_shape(conv2d_shape *t, const conv2d_shape *sh);

/* din (n, in_ch, n_pix) at the input pixels pix (y * w + x; NULL: all, n_pix = h*w)
 * of every image, from dout (n, out_ch, oh, ow) and filter (out_ch, in_ch, fs, fs). */
void conv2d_ref_backward_data(double *din, const int64_t *pix, int64_t n_pix, const float *dout,
                              const float *filter, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                              int threads, const struct conv2d_ref_opts *opts);

/* dfilter (out_ch, n_cols) at the filter entries cols[j] = (c*fs + p)*fs + q (NULL:
 * all, n_cols = in_ch*fs*fs), summed over the batch, from in (n, in_ch, h, w) and dout
 * (n, out_ch, oh, ow). Written entirely. */
void conv2d_ref_backward_filter(double *dfilter, const int64_t *cols, int64_t n_cols, const float *in,
                                const float *dout, int n, int in_ch, int out_ch, const conv2d_shape *sh,
                                float pad, int threads, const struct conv2d_ref_opts *opts);

/* The output pixels whose window reaches outside the input, in increasing order;
 * written to pix unless NULL; returns the count. */
int64_t conv2d_border_pixels_general(int64_t *pix, const conv2d_shape *sh);

/* "Same" convolution, the full output: out is (out_ch, h, w), written entirely.
 * threads <= 0: one per online CPU. */
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

typedef struct conv2d_ref_opts {
    int64_t chunk_pix; /* at most this many pixels per block (a thread's unit of work) */
    int chunk_ch;      /* OpenBLAS path: at most this many input channels per im2col */
    conv2d_gemm gemm;
    conv2d_isa isa; /* our multiply's kernel (falls back to what the CPU runs) */
} conv2d_ref_opts;

/* dbias[o] = sum over b < n and the npix pixels of dout[b][o][.], dout (n, out_ch,
 * npix). Deterministic: the same sums in the same order whatever the thread count.
 * isa: the summing kernel (CONV2D_ISA_BEST: the best this CPU runs). */
void conv2d_ref_backward_bias(double *dbias, const float *dout, int n, int out_ch, int64_t npix, int threads,
                              conv2d_isa isa);

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
