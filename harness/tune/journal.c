/* journal.c: the tuning journal (see journal.h). */
#define _GNU_SOURCE
#include "journal.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

struct hn_journal {
    FILE *f;                 /* NULL: in memory only */
    char *path;
    hn_journal_entry *e;
    int n, cap;
    int skipped;
    int loaded;              /* entries [0, loaded) came from the file */
    /* open addressing: index + 1, 0 empty; on key, and on the replay key
     * (variant, config, case values, phase) */
    int *table, *rtable;
    int table_size;
    char **rkeys;            /* [n]: each entry's replay key (owned) */
    char **ekeys;            /* [n]: each entry's key (borrowed from e[i].key) */
    unsigned char *written;  /* [n]: its row is in this tune's CSV (hn_journal_mark_written) */
};

static unsigned long long hash_str(const char *s) {
    unsigned long long h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Puts idx in table t (size a power of two) under key k; a later entry with
 * the same key replaces the earlier. */
static void slot_put(int *t, int size, char **keys_of, int idx) {
    unsigned long long h = hash_str(keys_of[idx]) & (unsigned long long)(size - 1);
    while (t[h]) {
        if (strcmp(keys_of[t[h] - 1], keys_of[idx]) == 0) {
            t[h] = idx + 1;
            return;
        }
        h = (h + 1) & (unsigned long long)(size - 1);
    }
    t[h] = idx + 1;
}

static int slot_get(const int *t, int size, char *const *keys_of, const char *k) {
    if (!size) return -1;
    unsigned long long h = hash_str(k) & (unsigned long long)(size - 1);
    while (t[h]) {
        if (strcmp(keys_of[t[h] - 1], k) == 0) return t[h] - 1;
        h = (h + 1) & (unsigned long long)(size - 1);
    }
    return -1;
}

static char *replay_key(const char *variant, const char *config, const char *case_values, const char *phase) {
    return xasprintf("%s\x1f%s\x1f%s\x1f%s", variant, config, case_values, phase);
}

/* Both tables, grown to keep them at most half full. */
static void table_put(hn_journal *j, int idx) {
    if ((j->n + 1) * 2 > j->table_size) {
        int size = j->table_size ? 2 * j->table_size : 1024;
        free(j->table);
        free(j->rtable);
        j->table = xcalloc((size_t)size, sizeof *j->table);
        j->rtable = xcalloc((size_t)size, sizeof *j->rtable);
        j->table_size = size;
        for (int i = 0; i < j->n; i++) {
            slot_put(j->table, size, j->ekeys, i);
            slot_put(j->rtable, size, j->rkeys, i);
        }
    }
    slot_put(j->table, j->table_size, j->ekeys, idx);
    slot_put(j->rtable, j->table_size, j->rkeys, idx);
}

static char *dup_or_empty(const char *s) {
    return xstrdup(s ? s : "");
}

static void entry_copy(hn_journal_entry *dst, const hn_journal_entry *src) {
    dst->key = dup_or_empty(src->key);
    dst->variant = dup_or_empty(src->variant);
    dst->config = dup_or_empty(src->config);
    dst->case_values = dup_or_empty(src->case_values);
    dst->label = dup_or_empty(src->label);
    dst->compile_key = dup_or_empty(src->compile_key);
    dst->device = dup_or_empty(src->device);
    dst->backend = dup_or_empty(src->backend);
    dst->phase = dup_or_empty(src->phase);
    dst->status = dup_or_empty(src->status);
    dst->reason = dup_or_empty(src->reason);
    dst->timestamp = dup_or_empty(src->timestamp);
    dst->row = dup_or_empty(src->row);
    dst->compile_s = src->compile_s;
    dst->case_id = src->case_id;
    dst->time_ms = src->time_ms;
    dst->noise = src->noise;
}

static void entry_free(hn_journal_entry *e) {
    free(e->key), free(e->variant), free(e->config), free(e->case_values), free(e->label), free(e->compile_key);
    free(e->device), free(e->backend), free(e->phase), free(e->status), free(e->reason);
    free(e->timestamp);
    free(e->row);
}

static void add(hn_journal *j, const hn_journal_entry *e) {
    if (j->n == j->cap) {
        j->cap = j->cap ? 2 * j->cap : 256;
        j->e = xrealloc(j->e, (size_t)j->cap * sizeof *j->e);
        j->rkeys = xrealloc(j->rkeys, (size_t)j->cap * sizeof *j->rkeys);
        j->ekeys = xrealloc(j->ekeys, (size_t)j->cap * sizeof *j->ekeys);
        j->written = xrealloc(j->written, (size_t)j->cap * sizeof *j->written);
        for (int i = 0; i < j->n; i++) j->ekeys[i] = j->e[i].key; /* e moved */
    }
    entry_copy(&j->e[j->n], e);
    j->written[j->n] = 0;
    j->ekeys[j->n] = j->e[j->n].key;
    j->rkeys[j->n] = replay_key(j->e[j->n].variant, j->e[j->n].config, j->e[j->n].case_values, j->e[j->n].phase);
    table_put(j, j->n);
    j->n++;
}

static const char *str_of(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One line as an entry; 0, or -1 when it is not a complete one. */
static int parse_line(const char *line, hn_journal_entry *e) {
    cJSON *o = cJSON_Parse(line);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return -1;
    }
    memset(e, 0, sizeof *e);
    const char *k = str_of(o, "key"), *st = str_of(o, "status");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "case");
    if (!k || !st || !cJSON_IsNumber(c)) {
        cJSON_Delete(o);
        return -1;
    }
    hn_journal_entry tmp = {
        .key = (char *)k,
        .variant = (char *)str_of(o, "variant"),
        .config = (char *)str_of(o, "config"),
        .case_values = (char *)str_of(o, "case_values"),
        .label = (char *)str_of(o, "label"),
        .compile_key = (char *)str_of(o, "compile_key"),
        .device = (char *)str_of(o, "device"),
        .backend = (char *)str_of(o, "backend"),
        .phase = (char *)str_of(o, "phase"),
        .status = (char *)st,
        .reason = (char *)str_of(o, "reason"),
        .timestamp = (char *)str_of(o, "timestamp"),
        .row = (char *)str_of(o, "row"),
        .case_id = (long long)c->valuedouble,
    };
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "time_ms");
    const cJSON *z = cJSON_GetObjectItemCaseSensitive(o, "noise");
    tmp.time_ms = cJSON_IsNumber(t) ? t->valuedouble : NAN;
    tmp.noise = cJSON_IsNumber(z) ? z->valuedouble : NAN;
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "compile_s");
    tmp.compile_s = cJSON_IsNumber(cs) ? cs->valuedouble : NAN;
    entry_copy(e, &tmp);
    cJSON_Delete(o);
    return 0;
}

