/*
 * stats.h: summary statistics of timing samples, and the sampler that decides
 * when a row has been measured enough (nvbench-style stopping rules).
 *
 * Pure C over numbers: nothing here touches a GPU, a backend or a clock. The
 * timing loop takes a sample (an event pair around one launch on CUDA, the host's
 * monotonic clock on the emulator), hands it to hn_sampler_add with the SM clock
 * ratio seen during it, and asks hn_sampler_done with the wall time it has spent
 * on the row so far. Because the wall time is an argument, every rule can be
 * tested on a synthetic stream. docs/measurement.md has the full story.
 *
 *   hn_stats       summary of an array: n, sum, mean, median, min, max, q1, q3,
 *                  stdev (sample, n-1), rel_stdev (stdev/|mean|, a fraction).
 *                  Quantiles interpolate linearly between order statistics
 *                  (numpy's default, Hyndman & Fan type 7).
 *   hn_sampler     kept samples plus the running noise estimate and its history.
 *
 * Sampler invariants:
 *   - a sample is one of: warm-up (the first opts.warmup adds), throttled
 *     (known clock ratio under opts.clock_threshold), invalid (not finite or
 *     negative), full (opts.max_samples already kept), or kept. Only kept
 *     samples enter the statistics, the noise estimate and min_time.
 *   - count <= opts.max_samples; samples are stored in the order added.
 *   - the stop decision is a pure function of the sampler's state and the
 *     elapsed wall time passed in: done() and reason() with the same arguments
 *     always agree.
 *
 * Ownership: hn_sampler_create returns an object the caller frees with
 * hn_sampler_destroy (NULL-safe). Pointers returned by accessors stay valid
 * until the next add, reset or destroy.
 */
#ifndef HN_STATS_H
#define HN_STATS_H

#include "util.h"

/* ---- summary statistics ---------------------------------------------------- */

typedef struct {
    int n;
    double sum;
    double mean;
    double median;
    double min, max;
    double q1, q3;      /* 25th and 75th percentiles (linear interpolation) */
    double stdev;       /* sample standard deviation, divisor n-1 */
    double rel_stdev;   /* stdev / |mean|, as a fraction (0.01 = 1 %) */
} hn_stats;

/* Summarises x[0..n) (finite values; x is not modified and may be NULL when
 * n == 0). Defined outputs at the edges:
 *   n == 0: n = 0, sum = 0, every other field NaN ("no data"; callers test n).
 *   n == 1: mean = median = min = max = q1 = q3 = x[0]; stdev = rel_stdev = 0.
 *   mean == 0: rel_stdev = 0 if stdev == 0, else +INFINITY.
 * Never fails (allocation failure aborts, as everywhere). */
void hn_stats_compute(const double *x, int n, hn_stats *out);

/* The p-quantile (0 <= p <= 1, clamped) of sorted[0..n) ascending, by linear
 * interpolation: h = (n-1)p, result = s[floor h] + (h - floor h)(s[floor h+1] -
 * s[floor h]). NaN when n == 0. */
double hn_stats_quantile(const double *sorted, int n, double p);

/* ---- sampling options and presets ------------------------------------------ */

typedef struct {
    int warmup;             /* leading adds that are thrown away (count) */
    int min_samples;        /* kept samples before any convergence rule applies */
    double min_time;        /* seconds of kept (measured) time before convergence */
    double max_noise;       /* stop when rel stdev < this (fraction) */
    double timeout;         /* seconds of wall time per row; <= 0 means none */
    int max_samples;        /* hard cap on kept samples */
    double clock_threshold; /* discard a sample whose clock ratio is known and
                               below this fraction of the default clock; <= 0
                               never discards */
    int settle_window;      /* noise-history length the "settled" rule looks at;
                               0 disables the rule */
    double settle_tol;      /* "settled" when the window's relative spread and
                               relative drift are both under this */
} hn_sampling_opts;

/* The GPU defaults (nvbench's, but min_time 0.1 s): warmup 1, min_samples 10, min_time 0.1 s,
 * max_noise 0.005, timeout 15 s, max_samples 100000, clock_threshold 0.75,
 * settle_window 64, settle_tol 0.05. */
void hn_sampling_defaults(hn_sampling_opts *o);

/* The quick preset, for exploration and the CPU emulator: warmup 1,
 * min_samples 5, min_time 0, max_noise 0.05, timeout 2 s, max_samples 10000,
 * clock_threshold 0.75, settle_window 16, settle_tol 0.05. */
void hn_sampling_quick(hn_sampling_opts *o);

/* Checks that o is usable: warmup >= 0; 1 <= min_samples <= max_samples;
 * min_time and max_noise finite and >= 0; timeout and clock_threshold not NaN
 * (any other value works: timeout <= 0 or +inf never times out); settle_window
 * 0 (off) or >= 2, and then settle_tol finite and > 0. Returns 0, or -1 with
 * err set. */
