/*
 * stats.c: summary statistics and the sampler's stopping rules (see stats.h).
 *
 * The sampler keeps a running mean and sum of squared deviations (Welford), so
 * the noise after each sample costs O(1), and a ring buffer of the last
 * settle_window noise values for the "settled" rule, which costs O(window) per
 * question. The final summary sorts a copy of the kept samples.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- summary statistics ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hn_stats_quantile(const double *sorted, int n, double p)
{
    if (n <= 0)
        return NAN;
    if (!(p > 0)) /* also catches NaN */
        p = 0;
    if (p > 1)
        p = 1;
    double h = (double)(n - 1) * p;
    int lo = (int)floor(h);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* stdev / |mean| with the edge cases stats.h promises. */
static double rel_of(double stdev, double mean)
{
    if (mean == 0)
        return stdev == 0 ? 0 : INFINITY;
    return stdev / fabs(mean);
}

void hn_stats_compute(const double *x, int n, hn_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0) {
        out->n = 0;
        out->sum = 0;
        out->mean = out->median = out->min = out->max = NAN;
        out->q1 = out->q3 = out->stdev = out->rel_stdev = NAN;
        return;
    }
    double *s = xmalloc((size_t)n * sizeof *s); // (n) sorted copy
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);

    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    double mean = sum / n;
    double ss = 0; /* two passes: accurate even when the spread is tiny */
    for (int i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);

    out->n = n;
    out->sum = sum;
    out->mean = mean;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = hn_stats_quantile(s, n, 0.5);
    out->q1 = hn_stats_quantile(s, n, 0.25);
    out->q3 = hn_stats_quantile(s, n, 0.75);
    out->stdev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    out->rel_stdev = rel_of(out->stdev, mean);
    free(s);
}

/* ---- options --------------------------------------------------------------- */

void hn_sampling_defaults(hn_sampling_opts *o)
{
    o->warmup = 1;
    o->min_samples = 10;
    o->min_time = 0.1;
    o->max_noise = 0.005;
    o->timeout = 15.0;
    o->max_samples = 100000;
    o->clock_threshold = 0.75;
    o->settle_window = 64;
    o->settle_tol = 0.05;
}

void hn_sampling_quick(hn_sampling_opts *o)
{
    o->warmup = 1;
    o->min_samples = 5;
    o->min_time = 0;
    o->max_noise = 0.05;
    o->timeout = 2.0;
    o->max_samples = 10000;
    o->clock_threshold = 0.75;
    o->settle_window = 16;
    o->settle_tol = 0.05;
}

int hn_sampling_check(const hn_sampling_opts *o, hn_err *err)
{
    if (o->warmup < 0)
        return hn_errf(err, "sampling: warmup %d is negative", o->warmup);
    if (o->min_samples < 1)
        return hn_errf(err, "sampling: min_samples %d is under 1", o->min_samples);
    if (o->max_samples < o->min_samples)
        return hn_errf(err, "sampling: max_samples %d is under min_samples %d",
                       o->max_samples, o->min_samples);
    if (!isfinite(o->min_time) || o->min_time < 0)
        return hn_errf(err, "sampling: min_time %g is not a non-negative number",
                       o->min_time);
    if (!isfinite(o->max_noise) || o->max_noise < 0)
        return hn_errf(err, "sampling: max_noise %g is not a non-negative number",
                       o->max_noise);
    if (isnan(o->timeout))
        return hn_errf(err, "sampling: timeout is NaN");
    if (isnan(o->clock_threshold))
        return hn_errf(err, "sampling: clock_threshold is NaN");
    if (o->settle_window < 0 || o->settle_window == 1)
        return hn_errf(err, "sampling: settle_window %d must be 0 (off) or at least 2",
                       o->settle_window);
    if (o->settle_window > 0 && (!isfinite(o->settle_tol) || o->settle_tol <= 0))
        return hn_errf(err, "sampling: settle_tol %g must be a positive number",
                       o->settle_tol);
    return 0;
}

/* ---- the sampler ----------------------------------------------------------- */

struct hn_sampler {
    hn_sampling_opts o;

    double *x;          // (cap) kept samples, first n used
    int n, cap;
    int warmups, throttled, rejected;

    double total;       /* sum of kept samples */
    double mean, m2;    /* Welford: running mean and sum of squared deviations */

    double clock_sum;   /* over kept samples with a known clock ratio */
    int clock_n;

    double *hist;       // (o.settle_window) ring of noise values, NULL if off
    int hist_len;       /* values recorded, capped at o.settle_window */
    int hist_head;      /* slot the next value goes into */
};

hn_sampler *hn_sampler_create(const hn_sampling_opts *opts, hn_err *err)
{
    if (hn_sampling_check(opts, err) < 0)
        return NULL;
    hn_sampler *s = xcalloc(1, sizeof *s);
    s->o = *opts;
    if (s->o.settle_window > 0)
        s->hist = xcalloc((size_t)s->o.settle_window, sizeof *s->hist);
    return s;
}

void hn_sampler_destroy(hn_sampler *s)
{
    if (!s)
        return;
    free(s->x);
    free(s->hist);
    free(s);
}

