/* test_check.c: the tolerance check (harness/check.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* The rule's boundary is inclusive: an error of exactly atol + rtol * |ref| matches,
 * one ulp more does not; zero tolerance accepts exactly the reference. */
static void test_close_boundary(void) {
    CHECK(hn_check_close(1.5, 1.0, 0.5, 0));               /* 0.5 <= 0.5 */
    CHECK(!hn_check_close(nextafter(1.5, 2), 1.0, 0.5, 0));
    CHECK(hn_check_close(3.0, 2.0, 0.5, 0.25));            /* 1 <= 0.5 + 0.25 * 2 */
    CHECK(!hn_check_close(nextafter(3.0, 4), 2.0, 0.5, 0.25));
    CHECK(hn_check_close(-3.0, -2.0, 0.5, 0.25));          /* |ref|, not ref */
    CHECK(hn_check_close(0.5, 1.0, 0.5, 0));               /* below the reference too */
    CHECK(hn_check_close(2.0, 2.0, 0, 0));
    CHECK(!hn_check_close(nextafter(2.0, 3), 2.0, 0, 0));
    CHECK(hn_check_close(0.0, 0.0, 0, 0));

    /* the same boundaries through hn_check_f32 (float outputs are exact in double) */
    float out[6] = {1.5f, nextafterf(1.5f, 2.0f), 3.0f, nextafterf(3.0f, 4.0f), 0.5f, -3.0f};
    double vals[6] = {1.0, 1.0, 2.0, 2.0, 1.0, -2.0};
    hn_ref ref = {.values = vals, .n = 6};
    hn_check_result r;
    hn_check_f32(out, &ref, 0.5, 0, &r);
    CHECK_INT(r.matched, 2); /* elements 0 and 4 */
    CHECK_INT(r.n_bad, 4);
    CHECK_INT(r.bad[0], 1);
    CHECK_INT(r.bad[1], 2);
    hn_check_f32(out, &ref, 0.5, 0.25, &r);
    CHECK_INT(r.matched, 5); /* all but element 3, one ulp over 1 */
    CHECK_INT(r.n_bad, 1);
    CHECK_INT(r.bad[0], 3);

    /* zero tolerance: an exact match matches, anything else does not */
    float ex[3] = {0.0f, -7.25f, 1e30f};
    double exv[3] = {0.0, -7.25, (double)1e30f};
    hn_ref exr = {.values = exv, .n = 3};
    hn_check_f32(ex, &exr, 0, 0, &r);
    CHECK_INT(r.matched, 3);
    CHECK_INT(r.n_bad, 0);
    CHECK(r.max_abs_err == 0 && r.max_rel_err == 0);
    CHECK_NEAR(r.match_fraction, 1.0, 0);
    exv[1] = nextafter(-7.25, 0);
    hn_check_f32(ex, &exr, 0, 0, &r);
    CHECK_INT(r.matched, 2);
    CHECK_INT(r.n_bad, 1);
    CHECK_INT(r.bad[0], 1);
}

/* max_rel_err is the largest |out - ref| / |ref|: here the element with the
 * smaller absolute error (0.001 on 0.01: 10 %) beats the larger (1 on 100: 1 %). */
