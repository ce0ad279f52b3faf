/* test_stats.c: summary statistics and the sampler's stopping rules
 * (harness/stats.c), on hand-computed arrays and synthetic sample streams; the
 * wall clock is simulated, so nothing here depends on the machine's speed. */
#include <stdint.h>

#include "hn_test.h"
#include "stats.h"

/* ---- hn_stats --------------------------------------------------------------- */

static void test_stats_odd(void)
{
    const double x[] = {3, 1, 4, 1, 5}; /* sorted: 1 1 3 4 5 */
    hn_stats st;
    hn_stats_compute(x, 5, &st);
    CHECK_INT(st.n, 5);
    CHECK_NEAR(st.sum, 14, 0);
    CHECK_NEAR(st.mean, 2.8, 1e-15);
    CHECK_NEAR(st.median, 3, 0);
    CHECK_NEAR(st.min, 1, 0);
    CHECK_NEAR(st.max, 5, 0);
    CHECK_NEAR(st.q1, 1, 0);  /* h = 4 * 0.25 = 1 -> s[1] */
    CHECK_NEAR(st.q3, 4, 0);  /* h = 3 -> s[3] */
    /* squared deviations .04 3.24 1.44 3.24 4.84 = 12.8; / 4 = 3.2 */
    CHECK_NEAR(st.stdev, sqrt(3.2), 1e-15);
    CHECK_NEAR(st.rel_stdev, sqrt(3.2) / 2.8, 1e-15);
    CHECK(x[0] == 3 && x[4] == 5); /* input untouched */
}

static void test_stats_even(void)
{
    const double x[] = {8, 2, 6, 4}; /* sorted: 2 4 6 8 */
    hn_stats st;
    hn_stats_compute(x, 4, &st);
    CHECK_INT(st.n, 4);
    CHECK_NEAR(st.mean, 5, 0);
    CHECK_NEAR(st.median, 5, 0);  /* h = 1.5: 4 + 0.5 * 2 */
    CHECK_NEAR(st.q1, 3.5, 0);    /* h = 0.75: 2 + 0.75 * 2 (numpy: 3.5) */
    CHECK_NEAR(st.q3, 6.5, 0);    /* h = 2.25: 6 + 0.25 * 2 (numpy: 6.5) */
    CHECK_NEAR(st.stdev, sqrt(20.0 / 3.0), 1e-15);
    CHECK_NEAR(st.rel_stdev, sqrt(20.0 / 3.0) / 5, 1e-15);

    const double y[] = {10, 20}; /* two samples: quartiles interpolate */
    hn_stats_compute(y, 2, &st);
    CHECK_NEAR(st.median, 15, 0);
    CHECK_NEAR(st.q1, 12.5, 0);
    CHECK_NEAR(st.q3, 17.5, 0);
    CHECK_NEAR(st.stdev, sqrt(50.0), 1e-14);
}

static void test_stats_edges(void)
{
    hn_stats st;
    const double one = 7;
    hn_stats_compute(&one, 1, &st);
    CHECK_INT(st.n, 1);
    CHECK(st.sum == 7 && st.mean == 7 && st.median == 7 && st.min == 7 && st.max == 7);
    CHECK(st.q1 == 7 && st.q3 == 7);
    CHECK(st.stdev == 0 && st.rel_stdev == 0);

    hn_stats_compute(NULL, 0, &st);
    CHECK_INT(st.n, 0);
    CHECK(st.sum == 0);
    CHECK(isnan(st.mean) && isnan(st.median) && isnan(st.min) && isnan(st.max));
    CHECK(isnan(st.q1) && isnan(st.q3) && isnan(st.stdev) && isnan(st.rel_stdev));

    const double zeros[] = {0, 0, 0};
    hn_stats_compute(zeros, 3, &st);
    CHECK(st.mean == 0 && st.stdev == 0 && st.rel_stdev == 0);

    const double sym[] = {-1, 1};
    hn_stats_compute(sym, 2, &st);
    CHECK(st.mean == 0 && isinf(st.rel_stdev));

    const double s[] = {1, 2, 3, 4};
    CHECK_NEAR(hn_stats_quantile(s, 4, -1), 1, 0);
    CHECK_NEAR(hn_stats_quantile(s, 4, 2), 4, 0);
    CHECK_NEAR(hn_stats_quantile(s, 4, 1), 4, 0);
    CHECK_NEAR(hn_stats_quantile(s, 4, 0.9), 3.7, 1e-15);
    CHECK_NEAR(hn_stats_quantile(s, 4, 1e300), 4, 0); /* clamped before (n - 1) * p */
    CHECK_NEAR(hn_stats_quantile(s, 4, INFINITY), 4, 0);
    CHECK_NEAR(hn_stats_quantile(s, 4, -INFINITY), 1, 0);
    CHECK_NEAR(hn_stats_quantile(s, 4, NAN), 1, 0);
    CHECK(isnan(hn_stats_quantile(s, 0, 0.5)));

    /* a tiny spread on a large offset: two-pass keeps it exact enough */
    double big[3] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    hn_stats_compute(big, 3, &st);
    CHECK_NEAR(st.stdev, 1, 1e-9);
}

