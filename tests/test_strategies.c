/*
 * test_strategies.c: every tuning strategy (harness/tune/strategy.h) on spaces
 * built by hand (tunables, value lists, some configurations removed as a
 * restriction would) and synthetic cost landscapes, driven through
 * hn_tune_search: the same seed gives the same evaluations and another seed
 * others; every position is in range; with no budget limit each strategy says
 * it is done once the whole space is known, without proposing known positions;
 * empty, 1-, 2-configuration and all-failing spaces report no best or the right
 * one; and on a smooth landscape of ~2000 configurations each search finds the
 * optimum (within 5%) within 10% of the space far more often than random
 * sampling. Last, the figures of docs/strategies.md: evaluations to within 5%
 * of the optimum per strategy and landscape, mean over seeds, on that space and
 * on one of ~60000 configurations.
 */
#include <stdint.h>

#include "hn_test.h"
#include "tune/memo.h"
#include "tune/strategy.h"
#include "tune/tune.h"

#define SEEDS 50

/* ---- spaces and landscapes ------------------------------------------------------ */

/* A space of nt tunables with nv[t] values each, keeping the configurations
 * that keep() accepts (NULL: all). */
static hn_space *space_make(int nt, const int *nv, int (*keep)(const int *vals)) {
    hn_space *s = calloc(1, sizeof *s);
    s->n_tunables = nt;
    s->n_values = calloc((size_t)nt + 1, sizeof *s->n_values);
    s->radix = calloc((size_t)nt + 1, sizeof *s->radix);
    s->n_raw = 1;
    for (int t = nt - 1; t >= 0; t--) {
        s->n_values[t] = nv[t];
        s->radix[t] = (int64_t)s->n_raw;
        s->n_raw *= nv[t];
    }
    s->valid = calloc((size_t)s->n_raw, sizeof *s->valid);
    int vals[8];
    for (int64_t raw = 0; raw < (int64_t)s->n_raw; raw++) {
        for (int t = 0; t < nt; t++) vals[t] = hn_space_value(s, raw, t);
        if (!keep || keep(vals)) s->valid[s->n_valid++] = raw;
    }
    return s;
}

static void space_destroy(hn_space *s) {
    if (!s) return;
    free(s->n_values);
    free(s->radix);
    free(s->valid);
    free(s);
}

/* The main space: 10 x 10 x 5 x 5, "v0 + v1 <= 12" (1975 of 2500 valid). */
static int keep_main(const int *v) {
    return v[0] + v[1] <= 12;
}
static const int main_nv[] = {10, 10, 5, 5};

enum { SMOOTH, RUGGED, FAILING, PLATEAU, MOSTLY_FAILING, ALL_FAIL, N_LANDSCAPES };
static const char *const landscape_names[] = {"smooth", "rugged", "failing", "plateau", "mostly_failing", "all_fail"};

static double hash_unit(int64_t raw) {
    uint64_t x = (uint64_t)raw * 0x9e3779b97f4a7c15ULL + 12345;
    x ^= x >> 31, x *= 0xbf58476d1ce4e5b9ULL, x ^= x >> 27;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* ms. smooth: a bowl around (7, 5, 3, 1), on the restriction's edge (3
 * configurations within 5% of the optimum); rugged: the bowl plus bumps of up to
 * 25% (local minima everywhere); failing: rugged with a failed corner and one
 * configuration in six failing at random; plateau: the bowl in steps of 10%;
 * mostly_failing: rugged with 9 configurations in 10 failing at random. Spaces
 * of more tunables get more bowl terms (centre, weight). */
