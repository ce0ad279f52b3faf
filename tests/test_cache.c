/*
 * test_cache.c: the compile cache (harness/cache.c) and both compilers' use of
 * it: the checksum record (every kind of damage is caught, a clean entry reads
 * back), the names the harness owns in the folder, and end to end for the
 * emulator and NVRTC: an entry damaged each way (truncated keeping the ELF
 * header, emptied, overwritten with garbage, its record removed as an older
 * harness wrote it, one byte flipped) is recompiled with one warning naming
 * the file, the emulator then runs the kernel correctly (no SIGBUS), and the
 * entry after that is served from the cache. Also: a damaged module is refused
 * before dlopen, and processes compiling one key at once leave a good entry.
 * Every folder is a fresh one under HARNESS_TMP, never the user's cache.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "test_emu_common.h"

static char *base; /* this run's folder */

static char *fresh_dir(const char *name) {
    char *d = xasprintf("%s/%s", base, name);
    hn_err err;
    if (hn_mkdirs(d, &err) != 0) emu_die("mkdir", &err);
    return d;
}

static void write_text(const char *path, const char *text) {
    hn_err err;
    if (hn_write_file(path, text, strlen(text), &err) != 0) emu_die("write", &err);
}

static off_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---------------------------------------------------------------------- */
/* stderr, captured around a call */

static int saved_stderr = -1;
static char *capture_path;

static void capture_begin(void) {
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
}

/* Returns what was written to stderr since capture_begin (caller frees). */
static char *capture_end(void) {
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    char *text = NULL;
    if (hn_read_file(capture_path, &text, NULL, NULL) != 0) text = xstrdup("");
    return text;
}

static int count_lines_with(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* ---------------------------------------------------------------------- */
/* the ways an entry gets damaged */

typedef enum { CUT_KEEP_ELF, EMPTY, GARBAGE, NO_RECORD, FLIP_MIDDLE, N_DAMAGE } damage;
static const char *const damage_names[N_DAMAGE] = {"truncated keeping the ELF header", "0 bytes",
                                                   "garbage", "record removed (older harness)",
                                                   "one byte flipped in the middle"};

static void damage_file(const char *path, damage how) {
    off_t size = file_size(path);
    CHECK(size > HN_CACHE_RECORD_LEN);
    switch (how) {
    case CUT_KEEP_ELF: { /* half of it: an ELF file keeps its header (and program headers) */
        char *head = NULL;
        size_t n = 0;
        CHECK(hn_read_file(path, &head, &n, NULL) == 0);
        int elf = head && n > 4 && memcmp(head, "\x7f" "ELF", 4) == 0;
        free(head);
        CHECK(truncate(path, size / 2) == 0);
        CHECK(hn_read_file(path, &head, &n, NULL) == 0);
        CHECK(n == (size_t)(size / 2));
        if (elf) CHECK(n > 64 && memcmp(head, "\x7f" "ELF", 4) == 0);
        free(head);
        break;
    }
    case EMPTY: CHECK(truncate(path, 0) == 0); break;
    case GARBAGE: {
        char *junk = xmalloc((size_t)size);
        uint64_t s = 42;
        for (off_t i = 0; i < size; i++) junk[i] = (char)hn_splitmix64(&s);
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(junk, 1, (size_t)size, f) == (size_t)size);
        if (f) fclose(f);
        free(junk);
        break;
    }
    case NO_RECORD: CHECK(truncate(path, size - HN_CACHE_RECORD_LEN) == 0); break;
    case FLIP_MIDDLE: {
        int fd = open(path, O_RDWR);
        unsigned char c = 0;
        CHECK(pread(fd, &c, 1, size / 2) == 1);
        c ^= 0x10;
        CHECK(pwrite(fd, &c, 1, size / 2) == 1);
        close(fd);
        break;
    }
    default: break;
    }
}

/* ---------------------------------------------------------------------- */
/* the record */

