/* memo.c: the costs a strategy knows, by position (memo.h). */
#include "memo.h"

#include <math.h>
#include <stdlib.h>

#include "strategy.h"
#include "util.h"

static int64_t slot(int64_t pos, int64_t size) {
    return (int64_t)((uint64_t)pos * 0x9e3779b97f4a7c15ULL % (uint64_t)size);
}

void hn_memo_init(hn_memo *m) {
    m->size = 64;
    m->n = 0;
    m->pos = xmalloc((size_t)m->size * sizeof *m->pos);
    m->cost = xmalloc((size_t)m->size * sizeof *m->cost);
    for (int64_t h = 0; h < m->size; h++) m->pos[h] = -1;
}

void hn_memo_free(hn_memo *m) {
    if (!m) return;
    free(m->pos);
    free(m->cost);
    m->pos = NULL;
    m->cost = NULL;
    m->size = m->n = 0;
}

int hn_memo_get(const hn_memo *m, int64_t pos, double *cost) {
    if (pos < 0) return 0;
    for (int64_t h = slot(pos, m->size);; h = (h + 1) % m->size) {
        if (m->pos[h] == pos) {
            if (cost) *cost = m->cost[h];
            return 1;
        }
        if (m->pos[h] < 0) return 0;
    }
}

int hn_memo_known(const hn_memo *m, int64_t pos) {
    double c;
    return hn_memo_get(m, pos, &c) && !isnan(c);
}

static void grow(hn_memo *m) {
    hn_memo old = *m;
    m->size *= 2;
    m->n = 0;
    m->pos = xmalloc((size_t)m->size * sizeof *m->pos);
    m->cost = xmalloc((size_t)m->size * sizeof *m->cost);
    for (int64_t h = 0; h < m->size; h++) m->pos[h] = -1;
    for (int64_t h = 0; h < old.size; h++)
        if (old.pos[h] >= 0) hn_memo_put(m, old.pos[h], old.cost[h]);
    hn_memo_free(&old);
}

void hn_memo_put(hn_memo *m, int64_t pos, double cost) {
    if ((m->n + 1) * 2 > m->size) grow(m);
    for (int64_t h = slot(pos, m->size);; h = (h + 1) % m->size) {
        if (m->pos[h] == pos) {
            m->cost[h] = cost;
            return;
        }
        if (m->pos[h] < 0) {
            m->pos[h] = pos;
            m->cost[h] = cost;
            m->n++;
            return;
        }
    }
}

int hn_memo_full(const hn_memo *m, const hn_space *s) {
    return m->n >= s->n_valid;
}

int64_t hn_memo_unseen(const hn_memo *m, const hn_space *s, uint64_t *rng) {
    if (hn_memo_full(m, s)) return -1;
    for (int i = 0; i < 16; i++) {
        int64_t p = hn_space_random(s, rng);
        if (!hn_memo_get(m, p, NULL)) return p;
    }
    /* mostly known: walk from a random start (the walk is bounded: one is free) */
    int64_t p = hn_space_random(s, rng);
    while (hn_memo_get(m, p, NULL)) p = (p + 1) % s->n_valid;
    return p;
}

void hn_generation_add(hn_generation *g, hn_memo *m, int64_t q) {
    if (hn_memo_get(m, q, NULL)) return;
    hn_memo_put(m, q, NAN);
    g->todo[g->n_todo++] = q;
}

int hn_generation_propose(hn_generation *g, hn_memo *m, const hn_space *s, uint64_t *rng, void (*advance)(void *),
                          void *st, int rounds, int64_t *out, int max) {
    for (int round = 0; round < rounds; round++) {
        if (g->next_todo < g->n_todo) {
            int k = 0;
            while (k < max && g->next_todo < g->n_todo) out[k++] = g->todo[g->next_todo++];
            return k;
        }
        if (hn_memo_full(m, s)) return 0;
        advance(st);
    }
    int64_t q = hn_memo_unseen(m, s, rng);
    if (q < 0 || max < 1) return 0;
    hn_memo_put(m, q, NAN);
    out[0] = q;
    return 1;
}

void hn_population_learn(hn_memo *m, int64_t *pop, double *pop_cost, int n_pop, int64_t pos, double cost) {
    hn_memo_put(m, pos, cost);
    int worst = -1;
    for (int i = 0; i < n_pop; i++) {
        if (pop[i] == pos) return;
        if (worst < 0 || pop_cost[i] > pop_cost[worst]) worst = i;
    }
    if (worst >= 0 && cost < pop_cost[worst]) pop[worst] = pos, pop_cost[worst] = cost;
}