static double landscape(int kind, const hn_space *s, int64_t pos) {
    int v[8];
    for (int t = 0; t < s->n_tunables; t++) v[t] = hn_space_value(s, s->valid[pos], t);
    const double centre[] = {7, 5, 3, 1, 4, 2}, weight[] = {0.04, 0.04, 0.08, 0.06, 0.03, 0.05};
    double bowl = 1;
    for (int t = 0; t < s->n_tunables && t < 6; t++) bowl += weight[t] * (v[t] - centre[t]) * (v[t] - centre[t]);
    double bumps = 0.25 * hash_unit(s->valid[pos]);
    switch (kind) {
    case SMOOTH: return 0.37 * bowl;
    case RUGGED: return 0.37 * (bowl + bumps);
    case FAILING:
        if ((s->n_tunables >= 4 && v[2] >= 3 && v[3] >= 3) || hash_unit(s->valid[pos] + 777) < 1.0 / 6) return INFINITY;
        return 0.37 * (bowl + bumps);
    case PLATEAU: return 0.37 * (1 + floor((bowl - 1) * 10) / 10);
    case MOSTLY_FAILING: return hash_unit(s->valid[pos] + 999) < 0.9 ? INFINITY : 0.37 * (bowl + bumps);
    default: return INFINITY;
    }
}

/* ---- the evaluator -------------------------------------------------------------- */

typedef struct {
    int kind;
    int64_t *log; /* the positions evaluated, in order */
    int64_t n_log, cap;
    int64_t out_of_range;
    double target; /* > 0: stop the search once a cost at or under it is found */
    int reached;
} evaluator;

static double eval_fn(void *ctx, const hn_space *s, int64_t pos, double *noise, int *fresh, hn_err *err) {
    evaluator *e = ctx;
    if (e->reached) {
        hn_errf(err, "target reached");
        return NAN;
    }
    *noise = 0;
    *fresh = 1;
    if (pos < 0 || pos >= s->n_valid) {
        e->out_of_range++;
        return INFINITY;
    }
    if (e->n_log == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->log = realloc(e->log, (size_t)e->cap * sizeof *e->log);
    }
    e->log[e->n_log++] = pos;
    double c = landscape(e->kind, s, pos);
    e->reached = c <= e->target;
    return c;
}

static hn_tune_trace trace;

/* One search; the evaluations are in e->log (the caller frees it). */
static void search(const hn_strategy *st, const hn_space *s, int kind, uint64_t seed, hn_tune_budget b, evaluator *e) {
    *e = (evaluator){.kind = kind};
    hn_err err;
    int rc = hn_tune_search(st, s, seed, &b, (hn_tune_eval_fn){eval_fn, NULL, NULL, NULL}, e, &trace, &err);
    CHECK_MSG(rc == 0, "%s: search failed", st->name);
    CHECK_MSG(e->out_of_range == 0, "%s: %lld positions out of range", st->name, (long long)e->out_of_range);
    CHECK_MSG(e->n_log == trace.evals, "%s: %lld logged, %lld counted", st->name, (long long)e->n_log,
              (long long)trace.evals);
}

static double optimum(const hn_space *s, int kind) {
    double best = INFINITY;
    for (int64_t p = 0; p < s->n_valid; p++) {
        double c = landscape(kind, s, p);
        if (c < best) best = c;
    }
    return best;
}

/* ---- the tests ------------------------------------------------------------------ */

static void test_deterministic(void) {
    hn_space *s = space_make(4, main_nv, keep_main);
    CHECK_INT(s->n_valid, 1975);
    hn_tune_budget b = {.evals = 150};
    for (int i = 0; hn_strategies[i]; i++) {
        const hn_strategy *st = hn_strategies[i];
        evaluator e1, e2, e3;
        search(st, s, FAILING, 1, b, &e1);
        search(st, s, FAILING, 1, b, &e2);
        search(st, s, FAILING, 2, b, &e3);
        CHECK_MSG(e1.n_log == 150, "%s: %lld evaluations", st->name, (long long)e1.n_log);
        int same = e1.n_log == e2.n_log && !memcmp(e1.log, e2.log, (size_t)e1.n_log * sizeof *e1.log);
        int other = e1.n_log != e3.n_log || memcmp(e1.log, e3.log, (size_t)e1.n_log * sizeof *e1.log);
        CHECK_MSG(same, "%s: the same seed gave another path", st->name);
        if (strcmp(st->name, "brute_force") != 0) CHECK_MSG(other, "%s: another seed gave the same path", st->name);
        /* a strategy never spends budget twice on a position */
        for (int64_t a = 0; a < e1.n_log; a++)
            for (int64_t c = a + 1; c < e1.n_log; c++) CHECK(e1.log[a] != e1.log[c]);
        free(e1.log);
        free(e2.log);
        free(e3.log);
    }
    space_destroy(s);
}

