/*
 * reduce_sum/op.c: the sum of each row, the reduction of PMPP chapter 10 (and
 * of cuda-samples' reduce0..6): torch.sum(x, -1).
 *
 *   x  (rows, cols)  float32
 *   y  (rows)        float32   y[r] = sum_c x[r][c]
 *
 * rows defaults to 1: the whole of x summed into one number. x is uniform in
 * [0, 1) (positive, so no cancellation: a float sum's error is then bounded by
 * its length, which the tolerances say, and an element left out or counted
 * twice moves the sum by about 0.5). The reference sums chunks of rows in
 * double, in 8 independent lanes, on threads; it is exact (see below).
 */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"rows", 'i', "1", "rows, each summed on its own (1: all of x into one number)", NULL},
    {"cols", 'i', NULL, "elements a row (the reduced dimension)", NULL},
};

enum { P_ROWS, P_COLS };
enum { B_X, B_Y };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(rows, cols)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(rows)"},
};

static int reduce_shape(const double *p, int64_t *counts, hn_err *err) {
    for (int i = P_ROWS; i <= P_COLS; i++)
        if (!(p[i] >= 1 && p[i] <= 2147483647.0 && p[i] == (double)(int64_t)p[i]))
            return hn_errf(err, "reduce_sum: %s = %g must be a whole number between 1 and 2^31-1", PARAMS[i].name,
                           p[i]);
    const double n = p[P_ROWS] * p[P_COLS];
    if (n > 2147483647.0)
        return hn_errf(err, "reduce_sum: rows * cols = %g * %g = %.0f elements (more than 2^31-1; the kernels index "
                            "with int)",
                       p[P_ROWS], p[P_COLS], n);
    counts[B_X] = (int64_t)n;
    counts[B_Y] = (int64_t)p[P_ROWS];
    return 0;
}

static double reduce_flop(const double *p) {
    return p[P_ROWS] * p[P_COLS];
}

static double reduce_bytes(const double *p) {
    return 4.0 * (p[P_ROWS] * p[P_COLS] + p[P_ROWS]);
}

static int reduce_dims(const double *p, int buffer, int64_t dims[4]) {
    if (buffer == B_Y) {
        dims[0] = (int64_t)p[P_ROWS];
        return 1;
    }
    dims[0] = (int64_t)p[P_ROWS], dims[1] = (int64_t)p[P_COLS];
    return 2;
}

static void reduce_label(const double *p, char *buf, size_t size) {
    if (p[P_ROWS] == 1) snprintf(buf, size, "n:%lld", (long long)p[P_COLS]);
    else snprintf(buf, size, "%lldx%lld", (long long)p[P_ROWS], (long long)p[P_COLS]);
}

static void reduce_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t n = (int64_t)(p[P_ROWS] * p[P_COLS]);
    float *x = bufs[B_X];
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (int64_t i = 0; i < n; i++) x[i] = (float)(hn_rand_below(&s, 1u << 24) * 0x1p-24); /* [0, 1), 24 bits */
}

/* The reference's unit of work: a chunk of up to RS_CHUNK elements of one row,
 * summed in 8 independent lanes (GCC's vector extensions), compiled for
 * AVX-512, AVX2 and the baseline and picked at load time (target_clones). */
enum { RS_LANES = 8, RS_CHUNK = 1 << 16 };
typedef float rs_v8f __attribute__((vector_size(32)));
typedef double rs_v8d __attribute__((vector_size(64)));

typedef struct {
    const float *x;
    double *part; /* per chunk: its sum; a row's chunks are consecutive */
    int64_t cols, per_row;
} reduce_job;

__attribute__((target_clones("avx512f", "avx2", "default"))) static void reduce_chunks(void *ctx, int64_t begin,
                                                                                      int64_t end) {
    const reduce_job *j = ctx;
    for (int64_t u = begin; u < end; u++) {
        const int64_t r = u / j->per_row, lo = u % j->per_row * RS_CHUNK;
        const int64_t hi = lo + RS_CHUNK < j->cols ? lo + RS_CHUNK : j->cols;
        const float *restrict x = j->x + r * j->cols;
        rs_v8d acc = {0};
        double t = 0;
        int64_t i = lo;
        for (; i + RS_LANES <= hi; i += RS_LANES) {
            rs_v8f v;
            memcpy(&v, x + i, sizeof v);
            acc += __builtin_convertvector(v, rs_v8d);
        }
        for (; i < hi; i++) t += x[i];
        for (int l = 0; l < RS_LANES; l++) t += acc[l];
        j->part[u] = t;
    }
}

/* Every value is a multiple of 2^-24 below 1, so a sum in double is exact up
 * to 2^29 elements (2^53 / 2^24), however it is split: the reference is the
 * exact sum. */
static int reduce_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                            int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    hn_ref *ref = &refs[B_Y];
    ref->n = rows;
    ref->values = hn_ref_alloc_values(rows);
    snprintf(ref->method, sizeof ref->method, "full");
    const int64_t per_row = (cols + RS_CHUNK - 1) / RS_CHUNK, units = rows * per_row;
    reduce_job job = {bufs[B_X], xmalloc(sizeof(double) * (size_t)units), cols, per_row};
    /* a thread takes 2^18 elements at least */
    const int64_t per_unit = cols < RS_CHUNK ? cols : RS_CHUNK;
    hn_ref_parallel(units, 1 + ((int64_t)1 << 18) / per_unit, threads, reduce_chunks, &job);
    for (int64_t r = 0; r < rows; r++) {
        double t = 0;
        for (int64_t c = 0; c < per_row; c++) t += job.part[r * per_row + c];
        ref->values[r] = t;
    }
    free(job.part);
    return 0;
}

static const char *const BENCH[] = {"cols=16777216", "rows=4096,cols=1000", NULL};

const hn_op hn_op_reduce_sum = {
    .name = "reduce_sum",
    .doc = "the sum of each row, rows = 1 by default: the whole tensor into one number (torch.sum(x, -1))",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = reduce_shape,
    .flop = reduce_flop,
    .bytes = reduce_bytes,
    .dims = reduce_dims,
    .label = reduce_label,
    .generate = reduce_generate,
    .reference = reduce_reference,
};
