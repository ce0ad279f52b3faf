/*
 * memo.h: the costs a strategy has asked for, by position in the space (an
 * open-addressing hash map), so that it never proposes a configuration twice,
 * judges a known one without spending budget, and knows when the whole space
 * is known (then it returns 0 from propose).
 *
 * A position proposed but not yet observed is pending: present, cost NAN.
 * Invariants: n <= size / 2; an empty slot has pos -1.
 */
#ifndef HN_MEMO_H
#define HN_MEMO_H

#include <stdint.h>

#include "space.h"

typedef struct {
    int64_t *pos;
    double *cost;
    int64_t size, n;
} hn_memo;

/* Fills m as empty; hn_memo_free releases it (m itself is the caller's). */
void hn_memo_init(hn_memo *m);
void hn_memo_free(hn_memo *m);
/* 1 with *cost (NAN while pending) when pos is in m, else 0. */
int hn_memo_get(const hn_memo *m, int64_t pos, double *cost);
/* Adds pos (>= 0) or replaces its cost. */
void hn_memo_put(hn_memo *m, int64_t pos, double cost);
/* Whether pos is in m with a cost observed (not pending). */
int hn_memo_known(const hn_memo *m, int64_t pos);
/* Whether every valid position of s is in m. */
int hn_memo_full(const hn_memo *m, const hn_space *s);
/* A random valid position of s not in m (a few uniform draws, then the first
 * free one after a random start), or -1 when m holds every one. */
int64_t hn_memo_unseen(const hn_memo *m, const hn_space *s, uint64_t *rng);

/* A generation of a population strategy (genetic, diff_evolution, pso): the
 * positions new to the memo, proposed in order. */
typedef struct {
    int64_t *todo;      /* [capacity]: the caller's array */
    int n_todo, next_todo;
} hn_generation;

/* Adds q to the generation when the memo has not seen it (and marks it
 * pending in the memo). */
void hn_generation_add(hn_generation *g, hn_memo *m, int64_t q);

/* propose() of a population strategy: the current generation's positions,
 * up to max; when it is used up, advance(st) makes the next (up to `rounds`
 * times: generations may hold only known positions); then one random unseen
 * position; 0 when the memo holds the whole space. */
int hn_generation_propose(hn_generation *g, hn_memo *m, const hn_space *s, uint64_t *rng, void (*advance)(void *),
                          void *st, int rounds, int64_t *out, int max);

/* learn() of a population: a configuration found elsewhere replaces the worst
 * member when it is better (and is remembered). */
void hn_population_learn(hn_memo *m, int64_t *pop, double *pop_cost, int n_pop, int64_t pos, double cost);

#endif
