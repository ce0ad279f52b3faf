/* baseline.c: placeholder until the cuBLAS baseline lands; see baseline.h. */
#include "baseline.h"

#include <math.h>

hn_baseline *hn_baseline_create(const hn_plan *p, hn_backend *be, const hn_device_info *dev) {
    (void)p;
    (void)be;
    (void)dev;
    return NULL;
}

void hn_baseline_destroy(hn_baseline *b) {
    (void)b;
}

void hn_baseline_run(hn_baseline *b, hn_workload *w, hn_csv *csv, const hn_sampling_opts *o, int hot,
                     int is_emu) {
    (void)b, (void)w, (void)csv, (void)o, (void)hot, (void)is_emu;
}

double hn_baseline_last_ms(const hn_baseline *b) {
    (void)b;
    return NAN;
}
