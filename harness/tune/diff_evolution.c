/* diff_evolution.c: differential evolution (DE/best/1/bin, as scipy's and
 * Kernel Tuner's default) over the space's value indices.
 *
 * A population of POP (20; the space's size when smaller), drawn at random at
 * first. Each generation makes one trial per member i: a mutant
 * best + F (r1 - r2) from the best member and two other random ones, with F
 * drawn in [0.5, 1) per generation (dither), crossed with member i tunable by
 * tunable with probability CR (0.7; one random tunable always from the mutant),
 * rounded and repaired to the nearest valid configuration. The trial replaces
 * member i when it costs no more (a failed configuration, INFINITY, never
 * replaces a working one). A trial already known is retried with one tunable
 * moved a step, up to 4 times, then judged from its known cost. The unseen
 * trials of a generation are proposed as one batch. After STALL (3)
 * generations with nothing new, the worse half of the population is replaced
 * by random unseen configurations.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define POP 20
#define CR 0.7
#define STALL 3
#define RETRIES 4
#define MAX_ROUNDS 64

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    int size, n_pop;
    int64_t *pop, *trial;       /* [size]: positions */
    double *pop_cost;           /* [size] */
    int n_trials;
    hn_generation gen;          /* [size]: the unseen trials, proposed in order */
    int stall;
    int *x, *b, *r1, *r2;       /* [n_tunables]: value indices */
} evolver;

static void *create(const hn_space *s, uint64_t seed) {
    evolver *e = xcalloc(1, sizeof *e);
    e->s = s;
    e->rng = seed ^ 0xde1de1ULL;
    hn_memo_init(&e->memo);
    e->size = s->n_valid < POP ? (int)s->n_valid : POP;
    if (e->size < 1) e->size = 1;
    e->pop = xcalloc((size_t)e->size, sizeof *e->pop);
    e->trial = xcalloc((size_t)e->size, sizeof *e->trial);
    e->gen.todo = xcalloc((size_t)e->size, sizeof *e->gen.todo);
    e->pop_cost = xcalloc((size_t)e->size, sizeof *e->pop_cost);
    size_t nt = (size_t)s->n_tunables + 1;
    e->x = xcalloc(nt, sizeof *e->x);
    e->b = xcalloc(nt, sizeof *e->b);
    e->r1 = xcalloc(nt, sizeof *e->r1);
    e->r2 = xcalloc(nt, sizeof *e->r2);
    return e;
}

static double cost_of(const evolver *e, int64_t pos) {
    double c = INFINITY;
    hn_memo_get(&e->memo, pos, &c);
    return isnan(c) ? INFINITY : c;
}

/* Member i's trial, with mutant scale f; attempt > 0 also moves a tunable a step. */
static int64_t make_trial(evolver *e, int i, int best, double f, int attempt) {
    const hn_space *s = e->s;
    int n = e->n_pop, a = (int)hn_rand_below(&e->rng, (uint64_t)n), c = (int)hn_rand_below(&e->rng, (uint64_t)n);
    hn_space_vals(s, e->pop[i], e->x);
    hn_space_vals(s, e->pop[best], e->b);
    hn_space_vals(s, e->pop[a], e->r1);
    hn_space_vals(s, e->pop[c], e->r2);
    int forced = s->n_tunables ? (int)hn_rand_below(&e->rng, (uint64_t)s->n_tunables) : 0;
    for (int t = 0; t < s->n_tunables; t++)
        if (t == forced || hn_rand_unit(&e->rng) < CR) e->x[t] = (int)lround(e->b[t] + f * (e->r1[t] - e->r2[t]));
    if (attempt && s->n_tunables) e->x[hn_rand_below(&e->rng, (uint64_t)s->n_tunables)] += hn_rand_below(&e->rng, 2) ? 1 : -1;
    return hn_space_nearest(s, e->x, &e->rng);
}

/* The trials that came back are judged; the next generation's are made. */
static void advance(void *st) {
    evolver *e = st;
    if (!e->n_pop) {
        for (int i = 0; i < e->n_trials; i++) e->pop[i] = e->trial[i], e->pop_cost[i] = cost_of(e, e->trial[i]);
        e->n_pop = e->n_trials;
    } else {
        for (int i = 0; i < e->n_trials; i++) {
            double c = cost_of(e, e->trial[i]);
            if (c <= e->pop_cost[i]) e->pop[i] = e->trial[i], e->pop_cost[i] = c;
        }
    }
    e->n_trials = e->gen.n_todo = e->gen.next_todo = 0;
    int best = 0;
    for (int i = 1; i < e->n_pop; i++)
        if (e->pop_cost[i] < e->pop_cost[best]) best = i;
    double f = 0.5 + 0.5 * hn_rand_unit(&e->rng);
    int restock = e->stall >= STALL;
    if (restock) e->stall = 0;
    double median = INFINITY;
    if (restock) { /* the worse half: members above the median cost */
        double *c = xmalloc((size_t)e->n_pop * sizeof *c);
        for (int i = 0; i < e->n_pop; i++) c[i] = e->pop_cost[i];
        for (int i = 1; i < e->n_pop; i++)
            for (int j = i; j > 0 && c[j] < c[j - 1]; j--) {
                double t = c[j];
                c[j] = c[j - 1], c[j - 1] = t;
            }
        median = c[e->n_pop / 2];
        free(c);
    }
    int want = e->n_pop ? e->n_pop : e->size;
    for (int i = 0; i < want; i++) {
        int64_t q = -1;
        if (!e->n_pop || (restock && i != best && e->pop_cost[i] >= median)) {
            q = hn_memo_unseen(&e->memo, e->s, &e->rng);
            if (q < 0 && !e->n_pop) break;
            if (q >= 0 && e->n_pop) e->pop_cost[i] = INFINITY; /* replaced whatever the newcomer costs */
        }
        for (int r = 0; r <= RETRIES && (q < 0 || hn_memo_get(&e->memo, q, NULL)); r++) q = make_trial(e, i, best, f, r);
        e->trial[e->n_trials++] = q;
        hn_generation_add(&e->gen, &e->memo, q);
    }
    if (!e->gen.n_todo) e->stall++;
}

static int propose(void *st, int64_t *out, int max) {
    evolver *e = st;
    return hn_generation_propose(&e->gen, &e->memo, e->s, &e->rng, advance, e, MAX_ROUNDS, out, max);
}

static void observe(void *st, int64_t pos, double cost) {
    evolver *e = st;
    hn_memo_put(&e->memo, pos, cost);
}

/* A configuration found elsewhere replaces the worst member if it is better. */
static void learn(void *st, int64_t pos, double cost) {
    evolver *e = st;
    hn_population_learn(&e->memo, e->pop, e->pop_cost, e->n_pop, pos, cost);
}

static void destroy(void *st) {
    evolver *e = st;
    if (!e) return;
    hn_memo_free(&e->memo);
    free(e->pop);
    free(e->trial);
    free(e->gen.todo);
    free(e->pop_cost);
    free(e->x);
    free(e->b);
    free(e->r1);
    free(e->r2);
    free(e);
}

const hn_strategy hn_strategy_diff_evolution = {"diff_evolution", "differential evolution (DE/best/1/bin)", create,
                                                propose, observe, destroy, learn};