/* ---- synthetic streams ------------------------------------------------------ */

static hn_sampler *make(const hn_sampling_opts *o)
{
    hn_err err;
    hn_sampler *s = hn_sampler_create(o, &err);
    if (!s) {
        fprintf(stderr, "hn_sampler_create: %s\n", err.msg);
        exit(1);
    }
    return s;
}

/* Feeds next(state) until done, advancing a simulated wall clock by each
 * sample's time plus `overhead` seconds (the flush, launch and sync around
 * it). Returns the reason; *elapsed gets the final wall time. */
typedef double (*stream_fn)(uint64_t *rng, int i);

static hn_stop run(hn_sampler *s, stream_fn next, uint64_t seed, double overhead,
                   double *elapsed, int limit)
{
    uint64_t rng = seed;
    double t = 0;
    hn_stop why = HN_STOP_NONE;
    for (int i = 0; i < limit; i++) {
        why = hn_sampler_stop(s, t);
        if (why != HN_STOP_NONE)
            break;
        double x = next(&rng, i);
        hn_sampler_add(s, x, 1.0);
        t += x + overhead;
    }
    if (elapsed)
        *elapsed = t;
    return why;
}

static double steady(uint64_t *rng, int i)
{
    (void)i;
    return 0.1 * (1 + 1e-4 * (hn_rand_unit(rng) - 0.5)); /* 100 ms, +-0.005 % */
}

static double uniform10(uint64_t *rng, int i)
{
    (void)i;
    return 1e-3 * (1 + 0.2 * (hn_rand_unit(rng) - 0.5)); /* 1 ms +-10 %: rel 5.8 % */
}

static double pareto(uint64_t *rng, int i)
{
    (void)i;
    /* Pareto, alpha 1.1: infinite variance; the noise estimate jumps at every
     * new outlier and never settles. */
    return 1e-3 * pow(1 - hn_rand_unit(rng), -1 / 1.1);
}

static void test_noise_stop(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    hn_sampler *s = make(&o);
    double t;
    hn_stop why = run(s, steady, 1, 0, &t, 1000);
    CHECK_STR(hn_stop_name(why), "noise");
    CHECK_INT(hn_sampler_warmups(s), 1);
    /* 10 kept samples of 0.1 s = 1 s >= min_time: min_samples is what binds */
    CHECK_INT(hn_sampler_count(s), 10);
    CHECK(hn_sampler_noise(s) < 0.005);
    CHECK_STR(hn_sampler_reason(s, t), "noise");
    CHECK(hn_sampler_done(s, t));

    /* priority: converged and timed out at once reads as converged */
    CHECK_STR(hn_sampler_reason(s, 100), "noise");
    hn_sampler_destroy(s);
}

static void test_min_samples_and_time(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    o.warmup = 0;
    o.min_samples = 25;
    o.min_time = 0;
    hn_sampler *s = make(&o);
    for (int i = 0; i < 24; i++)
        hn_sampler_add(s, 1e-3, 1.0); /* no noise at all */
    CHECK(!hn_sampler_done(s, 0));
    hn_sampler_add(s, 1e-3, 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);

    /* min_time: 2^-10 s samples are exact in binary, so the sum is too */
    const double x = 1.0 / 1024;
    hn_sampling_defaults(&o);
    o.warmup = 0;
    o.min_time = 50 * x;
    s = make(&o);
    for (int i = 0; i < 49; i++) {
        hn_sampler_add(s, x, -1);
        CHECK_MSG(!hn_sampler_done(s, 1.0), "done after %d samples", i + 1);
    }
    hn_sampler_add(s, x, -1);
    CHECK_STR(hn_sampler_reason(s, 1.0), "noise");
    CHECK_NEAR(hn_sampler_total(s), 50 * x, 0);

    /* min_samples 1 still needs two samples to estimate noise */
    hn_sampling_quick(&o);
    o.warmup = 0;
    o.min_samples = 1;
    hn_sampler_destroy(s);
    s = make(&o);
    hn_sampler_add(s, 1e-3, 1.0);
    CHECK(!hn_sampler_done(s, 0));
    CHECK(isinf(hn_sampler_noise(s)));
    hn_sampler_add(s, 1e-3, 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);
}

