/*
 * tune.h: the search loop of `harness tune`, shared by the command (tune.c)
 * and the strategy comparison (compare_strategies.c): a strategy proposes, an evaluator
 * answers, within a budget.
 */
#ifndef HN_TUNE_H
#define HN_TUNE_H

#include <stdint.h>
#include <stdio.h>

#include "space.h"
#include "strategy.h"

/* A budget: evaluations, wall seconds, or a fraction of the valid space (the
 * first non-zero one that is set; several may be set: the search stops at the
 * first reached). */
typedef struct {
    int64_t evals;
    double seconds;
    double fraction;
} hn_tune_budget;

/* "100", "60s", "10%"; NULL gives the default (100 evaluations). */
int hn_tune_parse_budget(const char *text, hn_tune_budget *b, hn_err *err);

/* How an evaluation is answered: fn returns the cost of position pos (ms, or
 * INFINITY when the configuration failed; NAN stops the search with err set);
 * prefetch (may be NULL) is told a batch about to be evaluated. batch (may be
 * NULL) answers several new positions at once (on several devices): cost[i]
 * and noise[i] of pos[i], -1 with err to stop the search, or 1 when it was
 * interrupted partway (cost[i] NAN for the positions it did not evaluate; the
 * search keeps the others and ends). With batch, the search asks the same
 * positions in the same order and tells the strategy the same costs as with fn;
 * only the evaluations of a batch overlap in time. stop (may be NULL) is asked
 * before each batch: nonzero ends the search where it is (an interrupt), with
 * what it found so far. */
typedef struct {
    double (*fn)(void *ctx, const hn_space *s, int64_t pos, double *noise, int *fresh, hn_err *err);
    void (*prefetch)(void *ctx, const hn_space *s, const int64_t *pos, int n);
    int (*batch)(void *ctx, const hn_space *s, const int64_t *pos, int n, double *cost, double *noise, hn_err *err);
    int (*stop)(void *ctx);
} hn_tune_eval_fn;

#define HN_TUNE_MAX_CURVE 100000
#define HN_TUNE_MAX_TOP 16

/* What a search found: the best cost after each evaluation (its curve), the
 * best position and when it was found, and the best few (for a final
 * re-measure), cheapest first; stopped: it ended early (eval.stop, or a batch
 * interrupted), before its budget or the space ran out. */
typedef struct {
    int64_t evals;
    int stopped;
    double seconds;
    int64_t best_pos;
    double best_cost;
    int64_t best_at;           /* the evaluation that found it (1-based) */
    int n_curve;
    double curve[HN_TUNE_MAX_CURVE];
    int n_top;
    int64_t top[HN_TUNE_MAX_TOP];
    double top_cost[HN_TUNE_MAX_TOP];
} hn_tune_trace;

/* The evaluations budget b allows on space s (INT64_MAX: only a time limit,
 * but never more than the space holds). */
int64_t hn_tune_max_evals(const hn_tune_budget *b, const hn_space *s);

/* Runs strategy st on space s from seed within budget. Returns 0, or -1 when
 * an evaluation could not be made at all (err). trace is large: allocate it. */
int hn_tune_search(const hn_strategy *st, const hn_space *s, uint64_t seed, const hn_tune_budget *budget,
                   hn_tune_eval_fn eval, void *ctx, hn_tune_trace *trace, hn_err *err);

/* `harness bench tune` (bench_tune.c): prints the figures; -1 when one failed. */
int hn_tune_bench(FILE *out);

#endif
