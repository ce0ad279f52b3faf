/*
 * cache.c: cache entries with a checksum record, their verification, and the
 * names the harness writes in the cache folder (format and contract in
 * cache.h).
 */
#define _GNU_SOURCE
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_MAGIC "\nharness-cache-v1 "

/* ---------------------------------------------------------------------- */
/* the record */

static void format_record(char out[HN_CACHE_RECORD_LEN + 1], uint64_t size, const hn_hash *h) {
    char hex[33];
    hn_hash_hex(h, hex);
    snprintf(out, HN_CACHE_RECORD_LEN + 1, "%s%020llu %s\n", RECORD_MAGIC, (unsigned long long)size, hex);
}

/* Parses rec (HN_CACHE_RECORD_LEN bytes); 0 when it is a record. */
static int parse_record(const char *rec, uint64_t *size, char hex[33]) {
    size_t m = strlen(RECORD_MAGIC);
    if (memcmp(rec, RECORD_MAGIC, m) != 0) return -1;
    const char *p = rec + m;
    uint64_t v = 0;
    for (int i = 0; i < 20; i++, p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (*p++ != ' ') return -1;
    for (int i = 0; i < 32; i++) {
        char c = p[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return -1;
        hex[i] = c;
    }
    hex[32] = '\0';
    if (p[32] != '\n') return -1;
    *size = v;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* writing */

static atomic_uint tmp_counter;

char *hn_cache_tmp_name(const char *path) {
    return xasprintf("%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
}

static int write_all(int fd, const void *data, size_t n) {
    const char *p = data;
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Closes a written temporary entry and renames it over `path` (atomic: a
 * reader sees the old entry or the whole new one); on any failure, the first
 * errno (`e` when !ok) is reported and the temporary removed. */
static int finish_entry(int fd, int ok, int e, const char *tmp, const char *path, hn_err *err) {
    if (close(fd) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        hn_errf(err, "%s: cannot write: %s", path, strerror(e));
        unlink(tmp);
    }
    return ok ? 0 : -1;
}

int hn_cache_write(const char *path, const void *data, size_t size, hn_err *err) {
    char *tmp = hn_cache_tmp_name(path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        hn_errf(err, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_add(&h, data, size);
    char rec[HN_CACHE_RECORD_LEN + 1];
    format_record(rec, size, &h);
    int ok = write_all(fd, data, size) == 0 && write_all(fd, rec, HN_CACHE_RECORD_LEN) == 0;
    int rc = finish_entry(fd, ok, errno, tmp, path, err);
    free(tmp);
    return rc;
}

int hn_cache_commit(const char *tmp, const char *path, hn_err *err) {
    int fd = open(tmp, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        hn_errf(err, "%s: cannot open: %s", tmp, strerror(errno));
        unlink(tmp);
        return -1;
    }
    hn_hash h;
    hn_hash_init(&h);
    uint64_t size = 0;
    char *chunk = xmalloc(1 << 16);
    ssize_t k;
    while ((k = read(fd, chunk, 1 << 16)) != 0) {
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) break;
        hn_hash_add(&h, chunk, (size_t)k);
        size += (uint64_t)k;
    }
    free(chunk);
    int e = errno;
    int ok = k == 0;
    if (ok) {
        char rec[HN_CACHE_RECORD_LEN + 1];
        format_record(rec, size, &h);
        ok = write_all(fd, rec, HN_CACHE_RECORD_LEN) == 0; /* at the end: the reads got there */
        e = errno;
    }
    return finish_entry(fd, ok, e, tmp, path, err);
}

/* ---------------------------------------------------------------------- */
/* verifying */

/* hn_cache_verify, also giving the identity of the file that was read (when
 * it could be opened). */
static int verify(const char *path, char **data, size_t *size, char *why, size_t why_size,
                  struct stat *st) {
    if (data) *data = NULL;
    if (size) *size = 0;
    if (why_size) why[0] = '\0';
    memset(st, 0, sizeof *st);
    /* O_NONBLOCK: a FIFO under an entry's name must not hang the run. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return HN_CACHE_MISSING;
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return HN_CACHE_BAD;
    }
    int rc = HN_CACHE_BAD;
    char *buf = NULL;
    if (fstat(fd, st) != 0) {
        snprintf(why, why_size, "cannot stat: %s", strerror(errno));
        memset(st, 0, sizeof *st);
        goto done;
    }
    if (!S_ISREG(st->st_mode)) {
        snprintf(why, why_size, "not a regular file");
        goto done;
    }
    uint64_t file_size = (uint64_t)st->st_size;
    if (file_size == 0) {
        snprintf(why, why_size, "empty (0 bytes)");
        goto done;
    }
    if (file_size < HN_CACHE_RECORD_LEN) {
        snprintf(why, why_size,
                 "%llu bytes, too short for its checksum record (truncated, or written by an older "
                 "harness)",
                 (unsigned long long)file_size);
        goto done;
    }
    buf = xmalloc((size_t)file_size + 1);
    size_t got = 0;
    while (got < file_size) {
        ssize_t k = read(fd, buf + got, (size_t)file_size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            snprintf(why, why_size, "cannot read: %s", strerror(errno));
            goto done;
        }
        if (k == 0) break;
        got += (size_t)k;
    }
    if (got != file_size) {
        snprintf(why, why_size, "changed size while being read (%zu of %llu bytes)", got,
                 (unsigned long long)file_size);
        goto done;
    }
    size_t payload = (size_t)file_size - HN_CACHE_RECORD_LEN;
    uint64_t recorded;
    char want[33], have[33];
    if (parse_record(buf + payload, &recorded, want) != 0) {
        snprintf(why, why_size,
                 "no checksum record at its end (truncated, overwritten, or written by an older "
                 "harness)");
        goto done;
    }
    if (recorded != payload) {
        snprintf(why, why_size, "%zu bytes where its record says %llu (bytes cut or inserted)", payload,
                 (unsigned long long)recorded);
        goto done;
    }
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_add(&h, buf, payload);
    hn_hash_hex(&h, have);
    if (strcmp(have, want) != 0) {
        snprintf(why, why_size, "checksum mismatch (its bytes changed after it was written)");
        goto done;
    }
    buf[payload] = '\0';
    if (data) {
        *data = buf;
        buf = NULL;
    }
    if (size) *size = payload;
    rc = HN_CACHE_OK;
done:
    free(buf);
    close(fd);
    return rc;
}

int hn_cache_verify(const char *path, char **data, size_t *size, char *why, size_t why_size) {
    struct stat st;
    return verify(path, data, size, why, why_size, &st);
}

static void warn(const char *path, const char *why) {
    fprintf(stderr, "harness: cache: %s: %s; discarded, compiling again\n", path, why);
}

void hn_cache_discard(const char *path, const char *why) {
    warn(path, why);
    unlink(path);
}

int hn_cache_load(const char *path, char **data, size_t *size, char *why, size_t why_size) {
    struct stat st;
    int rc = verify(path, data, size, why, why_size, &st);
    if (rc != HN_CACHE_BAD) return rc;
    warn(path, why);
    /* Another process may have compiled it again and renamed a good entry
     * into place since: remove only the file that was read. */
    struct stat now;
    if (st.st_ino && lstat(path, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino)
        unlink(path);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* the names the harness writes */

static const char *const kind_names[HN_CACHE_N_KINDS] = {
    [HN_CACHE_OTHER] = "other files (not the harness's)",
    [HN_CACHE_EMU_SO] = "emu modules (.so)",
    [HN_CACHE_CUBIN] = "cuda images (.cubin)",
    [HN_CACHE_META] = "cuda metadata (.meta)",
    [HN_CACHE_EMU_SRC] = "emu generated sources (.cc)",
    [HN_CACHE_BENCH_SRC] = "bench kernels (.cu)",
    [HN_CACHE_SHIM] = "emu shim folders",
    [HN_CACHE_TMP] = "temporary files",
};

const char *hn_cache_kind_name(hn_cache_kind kind) {
    return (unsigned)kind < HN_CACHE_N_KINDS ? kind_names[kind] : "?";
}

int hn_cache_kind_has_record(hn_cache_kind kind) {
    return kind == HN_CACHE_EMU_SO || kind == HN_CACHE_CUBIN || kind == HN_CACHE_META;
}

/* Whether s[0..n) is exactly n lowercase hex digits. */
static int is_hex(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

/* prefix + n hex digits + suffix, exactly. */
static int matches(const char *name, size_t len, const char *prefix, size_t n_hex, const char *suffix) {
    size_t p = strlen(prefix), s = strlen(suffix);
    return len == p + n_hex + s && strncmp(name, prefix, p) == 0 && is_hex(name + p, n_hex) &&
           strncmp(name + p + n_hex, suffix, s) == 0;
}

static hn_cache_kind file_kind(const char *name, size_t len) {
    if (matches(name, len, "emu-", 32, ".so")) return HN_CACHE_EMU_SO;
    if (matches(name, len, "emu-", 32, ".cc")) return HN_CACHE_EMU_SRC;
    if (matches(name, len, "cuda-", 32, ".cubin")) return HN_CACHE_CUBIN;
    if (matches(name, len, "cuda-", 32, ".meta")) return HN_CACHE_META;
    if (matches(name, len, "emu-bench-", 12, ".cu")) return HN_CACHE_BENCH_SRC;
    return HN_CACHE_OTHER;
}

/* The kind of a temporary "<entry>.tmp.<pid>[.<n>]", its pid in *pid. */
static hn_cache_kind tmp_kind(const char *name, long *pid) {
    const char *t = strstr(name, ".tmp.");
    if (!t || file_kind(name, (size_t)(t - name)) == HN_CACHE_OTHER) return HN_CACHE_OTHER;
    /* ".tmp.<pid>[.<n>]", possibly more than once (a temporary of a temporary). */
    long first = -1;
    for (const char *p = t; *p;) {
        if (strncmp(p, ".tmp.", 5) != 0) return HN_CACHE_OTHER;
        p += 5;
        if (*p < '0' || *p > '9') return HN_CACHE_OTHER;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno) return HN_CACHE_OTHER;
        if (first < 0) first = v;
        p = end;
        if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
            p++;
            while (*p >= '0' && *p <= '9') p++;
        }
    }
    *pid = first;
    return HN_CACHE_TMP;
}

/* Bytes of the regular files under the folder dirfd/name (never following links). */
static uint64_t tree_bytes(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint64_t total = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) total += tree_bytes(fd, e->d_name);
        else if (S_ISREG(st.st_mode)) total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int hn_cache_walk(const char *dir, int (*fn)(const hn_cache_file *f, void *ctx), void *ctx,
                  hn_err *err) {
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        return hn_errf(err, "%s: cannot read the folder: %s", dir, strerror(errno));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(e->d_name);
    }
    if (n) qsort(names, n, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct stat st;
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone meanwhile */
        hn_cache_file f = {.name = names[i], .mtime = st.st_mtime};
        char *path = hn_path_join(dir, names[i]);
        f.path = path;
        f.is_dir = S_ISDIR(st.st_mode);
        if (S_ISREG(st.st_mode)) {
            f.bytes = (uint64_t)st.st_size;
            f.kind = file_kind(names[i], strlen(names[i]));
            if (f.kind == HN_CACHE_OTHER) f.kind = tmp_kind(names[i], &f.pid);
        } else if (f.is_dir && matches(names[i], strlen(names[i]), "emu-shim-", 16, "")) {
            f.kind = HN_CACHE_SHIM;
            f.bytes = tree_bytes(dirfd(d), names[i]);
        }
        rc = fn(&f, ctx);
        free(path);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    closedir(d);
    return rc;
}

int hn_cache_tmp_is_stale(const hn_cache_file *f, time_t now) {
    if (f->kind != HN_CACHE_TMP) return 0;
    double age = difftime(now, f->mtime);
    if (age >= 3600) return 1;
    return age >= 60 && f->pid > 0 && kill((pid_t)f->pid, 0) != 0 && errno == ESRCH;
}

/* Removes everything under the folder dirfd/name, then the folder. */
static int remove_tree(int dirfd, const char *name) {
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (remove_tree(fd, e->d_name) != 0) rc = -1;
        } else if (unlinkat(fd, e->d_name, 0) != 0 && errno != ENOENT) {
            rc = -1;
        }
    }
    closedir(d);
    if (unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) rc = -1;
    return rc;
}

int hn_cache_remove(const hn_cache_file *f, hn_err *err) {
    if (f->kind == HN_CACHE_OTHER) return hn_errf(err, "%s: not a file of the harness's cache", f->path);
    if (f->kind == HN_CACHE_SHIM) {
        if (remove_tree(AT_FDCWD, f->path) != 0)
            return hn_errf(err, "%s: cannot remove: %s", f->path, strerror(errno));
        return 0;
    }
    if (unlink(f->path) != 0 && errno != ENOENT)
        return hn_errf(err, "%s: cannot remove: %s", f->path, strerror(errno));
    return 0;
}