static double uniform50(uint64_t *rng, int i)
{
    (void)i;
    return 1e-3 * (0.5 + hn_rand_unit(rng)); /* 1 ms +-50 %: rel 29 % */
}

static void test_timeout(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    o.min_time = 0;
    hn_sampler *s = make(&o);
    double t;
    /* a very noisy stream whose samples cost 0.5 s of wall time each (flush,
     * launch, sync, a slow kernel): 30 adds fill 15 s, too few for the
     * noise to reach 0.5 % and fewer than min_samples + settle_window - 1 = 73,
     * the earliest point "settled" can hold */
    hn_stop why = run(s, uniform50, 7, 0.5, &t, 100000);
    CHECK_STR(hn_stop_name(why), "timeout");
    CHECK(t >= 15 && t < 15.6);
    CHECK_INT(hn_sampler_count(s), 29); /* 30 adds, the first a warm-up */
    CHECK(hn_sampler_noise(s) > 0.1);
    /* just before the timeout the same state is not done */
    CHECK(!hn_sampler_done(s, 14.999));
    CHECK_STR(hn_sampler_reason(s, 14.999), "");

    /* the timeout holds with nothing kept (e.g. every sample throttled) */
    hn_sampler_reset(s);
    CHECK(!hn_sampler_done(s, 14.9));
    CHECK_STR(hn_sampler_reason(s, 15), "timeout");
    hn_stats st;
    hn_sampler_stats(s, &st);
    CHECK_INT(st.n, 0);

    /* and before min_samples */
    hn_sampler_add(s, 1e-3, 1);
    hn_sampler_add(s, 1e-3, 1);
    CHECK_STR(hn_sampler_reason(s, 20), "timeout");
    hn_sampler_destroy(s);

    /* timeout <= 0: never */
    o.timeout = 0;
    s = make(&o);
    CHECK(!hn_sampler_done(s, 1e9));
    hn_sampler_destroy(s);
}

static void test_settled(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    hn_sampler *s = make(&o);
    double t;
    /* 1 ms samples with 5.8 % noise, 1 ms overhead: far from the timeout */
    hn_stop why = run(s, uniform10, 3, 1e-3, &t, 100000);
    CHECK_STR(hn_stop_name(why), "settled");
    int n = hn_sampler_count(s);
    /* the gate opens at 100 samples (min_time 0.1 s of 1 ms samples); the
     * window then needs 64 noise values */
    CHECK_MSG(n >= 100 + 64 - 1, "settled after %d samples", n);
    CHECK_MSG(n < 5000, "settled after %d samples", n);
    CHECK(t < 15);
    hn_stats st;
    hn_sampler_stats(s, &st);
    CHECK_INT(st.n, n);
    CHECK_MSG(st.rel_stdev > 0.05 && st.rel_stdev < 0.066, "rel_stdev %g", st.rel_stdev);
    CHECK_NEAR(st.rel_stdev, hn_sampler_noise(s), 1e-9);
    printf("settled: %d samples, rel stdev %.4f, %.2f s\n", n, st.rel_stdev, t);

    /* without min_time, the earliest settling point is min_samples + window - 1 */
    hn_sampler_destroy(s);
    o.min_time = 0;
    s = make(&o);
    why = run(s, uniform10, 3, 1e-3, &t, 100000);
    CHECK_STR(hn_stop_name(why), "settled");
    n = hn_sampler_count(s);
    CHECK_MSG(n >= 10 + 64 - 1 && n < 5000, "settled after %d samples", n);
    printf("settled (min_time 0): %d samples, rel stdev %.4f\n", n, hn_sampler_noise(s));

    /* the rule switched off: the same stream runs to the timeout */
    hn_sampler_destroy(s);
    o.settle_window = 0;
    s = make(&o);
    why = run(s, uniform10, 3, 1e-3, &t, 100000);
    CHECK_STR(hn_stop_name(why), "timeout");
    hn_sampler_destroy(s);

    /* a drifting stream (a GPU warming up, 1 % slower per sample): the noise
     * estimate keeps rising, so the rule holds off while it moves; a linear
     * ramp's rel stdev does level off (towards 1/sqrt(3)), and when the rule
     * finally fires, the reported spread exposes the drift */
    hn_sampling_defaults(&o);
    o.min_time = 0;
    s = make(&o);
    int i;
    for (i = 0; i < 5000 && !hn_sampler_done(s, 0); i++)
        hn_sampler_add(s, 1e-3 * (1 + i * 1e-2), 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "settled");
    CHECK_MSG(i > 200, "drifting stream stopped after %d samples", i);
    CHECK_MSG(hn_sampler_noise(s) > 0.3, "rel stdev %g", hn_sampler_noise(s));
    printf("drift: settled after %d samples, rel stdev %.3f\n", i, hn_sampler_noise(s));
    hn_sampler_destroy(s);
}