/* Without a budget, as the driver would run it, counting batches of known
 * positions only: each strategy must end by returning 0 once it knows all. */
static void drive_to_the_end(const hn_strategy *st, const hn_space *s, int kind, uint64_t seed) {
    void *state = st->create(s, seed);
    hn_memo known;
    hn_memo_init(&known);
    int64_t batch[8], evals = 0, calls = 0, repeat_batches = 0;
    int n;
    while ((n = st->propose(state, batch, 8)) > 0 && calls++ < 10 * s->n_valid + 10) {
        int fresh = 0;
        for (int i = 0; i < n; i++) {
            CHECK(batch[i] >= 0 && batch[i] < s->n_valid);
            double c;
            if (!hn_memo_get(&known, batch[i], &c)) {
                c = landscape(kind, s, batch[i]);
                hn_memo_put(&known, batch[i], c);
                evals++, fresh++;
            }
            st->observe(state, batch[i], c);
        }
        if (!fresh) repeat_batches++;
    }
    CHECK_MSG(n == 0, "%s: still proposing after %lld calls", st->name, (long long)calls);
    CHECK_MSG(evals == s->n_valid, "%s: %lld of %lld evaluated", st->name, (long long)evals, (long long)s->n_valid);
    CHECK_MSG(repeat_batches == 0, "%s: %lld batches of known positions", st->name, (long long)repeat_batches);
    hn_memo_free(&known);
    st->destroy(state);
}

static int keep_small(const int *v) {
    return v[0] * v[1] <= 12;
}

static void test_terminates(void) {
    const int nv[] = {6, 5, 4, 2};
    hn_space *s = space_make(4, nv, keep_small);
    hn_space *big = space_make(4, main_nv, keep_main);
    for (int i = 0; hn_strategies[i]; i++) {
        drive_to_the_end(hn_strategies[i], s, FAILING, 3);
        drive_to_the_end(hn_strategies[i], s, PLATEAU, 4);
        /* and through the driver: the whole space, each position once */
        evaluator e;
        search(hn_strategies[i], big, RUGGED, 5, (hn_tune_budget){.fraction = 1.0}, &e);
        CHECK_MSG(e.n_log == big->n_valid, "%s: %lld of the space", hn_strategies[i]->name, (long long)e.n_log);
        CHECK_NEAR(trace.best_cost, optimum(big, RUGGED), 0);
        free(e.log);
    }
    space_destroy(s);
    space_destroy(big);
}

static int keep_one(const int *v) {
    return v[0] == 2 && v[1] == 1;
}
static int keep_two(const int *v) {
    return v[0] == v[1] && v[0] < 2;
}
static int keep_none(const int *v) {
    (void)v;
    return 0;
}

