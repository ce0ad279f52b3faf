/*
 * test_attention_ref.c: the attention operator's description and fp64
 * reference (harness/ops/attention): counts, FLOP (the causal mask's exact
 * pairs), bytes, dims, labels and shape errors; the generator (each query
 * row's score offset, 96, 0, -120, 32 in turn); the reference against a loop
 * written here from the definition (all scores of a row, the max subtracted,
 * libm exp; out within 1e-12: scores of a few hundred at scale 2.5 lose
 * 1e-14 to the order of their sums) on odd and 1-sized shapes, query blocks
 * and key blocks that do not divide t and s, the causal mask with s < t,
 * s = t and s > t, one thread against two; a sampled reference (the budget
 * exceeded) against the full one.
 */
#include <stdint.h>

#include "hn_test.h"
#include "ops/op.h"

static const hn_op *op;
enum { P_BATCH, P_HEADS, P_T, P_S, P_D, P_CAUSAL, P_SCALE };
enum { B_Q, B_K, B_V, B_OUT, B_LSE };

static void set(double *p, int batch, int heads, int t, int s, int d, int causal, double scale) {
    p[P_BATCH] = batch, p[P_HEADS] = heads, p[P_T] = t, p[P_S] = s, p[P_D] = d, p[P_CAUSAL] = causal;
    p[P_SCALE] = (float)(scale > 0 ? scale : 1.0 / sqrt(d));
}

