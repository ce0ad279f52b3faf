/*
 * gemm/op.c: the general matrix multiply of BLAS, row-major, in float32: the
 * kernel every GPU programmer writes first (siboehm's SGEMM steps, Kernel
 * Tuner's matmul, CUTLASS's examples), checked as its authors mean it:
 *
 *   a  (m, k), or (k, m) when trans_a = "T"   dtype: float32, float16 or bfloat16
 *   b  (k, n), or (n, k) when trans_b = "T"   dtype
 *   c  (m, n)                                 float32, read (beta != 0) and written
 *
 *   c = alpha * op(a) op(b) + beta * c
 *
 * c is an in-out buffer: every launch (warm-up, checks, each timed sample) starts
 * from the generated c, restored outside the timed interval, so a kernel that
 * accumulates into c is timed and checked from the same state every time.
 *
 * float16 and bfloat16 inputs make the mixed-precision GEMM of tensor-core
 * kernels (half inputs, float accumulation and output): the reference reads
 * them as the floats they hold.
 *
 * Inputs are standard normal (so the product's scale is |alpha| sqrt(k)), a and
 * b rounded to their dtype. The
 * reference is fp64 on linear's multiply (linear_gemm_ref); a case costing more
 * than the budget is checked on a seeded sample of whole rows of c (the first,
 * the last and random ones). Baseline (cublas.c): cublasSgemm, plain FP32 math.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"

static const char *const TRANS[] = {"N", "T", NULL};
/* a's and b's dtype, by GEMM_DTYPE's index */
static const char *const DTYPES[] = {"float32", "float16", "bfloat16", NULL};
static const hn_dtype DTYPE_OF[] = {HN_DT_F32, HN_DT_F16, HN_DT_BF16};

static const hn_op_param PARAMS[] = {
    {"m", 'i', NULL, "rows of c (and of op(a))", NULL},
    {"n", 'i', NULL, "columns of c (and of op(b))", NULL},
    {"k", 'i', NULL, "the reduced dimension: columns of op(a), rows of op(b)", NULL},
    {"alpha", 'f', "1", "scale of the product", NULL},
    {"beta", 'f', "0", "scale of c's input (0: c's input does not count)", NULL},
    {"trans_a", 'c', "\"N\"", "N: a is stored (m, k); T: a is stored (k, m) and used transposed", TRANS},
    {"trans_b", 'c', "\"N\"", "N: b is stored (k, n); T: b is stored (n, k) and used transposed", TRANS},
    {"dtype", 'c', "\"float32\"", "a's and b's dtype (c is float32 whatever it is: a mixed-precision GEMM's)",
     DTYPES},
};

static const hn_op_buffer BUFFERS[] = {
    {"a", HN_DT_F32, HN_BUF_IN, "(m, k) [N] or (k, m) [T]"}, /* dtype: gemm_dtype */
    {"b", HN_DT_F32, HN_BUF_IN, "(k, n) [N] or (n, k) [T]"},
    {"c", HN_DT_F32, HN_BUF_INOUT, "(m, n)"},
};

void gemm_params(const double *p, gemm_dims *d) {
    d->m = (int)p[GEMM_M], d->n = (int)p[GEMM_N], d->k = (int)p[GEMM_K];
    d->alpha = (float)p[GEMM_ALPHA], d->beta = (float)p[GEMM_BETA];
    d->trans_a = p[GEMM_TRANS_A] == 1, d->trans_b = p[GEMM_TRANS_B] == 1;
    d->in_dtype = p[GEMM_DTYPE] >= 0 && p[GEMM_DTYPE] < 3 ? DTYPE_OF[(int)p[GEMM_DTYPE]] : HN_DT_F32;
}

/* a and b in the case's dtype; c float32. */
static hn_dtype gemm_dtype(const double *p, int buffer) {
    gemm_dims d;
    gemm_params(p, &d);
    return buffer == GEMM_B_C ? HN_DT_F32 : d.in_dtype;
}

