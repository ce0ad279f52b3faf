/* best.c: a best.json of harness tune, read back (see best.h). */
#define _GNU_SOURCE
#include "best.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static char *opt_string(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? xstrdup(v->valuestring) : NULL;
}

void hn_best_free(hn_best *b) {
    if (!b) return;
    for (int i = 0; i < b->n_units; i++) {
        free(b->units[i].case_values);
        free(b->units[i].defines);
    }
    free(b->units);
    free(b->path);
    free(b->config);
    free(b->variant);
    free(b->variant_label);
    free(b->kernel);
    memset(b, 0, sizeof *b);
}

int hn_best_load(const char *path, hn_best *b, hn_err *err) {
    memset(b, 0, sizeof *b);
    char *text = NULL;
    size_t size;
    if (hn_read_file(path, &text, &size, err) != 0) return -1;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) return hn_errf(err, "%s: not JSON (a best.json written by harness tune is)", path);
    int rc = -1;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(root, "kernel");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!cJSON_IsObject(root) || !cJSON_IsString(k) || !cJSON_IsArray(res)) {
        hn_errf(err, "%s: not a best.json written by harness tune (no \"kernel\" and \"results\")", path);
        goto done;
    }
    b->path = xstrdup(path);
    b->kernel = xstrdup(k->valuestring);
    b->config = opt_string(root, "config");
    b->variant = opt_string(root, "variant");
    b->variant_label = opt_string(root, "variant_label");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "mode");
    b->across = cJSON_IsString(mode) && strcmp(mode->valuestring, "across cases") == 0;
    b->units = xcalloc((size_t)cJSON_GetArraySize(res) + 1, sizeof *b->units);
    int any = 0;
    for (const cJSON *a = res->child; a; a = a->next) {
        if (!cJSON_IsObject(a)) {
            hn_errf(err, "%s: results[%d]: expected an object, got another JSON value", path, b->n_units);
            goto done;
        }
        hn_best_unit *u = &b->units[b->n_units++];
        u->case_values = opt_string(a, "case_values");
        u->defines = opt_string(a, "defines");
        any |= u->defines != NULL;
    }
    if (!any) {
        hn_errf(err, "%s: no result has a configuration (\"defines\"): the tune found none that ran correctly", path);
        goto done;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0) hn_best_free(b);
    return rc;
}

const char *hn_best_most_frequent(const hn_best *b) {
    const char *best = NULL;
    int best_n = 0;
    for (int i = 0; i < b->n_units; i++) {
        const char *d = b->units[i].defines;
        if (!d) continue;
        int n = 0;
        for (int j = 0; j < b->n_units; j++) n += b->units[j].defines && strcmp(b->units[j].defines, d) == 0;
        if (n > best_n) best = d, best_n = n;
    }
    return best;
}

int hn_best_err(hn_err *err) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_addf(&sb, "--tuned %s", err->msg);
    hn_errf(err, "%s", sb.buf);
    hn_sb_free(&sb);
    return -1;
}
