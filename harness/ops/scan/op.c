/*
 * scan/op.c: the prefix sum of each row, PMPP chapter 11's parallel scan (and
 * CUB's DeviceScan per segment): torch.cumsum(x, -1), inclusive or exclusive.
 *
 *   x  (rows, cols)  float32 or int32 (dtype)
 *   y  (rows, cols)  the same dtype   inclusive: y[r][c] = sum_{i <= c} x[r][i]
 *                                     exclusive: y[r][c] = sum_{i < c} x[r][i] (y[r][0] = 0)
 *
 * rows defaults to 1: one scan of cols elements. float32 x is uniform in
 * [0, 1), each a multiple of 2^-24: positive, so every prefix is its own sum
 * of |x| and the check's rtol * |ref| is a tolerance that grows with the
 * prefix, element by element (docs/ops/scan.md has the error analysis); the
 * fp64 reference is exact. int32 x is 0 or 1 (the flags of stream compaction:
 * a prefix is the index of the next kept element), so no prefix overflows; it
 * is compared exactly.
 *
 * The reference cuts rows into chunks of 2^16 elements on threads: each
 * chunk's sum, then each row's chunk offsets in order, then every chunk's
 * prefixes from its offset. Exact either way (below), so the split does not
 * show.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

static const char *const DTYPES[] = {"float32", "int32", NULL};

static const hn_op_param PARAMS[] = {
    {"rows", 'i', "1", "rows, each scanned on its own (1: one scan of cols elements)", NULL},
    {"cols", 'i', NULL, "elements a row (the scanned dimension)", NULL},
    {"exclusive", 'i', "0", "0: inclusive (y[c] includes x[c]); 1: exclusive (y[0] = 0, y[c] = sum of x[< c])",
     NULL},
    {"dtype", 'c', "\"float32\"", "x's and y's dtype: float32, or int32 (0/1 flags, exact)", DTYPES},
};

enum { P_ROWS, P_COLS, P_EXCLUSIVE, P_DTYPE };
enum { B_X, B_Y };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(rows, cols)"},  /* dtype: scan_dtype */
    {"y", HN_DT_F32, HN_BUF_OUT, "(rows, cols)"}, /* dtype: scan_dtype */
};

static hn_dtype scan_dtype(const double *p, int buffer) {
    (void)buffer;
    return p[P_DTYPE] == 1 ? HN_DT_I32 : HN_DT_F32;
}

static int scan_shape(const double *p, int64_t *counts, hn_err *err) {
    int64_t n;
    if (hn_op_check_2d("scan", PARAMS, p, P_ROWS, P_COLS, &n, err) != 0) return -1;
    if (p[P_EXCLUSIVE] != 0 && p[P_EXCLUSIVE] != 1)
        return hn_errf(err, "scan: exclusive = %g must be 0 (inclusive) or 1 (exclusive)", p[P_EXCLUSIVE]);
    if (p[P_DTYPE] != 0 && p[P_DTYPE] != 1)
        return hn_errf(err, "scan: dtype = %g is not one of float32 (0), int32 (1)", p[P_DTYPE]);
    counts[B_X] = counts[B_Y] = n;
    return 0;
}

/* An add an element. */
static double scan_flop(const double *p) {
    return p[P_ROWS] * p[P_COLS];
}

/* x read once, y written once (4 bytes either dtype). */
static double scan_bytes(const double *p) {
    return 8.0 * p[P_ROWS] * p[P_COLS];
}

static int scan_dims(const double *p, int buffer, int64_t dims[4]) {
    (void)buffer;
    dims[0] = (int64_t)p[P_ROWS], dims[1] = (int64_t)p[P_COLS];
    return 2;
}

static void scan_label(const double *p, char *buf, size_t size) {
    const char *kind = p[P_EXCLUSIVE] == 1 ? "excl" : "incl", *i32 = p[P_DTYPE] == 1 ? ", int32" : "";
    if (p[P_ROWS] == 1) snprintf(buf, size, "n:%lld %s%s", (long long)p[P_COLS], kind, i32);
    else snprintf(buf, size, "%lldx%lld %s%s", (long long)p[P_ROWS], (long long)p[P_COLS], kind, i32);
}

static void scan_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t n = (int64_t)(p[P_ROWS] * p[P_COLS]);
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    if (p[P_DTYPE] == 1) {
        int32_t *x = bufs[B_X];
        for (int64_t i = 0; i < n; i++) x[i] = (int32_t)hn_rand_below(&s, 2);
        return;
    }
    float *x = bufs[B_X];
    for (int64_t i = 0; i < n; i++) x[i] = (float)(hn_rand_below(&s, 1u << 24) * 0x1p-24); /* [0, 1), 24 bits */
}

/* The reference's unit of work: a chunk of up to SC_CHUNK elements of a row,
 * taken 8 at a time as a vector of doubles (GCC's vector extensions), compiled
 * for AVX-512, AVX2 and the baseline and picked at load time (target_clones). */
enum { SC_LANES = 8, SC_CHUNK = 1 << 16 };
typedef float sc_v8f __attribute__((vector_size(32)));
typedef int32_t sc_v8i __attribute__((vector_size(32)));
typedef double sc_v8d __attribute__((vector_size(64)));

typedef struct {
    const float *xf; /* one of xf, xi is set */
    const int32_t *xi;
    double *y;
    double *part; /* per chunk: its sum (pass 1), then its row's sum before it (pass 2) */
    int64_t cols, per_row;
    int exclusive;
} scan_job;

