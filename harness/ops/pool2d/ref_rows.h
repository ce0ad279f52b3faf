/*
 * pool2d/ref_rows.h: the row loops of pool2d's forward computation (see ref.c),
 * included by ref.c once per instruction set, with P2_FN(name) naming this
 * copy's functions and P2_TARGET its target attribute: GCC compiles vector
 * extensions for the target of the function they are written in, so the
 * helpers carry the target themselves (inlined from a function without it,
 * the 64-byte vectors would be split into scalars).
 */

/* The even and the odd lanes of two 16-lane vectors side by side (GCC 12 and
 * clang both have __builtin_shufflevector; GCC's __builtin_shuffle is GCC's). */
#ifndef P2_EVENS
#define P2_EVENS(a, b) __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30)
#define P2_ODDS(a, b) __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31)
#endif
P2_TARGET P2_INLINE int P2_FN(wins1)(float b, int32_t bpos, float a, int32_t apos) {
    const int bn = b != b, an_not = a == a;
    return (bn & (an_not | (bpos > apos))) | (an_not & ((b > a) | ((b == a) & (bpos < apos))));
}

/* Down, max: m[e], r[e] = the maximum of rows[p][e] over p < k (torch's rule,
 * rows in order) and its p, for e < len. Row after row over blocks of 1024
 * elements: the input is read in (nearly) address order, the rows of a window
 * being consecutive in memory, which keeps the hardware prefetcher streaming,
 * and the block's m and r stay in L1 (P2_BLOCK, ref.c). */
P2_TARGET P2_INLINE void P2_FN(down_max)(const float *const *rows, int k, int64_t len, float *restrict m,
                                         int32_t *restrict r) {
    for (int64_t e0 = 0; e0 < len; e0 += P2_BLOCK) {
        const int64_t e1 = e0 + P2_BLOCK < len ? e0 + P2_BLOCK : len;
        memcpy(m + e0, rows[0] + e0, sizeof(float) * (size_t)(e1 - e0));
        memset(r + e0, 0, sizeof(int32_t) * (size_t)(e1 - e0));
        for (int p = 1; p < k; p++) {
            const float *x = rows[p];
            int64_t e = e0;
            for (; e + 16 <= e1; e += 16) {
                p2_v16f v, xv;
                p2_v16i pv;
                memcpy(&v, m + e, sizeof v);
                memcpy(&pv, r + e, sizeof pv);
                memcpy(&xv, x + e, sizeof xv);
                const p2_v16i take = (xv > v) | (xv != xv);
                v = (p2_v16f)(((p2_v16i)xv & take) | ((p2_v16i)v & ~take));
                pv = (p & take) | (pv & ~take);
                memcpy(m + e, &v, sizeof v);
                memcpy(r + e, &pv, sizeof pv);
            }
            for (; e < e1; e++)
                if (x[e] > m[e] || x[e] != x[e]) m[e] = x[e], r[e] = p;
        }
    }
}

/* Down, avg: s[e] = the sum of rows[p][e] over p < k, in double, from 0 (so a
 * window of -0 sums to +0, as a sum from 0 does); in blocks as down_max. */
P2_TARGET P2_INLINE void P2_FN(down_sum)(const float *const *rows, int k, int64_t len, double *restrict s) {
    for (int64_t e0 = 0; e0 < len; e0 += P2_BLOCK) {
        const int64_t e1 = e0 + P2_BLOCK < len ? e0 + P2_BLOCK : len;
        for (int p = 0; p < k; p++) {
            const float *x = rows[p];
            int64_t e = e0;
            for (; e + 8 <= e1; e += 8) {
                p2_v8f xv;
                p2_v8d v = {0};
                memcpy(&xv, x + e, sizeof xv);
                if (p) memcpy(&v, s + e, sizeof v);
                v += __builtin_convertvector(xv, p2_v8d);
                memcpy(s + e, &v, sizeof v);
            }
            for (; e < e1; e++) s[e] = (p ? s[e] : 0.0) + x[e];
        }
    }
}

/* Across, max: bm[j], ba[j] for the row's outputs j = ox * inner + i from the
 * down pass's m and r (plane position of element e of column x: (y0 + r[e]) *
 * w + x). */
