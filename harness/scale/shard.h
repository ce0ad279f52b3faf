/*
 * shard.h: --shard I/N, a deterministic share of a run's rows, for a job array
 * (scripts/slurm/): shard I of N runs the cases assigned to I, every row of
 * each, so every (case, variant) row is in exactly one shard and no case's
 * reference is computed twice.
 *
 * Cases are balanced by estimated cost, not by count: a case costs the set-up
 * (inputs and the fp64 reference, from the operator's FLOP and bytes) plus each
 * of its rows (a fixed floor for warm-up, sampling and checks, plus the kernel's
 * FLOP and bytes at a nominal speed; a row a `where` skips, or a case over the
 * emulator's budget, costs next to nothing). The model is rough on purpose: it
 * only has to rank cases, and it is the same on every node, so the assignment
 * (largest case first to the least loaded shard, ties to the lower index) is
 * the same wherever it is computed.
 */
#ifndef HN_SHARD_H
#define HN_SHARD_H

#include <stdint.h>

#include "cli.h"
#include "config.h"

typedef struct {
    int index, count;        /* shard index of count; count 0: not sharded */
} hn_shard;

/* Parses "I/N" (0 <= I < N <= 4096). -1 with err otherwise. */
int hn_shard_parse(const char *text, hn_shard *s, hn_err *err);

/* What the cost model needs to know of the run. */
typedef struct {
    int emu;                 /* --backend emu: emulated kernels, and its budget */
    double max_gflop, max_mb;/* the emulator's budget per case; < 0 none */
} hn_shard_model;

/* The model for a run of p with these options (emu only on --backend emu;
 * auto and cuda are costed as a GPU). */
hn_shard_model hn_shard_model_of(const hn_cli *cli, const hn_plan *p);

/* The estimated seconds of case c's rows of the selected variants. */
double hn_shard_case_cost(const hn_plan *p, const unsigned char *selected, int64_t c, const hn_shard_model *m);

/* Assigns every case with in[c] set to one of count shards (out[c], -1 for
 * the others) and sums each shard's estimate into loads[count]. */
void hn_shard_assign(const hn_plan *p, const unsigned char *selected, const unsigned char *in, int count,
                     const hn_shard_model *m, int *out, double *loads);

#endif
