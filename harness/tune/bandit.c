/* bandit.c: the AUC bandit (ATF; OpenTuner's AUCBanditMetaTechnique) sharing
 * the budget between the search strategies: annealing, genetic,
 * diff_evolution, pso and local_search (its arms, one instance each, seeded
 * from its seed).
 *
 * Each batch of proposals comes from one arm: the one with the highest score
 *     AUC(arm) + C * sqrt(2 log2(n) / n_arm)
 * over the last WINDOW (500) evaluations, n of them and n_arm the arm's. AUC is
 * the area under the arm's curve of gains (1 when its evaluation gave a new
 * best of the whole search, 0 otherwise) weighted by recency:
 * sum_k k g_k / (n_arm (n_arm + 1) / 2) over the arm's k-th evaluation in the
 * window, so an arm that just improved scores near 1 and one that never did 0;
 * the exploration term (C = 0.05) lets a starved arm back in. An arm never used
 * goes first; ties go to the first in the list.
 *
 * Every cost is told to the arm that proposed it; the others learn only from
 * their own proposals. The bandit knows every cost, though: a position an arm
 * proposes that another has evaluated is answered at once from the bandit's
 * memo, so the budget goes only to configurations new to the whole search. An
 * arm that returns 0 is retired; one that proposes only known positions for
 * SKIP (256) rounds is passed over for this batch (and when every arm is, the
 * bandit proposes a random unseen configuration itself). The bandit returns 0
 * when every arm is retired or the whole space is known.
 */
#include <math.h>
#include <stdlib.h>

#include "memo.h"
#include "strategy.h"
#include "util.h"

#define C_EXPLORE 0.05
#define WINDOW 500
#define SKIP 256

extern const hn_strategy hn_strategy_annealing, hn_strategy_genetic, hn_strategy_diff_evolution, hn_strategy_pso,
    hn_strategy_local_search;
static const hn_strategy *const arm_kinds[] = {&hn_strategy_annealing, &hn_strategy_genetic,
                                               &hn_strategy_diff_evolution, &hn_strategy_pso,
                                               &hn_strategy_local_search};
#define N_ARMS ((int)(sizeof arm_kinds / sizeof arm_kinds[0]))

typedef struct {
    const hn_space *s;
    uint64_t rng;
    hn_memo memo;
    double best_cost;
    void *arm[N_ARMS];
    int retired[N_ARMS];
    /* the last WINDOW evaluations: which arm, and whether it gave a new best */
    signed char hist_arm[WINDOW], hist_gain[WINDOW];
    int n_hist, next_hist;
    /* the batch in flight: positions and their arms (-1: the bandit's own) */
    int64_t *pend, *buf;
    int *pend_arm, n_pend, cap;
} bandit;

static void *create(const hn_space *s, uint64_t seed) {
    bandit *b = xcalloc(1, sizeof *b);
    b->s = s;
    b->rng = seed ^ 0xba4d17ULL;
    hn_memo_init(&b->memo);
    b->best_cost = INFINITY;
    for (int a = 0; a < N_ARMS; a++) {
        uint64_t arm_seed = seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(a + 1);
        b->arm[a] = arm_kinds[a]->create(s, hn_splitmix64(&arm_seed));
    }
    return b;
}

/* The arm to ask next among those not retired nor passed over; -1 if none. */
static int choose(const bandit *b, const int *passed) {
    int uses[N_ARMS] = {0};
    double auc[N_ARMS] = {0};
    for (int i = 0; i < b->n_hist; i++) {
        int h = (b->next_hist - b->n_hist + i + WINDOW) % WINDOW, a = b->hist_arm[h];
        if (a >= 0) uses[a]++, auc[a] += uses[a] * b->hist_gain[h];
    }
    int pick = -1;
    double top = -1;
    for (int a = 0; a < N_ARMS; a++) {
        if (b->retired[a] || passed[a]) continue;
        if (!uses[a]) return a;
        double score = auc[a] / (uses[a] * (uses[a] + 1) / 2.0) +
                       C_EXPLORE * sqrt(2 * log2((double)b->n_hist) / uses[a]);
        if (score > top) top = score, pick = a;
    }
    return pick;
}

static int propose(void *st, int64_t *out, int max) {
    bandit *b = st;
    if (max < 1 || hn_memo_full(&b->memo, b->s)) return 0;
    if (max > b->cap) {
        b->cap = max;
        b->pend = xrealloc(b->pend, (size_t)max * sizeof *b->pend);
        b->buf = xrealloc(b->buf, (size_t)max * sizeof *b->buf);
        b->pend_arm = xrealloc(b->pend_arm, (size_t)max * sizeof *b->pend_arm);
    }
    int passed[N_ARMS] = {0}, k = 0, a;
    while (!k && (a = choose(b, passed)) >= 0) {
        for (int round = 0; round < SKIP && !k; round++) {
            int n = arm_kinds[a]->propose(b->arm[a], b->buf, max);
            if (n <= 0) {
                b->retired[a] = 1;
                break;
            }
            for (int i = 0; i < n; i++) {
                double cost;
                if (hn_memo_get(&b->memo, b->buf[i], &cost) && !isnan(cost)) {
                    arm_kinds[a]->observe(b->arm[a], b->buf[i], cost);
                } else {
                    hn_memo_put(&b->memo, b->buf[i], NAN);
                    b->pend_arm[k] = a;
                    out[k++] = b->buf[i];
                }
            }
        }
        passed[a] = 1;
    }
    if (!k) {
        int all_retired = 1;
        for (a = 0; a < N_ARMS; a++) all_retired &= b->retired[a];
        int64_t q = all_retired ? -1 : hn_memo_unseen(&b->memo, b->s, &b->rng);
        if (q < 0) return 0;
        hn_memo_put(&b->memo, q, NAN);
        b->pend_arm[k] = -1;
        out[k++] = q;
    }
    for (int i = 0; i < k; i++) b->pend[i] = out[i];
    b->n_pend = k;
    return k;
}

static void observe(void *st, int64_t pos, double cost) {
    bandit *b = st;
    int a = -1;
    for (int i = 0; i < b->n_pend; i++)
        if (b->pend[i] == pos) a = b->pend_arm[i];
    hn_memo_put(&b->memo, pos, cost);
    int gain = cost < b->best_cost;
    if (gain) b->best_cost = cost;
    if (a >= 0) arm_kinds[a]->observe(b->arm[a], pos, cost);
    for (int o = 0; o < N_ARMS && gain; o++)
        if (o != a && arm_kinds[o]->learn) arm_kinds[o]->learn(b->arm[o], pos, cost);
    b->hist_arm[b->next_hist] = (signed char)a;
    b->hist_gain[b->next_hist] = (signed char)gain;
    b->next_hist = (b->next_hist + 1) % WINDOW;
    if (b->n_hist < WINDOW) b->n_hist++;
}

static void destroy(void *st) {
    bandit *b = st;
    if (!b) return;
    for (int a = 0; a < N_ARMS; a++) arm_kinds[a]->destroy(b->arm[a]);
    hn_memo_free(&b->memo);
    free(b->pend);
    free(b->buf);
    free(b->pend_arm);
    free(b);
}

const hn_strategy hn_strategy_bandit = {"bandit", "AUC bandit sharing the budget between the search strategies", create,
                                        propose, observe, destroy, NULL};