static void test_quick_preset(void)
{
    hn_sampling_opts o;
    hn_sampling_quick(&o);
    CHECK_INT(o.warmup, 1);
    CHECK_INT(o.min_samples, 5);
    CHECK(o.min_time == 0 && o.max_noise == 0.05 && o.timeout == 2);
    CHECK_INT(o.settle_window, 16);
    CHECK_INT(o.max_samples, 10000);
    CHECK(o.clock_threshold == 0.75 && o.settle_tol == 0.05);
    hn_sampler *s = make(&o);
    double t;
    /* a 1 % noise stream meets the 5 % target at min_samples */
    hn_sampler_add(s, 5, 1); /* a slow first run: the warm-up soaks it up */
    for (int i = 0; i < 5; i++) {
        CHECK(!hn_sampler_done(s, 0.5));
        CHECK_INT(hn_sampler_add(s, 1e-3 * (1 + 0.01 * (i - 2)), 1), HN_SAMPLE_KEPT);
    }
    CHECK_STR(hn_sampler_reason(s, 0.5), "noise");
    CHECK_NEAR(hn_sampler_total(s), 5e-3, 1e-15);

    /* the emulator's noisier stream settles quickly or times out at 2 s */
    hn_sampler_reset(s);
    hn_stop why = run(s, uniform10, 5, 0, &t, 100000);
    CHECK(why == HN_STOP_SETTLED || why == HN_STOP_NOISE);
    CHECK_MSG(hn_sampler_count(s) < 1000, "%d samples", hn_sampler_count(s));
    hn_sampler_destroy(s);

    hn_sampling_defaults(&o);
    CHECK(o.warmup == 1 && o.min_samples == 10 && o.min_time == 0.1);
    CHECK(o.max_noise == 0.005 && o.timeout == 15 && o.max_samples == 100000);
    CHECK(o.clock_threshold == 0.75 && o.settle_window == 64 && o.settle_tol == 0.05);
}

static void test_throttle(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    o.warmup = 0;
    o.min_time = 0;
    hn_sampler *s = make(&o);
    for (int i = 0; i < 20; i++) {
        /* throttled runs are slow; they must not reach the statistics */
        CHECK_INT(hn_sampler_add(s, 1e-3, 1.0), HN_SAMPLE_KEPT);
        CHECK_INT(hn_sampler_add(s, 5e-3, 0.5), HN_SAMPLE_THROTTLED);
    }
    CHECK_INT(hn_sampler_add(s, 1e-3, 0.75), HN_SAMPLE_KEPT); /* at the threshold */
    CHECK_INT(hn_sampler_add(s, 1e-3, -1), HN_SAMPLE_KEPT);   /* unknown clock */
    CHECK_INT(hn_sampler_add(s, 1e-3, NAN), HN_SAMPLE_KEPT);  /* unknown clock */
    CHECK_INT(hn_sampler_add(s, 5e-3, 0.0), HN_SAMPLE_THROTTLED);
    CHECK_INT(hn_sampler_count(s), 23);
    CHECK_INT(hn_sampler_discarded(s), 21);
    hn_stats st;
    hn_sampler_stats(s, &st);
    CHECK_INT(st.n, 23);
    CHECK(st.max == 1e-3 && st.min == 1e-3);
    CHECK_NEAR(st.stdev, 0, 1e-18); /* rounding in the mean only */
    CHECK_NEAR(hn_sampler_total(s), 23e-3, 1e-15);
    /* mean clock over the 21 kept samples whose clock was known */
    CHECK_NEAR(hn_sampler_clock_ratio(s), (20 * 1.0 + 0.75) / 21, 1e-15);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);

    /* threshold 0: nothing is discarded; no known clock -> ratio -1 */
    o.clock_threshold = 0;
    s = make(&o);
    CHECK_INT(hn_sampler_add(s, 5e-3, 0.1), HN_SAMPLE_KEPT);
    CHECK_INT(hn_sampler_discarded(s), 0);
    hn_sampler_reset(s);
    hn_sampler_add(s, 1e-3, -1);
    CHECK_NEAR(hn_sampler_clock_ratio(s), -1, 0);
    hn_sampler_destroy(s);
}

