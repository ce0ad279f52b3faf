/* annealing.c: simulated annealing over the space's value indices.
 *
 * A walk: from the current configuration, a random neighbour (one tunable moved
 * one step along its value list: hn_space_neighbours) is tried. A better one is
 * always accepted; a worse one with probability exp(-d / T), where
 * d = (new - current) / current is the relative loss, so that the temperature
 * means the same whatever the costs' scale (ms of any size).
 *
 * Parameters: T starts at T0 = 0.1 (a move 10% worse is accepted with p = 1/e)
 * and is multiplied by 0.97 after each evaluation; below 0.002 it is reheated to
 * T0 and the walk goes back to the best configuration found. A failed
 * configuration (INFINITY) is never accepted from a working one; from a failed
 * one any move is (a walk out of a region of failures).
 *
 * A neighbour already known is judged from memory without spending budget; after
 * 64 such moves in a row (every neighbour of the walk known) the walk jumps to a
 * random unseen configuration. The walk is sequential: one proposal at a time.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define T0 0.1
#define COOLING 0.97
#define T_MIN 0.002
#define FREE_MOVES 64
#define KICK 3

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    int64_t cur, best, waiting; /* positions, -1 for none */
    double cur_cost, best_cost, temp;
    int jump;                   /* the waiting one is a jump: taken whatever its cost */
    int64_t *nb;                /* [2 * n_tunables] */
    int *vals;                  /* [n_tunables] */
} annealer;

static void *create(const hn_space *s, uint64_t seed) {
    annealer *a = xcalloc(1, sizeof *a);
    a->s = s;
    a->rng = seed ^ 0xa11ea1ULL;
    hn_memo_init(&a->memo);
    a->cur = a->best = a->waiting = -1;
    a->cur_cost = a->best_cost = INFINITY;
    a->temp = T0;
    a->nb = xcalloc(2 * (size_t)s->n_tunables + 1, sizeof *a->nb);
    a->vals = xcalloc((size_t)s->n_tunables + 1, sizeof *a->vals);
    return a;
}

static int accepts(annealer *a, double cost) {
    if (cost <= a->cur_cost || isinf(a->cur_cost)) return 1;
    if (isinf(cost)) return 0;
    double d = (cost - a->cur_cost) / fabs(a->cur_cost > 0 ? a->cur_cost : 1e-30);
    return hn_rand_unit(&a->rng) < exp(-d / a->temp);
}

/* Somewhere unseen to go on from: near the best (KICK random steps of up to 2),
 * or every other time anywhere. */
static int64_t jump(annealer *a) {
    const hn_space *s = a->s;
    if (a->best >= 0 && s->n_tunables && hn_rand_below(&a->rng, 2)) {
        hn_space_vals(s, a->best, a->vals);
        for (int k = 0; k < KICK; k++) a->vals[hn_rand_below(&a->rng, (uint64_t)s->n_tunables)] += (int)hn_rand_below(&a->rng, 5) - 2;
        int64_t q = hn_space_nearest(s, a->vals, &a->rng);
        if (!hn_memo_get(&a->memo, q, NULL)) return q;
    }
    return hn_memo_unseen(&a->memo, s, &a->rng);
}

static int propose(void *st, int64_t *out, int max) {
    annealer *a = st;
    if (max < 1 || hn_memo_full(&a->memo, a->s)) return 0;
    int64_t q = -1;
    a->jump = 1;
    if (a->cur >= 0)
        for (int moves = 0; moves < FREE_MOVES; moves++) {
            int n = hn_space_neighbours(a->s, a->cur, a->nb, 2 * a->s->n_tunables);
            if (!n) break;
            int64_t c = a->nb[hn_rand_below(&a->rng, (uint64_t)n)];
            double cost;
            if (!hn_memo_get(&a->memo, c, &cost)) {
                q = c;
                a->jump = 0;
                break;
            }
            if (accepts(a, cost)) a->cur = c, a->cur_cost = cost;
        }
    if (q < 0) q = jump(a);
    hn_memo_put(&a->memo, q, NAN);
    a->waiting = out[0] = q;
    return 1;
}

static void observe(void *st, int64_t pos, double cost) {
    annealer *a = st;
    hn_memo_put(&a->memo, pos, cost);
    if (cost < a->best_cost) a->best = pos, a->best_cost = cost;
    if (pos != a->waiting) return;
    a->waiting = -1;
    if (a->jump || accepts(a, cost)) a->cur = pos, a->cur_cost = cost;
    a->temp *= COOLING;
    if (a->temp < T_MIN) {
        a->temp = T0;
        if (a->best >= 0) a->cur = a->best, a->cur_cost = a->best_cost;
    }
}

/* A better configuration found elsewhere: the walk goes on from there. */
static void learn(void *st, int64_t pos, double cost) {
    annealer *a = st;
    hn_memo_put(&a->memo, pos, cost);
    if (cost < a->best_cost) a->best = pos, a->best_cost = cost;
    if (cost < a->cur_cost && a->waiting < 0) a->cur = pos, a->cur_cost = cost;
}

static void destroy(void *st) {
    annealer *a = st;
    if (!a) return;
    hn_memo_free(&a->memo);
    free(a->nb);
    free(a->vals);
    free(a);
}

const hn_strategy hn_strategy_annealing = {"annealing", "simulated annealing over neighbouring configurations", create,
                                           propose, observe, destroy, learn};
