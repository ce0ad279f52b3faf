/*
 * histogram/op.c: counts of values in bins, PMPP chapter 9's histogram (atomics,
 * privatization, aggregation): torch.bincount(x, minlength=bins).
 *
 *   x     (n)     int32, each in [0, bins)
 *   hist  (bins)  int32   hist[b] = the number of i with x[i] == b
 *
 * Exact: counts are compared exactly (int32). x is skewed so that atomics
 * contend as on real data: a third of the values fall in bin 0 (runs of equal
 * values, which aggregation kernels exploit), the rest are uniform. The
 * reference counts on threads into private histograms, added in order.
 */
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"n", 'i', NULL, "values", NULL},
    {"bins", 'i', "256", "bins (values lie in [0, bins))", NULL},
};

enum { P_N, P_BINS };
enum { B_X, B_HIST };

static const hn_op_buffer BUFFERS[] = {
    {"x", HN_DT_I32, HN_BUF_IN, "(n)"},
    {"hist", HN_DT_I32, HN_BUF_OUT, "(bins)"},
};

static int histogram_shape(const double *p, int64_t *counts, hn_err *err) {
    if (!(p[P_N] >= 1 && p[P_N] <= 2147483647.0 && p[P_N] == (double)(int64_t)p[P_N]))
        return hn_errf(err, "histogram: n = %g must be a whole number between 1 and 2^31-1", p[P_N]);
    if (!(p[P_BINS] >= 1 && p[P_BINS] <= (1 << 24) && p[P_BINS] == (double)(int)p[P_BINS]))
        return hn_errf(err, "histogram: bins = %g must be a whole number between 1 and 2^24", p[P_BINS]);
    counts[B_X] = (int64_t)p[P_N];
    counts[B_HIST] = (int64_t)p[P_BINS];
    return 0;
}

/* One increment a value. */
static double histogram_flop(const double *p) {
    return p[P_N];
}

static double histogram_bytes(const double *p) {
    return 4.0 * (p[P_N] + p[P_BINS]);
}

static int histogram_dims(const double *p, int buffer, int64_t dims[4]) {
    dims[0] = (int64_t)(buffer == B_X ? p[P_N] : p[P_BINS]);
    return 1;
}

static void histogram_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "n:%lld, bins:%d", (long long)p[P_N], (int)p[P_BINS]);
}

/* A third of the values 0, in runs of 1 to 16; the rest uniform in [0, bins). */
static void histogram_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t n = (int64_t)p[P_N];
    const uint64_t bins = (uint64_t)p[P_BINS];
    int32_t *x = bufs[B_X];
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 7;
    for (int64_t i = 0; i < n;) {
        if (hn_rand_below(&s, 3) == 0) {
            for (int64_t run = 1 + (int64_t)hn_rand_below(&s, 16); run > 0 && i < n; run--) x[i++] = 0;
        } else {
            x[i++] = (int32_t)hn_rand_below(&s, bins);
        }
    }
}

enum { HG_CHUNK = 1 << 18 };

typedef struct {
    const int32_t *x;
    int64_t *priv; /* per chunk: bins counts */
    int64_t n, bins;
} histogram_job;

static void histogram_chunks(void *ctx, int64_t begin, int64_t end) {
    const histogram_job *j = ctx;
    for (int64_t ch = begin; ch < end; ch++) {
        int64_t *h = j->priv + ch * j->bins;
        memset(h, 0, sizeof *h * (size_t)j->bins);
        const int64_t hi = (ch + 1) * HG_CHUNK < j->n ? (ch + 1) * HG_CHUNK : j->n;
        for (int64_t i = ch * HG_CHUNK; i < hi; i++) h[j->x[i]]++;
    }
}

static int histogram_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                               int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t n = (int64_t)p[P_N], bins = (int64_t)p[P_BINS];
    const int64_t chunks = (n + HG_CHUNK - 1) / HG_CHUNK;
    histogram_job job = {bufs[B_X], xmalloc(sizeof(int64_t) * (size_t)(chunks * bins)), n, bins};
    hn_ref_parallel(chunks, 1, threads, histogram_chunks, &job);
    hn_ref *ref = &refs[B_HIST];
    ref->n = bins;
    ref->values = hn_ref_alloc_values(bins);
    snprintf(ref->method, sizeof ref->method, "full");
    for (int64_t b = 0; b < bins; b++) {
        int64_t t = 0;
        for (int64_t ch = 0; ch < chunks; ch++) t += job.priv[ch * bins + b];
        ref->values[b] = (double)t;
    }
    free(job.priv);
    return 0;
}

static const char *const BENCH[] = {"n=16777216", "n=1000000,bins=4096", NULL};

const hn_op hn_op_histogram = {
    .name = "histogram",
    .doc = "counts of int32 values in bins [0, bins) (torch.bincount(x, minlength=bins))",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = histogram_shape,
    .flop = histogram_flop,
    .bytes = histogram_bytes,
    .dims = histogram_dims,
    .label = histogram_label,
    .generate = histogram_generate,
    .reference = histogram_reference,
};
