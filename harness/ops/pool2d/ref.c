/*
 * pool2d/ref.c: the forward computation of pool2d (see pool2d.h), shared by
 * pool2d's reference and pool2d_backward's generator, and the seeded input.
 *
 * An output row (ow * inner outputs, under input rows y0 = oy * k .. y0 + k - 1
 * of one plane, each of them w * inner contiguous floats in every layout) is
 * computed in two passes, both over contiguous memory with 16-lane vectors (GCC
 * vector extensions, compiled for AVX-512, for AVX2 and for the baseline and
 * picked at run time):
 *
 *   down:   for each covered column element e < ow * k * inner, the k rows
 *           folded in order: max mode the maximum and the row it came from
 *           (torch's rule, row after row), avg mode the sum in double;
 *   across: each window's k columns (k neighbouring values in NCHW, k runs of
 *           `inner` values otherwise, where the vectors run over the inner
 *           index), folded into the output.
 *
 * Max mode's order. torch scans a window in row-major (p, q) order, taking an
 * element when it is larger than the maximum so far or is NaN: the result is
 * the last NaN in that order if there is one, else the first occurrence of the
 * maximum. Row-major window order is the order of plane positions y * w + x,
 * so the same result comes from any order of folding with the rule "b wins
 * over a when b is NaN and (a is not, or b lies after a), or neither is NaN
 * and (b > a, or b == a and b lies before a)"; the down pass folds rows in
 * position order, where that rule is torch's own, the across pass uses it in
 * full. Avg mode: the sum of the window's k^2 floats in double (column sums
 * first, then across; exact unless the values span more than 2^29 in
 * magnitude, within an ulp of the sum otherwise), divided by k^2.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pool2d.h"

typedef float p2_v16f __attribute__((vector_size(64)));
typedef int32_t p2_v16i __attribute__((vector_size(64)));
typedef float p2_v8f __attribute__((vector_size(32)));
typedef int32_t p2_v8i __attribute__((vector_size(32)));
typedef double p2_v8d __attribute__((vector_size(64)));

#define P2_INLINE __attribute__((always_inline)) static inline

/* b wins over a (values and plane positions), the rule above: lane by lane
 * (a macro: vectors of 64 bytes as arguments would change the ABI), and for
 * one element (without branches: on random data they mispredict). */
#define WINS16(b, bpos, a, apos)                                                                   \
    ((((b) != (b)) & (((a) == (a)) | ((bpos) > (apos)))) |                                         \
     (((a) == (a)) & (((b) > (a)) | (((b) == (a)) & ((bpos) < (apos))))))

/* Elements of a row the down pass takes at a time. */
enum { P2_BLOCK = 1024 };

/* Scratch for one part's rows. */
typedef struct {
    float *m, *bm;
    int32_t *r, *ba;
    double *s; /* down sums (avg) */
} p2_scratch;

/* The row loops, once per instruction set (ref_rows.h). */
#if defined(__GNUC__) && defined(__x86_64__)
#define P2_X86 1
#define P2_FN(name) name##_avx512
#define P2_TARGET __attribute__((target("avx512f")))
#include "ref_rows.h"
#undef P2_FN
#undef P2_TARGET
#define P2_FN(name) name##_avx2
#define P2_TARGET __attribute__((target("avx2")))
#include "ref_rows.h"
#undef P2_FN
#undef P2_TARGET
#endif
#define P2_FN(name) name##_generic
#define P2_TARGET
#include "ref_rows.h"
#undef P2_FN
#undef P2_TARGET

void pool2d_forward_rows(const pool2d_dims *d, const float *in, double *out, double *argmax_f64, int32_t *argmax,
                         int64_t r0, int64_t r1) {
    const int64_t len = (int64_t)d->ow * d->inner, covered = len * d->k;
    const int64_t group = len >= 2048 ? 1 : 2048 / len, n = group * len; /* rows written together */
    p2_scratch t = {0};
    if (d->mode == P2_AVG) {
        t.s = xmalloc(sizeof(double) * (size_t)covered);
    } else {
        t.m = xmalloc(sizeof(float) * (size_t)covered);
        t.r = xmalloc(sizeof(int32_t) * (size_t)covered);
        t.bm = xmalloc(sizeof(float) * (size_t)n);
        t.ba = xmalloc(sizeof(int32_t) * (size_t)n);
    }
#if defined(P2_X86)
    if (__builtin_cpu_supports("avx512f"))
        forward_rows_avx512(d, in, out, argmax_f64, argmax, r0, r1, group, &t);
    else if (__builtin_cpu_supports("avx2"))
        forward_rows_avx2(d, in, out, argmax_f64, argmax, r0, r1, group, &t);
    else
#endif
        forward_rows_generic(d, in, out, argmax_f64, argmax, r0, r1, group, &t);
    free(t.m), free(t.r), free(t.bm), free(t.ba), free(t.s);
}

/* Every third window (counted in NCHW order, so every layout ties the same
 * windows) gets its maximum at its first and its last element: random normal
 * floats almost never tie, and without ties a kernel that gives a tie to the
 * last maximum (`>=` for `>`) would pass. */
void pool2d_plant_ties(const pool2d_dims *d, float *x) {
    if (d->k < 2) return;
    const int64_t hw = (int64_t)d->h * d->w;
    int64_t win = 0;
    for (int b = 0; b < d->n; b++)
        for (int c = 0; c < d->channels; c++) {
            const int64_t o = d->layout == P2_NCHW ? (int64_t)b * d->channels + c : d->layout == P2_NHWC ? b : c;
            const int64_t i = d->layout == P2_NCHW ? 0 : d->layout == P2_NHWC ? c : b;
            float *plane = x + o * hw * d->inner + i;
            for (int oy = 0; oy < d->oh; oy++)
                for (int ox = 0; ox < d->ow; ox++, win++) {
                    if (win % 3 != 0) continue;
                    float m = -INFINITY;
                    for (int p = 0; p < d->k; p++)
                        for (int q = 0; q < d->k; q++) {
                            const float v = plane[((int64_t)(oy * d->k + p) * d->w + ox * d->k + q) * d->inner];
                            if (v > m) m = v;
                        }
                    const int64_t y0 = (int64_t)oy * d->k, x0 = (int64_t)ox * d->k, k1 = d->k - 1;
                    plane[(y0 * d->w + x0) * d->inner] = m;
                    plane[((y0 + k1) * d->w + x0 + k1) * d->inner] = m;
                }
        }
}

void pool2d_fill_input(const pool2d_dims *d, float *x, uint64_t seed) {
    const int64_t count = (int64_t)d->n * d->channels * d->h * d->w;
    if (d->layout == P2_NCHW) {
        hn_fill_randn_f32(x, count, seed);
        return;
    }
    float *tmp = xmalloc((size_t)count * sizeof *tmp);
    hn_fill_randn_f32(tmp, count, seed);
    const int64_t hw = (int64_t)d->h * d->w;
    int64_t j = 0;
    for (int b = 0; b < d->n; b++)
        for (int c = 0; c < d->channels; c++) {
            /* plane (b, c) is (o, ., ., i) of the view */
            const int64_t o = d->layout == P2_NHWC ? b : c, i = d->layout == P2_NHWC ? c : b;
            for (int64_t e = 0; e < hw; e++) x[(o * hw + e) * d->inner + i] = tmp[j++];
        }
    free(tmp);
}