static void test_record(void) {
    char *dir = fresh_dir("record");
    char *path = hn_path_join(dir, "cuda-0123456789abcdef0123456789abcdef.meta");
    char payload[1000];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (char)('a' + i % 26);
    char why[256];
    char *data = NULL;
    size_t size = 0;
    hn_err err;
    CHECK_INT(hn_cache_verify(path, &data, &size, why, sizeof why), HN_CACHE_MISSING);
    CHECK_MSG(hn_cache_write(path, payload, sizeof payload, &err) == 0, "%s", err.msg);
    CHECK_INT(file_size(path), (off_t)sizeof payload + HN_CACHE_RECORD_LEN);
    CHECK_INT(hn_cache_verify(path, &data, &size, why, sizeof why), HN_CACHE_OK);
    CHECK_INT(size, sizeof payload);
    CHECK(data && memcmp(data, payload, sizeof payload) == 0 && data[size] == '\0');
    free(data);

    static const char *const expect[N_DAMAGE] = {"no checksum record", "empty (0 bytes)", "no checksum record",
                                                 "no checksum record", "checksum mismatch"};
    for (int d = 0; d < N_DAMAGE; d++) {
        if (d == CUT_KEEP_ELF) continue; /* not an ELF file; the modules below are */
        CHECK(hn_cache_write(path, payload, sizeof payload, &err) == 0);
        damage_file(path, (damage)d);
        data = (char *)1;
        CHECK_INT(hn_cache_verify(path, &data, &size, why, sizeof why), HN_CACHE_BAD);
        CHECK(data == NULL);
        CHECK_MSG(strstr(why, expect[d]) != NULL, "%s: '%s'", damage_names[d], why);
    }
    /* A record that is intact but for another length: bytes cut from the middle. */
    CHECK(hn_cache_write(path, payload, sizeof payload, &err) == 0);
    {
        char *all = NULL;
        size_t n = 0;
        CHECK(hn_read_file(path, &all, &n, NULL) == 0);
        FILE *f = fopen(path, "wb");
        fwrite(all, 1, 100, f);
        fwrite(all + 200, 1, n - 200, f);
        fclose(f);
        free(all);
    }
    CHECK_INT(hn_cache_verify(path, NULL, NULL, why, sizeof why), HN_CACHE_BAD);
    CHECK_CONTAINS(why, "900 bytes where its record says 1000");
    /* hn_cache_verify leaves a bad file; hn_cache_load discards it (and warns). */
    CHECK(file_size(path) > 0);
    capture_begin();
    CHECK_INT(hn_cache_load(path, NULL, NULL, why, sizeof why), HN_CACHE_BAD);
    char *warned = capture_end();
    CHECK_INT(count_lines_with(warned, "harness: cache: "), 1);
    CHECK_CONTAINS(warned, path);
    CHECK_INT(file_size(path), -1);
    free(warned);
    /* A folder under an entry's name is bad, not a crash. */
    CHECK(mkdir(path, 0755) == 0);
    CHECK_INT(hn_cache_verify(path, NULL, NULL, why, sizeof why), HN_CACHE_BAD);
    CHECK_CONTAINS(why, "not a regular file");
    rmdir(path);

    /* hn_cache_commit: a tool's output becomes an entry. */
    char *tmp = hn_cache_tmp_name(path);
    CHECK_CONTAINS(tmp, ".tmp.");
    write_text(tmp, "tool output");
    CHECK_MSG(hn_cache_commit(tmp, path, &err) == 0, "%s", err.msg);
    CHECK(!hn_file_exists(tmp));
    CHECK_INT(hn_cache_verify(path, &data, &size, why, sizeof why), HN_CACHE_OK);
    CHECK_STR(data, "tool output");
    free(data);
    free(tmp);
    free(path);
    free(dir);
}

/* ---------------------------------------------------------------------- */
/* the names the harness owns */

typedef struct {
    char names[32][96];
    hn_cache_kind kinds[32];
    int n;
} seen_names;

