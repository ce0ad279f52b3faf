/* genetic.c: a genetic algorithm over the space's value indices.
 *
 * A population of POP (20; the space's size when smaller), drawn at random at
 * first. Each generation keeps the best ELITE (2) and fills the rest with
 * children: two parents picked by binary tournaments (the cheaper of two random
 * members; a failed configuration, INFINITY, loses), uniform crossover (each
 * tunable's value from either parent), then mutation of each tunable with
 * probability 1/n_tunables: one or two steps along its value list, or (one time
 * in five) any value. A child is repaired to the nearest valid configuration;
 * one already known is retried up to 4 times, then kept with its known cost
 * (no budget spent). The unseen children of a generation are proposed as one
 * batch, so they compile together. After STALL (3) generations that bring
 * nothing new, half the children are replaced by random unseen configurations.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define POP 20
#define ELITE 2
#define STALL 3
#define RETRIES 4
#define MAX_ROUNDS 64

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    int size, elite;            /* population size and elites kept */
    int n_pop, n_kids;
    int64_t *pop, *kid;         /* [size]: positions */
    double *pop_cost;           /* [size] */
    hn_generation gen;          /* [size]: the unseen children, proposed in order */
    int stall;
    int *a, *b;                 /* [n_tunables]: value indices of the parents */
} genetic;

static void *create(const hn_space *s, uint64_t seed) {
    genetic *g = xcalloc(1, sizeof *g);
    g->s = s;
    g->rng = seed ^ 0x6e6e7ULL;
    hn_memo_init(&g->memo);
    g->size = s->n_valid < POP ? (int)s->n_valid : POP;
    if (g->size < 1) g->size = 1;
    g->elite = g->size > 2 * ELITE ? ELITE : 0;
    g->pop = xcalloc((size_t)g->size, sizeof *g->pop);
    g->kid = xcalloc((size_t)g->size, sizeof *g->kid);
    g->gen.todo = xcalloc((size_t)g->size, sizeof *g->gen.todo);
    g->pop_cost = xcalloc((size_t)g->size, sizeof *g->pop_cost);
    g->a = xcalloc((size_t)s->n_tunables + 1, sizeof *g->a);
    g->b = xcalloc((size_t)s->n_tunables + 1, sizeof *g->b);
    return g;
}

static int tournament(genetic *g) {
    int i = (int)hn_rand_below(&g->rng, (uint64_t)g->n_pop), j = (int)hn_rand_below(&g->rng, (uint64_t)g->n_pop);
    return g->pop_cost[j] < g->pop_cost[i] ? j : i;
}

static int64_t breed(genetic *g) {
    const hn_space *s = g->s;
    hn_space_vals(s, g->pop[tournament(g)], g->a);
    hn_space_vals(s, g->pop[tournament(g)], g->b);
    for (int t = 0; t < s->n_tunables; t++) {
        if (hn_rand_below(&g->rng, 2)) g->a[t] = g->b[t];
        if (hn_rand_below(&g->rng, (uint64_t)s->n_tunables)) continue;
        if (hn_rand_below(&g->rng, 5) == 0) {
            g->a[t] = (int)hn_rand_below(&g->rng, (uint64_t)s->n_values[t]);
        } else {
            int step = 1 + (int)hn_rand_below(&g->rng, 2);
            g->a[t] += hn_rand_below(&g->rng, 2) ? step : -step;
        }
    }
    return hn_space_nearest(s, g->a, &g->rng);
}

/* Sorts the population by cost (insertion sort: it is small). */
static void rank(genetic *g) {
    for (int i = 1; i < g->n_pop; i++)
        for (int j = i; j > 0 && g->pop_cost[j] < g->pop_cost[j - 1]; j--) {
            int64_t p = g->pop[j];
            double c = g->pop_cost[j];
            g->pop[j] = g->pop[j - 1], g->pop_cost[j] = g->pop_cost[j - 1];
            g->pop[j - 1] = p, g->pop_cost[j - 1] = c;
        }
}

/* The generation that came back joins the population; the next one is bred. */
static void advance(void *st) {
    genetic *g = st;
    if (g->n_kids) {
        int keep = g->n_pop ? g->elite : 0;
        rank(g);
        for (int i = 0; i < g->n_kids; i++) {
            double c = INFINITY;
            hn_memo_get(&g->memo, g->kid[i], &c);
            g->pop[keep + i] = g->kid[i];
            g->pop_cost[keep + i] = isnan(c) ? INFINITY : c;
        }
        g->n_pop = keep + g->n_kids;
        rank(g);
    }
    int want = g->n_pop ? g->size - g->elite : g->size;
    int random = !g->n_pop ? want : g->stall >= STALL ? want / 2 : 0;
    if (random && g->n_pop) g->stall = 0;
    g->n_kids = g->gen.n_todo = g->gen.next_todo = 0;
    for (int i = 0; i < want; i++) {
        int64_t q = -1;
        if (i < random) {
            q = hn_memo_unseen(&g->memo, g->s, &g->rng);
            if (q < 0) break;
        } else {
            for (int r = 0; r <= RETRIES && (q < 0 || hn_memo_get(&g->memo, q, NULL)); r++) q = breed(g);
        }
        g->kid[g->n_kids++] = q;
        hn_generation_add(&g->gen, &g->memo, q);
    }
    if (!g->gen.n_todo) g->stall++;
}

static int propose(void *st, int64_t *out, int max) {
    genetic *g = st;
    return hn_generation_propose(&g->gen, &g->memo, g->s, &g->rng, advance, g, MAX_ROUNDS, out, max);
}

static void observe(void *st, int64_t pos, double cost) {
    genetic *g = st;
    hn_memo_put(&g->memo, pos, cost);
}

/* A configuration found elsewhere replaces the worst member if it is better. */
static void learn(void *st, int64_t pos, double cost) {
    genetic *g = st;
    hn_population_learn(&g->memo, g->pop, g->pop_cost, g->n_pop, pos, cost);
}

static void destroy(void *st) {
    genetic *g = st;
    if (!g) return;
    hn_memo_free(&g->memo);
    free(g->pop);
    free(g->kid);
    free(g->gen.todo);
    free(g->pop_cost);
    free(g->a);
    free(g->b);
    free(g);
}

const hn_strategy hn_strategy_genetic = {"genetic", "genetic algorithm (tournaments, uniform crossover, mutation, elitism)",
                                         create, propose, observe, destroy, learn};
