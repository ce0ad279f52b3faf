/*
 * transpose/op.c: the matrix transpose, the exercise in memory coalescing and
 * shared-memory bank conflicts (PMPP chapter 6; "An Efficient Matrix Transpose
 * in CUDA C/C++"): torch.transpose(x, 0, 1).contiguous().
 *
 *   x  (rows, cols)  float32
 *   y  (cols, rows)  float32   y[c][r] = x[r][c]
 *
 * Exact: a kernel moves values, so the check's tolerance is 0 (any config may
 * loosen it, no need). x is N(0, 1). The reference copies in 32 x 32 blocks
 * (both sides' lines stay in cache) on threads over row blocks.
 */
#include <stdlib.h>

#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"rows", 'i', NULL, "rows of x (columns of y)", NULL},
    {"cols", 'i', NULL, "columns of x (rows of y)", NULL},
};

enum { P_ROWS, P_COLS };
enum { B_X, B_Y };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(rows, cols)"},
    {"y", HN_DT_F32, HN_BUF_OUT, "(cols, rows)"},
};

static int transpose_shape(const double *p, int64_t *counts, hn_err *err) {
    int64_t n;
    if (hn_op_check_2d("transpose", PARAMS, p, P_ROWS, P_COLS, &n, err) != 0) return -1;
    counts[B_X] = counts[B_Y] = n;
    return 0;
}

static double transpose_flop(const double *p) {
    (void)p;
    return 0;
}

static double transpose_bytes(const double *p) {
    return 8.0 * p[P_ROWS] * p[P_COLS];
}

static int transpose_dims(const double *p, int buffer, int64_t dims[4]) {
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    dims[0] = buffer == B_X ? rows : cols, dims[1] = buffer == B_X ? cols : rows;
    return 2;
}

static void transpose_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "%dx%d", (int)p[P_ROWS], (int)p[P_COLS]);
}

static void transpose_generate(const double *p, void *const *bufs, uint64_t seed) {
    hn_fill_randn_f32(bufs[B_X], (int64_t)(p[P_ROWS] * p[P_COLS]), seed * 2 + 1);
}

enum { TR_BLOCK = 32 };

typedef struct {
    const float *x;
    double *y;
    int64_t rows, cols;
} transpose_job;

/* Row blocks [begin, end) of x, TR_BLOCK rows each, in TR_BLOCK x TR_BLOCK tiles. */
static void transpose_blocks(void *ctx, int64_t begin, int64_t end) {
    const transpose_job *j = ctx;
    for (int64_t rb = begin; rb < end; rb++) {
        const int64_t r0 = rb * TR_BLOCK, r1 = r0 + TR_BLOCK < j->rows ? r0 + TR_BLOCK : j->rows;
        for (int64_t c0 = 0; c0 < j->cols; c0 += TR_BLOCK) {
            const int64_t c1 = c0 + TR_BLOCK < j->cols ? c0 + TR_BLOCK : j->cols;
            for (int64_t c = c0; c < c1; c++)
                for (int64_t r = r0; r < r1; r++) j->y[c * j->rows + r] = j->x[r * j->cols + c];
        }
    }
}

static int transpose_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                               int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    hn_ref *ref = &refs[B_Y];
    ref->n = rows * cols;
    ref->values = hn_ref_alloc_values(ref->n);
    snprintf(ref->method, sizeof ref->method, "full");
    transpose_job job = {bufs[B_X], ref->values, rows, cols};
    const int64_t blocks = (rows + TR_BLOCK - 1) / TR_BLOCK;
    /* a thread takes 2^18 elements at least */
    hn_ref_parallel(blocks, 1 + ((int64_t)1 << 18) / (TR_BLOCK * cols), threads, transpose_blocks, &job);
    return 0;
}

static const char *const BENCH[] = {"rows=4096,cols=4096", "rows=1000,cols=3001", NULL};

const hn_op hn_op_transpose = {
    .name = "transpose",
    .doc = "matrix transpose, y = x^T (torch.transpose(x, 0, 1).contiguous())",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = transpose_shape,
    .flop = transpose_flop,
    .bytes = transpose_bytes,
    .dims = transpose_dims,
    .label = transpose_label,
    .generate = transpose_generate,
    .reference = transpose_reference,
};
