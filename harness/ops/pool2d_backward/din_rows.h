/*
 * pool2d_backward/din_rows.h: the loops of pool2d_backward's reference (see
 * op.c), included by op.c once per instruction set, with B_FN(name) naming this
 * copy's functions and B_TARGET its target attribute (as pool2d's ref_rows.h,
 * whose comment says why the helpers carry the target themselves).
 */

/* Max, one din row (input row y of output row oy's window, row p of it) into
 * dst (w * inner values): din at plane position y * w + x is the gradient of
 * the output whose window holds it when that output's argmax is the position,
 * else 0. The matches are counted into *hits. NCHW reads the row's outputs
 * expanded k times (aexp, gexp: element x is output x / k's). */
B_TARGET static inline __attribute__((always_inline)) void B_FN(max_row)(const pool2d_dims *d, int64_t y,
                                                                          const int32_t *a, const float *g,
                                                                          const int32_t *aexp, const double *gexp,
                                                                          double *restrict dst, int64_t *hits) {
    const int k = d->k, w = d->w, ow = d->ow, inner = d->inner;
    const int64_t covered = (int64_t)ow * k * inner;
    const int32_t row_pos = (int32_t)(y * w);
    b_v8i count = {0};
    if (inner == 1) {
        const b_v8i lane = {0, 1, 2, 3, 4, 5, 6, 7};
        int64_t x = 0;
        for (; x + 8 <= covered; x += 8) {
            b_v8i av;
            b_v8d gv;
            memcpy(&av, aexp + x, sizeof av);
            memcpy(&gv, gexp + x, sizeof gv);
            const b_v8i hit = av == row_pos + (int32_t)x + lane;
            const b_v8d v = (b_v8d)((b_v8l)gv & __builtin_convertvector(hit, b_v8l));
            memcpy(dst + x, &v, sizeof v);
            count -= hit;
        }
        for (; x < covered; x++) {
            const int hit = aexp[x] == row_pos + (int32_t)x;
            dst[x] = hit ? gexp[x] : 0.0;
            *hits += hit;
        }
    } else {
        for (int ox = 0; ox < ow; ox++)
            for (int q = 0; q < k; q++) {
                const int32_t pos = row_pos + ox * k + q;
                const int32_t *aa = a + (int64_t)ox * inner;
                const float *gg = g + (int64_t)ox * inner;
                double *o = dst + ((int64_t)ox * k + q) * inner;
                int i = 0;
                for (; i + 8 <= inner; i += 8) {
                    b_v8i av;
                    b_v8f gf;
                    memcpy(&av, aa + i, sizeof av);
                    memcpy(&gf, gg + i, sizeof gf);
                    const b_v8i hit = av == pos;
                    const b_v8d v = (b_v8d)((b_v8l)__builtin_convertvector(gf, b_v8d) &
                                            __builtin_convertvector(hit, b_v8l));
                    memcpy(o + i, &v, sizeof v);
                    count -= hit;
                }
                for (; i < inner; i++) {
                    const int hit = aa[i] == pos;
                    o[i] = hit ? (double)gg[i] : 0.0;
                    *hits += hit;
                }
            }
    }
    for (int l = 0; l < 8; l++) *hits += count[l];
    memset(dst + covered, 0, sizeof(double) * (size_t)((int64_t)w * inner - covered)); /* columns no window covers */
}

/* The din rows under output rows [r0, r1), as din_part (op.c) describes;
 * returns the argmax elements found in their windows (max mode). */
B_TARGET static int64_t B_FN(din_rows)(const pool2d_dims *d, const float *dout, const int32_t *argmax, double *din,
                                        int64_t r0, int64_t r1, int32_t *aexp, double *gexp) {
    const int k = d->k, ow = d->ow, inner = d->inner;
    const int64_t len = (int64_t)d->w * inner, n_row = (int64_t)ow * inner, covered = n_row * k;
    const double area = (double)k * k;
    int64_t hits = 0;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oy = r % d->oh, y0 = oy * k;
        double *dst = din + ((r / d->oh) * d->h + y0) * len; /* the k din rows of output row r */
        const int32_t *a = argmax + r * n_row;
        const float *g = dout + r * n_row;
        if (d->mode == P2_AVG) {
            /* dout / k^2 over the window: the first din row, then copies of it */
            if (inner == 1) {
                for (int ox = 0; ox < ow; ox++) {
                    const double v = g[ox] / area;
                    for (int q = 0; q < k; q++) dst[ox * k + q] = v;
                }
            } else {
                for (int64_t e = 0; e < n_row; e++) gexp[e] = g[e] / area;
                for (int ox = 0; ox < ow; ox++)
                    for (int q = 0; q < k; q++)
                        memcpy(dst + ((int64_t)ox * k + q) * inner, gexp + (int64_t)ox * inner,
                               sizeof(double) * (size_t)inner);
            }
            memset(dst + covered, 0, sizeof(double) * (size_t)(len - covered));
            for (int p = 1; p < k; p++) memcpy(dst + p * len, dst, sizeof(double) * (size_t)len);
        } else {
            if (inner == 1)
                for (int ox = 0; ox < ow; ox++)
                    for (int q = 0; q < k; q++) aexp[ox * k + q] = a[ox], gexp[ox * k + q] = g[ox];
            for (int p = 0; p < k; p++) B_FN(max_row)(d, y0 + p, a, g, aexp, gexp, dst + p * len, &hits);
        }
        if (oy == d->oh - 1) /* the rows below every window */
            memset(dst + k * len, 0, sizeof(double) * (size_t)((d->h - y0 - k) * len));
    }
    return hits;
}
