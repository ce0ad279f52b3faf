/*
 * verdict.h: what a finished (or interrupted) `harness run` concludes from its
 * rows: per variant the count of each status and the geometric mean time, per
 * case the fastest correct variant and its margin over the next (flagged
 * "within noise" when the margin is smaller than the rows' own spread), the
 * variant that wins most cases; and the same verdict as data, <out>.best.csv.
 *
 * Inputs are arrays over (case, slot) as `harness run` collects them from its
 * worker (slots: the plan's variants, then the baselines); only the variants'
 * slots take part in the verdict.
 */
#ifndef HN_VERDICT_H
#define HN_VERDICT_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"

typedef struct {
    const hn_plan *plan;
    const unsigned char *selected; /* [n_variants] */
    int64_t n_cases;
    int n_slots;
    const signed char *status;     /* [n_cases * n_slots]: hn_status, or -1 for no row */
    const double *median_ms;       /* [n_cases * n_slots]: ok rows' medians, else NAN */
    const double *noise;           /* [n_cases * n_slots]: relative standard deviation, or NAN */
    int is_emu;                    /* times are CPU times of the emulator */
    int untimed;                   /* rows were not timed (the sanitizer): counts only */
} hn_verdict_in;

/* Whether b's margin over a (medians ms_a <= ms_b, noises as fractions) is
 * inside the rows' measured noise: (b - a) / a below the larger relative
 * standard deviation of the two. Unknown noise is not "within". */
int hn_verdict_within_noise(double ms_a, double noise_a, double ms_b, double noise_b);

/* Prints the per-variant table and (timed rows) the per-case verdict. */
void hn_verdict_print(const hn_verdict_in *in, FILE *out);

/* Writes the verdict as CSV to path: per case with a correct variant, the best
 * one with its kernel and defines, median, runner-up, margin and whether the
 * margin is within noise. */
int hn_verdict_write_best(const hn_verdict_in *in, const char *path, hn_err *err);

/* The path of the verdict file for a results file: x.csv -> x.best.csv. Caller
 * frees. */
char *hn_verdict_best_path(const char *out_path);

#endif
