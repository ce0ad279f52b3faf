/*
 * test_gemm_ref.c: the gemm operator's description and fp64 reference
 * (harness/ops/gemm/): counts, FLOP and bytes, labels and logical shapes; the
 * reference in all four transpose combinations, with alpha and beta (beta 0
 * ignoring c's input, even a NaN there), on odd and 1-sized shapes against a
 * loop written here from the definition; and the row-sampled reference against
 * the full one (transposed a included: its rows are columns of the stored a).
 * Also float16 and bfloat16: the conversions (every pattern, ties to even,
 * overflow) and the inputs in those types. The kernels run on the emulator in
 * tests/test_gemm.sh.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hn_test.h"
#include "ops/gemm/gemm.h"
#include "ops/op.h"

static const hn_op *op;

static void params(double *p, int m, int n, int k, double alpha, double beta, int ta, int tb) {
    p[GEMM_M] = m, p[GEMM_N] = n, p[GEMM_K] = k, p[GEMM_ALPHA] = alpha, p[GEMM_BETA] = beta;
    p[GEMM_TRANS_A] = ta, p[GEMM_TRANS_B] = tb, p[GEMM_DTYPE] = 0;
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

/* hn_half_to_float on every pattern against the format's definition; every
 * finite half back to itself through float; each midpoint between neighbours
 * to the even one, a float above it up; overflow to infinity at 65520. The same
 * for bfloat16 (a float32's top half). */
static void test_conversions(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        const int exp = h >> 10 & 0x1f, man = h & 0x3ff;
        const double sign = h & 0x8000 ? -1 : 1;
        const float f = hn_half_to_float((uint16_t)h);
        if (exp == 0x1f) {
            bad += man ? !isnan(f) : !(isinf(f) && (f < 0) == (sign < 0));
            continue;
        }
        const double want = sign * (exp ? ldexp(1024 + man, exp - 25) : ldexp(man, -24));
        bad += f != want || (f == 0 && !!signbit(f) != (sign < 0));
        bad += hn_float_to_half(f) != h; /* round trip */
    }
    CHECK_MSG(bad == 0, "%d half patterns convert wrongly", bad);
    bad = 0;
    for (uint32_t h = 0; h < 0x7bff; h++) { /* positive finite neighbours h, h + 1 */
        const float lo = hn_half_to_float((uint16_t)h), hi = hn_half_to_float((uint16_t)(h + 1));
        const float mid = (float)(((double)lo + hi) / 2); /* exact: 12 significant bits */
        bad += hn_float_to_half(mid) != (h & 1 ? h + 1 : h);
        bad += hn_float_to_half(nextafterf(mid, INFINITY)) != h + 1;
        bad += hn_float_to_half(-nextafterf(mid, 0)) != (0x8000 | h);
    }
    CHECK_MSG(bad == 0, "%d half midpoints round wrongly", bad);
    CHECK_INT(hn_float_to_half(65520.0f), 0x7c00);
    CHECK_INT(hn_float_to_half(nextafterf(65520.0f, 0)), 0x7bff);
    CHECK_INT(hn_float_to_half(-1e30f), 0xfc00);
    CHECK(isnan(hn_half_to_float(hn_float_to_half(NAN))));
    CHECK_INT(hn_float_to_half(0x1p-25f), 0);     /* half the smallest subnormal: a tie, to 0 */
    CHECK_INT(hn_float_to_half(0x1.8p-24f), 2);   /* 1.5 steps: a tie, to 2 */

    bad = 0;
    for (uint32_t h = 0; h < 0x10000; h++) {
        const float f = hn_bf16_to_float((uint16_t)h);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        bad += u != h << 16;
        if (!isnan(f)) bad += hn_float_to_bf16(f) != h;
        else bad += !isnan(hn_bf16_to_float(hn_float_to_bf16(f)));
    }
    for (uint32_t h = 0; h < 0x7f7f; h++) {
        const float lo = hn_bf16_to_float((uint16_t)h), hi = hn_bf16_to_float((uint16_t)(h + 1));
        const float mid = (float)(((double)lo + hi) / 2);
        bad += hn_float_to_bf16(mid) != (h & 1 ? h + 1 : h);
        bad += hn_float_to_bf16(nextafterf(mid, INFINITY)) != h + 1;
    }
    CHECK_MSG(bad == 0, "%d bfloat16 conversions wrong", bad);
    CHECK_INT(hn_float_to_bf16(3.4e38f), 0x7f80); /* above the largest bfloat16's midpoint: infinity */
}