static void test_tiny_spaces(void) {
    const int nv[] = {3, 3};
    hn_space *none = space_make(2, nv, keep_none), *one = space_make(2, nv, keep_one), *two = space_make(2, nv, keep_two);
    hn_space *bare = space_make(0, nv, NULL), *big = space_make(4, main_nv, keep_main);
    CHECK_INT(none->n_valid, 0);
    CHECK_INT(one->n_valid, 1);
    CHECK_INT(two->n_valid, 2);
    CHECK_INT(bare->n_valid, 1);
    hn_tune_budget b = {.evals = 100};
    for (int i = 0; hn_strategies[i]; i++) {
        const hn_strategy *st = hn_strategies[i];
        evaluator e;
        search(st, none, SMOOTH, 1, b, &e);
        CHECK(trace.evals == 0 && trace.best_pos == -1 && trace.n_top == 0);
        free(e.log);
        search(st, one, SMOOTH, 1, b, &e);
        CHECK(trace.evals == 1 && trace.best_pos == 0 && trace.n_top == 1);
        free(e.log);
        search(st, one, ALL_FAIL, 1, b, &e);
        CHECK(trace.evals == 1 && trace.best_pos == -1 && trace.n_top == 0);
        free(e.log);
        search(st, bare, SMOOTH, 1, b, &e);
        CHECK(trace.evals == 1 && trace.best_pos == 0);
        free(e.log);
        search(st, two, SMOOTH, 1, b, &e);
        CHECK_MSG(trace.evals == 2 && trace.best_pos == 1, "%s: %lld evals, best %lld", st->name,
                  (long long)trace.evals, (long long)trace.best_pos);
        free(e.log);
        drive_to_the_end(st, two, SMOOTH, 7);
        drive_to_the_end(st, one, ALL_FAIL, 7);
        /* everything fails: the search goes on to the end of its budget */
        search(st, big, ALL_FAIL, 1, b, &e);
        CHECK_MSG(trace.evals == 100 && trace.best_pos == -1 && trace.n_top == 0, "%s: %lld evals on failures",
                  st->name, (long long)trace.evals);
        free(e.log);
    }
    space_destroy(none);
    space_destroy(one);
    space_destroy(two);
    space_destroy(bare);
    space_destroy(big);
}

/* Evaluations until a cost within 5% of the optimum (the whole space, with
 * no budget limit). */
static int64_t evals_to_5pct(const hn_strategy *st, const hn_space *s, int kind, uint64_t seed) {
    evaluator e = {.kind = kind, .target = 1.05 * optimum(s, kind)};
    hn_tune_budget b = {.fraction = 1.0};
    hn_err err;
    hn_tune_search(st, s, seed, &b, (hn_tune_eval_fn){eval_fn, NULL, NULL, NULL}, &e, &trace, &err);
    CHECK_MSG(e.reached, "%s: never within 5%% on %s", st->name, landscape_names[kind]);
    free(e.log);
    return e.n_log;
}

/* Within 10% of the space (198 evaluations), the searches reach 5% of the
 * optimum of the smooth landscape far more often than random sampling (whose
 * expected rate is 1 - (1 - 3/1975)^198 = 26%). */
static void test_beats_random(void) {
    hn_space *s = space_make(4, main_nv, keep_main);
    double opt = optimum(s, SMOOTH);
    hn_tune_budget b = {.fraction = 0.1};
    int hits[16] = {0};
    for (int i = 0; hn_strategies[i]; i++) {
        for (uint64_t seed = 1; seed <= SEEDS; seed++) {
            evaluator e;
            search(hn_strategies[i], s, SMOOTH, seed, b, &e);
            CHECK_INT(e.n_log, 198);
            hits[i] += trace.best_cost <= 1.05 * opt;
            free(e.log);
        }
        printf("within 5%% in 10%% of the smooth space: %-15s %2d of %d seeds\n", hn_strategies[i]->name, hits[i], SEEDS);
    }
    int random = -1;
    for (int i = 0; hn_strategies[i]; i++)
        if (!strcmp(hn_strategies[i]->name, "random")) random = i;
    CHECK(random >= 0 && hits[random] < SEEDS / 2);
    for (int i = 0; hn_strategies[i]; i++) {
        const char *name = hn_strategies[i]->name;
        if (!strcmp(name, "random") || !strcmp(name, "brute_force")) continue;
        CHECK_MSG(hits[i] >= 4 * SEEDS / 5 && hits[i] >= hits[random] + SEEDS / 3, "%s: %d of %d (random: %d)", name,
                  hits[i], SEEDS, hits[random]);
    }
    space_destroy(s);
}

