/*
 * layernorm/op.c: layer normalization over the last dimension, forward
 * (torch.nn.functional.layer_norm(x, (cols,), weight, bias, eps); llm.c's
 * layernorm_forward, which also keeps each row's mean and 1/std for the
 * backward pass):
 *
 *   x       (rows, cols)  float32
 *   weight  (cols)        float32
 *   bias    (cols)        float32
 *   y       (rows, cols)  float32   y[r][c] = (x[r][c] - mean_r) * rstd_r * weight[c] + bias[c]
 *   mean    (rows)        float32   mean_r = (1/cols) sum_c x[r][c]
 *   rstd    (rows)        float32   rstd_r = 1 / sqrt((1/cols) sum_c (x[r][c] - mean_r)^2 + eps)
 *
 * The variance is the biased one (divided by cols), as torch's. A kernel is
 * checked on the outputs it is given: one that writes y alone is checked on y.
 * x is N(0, 1) plus a per-row offset cycling through 0, 4, -2, 1 and times a
 * per-row scale cycling through 1, 0.5, 2, 1 (so rows differ in mean and
 * spread); weight and bias are N(0, 1). The reference is fp64: per row the
 * mean, then the variance from the deviations (two passes), on threads over
 * blocks of rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"rows", 'i', NULL, "rows (each normalized on its own: batch x tokens)", NULL},
    {"cols", 'i', NULL, "columns (the normalized dimension: channels)", NULL},
    {"eps", 'f', "1e-5", "added to the variance before the square root", NULL},
};

enum { P_ROWS, P_COLS, P_EPS };
enum { B_X, B_WEIGHT, B_BIAS, B_Y, B_MEAN, B_RSTD };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_F32, HN_BUF_IN, "(rows, cols)"},  {"weight", HN_DT_F32, HN_BUF_IN, "(cols)"},
    {"bias", HN_DT_F32, HN_BUF_IN, "(cols)"},     {"y", HN_DT_F32, HN_BUF_OUT, "(rows, cols)"},
    {"mean", HN_DT_F32, HN_BUF_OUT, "(rows)"},    {"rstd", HN_DT_F32, HN_BUF_OUT, "(rows)"},
};

static int layernorm_shape(const double *p, int64_t *counts, hn_err *err) {
    int64_t n;
    if (hn_op_check_2d("layernorm", PARAMS, p, P_ROWS, P_COLS, &n, err) != 0) return -1;
    if (!(p[P_EPS] >= 0 && isfinite((float)p[P_EPS])))
        return hn_errf(err, "layernorm: eps = %g must be a finite float32 of at least 0", p[P_EPS]);
    counts[B_X] = counts[B_Y] = n;
    counts[B_WEIGHT] = counts[B_BIAS] = (int64_t)p[P_COLS];
    counts[B_MEAN] = counts[B_RSTD] = (int64_t)p[P_ROWS];
    return 0;
}

/* Per element: the mean's addition, the deviation's subtraction, square and
 * addition, then normalization, scale and shift (an FMA): 7. */
static double layernorm_flop(const double *p) {
    return 7.0 * p[P_ROWS] * p[P_COLS];
}

/* Per output alone: y needs all of it; mean one addition an element; rstd the
 * mean and the variance (4). */
static double layernorm_flop_of(const double *p, int b) {
    const double n = p[P_ROWS] * p[P_COLS];
    return b == B_MEAN ? n : b == B_RSTD ? 4.0 * n : 7.0 * n;
}

static double layernorm_bytes(const double *p) {
    return 4.0 * (2.0 * p[P_ROWS] * p[P_COLS] + 2.0 * p[P_COLS] + 2.0 * p[P_ROWS]);
}

static int layernorm_dims(const double *p, int buffer, int64_t dims[4]) {
    switch (buffer) {
    case B_X:
    case B_Y: dims[0] = (int64_t)p[P_ROWS], dims[1] = (int64_t)p[P_COLS]; return 2;
    case B_WEIGHT:
    case B_BIAS: dims[0] = (int64_t)p[P_COLS]; return 1;
    default: dims[0] = (int64_t)p[P_ROWS]; return 1;
    }
}

static void layernorm_label(const double *p, char *buf, size_t size) {
    if ((float)p[P_EPS] == 1e-5f) snprintf(buf, size, "%dx%d", (int)p[P_ROWS], (int)p[P_COLS]);
    else snprintf(buf, size, "%dx%d, eps:%g", (int)p[P_ROWS], (int)p[P_COLS], (double)(float)p[P_EPS]);
}

static void layernorm_generate(const double *p, void *const *bufs, uint64_t seed) {
    static const float OFFSET[4] = {0.0f, 4.0f, -2.0f, 1.0f}, SCALE[4] = {1.0f, 0.5f, 2.0f, 1.0f};
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    float *x = bufs[B_X];
    hn_fill_randn_f32(x, rows * cols, seed * 3 + 1);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) x[r * cols + c] = SCALE[r % 4] * x[r * cols + c] + OFFSET[r % 4];
    hn_fill_randn_f32(bufs[B_WEIGHT], cols, seed * 3 + 2);
    hn_fill_randn_f32(bufs[B_BIAS], cols, seed * 3 + 3);
}