static void test_max_samples(void)
{
    hn_sampling_opts o;
    hn_sampling_defaults(&o);
    o.max_samples = 50;
    o.min_time = 0;
    hn_sampler *s = make(&o);
    double t;
    hn_stop why = run(s, pareto, 11, 0, &t, 100000);
    CHECK_STR(hn_stop_name(why), "max_samples");
    CHECK_INT(hn_sampler_count(s), 50);
    CHECK_INT(hn_sampler_add(s, 1e-3, 1), HN_SAMPLE_FULL);
    CHECK_INT(hn_sampler_count(s), 50);
    CHECK_INT(hn_sampler_rejected(s), 1);
    int n;
    const double *x = hn_sampler_samples(s, &n);
    CHECK_INT(n, 50);
    hn_stats a, b;
    hn_stats_compute(x, n, &a);
    hn_sampler_stats(s, &b);
    CHECK(a.mean == b.mean && a.median == b.median && a.stdev == b.stdev);
    hn_sampler_destroy(s);
}

static void test_warmup_invalid_reset(void)
{
    hn_sampling_opts o;
    hn_sampling_quick(&o);
    o.warmup = 3;
    hn_sampler *s = make(&o);
    CHECK_INT(hn_sampler_add(s, 100, 1), HN_SAMPLE_WARMUP);
    CHECK_INT(hn_sampler_add(s, NAN, 1), HN_SAMPLE_WARMUP);
    CHECK_INT(hn_sampler_add(s, 50, 0.1), HN_SAMPLE_WARMUP);
    CHECK_INT(hn_sampler_add(s, NAN, 1), HN_SAMPLE_INVALID);
    CHECK_INT(hn_sampler_add(s, -1e-3, 1), HN_SAMPLE_INVALID);
    CHECK_INT(hn_sampler_add(s, INFINITY, 1), HN_SAMPLE_INVALID);
    CHECK_INT(hn_sampler_add(s, 0, 1), HN_SAMPLE_KEPT);
    CHECK_INT(hn_sampler_warmups(s), 3);
    CHECK_INT(hn_sampler_rejected(s), 3);
    CHECK_INT(hn_sampler_count(s), 1);
    CHECK_NEAR(hn_sampler_total(s), 0, 0);

    /* zero-time samples (below timer resolution): rel stdev 0, not NaN */
    for (int i = 0; i < 4; i++)
        hn_sampler_add(s, 0, 1);
    CHECK(hn_sampler_noise(s) == 0);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");

    hn_sampler_reset(s);
    CHECK_INT(hn_sampler_count(s), 0);
    CHECK_INT(hn_sampler_warmups(s), 0);
    CHECK_INT(hn_sampler_rejected(s), 0);
    CHECK_INT(hn_sampler_add(s, 1, 1), HN_SAMPLE_WARMUP);
    int n = -1;
    CHECK(hn_sampler_samples(s, &n) != NULL || n == 0);
    CHECK_INT(n, 0);
    hn_sampler_destroy(s);
    hn_sampler_destroy(NULL);
}

static void test_bad_opts(void)
{
    hn_sampling_opts o;
    hn_err err;
    hn_sampling_defaults(&o);
    CHECK(hn_sampling_check(&o, &err) == 0);
    o.min_samples = 0;
    CHECK(hn_sampler_create(&o, &err) == NULL);
    CHECK_CONTAINS(err.msg, "min_samples");
    hn_sampling_defaults(&o);
    o.max_samples = 5;
    CHECK(hn_sampler_create(&o, &err) == NULL);
    CHECK_CONTAINS(err.msg, "max_samples");
    hn_sampling_defaults(&o);
    o.max_noise = NAN;
    CHECK(hn_sampling_check(&o, &err) < 0);
    hn_sampling_defaults(&o);
    o.settle_window = 1;
    CHECK(hn_sampling_check(&o, &err) < 0);
    hn_sampling_defaults(&o);
    o.settle_tol = 0;
    CHECK(hn_sampling_check(&o, &err) < 0);
    o.settle_window = 0; /* tolerance irrelevant when the rule is off */
    CHECK(hn_sampling_check(&o, &err) == 0);
    hn_sampling_defaults(&o);
    o.warmup = -1;
    CHECK(hn_sampling_check(&o, &err) < 0);
    hn_sampling_defaults(&o);
    o.min_time = -1;
    CHECK(hn_sampling_check(&o, &err) < 0);
}