/* Failures are just bad costs: with 9 configurations in 10 failing, every
 * strategy still finds working ones within a quarter of the space, and every
 * search one within 50% of the optimum; a time budget ends a search too. */
static void test_mostly_failing(void) {
    hn_space *s = space_make(4, main_nv, keep_main);
    double opt = optimum(s, MOSTLY_FAILING);
    for (int i = 0; hn_strategies[i]; i++) {
        for (uint64_t seed = 1; seed <= 10; seed++) {
            evaluator e;
            search(hn_strategies[i], s, MOSTLY_FAILING, seed, (hn_tune_budget){.fraction = 0.25}, &e);
            int in_order = !strcmp(hn_strategies[i]->name, "brute_force"); /* only a quarter of the space */
            CHECK_MSG(trace.evals == 494 && trace.best_pos >= 0 && (in_order || trace.best_cost <= 1.5 * opt),
                      "%s seed %d: %lld evaluations, best %g (optimum %g)", hn_strategies[i]->name, (int)seed,
                      (long long)trace.evals, trace.best_cost, opt);
            free(e.log);
        }
        evaluator e;
        search(hn_strategies[i], s, RUGGED, 1, (hn_tune_budget){.seconds = 0.05}, &e);
        CHECK(trace.evals >= 1 && trace.evals <= s->n_valid);
        free(e.log);
    }
    space_destroy(s);
}

/* ---- the figures of docs/strategies.md (printed, not asserted) -------------------- */

static int keep_large(const int *v) {
    return v[0] + v[1] + v[2] <= 14;
}

/* Mean evaluations to within 5% of the optimum per strategy and landscape.
 * Brute force and random are given by their exact expectations where `measure`
 * leaves them out: the first such configuration's position + 1, and
 * (N + 1) / (k + 1) for k such among N drawn without replacement. */
static void report_figures(const char *title, const hn_space *s, int seeds, int measure_baselines) {
    printf("\nevaluations to within 5%% of the optimum, %s (%lld configurations), mean over %d seeds\n%-15s", title,
           (long long)s->n_valid, seeds, "strategy");
    for (int k = SMOOTH; k <= MOSTLY_FAILING; k++) printf(" %14s", landscape_names[k]);
    printf("\n");
    for (int i = 0; hn_strategies[i]; i++) {
        const hn_strategy *st = hn_strategies[i];
        int brute = !strcmp(st->name, "brute_force"), random = !strcmp(st->name, "random");
        printf("%-15s", st->name);
        for (int k = SMOOTH; k <= MOSTLY_FAILING; k++) {
            double mean = 0;
            if ((brute || random) && !measure_baselines) {
                double opt = optimum(s, k), within = 0, first = -1;
                for (int64_t p = 0; p < s->n_valid; p++)
                    if (landscape(k, s, p) <= 1.05 * opt) within++, first = first < 0 ? (double)p : first;
                mean = brute ? first + 1 : (double)(s->n_valid + 1) / (within + 1);
            } else {
                for (uint64_t seed = 1; seed <= (uint64_t)seeds; seed++) mean += (double)evals_to_5pct(st, s, k, seed);
                mean /= seeds;
            }
            printf(" %14.0f", mean);
        }
        printf("\n");
    }
}

int main(void) {
    test_deterministic();
    test_terminates();
    test_tiny_spaces();
    test_beats_random();
    test_mostly_failing();
    hn_space *s = space_make(4, main_nv, keep_main);
    report_figures("10 x 10 x 5 x 5, v0 + v1 <= 12", s, SEEDS, 1);
    space_destroy(s);
    const int nv[] = {8, 8, 8, 6, 6, 4};
    s = space_make(6, nv, keep_large);
    report_figures("8 x 8 x 8 x 6 x 6 x 4, v0 + v1 + v2 <= 14", s, 20, 0);
    space_destroy(s);
    return hn_test_exit();
}
