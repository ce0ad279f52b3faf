/*
 * attention/ref.c: the fp64 reference of scaled dot-product attention (the
 * formula in attention.h), as a FlashAttention kernel computes it but in
 * double: a block of ATTN_QB query rows of one slice at a time, over blocks
 * of ATTN_KB keys widened to double (so each key row is converted once per
 * block of queries, not once per query), with the online softmax (each row's
 * running max m and sum l; the accumulated output and l rescaled by
 * exp(m_old - m_new) when the max grows). Everything in double from the
 * float inputs: q times the float scale is exact (a float times a float fits a
 * double), each score's products and sum round in double (1e-16 relative,
 * far below the float kernels' errors). Causal blocks stop at the last key
 * their last row sees.
 *
 * Tasks (a query block, or one sampled row) go to threads through
 * hn_ref_parallel; the inner loops run on 8-lane vectors compiled for
 * AVX-512, AVX2 and the baseline (target_clones), exp is eltwise_exp's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../relu/eltwise.h"
#include "attention.h"

/* query rows a task (even: rows go in pairs), keys a block, lanes a vector */
enum { ATTN_QB = 32, ATTN_KB = 128, ATTN_LANES = 8 };
_Static_assert(ATTN_QB % 2 == 0 && ATTN_KB % (2 * ATTN_LANES) == 0, "rows in pairs, keys in pairs of vectors");

typedef double attn_v8d __attribute__((vector_size(64)));

typedef struct {
    const attn_dims *a;
    const float *q, *k, *v;
    const int64_t *rows; /* sampled rows, or NULL: every row, ATTN_QB at a time */
    int64_t qblocks;     /* query blocks a slice (rows NULL) */
    int64_t dp;          /* d rounded up to ATTN_LANES */
    double *out, *lse;
} attn_job;

/* Per-thread scratch: q rows and output accumulators (ATTN_QB x dp), the key
 * block transposed (dp x ATTN_KB: scores are vectors over keys), the value
 * block (ATTN_KB x dp), the scores (ATTN_QB x ATTN_KB); zeros past d and past
 * the block's keys. */
typedef struct {
    double *qd, *acc, *kt, *vd, *sc, m[ATTN_QB], l[ATTN_QB];
} attn_scratch;

#define LOADV(v, p) memcpy(&(v), (p), sizeof(v))
#define STOREV(p, v) memcpy((p), &(v), sizeof(v))

/* How many of the block's keys row r sees (0 .. nk). */
static inline int64_t seen(const attn_dims *a, int64_t i, int64_t j0, int64_t nk) {
    const int64_t vis = attn_visible(a, i) - j0;
    return vis < 0 ? 0 : vis > nk ? nk : vis;
}

