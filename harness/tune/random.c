/* random.c: valid configurations drawn uniformly without replacement (a lazy
 * Fisher-Yates over the positions, so drawing k costs O(k) whatever the size
 * of the space). The baseline of the strategy comparison. */
#include <stdlib.h>

#include "strategy.h"

typedef struct {
    int64_t n, drawn;
    uint64_t rng;
    /* the permutation's swapped entries: pos -> value, open addressing */
    int64_t *keys, *vals;
    int64_t size, used;
} rnd;

static int64_t get(const rnd *r, int64_t i) {
    for (int64_t h = (int64_t)((uint64_t)i * 0x9e3779b97f4a7c15ULL % (uint64_t)r->size);; h = (h + 1) % r->size) {
        if (r->keys[h] == i) return r->vals[h];
        if (r->keys[h] < 0) return i;
    }
}

static void put(rnd *r, int64_t i, int64_t v);

static void grow(rnd *r) {
    int64_t old = r->size, *ok = r->keys, *ov = r->vals;
    r->size = old ? 2 * old : 1024;
    r->keys = malloc((size_t)r->size * sizeof *r->keys);
    r->vals = malloc((size_t)r->size * sizeof *r->vals);
    for (int64_t h = 0; h < r->size; h++) r->keys[h] = -1;
    r->used = 0;
    for (int64_t h = 0; h < old; h++)
        if (ok[h] >= 0) put(r, ok[h], ov[h]);
    free(ok);
    free(ov);
}

static void put(rnd *r, int64_t i, int64_t v) {
    if ((r->used + 1) * 2 > r->size) grow(r);
    for (int64_t h = (int64_t)((uint64_t)i * 0x9e3779b97f4a7c15ULL % (uint64_t)r->size);; h = (h + 1) % r->size) {
        if (r->keys[h] == i) {
            r->vals[h] = v;
            return;
        }
        if (r->keys[h] < 0) {
            r->keys[h] = i;
            r->vals[h] = v;
            r->used++;
            return;
        }
    }
}

static void *create(const hn_space *s, uint64_t seed) {
    rnd *r = calloc(1, sizeof *r);
    r->n = s->n_valid;
    r->rng = seed ^ 0x7ac0ffee12345ULL;
    grow(r);
    return r;
}

static int propose(void *st, int64_t *out, int max) {
    rnd *r = st;
    int k = 0;
    while (k < max && r->drawn < r->n) {
        int64_t j = r->drawn + (int64_t)hn_rand_below(&r->rng, (uint64_t)(r->n - r->drawn));
        int64_t vj = get(r, j), vd = get(r, r->drawn);
        put(r, j, vd);
        put(r, r->drawn, vj);
        out[k++] = vj;
        r->drawn++;
    }
    return k;
}

static void observe(void *st, int64_t pos, double cost) {
    (void)st, (void)pos, (void)cost;
}

static void destroy(void *st) {
    rnd *r = st;
    if (!r) return;
    free(r->keys);
    free(r->vals);
    free(r);
}

const hn_strategy hn_strategy_random = {"random", "uniform sampling without replacement", create, propose, observe,
                                        destroy};
