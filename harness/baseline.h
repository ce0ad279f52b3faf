/*
 * baseline.h: the vendor baselines measured beside the variants of a sweep, so
 * every row has a speed-up against a well-known implementation. For conv2d:
 * im2col (an NVRTC-compiled unroll kernel) then one cuBLAS GEMM, timed the same way
 * as the variants; per case a "cublas_im2col_sgemm" row, and a
 * "cublas_im2col_dgemm" row when the sweep has double-accumulator variants (their
 * speed-up is taken against it).
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

typedef enum { HN_BASELINE_SGEMM, HN_BASELINE_DGEMM } hn_baseline_kind;

/* The variant name of a baseline's rows. */
const char *hn_baseline_name(hn_baseline_kind kind);

hn_baseline *hn_baseline_create(const hn_plan *p, hn_backend *be, const hn_device_info *dev);
void hn_baseline_destroy(hn_baseline *b);
/* Measures one baseline on w (check, then samples as o says) and fills the row's
 * variant, check and timing columns; the caller fills the case's columns and
 * writes the row with the returned status (an hn_status) and reason. */
int hn_baseline_run(hn_baseline *b, hn_baseline_kind kind, hn_workload *w, hn_csv *csv,
                    const hn_sampling_opts *o, int hot, char *reason, size_t reason_size);
/* The median time of the last run of that baseline in ms, or NAN. */
double hn_baseline_last_ms(const hn_baseline *b, hn_baseline_kind kind);

#endif