/* ---- the rules at their boundaries ------------------------------------------- */

/* A model of the sampler's noise history and "settled" rule, written from
 * stats.h (and stats.c's note that the running noise is Welford's), so that the
 * spread and drift it computes are bit-identical to the sampler's. */
typedef struct {
    int n, w;
    double mean, m2;
    double *hist; /* all recorded noise values, oldest first */
    int n_hist;
} model;

static double model_noise(const model *m)
{
    if (m->n < 2)
        return INFINITY;
    double sd = sqrt(m->m2 / (m->n - 1));
    if (m->mean == 0)
        return sd == 0 ? 0 : INFINITY;
    return sd / fabs(m->mean);
}

/* Adds a kept sample; gate: whether the convergence gate is open after it. */
static void model_add(model *m, double x, int gate_min)
{
    m->n++;
    double d = x - m->mean;
    m->mean += d / m->n;
    m->m2 += d * (x - m->mean);
    if (m->n >= gate_min)
        m->hist[m->n_hist++] = model_noise(m);
}

/* Spread and drift of the last w noise values (0 when fewer). */
static int model_window(const model *m, double *spread, double *drift)
{
    int w = m->w;
    if (m->n_hist < w)
        return 0;
    const double *y = m->hist + m->n_hist - w;
    double ym = 0;
    for (int i = 0; i < w; i++)
        ym += y[i];
    ym /= w;
    double xm = (w - 1) / 2.0, syy = 0, sxy = 0, sxx = 0;
    for (int i = 0; i < w; i++) {
        double dy = y[i] - ym, dx = i - xm;
        syy += dy * dy;
        sxy += dx * dy;
        sxx += dx * dx;
    }
    *spread = sqrt(syy / (w - 1)) / ym;
    *drift = fabs(sxy / sxx) * (w - 1) / ym;
    return 1;
}

/* Options under which only the "settled" rule can stop the first `limit`
 * samples: no noise target, no time gate, no timeout. */
static void settle_only(hn_sampling_opts *o, int min_samples, int window, double tol)
{
    hn_sampling_defaults(o);
    o->warmup = 0;
    o->min_samples = min_samples;
    o->min_time = 0;
    o->max_noise = 0;
    o->timeout = 0;
    o->settle_window = window;
    o->settle_tol = tol;
}

/* x_i for a stream kind: 0 a ramp (at the first full window the drift
 * binds), 1 noise on a flat level, 2 alternating low and high (the spread binds). */
static double stream_x(int kind, int i, uint64_t *rng)
{
    switch (kind) {
    case 0: return 1e-3 * (1 + i * 1e-2);
    case 1: return 1e-3 * (1 + 0.2 * (hn_rand_unit(rng) - 0.5));
    default: return i % 2 ? 3e-3 : 1e-3;
    }
}

/* The sampler decides "settled" exactly when the model's spread and drift are
 * both under settle_tol: at every sample of three streams; and at the first
 * sample with a full window, a tolerance one ulp above the larger of the two
 * fires there, the larger value itself (the rule is strict) does not. */
