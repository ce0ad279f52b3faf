/*
 * hn_test_sweep.h: running an operator's sweep config and its kernels through
 * the harness binary on the emulator, for the operator tests (test_linear.c,
 * test_activation.c, test_softmax.c). Include after hn_test.h and
 * hn_test_files.h (which needs HN_TEST_SCRATCH).
 */
#ifndef HN_TEST_SWEEP_H
#define HN_TEST_SWEEP_H

#include "csv.h"

/* $HARNESS_ROOT/<rel>; caller frees. */
static inline char *hn_test_root_path(const char *rel) {
    const char *root = getenv("HARNESS_ROOT");
    return xasprintf("%s/%s", root ? root : ".", rel);
}

/* Runs `harness run <config>` on the emulator with cases up to max_gflop and
 * few samples: the run must exit 0, every row be ok or skipped for the budget,
 * and every variant have at least one ok row. Returns the number of ok rows. */
static inline int hn_test_sweep_emu(const char *config, const char *max_gflop) {
    char *cfg = hn_test_root_path(config);
    char *dir = hn_test_scratch("sweep");
    char *stem = hn_stem(config);
    char *out = xasprintf("%s/%s.csv", dir, stem);
    free(stem);
    const char *args[] = {"run", cfg, "--backend", "emu", "--out", out, "--force", "--quiet", "--max-gflop",
                          max_gflop, "--max-samples", "1", NULL};
    char *so, *se;
    int rc = hn_test_run_harness(NULL, args, &so, &se);
    CHECK_MSG(rc == 0, "%s on the emulator exited %d:\n%s%s", config, rc, so, se);
    hn_table t = {0};
    hn_err err;
    int ok_rows = 0;
    if (hn_table_load(out, &t, &err) != 0) {
        CHECK_MSG(0, "%s: %s", config, err.msg);
    } else {
        for (int r = 0; r < t.n_rows; r++) {
            const char *st = hn_table_get(&t, r, "status"), *why = hn_table_get(&t, r, "reason");
            if (strcmp(st, "ok") == 0) {
                ok_rows++;
                continue;
            }
            CHECK_MSG(strcmp(st, "skipped") == 0 && strstr(why, "emulator budget"), "%s: case %s %s: %s: %s", config,
                      hn_table_get(&t, r, "case"), hn_table_get(&t, r, "variant"), st, why);
        }
        /* every variant ran somewhere */
        for (int r = 0; r < t.n_rows; r++) {
            const char *v = hn_table_get(&t, r, "variant");
            int ran = 0;
            for (int q = 0; q < t.n_rows && !ran; q++)
                ran = strcmp(hn_table_get(&t, q, "variant"), v) == 0 && strcmp(hn_table_get(&t, q, "status"), "ok") == 0;
            CHECK_MSG(ran, "%s: variant %s ran on no case", config, v);
        }
        hn_table_free(&t);
    }
    free(so), free(se), free(out), free(dir), free(cfg);
    return ok_rows;
}

/* `harness debug <config> --kernel <kernel> --set <set>` on the emulator: exits
 * 0 and says the output matches. */
static inline void hn_test_debug_emu(const char *config, const char *kernel, const char *set) {
    char *cfg = hn_test_root_path(config);
    char *dir = hn_test_scratch("debug");
    const char *args[] = {"debug", cfg, "--backend", "emu", "--kernel", kernel, "--set", set, "--out", dir, NULL};
    char *so, *se;
    int rc = hn_test_run_harness(NULL, args, &so, &se);
    CHECK_MSG(rc == 0 && strstr(so, "verdict: output matches the reference"), "debug %s %s exited %d:\n%s%s", config,
              kernel, rc, so, se);
    free(so), free(se), free(dir), free(cfg);
}

/* Writes `text` as a config in the scratch folder and runs `harness list` on
 * it; returns the exit status, stdout and stderr together in *output (caller
 * frees). */
static inline int hn_test_list_text(const char *name, const char *text, char **output) {
    char *dir = hn_test_scratch("configs");
    char *path = xasprintf("%s/%s", dir, name);
    hn_write_file(path, text, strlen(text), NULL);
    const char *args[] = {"list", path, NULL};
    char *so, *se;
    int rc = hn_test_run_harness(NULL, args, &so, &se);
    *output = xasprintf("%s%s", so, se);
    free(so), free(se), free(path), free(dir);
    return rc;
}

#endif