/* Rows i0 .. i0 + nq - 1 of slice `slice` into out (nq rows of d, in order)
 * and lse. Per key block: the scores of two rows at a time (sharing each load
 * of a key vector), each row's online-softmax update, then p v for two rows
 * at a time (sharing each load of a value vector); a row's p is 0 past the
 * keys it sees, so the pair runs to the longer of its two rows. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
attn_block(const attn_job *j, attn_scratch *w, int64_t slice, int64_t i0, int64_t nq, double *out, double *lse) {
    const attn_dims *a = j->a;
    const int64_t d = a->d, dp = j->dp, s = a->s;
    const float *k = j->k + slice * s * d, *v = j->v + slice * s * d, *q = j->q + (slice * a->t + i0) * d;
    const double scale = (double)a->scale;
    /* an odd block gets a row of zeros (its results are not written) */
    const int64_t np = (nq + 1) / 2 * 2;
    for (int64_t r = 0; r < np; r++) {
        for (int64_t c = 0; c < dp; c++) w->qd[r * dp + c] = r < nq && c < d ? (double)q[r * d + c] * scale : 0.0;
        w->m[r] = -INFINITY, w->l[r] = 0.0;
    }
    memset(w->acc, 0, sizeof *w->acc * (size_t)(np * dp));
    const int64_t kend = attn_visible(a, i0 + nq - 1);
    for (int64_t j0 = 0; j0 < kend; j0 += ATTN_KB) {
        const int64_t nk = kend - j0 < ATTN_KB ? kend - j0 : ATTN_KB;
        const int64_t nk8 = (nk + ATTN_LANES - 1) / ATTN_LANES * ATTN_LANES;
        for (int64_t c = 0; c < dp; c++)
            for (int64_t jj = 0; jj < nk8; jj++)
                w->kt[c * ATTN_KB + jj] = c < d && jj < nk ? (double)k[(j0 + jj) * d + c] : 0.0;
        for (int64_t jj = 0; jj < nk8; jj++)
            for (int64_t c = 0; c < dp; c++) w->vd[jj * dp + c] = c < d && jj < nk ? (double)v[(j0 + jj) * d + c] : 0.0;
        /* scores: sc[r][jj] = sum_c qd[r][c] kt[c][jj], 8 keys a vector, rows r and r + 1 together */
        for (int64_t r = 0; r < np; r += 2) {
            const int64_t vis = seen(a, i0 + (r + 1 < nq ? r + 1 : r), j0, nk); /* the pair's longer row */
            const double *q0 = w->qd + r * dp, *q1 = q0 + dp;
            double *s0 = w->sc + r * ATTN_KB, *s1 = s0 + ATTN_KB;
            for (int64_t jb = 0; jb < vis; jb += 2 * ATTN_LANES) {
                attn_v8d x0 = {0}, x1 = {0}, y0 = {0}, y1 = {0}, k0, k1 = {0};
                const int two = vis - jb > ATTN_LANES;
                for (int64_t c = 0; c < d; c++) {
                    const double *kr = w->kt + c * ATTN_KB + jb;
                    LOADV(k0, kr);
                    if (two) LOADV(k1, kr + ATTN_LANES);
                    x0 += q0[c] * k0, x1 += q0[c] * k1;
                    y0 += q1[c] * k0, y1 += q1[c] * k1;
                }
                STOREV(s0 + jb, x0), STOREV(s1 + jb, y0);
                if (two) STOREV(s0 + jb + ATTN_LANES, x1), STOREV(s1 + jb + ATTN_LANES, y1);
            }
        }
        /* each row's max, p = exp(score - max) (0 past the keys it sees), l, and the factor of its old acc */
        double corr[ATTN_QB];
        for (int64_t r = 0; r < np; r++) {
            const int64_t vis = r < nq ? seen(a, i0 + r, j0, nk) : 0;
            double *sc = w->sc + r * ATTN_KB, mx = -INFINITY, sum = 0;
            corr[r] = 1.0;
            if (vis > 0) {
                for (int64_t jj = 0; jj < vis; jj++) mx = sc[jj] > mx ? sc[jj] : mx;
                const double mnew = mx > w->m[r] ? mx : w->m[r];
                corr[r] = exp(w->m[r] - mnew); /* 0 on the first block (m = -inf) */
                for (int64_t jj = 0; jj < vis; jj++) sc[jj] -= mnew;
                eltwise_exp(sc, sc, vis);
                for (int64_t jj = 0; jj < vis; jj++) sum += sc[jj];
                w->l[r] = w->l[r] * corr[r] + sum;
                w->m[r] = mnew;
            }
            for (int64_t jj = vis; jj < nk; jj++) sc[jj] = 0.0;
        }
        /* acc[r] = corr[r] acc[r] + sum_jj p[r][jj] v[jj], two rows and 2 vectors of columns at a time */
        for (int64_t r = 0; r < np; r += 2) {
            const int64_t vis = seen(a, i0 + (r + 1 < nq ? r + 1 : r), j0, nk);
            double *a0 = w->acc + r * dp, *a1 = a0 + dp;
            const double *p0 = w->sc + r * ATTN_KB, *p1 = p0 + ATTN_KB;
            for (int64_t cb = 0; cb < dp; cb += 2 * ATTN_LANES) {
                const int two = dp - cb > ATTN_LANES;
                attn_v8d u0, u1 = {0}, z0, z1 = {0}, v0, v1 = {0};
                LOADV(u0, a0 + cb), LOADV(z0, a1 + cb);
                if (two) LOADV(u1, a0 + cb + ATTN_LANES), LOADV(z1, a1 + cb + ATTN_LANES);
                u0 *= corr[r], u1 *= corr[r], z0 *= corr[r + 1], z1 *= corr[r + 1];
                for (int64_t jj = 0; jj < vis; jj++) {
                    const double *vr = w->vd + jj * dp + cb;
                    LOADV(v0, vr);
                    if (two) LOADV(v1, vr + ATTN_LANES);
                    u0 += p0[jj] * v0, u1 += p0[jj] * v1;
                    z0 += p1[jj] * v0, z1 += p1[jj] * v1;
                }
                STOREV(a0 + cb, u0), STOREV(a1 + cb, z0);
                if (two) STOREV(a0 + cb + ATTN_LANES, u1), STOREV(a1 + cb + ATTN_LANES, z1);
            }
        }
    }
    for (int64_t r = 0; r < nq; r++) {
        const double inv = 1.0 / w->l[r];
        for (int64_t c = 0; c < d; c++) out[r * d + c] = w->acc[r * dp + c] * inv;
        lse[r] = w->m[r] + log(w->l[r]);
    }
}