static void test_max_rel_err(void) {
    float out[3] = {101.0f, 0.011f, 5.0f};
    double vals[3] = {100.0, 0.01, 5.0};
    hn_ref ref = {.values = vals, .n = 3};
    hn_check_result r;
    hn_check_f32(out, &ref, 0, 0, &r);
    CHECK_NEAR(r.max_abs_err, 1.0, 0);
    CHECK_NEAR(r.max_rel_err, ((double)0.011f - 0.01) / 0.01, 1e-12);
    CHECK_NEAR(r.max_rel_err, 0.1, 1e-5);
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

/* hn_cpu_count, as check.c sees it (CMakeLists.txt links this test with
 * --wrap=hn_cpu_count): the machine's count unless fake_cpus is set. */
static int fake_cpus;
int __real_hn_cpu_count(void);
int __wrap_hn_cpu_count(void);
int __wrap_hn_cpu_count(void) {
    return fake_cpus ? fake_cpus : __real_hn_cpu_count();
}

/* However many CPUs the machine has (here 1 to 200; at most 64 parts), a large
 * output checks the same. */
static void test_cpu_counts(void) {
    int64_t n = ((int64_t)1 << 20) + 99;
    float *out = xmalloc((size_t)n * sizeof *out);
    double *vals = xmalloc((size_t)n * sizeof *vals);
    for (int64_t i = 0; i < n; i++) {
        vals[i] = (double)(i % 17) - 8;
        out[i] = (float)vals[i];
    }
    int64_t bad[3] = {0, n / 2, n - 1};
    for (int k = 0; k < 3; k++) out[bad[k]] += 1.0f;
    hn_ref ref = {.values = vals, .n = n};
    static const int cpus[] = {1, 3, 63, 64, 65, 200};
    for (size_t c = 0; c < HN_ARRAY_LEN(cpus); c++) {
        fake_cpus = cpus[c];
        hn_check_result r;
        hn_check_f32(out, &ref, 0, 0, &r);
        CHECK_MSG(r.checked == n && r.matched == n - 3 && r.n_bad == 3, "%d CPUs: %lld checked, %lld matched",
                  cpus[c], (long long)r.checked, (long long)r.matched);
        for (int k = 0; k < 3 && k < r.n_bad; k++) CHECK_INT(r.bad[k], bad[k]);
    }
    fake_cpus = 0;
    free(out);
    free(vals);
}

/* More than HN_CHECK_MAX_BAD mismatches spread over the parallel parts: the
 * merged list keeps the first ones in element order, and stops at the cap. */
static void test_parallel_bad_capped(void) {
    int64_t n = (int64_t)1 << 21;
    float *out = xmalloc((size_t)n * sizeof *out);
    double *vals = xmalloc((size_t)n * sizeof *vals);
    for (int64_t i = 0; i < n; i++) {
        vals[i] = (double)(i % 1000);
        out[i] = (float)vals[i];
    }
    int64_t want[24];
    for (int k = 0; k < 24; k++) {
        want[k] = k * (n / 24) + 3; /* spread over every part */
        out[want[k]] += 10.0f;
    }
    hn_ref ref = {.values = vals, .n = n};
    hn_check_result r;
    hn_check_f32(out, &ref, 0, 0, &r);
    CHECK_INT(r.checked, n);
    CHECK_INT(r.matched, n - 24);
    CHECK_INT(r.n_bad, HN_CHECK_MAX_BAD);
    for (int k = 0; k < HN_CHECK_MAX_BAD; k++) CHECK_INT(r.bad[k], want[k]);
    free(out);
    free(vals);
}

#if !defined(__SANITIZE_ADDRESS__)
static void *idle_thread(void *arg) {
    return arg;
}

/* Fills the stack below the caller with non-zero bytes, so that storage a
 * callee forgets to set (a pthread_t of a thread never started) is not zero
 * by luck. */
static __attribute__((noinline)) void dirty_stack(void) {
    volatile unsigned char junk[16384];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = 0xa5;
}
#endif

/* When no thread can be started, the caller checks every part itself. Run in a
 * child whose address space is capped just above what it uses, so a thread's
 * stack cannot be mapped (first in main: glibc would reuse a cached stack).
 * Exit codes: 0 as expected, 77 the cap did not stop pthread_create, 1 wrong. */
static void test_no_threads_fallback(void) {
#if defined(__SANITIZE_ADDRESS__)
    fprintf(stderr, "ASan build: the address-space cap would stop the sanitizer too; skipped\n");
    return;
#else
    int64_t n = ((int64_t)1 << 20) + 777;
    float *out = xmalloc((size_t)n * sizeof *out);
    double *vals = xmalloc((size_t)n * sizeof *vals);
    for (int64_t i = 0; i < n; i++) {
        vals[i] = (double)(i % 7) - 3;
        out[i] = (float)vals[i];
    }
    out[5] = 100.0f;
    out[n - 2] = NAN;
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1) _exit(77);
        fclose(f);
        struct rlimit lim;
        lim.rlim_cur = lim.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (1u << 20);
        if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(77);
        pthread_t t;
        if (pthread_create(&t, NULL, idle_thread, NULL) == 0) {
            pthread_join(t, NULL);
            _exit(77);
        }
        hn_check_result r;
        hn_ref ref = {.values = vals, .n = n};
        dirty_stack();
        hn_check_f32(out, &ref, 0, 0, &r);
        int ok = r.checked == n && r.matched == n - 2 && r.nonfinite == 1 && r.n_bad == 2 && r.bad[0] == 5 &&
                 r.bad[1] == n - 2;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        fprintf(stderr, "could not make pthread_create fail here: fallback not checked\n");
    } else {
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
    }
    free(out);
    free(vals);
#endif
}

int main(void) {
    test_no_threads_fallback();
    test_parallel_matches_serial();
    test_parallel_bad_capped();
    test_cpu_counts();
    test_close_boundary();
    test_max_rel_err();
    test_close_rule();
    test_full();
    test_sampled();
    test_many_bad_is_capped();
    return hn_test_exit();
}
