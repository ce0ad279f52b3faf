/*
 * test_activation.c: the element-wise operators (relu, relu_backward, sigmoid,
 * sigmoid_backward; their shared code in harness/ops/relu/eltwise.c): counts,
 * labels and shape errors; the vectorized fp64 exp against libm over the whole
 * range, tails and clamps included, at lengths that are not multiples of 8;
 * each reference against a loop written here from the definition, on odd
 * lengths, with exact zeros (+0, -0: relu's gradient there is 0, torch's
 * convention), NaN (kept, as torch's) and extreme inputs; one thread against
 * two; and every kernel of the four sweep configs on the emulator (run, debug).
 */
#define _GNU_SOURCE
#define HN_TEST_SCRATCH "activation"
#include <stdint.h>

#include "hn_test.h"
#include "hn_test_files.h"
#include "hn_test_sweep.h"
#include "ops/op.h"
#include "ops/relu/eltwise.h"

static const char *const OPS[] = {"relu", "relu_backward", "sigmoid", "sigmoid_backward"};

static void test_counts_and_errors(void) {
    static const double FLOP[] = {1, 1, 3, 6};
    for (int i = 0; i < 4; i++) {
        const hn_op *op = hn_op_find(OPS[i]);
        CHECK_MSG(op != NULL, "%s not registered", OPS[i]);
        if (!op) continue;
        const int backward = strstr(OPS[i], "backward") != NULL;
        CHECK_INT(op->n_buffers, backward ? 3 : 2);
        double p[4] = {1000003};
        int64_t counts[8], dims[4];
        hn_err err;
        CHECK(op->shape(p, counts, &err) == 0);
        for (int b = 0; b < op->n_buffers; b++) {
            CHECK_INT(counts[b], 1000003);
            CHECK_INT(op->dims(p, b, dims), 1);
            CHECK_INT(dims[0], 1000003);
        }
        CHECK_NEAR(op->flop(p), FLOP[i] * 1000003, 0);
        CHECK_NEAR(op->bytes(p), 4.0 * op->n_buffers * 1000003, 0);
        char label[64];
        op->label(p, label, sizeof label);
        CHECK_STR(label, "n:1000003");
        CHECK_STR(op->buffers[op->n_buffers - 1].name, backward ? "dx" : "y");
        p[0] = 0;
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, OPS[i]);
        CHECK_CONTAINS(err.msg, "n = 0");
        p[0] = 2147483648.0;
        CHECK(op->shape(p, counts, &err) != 0);
        CHECK_CONTAINS(err.msg, "2^31-1");
        p[0] = 1;
        CHECK(op->shape(p, counts, &err) == 0);
    }
}

/* NaN in every element: what a loop leaves unwritten fails the checks. */
static void poison(double *a, int64_t n) {
    for (int64_t i = 0; i < n; i++) a[i] = NAN;
}

static void test_exp(void) {
    enum { N = 100003 };
    double *x = xmalloc(sizeof *x * N), *y = xmalloc(sizeof *y * N);
    uint64_t s = 7;
    for (int i = 0; i < N; i++) x[i] = (hn_rand_unit(&s) * 2 - 1) * (i % 3 == 0 ? 700 : i % 3 == 1 ? 20 : 1);
    x[0] = 0, x[1] = -0.0, x[2] = 708, x[3] = -708, x[4] = 1e-300, x[5] = 0.5 * 0.6931471805599453;
    poison(y, N); /* a value left unwritten shows (malloc may hand back the last call's results) */
    eltwise_exp(y, x, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double d = fabs(y[i] - exp(x[i])) / exp(x[i]);
        if (!(d <= worst)) worst = d;
    }
    CHECK_MSG(worst < 1e-15, "exp: worst relative error %g", worst);
    /* Clamped beyond +-708: finite, normal, and where exp is (near) 0 or huge. */
    double big[3] = {800, -800, -1e30}, out[3];
    eltwise_exp(out, big, 3);
    CHECK(isfinite(out[0]) && out[0] > 1e307);
    CHECK(out[1] > 0 && out[1] < 1e-306 && out[2] > 0 && out[2] < 1e-306);
    /* Every length up to 17 (the tail of a vector), in place. */
    for (int n = 1; n <= 17; n++) {
        double a[17];
        for (int i = 0; i < n; i++) a[i] = i - 8.5;
        eltwise_exp(a, a, n);
        for (int i = 0; i < n; i++) CHECK_NEAR(a[i] / exp(i - 8.5), 1.0, 1e-15);
    }
    free(x), free(y);
}