static int remember(const hn_cache_file *f, void *arg) {
    seen_names *s = arg;
    if (s->n < 32) {
        snprintf(s->names[s->n], sizeof s->names[0], "%s", f->name);
        s->kinds[s->n++] = f->kind;
    }
    return 0;
}

static hn_cache_kind kind_of(const seen_names *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) return s->kinds[i];
    return (hn_cache_kind)-1;
}

static void test_names(void) {
    char *dir = fresh_dir("names");
    static const struct {
        const char *name;
        hn_cache_kind kind;
    } files[] = {
        {"emu-0123456789abcdef0123456789abcdef.so", HN_CACHE_EMU_SO},
        {"emu-0123456789abcdef0123456789abcdef.cc", HN_CACHE_EMU_SRC},
        {"cuda-0123456789abcdef0123456789abcdef.cubin", HN_CACHE_CUBIN},
        {"cuda-0123456789abcdef0123456789abcdef.meta", HN_CACHE_META},
        {"emu-bench-0123456789ab.cu", HN_CACHE_BENCH_SRC},
        {"emu-0123456789abcdef0123456789abcdef.so.tmp.123.4", HN_CACHE_TMP},
        {"cuda-0123456789abcdef0123456789abcdef.meta.tmp.77", HN_CACHE_TMP},
        {"emu-0123456789abcdef0123456789abcdef.cc.tmp.5.6.tmp.5", HN_CACHE_TMP},
        /* near misses: the user's */
        {"emu-0123456789abcdef0123456789abcde.so", HN_CACHE_OTHER},   /* 31 digits */
        {"emu-0123456789ABCDEF0123456789abcdef.so", HN_CACHE_OTHER},  /* upper case */
        {"emu-notes.so", HN_CACHE_OTHER},
        {"cuda-0123456789abcdef0123456789abcdef.cubin.bak", HN_CACHE_OTHER},
        {"emu-0123456789abcdef0123456789abcdef.so.tmp.x", HN_CACHE_OTHER},
        {"notes.tmp.123", HN_CACHE_OTHER},
        {"README.md", HN_CACHE_OTHER},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(files); i++) {
        char *p = hn_path_join(dir, files[i].name);
        write_text(p, "x");
        free(p);
    }
    char *shim = hn_path_join(dir, "emu-shim-0123456789abcdef");
    char *shim_file = hn_path_join(shim, "sub/hn_emu.h");
    char *shim_sub = hn_dirname(shim_file);
    CHECK(hn_mkdirs(shim_sub, NULL) == 0);
    write_text(shim_file, "12345");
    char *user_dir = hn_path_join(dir, "emu-shim-mine"); /* not 16 hex digits */
    CHECK(hn_mkdirs(user_dir, NULL) == 0);
    char *link = hn_path_join(dir, "emu-fedcba9876543210fedcba9876543210.so");
    CHECK(symlink("README.md", link) == 0);

    seen_names s = {.n = 0};
    hn_err err;
    CHECK(hn_cache_walk(dir, remember, &s, &err) == 0);
    for (size_t i = 0; i < HN_ARRAY_LEN(files); i++)
        CHECK_MSG(kind_of(&s, files[i].name) == files[i].kind, "%s: kind %d, expected %d", files[i].name,
                  (int)kind_of(&s, files[i].name), (int)files[i].kind);
    CHECK_INT(kind_of(&s, "emu-shim-0123456789abcdef"), HN_CACHE_SHIM);
    CHECK_INT(kind_of(&s, "emu-shim-mine"), HN_CACHE_OTHER);
    CHECK_INT(kind_of(&s, "emu-fedcba9876543210fedcba9876543210.so"), HN_CACHE_OTHER); /* a link */
    /* sorted */
    for (int i = 1; i < s.n; i++) CHECK(strcmp(s.names[i - 1], s.names[i]) < 0);

    /* removing: never the user's; a shim folder with what is under it */
    hn_cache_file other = {.name = "README.md", .kind = HN_CACHE_OTHER};
    char *readme = hn_path_join(dir, "README.md");
    other.path = readme;
    CHECK(hn_cache_remove(&other, &err) != 0);
    CHECK(hn_file_exists(readme));
    hn_cache_file sf = {.name = "emu-shim-0123456789abcdef", .path = shim, .kind = HN_CACHE_SHIM, .is_dir = 1};
    CHECK_MSG(hn_cache_remove(&sf, &err) == 0, "%s", err.msg);
    CHECK(!hn_file_exists(shim));
    CHECK(hn_file_exists(readme));

    /* staleness of temporaries */
    time_t now = time(NULL);
    hn_cache_file t = {.kind = HN_CACHE_TMP, .pid = (long)getpid(), .mtime = now};
    CHECK(!hn_cache_tmp_is_stale(&t, now));        /* a live writer, fresh */
    t.mtime = now - 7200;
    CHECK(hn_cache_tmp_is_stale(&t, now));         /* two hours old */
    pid_t gone = fork();
    if (gone == 0) _exit(0);
    waitpid(gone, NULL, 0);
    t.pid = gone;
    t.mtime = now - 120;
    CHECK(hn_cache_tmp_is_stale(&t, now));         /* its writer is gone */
    t.mtime = now - 5;
    CHECK(!hn_cache_tmp_is_stale(&t, now));        /* just written: give it a minute */

    /* a folder that does not exist has no names */
    char *none = hn_path_join(dir, "does-not-exist");
    s.n = 0;
    CHECK(hn_cache_walk(none, remember, &s, &err) == 0);
    CHECK_INT(s.n, 0);
    free(none);
    free(readme);
    free(link);
    free(user_dir);
    free(shim_sub);
    free(shim_file);
    free(shim);
    free(dir);
}

