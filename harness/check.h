/*
 * check.h: comparing a kernel's output with the fp64 reference.
 *
 * An element matches when it is finite and |out - ref| <= atol + rtol * |ref|
 * (numpy.isclose's rule, which the seed notebook used). NaN and Inf never match
 * and are counted apart. The maximum absolute and relative errors are taken over
 * finite elements; the relative error only where ref != 0.
 */
#ifndef HN_CHECK_H
#define HN_CHECK_H

#include <stdint.h>

#include "ops/op.h"

#define HN_CHECK_MAX_BAD 16

typedef struct {
    int64_t checked;     /* elements compared */
    int64_t matched;
    int64_t nonfinite;   /* NaN or Inf among the compared outputs */
    int64_t poisoned;    /* of those, elements still all 0xFF bytes: the poison outputs start
                            from, never written (a float kernel's own NaN is not all ones) */
    int64_t first_poisoned; /* the lowest such element index (-1: none) */
    double max_abs_err;
    double max_rel_err;
    double match_fraction; /* matched / checked (1 when nothing was checked) */
    int64_t bad[HN_CHECK_MAX_BAD]; /* element indices of the first mismatches */
    int n_bad;
} hn_check_result;

/* Compares out (the whole buffer) with ref (complete or sampled). */
void hn_check_f32(const float *out, const hn_ref *ref, double atol, double rtol,
                  hn_check_result *res);
/* The same for a buffer of any dtype; integers compare exactly (atol and rtol
 * are ignored: an index is right or wrong). */
void hn_check_buffer(const void *out, hn_dtype dtype, const hn_ref *ref, double atol, double rtol,
                     hn_check_result *res);
/* Element i of a buffer of that dtype, as a double. */
double hn_buffer_get(const void *buf, hn_dtype dtype, int64_t i);

/* Whether an element matches (exposed for tests and the debug view). */
int hn_check_close(double out, double ref, double atol, double rtol);

#endif
