/*
 * fuzz_targets.h: what the fuzzers run on one input, shared by the libFuzzer
 * programs (fuzz_config.c, fuzz_expr.c; built with -DHN_FUZZ=ON, run by
 * scripts/fuzz.sh) and by tests/test_fuzz_regressions.c, which replays every
 * input that once crashed (tests/fuzz_regressions/<target>/) in the normal build.
 *
 * An input may be refused (a config or an expression with an error) or accepted;
 * either is fine. A finding is a crash, a sanitizer report, a leak, or a broken
 * invariant, on which these functions abort: an error without a message, a plan
 * without cases or variants, an expression whose text is not the input.
 */
#ifndef HN_FUZZ_TARGETS_H
#define HN_FUZZ_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Where a fuzzed config "lives", so that the seed corpus's relative kernel paths
 * (../kernels/conv2d/...) resolve. */
#define HN_FUZZ_CONFIG_PATH HN_SOURCE_DIR "/configs/fuzz.json"

/* The bytes up to the first NUL as a config (hn_plan_parse); when it loads, what
 * `harness list` and a run evaluate per case (operator parameters, shape, FLOPs,
 * variant constraints, block, grid, shared bytes, typed arguments, tolerances)
 * for the first cases and variants; then hn_plan_make_case with the bytes after
 * the NUL (as --set would pass them) or, without a NUL, an assignment made from
 * the first case. Returns 0 when the config loaded, else -1 with *err set. */
int hn_fuzz_config(const uint8_t *data, size_t size, hn_err *err);

/* The bytes up to the first NUL as an expression: parsed, its names listed, then
 * evaluated (as a value, an integer and a double) with a fixed scope: w = 100,
 * TILE_SIZE = 16, fs = 5, half = 0.5, big = INT64_MAX, small = INT64_MIN,
 * ACCUM_DTYPE = "double", empty = ""; other names are unknown. Returns 0 when it
 * parsed and evaluated, else -1 with *err set. */
int hn_fuzz_expr(const uint8_t *data, size_t size, hn_err *err);

#endif
