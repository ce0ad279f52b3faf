/* meta.c: a shard's sidecar (see meta.h). */
#define _GNU_SOURCE
#include "meta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compile.h"

char *hn_meta_path(const char *data_path) {
    size_t n = strlen(data_path);
    static const char *const EXT[] = {".csv", ".journal"};
    for (size_t i = 0; i < sizeof EXT / sizeof EXT[0]; i++) {
        size_t e = strlen(EXT[i]);
        if (n > e && strcmp(data_path + n - e, EXT[i]) == 0)
            return xasprintf("%.*s.meta.json", (int)(n - e), data_path);
    }
    return xasprintf("%s.meta.json", data_path);
}

int hn_meta_config_hash(const hn_plan *p, char out[33], hn_err *err) {
    char *text = NULL;
    size_t size = 0;
    if (hn_read_file(p->path, &text, &size, err) != 0) return -1;
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_adds(&h, "harness-config-v1");
    hn_hash_add(&h, text, size);
    free(text);
    for (int s = 0; s < p->n_specs; s++)
        hn_hash_source_tree(&h, p->specs[s].file, (const char *const *)p->specs[s].include_dirs,
                            p->specs[s].n_include_dirs);
    hn_hash_hex(&h, out);
    return 0;
}

int hn_meta_write(const char *path, const hn_meta *m, hn_err *err) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "harness", m->harness ? m->harness : "");
    cJSON_AddStringToObject(o, "kind", m->kind ? m->kind : "");
    cJSON_AddStringToObject(o, "config", m->config ? m->config : "");
    cJSON_AddStringToObject(o, "config_hash", m->config_hash);
    cJSON_AddNumberToObject(o, "seed", (double)m->seed);
    cJSON *vs = cJSON_AddArrayToObject(o, "variants");
    for (int i = 0; i < m->n_variants; i++) cJSON_AddItemToArray(vs, cJSON_CreateString(m->variants[i]));
    cJSON *sh = cJSON_AddObjectToObject(o, "shard");
    cJSON_AddNumberToObject(sh, "index", m->shard_index);
    cJSON_AddNumberToObject(sh, "count", m->shard_count);
    cJSON *cs = cJSON_AddArrayToObject(o, "case_shard");
    for (int64_t c = 0; c < m->n_cases; c++) cJSON_AddItemToArray(cs, cJSON_CreateNumber(m->case_shard[c]));
    cJSON *es = cJSON_AddArrayToObject(o, "estimate_s");
    for (int s = 0; m->estimate && s < m->shard_count; s++)
        cJSON_AddItemToArray(es, cJSON_CreateNumber(m->estimate[s]));
    cJSON_AddBoolToObject(o, "finished", m->finished);
    cJSON_AddStringToObject(o, "device", m->device ? m->device : "");
    cJSON_AddStringToObject(o, "backend", m->backend ? m->backend : "");
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    char *line = xasprintf("%s\n", text);
    free(text);
    int rc = hn_write_file(path, line, strlen(line), err);
    free(line);
    return rc;
}