/* The definitions, written out. */
static double want_of(int op, float x, float dy) {
    switch (op) {
    case 0: return x > 0 || isnan(x) ? x : 0.0;
    case 1: return x > 0 || isnan(x) ? dy : 0.0;
    case 2: return 1.0 / (1.0 + exp(-(double)x));
    default: /* s (1 - s) = 1 / ((1 + e^-x) (1 + e^x)), which does not cancel */
        return dy / ((1.0 + exp(-(double)x)) * (1.0 + exp((double)x)));
    }
}

/* op's reference on the generated inputs of a case of n elements, with the
 * first few inputs replaced by special values; threads 1 and 2 agree. */
static void check_op(int i, int64_t n) {
    const hn_op *op = hn_op_find(OPS[i]);
    double p[4] = {(double)n};
    int64_t counts[8];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    void *bufs[3];
    for (int b = 0; b < op->n_buffers; b++) bufs[b] = xcalloc((size_t)counts[b] + 1, 4);
    op->generate(p, bufs, 3);
    float *x = bufs[0], *dy = op->n_buffers == 3 ? bufs[1] : NULL;
    static const float SPECIAL[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 20.0f, -20.0f, 100.0f, -100.0f, 3e38f, -3e38f, NAN};
    for (size_t k = 0; k < HN_ARRAY_LEN(SPECIAL) && (int64_t)k < n; k++) x[k] = SPECIAL[k];
    hn_ref r1[3] = {{0}}, r2[3] = {{0}};
    CHECK(op->reference(p, bufs, r1, 1e9, 3, 1, &err) == 0);
    CHECK(op->reference(p, bufs, r2, 1e9, 3, 2, &err) == 0);
    const int out = op->n_buffers - 1;
    CHECK(r1[out].n == n && r1[out].index == NULL);
    int64_t zeros = 0, bad = 0;
    for (int64_t k = 0; k < n; k++) {
        const double want = want_of(i, x[k], dy ? dy[k] : 0), got = r1[out].values[k];
        if (x[k] == 0) zeros++;
        const int same = isnan(want) ? isnan(got) : fabs(got - want) <= 1e-14 * fabs(want) + 1e-300;
        if (!same && bad++ < 5)
            CHECK_MSG(0, "%s n %lld: x[%lld] = %.9g: reference %.17g, want %.17g", OPS[i], (long long)n, (long long)k,
                      (double)x[k], got, want);
        if (memcmp(&r1[out].values[k], &r2[out].values[k], sizeof(double)) != 0 && !isnan(got) && bad++ < 5)
            CHECK_MSG(0, "%s: one thread and two differ at %lld", OPS[i], (long long)k);
    }
    /* relu's inputs hold exact zeros (1 in 8), whose outputs are exactly 0. */
    if (i < 2 && n > 100) CHECK_MSG(zeros >= n / 8, "%s: %lld zeros in %lld inputs", OPS[i], (long long)zeros, (long long)n);
    if (i < 2)
        for (int64_t k = 0; k < n; k++)
            if (x[k] == 0 && r1[out].values[k] != 0) {
                CHECK_MSG(0, "%s: x = %g at %lld gives %g", OPS[i], (double)x[k], (long long)k, r1[out].values[k]);
                break;
            }
    for (int b = 0; b < op->n_buffers; b++) {
        hn_ref_free(&r1[b]);
        hn_ref_free(&r2[b]);
        free(bufs[b]);
    }
}

