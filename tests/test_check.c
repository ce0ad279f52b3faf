/* test_check.c: the tolerance check (harness/check.c). */
#include <stdint.h>

#include "check.h"
#include "hn_test.h"

static void test_close_rule(void) {
    /* numpy.isclose: |a - b| <= atol + rtol * |b|, b being the reference. */
    CHECK(hn_check_close(1.0, 1.0, 0, 0));
    CHECK(hn_check_close(1.0002, 1.0, 1e-4, 1e-4));      /* 2e-4 <= 1e-4 + 1e-4 */
    CHECK(!hn_check_close(1.00021, 1.0, 1e-4, 1e-4));
    CHECK(hn_check_close(100.01, 100.0, 1e-4, 1e-4));    /* 0.01 <= 1e-4 + 0.01 */
    CHECK(!hn_check_close(0.0003, 0.0, 1e-4, 1e-4));
    CHECK(!hn_check_close(NAN, NAN, 1, 1));
    CHECK(!hn_check_close(INFINITY, INFINITY, 1, 1));
}

static void test_full(void) {
    float out[6] = {1.0f, 2.0f, 3.5f, NAN, 5.0f, -1.0f};
    double vals[6] = {1.0, 2.00001, 3.0, 4.0, 5.0, 0.0};
    hn_ref ref = {.values = vals, .index = NULL, .n = 6};
    hn_check_result r;
    hn_check_f32(out, &ref, 1e-4, 1e-4, &r);
    CHECK_INT(r.checked, 6);
    CHECK_INT(r.matched, 3);
    CHECK_INT(r.nonfinite, 1);
    CHECK_NEAR(r.match_fraction, 0.5, 1e-15);
    CHECK_NEAR(r.max_abs_err, 1.0, 1e-12);              /* the -1 vs 0 element */
    CHECK_NEAR(r.max_rel_err, 0.5 / 3.0, 1e-7);         /* 3.5 vs 3 (ref 0 has no rel error) */
    CHECK_INT(r.n_bad, 3);
    CHECK_INT(r.bad[0], 2);
    CHECK_INT(r.bad[1], 3);
    CHECK_INT(r.bad[2], 5);
}

static void test_sampled(void) {
    float out[5] = {0, 10, 0, 30, 99};
    double vals[2] = {10.0, 31.0};
    int64_t idx[2] = {1, 3};
    hn_ref ref = {.values = vals, .index = idx, .n = 2};
    hn_check_result r;
    hn_check_f32(out, &ref, 1e-4, 1e-4, &r);
    CHECK_INT(r.checked, 2); /* element 4 is not in the sample */
    CHECK_INT(r.matched, 1);
    CHECK_INT(r.n_bad, 1);
    CHECK_INT(r.bad[0], 3);
    CHECK_NEAR(r.max_abs_err, 1.0, 0);
}

static void test_many_bad_is_capped(void) {
    enum { N = 100 };
    float out[N];
    double vals[N];
    for (int i = 0; i < N; i++) out[i] = 1.0f, vals[i] = 2.0;
    hn_ref ref = {.values = vals, .n = N};
    hn_check_result r;
    hn_check_f32(out, &ref, 0, 0, &r);
    CHECK_INT(r.matched, 0);
    CHECK_INT(r.n_bad, HN_CHECK_MAX_BAD);
    CHECK_NEAR(r.match_fraction, 0.0, 0);
}

/* Large outputs are checked in parallel parts; the result is the same as in one. */
static void test_parallel_matches_serial(void) {
    int64_t n = (1 << 21) + 12345;
    float *out = xmalloc((size_t)n * sizeof *out);
    double *vals = xmalloc((size_t)n * sizeof *vals);
    uint64_t st = 5;
    for (int64_t i = 0; i < n; i++) {
        vals[i] = hn_rand_unit(&st) * 2 - 1;
        out[i] = (float)vals[i];
    }
    out[7] = NAN;
    out[1 << 20] += 1.0f;
    out[n - 1] = -5.0f;
    hn_ref ref = {.values = vals, .n = n};
    hn_check_result r;
    hn_check_f32(out, &ref, 1e-6, 1e-6, &r);
    CHECK_INT(r.checked, n);
    CHECK_INT(r.nonfinite, 1);
    CHECK_INT(r.matched, n - 3);
    CHECK_INT(r.n_bad, 3);
    CHECK_INT(r.bad[0], 7);
    CHECK_INT(r.bad[1], 1 << 20);
    CHECK_INT(r.bad[2], n - 1);
    CHECK(r.max_abs_err >= 4.0);
    free(out);
    free(vals);
}

int main(void) {
    test_parallel_matches_serial();
    test_close_rule();
    test_full();
    test_sampled();
    test_many_bad_is_capped();
    return hn_test_exit();
}