static int gemm_shape(const double *p, int64_t *counts, hn_err *err) {
    for (int i = GEMM_M; i <= GEMM_K; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30 && p[i] == (double)(int)p[i]))
            return hn_errf(err, "gemm: %s = %g must be a whole number between 1 and 2^30", PARAMS[i].name, p[i]);
    for (int i = GEMM_ALPHA; i <= GEMM_BETA; i++)
        if (!isfinite(p[i]) || !isfinite((float)p[i]))
            return hn_errf(err, "gemm: %s = %g is not a finite float32", PARAMS[i].name, p[i]);
    for (int i = GEMM_TRANS_A; i <= GEMM_TRANS_B; i++)
        if (p[i] != 0 && p[i] != 1) return hn_errf(err, "gemm: %s = %g is not one of N (0), T (1)", PARAMS[i].name, p[i]);
    if (p[GEMM_DTYPE] != 0 && p[GEMM_DTYPE] != 1 && p[GEMM_DTYPE] != 2)
        return hn_errf(err, "gemm: dtype = %g is not one of float32 (0), float16 (1), bfloat16 (2)", p[GEMM_DTYPE]);
    /* The three matrices: (m, k), (k, n), (m, n). */
    static const int PAIRS[3][2] = {{GEMM_M, GEMM_K}, {GEMM_K, GEMM_N}, {GEMM_M, GEMM_N}};
    static const char *const NAMES[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        const double elems = p[PAIRS[i][0]] * p[PAIRS[i][1]];
        if (elems > 2147483647.0)
            return hn_errf(err, "gemm: %s would have %s * %s = %g * %g = %.0f elements (more than 2^31-1; the "
                                "kernels index with int)",
                           NAMES[i], PARAMS[PAIRS[i][0]].name, PARAMS[PAIRS[i][1]].name, p[PAIRS[i][0]],
                           p[PAIRS[i][1]], elems);
        counts[i] = (int64_t)elems;
    }
    return 0;
}

/* 2 m n k, the figure every GEMM is quoted in (cuBLAS's, CUTLASS's); the
 * scaling by alpha and beta (3 m n at most) is left out. */
static double gemm_flop(const double *p) {
    return 2.0 * p[GEMM_M] * p[GEMM_N] * p[GEMM_K];
}

/* a and b read once (in their dtype), c written once and read too when beta
 * counts. */
static double gemm_bytes(const double *p) {
    gemm_dims d;
    gemm_params(p, &d);
    const double mn = p[GEMM_M] * p[GEMM_N], in = (double)hn_dtype_size(d.in_dtype);
    return in * (p[GEMM_M] * p[GEMM_K] + p[GEMM_K] * p[GEMM_N]) + 4.0 * (p[GEMM_BETA] != 0 ? 2 : 1) * mn;
}

static int gemm_dims_of(const double *p, int buffer, int64_t dims[4]) {
    gemm_dims d;
    gemm_params(p, &d);
    switch (buffer) {
    case GEMM_B_A: dims[0] = d.trans_a ? d.k : d.m, dims[1] = d.trans_a ? d.m : d.k; return 2;
    case GEMM_B_B: dims[0] = d.trans_b ? d.n : d.k, dims[1] = d.trans_b ? d.k : d.n; return 2;
    default: dims[0] = d.m, dims[1] = d.n; return 2;
    }
}

/* "256x512x128", then ", NT" when either operand is transposed, and alpha and
 * beta where they are not 1 and 0. */
static void gemm_label(const double *p, char *buf, size_t size) {
    gemm_dims d;
    gemm_params(p, &d);
    int len = snprintf(buf, size, "%dx%dx%d", d.m, d.n, d.k);
    if ((d.trans_a || d.trans_b) && len >= 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, ", %c%c", d.trans_a ? 'T' : 'N', d.trans_b ? 'T' : 'N');
    if (d.alpha != 1.0f && len >= 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, ", alpha:%g", (double)d.alpha);
    if (d.beta != 0.0f && len >= 0 && (size_t)len < size)
        len += snprintf(buf + len, size - (size_t)len, ", beta:%g", (double)d.beta);
    if (d.in_dtype != HN_DT_F32 && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", %s", d.in_dtype == HN_DT_F16 ? "fp16" : "bf16");
}

/* x (n) standard normal in dtype t: float32 values rounded to half or bfloat16
 * (to nearest even, as the device's conversion would). */
static void fill_randn(void *x, int64_t n, hn_dtype t, uint64_t seed) {
    if (t == HN_DT_F32) {
        hn_fill_randn_f32(x, n, seed);
        return;
    }
    float *f = xmalloc(sizeof *f * (size_t)(n ? n : 1));
    hn_fill_randn_f32(f, n, seed);
    uint16_t *h = x;
    for (int64_t i = 0; i < n; i++) h[i] = t == HN_DT_F16 ? hn_float_to_half(f[i]) : hn_float_to_bf16(f[i]);
    free(f);
}

