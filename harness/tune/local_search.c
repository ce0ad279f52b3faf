/* local_search.c: greedy iterated local search.
 *
 * Hill climbing by first improvement: the current configuration's neighbours
 * (one tunable moved one step: hn_space_neighbours) are tried in a random order,
 * up to `max` unseen ones per proposal (so a batch compiles together); after a
 * batch the climb moves to the best of it if that beats the current one, else
 * goes on with the next neighbours. A known neighbour costs nothing: a better
 * one is taken at once. When no neighbour is better the current configuration
 * is a local minimum; the search then perturbs the best local minimum found by
 * KICK (3) random moves (a tunable and a step of -2..+2 each), repaired to the
 * nearest valid configuration, and climbs again from there; every RESTART-th
 * (4th) perturbation is instead a fresh start from a random unseen
 * configuration. A failed configuration (INFINITY) is just a bad cost: any
 * working neighbour improves on it.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define KICK 3
#define RESTART 4
#define MAX_ROUNDS 256

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    int64_t cur, start;         /* the climb's position; a start being evaluated (-1: none) */
    double cur_cost;
    int64_t *nb;                /* [2 * n_tunables]: cur's neighbours, shuffled */
    int n_nb, next_nb;
    int in_flight;              /* neighbours proposed, not yet observed */
    int64_t batch_best;         /* the best of them so far */
    double batch_best_cost;
    int64_t local_min;          /* the best local minimum so far */
    double local_min_cost;
    int kicks;
    int *vals;
} climber;

static void *create(const hn_space *s, uint64_t seed) {
    climber *c = xcalloc(1, sizeof *c);
    c->s = s;
    c->rng = seed ^ 0x10ca15ea4cULL;
    hn_memo_init(&c->memo);
    c->cur = c->start = c->batch_best = c->local_min = -1;
    c->cur_cost = c->batch_best_cost = c->local_min_cost = INFINITY;
    c->nb = xcalloc(2 * (size_t)s->n_tunables + 1, sizeof *c->nb);
    c->vals = xcalloc((size_t)s->n_tunables + 1, sizeof *c->vals);
    return c;
}

/* Climb from pos: its neighbours, shuffled, are next. */
static void move_to(climber *c, int64_t pos, double cost) {
    c->cur = pos;
    c->cur_cost = cost;
    c->n_nb = hn_space_neighbours(c->s, pos, c->nb, 2 * c->s->n_tunables);
    c->next_nb = 0;
    for (int i = c->n_nb - 1; i > 0; i--) {
        int j = (int)hn_rand_below(&c->rng, (uint64_t)i + 1);
        int64_t t = c->nb[i];
        c->nb[i] = c->nb[j];
        c->nb[j] = t;
    }
}

/* A new place to climb from: the best local minimum kicked, or a random one. */
static int64_t perturb(climber *c) {
    if (++c->kicks % RESTART == 0 || c->local_min < 0 || !c->s->n_tunables) return hn_memo_unseen(&c->memo, c->s, &c->rng);
    hn_space_vals(c->s, c->local_min, c->vals);
    for (int k = 0; k < KICK; k++) {
        int t = (int)hn_rand_below(&c->rng, (uint64_t)c->s->n_tunables);
        c->vals[t] += (int)hn_rand_below(&c->rng, 5) - 2;
    }
    return hn_space_nearest(c->s, c->vals, &c->rng);
}

static int propose(void *st, int64_t *out, int max) {
    climber *c = st;
    if (max < 1 || hn_memo_full(&c->memo, c->s)) return 0;
    for (int round = 0; round < MAX_ROUNDS; round++) {
        if (c->cur < 0) {
            c->start = hn_memo_unseen(&c->memo, c->s, &c->rng);
            break;
        }
        int k = 0;
        while (k < max && c->next_nb < c->n_nb) {
            int64_t q = c->nb[c->next_nb++];
            double cost;
            if (!hn_memo_get(&c->memo, q, &cost)) {
                hn_memo_put(&c->memo, q, NAN);
                out[k++] = q;
            } else if (cost < c->cur_cost && !k) {
                move_to(c, q, cost);
            }
        }
        if (k) {
            c->in_flight = k;
            c->batch_best = -1;
            c->batch_best_cost = INFINITY;
            return k;
        }
        /* a local minimum */
        if (c->local_min < 0 || c->cur_cost < c->local_min_cost) c->local_min = c->cur, c->local_min_cost = c->cur_cost;
        int64_t p = perturb(c);
        double cost;
        if (!hn_memo_get(&c->memo, p, &cost)) {
            c->start = p;
            break;
        }
        move_to(c, p, cost);
    }
    if (c->start < 0) c->start = hn_memo_unseen(&c->memo, c->s, &c->rng);
    hn_memo_put(&c->memo, c->start, NAN);
    out[0] = c->start;
    return 1;
}

static void observe(void *st, int64_t pos, double cost) {
    climber *c = st;
    hn_memo_put(&c->memo, pos, cost);
    if (pos == c->start) {
        c->start = -1;
        move_to(c, pos, cost);
        return;
    }
    if (cost < c->batch_best_cost) c->batch_best = pos, c->batch_best_cost = cost;
    if (--c->in_flight == 0 && c->batch_best_cost < c->cur_cost) move_to(c, c->batch_best, c->batch_best_cost);
}

/* A better configuration found elsewhere: the climb goes on from there. */
static void learn(void *st, int64_t pos, double cost) {
    climber *c = st;
    hn_memo_put(&c->memo, pos, cost);
    if (cost < c->cur_cost && c->in_flight <= 0 && c->start < 0) move_to(c, pos, cost);
}

static void destroy(void *st) {
    climber *c = st;
    if (!c) return;
    hn_memo_free(&c->memo);
    free(c->nb);
    free(c->vals);
    free(c);
}

const hn_strategy hn_strategy_local_search = {"local_search", "greedy iterated local search (first improvement, kicks, restarts)",
                                              create, propose, observe, destroy, learn};
