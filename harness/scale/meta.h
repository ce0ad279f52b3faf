/*
 * meta.h: the sidecar of a shard's output, <stem>.meta.json beside <stem>.csv
 * (a run) or <stem>.journal (a tune): what `harness merge` checks before it
 * combines shards, kept out of the CSV so that every CSV reader still reads it.
 *
 *   {"harness": "0.1.0", "kind": "run", "config": "/abs/configs/x.json",
 *    "config_hash": "<32 hex: the config file and every variant's kernel source
 *                    tree, headers included>",
 *    "seed": 20251129, "variants": ["conv2d_pad", ...],
 *    "shard": {"index": 1, "count": 4}, "case_shard": [0, 1, 1, 3, -1, ...],
 *    "estimate_s": [12.5, 12.1, 12.4, 12.0], "finished": true,
 *    "device": "NVIDIA H200", "backend": "cuda"}
 *
 * case_shard gives every case of the plan its shard (-1: not in the run), so a
 * merge can name the rows of a shard that never came back. Shards agree when
 * harness, kind, config_hash, seed, variants, shard count and case_shard are
 * the same.
 */
#ifndef HN_META_H
#define HN_META_H

#include <stdint.h>

#include "config.h"

typedef struct {
    char *harness, *kind, *config, *device, *backend;
    char config_hash[33];
    long long seed;
    char **variants;
    int n_variants;
    int shard_index, shard_count;
    int *case_shard;
    int64_t n_cases;
    double *estimate;        /* [shard_count] seconds */
    int finished;
} hn_meta;

/* The sidecar of a data file: x.csv or x.journal -> x.meta.json, else
 * x + ".meta.json". Caller frees. */
char *hn_meta_path(const char *data_path);

/* The hash of p's config file and every variant spec's source tree. */
int hn_meta_config_hash(const hn_plan *p, char out[33], hn_err *err);

/* Writes m as JSON to path (atomically). */
int hn_meta_write(const char *path, const hn_meta *m, hn_err *err);
/* Loads path into m (zeroed first; free with hn_meta_free). */
int hn_meta_load(const char *path, hn_meta *m, hn_err *err);
/* Frees what m owns; NULL-safe. */
void hn_meta_free(hn_meta *m);

/* Whether a and b are shards of the same thing; if not, why in err (naming
 * a_name and b_name). */
int hn_meta_same(const hn_meta *a, const char *a_name, const hn_meta *b, const char *b_name, hn_err *err);

#endif