/* ---------------------------------------------------------------------- */
/* the emulator */

static char *emu_src;
static const char *const emu_kernels[] = {"answer"};

static int emu_compile_in(const char *cache, int answer, hn_module_image *img, hn_err *err) {
    char def[32];
    snprintf(def, sizeof def, "ANSWER=%d", answer);
    const char *defs[] = {def};
    hn_compile_req req = {.src_path = emu_src, .defines = defs, .n_defines = 1, .kernels = emu_kernels,
                          .n_kernels = 1, .cache_dir = cache};
    char *log = NULL;
    int rc = hn_compile_emu(&req, img, &log, err);
    free(log);
    return rc;
}

/* Loads img's kernel and checks that it writes answer + i into out[i]. */
static void check_runs(hn_backend *be, const hn_module_image *img, int answer, const char *what) {
    hn_kernel *k = NULL;
    hn_err err;
    if (be->ops->kernel_load(be, img, 0, &k, &err) != 0) {
        CHECK_MSG(0, "%s: kernel_load: %s", what, err.msg);
        return;
    }
    hn_dptr d_out = emu_buf(be, NULL, 32 * sizeof(int));
    void *args[] = {&d_out};
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, 32, 1, 1, 0, args, &err) == 0, "%s: %s", what, err.msg);
    int out[32];
    emu_get(be, out, d_out, sizeof out);
    int bad = 0;
    for (int i = 0; i < 32; i++) bad += out[i] != answer + i;
    CHECK_MSG(bad == 0, "%s: %d wrong values", what, bad);
    be->ops->free(be, d_out);
    be->ops->kernel_free(be, k);
}

