/*
 * compile.c: the parts of compiling shared by both targets (source-tree hashing,
 * cache folder, image lifetime, dispatch). NVRTC lives in nvrtc.c, the host
 * compiler in emu/emu_compile.c.
 */
#define _GNU_SOURCE
#include "compile.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void hn_module_image_free(hn_module_image *img) {
    if (!img) return;
    free(img->image);
    free(img->path);
    if (img->lowered)
        for (int i = 0; i < img->n_kernels; i++) free(img->lowered[i]);
    free(img->lowered);
    if (img->sym_lowered)
        for (int i = 0; i < img->n_symbols; i++) free(img->sym_lowered[i]);
    free(img->sym_lowered);
    free(img->res);
    free(img->log);
    free(img->cache_bad);
    free(img->companion);
    memset(img, 0, sizeof *img);
}

int hn_compile(hn_target target, const hn_compile_req *req, hn_module_image *out, char **log_out,
               hn_err *err) {
    if (log_out) *log_out = NULL;
    if (!req->source && hn_check_source_tree(req->src_path, req->include_dirs, req->n_include_dirs, err) != 0) {
        memset(out, 0, sizeof *out);
        out->target = target;
        return -1;
    }
    return target == HN_TARGET_CUDA ? hn_compile_cuda(req, out, log_out, err)
                                    : hn_compile_emu(req, out, log_out, err);
}

void hn_compile_key(hn_target target, const hn_compile_req *req, char key[33]) {
    if (target == HN_TARGET_CUDA) hn_compile_cuda_key(req, key);
    else hn_compile_emu_key(req, key);
}

char *hn_default_cache_dir(void) {
    const char *v = getenv("HARNESS_CACHE_DIR");
    if (v && *v) return xstrdup(v);
    v = getenv("XDG_CACHE_HOME");
    if (v && *v) return xasprintf("%s/harness", v);
    v = getenv("HOME");
    if (v && *v) return xasprintf("%s/.cache/harness", v);
    return xstrdup(".cache/harness");
}

/* ---------------------------------------------------------------------- */
/* source tree hashing */

#define MAX_VISITED 256

typedef struct {
    char *paths[MAX_VISITED];
    int n;
} visited_set;

static int visited_add(visited_set *v, const char *path) {
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->paths[i], path) == 0) return 0;
    if (v->n == MAX_VISITED) return 0;
    v->paths[v->n++] = xstrdup(path);
    return 1;
}

/* Largest source file or header the harness reads (and lets a compiler read). */
#define MAX_SOURCE_BYTES ((size_t)64 << 20)

/* The file an #include names: beside the including file (quoted only), then in
 * the include folders; an absolute name is itself. NULL when not found (a
 * system header, or a missing one the compiler will report). */
static char *resolve_include(const char *name, int quoted, const char *here, const char *const *dirs, int n_dirs) {
    if (name[0] == '/') return hn_file_exists(name) ? xstrdup(name) : NULL;
    if (quoted) {
        char *cand = hn_path_join(here, name);
        if (hn_file_exists(cand)) return cand;
        free(cand);
    }
    for (int i = 0; i < n_dirs; i++) {
        char *cand = hn_path_join(dirs[i], name);
        if (hn_file_exists(cand)) return cand;
        free(cand);
    }
    return NULL;
}

/* Walks path and the headers it includes, quoted or angled, that resolve to
 * files beside it or in include_dirs (recursively), hashing each into h (if
 * not NULL). A source or header that is not a regular file (/dev/zero, a FIFO)
 * or is over MAX_SOURCE_BYTES is an error in err, so no compiler is asked to
 * read it; an include that resolves nowhere is hashed by name. */
static int walk_tree(hn_hash *h, const char *path, const char *const *dirs, int n_dirs, visited_set *seen,
                     hn_err *err) {
    if (!visited_add(seen, path)) return 0;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (h) {
            hn_hash_adds(h, path);
            hn_hash_adds(h, "<missing>");
        }
        return 0;
    }
    if (!S_ISREG(st.st_mode))
        return hn_errf(err, "%s is not a regular file (a source or header must be one)", path);
    if ((size_t)st.st_size > MAX_SOURCE_BYTES)
        return hn_errf(err, "%s is %lld bytes, over the %zu MB a source or header may have", path,
                       (long long)st.st_size, MAX_SOURCE_BYTES >> 20);
    char *text = NULL;
    size_t size = 0;
    if (hn_read_file(path, &text, &size, NULL) != 0) {
        if (h) {
            hn_hash_adds(h, path);
            hn_hash_adds(h, "<unreadable>");
        }
        return 0;
    }
    if (h) {
        hn_hash_adds(h, path);
        hn_hash_add(h, &size, sizeof size);
        hn_hash_add(h, text, size);
    }
    char *here = hn_dirname(path);
    int rc = 0;
    for (const char *p = text; *p && rc == 0;) {
        const char *line = p;
        const char *eol = strchr(p, '\n');
        p = eol ? eol + 1 : p + strlen(p);
        while (line < p && (*line == ' ' || *line == '\t')) line++;
        if (*line != '#') continue;
        line++;
        while (line < p && (*line == ' ' || *line == '\t')) line++;
        if (strncmp(line, "include", 7) != 0) continue;
        line += 7;
        while (line < p && (*line == ' ' || *line == '\t')) line++;
        if (*line != '"' && *line != '<') continue;
        char close = *line == '"' ? '"' : '>';
        const char *end = memchr(line + 1, close, (size_t)(p - line - 1));
        if (!end) continue;
        char *name = xstrndup(line + 1, (size_t)(end - line - 1));
        char *found = resolve_include(name, close == '"', here, dirs, n_dirs);
        if (found) rc = walk_tree(h, found, dirs, n_dirs, seen, err);
        else if (h) hn_hash_adds(h, name);
        if (rc != 0) hn_err_prefix(err, "%s includes \"%s\"", path, name);
        free(found);
        free(name);
    }
    free(here);
    free(text);
    return rc;
}

