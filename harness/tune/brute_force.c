/* brute_force.c: every valid configuration, in order (the baseline every other
 * strategy is judged against, and the way to record a complete journal). */
#include <stdlib.h>

#include "strategy.h"

typedef struct {
    int64_t next, n;
} brute;

static void *create(const hn_space *s, uint64_t seed) {
    (void)seed;
    brute *b = calloc(1, sizeof *b);
    b->n = s->n_valid;
    return b;
}

static int propose(void *st, int64_t *out, int max) {
    brute *b = st;
    int k = 0;
    while (k < max && b->next < b->n) out[k++] = b->next++;
    return k;
}

static void observe(void *st, int64_t pos, double cost) {
    (void)st, (void)pos, (void)cost;
}

const hn_strategy hn_strategy_brute_force = {"brute_force", "every valid configuration in order", create, propose,
                                             observe, free};
