/*
 * space.h: the search space of a tunable variant: every combination of its
 * tunables' values that satisfies its restrictions.
 *
 * Construction is depth-first over the tunables in their declared order; a
 * restriction is evaluated as soon as the last tunable it names is bound (one
 * naming none, once at the root), so a subtree that breaks a restriction is cut
 * where it starts instead of being enumerated and filtered: the raw cross product
 * is never visited. Restrictions may also name the variant's other defines, the
 * operator's parameters and the sweep's axes (then a case must be given) and the
 * device's limits (then a device must be given: hn_device_names).
 *
 * A configuration is stored as its position in the raw cross product (mixed
 * radix, the first tunable slowest), so the valid ones are sorted and a
 * configuration's index among them is a binary search.
 *
 * Invariants: n_valid <= n_raw; valid[] increasing; every valid configuration
 * satisfies every restriction for the case and device it was built for.
 */
#ifndef HN_SPACE_H
#define HN_SPACE_H

#include <stdint.h>

#include "backend.h"
#include "config.h"

/* A restriction that could not be evaluated for some configurations (a
 * division by zero, an integer overflow, a string where a number goes): they
 * are excluded, as not satisfying it, and counted here for one notice. */
typedef struct {
    int64_t failed;            /* evaluations that failed (distinct combinations of its tunables) */
    double excluded;           /* raw configurations excluded by those failures */
    char first[256];           /* the first failure: "division by zero at BM=16,BN=0" */
} hn_space_unevaluable;

typedef struct {
    const hn_plan *plan;
    int spec;                  /* the variant spec */
    int n_tunables;
    int *define_index;         /* [n_tunables]: the tunable's index in spec->defines */
    int *n_values;             /* [n_tunables] */
    int64_t *radix;            /* [n_tunables]: raw index weight of each tunable */
    double n_raw;              /* the cross product's size (may exceed 2^63) */
    int64_t n_valid;
    int64_t *valid;            /* [n_valid]: raw indices, increasing */
    double build_seconds;
    int64_t evaluations;       /* restriction evaluations during construction */
    int n_restrict;            /* the spec's restrictions */
    hn_space_unevaluable *unevaluable; /* [n_restrict]: where each could not be evaluated */
} hn_space;

/* max_valid meaning: stop at the first valid configuration. */
#define HN_SPACE_FIRST (-1)

/* Builds the space of base's spec (its tunables and restrictions; base gives the
 * other defines' values) for case c with parameters params (NULL: restrictions
 * that name the case are left out) and device dev (NULL: those that name the
 * device's limits are left out). At most max_valid configurations are kept (more
 * is an error naming the limit; HN_SPACE_FIRST: only the first). A restriction
 * that cannot be evaluated for a configuration (division by zero, ...) excludes
 * it, counted in unevaluable[]; one that could be evaluated for none of the
 * configurations it was asked about is an error naming it (-1 with err). An
 * empty space is not an error here: n_valid is 0. */
int hn_space_build(const hn_plan *p, const hn_variant *base, const hn_case *c, const double *params,
                   const hn_device_info *dev, int64_t max_valid, hn_space **out, hn_err *err);
void hn_space_free(hn_space *s);

/* The value index of tunable t in raw configuration `raw`. */
int hn_space_value(const hn_space *s, int64_t raw, int t);
/* The raw index of value choices vals[n_tunables]. */
int64_t hn_space_raw(const hn_space *s, const int *vals);
/* The position of raw among the valid configurations, or -1. */
int64_t hn_space_find(const hn_space *s, int64_t raw);

/* The raw index of a configuration written as hn_space_describe writes it
 * ("BM=64,BN=32,..."), or -1 when a tunable is missing or has a value the
 * space does not list. */
int64_t hn_space_parse(const hn_space *s, const char *config);

/* Fills v (a variant of the spec) with the choices of raw configuration `raw`:
 * v->choice must hold spec->n_defines entries; non-tunable defines keep theirs. */
void hn_space_apply(const hn_space *s, int64_t raw, hn_variant *v);

/* "BM=64,BN=32,..." for a configuration (caller frees); _vals for the first n
 * tunables of value indices vals. */
char *hn_space_describe(const hn_space *s, int64_t raw);
char *hn_space_describe_vals(const hn_space *s, const int *vals, int n);

#endif
