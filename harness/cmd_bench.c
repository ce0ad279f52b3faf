/*
 * cmd_bench.c: `harness bench [reference|ops|emu|tune] [--quick]`: the
 * project's own benchmark figures, printed (their speed never asserted): the
 * fp64 conv2d reference's GFLOP/s on the seed's shapes, every operator's
 * reference against a copy of the same bytes, the CPU emulator's switch,
 * barrier and conv2d figures, and harness tune's (space construction, overhead
 * per evaluation, strategies on recorded spaces). Exit code 1 when a figure
 * could not be measured or a result disagreed (the reference's two multiplies,
 * an emulated conv2d against its C loop); 2 for an unknown sub-benchmark.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "emu/emu.h"
#include "util.h"
#include "ops/conv2d/ref.h"
#include "ops/op.h"
#include "tune/tune.h"

int hn_cmd_bench(const hn_cli *cli) {
    int rc = 0;
    const char *only = cli->config; /* optional: "reference", "ops", "emu" or "tune" */
    if (only && strcmp(only, "reference") != 0 && strcmp(only, "ops") != 0 && strcmp(only, "emu") != 0 &&
        strcmp(only, "tune") != 0) {
        fprintf(stderr, "harness bench: unknown sub-benchmark '%s' (expected reference, ops, emu or tune; none: all "
                        "of them)\n",
                only);
        return 2;
    }
    if (only && cli->quick && (strcmp(only, "ops") == 0 || strcmp(only, "tune") == 0)) {
        fprintf(stderr, "harness bench %s: --quick: %s has no quick form (--quick is for reference and emu)\n", only,
                only);
        return 2;
    }
    if (!only || strcmp(only, "reference") == 0) {
        printf("== fp64 conv2d reference (im2col + GEMM, %s) ==\n", conv2d_ref_method());
        fflush(stdout);
        if (conv2d_ref_bench(stdout, cli->quick) != 0) {
            fprintf(stderr, "harness bench: the reference's results disagree (MISMATCH above)\n");
            rc = 1;
        }
        printf("\n");
    }
    /* --quick: a look that every part works; the operators' and tune's figures
     * take minutes and are left to a full run (or asked for by name) */
    if ((!only && !cli->quick) || (only && strcmp(only, "ops") == 0)) {
        printf("== fp64 references of every operator, against a plain copy of the same bytes ==\n");
        fflush(stdout);
        rc |= hn_op_bench(stdout, NULL) != 0;
        printf("\n");
    }
    if (!only || strcmp(only, "emu") == 0) {
        printf("== CPU emulator ==\n");
        fflush(stdout);
        hn_err err;
        if (hn_emu_bench(stdout, cli->quick, &err) != 0) {
            fprintf(stderr, "harness bench: %s\n", err.msg);
            rc = 1;
        }
    }
    if ((!only && !cli->quick) || (only && strcmp(only, "tune") == 0)) {
        printf("== harness tune ==\n");
        fflush(stdout);
        rc |= hn_tune_bench(stdout) != 0;
    }
    return rc;
}