static void test_references(void) {
    static const int64_t N[] = {1, 7, 11, 1000, 4097, (1 << 21) + 3};
    for (int i = 0; i < 4; i++)
        for (size_t k = 0; k < HN_ARRAY_LEN(N); k++) check_op(i, N[k]);
    /* sigmoid's gradient does not cancel where s is near 1: (e s) s. */
    const hn_op *op = hn_op_find("sigmoid_backward");
    double p[4] = {2};
    float x[3] = {30.0f, -30.0f, 0}, dy[3] = {1.0f, 1.0f, 0};
    void *bufs[3] = {x, dy, NULL};
    double out[2];
    bufs[2] = out;
    hn_ref r[3] = {{0}};
    hn_err err;
    CHECK(op->reference(p, bufs, r, 1e9, 1, 1, &err) == 0);
    CHECK_NEAR(r[2].values[0] / exp(-30.0), 1.0, 1e-12);
    CHECK_NEAR(r[2].values[1] / exp(-30.0), 1.0, 1e-12);
    for (int b = 0; b < 3; b++) hn_ref_free(&r[b]);
}

/* softmax's and im2col's row operations against their definitions, at every
 * length up to 33 (the vector tails) and one long row. */
static void check_row_ops(int isa) {
    enum { LONG = 1001 };
    float *x = xmalloc(sizeof *x * LONG);
    double *y = xmalloc(sizeof *y * LONG), *d = xmalloc(sizeof *d * LONG);
    uint64_t s = 11;
    for (int i = 0; i < LONG; i++) x[i] = (float)((hn_rand_unit(&s) * 2 - 1) * 30);
    static const int MORE[] = {63, 64, 65, 127, 128, 129, 200, LONG, LONG + 1};
    for (int k = 0, n = 1; n <= LONG; n = n < 33 ? n + 1 : MORE[k++]) {
        /* exp_sum: exp(x - shift) and their sum */
        poison(y, n);
        const double got_sum = eltwise_exp_sum(y, x, 3.0, n);
        double want_sum = 0, worst = 0;
        for (int i = 0; i < n; i++) {
            const double want = exp((double)x[i] - 3.0);
            want_sum += want;
            if (!(fabs(y[i] - want) / want <= worst)) worst = fabs(y[i] - want) / want;
        }
        CHECK_MSG(worst < 1e-15, "isa %d n %d: exp_sum's values, worst %g", isa, n, worst);
        CHECK_MSG(fabs(got_sum - want_sum) <= 1e-14 * want_sum, "isa %d n %d: sum %.17g, want %.17g", isa, n,
                  got_sum, want_sum);
        /* widen and scale: exact */
        poison(d, n);
        eltwise_widen(d, x, n);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += d[i] != (double)x[i];
        poison(y, n);
        eltwise_scale(y, d, -2.5, n);
        for (int i = 0; i < n; i++) bad += y[i] != -2.5 * (double)x[i];
        eltwise_scale(d, d, 0.5, n); /* in place */
        for (int i = 0; i < n; i++) bad += d[i] != 0.5 * (double)x[i];
        CHECK_MSG(bad == 0, "isa %d n %d: %d widened or scaled values wrong", isa, n, bad);
        /* max, with the largest value at each end and in the middle, and NaN passed over */
        for (int at = 0; at < 3; at++) {
            float *z = xmalloc(sizeof *z * (size_t)n);
            memcpy(z, x, sizeof *z * (size_t)n);
            const int where = at == 0 ? 0 : at == 1 ? n - 1 : n / 2;
            z[where] = 99.0f;
            if (n > 2) z[where == 1 ? 2 : 1] = NAN;
            float want = z[0];
            for (int i = 1; i < n; i++) want = z[i] > want ? z[i] : want;
            const float got = eltwise_max(z, n);
            CHECK_MSG(got == want, "isa %d n %d: max %g, want %g", isa, n, (double)got, (double)want);
            z[0] = NAN; /* a NaN first stays (the comparison never takes another) */
            CHECK_MSG(isnan(eltwise_max(z, n)), "isa %d n %d: max after a leading NaN", isa, n);
            free(z);
        }
    }
    free(x), free(y), free(d);
}

/* relu and sigmoid, forward and backward, called directly on buffers of our own
 * (poisoned first) against the definitions, at every length up to 33 and a long one. */
