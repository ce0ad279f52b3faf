/* export.c: the C header and the T4 files of a tune (export.h). */
#define _GNU_SOURCE
#include "export.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------- */
/* the header */

static void macro_name(const char *prefix, const char *s, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "%s", prefix);
    int under = 1;
    for (; *s && n + 2 < size; s++) {
        if (isalnum((unsigned char)*s)) {
            out[n++] = (char)toupper((unsigned char)*s);
            under = 0;
        } else if (!under) {
            out[n++] = '_';
            under = 1;
        }
    }
    while (n > strlen(prefix) && out[n - 1] == '_') n--;
    out[n] = '\0';
}

void hn_tune_target_macro(const char *device, char *out, size_t size) {
    macro_name("HN_TARGET_", device && *device ? device : "unknown", out, size);
}

/* Whether text is a number a #if can compare (an integer literal). */
static int is_int_literal(const char *s) {
    if (*s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    while (isdigit((unsigned char)*s)) s++;
    return *s == '\0';
}

/* "#<indent>define NAME text" lines for "A=1,B=x". */
static void defines(FILE *f, const char *config, const char *indent) {
    char *copy = xstrdup(config);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        fprintf(f, "#%sdefine %s %s\n", indent, tok, eq + 1);
    }
    free(copy);
}

/* The #if condition of a case's values "a=1,b=2,mode=max": an integer axis
 * as defined(HN_CASE_A) && HN_CASE_A == 1; any other value (a string, a
 * non-integer number), which the preprocessor cannot compare, as a macro of
 * its own: defined(HN_CASE_MODE_MAX). Leaving those out made cases that
 * differ only there one condition, every one after the first unreachable. */
static void case_condition(FILE *f, const char *case_values) {
    char *copy = xstrdup(case_values);
    hn_sb defined, equal;
    hn_sb_init(&defined);
    hn_sb_init(&equal);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        char m[96];
        macro_name("HN_CASE_", tok, m, sizeof m);
        if (!is_int_literal(eq + 1)) {
            char prefix[100], mv[192];
            snprintf(prefix, sizeof prefix, "%s_", m);
            macro_name(prefix, eq + 1, mv, sizeof mv);
            hn_sb_addf(&defined, "%sdefined(%s)", defined.len ? " && " : "", mv);
            continue;
        }
        hn_sb_addf(&defined, "%sdefined(%s)", defined.len ? " && " : "", m);
        hn_sb_addf(&equal, " && %s == %s", m, eq + 1);
    }
    fprintf(f, "%s%s", defined.len ? defined.buf : "0", equal.len ? equal.buf : "");
    hn_sb_free(&defined);
    hn_sb_free(&equal);
    free(copy);
}

/* The configuration that won the most cases of a per-case tune (the first in
 * order among equals). */
static const char *most_frequent(const cJSON *results) {
    const char *best = NULL;
    int best_n = 0;
    const cJSON *r, *q;
    cJSON_ArrayForEach(r, results) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "defines");
        if (!cJSON_IsString(d)) continue;
        int n = 0;
        cJSON_ArrayForEach(q, results) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(q, "defines");
            n += cJSON_IsString(e) && strcmp(e->valuestring, d->valuestring) == 0;
        }
        if (n > best_n) best = d->valuestring, best_n = n;
    }
    return best;
}

static const char *str_item(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

int hn_tune_write_header(const char *path, const char *variant, cJSON *const *docs, int n_docs, hn_err *err) {
    FILE *f = fopen(path, "w");
    if (!f) return hn_errf(err, "%s: %s", path, strerror(errno));
    char guard[128], sel[160];
    macro_name("HN_TUNED_", variant, guard, sizeof guard);
    snprintf(sel, sizeof sel, "%s_DEVICE", guard);
    fprintf(f, "/*\n * %s: the configurations `harness tune` found for %s (kernel %s, %s).\n",
            strrchr(path, '/') ? strrchr(path, '/') + 1 : path, variant, str_item(docs[0], "kernel"),
            str_item(docs[0], "config"));
    fprintf(f, " * Include it where the kernel is compiled; it defines the tuned macros.\n *\n"
               " * The GPU: define one of the HN_TARGET_ macros below (-DHN_TARGET_NVIDIA_H200);\n"
               " * with none defined, the first device's configurations apply.\n"
               " * The problem size (per-case tunes): define the case's axes as HN_CASE_<AXIS>\n"
               " * (-DHN_CASE_IN_CH=3 ...), and an axis that is not an integer as a macro of its\n"
               " * own, HN_CASE_<AXIS>_<VALUE> (-DHN_CASE_MODE_MAX for mode=max); a size that was\n"
               " * not tuned, or none given, gets the\n"
               " * configuration that won the most cases.\n *\n * Devices:\n");
    for (int d = 0; d < n_docs; d++) {
        char m[128];
        hn_tune_target_macro(str_item(docs[d], "device"), m, sizeof m);
        fprintf(f, " *   %-34s %s (%s), %s, strategy %s\n", m, str_item(docs[d], "device"), str_item(docs[d], "backend"),
                str_item(docs[d], "mode"), str_item(docs[d], "strategy"));
    }
    fprintf(f, " */\n#ifndef %s_H\n#define %s_H\n\n", guard, guard);
    for (int d = 0; d < n_docs; d++) {
        char m[128];
        hn_tune_target_macro(str_item(docs[d], "device"), m, sizeof m);
        fprintf(f, "#%s defined(%s)\n#define %s %d\n", d ? "elif" : "if", m, sel, d);
    }
    fprintf(f, "#else\n#define %s 0 /* no target: the first device */\n#endif\n\n", sel);
    for (int d = 0; d < n_docs; d++) {
        const cJSON *results = cJSON_GetObjectItemCaseSensitive(docs[d], "results"), *r;
        fprintf(f, "#%s %s == %d /* %s */\n", d ? "elif" : "if", sel, d, str_item(docs[d], "device"));
        int across = strcmp(str_item(docs[d], "mode"), "across cases") == 0;
        if (across) {
            const cJSON *r0 = cJSON_GetArrayItem(results, 0);
            const char *cfg = r0 ? str_item(r0, "defines") : "";
            fprintf(f, "/* one configuration for all cases (%s) */\n", r0 ? str_item(r0, "unit") : "");
            defines(f, cfg, "");
            continue;
        }
        int first = 1;
        cJSON_ArrayForEach(r, results) {
            const char *cfg = str_item(r, "defines");
            if (!*cfg) continue;
            fprintf(f, "#  %s ", first ? "if" : "elif");
            case_condition(f, str_item(r, "case_values"));
            fprintf(f, " /* %s: %.5g ms */\n", str_item(r, "case_values"),
                    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "time_ms")));
            defines(f, cfg, "    ");
            first = 0;
        }
        const char *fallback = most_frequent(results);
        if (fallback) {
            fprintf(f, "#  %s /* the configuration that won the most cases */\n", first ? "if 1" : "else");
            defines(f, fallback, "    ");
            fprintf(f, "#  endif\n");
        }
    }
    fprintf(f, "#endif\n\n#endif /* %s_H */\n", guard);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return hn_errf(err, "%s: cannot write", path);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* T4 */

