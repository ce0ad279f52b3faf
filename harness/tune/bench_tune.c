/*
 * bench_tune.c: `harness bench tune`: the figures of harness tune, printed,
 * never asserted (these machines are shared and noisy):
 *
 *   space     how fast a large constrained space is built: a register-tiled
 *             GEMM-like space of about 10^7 raw configurations with the usual
 *             restrictions, its raw and valid sizes, seconds and raw
 *             configurations per second (the goal: 10^7 in under 1 s);
 *   overhead  the wall time of one evaluation on the emulator outside the
 *             kernel's own launches (compile, worker round trip, checks,
 *             journal): a tune of a tiny kernel, cold (empty compile cache)
 *             and warm, against the kernel time its rows record;
 *   strategies every strategy's evaluations to within 5 % of the optimum on
 *             the committed recorded spaces (harness tune --compare-strategies).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "csv.h"
#include "run.h"
#include "space.h"
#include "sweep.h"
#include "tune.h"

/* A space like a register-tiled kernel's: 7*7*6*5*5*3*2*4*4*4*4 = 11.3 M raw. */
static const char SPACE_CONFIG[] =
    "{\"name\": \"bench_space\", \"op\": \"conv2d\",\n"
    " \"axes\": {\"in_ch\": 64, \"out_ch\": 64, \"filter_size\": 3, \"img_size\": 56},\n"
    " \"variants\": [{\"file\": \"k.cu\", \"kernel\": \"k\",\n"
    "   \"tune\": {\"BM\": {\"pow2\": [8, 512]}, \"BN\": {\"pow2\": [8, 512]}, \"BK\": {\"pow2\": [4, 128]},\n"
    "            \"TM\": {\"pow2\": [1, 16]}, \"TN\": {\"pow2\": [1, 16]}, \"VEC\": [1, 2, 4], \"DB\": [0, 1],\n"
    "            \"UNROLL\": [1, 2, 4, 8], \"PAD\": [0, 1, 2, 4], \"SPLIT_K\": [1, 2, 4, 8], \"STAGES\": [1, 2, 3, 4]},\n"
    "   \"restrict\": [\"BM % TM == 0\", \"BN % TN == 0\", \"BM * BN / (TM * TN) <= 1024\",\n"
    "                \"BM * BN / (TM * TN) >= 32\", \"TM * TN <= 64\", \"BK % VEC == 0\",\n"
    "                \"(BM + BN) * (BK + PAD) * 4 * (DB + 1) <= 49152\",\n"
    "                \"STAGES == 1 || DB == 1\", \"SPLIT_K * BK <= in_ch * filter_size * filter_size\"],\n"
    "   \"block\": [\"BM * BN / (TM * TN)\"], \"grid\": [1], \"args\": []}]}\n";

static const char SPACE_KERNEL[] =
    "__global__ void k() { int x = BM + BN + BK + TM + TN + VEC + DB + UNROLL + PAD + SPLIT_K + STAGES; (void)x; }\n";

static int bench_space(FILE *out, const char *dir, hn_err *err) {
    char *kpath = xasprintf("%s/k.cu", dir), *cpath = xasprintf("%s/bench_space.json", dir);
    int rc = -1;
    hn_plan *p = NULL;
    if (hn_write_file(kpath, SPACE_KERNEL, strlen(SPACE_KERNEL), err) != 0 ||
        hn_write_file(cpath, SPACE_CONFIG, strlen(SPACE_CONFIG), err) != 0 || hn_plan_load(cpath, -1, &p, err) != 0)
        goto done;
    double params[HN_MAX_PARAMS];
    if (hn_plan_case_params(p, &p->cases[0], params, err) != 0) goto done;
    const hn_variant *base = &p->variants[0];
    double best = INFINITY;
    hn_space *s = NULL;
    for (int rep = 0; rep < 3; rep++) { /* the best of three: a loaded machine only slows */
        hn_space_free(s);
        s = NULL;
        if (hn_space_build(p, base, &p->cases[0], params, NULL, 50000000LL, &s, err) != 0) goto done;
        if (s->build_seconds < best) best = s->build_seconds;
    }
    fprintf(out, "  space: %.4g raw configurations, %lld valid (%.2g%%), %d tunables, %d restrictions\n", s->n_raw,
            (long long)s->n_valid, 100.0 * (double)s->n_valid / s->n_raw, s->n_tunables,
            p->specs[base->spec].n_restrict);
    fprintf(out, "  built in %.3f s (best of 3): %.3g raw configurations/s, %lld restriction evaluations (%.2g per "
                 "raw configuration: the cut subtrees are never visited)\n",
            best, s->n_raw / best, (long long)s->evaluations, (double)s->evaluations / s->n_raw);
    hn_space_free(s);
    rc = 0;
done:
    hn_plan_free(p);
    unlink(kpath);
    unlink(cpath);
    free(kpath);
    free(cpath);
    return rc;
}

/* One tune through the command itself, quiet; its wall time, and the kernel
 * time and evaluations its CSV records. */