static char *str_of(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

int hn_meta_load(const char *path, hn_meta *m, hn_err *err) {
    memset(m, 0, sizeof *m);
    char *text = NULL;
    if (hn_read_file(path, &text, NULL, err) != 0) return -1;
    cJSON *o = cJSON_Parse(text);
    free(text);
    const cJSON *sh = o ? cJSON_GetObjectItemCaseSensitive(o, "shard") : NULL;
    const cJSON *hash = o ? cJSON_GetObjectItemCaseSensitive(o, "config_hash") : NULL;
    const cJSON *cs = o ? cJSON_GetObjectItemCaseSensitive(o, "case_shard") : NULL;
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(sh, "index"), *cnt = cJSON_GetObjectItemCaseSensitive(sh, "count");
    /* a split as --shard I/N makes one (N from 1 to 4096; I from 0, or -1 for a
     * merge), every case in one of its shards or in none: anything else, sizes
     * and loops are never taken from */
    int valid = o && cJSON_IsString(hash) && strlen(hash->valuestring) == 32 && cJSON_IsNumber(idx) &&
                cJSON_IsNumber(cnt) && cJSON_IsArray(cs) && cnt->valuedouble >= 1 && cnt->valuedouble <= 4096 &&
                cnt->valuedouble == floor(cnt->valuedouble) && idx->valuedouble >= -1 &&
                idx->valuedouble < cnt->valuedouble && idx->valuedouble == floor(idx->valuedouble);
    const cJSON *v;
    if (valid)
        cJSON_ArrayForEach(v, cs) valid = valid && cJSON_IsNumber(v) && v->valuedouble >= -1 &&
                                          v->valuedouble < cnt->valuedouble && v->valuedouble == floor(v->valuedouble);
    if (!valid) {
        cJSON_Delete(o);
        return hn_errf(err, "%s: not a shard's description written by harness (--shard I/N writes one)", path);
    }
    m->harness = str_of(o, "harness");
    m->kind = str_of(o, "kind");
    m->config = str_of(o, "config");
    m->device = str_of(o, "device");
    m->backend = str_of(o, "backend");
    snprintf(m->config_hash, sizeof m->config_hash, "%s", hash->valuestring);
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(o, "seed");
    m->seed = cJSON_IsNumber(seed) ? (long long)seed->valuedouble : -1;
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(o, "variants");
    m->variants = xcalloc((size_t)cJSON_GetArraySize(vs) + 1, sizeof *m->variants);
    cJSON_ArrayForEach(v, vs) if (cJSON_IsString(v)) m->variants[m->n_variants++] = xstrdup(v->valuestring);
    m->shard_index = idx->valueint;
    m->shard_count = cnt->valueint;
    m->n_cases = cJSON_GetArraySize(cs);
    m->case_shard = xcalloc((size_t)m->n_cases + 1, sizeof *m->case_shard);
    int64_t k = 0;
    cJSON_ArrayForEach(v, cs) m->case_shard[k++] = cJSON_IsNumber(v) ? v->valueint : -1;
    const cJSON *es = cJSON_GetObjectItemCaseSensitive(o, "estimate_s");
    m->estimate = xcalloc((size_t)(m->shard_count > 0 ? m->shard_count : 1), sizeof *m->estimate);
    k = 0;
    cJSON_ArrayForEach(v, es) if (k < m->shard_count) m->estimate[k++] = cJSON_IsNumber(v) ? v->valuedouble : 0;
    m->finished = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "finished"));
    cJSON_Delete(o);
    if (!m->harness) m->harness = xstrdup("");
    if (!m->kind) m->kind = xstrdup("");
    if (!m->config) m->config = xstrdup("");
    if (!m->device) m->device = xstrdup("");
    if (!m->backend) m->backend = xstrdup("");
    return 0;
}

void hn_meta_free(hn_meta *m) {
    if (!m) return;
    free(m->harness), free(m->kind), free(m->config), free(m->device), free(m->backend);
    for (int i = 0; i < m->n_variants; i++) free(m->variants[i]);
    free(m->variants);
    free(m->case_shard);
    free(m->estimate);
    memset(m, 0, sizeof *m);
}

int hn_meta_same(const hn_meta *a, const char *an, const hn_meta *b, const char *bn, hn_err *err) {
    if (strcmp(a->harness, b->harness) != 0)
        return hn_errf(err, "%s was written by harness %s and %s by harness %s; run every shard with one harness",
                       an, a->harness, bn, b->harness);
    if (strcmp(a->kind, b->kind) != 0)
        return hn_errf(err, "%s is a %s shard and %s a %s shard", an, a->kind, bn, b->kind);
    if (strcmp(a->config_hash, b->config_hash) != 0)
        return hn_errf(err,
                       "%s and %s are shards of different configs or kernel sources (%s: %s, hash %.12s; %s: %s, "
                       "hash %.12s): the config or a kernel changed between the shards; run them all again",
                       an, bn, an, a->config, a->config_hash, bn, b->config, b->config_hash);
    if (a->seed != b->seed)
        return hn_errf(err, "%s and %s sampled the sweep with different seeds (%lld, %lld)", an, bn, a->seed, b->seed);
    if (a->shard_count != b->shard_count)
        return hn_errf(err, "%s is a shard of %d and %s a shard of %d", an, a->shard_count, bn, b->shard_count);
    int same = a->n_variants == b->n_variants;
    for (int i = 0; same && i < a->n_variants; i++) same = strcmp(a->variants[i], b->variants[i]) == 0;
    if (!same) return hn_errf(err, "%s and %s ran different variants (--variant)", an, bn);
    same = a->n_cases == b->n_cases;
    for (int64_t c = 0; same && c < a->n_cases; c++) same = a->case_shard[c] == b->case_shard[c];
    if (!same)
        return hn_errf(err, "%s and %s split the cases differently (--case, --max-gflop, --all or --backend differ)",
                       an, bn);
    return 0;
}
