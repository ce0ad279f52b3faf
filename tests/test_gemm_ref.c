/*
 * test_gemm_ref.c: the gemm operator's description and fp64 reference
 * (harness/ops/gemm/): counts, FLOP and bytes, labels and logical shapes; the
 * reference in all four transpose combinations, with alpha and beta (beta 0
 * ignoring c's input, even a NaN there), on odd and 1-sized shapes against a
 * loop written here from the definition; and the row-sampled reference against
 * the full one (transposed a included: its rows are columns of the stored a).
 * The kernels run on the emulator in tests/test_gemm.sh.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>

#include "hn_test.h"
#include "ops/gemm/gemm.h"
#include "ops/op.h"

static const hn_op *op;

static void params(double *p, int m, int n, int k, double alpha, double beta, int ta, int tb) {
    p[GEMM_M] = m, p[GEMM_N] = n, p[GEMM_K] = k, p[GEMM_ALPHA] = alpha, p[GEMM_BETA] = beta;
    p[GEMM_TRANS_A] = ta, p[GEMM_TRANS_B] = tb;
}

static void test_description(void) {
    double p[8];
    int64_t counts[4], dims[4];
    hn_err err;
    params(p, 64, 32, 100, 1, 0, 1, 0);
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[GEMM_B_A], 64 * 100);
    CHECK_INT(counts[GEMM_B_B], 100 * 32);
    CHECK_INT(counts[GEMM_B_C], 64 * 32);
    CHECK_NEAR(op->flop(p), 2.0 * 64 * 32 * 100, 0);
    CHECK_NEAR(op->bytes(p), 4.0 * (64 * 100 + 100 * 32 + 64 * 32), 0);
    p[GEMM_BETA] = 0.5;
    CHECK_NEAR(op->bytes(p), 4.0 * (64 * 100 + 100 * 32 + 2 * 64 * 32), 0); /* c read too */
    CHECK_INT(op->dims(p, GEMM_B_A, dims), 2);
    CHECK(dims[0] == 100 && dims[1] == 64); /* stored (k, m) */
    CHECK_INT(op->dims(p, GEMM_B_B, dims), 2);
    CHECK(dims[0] == 100 && dims[1] == 32);
    char label[128];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "64x32x100, TN, beta:0.5");
    params(p, 3, 4, 5, 1, 0, 0, 0);
    op->label(p, label, sizeof label);
    CHECK_STR(label, "3x4x5");
    params(p, 3, 4, 5, -2, 1, 0, 1);
    op->label(p, label, sizeof label);
    CHECK_STR(label, "3x4x5, NT, alpha:-2, beta:1");
    /* shape errors name the parameter */
    params(p, 0, 4, 5, 1, 0, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "gemm: m = 0");
    params(p, 3, 4, 5, 1, NAN, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "beta");
    params(p, 100000, 100000, 5, 1, 0, 0, 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "c would have m * n");
}

static void **make_bufs(const double *p, int64_t *counts, uint64_t seed) {
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    void **bufs = xcalloc(GEMM_N_BUFFERS, sizeof *bufs);
    for (int i = 0; i < GEMM_N_BUFFERS; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, 4);
    op->generate(p, bufs, seed);
    return bufs;
}

static void free_bufs(void **bufs, hn_ref *refs) {
    for (int i = 0; i < GEMM_N_BUFFERS; i++) {
        free(bufs[i]);
        if (refs) hn_ref_free(&refs[i]);
    }
    free(bufs);
}

/* c = alpha op(a) op(b) + beta c, from the definition. */
static double want_at(const double *p, void *const *bufs, int i, int j) {
    const int m = (int)p[GEMM_M], n = (int)p[GEMM_N], k = (int)p[GEMM_K];
    const int ta = p[GEMM_TRANS_A] == 1, tb = p[GEMM_TRANS_B] == 1;
    const float *a = bufs[GEMM_B_A], *b = bufs[GEMM_B_B], *c = bufs[GEMM_B_C];
    double s = 0;
    for (int q = 0; q < k; q++)
        s += (double)(ta ? a[(int64_t)q * m + i] : a[(int64_t)i * k + q]) *
             (double)(tb ? b[(int64_t)j * k + q] : b[(int64_t)q * n + j]);
    const double alpha = (float)p[GEMM_ALPHA], beta = (float)p[GEMM_BETA];
    return beta == 0 ? alpha * s : alpha * s + beta * (double)c[(int64_t)i * n + j];
}