static int run_tune(const char *config, const char *out_prefix, const char *cache, int budget, double *wall,
                    double *kernel_ms, int *rows, hn_err *err) {
    hn_cli cli;
    hn_cli_init(&cli);
    cli.config = config;
    cli.backend = "emu";
    cli.top = 0;
    cli.case_id = 0;
    cli.quiet = 1;
    cli.strategy = "random";
    char b[32];
    snprintf(b, sizeof b, "%d", budget);
    cli.budget = b;
    cli.out = out_prefix;
    cli.cache_dir = cache;
    /* the tune's own report would bury the figures */
    fflush(stdout);
    int saved = dup(1);
    FILE *null = fopen("/dev/null", "w");
    if (null) dup2(fileno(null), 1);
    double t0 = hn_now();
    int rc = hn_cmd_tune(&cli);
    *wall = hn_now() - t0;
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    if (null) fclose(null);
    if (rc != 0) return hn_errf(err, "harness tune %s --backend emu exited %d", config, rc);
    char *csv = xasprintf("%s.csv", out_prefix);
    hn_table t;
    int lrc = hn_table_load(csv, &t, err);
    free(csv);
    if (lrc != 0) return -1;
    *kernel_ms = 0;
    *rows = t.n_rows;
    for (int r = 0; r < t.n_rows; r++) {
        double mean = atof(hn_table_get(&t, r, "time_mean_ms"));
        double n = atof(hn_table_get(&t, r, "samples")) + atof(hn_table_get(&t, r, "discarded"));
        if (mean > 0 && n > 0) *kernel_ms += mean * n;
    }
    hn_table_free(&t);
    return 0;
}

static int bench_overhead(FILE *out, const char *dir, hn_err *err) {
    char *config = xasprintf("%s/tests/configs/tune_small.json", HN_SOURCE_DIR);
    char *cache = xasprintf("%s/cache", dir);
    int rc = 0;
    for (int warm = 0; warm < 2 && rc == 0; warm++) {
        char *prefix = xasprintf("%s/overhead%d", dir, warm);
        double wall = 0, kernel_ms = 0;
        int rows = 0;
        rc = run_tune(config, prefix, cache, 12, &wall, &kernel_ms, &rows, err);
        if (rc == 0 && rows > 0)
            fprintf(out, "  %s compile cache: %d evaluations in %.2f s: %.1f ms each, of which %.2f ms in the "
                         "kernel's timed launches and %.1f ms outside them\n",
                    warm ? "warm" : "cold", rows, wall, 1e3 * wall / rows, kernel_ms / rows,
                    1e3 * wall / rows - kernel_ms / rows);
        char *files[] = {"csv", "journal", "best.json", "h"};
        for (size_t i = 0; i < HN_ARRAY_LEN(files); i++) {
            char *f = xasprintf("%s.%s", prefix, files[i]);
            unlink(f);
            free(f);
        }
        free(prefix);
    }
    if (rc == 0)
        fprintf(out, "  (cold: each configuration compiled by the host compiler; warm: from the cache. The tune "
                     "starts a worker process once; its start is in the first evaluation.)\n");
    free(config);
    free(cache);
    return rc;
}

/* The committed recorded spaces: a config and a brute-force journal of it. */
static const struct {
    const char *config, *journal;
} FIXTURES[] = {
    {"tests/configs/tune_small.json", "results/emu/2026-11-30/tune_small.journal"},
    {"tests/configs/conv2d_igemm_space.json", "results/emu/2026-11-30/conv2d_igemm_space.journal"},
};

static int bench_strategies(FILE *out, const char *dir, hn_err *err) {
    (void)err;
    for (size_t i = 0; i < HN_ARRAY_LEN(FIXTURES); i++) {
        char *config = xasprintf("%s/%s", HN_SOURCE_DIR, FIXTURES[i].config);
        char *journal = xasprintf("%s/%s", HN_SOURCE_DIR, FIXTURES[i].journal);
        char *prefix = xasprintf("%s/strategies%zu", dir, i);
        fprintf(out, "  %s, recorded in %s:\n", FIXTURES[i].config, FIXTURES[i].journal);
        fflush(out);
        hn_cli cli;
        hn_cli_init(&cli);
        cli.config = config;
        cli.repeats = 100;
        cli.replay = journal;
        cli.compare_strategies = 1;
        cli.budget = "25%";
        cli.out = prefix;
        int rc = hn_cmd_tune(&cli);
        if (rc != 0) fprintf(out, "  (the comparison failed: exit %d)\n", rc);
        free(config);
        free(journal);
        free(prefix);
    }
    return 0;
}

int hn_tune_bench(FILE *out) {
    hn_err err;
    char *dir = hn_mkdtemp("harness-bench-tune.", &err);
    if (!dir) {
        fprintf(stderr, "harness bench tune: %s\n", err.msg);
        return -1;
    }
    int rc = 0;
    fprintf(out, "-- space construction\n");
    fflush(out);
    if (bench_space(out, dir, &err) != 0) fprintf(stderr, "harness bench tune: space: %s\n", err.msg), rc = -1;
    fprintf(out, "-- overhead per evaluation on the emulator (tests/configs/tune_small.json, case 0, 12 "
                 "evaluations)\n");
    fflush(out);
    if (bench_overhead(out, dir, &err) != 0) fprintf(stderr, "harness bench tune: overhead: %s\n", err.msg), rc = -1;
    fprintf(out, "-- strategies on the committed recorded spaces (100 runs each, budget 25%% of the space)\n");
    fflush(out);
    bench_strategies(out, dir, &err);
    char *cmd[] = {"rm", "-rf", dir, NULL};
    hn_spawn(cmd, 0, NULL, NULL);
    free(dir);
    return rc;
}
