/* shard.c: cost-balanced shards of a run (see shard.h). */
#define _GNU_SOURCE
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "sweep.h"

/* The model's speeds. A GPU row: about 0.2 s of warm-up, sampling (min_time
 * 0.1 s) and two checks, plus ten samples of its kernel at 10 TFLOP/s and its
 * outputs checked three times at 2 GB/s. A case: the fp64 reference at
 * 20 GFLOP/s (capped where the check samples), inputs at 2 GB/s. Emulated
 * rows: a few launches at 1 GFLOP/s. */
#define GPU_ROW_S 0.2
#define GPU_FLOPS 1e13
#define EMU_ROW_S 0.01
#define EMU_FLOPS 1e9
#define REF_FLOPS 2e10
#define HOST_BPS 2e9
#define SKIP_ROW_S 0.001

int hn_shard_parse(const char *text, hn_shard *s, hn_err *err) {
    memset(s, 0, sizeof *s);
    if (!text) return 0;
    char *end;
    long i = strtol(text, &end, 10), n = 0;
    int ok = end != text && *end == '/' && text[0] >= '0' && text[0] <= '9';
    if (ok) {
        const char *ns = end + 1;
        n = strtol(ns, &end, 10);
        ok = end != ns && !*end && ns[0] >= '0' && ns[0] <= '9';
    }
    if (!ok) return hn_errf(err, "--shard %s: expected I/N, shard I (from 0) of N (e.g. 0/4)", text);
    if (n < 1 || n > 4096) return hn_errf(err, "--shard %s: N must be 1 to 4096", text);
    if (i >= n) return hn_errf(err, "--shard %s: I must be 0 to %ld (shards count from 0)", text, n - 1);
    s->index = (int)i;
    s->count = (int)n;
    return 0;
}

hn_shard_model hn_shard_model_of(const hn_cli *cli, const hn_plan *p) {
    hn_shard_model m = {.emu = strcmp(cli->backend, "emu") == 0, .max_gflop = -1, .max_mb = -1};
    if (m.emu && !cli->all) {
        m.max_gflop = cli->max_gflop >= 0 ? cli->max_gflop : p->emu_max_gflop >= 0 ? p->emu_max_gflop : 0.05;
        m.max_mb = p->emu_max_mb >= 0 ? p->emu_max_mb : 256.0;
    }
    return m;
}

double hn_shard_case_cost(const hn_plan *p, const unsigned char *selected, int64_t c, const hn_shard_model *m) {
    hn_workload w;
    hn_err err;
    int rows = 0;
    for (int v = 0; v < p->n_variants; v++) rows += selected[v];
    if (hn_workload_shape(&w, p, &p->cases[c], &err) != 0) return SKIP_ROW_S * rows;
    if ((m->max_gflop >= 0 && w.flop * 1e-9 > m->max_gflop) || (m->max_mb >= 0 && w.bytes * 1e-6 > m->max_mb))
        return SKIP_ROW_S * rows;
    double ref_flop = w.flop < p->reference_gflop * 1e9 ? w.flop : p->reference_gflop * 1e9;
    double cost = ref_flop / REF_FLOPS + w.bytes / HOST_BPS;
    for (int v = 0; v < p->n_variants; v++) {
        if (!selected[v]) continue;
        const char *failed = NULL;
        if (hn_sweep_variant_applies(p, &p->variants[v], &p->cases[c], w.params, &failed, &err) != 1) {
            cost += SKIP_ROW_S;
            continue;
        }
        double flop, bytes;
        hn_row_work(p, &w, &p->variants[v], &flop, &bytes);
        cost += m->emu ? EMU_ROW_S + 4 * flop / EMU_FLOPS + bytes / HOST_BPS
                       : GPU_ROW_S + 10 * flop / GPU_FLOPS + 3 * bytes / HOST_BPS;
    }
    if (!m->emu) /* the operator's baselines, about one row each */
        cost += p->op->n_baselines * (GPU_ROW_S + 10 * w.flop / GPU_FLOPS + 3 * w.bytes / HOST_BPS);
    return cost;
}

typedef struct {
    int64_t c;
    double cost;
} costed;

static int by_cost_desc(const void *a, const void *b) {
    const costed *x = a, *y = b;
    if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
    return (x->c > y->c) - (x->c < y->c);
}

void hn_shard_assign(const hn_plan *p, const unsigned char *selected, const unsigned char *in, int count,
                     const hn_shard_model *m, int *out, double *loads) {
    costed *all = xcalloc((size_t)p->n_cases + 1, sizeof *all);
    int64_t n = 0;
    for (int64_t c = 0; c < p->n_cases; c++) {
        out[c] = -1;
        if (in[c]) all[n++] = (costed){c, hn_shard_case_cost(p, selected, c, m)};
    }
    qsort(all, (size_t)n, sizeof *all, by_cost_desc);
    for (int s = 0; s < count; s++) loads[s] = 0;
    for (int64_t i = 0; i < n; i++) {
        int best = 0;
        for (int s = 1; s < count; s++)
            if (loads[s] < loads[best]) best = s;
        out[all[i].c] = best;
        loads[best] += all[i].cost;
    }
    free(all);
}
