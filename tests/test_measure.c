/*
 * test_measure.c: the sampling loop (harness/measure.c) on the emulator backend
 * with synthetic work: a sample per issue in cold mode with the restore hook
 * called before every sample, batches in hot mode, the stopping reason reported.
 */
#include "hn_test.h"
#include "run.h"

typedef struct {
    int issued;
    int restored;
    double busy; /* seconds of work per issue */
} counter;

static int issue(void *ctx, hn_err *err) {
    (void)err;
    counter *c = ctx;
    c->issued++;
    double t0 = hn_now();
    while (hn_now() - t0 < c->busy) {
    }
    return 0;
}

static int restore(void *ctx, hn_err *err) {
    (void)err;
    ((counter *)ctx)->restored++;
    return 0;
}

static int failing(void *ctx, hn_err *err) {
    (void)ctx;
    return hn_errf(err, "planted failure");
}

int main(void) {
    hn_backend *be;
    hn_err err;
    hn_backend_opts bo = {.emu_threads = 1};
    if (hn_backend_emu_create(&bo, &be, &err) != 0) {
        /* The emulator is part of the program: without it there is nothing to test. */
        fprintf(stderr, "FAIL: cannot create the emulator backend: %s\n", err.msg);
        return 1;
    }
    hn_sampling_opts o;
    hn_sampling_quick(&o);
    o.warmup = 0;
    o.min_samples = o.max_samples = 7; /* exactly 7 samples */
    o.max_noise = 0;
    hn_sampler *s = hn_sampler_create(&o, &err);
    CHECK(s != NULL);

    counter c = {.busy = 200e-6};
    hn_measure_opts mo = {.hot = 0, .restore = restore, .restore_ctx = &c};
    hn_measure_result res;
    CHECK_MSG(hn_measure(be, &mo, s, issue, &c, &res, &err) == 0, "%s", err.msg);
    CHECK_INT(hn_sampler_count(s), 7);
    CHECK_INT(c.issued, 7);
    CHECK_INT(c.restored, 7);
    CHECK_STR(res.stop, "max_samples");
    hn_stats st;
    hn_sampler_stats(s, &st);
    CHECK_MSG(st.min >= 190e-6 && st.median < 50e-3, "min %g median %g", st.min, st.median);

    /* Hot: work under 1 ms is batched, and a sample is the batch's mean. */
    counter h = {.busy = 50e-6};
    mo.hot = 1;
    mo.restore = NULL;
    CHECK(hn_measure(be, &mo, s, issue, &h, &res, &err) == 0);
    CHECK_INT(hn_sampler_count(s), 7);
    CHECK_MSG(h.issued > 7 * 5, "hot mode issued %d times for 7 samples", h.issued);
    hn_sampler_stats(s, &st);
    CHECK_MSG(st.median >= 45e-6 && st.median < 5e-3, "median %g", st.median);

    CHECK(hn_measure(be, &mo, s, failing, NULL, &res, &err) != 0);
    CHECK_CONTAINS(err.msg, "planted failure");

    hn_sampler_destroy(s);
    hn_backend_destroy(be);
    return hn_test_exit();
}