typedef struct {
    const float *x, *weight, *bias;
    double *y, *mean, *rstd, eps;
    int64_t cols;
} layernorm_job;

/* The row loops on 8-lane vectors (GCC's vector extensions; fp64 sums of floats
 * need no particular order to be far more exact than the float kernels they
 * judge), compiled for AVX-512, AVX2 and the baseline and picked at load time
 * (target_clones). */
typedef float ln_v8f __attribute__((vector_size(32)));
typedef double ln_v8d __attribute__((vector_size(64)));
enum { LN_LANES = 8 };

/* 8 floats at x widened, into the ln_v8d v; and v's lanes summed into double t
 * (macros: a function taking or returning a 64-byte vector would change the
 * ABI between the clones) */
#define LN_LOAD(v, x)                                                                                  \
    do {                                                                                               \
        ln_v8f f_;                                                                                     \
        memcpy(&f_, (x), sizeof f_);                                                                   \
        (v) = __builtin_convertvector(f_, ln_v8d);                                                     \
    } while (0)
#define LN_TOTAL(t, v)                                                                                 \
    do {                                                                                               \
        (t) = 0;                                                                                       \
        for (int l_ = 0; l_ < LN_LANES; l_++) (t) += (v)[l_];                                          \
    } while (0)

__attribute__((target_clones("avx512f", "avx2", "default"))) static void layernorm_rows(void *ctx, int64_t begin,
                                                                                       int64_t end) {
    const layernorm_job *j = ctx;
    const int64_t cols = j->cols, body = cols / LN_LANES * LN_LANES;
    const float *restrict w = j->weight, *restrict b = j->bias;
    for (int64_t r = begin; r < end; r++) {
        const float *restrict x = j->x + r * cols;
        double *restrict y = j->y + r * cols;
        ln_v8d acc = {0}, v, wv, bv;
        for (int64_t c = 0; c < body; c += LN_LANES) {
            LN_LOAD(v, x + c);
            acc += v;
        }
        double sum, var;
        LN_TOTAL(sum, acc);
        for (int64_t c = body; c < cols; c++) sum += x[c];
        const double mean = sum / (double)cols;
        ln_v8d sq = {0};
        for (int64_t c = 0; c < body; c += LN_LANES) {
            LN_LOAD(v, x + c);
            v -= mean;
            memcpy(y + c, &v, sizeof v);
            sq += v * v;
        }
        LN_TOTAL(var, sq);
        for (int64_t c = body; c < cols; c++) {
            const double d = (double)x[c] - mean;
            y[c] = d;
            var += d * d;
        }
        const double rstd = 1.0 / sqrt(var / (double)cols + j->eps);
        for (int64_t c = 0; c < body; c += LN_LANES) {
            memcpy(&v, y + c, sizeof v);
            LN_LOAD(wv, w + c);
            LN_LOAD(bv, b + c);
            v = v * rstd * wv + bv;
            memcpy(y + c, &v, sizeof v);
        }
        for (int64_t c = body; c < cols; c++) y[c] = y[c] * rstd * (double)w[c] + (double)b[c];
        j->mean[r] = mean;
        j->rstd[r] = rstd;
    }
}

static int layernorm_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                               int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t rows = (int64_t)p[P_ROWS], cols = (int64_t)p[P_COLS];
    static const int OUTS[3] = {B_Y, B_MEAN, B_RSTD};
    for (int i = 0; i < 3; i++) {
        hn_ref *ref = &refs[OUTS[i]];
        ref->n = OUTS[i] == B_Y ? rows * cols : rows;
        ref->values = hn_ref_alloc_values(ref->n);
        snprintf(ref->method, sizeof ref->method, "full");
    }
    layernorm_job job = {bufs[B_X], bufs[B_WEIGHT], bufs[B_BIAS], refs[B_Y].values, refs[B_MEAN].values,
                         refs[B_RSTD].values, (double)(float)p[P_EPS], cols};
    /* a thread takes 2^17 elements at least */
    hn_ref_parallel(rows, 1 + ((int64_t)1 << 17) / cols, threads, layernorm_rows, &job);
    return 0;
}

static const char *const BENCH[] = {"rows=4096,cols=768", "rows=1024,cols=4096", NULL};

const hn_op hn_op_layernorm = {
    .name = "layernorm",
    .doc = "layer normalization over the last dimension, forward, with each row's mean and 1/std "
           "(torch.nn.functional.layer_norm; llm.c's layernorm_forward)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = layernorm_shape,
    .flop = layernorm_flop,
    .flop_of = layernorm_flop_of,
    .bytes = layernorm_bytes,
    .dims = layernorm_dims,
    .label = layernorm_label,
    .generate = layernorm_generate,
    .reference = layernorm_reference,
};