static void test_emu_damage(hn_backend *be) {
    char *cache = fresh_dir("emu-cache");
    hn_err err;
    for (int d = 0; d < N_DAMAGE; d++) {
        /* A key of its own for each kind of damage: a module this process has
         * loaded stays mapped, and its file is damaged in place below. */
        int answer = 100 * (d + 1);
        hn_module_image a, b, c;
        CHECK_MSG(emu_compile_in(cache, answer, &a, &err) == 0, "%s", err.msg);
        CHECK_INT(a.from_cache, 0);
        CHECK(a.cache_bad == NULL);
        char why[256];
        CHECK_INT(hn_cache_verify(a.path, NULL, NULL, why, sizeof why), HN_CACHE_OK);
        damage_file(a.path, (damage)d);
        CHECK_MSG(hn_cache_verify(a.path, NULL, NULL, why, sizeof why) == HN_CACHE_BAD, "%s: still verifies",
                  damage_names[d]);

        capture_begin();
        int rc = emu_compile_in(cache, answer, &b, &err);
        char *warned = capture_end();
        CHECK_MSG(rc == 0, "%s: %s", damage_names[d], err.msg);
        CHECK_MSG(b.from_cache == 0, "%s: served from the cache", damage_names[d]);
        CHECK_MSG(b.cache_bad && strstr(b.cache_bad, a.path), "%s: cache_bad '%s'", damage_names[d],
                  b.cache_bad ? b.cache_bad : "(null)");
        CHECK_MSG(count_lines_with(warned, "harness: cache: ") == 1, "%s: warnings: %s", damage_names[d], warned);
        CHECK_CONTAINS(warned, a.path);
        free(warned);
        CHECK_INT(hn_cache_verify(b.path, NULL, NULL, why, sizeof why), HN_CACHE_OK);
        if (rc == 0) check_runs(be, &b, answer, damage_names[d]);

        /* Repaired: the next compile is served from the cache, silently. */
        capture_begin();
        rc = emu_compile_in(cache, answer, &c, &err);
        warned = capture_end();
        CHECK_INT(rc, 0);
        CHECK_INT(c.from_cache, 1);
        CHECK(c.cache_bad == NULL);
        CHECK_STR(warned, "");
        free(warned);
        hn_module_image_free(&a);
        hn_module_image_free(&b);
        hn_module_image_free(&c);
    }
    free(cache);
}

/* A module damaged between compile and load is refused before dlopen. */
static void test_emu_load_guard(hn_backend *be) {
    char *cache = fresh_dir("emu-guard");
    hn_module_image img;
    hn_err err;
    CHECK_MSG(emu_compile_in(cache, 7, &img, &err) == 0, "%s", err.msg);
    damage_file(img.path, CUT_KEEP_ELF);
    hn_kernel *k = NULL;
    CHECK(be->ops->kernel_load(be, &img, 0, &k, &err) != 0);
    CHECK(k == NULL);
    CHECK_CONTAINS(err.msg, img.path);
    CHECK_CONTAINS(err.msg, "no checksum record");
    hn_module_image_free(&img);
    free(cache);
}

/* Processes compiling one key at once each finish, and leave one good entry. */
static void test_emu_concurrent(void) {
    char *cache = fresh_dir("emu-race");
    enum { N = 3 };
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            hn_module_image img;
            hn_err err;
            int rc = emu_compile_in(cache, 5, &img, &err);
            char why[256];
            int ok = rc == 0 && hn_cache_verify(img.path, NULL, NULL, why, sizeof why) == HN_CACHE_OK;
            _exit(ok ? 0 : 1);
        }
    }
    for (int i = 0; i < N; i++) {
        int st = 0;
        waitpid(pids[i], &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "compile %d: status %d", i, st);
    }
    hn_module_image img;
    hn_err err;
    CHECK_MSG(emu_compile_in(cache, 5, &img, &err) == 0, "%s", err.msg);
    CHECK_INT(img.from_cache, 1);
    hn_module_image_free(&img);
    /* no temporaries left behind */
    seen_names s = {.n = 0};
    CHECK(hn_cache_walk(cache, remember, &s, &err) == 0);
    for (int i = 0; i < s.n; i++) CHECK_MSG(s.kinds[i] != HN_CACHE_TMP, "left %s", s.names[i]);
    free(cache);
}

/* ---------------------------------------------------------------------- */
/* NVRTC (no GPU needed) */