P2_TARGET P2_INLINE void P2_FN(across_max)(const pool2d_dims *d, int64_t y0, const float *m, const int32_t *r,
                                           float *restrict bm, int32_t *restrict ba) {
    const int k = d->k, w = d->w, ow = d->ow, inner = d->inner;
    const int32_t base = (int32_t)(y0 * w);
    if (inner == 1 && k == 2) {
        /* NCHW, k = 2: 16 windows from 32 neighbours, split into even and odd */
        const p2_v16i lane2 = {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30};
        int ox = 0;
        for (; ox + 16 <= ow; ox += 16) {
            p2_v16f m0, m1;
            p2_v16i r0, r1;
            memcpy(&m0, m + 2 * ox, sizeof m0);
            memcpy(&m1, m + 2 * ox + 16, sizeof m1);
            memcpy(&r0, r + 2 * ox, sizeof r0);
            memcpy(&r1, r + 2 * ox + 16, sizeof r1);
            const p2_v16f a = P2_EVENS(m0, m1), b = P2_ODDS(m0, m1);
            const p2_v16i col = lane2 + 2 * ox;
            const p2_v16i apos = base + P2_EVENS(r0, r1) * w + col;
            const p2_v16i bpos = base + P2_ODDS(r0, r1) * w + col + 1;
            const p2_v16i take = WINS16(b, bpos, a, apos);
            const p2_v16f v = (p2_v16f)(((p2_v16i)b & take) | ((p2_v16i)a & ~take));
            const p2_v16i pos = (bpos & take) | (apos & ~take);
            memcpy(bm + ox, &v, sizeof v);
            memcpy(ba + ox, &pos, sizeof pos);
        }
        for (; ox < ow; ox++) {
            float v = m[2 * ox];
            int32_t pos = base + r[2 * ox] * w + 2 * ox;
            const int32_t bpos = base + r[2 * ox + 1] * w + 2 * ox + 1;
            if (P2_FN(wins1)(m[2 * ox + 1], bpos, v, pos)) v = m[2 * ox + 1], pos = bpos;
            bm[ox] = v, ba[ox] = pos;
        }
        return;
    }
    if (inner == 1) {
        /* NCHW, other k: window by window */
        for (int ox = 0; ox < ow; ox++) {
            const int64_t e0 = (int64_t)ox * k;
            float v = m[e0];
            int32_t pos = base + r[e0] * w + (int32_t)e0;
            for (int q = 1; q < k; q++) {
                const int32_t bpos = base + r[e0 + q] * w + (int32_t)e0 + q;
                if (P2_FN(wins1)(m[e0 + q], bpos, v, pos)) v = m[e0 + q], pos = bpos;
            }
            bm[ox] = v, ba[ox] = pos;
        }
        return;
    }
    /* NHWC, CHWN: the k runs of window ox, lanes over the inner index */
    for (int ox = 0; ox < ow; ox++) {
        const int64_t e0 = (int64_t)ox * k * inner;
        float *om = bm + (int64_t)ox * inner;
        int32_t *oa = ba + (int64_t)ox * inner;
        const int32_t x0 = ox * k;
        int i = 0;
        for (; i + 16 <= inner; i += 16) {
            p2_v16f v;
            p2_v16i rv;
            memcpy(&v, m + e0 + i, sizeof v);
            memcpy(&rv, r + e0 + i, sizeof rv);
            p2_v16i pos = base + rv * w + x0;
            for (int q = 1; q < k; q++) {
                p2_v16f b;
                memcpy(&b, m + e0 + (int64_t)q * inner + i, sizeof b);
                memcpy(&rv, r + e0 + (int64_t)q * inner + i, sizeof rv);
                const p2_v16i bpos = base + rv * w + (x0 + q);
                const p2_v16i take = WINS16(b, bpos, v, pos);
                v = (p2_v16f)(((p2_v16i)b & take) | ((p2_v16i)v & ~take));
                pos = (bpos & take) | (pos & ~take);
            }
            memcpy(om + i, &v, sizeof v);
            memcpy(oa + i, &pos, sizeof pos);
        }
        for (; i < inner; i++) {
            float v = m[e0 + i];
            int32_t pos = base + r[e0 + i] * w + x0;
            for (int q = 1; q < k; q++) {
                const int64_t e = e0 + (int64_t)q * inner + i;
                const int32_t bpos = base + r[e] * w + x0 + q;
                if (P2_FN(wins1)(m[e], bpos, v, pos)) v = m[e], pos = bpos;
            }
            om[i] = v, oa[i] = pos;
        }
    }
}

