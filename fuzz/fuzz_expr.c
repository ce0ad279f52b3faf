/*
 * fuzz_expr.c: libFuzzer target for the expression language (hn_expr_parse on
 * any bytes, its names, and evaluation in a fixed scope); the work is
 * hn_fuzz_expr in fuzz_targets.c.
 *
 *   scripts/fuzz.sh 600                    both targets, 600 s each
 *   build-fuzz/fuzz_expr -dict=fuzz/expr.dict fuzz/corpus/expr
 */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hn_err err;
    hn_fuzz_expr(data, size, &err);
    return 0;
}