static void test_reference(void) {
    static const int SHAPES[][3] = {{1, 1, 1}, {1, 7, 3}, {5, 1, 17}, {9, 13, 1}, {33, 31, 65}, {70, 3, 200}};
    static const double AB[][2] = {{1, 0}, {-1.5, 0}, {1, 0.75}, {0.5, -2}};
    hn_err err;
    for (size_t s = 0; s < HN_ARRAY_LEN(SHAPES); s++)
        for (int t = 0; t < 4; t++)
            for (size_t ab = 0; ab < HN_ARRAY_LEN(AB); ab++) {
                double p[8];
                int64_t counts[4];
                params(p, SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], AB[ab][0], AB[ab][1], t & 1, t >> 1);
                void **bufs = make_bufs(p, counts, 11 + s);
                if (AB[ab][1] == 0) ((float *)bufs[GEMM_B_C])[0] = NAN; /* beta 0: c's input does not count */
                hn_ref refs[4] = {{0}};
                CHECK(op->reference(p, bufs, refs, 1e9, 11, 2, &err) == 0);
                const hn_ref *r = &refs[GEMM_B_C];
                CHECK(r->index == NULL && r->n == counts[GEMM_B_C]);
                CHECK_STR(r->method, "full");
                double worst = 0;
                for (int i = 0; i < SHAPES[s][0]; i++)
                    for (int j = 0; j < SHAPES[s][1]; j++) {
                        const double d = fabs(r->values[(int64_t)i * SHAPES[s][1] + j] - want_at(p, bufs, i, j));
                        if (!(d <= worst)) worst = d;
                    }
                CHECK_MSG(worst <= 1e-9, "%dx%dx%d trans %d alpha %g beta %g: max diff %g", SHAPES[s][0],
                          SHAPES[s][1], SHAPES[s][2], t, AB[ab][0], AB[ab][1], worst);
                free_bufs(bufs, refs);
            }
}

static void test_sampled(void) {
    hn_err err;
    for (int ta = 0; ta < 2; ta++) {
        double p[8];
        int64_t counts[4];
        params(p, 300, 37, 50, 2, 0.5, ta, 1);
        void **bufs = make_bufs(p, counts, 3);
        hn_ref full[4] = {{0}}, part[4] = {{0}};
        CHECK(op->reference(p, bufs, full, 1e9, 3, 2, &err) == 0);
        CHECK(op->reference(p, bufs, part, 1e-4, 3, 2, &err) == 0);
        const hn_ref *r = &part[GEMM_B_C];
        CHECK(r->index != NULL);
        if (!r->index) continue;
        CHECK_CONTAINS(r->method, "sampled");
        CHECK(r->n % 37 == 0 && r->n >= 16 * 37 && r->n < counts[GEMM_B_C]);
        CHECK_INT(r->index[0], 0);
        CHECK_INT(r->index[r->n - 1], 300 * 37 - 1);
        for (int64_t q = 0; q < r->n; q++)
            if (!(fabs(r->values[q] - full[GEMM_B_C].values[r->index[q]]) <= 1e-9)) {
                CHECK_MSG(0, "trans_a %d: sampled value %lld differs", ta, (long long)q);
                break;
            }
        hn_ref_free(&part[GEMM_B_C]);
        free_bufs(bufs, full);
    }
}

int main(void) {
    op = hn_op_find("gemm");
    CHECK(op != NULL);
    if (!op) return hn_test_exit();
    test_description();
    test_reference();
    test_sampled();
    return hn_test_exit();
}