static void check_activations(int isa) {
    enum { LONG = 1001 };
    float *x = xmalloc(sizeof *x * LONG), *dy = xmalloc(sizeof *dy * LONG);
    double *out = xmalloc(sizeof *out * LONG);
    uint64_t s = 5;
    for (int i = 0; i < LONG; i++) {
        x[i] = (float)((hn_rand_unit(&s) * 2 - 1) * 20);
        dy[i] = (float)(hn_rand_unit(&s) * 2 - 1);
    }
    x[3] = 0.0f, x[4] = -0.0f, x[6] = NAN;
    for (int n = 1; n <= LONG; n = n < 33 ? n + 1 : LONG + 1)
        for (int op = 0; op < 4; op++) {
            poison(out, n);
            const float *g = op % 2 ? dy : NULL;
            if (op < 2) eltwise_relu(out, x, g, n);
            else eltwise_sigmoid(out, x, g, n);
            int bad = 0;
            for (int i = 0; i < n; i++) {
                const double want = want_of(op, x[i], g ? g[i] : 0);
                bad += isnan(want) ? !isnan(out[i]) : !(fabs(out[i] - want) <= 1e-14 * fabs(want) + 1e-300);
            }
            CHECK_MSG(bad == 0, "isa %d %s n %d: %d values wrong", isa, OPS[op], n, bad);
        }
    free(x), free(dy), free(out);
}

/* Each copy of the vector loops this CPU can run (AVX-512, AVX2 + FMA, the
 * baseline), forced in turn: the dispatch runs only the best one, so on an
 * AVX-512 machine the others would go unchecked. */
static void test_every_isa(void) {
    const int best = eltwise_cpu_isa();
    CHECK(best >= 0 && best <= 2);
    for (int isa = 0; isa <= best; isa++) {
        eltwise_force_isa(isa);
        test_exp();
        check_row_ops(isa);
        check_activations(isa);
    }
    eltwise_force_isa(-1);
}

static void test_generator(void) {
    float a[64], b[64];
    eltwise_fill_x(a, 64, 4.0f, 1, 9);
    eltwise_fill_x(b, 64, 4.0f, 1, 9);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK(a[5] == 0 && !signbit(a[5]) && a[13] == 0 && signbit(a[13]) && a[21] == 0);
    double sq = 0;
    for (int i = 0; i < 64; i++) sq += (double)a[i] * a[i];
    CHECK_MSG(sq / 64 > 4 && sq / 64 < 36, "scale 4: mean square %g", sq / 64);
    /* exactly the seeded normals times the scale, but for the planted zeros */
    hn_fill_randn_f32(b, 64, 9);
    int bad = 0;
    for (int i = 0; i < 64; i++) bad += i % 8 != 5 && a[i] != 4.0f * b[i];
    CHECK_INT(bad, 0);
}

static void test_kernels_on_emu(void) {
    CHECK(hn_test_sweep_emu("configs/relu_sweep.json", "0.0001") >= 4);
    CHECK(hn_test_sweep_emu("configs/relu_backward_sweep.json", "0.0001") >= 4);
    CHECK(hn_test_sweep_emu("configs/sigmoid_sweep.json", "0.0003") >= 4);
    CHECK(hn_test_sweep_emu("configs/sigmoid_backward_sweep.json", "0.0006") >= 4);
    hn_test_debug_emu("configs/relu_sweep.json", "relu_grid_stride", "n=37");
    hn_test_debug_emu("configs/relu_backward_sweep.json", "relu_backward_grid_stride", "n=37");
    hn_test_debug_emu("configs/sigmoid_sweep.json", "sigmoid_grid_stride", "n=37");
    hn_test_debug_emu("configs/sigmoid_backward_sweep.json", "sigmoid_backward_grid_stride", "n=37");
}

int main(void) {
    test_counts_and_errors();
    test_exp();
    test_references();
    test_every_isa();
    test_generator();
    if (getenv("HARNESS_BIN")) test_kernels_on_emu();
    else fprintf(stderr, "HARNESS_BIN not set: the kernels were not run on the emulator\n");
    hn_test_cleanup();
    return hn_test_exit();
}