static int journal_open(const char *path, int append, hn_journal **out, hn_err *err);

int hn_journal_open(const char *path, hn_journal **out, hn_err *err) {
    return journal_open(path, 1, out, err);
}

int hn_journal_load(const char *path, hn_journal **out, hn_err *err) {
    if (!hn_file_exists(path)) return hn_errf(err, "%s: no such file", path);
    return journal_open(path, 0, out, err);
}

static int journal_open(const char *path, int append, hn_journal **out, hn_err *err) {
    *out = NULL;
    hn_journal *j = xcalloc(1, sizeof *j);
    if (!path) {
        *out = j;
        return 0;
    }
    j->path = xstrdup(path);
    char *text = NULL;
    size_t size = 0;
    if (hn_file_exists(path) && hn_read_file(path, &text, &size, err) != 0) {
        hn_journal_close(j);
        return -1;
    }
    /* Every line harness writes starts so: a file with no entry that does not
     * start so is something else (a CSV, a binary file given by mistake), which
     * is neither replayed from nor appended to. A journal whose only line was
     * cut short (a tune killed while writing its first entry) still opens. */
    size_t lead = 0;
    while (lead < size && (text[lead] == '\n' || text[lead] == '\r' || text[lead] == ' ')) lead++;
    size_t head = size - lead < 7 ? size - lead : 7;
    int looks_like = lead == size || strncmp(text + lead, "{\"key\":", head) == 0;
    /* A tune killed while writing leaves its last line without a newline; the
     * next entry goes on a line of its own, not onto that fragment (where it
     * would be lost with it). */
    int unterminated = size > 0 && text[size - 1] != '\n';
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        if (!*line) continue;
        hn_journal_entry e;
        if (parse_line(line, &e) != 0) {
            j->skipped++;
            continue;
        }
        add(j, &e);
        entry_free(&e);
    }
    free(text);
    j->loaded = j->n;
    if (j->n == 0 && !looks_like) {
        hn_errf(err, "%s: not a tuning journal (no line of it is an evaluation written by harness tune)", path);
        hn_journal_close(j);
        return -1;
    }
    if (!append) {
        *out = j;
        return 0;
    }
    char *dir = hn_dirname(path);
    int rc = hn_mkdirs(dir, err);
    free(dir);
    if (rc != 0) {
        hn_journal_close(j);
        return -1;
    }
    j->f = fopen(path, "a");
    if (!j->f || (unterminated && (fputc('\n', j->f) == EOF || fflush(j->f) != 0))) {
        hn_errf(err, "%s: cannot open for appending: %s", path, strerror(errno));
        hn_journal_close(j);
        return -1;
    }
    *out = j;
    return 0;
}