static void attn_tasks(void *ctx, int64_t begin, int64_t end) {
    const attn_job *j = ctx;
    const attn_dims *a = j->a;
    const size_t dp = (size_t)j->dp;
    attn_scratch w;
    w.qd = xmalloc(sizeof(double) * dp * ATTN_QB);
    w.acc = xmalloc(sizeof(double) * dp * ATTN_QB);
    w.kt = xmalloc(sizeof(double) * dp * ATTN_KB);
    w.vd = xmalloc(sizeof(double) * dp * ATTN_KB);
    w.sc = xmalloc(sizeof(double) * ATTN_QB * ATTN_KB);
    for (int64_t x = begin; x < end; x++) {
        if (j->rows) {
            const int64_t row = j->rows[x];
            attn_block(j, &w, row / a->t, row % a->t, 1, j->out + x * a->d, j->lse + x);
        } else {
            const int64_t slice = x / j->qblocks, i0 = x % j->qblocks * ATTN_QB;
            const int64_t nq = a->t - i0 < ATTN_QB ? a->t - i0 : ATTN_QB, row = slice * a->t + i0;
            attn_block(j, &w, slice, i0, nq, j->out + row * a->d, j->lse + row);
        }
    }
    free(w.qd);
    free(w.acc);
    free(w.kt);
    free(w.vd);
    free(w.sc);
}

void attn_ref(const attn_dims *a, const float *q, const float *k, const float *v, const int64_t *rows,
              int64_t n_rows, double *out_vals, double *lse_vals, int threads) {
    attn_job job = {a, q, k, v, rows, (a->t + ATTN_QB - 1) / ATTN_QB,
                    (a->d + ATTN_LANES - 1) / ATTN_LANES * ATTN_LANES, out_vals, lse_vals};
    const int64_t tasks = rows ? n_rows : a->bh * job.qblocks;
    const double rows_per_task = rows ? 1.0 : ATTN_QB;
    /* a thread takes about 2^22 FLOP at least (a millisecond) */
    const double task_flop = 4.0 * (double)a->d * rows_per_task * attn_pairs(a) / (double)a->t + 1.0;
    hn_ref_parallel(tasks, 1 + (int64_t)(4194304.0 / task_flop), threads, attn_tasks, &job);
}