static void test_settled_rule_exact(void)
{
    for (int kind = 0; kind < 3; kind++) {
        const int min_samples = 10, w = 8, steps = 400;
        model m = {.w = w, .hist = xcalloc(steps, sizeof(double))};
        double *x = xmalloc(steps * sizeof *x);
        uint64_t rng = 17 + (uint64_t)kind;
        for (int i = 0; i < steps; i++)
            x[i] = stream_x(kind, i, &rng);

        /* 1. every step agrees with the model, the default tolerance */
        hn_sampling_opts o;
        settle_only(&o, min_samples, w, 0.05);
        hn_sampler *s = make(&o);
        int fired = -1, agree = 1;
        for (int i = 0; i < steps; i++) {
            hn_sampler_add(s, x[i], 1.0);
            model_add(&m, x[i], min_samples);
            double sp, dr;
            int want = model_window(&m, &sp, &dr) && sp < 0.05 && dr < 0.05;
            int got = hn_sampler_stop(s, 0) == HN_STOP_SETTLED;
            if (want != got && agree) {
                fprintf(stderr, "stream %d, sample %d: settled %d, model %d (spread %g drift %g)\n", kind,
                        i + 1, got, want, sp, dr);
                agree = 0;
            }
            if (got && fired < 0)
                fired = i + 1;
            /* keep adding past the stop: the rule is a function of the state */
        }
        CHECK_MSG(agree, "stream %d", kind);
        hn_sampler_destroy(s);

        /* 2. the boundary, at the first full window (sample min_samples + w - 1) */
        int k = min_samples + w - 1;
        model m2 = {.w = w, .hist = xcalloc(steps, sizeof(double))};
        for (int i = 0; i < k; i++)
            model_add(&m2, x[i], min_samples);
        double sp = 0, dr = 0;
        CHECK(model_window(&m2, &sp, &dr));
        double edge = sp > dr ? sp : dr;
        if (kind == 0)
            CHECK_MSG(dr > sp, "the ramp's drift %g should bind (spread %g)", dr, sp);
        if (kind == 2)
            CHECK_MSG(sp > dr, "the alternating stream's spread %g should bind (drift %g)", sp, dr);
        for (int above = 0; above < 2; above++) {
            settle_only(&o, min_samples, w, above ? nextafter(edge, INFINITY) : edge);
            s = make(&o);
            for (int i = 0; i < k - 1; i++) {
                hn_sampler_add(s, x[i], 1.0);
                CHECK(!hn_sampler_done(s, 0)); /* the window is not full yet */
            }
            hn_sampler_add(s, x[k - 1], 1.0);
            CHECK_MSG(hn_sampler_done(s, 0) == above, "stream %d, tol %s the edge %.17g", kind,
                      above ? "one ulp above" : "at", edge);
            if (above)
                CHECK_STR(hn_sampler_reason(s, 0), "settled");
            hn_sampler_destroy(s);
        }
        printf("settle edge, stream %d: spread %.6g drift %.6g at sample %d; fired first at %d\n", kind, sp, dr,
               k, fired);
        free(m.hist);
        free(m2.hist);
        free(x);
    }
}

/* Identical samples: the noise is exactly 0. With max_noise 0 ("< 0" never
 * holds) the flat history settles as soon as the window is full; max_noise just
 * above 0 stops on "noise" at min_samples. */
static void test_zero_noise(void)
{
    hn_sampling_opts o;
    settle_only(&o, 5, 4, 0.05);
    hn_sampler *s = make(&o);
    for (int i = 0; i < 7; i++) {
        hn_sampler_add(s, 2e-3, 1.0);
        CHECK_MSG(!hn_sampler_done(s, 0), "done after %d samples", i + 1);
    }
    CHECK(hn_sampler_noise(s) == 0);
    hn_sampler_add(s, 2e-3, 1.0); /* 8 = 5 + 4 - 1: the window is full */
    CHECK_STR(hn_sampler_reason(s, 0), "settled");
    hn_sampler_destroy(s);

    /* the same with zero-time samples (mean 0) */
    s = make(&o);
    for (int i = 0; i < 8; i++)
        hn_sampler_add(s, 0, 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "settled");
    hn_sampler_destroy(s);

    o.settle_window = 0;
    o.max_noise = 1e-300;
    s = make(&o);
    for (int i = 0; i < 4; i++)
        hn_sampler_add(s, 2e-3, 1.0);
    CHECK(!hn_sampler_done(s, 0));
    hn_sampler_add(s, 2e-3, 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);
}

/* The noise rule is strict: max_noise equal to the noise the sampler reports
 * does not stop it, one ulp above does. */
static void test_noise_boundary(void)
{
    hn_sampling_opts o;
    settle_only(&o, 3, 0, 0.05);
    const double x[3] = {1e-3, 1.1e-3, 0.95e-3};
    hn_sampler *probe = make(&o);
    for (int i = 0; i < 3; i++)
        hn_sampler_add(probe, x[i], 1.0);
    double noise = hn_sampler_noise(probe);
    hn_sampler_destroy(probe);
    for (int above = 0; above < 2; above++) {
        o.max_noise = above ? nextafter(noise, INFINITY) : noise;
        hn_sampler *s = make(&o);
        for (int i = 0; i < 3; i++)
            hn_sampler_add(s, x[i], 1.0);
        CHECK_MSG(hn_sampler_done(s, 0) == above, "max_noise %s the noise", above ? "above" : "at");
        hn_sampler_destroy(s);
    }
}