void hn_journal_close(hn_journal *j) {
    if (!j) return;
    if (j->f) fclose(j->f);
    for (int i = 0; i < j->n; i++) {
        entry_free(&j->e[i]);
        free(j->rkeys[i]);
    }
    free(j->e);
    free(j->written);
    free(j->rkeys);
    free(j->ekeys);
    free(j->table);
    free(j->rtable);
    free(j->path);
    free(j);
}

int hn_journal_skipped(const hn_journal *j) {
    return j->skipped;
}

int hn_journal_count(const hn_journal *j) {
    return j->n;
}

const hn_journal_entry *hn_journal_at(const hn_journal *j, int i) {
    return i >= 0 && i < j->n ? &j->e[i] : NULL;
}

const hn_journal_entry *hn_journal_find(const hn_journal *j, const char *key) {
    int i = slot_get(j->table, j->table_size, j->ekeys, key);
    return i >= 0 ? &j->e[i] : NULL;
}

const hn_journal_entry *hn_journal_find_config(const hn_journal *j, const char *variant, const char *config,
                                               const char *case_values, const char *phase) {
    char *k = replay_key(variant, config, case_values, phase);
    int i = slot_get(j->rtable, j->table_size, j->rkeys, k);
    free(k);
    return i >= 0 ? &j->e[i] : NULL;
}

int hn_journal_from_file(const hn_journal *j, const hn_journal_entry *e) {
    return e >= j->e && e < j->e + j->loaded;
}

/* The text after prefix in s, or NULL. */
static const char *after(const char *s, const char *prefix) {
    size_t n = strlen(prefix);
    return strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

int hn_journal_worker_ended(const hn_journal_entry *e) {
    if (!e->status || strcmp(e->status, "ok") == 0 || !e->reason) return 0;
    const char *code = after(e->reason, "the worker process exited with code ");
    if (code) return *code >= '0' && *code <= '9';
    const char *sig = after(e->reason, "the worker process died of ");
    if (!sig || !*sig) return 0;
    /* a crash while the configuration ran is a verdict on it */
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
        if (strcmp(sig, strsignal(crashes[i])) == 0) return 0;
    return 1;
}

int hn_journal_mark_written(hn_journal *j, const hn_journal_entry *e) {
    if (e < j->e || e >= j->e + j->n) return 1;
    size_t i = (size_t)(e - j->e);
    int was = j->written[i];
    j->written[i] = 1;
    return was;
}

int hn_journal_append(hn_journal *j, const hn_journal_entry *e, hn_err *err) {
    add(j, e);
    if (!j->f) return 0;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", e->key);
    cJSON_AddStringToObject(o, "variant", e->variant ? e->variant : "");
    cJSON_AddStringToObject(o, "config", e->config ? e->config : "");
    cJSON_AddNumberToObject(o, "case", (double)e->case_id);
    cJSON_AddStringToObject(o, "case_values", e->case_values ? e->case_values : "");
    cJSON_AddStringToObject(o, "label", e->label ? e->label : "");
    cJSON_AddStringToObject(o, "compile_key", e->compile_key ? e->compile_key : "");
    cJSON_AddStringToObject(o, "device", e->device ? e->device : "");
    cJSON_AddStringToObject(o, "backend", e->backend ? e->backend : "");
    cJSON_AddStringToObject(o, "phase", e->phase ? e->phase : "");
    cJSON_AddStringToObject(o, "status", e->status);
    if (isfinite(e->time_ms)) cJSON_AddNumberToObject(o, "time_ms", e->time_ms);
    if (isfinite(e->noise)) cJSON_AddNumberToObject(o, "noise", e->noise);
    if (isfinite(e->compile_s)) cJSON_AddNumberToObject(o, "compile_s", e->compile_s);
    cJSON_AddStringToObject(o, "reason", e->reason ? e->reason : "");
    if (e->timestamp && *e->timestamp) cJSON_AddStringToObject(o, "timestamp", e->timestamp);
    if (e->row && *e->row) cJSON_AddStringToObject(o, "row", e->row);
    char *line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    int ok = fprintf(j->f, "%s\n", line) > 0 && fflush(j->f) == 0;
    free(line);
    return ok ? 0 : hn_errf(err, "%s: cannot write: %s", j->path, strerror(errno));
}

void hn_journal_key(const char *compile_key, const char *device, const char *backend, const char *case_values,
                    const char *phase, char key[33]) {
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_adds(&h, "hn-journal-1");
    hn_hash_adds(&h, compile_key);
    hn_hash_adds(&h, device);
    hn_hash_adds(&h, backend);
    hn_hash_adds(&h, case_values);
    hn_hash_adds(&h, phase);
    hn_hash_hex(&h, key);
}
