/*
 * fuzz_config.c: libFuzzer target for the config loader (hn_plan_parse on any
 * bytes, then what list and run evaluate, then hn_plan_make_case); the work is
 * hn_fuzz_config in fuzz_targets.c.
 *
 *   scripts/fuzz.sh 600                    both targets, 600 s each
 *   build-fuzz/fuzz_config -dict=fuzz/config.dict fuzz/corpus/config
 */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hn_err err;
    hn_fuzz_config(data, size, &err);
    return 0;
}
