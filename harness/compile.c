/*
 * compile.c: the parts of compiling shared by both targets (source-tree hashing,
 * cache folder, image lifetime, dispatch). NVRTC lives in nvrtc.c, the host
 * compiler in emu/emu_compile.c.
 */
#define _GNU_SOURCE
#include "compile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void hn_module_image_free(hn_module_image *img) {
    if (!img) return;
    free(img->image);
    free(img->path);
    if (img->lowered)
        for (int i = 0; i < img->n_kernels; i++) free(img->lowered[i]);
    free(img->lowered);
    free(img->res);
    free(img->log);
    free(img->cache_bad);
    memset(img, 0, sizeof *img);
}

int hn_compile(hn_target target, const hn_compile_req *req, hn_module_image *out, char **log_out,
               hn_err *err) {
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

/* Finds `#include "name"` directives (outside block comments is good enough:
 * a header named in a comment only makes the key more conservative). */
static void hash_tree(hn_hash *h, const char *path, const char *const *dirs, int n_dirs,
                      visited_set *seen) {
    if (!visited_add(seen, path)) return;
    char *text = NULL;
    size_t size = 0;
    hn_hash_adds(h, path);
    if (hn_read_file(path, &text, &size, NULL) != 0) {
        hn_hash_adds(h, "<missing>");
        return;
    }
    hn_hash_add(h, &size, sizeof size);
    hn_hash_add(h, text, size);
    char *here = hn_dirname(path);
    for (const char *p = text; *p;) {
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
        if (*line != '"') continue;
        const char *end = memchr(line + 1, '"', (size_t)(p - line - 1));
        if (!end) continue;
        char *name = xstrndup(line + 1, (size_t)(end - line - 1));
        char *found = NULL;
        char *cand = hn_path_join(here, name);
        if (hn_file_exists(cand)) found = cand;
        else free(cand);
        for (int i = 0; !found && i < n_dirs; i++) {
            cand = hn_path_join(dirs[i], name);
            if (hn_file_exists(cand)) found = cand;
            else free(cand);
        }
        if (found) {
            hash_tree(h, found, dirs, n_dirs, seen);
            free(found);
        } else {
            hn_hash_adds(h, name);
        }
        free(name);
    }
    free(here);
    free(text);
}

void hn_hash_source_tree(hn_hash *h, const char *path, const char *const *include_dirs,
                         int n_include_dirs) {
    visited_set seen = {.n = 0};
    hash_tree(h, path, include_dirs, n_include_dirs, &seen);
    for (int i = 0; i < seen.n; i++) free(seen.paths[i]);
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
