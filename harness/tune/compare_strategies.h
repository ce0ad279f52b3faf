/*
 * compare_strategies.h: `harness tune --replay JOURNAL --compare-strategies`
 * (compare_strategies.c): every strategy over many seeds on a recorded space,
 * scored against random search.
 */
#ifndef HN_COMPARE_STRATEGIES_H
#define HN_COMPARE_STRATEGIES_H

#include "journal.h"
#include "tune.h"

typedef struct {
    const char *variant;        /* the tuned variant's name (journal entries) */
    const hn_journal *journal;  /* the recorded space */
    const char *journal_path;
    int n_units;                /* a case each, or one across cases */
    hn_space *const *spaces;    /* [n_units] */
    const char *const *unit_names;           /* [n_units] "case 3" */
    const int *unit_n_cases;                 /* [n_units] */
    char *const *const *unit_case_values;    /* [n_units][unit_n_cases[u]] */
    const hn_tune_budget *budget;
    int repeats;                /* runs per strategy (seeds seed, seed+1, ...); <= 0: 100 */
    uint64_t seed;
    const char *prefix;         /* <prefix>.strategies.csv|.dat|.png */
} hn_tune_compare_in;

/* Prints the comparison and writes its files; -1 with err on failure. */
int hn_tune_compare(const hn_tune_compare_in *in, hn_err *err);

#endif
