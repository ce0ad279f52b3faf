/*
 * cmd_bench.c: `harness bench`: the project's own benchmark figures, printed
 * (never asserted): the fp64 conv2d reference's GFLOP/s on the seed's shapes,
 * the CPU emulator's switch, barrier and conv2d figures, and harness tune's
 * (space construction, overhead per evaluation, strategies on recorded spaces).
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
        fprintf(stderr, "harness bench: unknown part '%s' (reference, ops, emu or tune; none: all of them)\n", only);
        return 2;
    }
    if (!only || strcmp(only, "reference") == 0) {
        printf("== fp64 conv2d reference (im2col + GEMM, %s) ==\n", conv2d_ref_method());
        fflush(stdout);
        rc |= conv2d_ref_bench(stdout) != 0;
        printf("\n");
    }
    if (!only || strcmp(only, "ops") == 0) {
        printf("== fp64 references of every operator, against a plain copy of the same bytes ==\n");
        fflush(stdout);
        rc |= hn_op_bench(stdout, NULL) != 0;
        printf("\n");
    }
    if (!only || strcmp(only, "emu") == 0) {
        printf("== CPU emulator ==\n");
        fflush(stdout);
        hn_err err;
        if (hn_emu_bench(stdout, &err) != 0) {
            fprintf(stderr, "harness bench: %s\n", err.msg);
            rc = 1;
        }
    }
    if (!only || strcmp(only, "tune") == 0) {
        printf("== harness tune ==\n");
        fflush(stdout);
        rc |= hn_tune_bench(stdout) != 0;
    }
    return rc;
}