static void test_cuda_damage(void) {
    char *cache = fresh_dir("cuda-cache");
    char *src = xasprintf("%s/scale.cu", base);
    write_text(src, "template <int N> __global__ void scale(float *x) { x[threadIdx.x] *= N; }\n");
    const char *kernels[] = {"scale<3>"};
    hn_compile_req req = {.src_path = src, .kernels = kernels, .n_kernels = 1, .arch = "sm_90", .cache_dir = cache};
    hn_module_image first;
    hn_err err;
    if (hn_compile_cuda(&req, &first, NULL, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        free(src);
        free(cache);
        return;
    }
    CHECK_INT(first.from_cache, 0);
    char *cubin = xasprintf("%s/cuda-%s.cubin", cache, first.key);
    char *meta = xasprintf("%s/cuda-%s.meta", cache, first.key);
    CHECK_STR(first.path, cubin);

    /* every damage to the .cubin, then to the .meta, then the .meta gone */
    for (int target = 0; target < 3; target++) {
        for (int d = 0; d < N_DAMAGE; d++) {
            if (target == 2 && d > 0) break;
            const char *path = target == 0 ? cubin : meta;
            char what[128];
            if (target == 2) {
                CHECK(unlink(meta) == 0);
                snprintf(what, sizeof what, ".meta deleted");
            } else {
                damage_file(path, (damage)d);
                snprintf(what, sizeof what, "%s %s", target == 0 ? ".cubin" : ".meta", damage_names[d]);
            }
            hn_module_image img;
            capture_begin();
            int rc = hn_compile_cuda(&req, &img, NULL, &err);
            char *warned = capture_end();
            CHECK_MSG(rc == 0, "%s: %s", what, err.msg);
            if (rc != 0) {
                free(warned);
                continue;
            }
            CHECK_MSG(img.from_cache == 0, "%s: served from the cache", what);
            CHECK_MSG(img.cache_bad && strstr(img.cache_bad, path), "%s: cache_bad '%s'", what,
                      img.cache_bad ? img.cache_bad : "(null)");
            CHECK_MSG(count_lines_with(warned, "harness: cache: ") == 1, "%s: warnings: %s", what, warned);
            CHECK_CONTAINS(warned, path);
            CHECK(img.image_size == first.image_size && memcmp(img.image, first.image, img.image_size) == 0);
            CHECK_STR(img.lowered[0], first.lowered[0]);
            CHECK_INT(img.res[0].registers, first.res[0].registers);
            free(warned);
            hn_module_image_free(&img);
            /* repaired: served from the cache with the same bytes */
            hn_module_image again;
            CHECK(hn_compile_cuda(&req, &again, NULL, &err) == 0);
            CHECK_MSG(again.from_cache == 1, "%s: not cached after the repair", what);
            CHECK(again.cache_bad == NULL);
            CHECK(again.image_size == first.image_size &&
                  memcmp(again.image, first.image, again.image_size) == 0);
            hn_module_image_free(&again);
        }
    }
    hn_module_image_free(&first);
    free(cubin);
    free(meta);
    free(src);
    free(cache);
}

/* ---------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int main(void) {
    const char *t = getenv("HARNESS_TMP");
    base = xasprintf("%s/cache-test.%d", t && *t ? t : "/tmp", (int)getpid());
    hn_err err;
    if (hn_mkdirs(base, &err) != 0) emu_die("mkdir", &err);
    capture_path = xasprintf("%s/stderr.txt", base);
    emu_src = xasprintf("%s/answer.cu", base);
    write_text(emu_src, "__global__ void answer(int *out) { out[threadIdx.x] = ANSWER + (int)threadIdx.x; }\n");

    test_record();
    test_names();
    test_emu_concurrent(); /* forks: before any backend has threads */
    test_cuda_damage();
    hn_backend *be = emu_backend(1, 10);
    test_emu_damage(be);
    test_emu_load_guard(be);
    hn_backend_destroy(be);

    nftw(base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(emu_src);
    free(capture_path);
    free(base);
    return hn_test_exit();
}
