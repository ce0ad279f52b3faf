/*
 * hn_test.h: the few macros our tests use. A test file is a plain main calling
 * test_* functions; CHECK records a failure with file and line and goes on, so one
 * run reports every broken assertion; hn_test_exit() returns the exit code
 * (0 = all passed, 1 = failures). Only GPU tests may skip (exit 77, for want of
 * a GPU; CMakeLists.txt's HN_GPU_TESTS): a missing dependency is a failure.
 */
#ifndef HN_TEST_H
#define HN_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hn_test_failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            hn_test_failures++;                                                      \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            hn_test_failures++;                                                      \
        }                                                                            \
    } while (0)

#define CHECK_INT(a, b)                                                                   \
    do {                                                                                  \
        long long _a = (long long)(a), _b = (long long)(b);                               \
        if (_a != _b) {                                                                   \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                    #a, #b, _a, _b);                                                      \
            hn_test_failures++;                                                           \
        }                                                                                 \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                              \
    do {                                                                                   \
        double _a = (double)(a), _b = (double)(b);                                         \
        if (!(fabs(_a - _b) <= (tol))) {                                                   \
            fprintf(stderr, "%s:%d: %s ~= %s failed: %.17g vs %.17g (tol %g)\n", __FILE__, \
                    __LINE__, #a, #b, _a, _b, (double)(tol));                              \
            hn_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

#define CHECK_STR(a, b)                                                                    \
    do {                                                                                   \
        const char *_a = (a), *_b = (b);                                                   \
        if (!_a || !_b || strcmp(_a, _b) != 0) {                                           \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");                        \
            hn_test_failures++;                                                            \
        }                                                                                  \
    } while (0)

/* Checks that haystack contains needle. */
#define CHECK_CONTAINS(hay, needle)                                                         \
    do {                                                                                    \
        const char *_h = (hay), *_n = (needle);                                             \
        if (!_h || !strstr(_h, _n)) {                                                       \
            fprintf(stderr, "%s:%d: expected \"%s\" in: %s\n", __FILE__, __LINE__, _n,      \
                    _h ? _h : "(null)");                                                    \
            hn_test_failures++;                                                             \
        }                                                                                   \
    } while (0)

static inline int hn_test_exit(void) {
    if (hn_test_failures) fprintf(stderr, "%d check(s) failed\n", hn_test_failures);
    return hn_test_failures ? 1 : 0;
}

#endif
