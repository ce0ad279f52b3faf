/*
 * pool2d/ref.c: the forward computation of pool2d (see pool2d.h), shared by
 * pool2d's reference and pool2d_backward's generator, and the few helpers both
 * operators use (threads, the seeded input).
 *
 * Output rows are computed a whole row at a time: for each of the k input rows
 * under it, the row is read once, left to right, and folded into the row's
 * accumulators (ow * inner of them), so memory is read in order in every layout
 * and the innermost loop runs over `inner` contiguous values (channels in NHWC,
 * images in CHWN) or over the k values of one window row (NCHW). Visiting the
 * window rows in order, and each row's columns in order, is row-major window
 * order, which is what decides ties.
 */
#include <stdlib.h>
#include <string.h>

#include "pool2d.h"

/* m[j], a[j] = v[j], pos0 + j * step where v[j] > m[j] or v[j] is NaN (torch's
 * rule), for j < n: four at a time with GCC's vector extensions (SSE2 on
 * x86-64, NEON on arm64), then one at a time, with masks rather than
 * branches (on random data a branch here mispredicts every other time). */
#if defined(__GNUC__)
typedef float pool_f4 __attribute__((vector_size(16)));
typedef int32_t pool_i4 __attribute__((vector_size(16)));
#define POOL_VECTORS 1
#endif

static void max_update(const float *restrict v, int32_t pos0, int32_t step, float *restrict m, int32_t *restrict a,
                       int64_t n) {
    int64_t j = 0;
#if defined(POOL_VECTORS)
    const pool_i4 lane = {0, 1, 2, 3};
    for (; j + 4 <= n; j += 4) {
        pool_f4 x, b;
        pool_i4 xi, bi, ai;
        memcpy(&x, v + j, sizeof x);
        memcpy(&b, m + j, sizeof b);
        memcpy(&ai, a + j, sizeof ai);
        const pool_i4 take = (x > b) | (x != x);
        memcpy(&xi, &x, sizeof xi);
        memcpy(&bi, &b, sizeof bi);
        bi = (xi & take) | (bi & ~take);
        const pool_i4 pos = (int32_t)(pos0 + (int32_t)j * step) + lane * step;
        ai = (pos & take) | (ai & ~take);
        memcpy(m + j, &bi, sizeof bi);
        memcpy(a + j, &ai, sizeof ai);
    }
#endif
    for (; j < n; j++) {
        const float x = v[j], b = m[j];
        const uint32_t take = 0u - (uint32_t)((x > b) | (x != x));
        uint32_t xi, bi;
        memcpy(&xi, &x, 4);
        memcpy(&bi, &b, 4);
        bi = (xi & take) | (bi & ~take);
        memcpy(&m[j], &bi, 4);
        a[j] = (int32_t)(((uint32_t)(pos0 + (int32_t)j * step) & take) | ((uint32_t)a[j] & ~take));
    }
}

/* Max pooling of output row r into the float maxima m and positions a (ow *
 * inner each); t is scratch for ow floats. Window element (p, q) of every
 * window of the row is folded in at once, in row-major (p, q) order. */
static void max_row(const pool2d_dims *d, const float *in, int64_t r, float *restrict m, int32_t *restrict a,
                    float *restrict t) {
    const int k = d->k, w = d->w, ow = d->ow, inner = d->inner;
    const int64_t o = r / d->oh;
    const int oy = (int)(r % d->oh);
    for (int p = 0; p < k; p++) {
        const int y = oy * k + p;
        const float *src = in + ((o * d->h + y) * (int64_t)w) * inner;
        for (int q = 0; q < k; q++) {
            const int32_t pos = y * w + q; /* window 0's; window ox's is pos + ox * k */
            const int first = p == 0 && q == 0;
            if (inner == 1) {
                /* NCHW: window ox's element is src[ox * k + q]; gathered into t so the
                 * comparisons run on contiguous values */
                const float *s = src + q;
                float *dst = first ? m : t;
                for (int ox = 0; ox < ow; ox++) dst[ox] = s[(int64_t)ox * k];
                if (first)
                    for (int ox = 0; ox < ow; ox++) a[ox] = pos + ox * k;
                else
                    max_update(t, pos, k, m, a, ow);
                continue;
            }
            /* NHWC, CHWN: window ox's elements are inner contiguous values */
            for (int ox = 0; ox < ow; ox++) {
                const float *s = src + ((int64_t)ox * k + q) * inner;
                float *mm = m + (int64_t)ox * inner;
                int32_t *aa = a + (int64_t)ox * inner;
                if (first) {
                    memcpy(mm, s, (size_t)inner * sizeof *mm);
                    for (int i = 0; i < inner; i++) aa[i] = pos + ox * k;
                } else {
                    max_update(s, pos + ox * k, 0, mm, aa, inner);
                }
            }
        }
    }
}

/* Average pooling of output row r into out (the sum first, then / k^2). */
static void avg_row(const pool2d_dims *d, const float *in, int64_t r, double *out) {
    const int k = d->k, w = d->w, ow = d->ow, inner = d->inner;
    const int64_t o = r / d->oh, len = (int64_t)ow * inner;
    const int oy = (int)(r % d->oh);
    for (int64_t j = 0; j < len; j++) out[j] = 0.0;
    for (int p = 0; p < k; p++) {
        const float *src = in + ((o * d->h + oy * k + p) * (int64_t)w) * inner;
        if (inner == 1) {
            for (int ox = 0; ox < ow; ox++) {
                double s = 0.0;
                for (int q = 0; q < k; q++) s += src[(int64_t)ox * k + q];
                out[ox] += s;
            }
            continue;
        }
        for (int ox = 0; ox < ow; ox++)
            for (int q = 0; q < k; q++) {
                const float *s = src + ((int64_t)ox * k + q) * inner;
                double *acc = out + (int64_t)ox * inner;
                for (int i = 0; i < inner; i++) acc[i] += s[i];
            }
    }
    const double area = (double)k * k;
    for (int64_t j = 0; j < len; j++) out[j] /= area;
}

void pool2d_forward_rows(const pool2d_dims *d, const float *in, double *out, double *argmax_f64, int32_t *argmax,
                         int64_t r0, int64_t r1) {
    const int64_t len = (int64_t)d->ow * d->inner;
    if (d->mode == P2_AVG) {
        for (int64_t r = r0; out && r < r1; r++) avg_row(d, in, r, out + r * len);
        return;
    }
    float *m = xmalloc((size_t)len * sizeof *m), *t = xmalloc((size_t)d->ow * sizeof *t);
    int32_t *tmp = argmax ? NULL : xmalloc((size_t)len * sizeof *tmp);
    for (int64_t r = r0; r < r1; r++) {
        int32_t *a = argmax ? argmax + r * len : tmp;
        max_row(d, in, r, m, a, t);
        if (out)
            for (int64_t j = 0; j < len; j++) out[r * len + j] = m[j];
        if (argmax_f64)
            for (int64_t j = 0; j < len; j++) argmax_f64[r * len + j] = a[j];
    }
    free(m);
    free(t);
    free(tmp);
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