/* A float32 copy of x (n in dtype t), or NULL when x is float32 already. */
static float *widened(const void *x, int64_t n, hn_dtype t) {
    if (t == HN_DT_F32) return NULL;
    float *f = xmalloc(sizeof *f * (size_t)(n ? n : 1));
    const uint16_t *h = x;
    for (int64_t i = 0; i < n; i++) f[i] = t == HN_DT_F16 ? hn_half_to_float(h[i]) : hn_bf16_to_float(h[i]);
    return f;
}

static void gemm_generate(const double *p, void *const *bufs, uint64_t seed) {
    int64_t counts[GEMM_N_BUFFERS];
    if (gemm_shape(p, counts, NULL) != 0) return;
    gemm_dims d;
    gemm_params(p, &d);
    fill_randn(bufs[GEMM_B_A], counts[GEMM_B_A], d.in_dtype, seed * 3 + 1);
    fill_randn(bufs[GEMM_B_B], counts[GEMM_B_B], d.in_dtype, seed * 3 + 2);
    hn_fill_randn_f32(bufs[GEMM_B_C], counts[GEMM_B_C], seed * 3 + 3);
}

/* Rows `rows` (n_rows of them) of op(a), (n_rows, k) row-major. */
static float *gather_rows(const float *a, int trans_a, int m, int k, const int64_t *rows, int64_t n_rows) {
    float *out = xmalloc(sizeof *out * (size_t)(n_rows * k));
    for (int64_t r = 0; r < n_rows; r++) {
        if (!trans_a) {
            memcpy(out + r * k, a + rows[r] * k, sizeof *out * (size_t)k);
        } else {
            for (int i = 0; i < k; i++) out[r * k + i] = a[(int64_t)i * m + rows[r]];
        }
    }
    return out;
}

static int gemm_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                          int threads, hn_err *err) {
    (void)err;
    gemm_dims d;
    gemm_params(p, &d);
    /* half and bfloat16 inputs as the floats they hold (exact) */
    float *wa = widened(bufs[GEMM_B_A], (int64_t)d.m * d.k, d.in_dtype);
    float *wb = widened(bufs[GEMM_B_B], (int64_t)d.k * d.n, d.in_dtype);
    const float *a = wa ? wa : bufs[GEMM_B_A], *b = wb ? wb : bufs[GEMM_B_B], *c0 = bufs[GEMM_B_C];
    hn_ref *ref = &refs[GEMM_B_C];
    int64_t n_rows;
    int64_t *rows = linear_sample_rows(d.m, 2.0 * d.n * d.k, budget_gflop, seed, &n_rows);
    float *as = rows ? gather_rows(a, d.trans_a, d.m, d.k, rows, n_rows) : NULL;
    ref->n = n_rows * d.n;
    ref->values = hn_ref_alloc_values(ref->n);
    linear_gemm_ref(ref->values, as ? as : a, as ? 0 : d.trans_a, b, d.trans_b, (int)n_rows, d.n, d.k, threads);
    const double alpha = d.alpha, beta = d.beta;
    for (int64_t r = 0; r < n_rows; r++) {
        const int64_t row = rows ? rows[r] : r;
        double *v = ref->values + r * d.n;
        const float *c = c0 + row * d.n;
        /* beta = 0: c's input does not count (BLAS's rule, so a NaN there would not either) */
        if (beta != 0)
            for (int j = 0; j < d.n; j++) v[j] = alpha * v[j] + beta * (double)c[j];
        else if (alpha != 1)
            for (int j = 0; j < d.n; j++) v[j] *= alpha;
    }
    linear_ref_rows(ref, rows, n_rows, d.n, d.m);
    free(as);
    free(rows);
    free(wa);
    free(wb);
    return 0;
}

static const char *const BENCH[] = {
    "m=1024,n=1024,k=1024",
    "m=512,n=2048,k=256,trans_b=T",
    "m=1000,n=999,k=997,trans_a=T,beta=0.5",
    "m=1024,n=1024,k=1024,dtype=float16",
    NULL,
};

const hn_op hn_op_gemm = {
    .name = "gemm",
    .doc = "general matrix multiply, row-major: c = alpha op(a) op(b) + beta c (BLAS's SGEMM; torch.addmm)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .baselines = gemm_baselines,
    .n_baselines = GEMM_N_BASELINES,
    .bench_cases = BENCH,
    .dtype = gemm_dtype,
    .shape = gemm_shape,
    .flop = gemm_flop,
    .bytes = gemm_bytes,
    .dims = gemm_dims_of,
    .label = gemm_label,
    .generate = gemm_generate,
    .reference = gemm_reference,
};