static inline double scan_x(const scan_job *j, int64_t i) {
    return j->xf ? (double)j->xf[i] : (double)j->xi[i];
}

/* Elements i..i+7 as doubles into *v (a pointer: a 64-byte vector returned by
 * value changes the ABI between the clones). */
static inline void scan_x8(const scan_job *j, int64_t i, sc_v8d *v) {
    if (j->xf) {
        sc_v8f f;
        memcpy(&f, j->xf + i, sizeof f);
        *v = __builtin_convertvector(f, sc_v8d);
    } else {
        sc_v8i n;
        memcpy(&n, j->xi + i, sizeof n);
        *v = __builtin_convertvector(n, sc_v8d);
    }
}

static void scan_chunk_bounds(const scan_job *j, int64_t u, int64_t *lo, int64_t *hi) {
    const int64_t r = u / j->per_row, c = u % j->per_row * SC_CHUNK;
    *lo = r * j->cols + c;
    *hi = r * j->cols + (c + SC_CHUNK < j->cols ? c + SC_CHUNK : j->cols);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) static void scan_chunk_sums(void *ctx, int64_t begin,
                                                                                        int64_t end) {
    scan_job *j = ctx;
    for (int64_t u = begin; u < end; u++) {
        int64_t lo, hi, i;
        scan_chunk_bounds(j, u, &lo, &hi);
        sc_v8d acc = {0};
        double t = 0;
        for (i = lo; i + SC_LANES <= hi; i += SC_LANES) {
            sc_v8d x;
            scan_x8(j, i, &x);
            acc += x;
        }
        for (; i < hi; i++) t += scan_x(j, i);
        for (int l = 0; l < SC_LANES; l++) t += acc[l];
        j->part[u] = t;
    }
}

/* Every chunk's prefixes from its offset: within 8 elements by three shifted
 * adds, then the running sum added, so the chain of dependent adds is one a
 * vector rather than one an element. The order of the adds does not matter:
 * every partial sum is exact (below). An exclusive prefix is the inclusive one
 * less the element, exact too. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void scan_chunk_prefixes(void *ctx, int64_t begin,
                                                                                            int64_t end) {
    scan_job *j = ctx;
    const sc_v8d zero = {0};
    for (int64_t u = begin; u < end; u++) {
        int64_t lo, hi, i;
        scan_chunk_bounds(j, u, &lo, &hi);
        double t = j->part ? j->part[u] : 0;
        for (i = lo; i + SC_LANES <= hi; i += SC_LANES) {
            sc_v8d x;
            scan_x8(j, i, &x);
            sc_v8d v = x;
            v += __builtin_shufflevector(zero, v, 0, 8, 9, 10, 11, 12, 13, 14);
            v += __builtin_shufflevector(zero, v, 0, 1, 8, 9, 10, 11, 12, 13);
            v += __builtin_shufflevector(zero, v, 0, 1, 2, 3, 8, 9, 10, 11);
            v += t;
            t = v[SC_LANES - 1];
            if (j->exclusive) v -= x;
            memcpy(j->y + i, &v, sizeof v);
        }
        if (j->exclusive)
            for (; i < hi; i++) j->y[i] = t, t += scan_x(j, i);
        else
            for (; i < hi; i++) t += scan_x(j, i), j->y[i] = t;
    }
}

/* float32: every value is a multiple of 2^-24 below 1, so every prefix of a
 * row of up to 2^29 elements is exact in double (2^53 / 2^24), however it is
 * split; int32: 0/1, exact. The reference is the exact scan. */
static int scan_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                          int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS], n = rows * cols;
    hn_ref *ref = &refs[B_Y];
    ref->n = n;
    ref->values = hn_ref_alloc_values(n);
    snprintf(ref->method, sizeof ref->method, "full");
    const int64_t per_row = (cols + SC_CHUNK - 1) / SC_CHUNK, units = rows * per_row;
    scan_job job = {p[P_DTYPE] == 1 ? NULL : bufs[B_X], p[P_DTYPE] == 1 ? bufs[B_X] : NULL, ref->values, NULL, cols,
                    per_row, p[P_EXCLUSIVE] == 1};
    /* a thread takes 2^18 elements at least */
    const int64_t per_unit = cols < SC_CHUNK ? cols : SC_CHUNK, min_units = 1 + ((int64_t)1 << 18) / per_unit;
    if (per_row > 1) { /* rows of several chunks: each chunk's offset first */
        job.part = xmalloc(sizeof(double) * (size_t)units);
        hn_ref_parallel(units, min_units, threads, scan_chunk_sums, &job);
        for (int64_t r = 0; r < rows; r++) {
            double t = 0;
            for (int64_t c = 0; c < per_row; c++) {
                const double s = job.part[r * per_row + c];
                job.part[r * per_row + c] = t;
                t += s;
            }
        }
    }
    hn_ref_parallel(units, min_units, threads, scan_chunk_prefixes, &job);
    free(job.part);
    return 0;
}

static const char *const BENCH[] = {"cols=16777216", "rows=4096,cols=1000,exclusive=1", NULL};

const hn_op hn_op_scan = {
    .name = "scan",
    .doc = "the inclusive or exclusive prefix sum of each row, float32 or int32 (torch.cumsum(x, -1))",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = scan_shape,
    .dtype = scan_dtype,
    .flop = scan_flop,
    .bytes = scan_bytes,
    .dims = scan_dims,
    .label = scan_label,
    .generate = scan_generate,
    .reference = scan_reference,
};
