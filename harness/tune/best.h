/*
 * best.h: a best.json of `harness tune` (<out>.best.json), read back by the
 * commands that use a tune's result: `harness train --tuned` (the kernel's
 * most frequent winning defines) and `harness run --tuned` (the winning
 * configuration of each case, as a variant of a sweep).
 *
 * What is required of the file: a JSON object with "kernel" (a string) and
 * "results" (an array); a result's "defines" ("BM=64,BN=32") is its winning
 * configuration (absent where the tune found none that ran correctly), its
 * "case_values" ("m=64,n=255") the case it is for (absent in a tune across
 * cases). "config", "variant", "variant_label" and "mode" are read where given
 * (harness tune always writes them). Errors name the file.
 */
#ifndef HN_BEST_H
#define HN_BEST_H

#include "util.h"

typedef struct {
    char *case_values;  /* "m=64,n=255,...", or NULL (across cases, or not given) */
    char *defines;      /* "BM=64,BN=32", or NULL: no configuration ran correctly */
} hn_best_unit;

typedef struct {
    char *path;
    char *config;         /* the tuned config as the tune was given it, or NULL */
    char *variant;        /* the variant spec's name, or NULL */
    char *variant_label;  /* with its other defines' values: "reduce[ACCUM_DTYPE=double]", or NULL */
    char *kernel;         /* every launch's kernel, joined by ';' */
    int across;           /* "mode": "across cases" */
    hn_best_unit *units;
    int n_units;
} hn_best;

/* Reads path into b. -1 with err ("PATH: not JSON", "PATH: not a best.json
 * written by harness tune ...", "PATH: no result has a configuration ...");
 * b is then empty (hn_best_free is still safe). */
int hn_best_load(const char *path, hn_best *b, hn_err *err);
void hn_best_free(hn_best *b);

/* Prepends "--tuned " to err's message ("--tuned PATH: ..."); returns -1. */
int hn_best_err(hn_err *err);

/* The "defines" that won the most units (the first of those tied; the only
 * one of a tune across cases). Never NULL after hn_best_load succeeded. */
const char *hn_best_most_frequent(const hn_best *b);

#endif