static void test_description(void) {
    double p[8];
    int64_t counts[5], dims[4];
    hn_err err;
    CHECK_INT(op->n_params, 7);
    CHECK_INT(op->n_buffers, 5);
    CHECK_STR(op->params[P_SCALE].name, "scale");
    CHECK_STR(op->buffers[B_LSE].name, "lse");
    set(p, 2, 3, 5, 7, 16, 0, 0);
    CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
    CHECK_INT(counts[B_Q], 2 * 3 * 5 * 16);
    CHECK_INT(counts[B_K], 2 * 3 * 7 * 16);
    CHECK_INT(counts[B_V], 2 * 3 * 7 * 16);
    CHECK_INT(counts[B_OUT], 2 * 3 * 5 * 16);
    CHECK_INT(counts[B_LSE], 2 * 3 * 5);
    CHECK_NEAR(op->flop(p), 4.0 * 16 * 6 * 5 * 7, 0);
    CHECK_NEAR(op->flop_of(p, B_LSE), 2.0 * 16 * 6 * 5 * 7, 0);
    CHECK_NEAR(op->bytes(p), 4.0 * 6 * (2 * 5 * 16 + 2 * 7 * 16 + 5), 0);
    /* causal: row i sees min(i + 1, s) keys: t <= s: t (t + 1) / 2; t > s: s (s + 1) / 2 + (t - s) s */
    p[P_CAUSAL] = 1;
    CHECK_NEAR(op->flop(p), 4.0 * 16 * 6 * 15, 0);
    p[P_T] = 9, p[P_S] = 4;
    CHECK_NEAR(op->flop(p), 4.0 * 16 * 6 * (10 + 5 * 4), 0);
    CHECK_INT(op->dims(p, B_K, dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 4 && dims[3] == 16);
    CHECK_INT(op->dims(p, B_LSE, dims), 3);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 9);
    char label[96];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "2x3, t:9 s:4 d:16, causal");
    p[P_S] = 9, p[P_CAUSAL] = 0, p[P_SCALE] = 0.5;
    op->label(p, label, sizeof label);
    CHECK_STR(label, "2x3, t:9 d:16, scale:0.5");
    /* errors */
    set(p, 1, 1, 4, 4, 0, 0, 1);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: d = 0 must be a whole number between 1 and 2^30");
    set(p, 1, 1, 4, 4, 8, 2, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: causal = 2 must be 0");
    set(p, 1, 1, 4, 4, 8, 0, 0);
    p[P_SCALE] = NAN;
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: scale = nan is not a finite float32");
    set(p, 64, 64, 1 << 10, 4, 1 << 10, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: q and out would have batch * heads * t * d = 4294967296 elements");
    set(p, 1, 1 << 20, 1 << 11, 1, 1, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: q and out would have");
    set(p, 1, 1, 1, 1 << 28, 16, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "attention: k and v would have batch * heads * s * d");
}

static void **make_bufs(const double *p, uint64_t seed) {
    int64_t counts[5];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    void **bufs = xcalloc(5, sizeof *bufs);
    for (int i = 0; i < 5; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, 4);
    op->generate(p, bufs, seed);
    return bufs;
}

static void free_bufs(void **bufs) {
    for (int i = 0; i < 5; i++) free(bufs[i]);
    free(bufs);
}

/* The score of query row r (global) and key j of its slice, in double. */
static double score(const double *p, void *const *bufs, int64_t r, int64_t j) {
    const int64_t t = (int64_t)p[P_T], s = (int64_t)p[P_S], d = (int64_t)p[P_D];
    const float *q = (const float *)bufs[B_Q] + r * d, *k = (const float *)bufs[B_K] + ((r / t) * s + j) * d;
    double x = 0;
    for (int64_t c = 0; c < d; c++) x += (double)q[c] * (double)k[c];
    return (double)(float)p[P_SCALE] * x;
}

static void test_generator(void) {
    double p[8];
    set(p, 1, 2, 8, 50, 16, 0, 0);
    void **a = make_bufs(p, 3), **b = make_bufs(p, 3);
    CHECK(memcmp(a[B_Q], b[B_Q], 8 * 16 * 2 * 4) == 0 && memcmp(a[B_V], b[B_V], 50 * 16 * 2 * 4) == 0);
    /* each row's mean score is its offset: the rest of a score is about N(0, 1 + (offset / 64)^2) */
    static const double OFFSET[4] = {96, 0, -120, 32};
    for (int64_t r = 0; r < 16; r++) {
        double mean = 0, mx = -1e300;
        for (int64_t j = 0; j < 50; j++) {
            const double x = score(p, a, r, j);
            mean += x / 50;
            mx = x > mx ? x : mx;
        }
        CHECK_MSG(fabs(mean - OFFSET[r % 4]) < 2, "row %lld: mean score %g, offset %g", (long long)r, mean, OFFSET[r % 4]);
        if (r % 4 == 0) CHECK_MSG(mx > 89, "row %lld: max score %g: exp would not overflow float", (long long)r, mx);
    }
    free_bufs(a), free_bufs(b);
}

static void check_against_loop(int batch, int heads, int t, int s, int d, int causal, double scale, int threads) {
    double p[8];
    set(p, batch, heads, t, s, d, causal, scale);
    hn_err err;
    void **bufs = make_bufs(p, 11);
    hn_ref refs[5] = {{0}};
    CHECK(op->reference(p, bufs, refs, 1e9, 11, threads, &err) == 0);
    CHECK(refs[B_OUT].n == (int64_t)batch * heads * t * d && refs[B_OUT].index == NULL);
    CHECK(refs[B_LSE].n == (int64_t)batch * heads * t && refs[B_LSE].index == NULL);
    CHECK(refs[B_Q].values == NULL && refs[B_V].values == NULL);
    double *x = xmalloc(sizeof *x * (size_t)s), worst_out = 0, worst_lse = 0;
    const float *v = bufs[B_V];
    for (int64_t r = 0; r < (int64_t)batch * heads * t; r++) {
        const int64_t i = r % t, n = causal && i + 1 < s ? i + 1 : s;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; j++) x[j] = score(p, bufs, r, j), m = x[j] > m ? x[j] : m;
        for (int64_t j = 0; j < n; j++) l += exp(x[j] - m);
        for (int64_t c = 0; c < d; c++) {
            double o = 0;
            for (int64_t j = 0; j < n; j++) o += exp(x[j] - m) / l * v[((r / t) * s + j) * d + c];
            const double e = fabs(refs[B_OUT].values[r * d + c] - o);
            worst_out = e > worst_out ? e : worst_out;
        }
        const double e = fabs(refs[B_LSE].values[r] - (m + log(l))) / (1 + fabs(m));
        worst_lse = e > worst_lse ? e : worst_lse;
    }
    CHECK_MSG(worst_out < 1e-12 && worst_lse < 1e-14, "%dx%d t %d s %d d %d causal %d: worst out %g, lse %g", batch,
              heads, t, s, d, causal, worst_out, worst_lse);
    free(x);
    for (int i = 0; i < 5; i++) hn_ref_free(&refs[i]);
    free_bufs(bufs);
}

static void test_reference(void) {
    check_against_loop(1, 1, 1, 1, 1, 0, 0, 1);
    check_against_loop(1, 1, 1, 1, 1, 1, 0, 1);
    check_against_loop(2, 3, 5, 7, 3, 1, 0.7, 1);
    check_against_loop(1, 2, 37, 300, 13, 0, 0, 2);  /* two query blocks, three key blocks */
    check_against_loop(1, 1, 40, 20, 8, 1, 0, 1);    /* causal, t > s: rows past s see every key */
    check_against_loop(1, 1, 300, 300, 64, 1, 0, 2); /* causal, several key blocks */
    check_against_loop(1, 1, 33, 200, 80, 1, 0, 2);  /* causal, t < s */
    check_against_loop(3, 1, 17, 129, 128, 0, 2.5, 2);
}

/* Beyond the budget, whole rows are sampled (the first, the last, random
 * others): their values are the full reference's. */
static void test_sampled(void) {
    double p[8];
    set(p, 2, 2, 100, 64, 16, 1, 0);
    hn_err err;
    void **bufs = make_bufs(p, 5);
    hn_ref full[5] = {{0}}, part[5] = {{0}};
    CHECK(op->reference(p, bufs, full, 1e9, 5, 2, &err) == 0);
    CHECK(op->reference(p, bufs, part, 1e-6, 5, 2, &err) == 0);
    CHECK(part[B_OUT].index != NULL && part[B_LSE].index != NULL);
    CHECK(part[B_LSE].n >= 16 && part[B_LSE].n < 400 && part[B_OUT].n == part[B_LSE].n * 16);
    CHECK_CONTAINS(part[B_LSE].method, "sampled");
    CHECK(part[B_LSE].index[0] == 0 && part[B_LSE].index[part[B_LSE].n - 1] == 399);
    for (int b = B_OUT; b <= B_LSE; b++)
        for (int64_t i = 0; i < part[b].n; i++)
            CHECK_MSG(part[b].values[i] == full[b].values[part[b].index[i]], "%s sample %lld",
                      b == B_OUT ? "out" : "lse", (long long)i);
    for (int i = 0; i < 5; i++) hn_ref_free(&full[i]), hn_ref_free(&part[i]);
    free_bufs(bufs);
}

int main(void) {
    op = hn_op_find("attention");
    CHECK(op != NULL);
    if (!op) return hn_test_exit();
    test_description();
    test_generator();
    test_reference();
    test_sampled();
    return hn_test_exit();
}