int hn_sampling_check(const hn_sampling_opts *o, hn_err *err);

/* ---- the sampler ----------------------------------------------------------- */

typedef enum {
    HN_SAMPLE_KEPT = 0,     /* entered the statistics */
    HN_SAMPLE_WARMUP,       /* one of the first opts.warmup adds */
    HN_SAMPLE_THROTTLED,    /* clock ratio known and under the threshold */
    HN_SAMPLE_INVALID,      /* NaN, infinite or negative time */
    HN_SAMPLE_FULL          /* max_samples already kept */
} hn_sample_fate;

typedef enum {
    HN_STOP_NONE = 0,       /* keep sampling */
    HN_STOP_NOISE,          /* "noise": rel stdev under max_noise */
    HN_STOP_SETTLED,        /* "settled": the noise estimate stopped moving */
    HN_STOP_MAX_SAMPLES,    /* "max_samples": the cap was reached */
    HN_STOP_TIMEOUT         /* "timeout": the row's wall time ran out */
} hn_stop;

typedef struct hn_sampler hn_sampler;

/* Makes a sampler with a copy of opts. Returns NULL with err set if opts fail
 * hn_sampling_check. The caller owns the result (hn_sampler_destroy). */
hn_sampler *hn_sampler_create(const hn_sampling_opts *opts, hn_err *err);

/* Frees s and everything it owns. NULL-safe. */
void hn_sampler_destroy(hn_sampler *s);

/* Forgets every sample (warm-up included) and keeps opts and memory, ready for
 * the next row. */
void hn_sampler_reset(hn_sampler *s);

/* Offers one sample: `seconds` of measured time, taken while the SM clock was
 * clock_ratio (observed clock / default clock) of its default; a negative or NaN
 * clock_ratio means unknown and never discards. Returns what became of it (see
 * hn_sample_fate); only HN_SAMPLE_KEPT changes the statistics. */
hn_sample_fate hn_sampler_add(hn_sampler *s, double seconds, double clock_ratio);

/* Whether to stop, given the wall time spent on this row so far (the caller
 * chooses the origin; the lead's loop counts from the first warm-up). The
 * rules, first match wins (n = kept samples, T = their total time):
 *   1. n >= max(min_samples, 2) and T >= min_time, and
 *        "noise":   rel stdev of the kept samples < max_noise, else
 *        "settled": the last settle_window noise values recorded (one per kept
 *                   sample once the gate in 1. holds) all exist, and both
 *                   stdev(window)/mean(window) and |slope| * (settle_window-1)
 *                   / mean(window) are < settle_tol (slope by least squares
 *                   against sample index).
 *   2. "max_samples": n >= max_samples.
 *   3. "timeout": timeout > 0 and elapsed >= timeout (even with n == 0).
 * Pure: the same state and elapsed give the same answer. */
hn_stop hn_sampler_stop(const hn_sampler *s, double elapsed_wall_seconds);

/* hn_sampler_stop(s, elapsed) != HN_STOP_NONE. */
int hn_sampler_done(const hn_sampler *s, double elapsed_wall_seconds);

/* The name of hn_sampler_stop(s, elapsed): "noise", "settled", "max_samples",
 * "timeout", or "" when not done. A static string. */
const char *hn_sampler_reason(const hn_sampler *s, double elapsed_wall_seconds);

/* The name of a stop code, as above ("" for HN_STOP_NONE). */
const char *hn_stop_name(hn_stop why);

/* The kept samples in the order added; *n (if n is not NULL) gets their count.
 * The array belongs to s (valid until the next add, reset or destroy); it may
 * be NULL when the count is 0. */
const double *hn_sampler_samples(const hn_sampler *s, int *n);

int hn_sampler_count(const hn_sampler *s);        /* kept */
int hn_sampler_discarded(const hn_sampler *s);    /* throttled */
int hn_sampler_rejected(const hn_sampler *s);     /* invalid or over the cap */
int hn_sampler_warmups(const hn_sampler *s);      /* warm-up adds seen */
double hn_sampler_total(const hn_sampler *s);     /* seconds of kept samples */

/* The running rel stdev of the kept samples (the value rule "noise" tests):
 * +INFINITY while fewer than 2 are kept. */
double hn_sampler_noise(const hn_sampler *s);

/* Mean clock ratio over kept samples whose ratio was known; -1 if none was. */
double hn_sampler_clock_ratio(const hn_sampler *s);

/* The final summary of the kept samples (hn_stats_compute on them). */
void hn_sampler_stats(const hn_sampler *s, hn_stats *out);

#endif
