/*
 * baseline.h: the vendor baseline measured beside the variants of a sweep, so
 * every row has a speed-up against a well-known implementation. For conv2d:
 * im2col (an NVRTC-compiled unroll kernel) then cublasSgemm, timed the same way
 * as the variants; one row per case with variant "cublas_im2col_sgemm".
 *
 * Only on the cuda backend. hn_baseline_create returns NULL (and the rows are
 * simply absent) where no baseline exists for the operator or cuBLAS cannot be
 * initialised; it says why on stderr.
 */
#ifndef HN_BASELINE_H
#define HN_BASELINE_H

#include "csv.h"
#include "run.h"

typedef struct hn_baseline hn_baseline;

hn_baseline *hn_baseline_create(const hn_plan *p, hn_backend *be, const hn_device_info *dev);
void hn_baseline_destroy(hn_baseline *b);
/* Measures the baseline on w (check, then samples as o says) and fills the row's
 * variant, check and timing columns; the caller fills the case's columns and
 * writes the row with the returned status (an hn_status) and reason. */
int hn_baseline_run(hn_baseline *b, hn_workload *w, hn_csv *csv, const hn_sampling_opts *o, int hot,
                    char *reason, size_t reason_size);
/* The median time of the last run in ms, or NAN. */
double hn_baseline_last_ms(const hn_baseline *b);

#endif
