/*
 * cmd_cache.c: `harness cache info|clean`, the compile cache's folder
 * (--cache-dir, else hn_default_cache_dir).
 *
 *   info   what it holds, by kind, with sizes; every entry with a checksum
 *          record is verified and the ones that fail are named with why
 *   clean  removes the harness's files (entries, generated sources, shim
 *          folders, temporaries no process is writing) and nothing else:
 *          which names those are is cache.c's to say
 *
 * Exit codes: 0 done (info also when entries fail: they are reported, and the
 * next compile replaces them), 1 the folder could not be read or something
 * could not be removed, 2 an unknown action.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "commands.h"
#include "compile.h"

/* "1.2 MiB" into buf. */
static const char *human(uint64_t bytes, char *buf, size_t size) {
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;
    while (v >= 1024 && u + 1 < HN_ARRAY_LEN(units)) {
        v /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
    else snprintf(buf, size, "%.1f %s", v, units[u]);
    return buf;
}

/* ---------------------------------------------------------------------- */
/* info */

typedef struct {
    const hn_cli *cli;
    int n[HN_CACHE_N_KINDS];
    uint64_t bytes[HN_CACHE_N_KINDS];
    int checked, failed;
    hn_sb bad;  /* one line per entry that failed */
} info_ctx;

static int info_visit(const hn_cache_file *f, void *arg) {
    info_ctx *c = arg;
    c->n[f->kind]++;
    c->bytes[f->kind] += f->bytes;
    char why[256] = "";
    int st = HN_CACHE_OK;
    if (hn_cache_kind_has_record(f->kind)) {
        c->checked++;
        st = hn_cache_verify(f->path, NULL, NULL, why, sizeof why);
        if (st == HN_CACHE_MISSING) snprintf(why, sizeof why, "removed while being checked");
        if (st != HN_CACHE_OK) {
            c->failed++;
            hn_sb_addf(&c->bad, "  %s: %s\n", f->name, why);
        }
    }
    if (c->cli->verbose) {
        char size[32];
        printf("  %-60s %-30s %12s %s\n", f->name, hn_cache_kind_name(f->kind), human(f->bytes, size, sizeof size),
               !hn_cache_kind_has_record(f->kind) ? "" : st == HN_CACHE_OK ? "ok" : "FAILS");
    }
    return 0;
}

static int cache_info(const hn_cli *cli, const char *dir) {
    info_ctx c;
    memset(&c, 0, sizeof c);
    c.cli = cli;
    hn_sb_init(&c.bad);
    hn_err err;
    if (cli->verbose) printf("%s:\n", dir);
    if (hn_cache_walk(dir, info_visit, &c, &err) != 0) {
        fprintf(stderr, "harness cache: %s\n", err.msg);
        hn_sb_free(&c.bad);
        return 1;
    }
    int files = 0;
    uint64_t total = 0;
    for (int k = 1; k < HN_CACHE_N_KINDS; k++) {
        files += c.n[k];
        total += c.bytes[k];
    }
    char size[32];
    if (cli->quiet) {
        printf("%s: %d files, %s, %d failing verification\n", dir, files, human(total, size, sizeof size),
               c.failed);
    } else {
        printf("cache folder %s%s\n", dir, hn_file_exists(dir) ? "" : " (does not exist yet)");
        printf("keys hash the source and its headers, defines, options, target and compiler\n\n");
        printf("  %-34s %6s %12s\n", "kind", "files", "size");
        for (int k = 1; k < HN_CACHE_N_KINDS; k++)
            printf("  %-34s %6d %12s\n", hn_cache_kind_name(k), c.n[k], human(c.bytes[k], size, sizeof size));
        printf("  %-34s %6d %12s\n", "total", files, human(total, size, sizeof size));
        if (c.n[HN_CACHE_OTHER])
            printf("  (and %d other file%s, not the harness's: clean leaves them alone)\n", c.n[HN_CACHE_OTHER],
                   c.n[HN_CACHE_OTHER] == 1 ? "" : "s");
        printf("\nverification: %d entr%s checked (size and checksum), %d failed%s\n", c.checked,
               c.checked == 1 ? "y" : "ies", c.failed, c.failed ? " (compiled again when next needed):" : "");
        fputs(c.bad.buf, stdout);
    }
    hn_sb_free(&c.bad);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* clean */

typedef struct {
    const hn_cli *cli;
    time_t now;
    int removed, kept_tmp, others, failed;
    uint64_t freed;
} clean_ctx;

static int clean_visit(const hn_cache_file *f, void *arg) {
    clean_ctx *c = arg;
    if (f->kind == HN_CACHE_OTHER) {
        c->others++;
        return 0;
    }
    if (f->kind == HN_CACHE_TMP && !hn_cache_tmp_is_stale(f, c->now)) {
        c->kept_tmp++; /* another harness is writing it */
        return 0;
    }
    hn_err err;
    if (hn_cache_remove(f, &err) != 0) {
        fprintf(stderr, "harness cache: %s\n", err.msg);
        c->failed++;
        return 0;
    }
    c->removed++;
    c->freed += f->bytes;
    if (c->cli->verbose) printf("removed %s\n", f->path);
    return 0;
}

static int cache_clean(const hn_cli *cli, const char *dir) {
    clean_ctx c;
    memset(&c, 0, sizeof c);
    c.cli = cli;
    c.now = time(NULL);
    hn_err err;
    if (hn_cache_walk(dir, clean_visit, &c, &err) != 0) {
        fprintf(stderr, "harness cache: %s\n", err.msg);
        return 1;
    }
    if (!cli->quiet) {
        char size[32];
        printf("removed %d of the harness's files and folders from %s, freeing %s\n", c.removed, dir,
               human(c.freed, size, sizeof size));
        if (c.kept_tmp)
            printf("kept %d temporary file%s another harness is writing\n", c.kept_tmp, c.kept_tmp == 1 ? "" : "s");
        if (c.others)
            printf("left %d file%s that %s not the harness's\n", c.others, c.others == 1 ? "" : "s",
                   c.others == 1 ? "is" : "are");
    }
    return c.failed ? 1 : 0;
}

int hn_cmd_cache(const hn_cli *cli) {
    const char *action = cli->config;
    int (*fn)(const hn_cli *, const char *) = NULL;
    if (strcmp(action, "info") == 0) fn = cache_info;
    else if (strcmp(action, "clean") == 0) fn = cache_clean;
    else {
        fprintf(stderr, "harness cache: unknown action '%s' (expected info or clean)\n", action);
        return 2;
    }
    char *dir = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    int rc = fn(cli, dir);
    free(dir);
    return rc;
}