/* "A=1,B=x" as {"A": 1, "B": "x"}. */
static cJSON *config_object(const char *config) {
    cJSON *o = cJSON_CreateObject();
    char *copy = xstrdup(config);
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        if (end != eq + 1 && !*end && isfinite(v)) cJSON_AddNumberToObject(o, tok, v);
        else cJSON_AddStringToObject(o, tok, eq + 1);
    }
    free(copy);
    return o;
}

static const char *invalidity(const char *status) {
    if (strcmp(status, "ok") == 0) return "correct";
    if (strcmp(status, "compile") == 0) return "compile";
    if (strcmp(status, "timeout") == 0) return "timeout";
    if (strcmp(status, "mismatch") == 0) return "correctness";
    return "runtime";
}

int hn_tune_write_t4(const char *dir, const hn_journal *j, const char *variant, const char *device,
                     const char *backend, const long long *case_ids, char *const *case_values, int n_cases,
                     hn_err *err) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return hn_errf(err, "%s: %s", dir, strerror(errno));
    int written = 0;
    for (int c = 0; c < n_cases; c++) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "schema_version", "1.0.0");
        cJSON *results = cJSON_AddArrayToObject(root, "results");
        int n = 0;
        for (int i = 0; i < hn_journal_count(j); i++) {
            const hn_journal_entry *e = hn_journal_at(j, i);
            if (hn_journal_find(j, e->key) != e) continue; /* measured again later: the later entry counts */
            if (strcmp(e->variant, variant) != 0 || strcmp(e->phase, "search") != 0 ||
                strcmp(e->case_values, case_values[c]) != 0 || strcmp(e->device, device) != 0 ||
                strcmp(e->backend, backend) != 0)
                continue;
            int ok = strcmp(e->status, "ok") == 0 && isfinite(e->time_ms);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "timestamp", e->timestamp);
            cJSON_AddItemToObject(r, "configuration", config_object(e->config));
            cJSON *times = cJSON_AddObjectToObject(r, "times");
            if (isfinite(e->compile_s)) cJSON_AddNumberToObject(times, "compilation", e->compile_s * 1e3);
            cJSON *rt = cJSON_AddArrayToObject(times, "runtimes");
            if (ok) cJSON_AddItemToArray(rt, cJSON_CreateNumber(e->time_ms));
            cJSON_AddStringToObject(r, "invalidity", invalidity(e->status));
            cJSON_AddNumberToObject(r, "correctness", strcmp(e->status, "mismatch") == 0 ? 0 : 1);
            cJSON *ms = cJSON_AddArrayToObject(r, "measurements");
            if (ok) {
                cJSON *m = cJSON_CreateObject();
                cJSON_AddStringToObject(m, "name", "time");
                cJSON_AddNumberToObject(m, "value", e->time_ms);
                cJSON_AddStringToObject(m, "unit", "ms");
                cJSON_AddItemToArray(ms, m);
                if (isfinite(e->noise)) {
                    m = cJSON_CreateObject();
                    cJSON_AddStringToObject(m, "name", "time_noise");
                    cJSON_AddNumberToObject(m, "value", e->noise);
                    cJSON_AddStringToObject(m, "unit", "");
                    cJSON_AddItemToArray(ms, m);
                }
            }
            cJSON *obj = cJSON_AddArrayToObject(r, "objectives");
            cJSON_AddItemToArray(obj, cJSON_CreateString("time"));
            cJSON_AddItemToArray(results, r);
            n++;
        }
        if (n) {
            char *path = xasprintf("%s/case%lld.json", dir, case_ids[c]);
            char *text = cJSON_Print(root);
            int rc = hn_write_file(path, text, strlen(text), err);
            free(text);
            free(path);
            if (rc != 0) {
                cJSON_Delete(root);
                return -1;
            }
            written++;
        }
        cJSON_Delete(root);
    }
    return written;
}
