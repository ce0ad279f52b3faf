/* pso.c: particle swarm optimisation over the space's value indices.
 *
 * SWARM (20; the space's size when smaller) particles start at random
 * configurations with random velocities (up to a quarter of each tunable's
 * range). Each generation every particle moves:
 *   v = W v + C1 r1 (own best - x) + C2 r2 (swarm's best - x),  x = x + v
 * with W = 0.5, C1 = 2, C2 = 1 (Kernel Tuner's defaults), r1, r2 uniform in
 * [0, 1) per tunable, the speed clamped to half a tunable's range and x to its
 * range; the configuration evaluated is x rounded and repaired to the nearest
 * valid one. A failed configuration (INFINITY) never becomes a best. A particle
 * landing on a known configuration is judged from its known cost; the unseen
 * ones of a generation are proposed as one batch. After STALL (3) generations
 * that do not improve on the swarm's best (it has converged, or brings nothing
 * new) the swarm starts afresh: every particle scattered, its best forgotten
 * (the driver keeps the best found), so it settles in another basin.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define SWARM 20
#define W 0.5
#define C1 2.0
#define C2 1.0
#define STALL 3
#define MAX_ROUNDS 64

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    int size, nt, started;
    double *x, *v;              /* [size * nt] */
    int64_t *at;                /* [size]: the configuration each particle evaluates */
    int64_t *own;               /* [size]: each particle's best (-1: none yet) */
    double *own_cost;           /* [size] */
    int64_t best;
    double best_cost;
    hn_generation gen;          /* [size]: unseen configurations, proposed in order */
    int stall;
    int *vals;                  /* [nt] */
} swarm;

static void *create(const hn_space *s, uint64_t seed) {
    swarm *w = xcalloc(1, sizeof *w);
    w->s = s;
    w->rng = seed ^ 0x5a4a4dULL;
    hn_memo_init(&w->memo);
    w->size = s->n_valid < SWARM ? (int)s->n_valid : SWARM;
    if (w->size < 1) w->size = 1;
    w->nt = s->n_tunables;
    size_t n = (size_t)w->size * (size_t)w->nt + 1;
    w->x = xcalloc(n, sizeof *w->x);
    w->v = xcalloc(n, sizeof *w->v);
    w->at = xcalloc((size_t)w->size, sizeof *w->at);
    w->own = xcalloc((size_t)w->size, sizeof *w->own);
    w->own_cost = xcalloc((size_t)w->size, sizeof *w->own_cost);
    w->gen.todo = xcalloc((size_t)w->size, sizeof *w->gen.todo);
    w->vals = xcalloc((size_t)w->nt + 1, sizeof *w->vals);
    w->best = -1;
    w->best_cost = INFINITY;
    return w;
}

/* Particle i to a random unseen configuration (a known one when none is left). */
static int64_t scatter(swarm *w, int i) {
    int64_t q = hn_memo_unseen(&w->memo, w->s, &w->rng);
    if (q < 0) q = hn_space_random(w->s, &w->rng);
    hn_space_vals(w->s, q, w->vals);
    for (int t = 0; t < w->nt; t++) {
        double range = w->s->n_values[t] - 1;
        w->x[i * w->nt + t] = w->vals[t];
        w->v[i * w->nt + t] = (2 * hn_rand_unit(&w->rng) - 1) * range / 4;
    }
    w->own[i] = -1;
    w->own_cost[i] = INFINITY;
    return q;
}

static int64_t fly(swarm *w, int i) {
    int nt = w->nt;
    for (int t = 0; t < nt; t++) {
        double range = w->s->n_values[t] - 1, *x = &w->x[i * nt + t], *v = &w->v[i * nt + t];
        double po = w->own[i] >= 0 ? hn_space_value(w->s, w->s->valid[w->own[i]], t) : *x;
        double pg = w->best >= 0 ? hn_space_value(w->s, w->s->valid[w->best], t) : *x;
        *v = W * *v + C1 * hn_rand_unit(&w->rng) * (po - *x) + C2 * hn_rand_unit(&w->rng) * (pg - *x);
        if (*v > range / 2) *v = range / 2;
        if (*v < -range / 2) *v = -range / 2;
        *x += *v;
        if (*x < 0) *x = 0;
        if (*x > range) *x = range;
        w->vals[t] = (int)lround(*x);
    }
    return hn_space_nearest(w->s, w->vals, &w->rng);
}

/* The generation that came back updates the bests; the swarm moves on. */
static void advance(void *st) {
    swarm *w = st;
    double before = w->best_cost;
    if (w->started)
        for (int i = 0; i < w->size; i++) {
            double c = INFINITY;
            hn_memo_get(&w->memo, w->at[i], &c);
            if (isnan(c)) c = INFINITY;
            if (c < w->own_cost[i]) w->own[i] = w->at[i], w->own_cost[i] = c;
            if (c < w->best_cost) w->best = w->at[i], w->best_cost = c;
        }
    if (w->started && !(w->best_cost < before)) w->stall++;
    else w->stall = 0;
    int restart = !w->started || w->stall >= STALL;
    if (w->stall >= STALL) w->stall = 0, w->best = -1, w->best_cost = INFINITY;
    w->gen.n_todo = w->gen.next_todo = 0;
    for (int i = 0; i < w->size; i++) {
        int64_t q = restart ? scatter(w, i) : fly(w, i);
        w->at[i] = q;
        hn_generation_add(&w->gen, &w->memo, q);
    }
    w->started = 1;
}

static int propose(void *st, int64_t *out, int max) {
    swarm *w = st;
    return hn_generation_propose(&w->gen, &w->memo, w->s, &w->rng, advance, w, MAX_ROUNDS, out, max);
}

static void observe(void *st, int64_t pos, double cost) {
    swarm *w = st;
    hn_memo_put(&w->memo, pos, cost);
}

/* A better configuration found elsewhere becomes the swarm's best. */
static void learn(void *st, int64_t pos, double cost) {
    swarm *w = st;
    hn_memo_put(&w->memo, pos, cost);
    if (cost < w->best_cost) w->best = pos, w->best_cost = cost;
}

static void destroy(void *st) {
    swarm *w = st;
    if (!w) return;
    hn_memo_free(&w->memo);
    free(w->x);
    free(w->v);
    free(w->at);
    free(w->own);
    free(w->own_cost);
    free(w->gen.todo);
    free(w->vals);
    free(w);
}

const hn_strategy hn_strategy_pso = {"pso", "particle swarm (inertia 0.5, own best 2, swarm best 1)", create, propose,
                                     observe, destroy, learn};
