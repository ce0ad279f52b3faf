/*
 * test_ref_alloc.c: what every reference shares (ops/op.c): the values
 * allocator (small arrays from malloc; large ones 2 MiB aligned, recycled after
 * hn_ref_free for a later array of about their size, not for one less than
 * half their size; arrays from malloc released through the same call) and
 * hn_ref_parallel (every element exactly once, on any number of threads,
 * however few elements).
 */
#include <stdatomic.h>
#include <stdint.h>

#include "hn_test.h"
#include "ops/op.h"

static void test_values(void) {
    /* small: malloc'd, released by hn_ref_free */
    hn_ref r = {0};
    r.values = hn_ref_alloc_values(10);
    r.n = 10;
    for (int i = 0; i < 10; i++) r.values[i] = i;
    hn_ref_free(&r);
    CHECK(r.values == NULL && r.n == 0);
    /* large: 2 MiB aligned, writable to the end */
    const int64_t n = 3 << 20; /* 24 MiB */
    double *a = hn_ref_alloc_values(n);
    CHECK(((uintptr_t)a & ((2 << 20) - 1)) == 0);
    a[0] = 1, a[n - 1] = 2;
    r.values = a;
    hn_ref_free(&r);
    /* the next array of about that size gets the same block back (not under
     * AddressSanitizer, where released blocks are freed at once) */
    double *b = hn_ref_alloc_values(n - 1000);
#if !defined(__SANITIZE_ADDRESS__)
    CHECK_MSG(b == a, "a released block is not reused");
#endif
    /* one much smaller does not take it */
    double *c = hn_ref_alloc_values(n / 4);
    CHECK(c != a);
    b[n - 1001] = 3;
    hn_ref_values_free(b);
    hn_ref_values_free(c);
    hn_ref_values_free(NULL);
    /* arrays from malloc go back to free() */
    hn_ref_values_free(xmalloc(100));
    /* several live at once, released in any order */
    double *v[5];
    for (int i = 0; i < 5; i++) {
        v[i] = hn_ref_alloc_values((int64_t)(i + 1) << 18);
        v[i][0] = i;
    }
    for (int i = 4; i >= 0; i -= 2) hn_ref_values_free(v[i]);
    for (int i = 1; i < 5; i += 2) hn_ref_values_free(v[i]);
}

typedef struct {
    atomic_int *hits;
    atomic_llong calls;
} par_ctx;

static void mark(void *ctx, int64_t begin, int64_t end) {
    par_ctx *c = ctx;
    atomic_fetch_add(&c->calls, 1);
    for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void test_parallel(void) {
    static const int64_t N[] = {0, 1, 7, 100, 1000, 100003};
    for (size_t k = 0; k < HN_ARRAY_LEN(N); k++)
        for (int threads = 1; threads <= 5; threads += 2) {
            const int64_t n = N[k];
            par_ctx c = {xcalloc((size_t)n + 1, sizeof(atomic_int)), 0};
            hn_ref_parallel(n, 3, threads, mark, &c);
            int64_t wrong = 0;
            for (int64_t i = 0; i < n; i++) wrong += atomic_load(&c.hits[i]) != 1;
            CHECK_MSG(wrong == 0, "n %lld, %d threads: %lld elements not visited exactly once", (long long)n, threads,
                      (long long)wrong);
            CHECK(n == 0 || atomic_load(&c.calls) >= 1);
            free(c.hits);
        }
    CHECK_INT(hn_ref_threads(1000, 100, 4), 4);
    CHECK_INT(hn_ref_threads(1000, 400, 4), 2);
    CHECK_INT(hn_ref_threads(10, 100, 4), 1);
    CHECK_INT(hn_ref_threads(1000, 1, 1000), 64);
}

int main(void) {
    test_values();
    test_parallel();
    return hn_test_exit();
}