void hn_sampler_reset(hn_sampler *s)
{
    s->n = 0;
    s->warmups = s->throttled = s->rejected = 0;
    s->total = s->mean = s->m2 = 0;
    s->clock_sum = 0;
    s->clock_n = 0;
    s->hist_len = s->hist_head = 0;
}

static int min_kept(const hn_sampler *s)
{
    return s->o.min_samples > 2 ? s->o.min_samples : 2;
}

/* Whether the convergence rules may be consulted: enough samples and time. */
static int gate_open(const hn_sampler *s)
{
    return s->n >= min_kept(s) && s->total >= s->o.min_time;
}

double hn_sampler_noise(const hn_sampler *s)
{
    if (s->n < 2)
        return INFINITY;
    return rel_of(sqrt(s->m2 / (s->n - 1)), s->mean);
}

hn_sample_fate hn_sampler_add(hn_sampler *s, double seconds, double clock_ratio)
{
    if (s->warmups < s->o.warmup) {
        s->warmups++;
        return HN_SAMPLE_WARMUP;
    }
    if (!isfinite(seconds) || seconds < 0) {
        s->rejected++;
        return HN_SAMPLE_INVALID;
    }
    if (s->n >= s->o.max_samples) {
        s->rejected++;
        return HN_SAMPLE_FULL;
    }
    int known = clock_ratio >= 0; /* false for NaN too */
    if (known && clock_ratio < s->o.clock_threshold) {
        s->throttled++;
        return HN_SAMPLE_THROTTLED;
    }

    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        if (cap > s->o.max_samples)
            cap = s->o.max_samples;
        s->x = xrealloc(s->x, (size_t)cap * sizeof *s->x);
        s->cap = cap;
    }
    s->x[s->n++] = seconds;
    s->total += seconds;
    double d = seconds - s->mean;
    s->mean += d / s->n;
    s->m2 += d * (seconds - s->mean);
    if (known) {
        s->clock_sum += clock_ratio;
        s->clock_n++;
    }

    if (s->hist && gate_open(s)) {
        s->hist[s->hist_head] = hn_sampler_noise(s);
        s->hist_head = (s->hist_head + 1) % s->o.settle_window;
        if (s->hist_len < s->o.settle_window)
            s->hist_len++;
    }
    return HN_SAMPLE_KEPT;
}

/* The "settled" rule on a full window of noise values (see stats.h). */
static int settled(const hn_sampler *s)
{
    int w = s->o.settle_window;
    if (!s->hist || s->hist_len < w)
        return 0;
    /* Oldest first: the ring's oldest value sits at hist_head once full. */
    double ym = 0;
    for (int i = 0; i < w; i++)
        ym += s->hist[(s->hist_head + i) % w];
    ym /= w;
    double xm = (w - 1) / 2.0, syy = 0, sxy = 0, sxx = 0;
    for (int i = 0; i < w; i++) {
        double dy = s->hist[(s->hist_head + i) % w] - ym, dx = i - xm;
        syy += dy * dy;
        sxy += dx * dy;
        sxx += dx * dx;
    }
    if (!(ym > 0)) /* every noise value 0 (identical samples): flat */
        return syy == 0;
    double spread = sqrt(syy / (w - 1)) / ym;
    double drift = fabs(sxy / sxx) * (w - 1) / ym;
    return spread < s->o.settle_tol && drift < s->o.settle_tol;
}

hn_stop hn_sampler_stop(const hn_sampler *s, double elapsed)
{
    if (gate_open(s)) {
        if (hn_sampler_noise(s) < s->o.max_noise)
            return HN_STOP_NOISE;
        if (settled(s))
            return HN_STOP_SETTLED;
    }
    if (s->n >= s->o.max_samples)
        return HN_STOP_MAX_SAMPLES;
    if (s->o.timeout > 0 && elapsed >= s->o.timeout)
        return HN_STOP_TIMEOUT;
    return HN_STOP_NONE;
}

int hn_sampler_done(const hn_sampler *s, double elapsed)
{
    return hn_sampler_stop(s, elapsed) != HN_STOP_NONE;
}

const char *hn_stop_name(hn_stop why)
{
    switch (why) {
    case HN_STOP_NOISE: return "noise";
    case HN_STOP_SETTLED: return "settled";
    case HN_STOP_MAX_SAMPLES: return "max_samples";
    case HN_STOP_TIMEOUT: return "timeout";
    case HN_STOP_NONE: break;
    }
    return "";
}

const char *hn_sampler_reason(const hn_sampler *s, double elapsed)
{
    return hn_stop_name(hn_sampler_stop(s, elapsed));
}

const double *hn_sampler_samples(const hn_sampler *s, int *n)
{
    if (n)
        *n = s->n;
    return s->x;
}

int hn_sampler_count(const hn_sampler *s) { return s->n; }
int hn_sampler_discarded(const hn_sampler *s) { return s->throttled; }
int hn_sampler_rejected(const hn_sampler *s) { return s->rejected; }
int hn_sampler_warmups(const hn_sampler *s) { return s->warmups; }
double hn_sampler_total(const hn_sampler *s) { return s->total; }

double hn_sampler_clock_ratio(const hn_sampler *s)
{
    return s->clock_n ? s->clock_sum / s->clock_n : -1;
}

void hn_sampler_stats(const hn_sampler *s, hn_stats *out)
{
    hn_stats_compute(s->x, s->n, out);
}