/* min_samples 3: the gate is max(min_samples, 2), so 2 samples are not enough */
static void test_min_samples_three(void)
{
    hn_sampling_opts o;
    hn_sampling_quick(&o);
    o.warmup = 0;
    o.min_samples = 3;
    hn_sampler *s = make(&o);
    hn_sampler_add(s, 1e-3, 1.0);
    hn_sampler_add(s, 1e-3, 1.0);
    CHECK(!hn_sampler_done(s, 0));
    hn_sampler_add(s, 1e-3, 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);

    /* min_time is inclusive: exactly min_time of kept time opens the gate */
    hn_sampling_quick(&o);
    o.warmup = 0;
    o.min_time = 3.0 / 1024;
    s = make(&o);
    for (int i = 0; i < 5; i++)
        hn_sampler_add(s, 0.5 / 1024, 1.0); /* 2.5/1024 < min_time */
    CHECK(!hn_sampler_done(s, 0));
    hn_sampler_add(s, 0.5 / 1024, 1.0); /* exactly 3/1024 */
    CHECK_STR(hn_sampler_reason(s, 0), "noise");
    hn_sampler_destroy(s);
}

/* max_samples stops at exactly the cap, timeout at exactly the timeout (also a
 * fractional one, under a second) */
static void test_caps_exact(void)
{
    hn_sampling_opts o;
    settle_only(&o, 2, 0, 0.05);
    o.max_samples = 7;
    hn_sampler *s = make(&o);
    uint64_t rng = 3;
    for (int i = 0; i < 6; i++) {
        hn_sampler_add(s, uniform50(&rng, i), 1.0);
        CHECK(!hn_sampler_done(s, 0));
    }
    hn_sampler_add(s, uniform50(&rng, 6), 1.0);
    CHECK_STR(hn_sampler_reason(s, 0), "max_samples");
    hn_sampler_destroy(s);

    settle_only(&o, 2, 0, 0.05);
    o.timeout = 0.5;
    s = make(&o);
    CHECK(!hn_sampler_done(s, nextafter(0.5, 0)));
    CHECK_STR(hn_sampler_reason(s, 0.5), "timeout");
    hn_sampler_destroy(s);
}

/* A reset sampler behaves exactly like a new one: the same answers, sample by
 * sample, on a stream where the settled rule decides (and a first row whose
 * history would make it fire early if any of it leaked into the next). */
static void test_reset_is_fresh(void)
{
    hn_sampling_opts o;
    settle_only(&o, 200, 4, 0.05);
    o.warmup = 2;
    hn_sampler *used = make(&o), *fresh = make(&o);
    for (int i = 0; i < 300; i++)
        hn_sampler_add(used, i % 2 ? 3e-3 : 1e-3, i % 3 ? 0.9 : -1);
    hn_sampler_reset(used);
    CHECK_INT(hn_sampler_count(used), 0);
    CHECK(hn_sampler_total(used) == 0);
    CHECK(isinf(hn_sampler_noise(used)));
    CHECK_NEAR(hn_sampler_clock_ratio(used), -1, 0);
    int differ = 0, fired = 0;
    for (int i = 0; i < 260; i++) {
        double x = i % 2 ? 3e-3 : 1e-3, clk = i % 5 ? 1.0 : -1;
        int fa = hn_sampler_add(used, x, clk), fb = hn_sampler_add(fresh, x, clk);
        differ |= fa != fb;
        differ |= hn_sampler_stop(used, 0) != hn_sampler_stop(fresh, 0);
        differ |= hn_sampler_total(used) != hn_sampler_total(fresh);
        differ |= hn_sampler_noise(used) != hn_sampler_noise(fresh);
        differ |= hn_sampler_clock_ratio(used) != hn_sampler_clock_ratio(fresh);
        differ |= hn_sampler_warmups(used) != hn_sampler_warmups(fresh);
        if (!fired && hn_sampler_done(fresh, 0))
            fired = hn_sampler_count(fresh);
        if (differ) {
            fprintf(stderr, "reset sampler differs at add %d\n", i + 1);
            break;
        }
    }
    CHECK(!differ);
    CHECK_INT(fired, 200 + 4 - 1); /* the alternating stream settles at once */
    hn_sampler_destroy(used);
    hn_sampler_destroy(fresh);
}

int main(void)
{
    test_stats_odd();
    test_stats_even();
    test_stats_edges();
    test_noise_stop();
    test_min_samples_and_time();
    test_timeout();
    test_settled();
    test_quick_preset();
    test_throttle();
    test_max_samples();
    test_warmup_invalid_reset();
    test_bad_opts();
    test_settled_rule_exact();
    test_zero_noise();
    test_noise_boundary();
    test_min_samples_three();
    test_caps_exact();
    test_reset_is_fresh();
    return hn_test_exit();
}