/* float16 and bfloat16 inputs: a and b are stored 2 bytes an element, hold
 * standard-normal values rounded to their type, and the reference is the
 * definition on the values they hold. */
static void test_half_inputs(void) {
    hn_err err;
    for (int dt = 1; dt <= 2; dt++) {
        double p[8];
        int64_t counts[4];
        params(p, 9, 11, 13, 1, 0.5, dt == 1, 1);
        p[GEMM_DTYPE] = dt;
        const hn_dtype want = dt == 1 ? HN_DT_F16 : HN_DT_BF16;
        CHECK(hn_op_dtype(op, p, GEMM_B_A) == want && hn_op_dtype(op, p, GEMM_B_B) == want);
        CHECK(hn_op_dtype(op, p, GEMM_B_C) == HN_DT_F32);
        CHECK_NEAR(op->bytes(p), 2.0 * (9 * 13 + 13 * 11) + 4.0 * 2 * 9 * 11, 0);
        char label[128];
        op->label(p, label, sizeof label);
        CHECK_STR(label, dt == 1 ? "9x11x13, TT, beta:0.5, fp16" : "9x11x13, NT, beta:0.5, bf16");
        CHECK(op->shape(p, counts, &err) == 0);
        void **bufs = xcalloc(GEMM_N_BUFFERS, sizeof *bufs);
        for (int i = 0; i < GEMM_N_BUFFERS; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, 4);
        op->generate(p, bufs, 5);
        /* the values: normal-looking, in the type's grid, not all equal */
        const uint16_t *a16 = bufs[GEMM_B_A];
        double sum2 = 0;
        for (int64_t e = 0; e < counts[GEMM_B_A]; e++) {
            const double v = dt == 1 ? hn_half_to_float(a16[e]) : hn_bf16_to_float(a16[e]);
            sum2 += v * v;
        }
        CHECK(sum2 / (double)counts[GEMM_B_A] > 0.3 && sum2 / (double)counts[GEMM_B_A] < 3);
        /* the reference against the definition on widened copies */
        float *wa = xmalloc(sizeof *wa * (size_t)counts[GEMM_B_A]), *wb = xmalloc(sizeof *wb * (size_t)counts[GEMM_B_B]);
        for (int64_t e = 0; e < counts[GEMM_B_A]; e++)
            wa[e] = dt == 1 ? hn_half_to_float(a16[e]) : hn_bf16_to_float(a16[e]);
        for (int64_t e = 0; e < counts[GEMM_B_B]; e++) {
            const uint16_t v = ((const uint16_t *)bufs[GEMM_B_B])[e];
            wb[e] = dt == 1 ? hn_half_to_float(v) : hn_bf16_to_float(v);
        }
        hn_ref refs[4] = {{0}};
        CHECK(op->reference(p, bufs, refs, 1e9, 5, 2, &err) == 0);
        void *wide[3] = {wa, wb, bufs[GEMM_B_C]};
        double worst = 0;
        for (int i = 0; i < 9; i++)
            for (int j = 0; j < 11; j++) {
                const double d = fabs(refs[GEMM_B_C].values[i * 11 + j] - want_at(p, wide, i, j));
                if (!(d <= worst)) worst = d;
            }
        CHECK_MSG(worst <= 1e-9, "dtype %d: max diff %g", dt, worst);
        free(wa);
        free(wb);
        free_bufs(bufs, refs);
    }
}

int main(void) {
    op = hn_op_find("gemm");
    CHECK(op != NULL);
    if (!op) return hn_test_exit();
    test_description();
    test_reference();
    test_sampled();
    test_conversions();
    test_half_inputs();
    return hn_test_exit();
}