/* Across, avg: o[j] = (sum over the window's k columns of s) / k^2. */
P2_TARGET P2_INLINE void P2_FN(across_sum)(const pool2d_dims *d, const double *s, double *restrict o) {
    const int k = d->k, ow = d->ow, inner = d->inner;
    const double area = (double)k * k;
    if (inner == 1) {
        for (int ox = 0; ox < ow; ox++) {
            double v = s[(int64_t)ox * k];
            for (int q = 1; q < k; q++) v += s[(int64_t)ox * k + q];
            o[ox] = v / area;
        }
        return;
    }
    for (int ox = 0; ox < ow; ox++) {
        const double *c = s + (int64_t)ox * k * inner;
        double *oo = o + (int64_t)ox * inner;
        int i = 0;
        for (; i + 8 <= inner; i += 8) {
            p2_v8d v, x;
            memcpy(&v, c + i, sizeof v);
            for (int q = 1; q < k; q++) {
                memcpy(&x, c + (int64_t)q * inner + i, sizeof x);
                v += x;
            }
            v /= area;
            memcpy(oo + i, &v, sizeof v);
        }
        for (; i < inner; i++) {
            double v = c[i];
            for (int q = 1; q < k; q++) v += c[(int64_t)q * inner + i];
            oo[i] = v / area;
        }
    }
}

/* Widening copies: float or int32 to double. */
P2_TARGET P2_INLINE void P2_FN(widen_f)(double *restrict dst, const float *restrict src, int64_t n) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        p2_v8f x;
        memcpy(&x, src + j, sizeof x);
        const p2_v8d v = __builtin_convertvector(x, p2_v8d);
        memcpy(dst + j, &v, sizeof v);
    }
    for (; j < n; j++) dst[j] = src[j];
}
P2_TARGET P2_INLINE void P2_FN(widen_i)(double *restrict dst, const int32_t *restrict src, int64_t n) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        p2_v8i x;
        memcpy(&x, src + j, sizeof x);
        const p2_v8d v = __builtin_convertvector(x, p2_v8d);
        memcpy(dst + j, &v, sizeof v);
    }
    for (; j < n; j++) dst[j] = src[j];
}

/* Output rows [r0, r1), as pool2d_forward_rows, `group` rows at a time (their
 * outputs are contiguous: widened together). */
P2_TARGET static void P2_FN(forward_rows)(const pool2d_dims *d, const float *in, double *out, double *argmax_f64,
                                          int32_t *argmax, int64_t r0, int64_t r1, int64_t group,
                                          const p2_scratch *t) {
    const int k = d->k, inner = d->inner;
    const int64_t len = (int64_t)d->ow * inner, covered = len * k, stride = (int64_t)d->w * inner;
    const float *rows[64], **rp = k <= 64 ? rows : xmalloc(sizeof *rp * (size_t)k);
    for (int64_t g = r0; g < r1; g += group) {
        const int64_t g1 = g + group < r1 ? g + group : r1, n = (g1 - g) * len;
        if (d->mode == P2_AVG && !out) continue;
        for (int64_t r = g; r < g1; r++) {
            const int64_t o = r / d->oh, y0 = (r % d->oh) * k, at = (r - g) * len;
            for (int p = 0; p < k; p++) rp[p] = in + (o * d->h + y0 + p) * stride;
            if (d->mode == P2_AVG) {
                P2_FN(down_sum)(rp, k, covered, t->s);
                P2_FN(across_sum)(d, t->s, out + r * len);
                continue;
            }
            P2_FN(down_max)(rp, k, covered, t->m, t->r);
            P2_FN(across_max)(d, y0, t->m, t->r, t->bm + at, (argmax ? argmax + g * len : t->ba) + at);
        }
        if (d->mode == P2_AVG) continue;
        if (out) P2_FN(widen_f)(out + g * len, t->bm, n);
        if (argmax_f64) P2_FN(widen_i)(argmax_f64 + g * len, argmax ? argmax + g * len : t->ba, n);
    }
    if (rp != rows) free(rp);
}
