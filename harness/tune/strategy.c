/* strategy.c: the list of strategies and the helpers they share (strategy.h). */
#include "strategy.h"

#include <stdlib.h>
#include <string.h>

extern const hn_strategy hn_strategy_brute_force, hn_strategy_random;

const hn_strategy *const hn_strategies[] = {&hn_strategy_brute_force, &hn_strategy_random, NULL};

const hn_strategy *hn_strategy_find(const char *name) {
    for (int i = 0; hn_strategies[i]; i++)
        if (strcmp(hn_strategies[i]->name, name) == 0) return hn_strategies[i];
    return NULL;
}

const char *hn_strategy_names(void) {
    static char buf[512];
    if (!buf[0]) {
        size_t n = 0;
        for (int i = 0; hn_strategies[i] && n + 2 < sizeof buf; i++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "", hn_strategies[i]->name);
    }
    return buf;
}

int hn_space_neighbours(const hn_space *s, int64_t pos, int64_t *out, int max) {
    int64_t raw = s->valid[pos];
    int n = 0;
    for (int t = 0; t < s->n_tunables && n < max; t++) {
        int v = hn_space_value(s, raw, t);
        for (int d = -1; d <= 1 && n < max; d += 2) {
            int nv = v + d;
            if (nv < 0 || nv >= s->n_values[t]) continue;
            int64_t q = hn_space_find(s, raw + (int64_t)d * s->radix[t]);
            if (q >= 0) out[n++] = q;
        }
    }
    return n;
}

int64_t hn_space_random(const hn_space *s, uint64_t *rng) {
    return s->n_valid ? (int64_t)hn_rand_below(rng, (uint64_t)s->n_valid) : -1;
}

int64_t hn_space_nearest(const hn_space *s, const int *vals, uint64_t *rng) {
    if (!s->n_valid) return -1;
    int64_t q = hn_space_find(s, hn_space_raw(s, vals));
    if (q >= 0) return q;
    /* widen: random points within a growing box around vals */
    int *try = calloc((size_t)s->n_tunables + 1, sizeof *try);
    for (int radius = 1; radius < 64 && q < 0; radius *= 2)
        for (int attempt = 0; attempt < 64 && q < 0; attempt++) {
            for (int t = 0; t < s->n_tunables; t++) {
                int lo = vals[t] - radius, hi = vals[t] + radius;
                if (lo < 0) lo = 0;
                if (hi >= s->n_values[t]) hi = s->n_values[t] - 1;
                try[t] = lo + (int)hn_rand_below(rng, (uint64_t)(hi - lo + 1));
            }
            q = hn_space_find(s, hn_space_raw(s, try));
        }
    free(try);
    return q >= 0 ? q : hn_space_random(s, rng);
}
