/*
 * test_emu_common.h: helpers shared by the emulator's tests (test_emu_*.c):
 * paths of the test kernels, compiling, a backend, buffers and launches that
 * abort the test on setup errors. Uses hn_compile_emu and hn_backend_emu_create
 * directly (no config, no sweep).
 */
#ifndef TEST_EMU_COMMON_H
#define TEST_EMU_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compile.h"
#include "hn_test.h"
#include "util.h"

static inline void emu_die(const char *what, const hn_err *err) {
    fprintf(stderr, "setup failed: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static inline const char *emu_root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r && *r ? r : ".";
}

/* tests/kernels/emu/<name> under the source tree; caller frees. */
static inline char *emu_kernel_path(const char *name) {
    return xasprintf("%s/tests/kernels/emu/%s", emu_root(), name);
}

/* The line of text carrying the comment "// @name" (the test kernels mark the
 * lines their messages must name); the test stops if there is none. */
static inline int emu_marker_line(const char *text, const char *name) {
    char *mark = xasprintf("// @%s\n", name);
    const char *p = strstr(text, mark);
    free(mark);
    if (!p) emu_die("marker not found", NULL);
    int line = 1;
    for (const char *q = text; q < p; q++) line += *q == '\n';
    return line;
}

/* "<label>:<line>" of the marked line of the file at path; caller frees. */
static inline char *emu_marker_at(const char *path, const char *label, const char *name) {
    char *src = NULL;
    hn_err err;
    if (hn_read_file(path, &src, NULL, &err) != 0) emu_die("read", &err);
    char *at = xasprintf("%s:%d", label, emu_marker_line(src, name));
    free(src);
    return at;
}

static inline char *emu_cache(void) {
    return hn_default_cache_dir();
}

/* A scratch folder for files a test writes (HARNESS_TMP or the cache). */
static inline char *emu_tmp_dir(const char *sub) {
    const char *t = getenv("HARNESS_TMP");
    char *base = t && *t ? xstrdup(t) : emu_cache();
    char *dir = xasprintf("%s/%s", base, sub);
    free(base);
    hn_err err;
    if (hn_mkdirs(dir, &err) != 0) emu_die("mkdir", &err);
    return dir;
}

static inline int emu_compile_file(const char *path, const char *const *kernels, int nk,
                            const char *const *defines, int nd, hn_module_image *img, char **log,
                            hn_err *err) {
    char *cache = emu_cache();
    hn_compile_req req = {0};
    req.src_path = path;
    req.kernels = kernels;
    req.n_kernels = nk;
    req.defines = defines;
    req.n_defines = nd;
    req.cache_dir = cache;
    int rc = hn_compile_emu(&req, img, log, err);
    free(cache);
    return rc;
}

static inline hn_backend *emu_backend(int threads, double timeout) {
    hn_backend_opts o = {0};
    o.emu_threads = threads;
    o.kernel_timeout = timeout;
    hn_backend *b = NULL;
    hn_err err;
    if (hn_backend_emu_create(&o, &b, &err) != 0) emu_die("backend", &err);
    return b;
}

static inline hn_kernel *emu_load(hn_backend *b, const hn_module_image *img, int i) {
    hn_kernel *k = NULL;
    hn_err err;
    if (b->ops->kernel_load(b, img, i, &k, &err) != 0) emu_die("kernel_load", &err);
    return k;
}

static inline hn_dptr emu_buf(hn_backend *b, const void *data, size_t bytes) {
    hn_dptr p;
    hn_err err;
    if (b->ops->alloc(b, bytes, &p, &err) != 0) emu_die("alloc", &err);
    if (data && b->ops->upload(b, p, data, bytes, &err) != 0) emu_die("upload", &err);
    if (!data && b->ops->fill(b, p, 0, bytes, &err) != 0) emu_die("fill", &err);
    return p;
}

static inline void emu_get(hn_backend *b, void *dst, hn_dptr src, size_t bytes) {
    hn_err err;
    if (b->ops->download(b, dst, src, bytes, &err) != 0) emu_die("download", &err);
}

static inline int emu_launch(hn_backend *b, hn_kernel *k, unsigned gx, unsigned gy, unsigned gz,
                      unsigned bx, unsigned by, unsigned bz, size_t shared, void **args,
                      hn_err *err) {
    hn_launch_dims d = {{gx, gy, gz}, {bx, by, bz}, shared};
    err->msg[0] = '\0';
    return b->ops->launch(b, k, &d, args, err);
}

#endif
