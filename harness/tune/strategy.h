/*
 * strategy.h: how `harness tune` searches a space. A strategy proposes
 * configurations (positions in the space's list of valid ones) and is told each
 * one's cost (the median time in ms, or INFINITY when it failed: did not
 * compile, could not launch, gave wrong results). The driver (tune.c) owns the
 * budget, the cache of costs already known, the journal and the device: a
 * strategy only decides what to try next.
 *
 * Rules every strategy follows:
 *   - deterministic: the same space, seed and costs give the same proposals;
 *   - propose() may return positions already evaluated (the driver answers them
 *     from its cache without spending budget), but must not loop forever on
 *     them: when it has nothing new to propose it returns 0 (exhausted);
 *   - failed configurations (INFINITY) never end a search;
 *   - propose() returns at most `max` positions; returning several lets the
 *     driver compile them ahead, in parallel with measuring.
 * One file per strategy (brute_force.c, random.c, ...), each defining its
 * hn_strategy table; the list is in strategy.c.
 */
#ifndef HN_STRATEGY_H
#define HN_STRATEGY_H

#include <stdint.h>

#include "space.h"

typedef struct {
    const char *name;
    const char *doc;
    /* State for a search of space s; seed makes it reproducible. */
    void *(*create)(const hn_space *s, uint64_t seed);
    /* Up to max positions to evaluate next; 0 when it has nothing left. */
    int (*propose)(void *st, int64_t *out, int max);
    /* The cost of a position it proposed. */
    void (*observe)(void *st, int64_t pos, double cost);
    void (*destroy)(void *st);
} hn_strategy;

/* The strategies, NULL-terminated; and one by name (NULL if unknown). */
extern const hn_strategy *const hn_strategies[];
const hn_strategy *hn_strategy_find(const char *name);
/* "brute_force, random, ..." (a static string). */
const char *hn_strategy_names(void);

/* Helpers shared by the strategies. */

/* The valid neighbours of position pos: every configuration that differs from
 * it in one tunable by one step of that tunable's value list. Writes at most
 * max positions; returns how many. */
int hn_space_neighbours(const hn_space *s, int64_t pos, int64_t *out, int max);
/* A uniformly random valid position. */
int64_t hn_space_random(const hn_space *s, uint64_t *rng);
/* The valid position nearest (in value indices, per tunable) to a point given
 * as value indices, which need not be valid: the first valid one found by
 * widening a search around it; -1 only if the space is empty. */
int64_t hn_space_nearest(const hn_space *s, const int *vals, uint64_t *rng);

#endif
