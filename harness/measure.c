/*
 * measure.c: the sampling loop shared by variants and baselines (see run.h and
 * docs/measurement.md). The rules themselves live in stats.c; this file takes the
 * samples: cold L2, event pair on the backend's stream, clock probe.
 */
#include <math.h>

#include "run.h"

/* How often the SM clock is probed; between probes samples carry the last reading. */
#define HN_CLOCK_PROBE_INTERVAL 0.005

int hn_measure(hn_backend *be, const hn_measure_opts *o, hn_sampler *s, hn_issue_fn issue, void *ctx,
               hn_measure_result *res, hn_err *err) {
    hn_event *e0 = NULL, *e1 = NULL;
    int rc = -1;
    res->stop = "";
    res->clock_mhz = -1;
    if (be->ops->event_create(be, &e0, err) != 0 || be->ops->event_create(be, &e1, err) != 0) goto done;
    hn_sampler_reset(s);
    double t0 = hn_now(), last_probe = -1, ratio = -1, clock_sum = 0;
    int clock_n = 0;
    int batch = 1;
    for (;;) {
        if (o->restore && o->restore(o->restore_ctx, err) != 0) goto done;
        if (!o->hot && be->ops->flush_l2(be, err) != 0) goto done;
        if (be->ops->event_record(be, e0, err) != 0) goto done;
        for (int b = 0; b < batch; b++)
            if (issue(ctx, err) != 0) goto done;
        if (be->ops->event_record(be, e1, err) != 0) goto done;
        float ms = 0;
        if (be->ops->event_elapsed(be, e0, e1, &ms, err) != 0) goto done;
        double seconds = (double)ms * 1e-3 / batch;
        /* Hot: batch launches so one event pair spans at least ~1 ms. */
        if (o->hot && batch == 1 && seconds > 0 && seconds < 1e-3) {
            batch = (int)(1e-3 / seconds);
            if (batch > 1000) batch = 1000;
            if (batch < 1) batch = 1;
        }
        double now = hn_now();
        if (be->ops->sm_clock && o->default_mhz > 0 && (last_probe < 0 || now - last_probe > HN_CLOCK_PROBE_INTERVAL)) {
            double mhz;
            hn_err ignored;
            if (be->ops->sm_clock(be, &mhz, &ignored) == 0 && mhz > 0) ratio = mhz / o->default_mhz;
            last_probe = hn_now();
        }
        if (hn_sampler_add(s, seconds, ratio) == HN_SAMPLE_KEPT) {
            if (ratio > 0) clock_sum += ratio * o->default_mhz, clock_n++;
            if (o->samples_csv)
                fprintf(o->samples_csv, "\"%s\",%.9g,%.4g\n", o->row_name ? o->row_name : "", seconds * 1e3,
                        ratio > 0 ? ratio * o->default_mhz : NAN);
        }
        double elapsed = hn_now() - t0;
        if (hn_sampler_done(s, elapsed)) {
            res->stop = hn_sampler_reason(s, elapsed);
            break;
        }
    }
    if (be->ops->sync(be, err) != 0) goto done;
    res->clock_mhz = clock_n ? clock_sum / clock_n : -1;
    res->wall_seconds = hn_now() - t0;
    rc = 0;
done:
    be->ops->event_destroy(be, e0);
    be->ops->event_destroy(be, e1);
    return rc;
}
