/*
 * linear/linear.c: what the linear operators share (see linear.h): parameters,
 * labels, the fp64 multiply on conv2d's, and the sampled rows.
 */
#include "linear.h"

#include <stdlib.h>
#include <string.h>

#include "../conv2d/ref.h"

static const char *const NAMES[LIN_N_PARAMS] = {"batch", "in_f", "out_f"};

void linear_params(const double *p, linear_dims *d) {
    d->batch = (int)p[LIN_BATCH];
    d->in_f = (int)p[LIN_IN_F];
    d->out_f = (int)p[LIN_OUT_F];
}

int linear_check(const char *op, const double *p, hn_err *err) {
    for (int i = 0; i < LIN_N_PARAMS; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30 && p[i] == (double)(int)p[i]))
            return hn_errf(err, "%s: %s = %g must be a whole number between 1 and 2^30", op, NAMES[i], p[i]);
    /* The largest tensors: (batch, in_f), (out_f, in_f), (batch, out_f). */
    static const int PAIRS[3][2] = {{LIN_BATCH, LIN_IN_F}, {LIN_OUT_F, LIN_IN_F}, {LIN_BATCH, LIN_OUT_F}};
    for (int i = 0; i < 3; i++) {
        const double n = p[PAIRS[i][0]] * p[PAIRS[i][1]];
        if (n > 2147483647.0)
            return hn_errf(err, "%s: a (%s, %s) = (%g, %g) tensor would have %.0f elements (more than 2^31-1; the "
                                "kernels index with int)",
                           op, NAMES[PAIRS[i][0]], NAMES[PAIRS[i][1]], p[PAIRS[i][0]], p[PAIRS[i][1]], n);
    }
    return 0;
}

void linear_label(const double *p, char *buf, size_t size) {
    linear_dims d;
    linear_params(p, &d);
    snprintf(buf, size, "b:%d, %d -> %d", d.batch, d.in_f, d.out_f);
}

/* t (cols, rows) = the transpose of a (rows, cols), in 16 x 16 blocks, t written
 * in order within a block. */
#define TRANSPOSE_BODY                                                                             \
    for (int64_t j0 = 0; j0 < cols; j0 += 16)                                                       \
        for (int64_t i0 = 0; i0 < rows; i0 += 16)                                                   \
            for (int64_t j = j0; j < cols && j < j0 + 16; j++)                                      \
                for (int64_t i = i0; i < rows && i < i0 + 16; i++) t[j * rows + i] = a[i * cols + j];

static float *transpose_f32(const float *a, int64_t rows, int64_t cols) {
    float *t = xmalloc(sizeof *t * (size_t)(rows * cols + 1));
    TRANSPOSE_BODY
    return t;
}

static void transpose_f64(double *t, const double *a, int64_t rows, int64_t cols) {
    TRANSPOSE_BODY
}

/* out (rows, npix) = filter (rows, k) x in (k, npix): conv2d's multiply with a
 * 1x1 filter over a 1 x npix image of k channels. */
static void conv_gemm(double *out, const float *filter, const float *in, int rows, int npix, int k, int threads) {
    conv2d_shape s;
    conv2d_ref_shape(&s, 1, npix, 1, 0);
    conv2d_ref_general(out, NULL, npix, in, filter, k, rows, &s, 0.0f, threads, NULL);
}

void linear_gemm_ref(double *c, const float *a, int trans_a, const float *b, int trans_b, int m, int n, int k,
                     int threads) {
    /* conv2d's multiply wants its left operand (m, k) and its right (k, n) as
     * they lie, and its threads take blocks of the right's columns. So compute
     * C = op(A) op(B) or C^T = op(B)^T op(A)^T, whichever copies fewer elements
     * (a transposed operand, and C^T's result), unless it has too few columns
     * for every core to have some (16 each) and the other has more. */
    const int64_t narrow = 16 * (int64_t)(threads > 0 ? threads : hn_cpu_count());
    const double copy_c = (trans_a ? (double)m * k : 0) + (trans_b ? (double)k * n : 0);
    const double copy_t = (trans_b ? 0 : (double)k * n) + (trans_a ? 0 : (double)m * k) + (double)m * n;
    int direct = copy_c <= copy_t;
    if (direct && n < narrow && m > n) direct = 0;
    else if (!direct && m < narrow && n > m) direct = 1;
    if (direct) {
        float *at = trans_a ? transpose_f32(a, k, m) : NULL; /* (m, k) */
        float *bt = trans_b ? transpose_f32(b, n, k) : NULL; /* (k, n) */
        conv_gemm(c, at ? at : a, bt ? bt : b, m, n, k, threads);
        free(at);
        free(bt);
    } else {
        float *bt = trans_b ? NULL : transpose_f32(b, k, n); /* op(B)^T (n, k) */
        float *at = trans_a ? NULL : transpose_f32(a, m, k); /* op(A)^T (k, m) */
        double *ct = xmalloc(sizeof *ct * (size_t)((int64_t)n * m));
        conv_gemm(ct, bt ? bt : b, at ? at : a, n, m, k, threads);
        transpose_f64(c, ct, n, m);
        free(ct);
        free(at);
        free(bt);
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t *linear_sample_rows(int64_t n_rows, double flop_per_row, double budget_gflop, uint64_t seed, int64_t *n_sel) {
    double fit = budget_gflop * 1e9 / (flop_per_row > 1 ? flop_per_row : 1);
    if (fit >= (double)n_rows) {
        *n_sel = n_rows;
        return NULL;
    }
    int64_t n = fit < 16 ? 16 : (int64_t)fit;
    if (n >= n_rows) {
        *n_sel = n_rows;
        return NULL;
    }
    int64_t *rows = xmalloc(sizeof *rows * (size_t)n);
    unsigned char *taken = xcalloc((size_t)n_rows, 1);
    rows[0] = 0, rows[1] = n_rows - 1;
    taken[0] = taken[n_rows - 1] = 1;
    uint64_t s = seed ^ 0x51ed270b27aa3c4dULL;
    for (int64_t i = 2; i < n;) {
        int64_t r = (int64_t)hn_rand_below(&s, (uint64_t)n_rows);
        if (taken[r]) continue;
        taken[r] = 1;
        rows[i++] = r;
    }
    free(taken);
    qsort(rows, (size_t)n, sizeof *rows, cmp_i64);
    *n_sel = n;
    return rows;
}

void linear_ref_rows(hn_ref *ref, const int64_t *rows, int64_t n_rows, int64_t cols, int64_t total_rows) {
    if (!rows) {
        snprintf(ref->method, sizeof ref->method, "full");
        return;
    }
    ref->index = xmalloc(sizeof(int64_t) * (size_t)(n_rows * cols));
    for (int64_t r = 0; r < n_rows; r++)
        for (int64_t j = 0; j < cols; j++) ref->index[r * cols + j] = rows[r] * cols + j;
    snprintf(ref->method, sizeof ref->method, "sampled %lld of %lld rows (first, last + random)", (long long)n_rows,
             (long long)total_rows);
}
