/* util.c: see util.h. */
#define _GNU_SOURCE
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int hn_errf(hn_err *err, const char *fmt, ...) {
    if (err) {
        err->kind = HN_ERR_OTHER;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *hn_excerpt(const char *text, char *buf, size_t size) {
    size_t len = strlen(text);
    if (len < size) {
        memcpy(buf, text, len + 1);
    } else if (size > 3) {
        memcpy(buf, text, size - 4);
        memcpy(buf + size - 4, "...", 4);
    } else if (size) {
        buf[0] = '\0';
    }
    return buf;
}

int hn_err_kind(hn_err *err, int kind) {
    if (err) err->kind = kind;
    return -1;
}

int hn_err_prefix(hn_err *err, const char *fmt, ...) {
    if (!err) return -1;
    hn_sb sb;
    hn_sb_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    hn_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    hn_sb_adds(&sb, ": ");
    hn_sb_adds(&sb, err->msg);
    size_t n = sb.len < sizeof err->msg - 1 ? sb.len : sizeof err->msg - 1;
    memcpy(err->msg, sb.buf, n);
    err->msg[n] = '\0';
    hn_sb_free(&sb);
    return -1;
}

static void oom(size_t n) {
    fprintf(stderr, "harness: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *xstrdup(const char *s) {
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n) {
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...) {
    hn_sb sb;
    hn_sb_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    hn_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    return hn_sb_detach(&sb);
}

/* ---------------------------------------------------------------------- */
/* string buffer */

void hn_sb_init(hn_sb *sb) {
    sb->cap = 64;
    sb->len = 0;
    sb->buf = xmalloc(sb->cap);
    sb->buf[0] = '\0';
}

void hn_sb_free(hn_sb *sb) {
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

void hn_sb_reset(hn_sb *sb) {
    sb->len = 0;
    sb->buf[0] = '\0';
}

void hn_sb_grow(hn_sb *sb, size_t extra) {
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < sb->len + extra + 1) cap *= 2;
    sb->buf = xrealloc(sb->buf, cap);
    sb->cap = cap;
}

void hn_sb_add(hn_sb *sb, const void *data, size_t n) {
    hn_sb_grow(sb, n);
    memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void hn_sb_adds(hn_sb *sb, const char *s) {
    hn_sb_add(sb, s, strlen(s));
}

void hn_sb_addc(hn_sb *sb, char c) {
    hn_sb_add(sb, &c, 1);
}

void hn_sb_vaddf(hn_sb *sb, const char *fmt, va_list ap) {
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, cp);
    va_end(cp);
    if (n < 0) return;
    if ((size_t)n >= sb->cap - sb->len) {
        hn_sb_grow(sb, (size_t)n);
        vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
    }
    sb->len += (size_t)n;
}

void hn_sb_addf(hn_sb *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hn_sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

char *hn_sb_detach(hn_sb *sb) {
    char *p = sb->buf;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return p;
}

/* ---------------------------------------------------------------------- */
/* files */

/* The most read from a file that is not a regular one (a pipe, a device): a
 * config or journal given as /dev/zero or /dev/urandom would otherwise be read
 * until the memory runs out. */
#define HN_READ_MAX_NONREGULAR ((size_t)64 << 20)

int hn_read_file(const char *path, char **data, size_t *size, hn_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return hn_errf(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int have_st = fstat(fileno(f), &st) == 0, regular = have_st && S_ISREG(st.st_mode);
    if (have_st && S_ISDIR(st.st_mode)) {
        fclose(f);
        return hn_errf(err, "%s: is a folder, not a file", path);
    }
    hn_sb sb;
    hn_sb_init(&sb);
    char chunk[65536];
    size_t n;
    int too_long = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        hn_sb_add(&sb, chunk, n);
        if (!regular && sb.len > HN_READ_MAX_NONREGULAR) {
            too_long = 1;
            break;
        }
    }
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (too_long) {
        hn_sb_free(&sb);
        return hn_errf(err, "%s: not a regular file, and it gives more than %zu MiB (a device such as /dev/zero?)",
                       path, HN_READ_MAX_NONREGULAR >> 20);
    }
    if (bad) {
        hn_sb_free(&sb);
        return hn_errf(err, "%s: read error: %s", path, strerror(e));
    }
    if (size) *size = sb.len;
    *data = hn_sb_detach(&sb);
    return 0;
}

int hn_write_file(const char *path, const void *data, size_t size, hn_err *err) {
    char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        hn_errf(err, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        hn_errf(err, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int hn_check_appendable(const char *path, hn_err *err) {
    char *dir = hn_dirname(path);
    int rc = hn_mkdirs(dir, err);
    free(dir);
    if (rc != 0) return -1;
    FILE *f = fopen(path, "a");
    if (!f) return hn_errf(err, "%s: cannot append: %s", path, strerror(errno));
    fclose(f);
    return 0;
}

char *hn_mkdtemp(const char *prefix, hn_err *err) {
    const char *tmp = getenv("TMPDIR");
    char *tmpl = xasprintf("%s/%sXXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp(tmpl)) {
        hn_errf(err, "cannot create a temporary folder %s: %s", tmpl, strerror(errno));
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

/* mkdir(p), or p is a folder already (EEXIST alone does not say so: a file of
 * that name is not one); errors name path, the folder asked for. */
static int mkdir_one(const char *p, const char *path, hn_err *err) {
    if (mkdir(p, 0777) == 0) return 0;
    const int e = errno;
    struct stat st;
    if (e == EEXIST && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    if (e == EEXIST) return hn_errf(err, "%s: cannot create folder: %s is a file, not a folder", path, p);
    if (strcmp(p, path) != 0) return hn_errf(err, "%s: cannot create folder: %s: %s", path, p, strerror(e));
    return hn_errf(err, "%s: cannot create folder: %s", path, strerror(e));
}

int hn_mkdirs(const char *path, hn_err *err) {
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; *s && rc == 0; s++) {
        if (*s != '/') continue;
        *s = '\0';
        rc = mkdir_one(p, path, err);
        *s = '/';
    }
    if (rc == 0) rc = mkdir_one(p, path, err);
    free(p);
    return rc;
}

int hn_file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

int hn_unlink_regular(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return -1;
    if (!S_ISREG(st.st_mode)) {
        errno = EPERM;
        return -1;
    }
    return unlink(path);
}

int hn_file_is_json(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int ch;
    while ((ch = fgetc(f)) != EOF && (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')) {}
    fclose(f);
    return ch == '{';
}

char *hn_dirname(const char *path) {
    const char *slash = strrchr(path, '/');
    if (!slash) return xstrdup(".");
    if (slash == path) return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

char *hn_stem(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot != base ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
}

char *hn_path_join(const char *dir, const char *rel) {
    if (rel[0] == '/' || !dir || !dir[0] || strcmp(dir, ".") == 0) return xstrdup(rel);
    return xasprintf("%s/%s", dir, rel);
}

/* ---------------------------------------------------------------------- */
/* hashing: two FNV-1a lanes with different offsets and a final avalanche */

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

void hn_hash_init(hn_hash *h) {
    h->a = 0xcbf29ce484222325ULL;
    h->b = 0x84222325cbf29ce4ULL;
}

void hn_hash_add(hn_hash *h, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t a = h->a, b = h->b;
    for (size_t i = 0; i < n; i++) {
        a = (a ^ p[i]) * 0x100000001b3ULL;
        b = (b ^ p[i]) * 0x00000100000001b3ULL + 0x9e3779b97f4a7c15ULL;
    }
    h->a = a;
    h->b = b;
}

void hn_hash_adds(hn_hash *h, const char *s) {
    uint64_t n = s ? strlen(s) : UINT64_MAX;
    hn_hash_add(h, &n, sizeof n);
    if (s) hn_hash_add(h, s, strlen(s));
}

void hn_hash_hex(const hn_hash *h, char out[33]) {
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)mix64(h->a ^ mix64(h->b)),
             (unsigned long long)mix64(h->b + 0x632be59bd9b4e019ULL));
}

/* ---------------------------------------------------------------------- */

double hn_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t hn_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double hn_rand_unit(uint64_t *state) {
    return (double)(hn_splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

uint64_t hn_rand_below(uint64_t *state, uint64_t n) {
    /* Rejection sampling keeps the result unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = hn_splitmix64(state);
    while (x >= limit);
    return x % n;
}

extern char **environ;

int hn_spawn(char *const argv[], int flags, hn_sb *output, hn_err *err) {
    if (!output) flags = 0;
    int fds[2] = {-1, -1};
    if (flags && pipe2(fds, O_CLOEXEC) != 0) return hn_errf(err, "pipe: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    for (int fd = 1; fd <= 2; fd++) {
        if (flags & fd) posix_spawn_file_actions_adddup2(&fa, fds[1], fd);
        else posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_WRONLY, 0);
    }
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (flags) close(fds[1]);
    if (rc != 0) {
        if (flags) close(fds[0]);
        return hn_errf(err, "cannot run %s: %s", argv[0], strerror(rc));
    }
    if (flags) {
        char buf[4096];
        for (;;) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n > 0) hn_sb_add(output, buf, (size_t)n);
            else if (n == 0 || errno != EINTR) break;
        }
        close(fds[0]);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return hn_errf(err, "waitpid: %s", strerror(errno));
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int hn_cpu_count(void) {
    /* the CPUs this process may run on (a batch system's allocation, taskset),
     * else the machine's */
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

char *hn_trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* One whole number >= 0 at *p (digits only), advancing *p; -1 when none. */
static int64_t case_number(const char **p) {
    if (**p < '0' || **p > '9') return -1;
    int64_t v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        if (v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

int hn_case_list_parse(const char *spec, int64_t n_cases, unsigned char *mask, int64_t *first, int64_t *count,
                       hn_err *err) {
    if (first) *first = -1;
    if (count) *count = 0;
    if (!spec || !*spec) return hn_errf(err, "--case: an empty list (give ids such as 3 or 0,5-8)");
    int64_t n = 0, lowest = -1;
    const char *p = spec;
    for (;;) {
        const char *tok = p;
        int64_t a = case_number(&p), b = a;
        if (a >= 0 && *p == '-') {
            p++;
            b = case_number(&p);
        }
        size_t len = strcspn(tok, ",");
        if (a < 0 || b < 0 || (*p && *p != ',') || b < a)
            return hn_errf(err, "--case: '%.*s' in '%s' is not a case id or a range A-B with A <= B (ids are whole "
                           "numbers >= 0, separated by commas)", (int)len, tok, spec);
        if (n_cases >= 0 && b >= n_cases)
            return hn_errf(err, "--case %.*s: the plan has %lld cases (0 to %lld)", (int)len, tok, (long long)n_cases,
                           (long long)n_cases - 1);
        if (lowest < 0 || a < lowest) lowest = a;
        if (mask) {
            for (int64_t c = a; c <= b; c++) n += !mask[c], mask[c] = 1;
        } else {
            n += b - a + 1; /* an upper bound when ranges overlap */
        }
        if (!*p) break;
        p++;
    }
    if (first) *first = lowest;
    if (count) *count = n;
    return 0;
}