void hn_hash_source_tree(hn_hash *h, const char *path, const char *const *include_dirs,
                         int n_include_dirs) {
    visited_set seen = {.n = 0};
    walk_tree(h, path, include_dirs, n_include_dirs, &seen, NULL);
    for (int i = 0; i < seen.n; i++) free(seen.paths[i]);
}

int hn_check_source_tree(const char *path, const char *const *include_dirs, int n_include_dirs, hn_err *err) {
    visited_set seen = {.n = 0};
    int rc = walk_tree(NULL, path, include_dirs, n_include_dirs, &seen, err);
    for (int i = 0; i < seen.n; i++) free(seen.paths[i]);
    return rc;
}

/* ---------------------------------------------------------------------- */

#include "embedded.h"

const struct hn_embedded_file *hn_embedded_find(const char *name) {
    for (const struct hn_embedded_file *f = hn_embedded_files; f->name; f++)
        if (strcmp(f->name, name) == 0) return f;
    return NULL;
}

const char *hn_embedded_in_group(const struct hn_embedded_file *f, const char *group) {
    size_t n = strlen(group);
    return strncmp(f->name, group, n) == 0 && f->name[n] == '/' ? f->name + n + 1 : NULL;
}

/* ---------------------------------------------------------------------- */
/* CUBIN: a kernel's __launch_bounds__ */

static uint64_t rd_le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* The records of a .nv.info.<kernel> section: a format byte, an attribute byte,
 * then for format 4 (EIFMT_SVAL) a 16-bit size and that many bytes, for format
 * 3 (EIFMT_HVAL) a 16-bit value, for 2 (EIFMT_BVAL) one byte and a pad byte,
 * for 1 (EIFMT_NVAL) two unused bytes: every record but an SVAL is 4 bytes (so
 * are all 3458 sections of NVRTC 13's cubins the harness cached, parsed so to
 * their exact end). EIATTR_MAX_THREADS (0x05) holds x, y, z as 32-bit values. */
static int nv_info_max_threads(const unsigned char *p, uint64_t size) {
    uint64_t i = 0;
    while (i + 2 <= size) {
        const int fmt = p[i], attr = p[i + 1];
        if (fmt == 4) {
            if (i + 4 > size) return -1;
            const uint64_t n = rd_le(p + i + 2, 2);
            if (i + 4 + n > size) return -1;
            if (attr == 0x05 && n == 12) {
                const uint64_t t = rd_le(p + i + 4, 4) * rd_le(p + i + 8, 4) * rd_le(p + i + 12, 4);
                return t > 0 && t <= 1u << 20 ? (int)t : -1;
            }
            i += 4 + n;
        } else if (fmt == 1 || fmt == 2 || fmt == 3) {
            i += 4;
        } else {
            return -1;
        }
    }
    return -1;
}

int hn_cubin_max_threads(const void *image, size_t size, const char *lowered) {
    const unsigned char *d = image;
    /* ELF64, little-endian */
    if (!d || size < 64 || memcmp(d, "\x7f" "ELF", 4) != 0 || d[4] != 2 || d[5] != 1) return -1;
    const uint64_t shoff = rd_le(d + 0x28, 8), shentsize = rd_le(d + 0x3a, 2), shnum = rd_le(d + 0x3c, 2),
                   shstrndx = rd_le(d + 0x3e, 2);
    if (shentsize < 64 || shstrndx >= shnum || shoff > size || shnum > (size - shoff) / shentsize) return -1;
    const unsigned char *strsec = d + shoff + shstrndx * shentsize;
    const uint64_t str_off = rd_le(strsec + 0x18, 8), str_size = rd_le(strsec + 0x20, 8);
    if (str_off > size || str_size > size - str_off) return -1;
    char want[512];
    if ((size_t)snprintf(want, sizeof want, ".nv.info.%s", lowered) >= sizeof want) return -1;
    const size_t want_len = strlen(want);
    for (uint64_t i = 0; i < shnum; i++) {
        const unsigned char *sh = d + shoff + i * shentsize;
        const uint64_t name = rd_le(sh, 4), off = rd_le(sh + 0x18, 8), sz = rd_le(sh + 0x20, 8);
        if (name >= str_size || str_size - name <= want_len) continue;
        const char *nm = (const char *)d + str_off + name;
        if (memcmp(nm, want, want_len + 1) != 0) continue;
        if (off > size || sz > size - off) return -1;
        return nv_info_max_threads(d + off, sz);
    }
    return -1;
}
