/*
 * emu_compile.c: hn_compile_emu, the emulator's compiler (contract in compile.h).
 *
 * A kernel variant becomes a shared object built by the host C++ compiler:
 *
 *   <cache>/emu-shim-<hash>/        the embedded shim headers, written once
 *   <cache>/emu-<key>.cc            generated translation unit:
 *                                     #line 1 "<the user's .cu>"
 *                                     the source, extern __shared__ rewritten
 *                                     one launch wrapper + signature per kernel
 *   <cache>/emu-<key>.so            the module (hn_emu_abi.h), with the checksum
 *                                   record of cache.h after it, verified before
 *                                   it is used (and again before dlopen)
 *
 * compiled as C++17 with -O2 -fPIC -shared -g1, -include hn_emu.h, the variant's
 * -D defines, -I for the .cu's folder and the request's include dirs. The key
 * hashes the source tree (source + quoted includes, recursively), the shim, the
 * defines, include dirs, kernel names, the compiler command, its --version
 * output and extra flags, so a second compile of the same thing loads from the
 * cache and an edited header recompiles.
 *
 * An instrumented module (req->instrument, for the sanitizer and the profile)
 * is built in two steps: the translation unit with the compiler's thread
 * sanitizer instrumentation (-fsanitize=thread, -c: no sanitizer runtime is
 * ever linked), then the shared object from that object and the shim's
 * hn_emu_san_stub.cc, which defines the callbacks. Its key differs from the
 * plain module's, so both live in the cache side by side.
 *
 * Environment: HARNESS_CXX overrides the compiler (a command, split on spaces);
 * HARNESS_EMU_CXXFLAGS adds flags (both are part of the key);
 * HARNESS_EMU_SANITIZE (set and not empty) instruments every module.
 *
 * Invariants: the .so appears in the cache only complete, with its record
 * (written to a temporary name, then renamed); compiles of the same key may
 * race safely; a bad .so is discarded with a warning and compiled again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "compile.h"
#include "embedded.h"
#include "emu_source.h"


#ifndef HN_CXX_COMPILER
#define HN_CXX_COMPILER "c++"
#endif

/* Bump when the generated code or compile flags change meaning. */
#define EMU_GEN_VERSION "hn-emu-gen-8"

static const char *const emu_flags[] = {
    "-std=c++17", "-O2", "-fPIC", "-shared", "-g1",
    "-fno-strict-aliasing",     /* CUDA code type-puns freely */
    "-fno-math-errno",          /* device math never sets errno */
    "-fvisibility=hidden",      /* only the hn_emu_ entry points are exported */
    "-fstack-clash-protection", /* large frames probe the fiber stack's guard page */
};

/* Instrumentation: every load and store the compiler cannot prove private to
 * a thread becomes a call (__tsan_read4(addr) ...), volatile ones their own
 * calls, atomics calls that perform them; no calls at function entry and exit.
 * GCC takes --param, clang -mllvm options. */
static const char *const instr_flags_gcc[] = {
    "-fsanitize=thread", "--param", "tsan-distinguish-volatile=1", "--param",
    "tsan-instrument-func-entry-exit=0",
    /* memcpy, memmove and memset stay calls (to the stub, instr_link_flags):
     * GCC expands one whose size it can bound (n <= 16) into moves that
     * -fsanitize=thread does not instrument, so they went unchecked */
    "-fno-builtin-memcpy", "-fno-builtin-memmove", "-fno-builtin-memset",
    /* no tail calls: a callback's return address is its access's place, and a
     * kernel ending in atomicAdd(...) jumped to it, leaving the emulator's
     * runtime as the return address ("at an unknown place (pc ...)") */
    "-fno-optimize-sibling-calls",
    /* the type's alignment of every access (the stub's
     * __ubsan_handle_type_mismatch_v1): tsan sees only sizes, and a float4
     * load is often split into four 4-byte ones */
    "-fsanitize=alignment",
    /* an index past an array's declared size (the stub's
     * __ubsan_handle_out_of_bounds): a local array, a row of a 2D tile */
    "-fsanitize=bounds",
};
static const char *const instr_flags_clang[] = {
    "-fsanitize=thread", "-mllvm", "-tsan-distinguish-volatile=1", "-mllvm",
    "-tsan-instrument-func-entry-exit=0",
    /* clang drops a read followed by a write of the same place unless told to
     * report the pair (__tsan_read_write4): the read matters to initcheck */
    "-mllvm", "-tsan-compound-read-before-write=1",
    "-fno-builtin-memcpy", "-fno-builtin-memmove", "-fno-builtin-memset", /* as for GCC */
    "-fno-optimize-sibling-calls",
    "-fsanitize=alignment", "-fsanitize=array-bounds",
};
/* The module's own memcpy/memmove/memset calls go through the stub too. */
static const char *const instr_link_flags[] = {
    "-Wl,--wrap=memcpy", "-Wl,--wrap=memmove", "-Wl,--wrap=memset",
};
#define EMU_SAN_STUB "hn_emu_san_stub.cc"

/* What the source tree (the .cu and its quoted headers) contains, read before
 * compiling. */
typedef struct {
    int unsupported;   /* inline asm or <<< tokens (maybe in inactive #if) */
    int noinline;      /* uses __noinline__ */
    int uses_volatile; /* names `volatile`: built instrumented (hn_emu_volatile_step) */
    char what[1024];   /* the first unsupported one */
} src_scan;

/* ------------------------------------------------------------------------- */
/* running programs */

typedef struct {
    char **v;
    int n, cap;
} argv_t;

static void argv_add(argv_t *a, const char *s) {
    if (a->n + 2 > a->cap) {
        a->cap = a->cap ? 2 * a->cap : 32;
        a->v = xrealloc(a->v, (size_t)a->cap * sizeof *a->v);
    }
    a->v[a->n++] = xstrdup(s);
    a->v[a->n] = NULL;
}

/* Adds the whitespace-separated words of s. */
static void argv_add_words(argv_t *a, const char *s) {
    while (s && *s) {
        while (*s == ' ' || *s == '\t') s++;
        const char *b = s;
        while (*s && *s != ' ' && *s != '\t') s++;
        if (s > b) {
            char *w = xstrndup(b, (size_t)(s - b));
            argv_add(a, w);
            free(w);
        }
    }
}

static void argv_free(argv_t *a) {
    for (int i = 0; i < a->n; i++) free(a->v[i]);
    free(a->v);
    memset(a, 0, sizeof *a);
}

/* Runs argv, capturing stdout and stderr together into *output. Returns the
 * exit status (0 = success), or -1 when it could not run or was killed. */
static int run_capture(char *const *argv, char **output) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_err err;
    int rc = hn_spawn(argv, HN_SPAWN_STDOUT | HN_SPAWN_STDERR, &sb, &err);
    if (rc < 0) hn_sb_addf(&sb, "%s\n", err.msg);
    *output = hn_sb_detach(&sb);
    return rc < 0 || rc >= 128 ? -1 : rc;
}

/* ------------------------------------------------------------------------- */
/* the compiler */

static pthread_mutex_t version_mu = PTHREAD_MUTEX_INITIALIZER;
static char *version_cmd, *version_text;

static const char *compiler_command(void) {
    const char *c = getenv("HARNESS_CXX");
    return c && *c ? c : HN_CXX_COMPILER;
}

/* The compiler's --version output (cached per command); caller frees. */
static char *compiler_version(const char *cmd) {
    pthread_mutex_lock(&version_mu);
    if (!version_cmd || strcmp(version_cmd, cmd) != 0) {
        argv_t a = {0};
        argv_add_words(&a, cmd);
        argv_add(&a, "--version");
        char *out = NULL;
        int rc = run_capture(a.v, &out);
        argv_free(&a);
        free(version_cmd);
        free(version_text);
        version_cmd = xstrdup(cmd);
        version_text = rc == 0 ? out : (free(out), xstrdup("<unknown>"));
    }
    char *v = xstrdup(version_text);
    pthread_mutex_unlock(&version_mu);
    return v;
}

/* The instrumentation a request gets: its own, or every module's under
 * HARNESS_EMU_SANITIZE (see backend_emu.c). */
static int instrument_of(const hn_compile_req *req) {
    const char *e = getenv("HARNESS_EMU_SANITIZE");
    if (req->instrument) return HN_INSTRUMENT_ACCESSES; /* a profile's module is the same one */
    return e && *e ? HN_INSTRUMENT_ACCESSES : HN_INSTRUMENT_NONE;
}

/* Whether the compiler's --version output names clang. */
static int is_clang(const char *version) {
    return version && strstr(version, "clang") != NULL;
}

/* GCC puts an error inside a command-line macro's expansion at "<command-line>"
 * (a variant's define that is also a name of the source: -DT=16 with `template
 * <int T>`), and the user's line only in the note that follows ("k.cu:3:15: note:
 * in expansion of macro 'T'"). The message then names that line and the define, so
 * it says where and why; without such a note, the error as it is. */
static char *command_line_error(const char *what, size_t what_n, const char *rest) {
    static const char note[] = ": note: in expansion of macro ";
    const char *shim_macro = NULL;
    size_t shim_macro_n = 0;
    for (const char *p = rest; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *at = memmem(p, n, note, sizeof note - 1);
        const char *macro = at ? at + sizeof note - 1 : NULL;
        /* a user's line after a note inside the shim: the define replaced a name
         * of the shim that a macro of the shim used there (blockIdx in an
         * instrumented module expands to a template with a parameter T) */
        if (at && shim_macro && !memmem(p, n, "/emu-shim-", 10) && strncmp(p, "<command-line>", 14) != 0)
            return xasprintf("%.*s: error: %.*s (where the macro %.*s, defined on the command line by a define of "
                             "the variant, replaced a name in the emulator's CUDA headers, reached through %.*s "
                             "here: rename the define)",
                             (int)(at - p), p, (int)what_n, what, (int)shim_macro_n, shim_macro,
                             (int)(n - (size_t)(macro - p)), macro);
        if (at && !memmem(p, n, "/emu-shim-", 10) && strncmp(p, "<command-line>", 14) != 0)
            return xasprintf("%.*s: error: %.*s (where the macro %.*s, defined on the command line by a define of "
                             "the variant, replaced a name of the source)",
                             (int)(at - p), p, (int)what_n, what, (int)(n - (size_t)(macro - p)), macro);
        if (at && !shim_macro) {
            shim_macro = macro;
            shim_macro_n = n - (size_t)(macro - p);
        }
        p = e ? e + 1 : NULL;
    }
    /* the name is one of the shim's (template <typename T>): only a new name helps */
    if (shim_macro)
        return xasprintf("<command-line>: error: %.*s (where the macro %.*s, defined on the command line by a define "
                         "of the variant, replaced a name in the emulator's CUDA headers: rename the define)",
                         (int)what_n, what, (int)shim_macro_n, shim_macro);
    return xasprintf("<command-line>: error: %.*s", (int)what_n, what);
}

/* The first line of log that reports an error, else its first line. An error
 * raised inside the shim (a static_assert or #error naming an unsupported
 * construct) is reported at the user's line that led there ("required from
 * here", "In file included from"). */
static char *first_error(const char *log) {
    const char *p = log, *pick = NULL, *user = NULL;
    size_t user_n = 0;
    while (p && *p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *req = memmem(p, n, ":   required from here", 22);
        if (req && !memmem(p, (size_t)(req - p), "/emu-shim-", 10)) {
            user = p;
            user_n = (size_t)(req - p);
        } else if (n > 23 && strncmp(p, "In file included from ", 22) == 0 &&
                   !memmem(p, n, "/emu-shim-", 10) && !memmem(p, n, "<command-line>", 14)) {
            user = p + 22;
            user_n = n - 22;
            if (user_n && (user[user_n - 1] == ':' || user[user_n - 1] == ',')) user_n--;
        }
        if (!pick && n) pick = p;
        if (memmem(p, n, "error", 5) || memmem(p, n, "Error", 5)) {
            pick = p;
            break;
        }
        p = e ? e + 1 : NULL;
    }
    if (!pick) return xstrdup("(no output)");
    const char *e = strchr(pick, '\n');
    size_t n = e ? (size_t)(e - pick) : strlen(pick);
    const char *what = memmem(pick, n, "error: ", 7);
    if (strncmp(pick, "<command-line>", 14) == 0 && what && e)
        return command_line_error(what + 7, n - (size_t)(what + 7 - pick), e + 1);
    if (user && what && memmem(pick, n, "/emu-shim-", 10)) {
        what += 7;
        return xasprintf("%.*s: %.*s", (int)user_n, user, (int)(n - (size_t)(what - pick)), what);
    }
    return xstrndup(pick, n);
}

/* ------------------------------------------------------------------------- */
/* the shim on disk */

/* The embedded files an emulated compile sees: the shim, and the kernel
 * headers both backends offer. Returns f's path in the shim folder, or NULL. */
static const char *shim_name(const struct hn_embedded_file *f) {
    const char *n = hn_embedded_in_group(f, "emu");
    return n ? n : hn_embedded_in_group(f, "kernel");
}

static void hash_shim(hn_hash *h) {
    for (const struct hn_embedded_file *f = hn_embedded_files; f->name; f++) {
        if (!shim_name(f)) continue;
        hn_hash_adds(h, f->name);
        hn_hash_add(h, f->data, f->len);
    }
}

/* Writes a file atomically under a temporary name unique to this process and
 * call, so concurrent compiles (threads or processes) never collide. */
static int write_atomic(const char *path, const char *data, size_t size, hn_err *err) {
    char *tmp = hn_cache_tmp_name(path);
    int rc = hn_write_file(tmp, data, size, err);
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = hn_errf(err, "%s: cannot write: %s", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* Shim folders this process has checked (a process compiles many variants). */
static pthread_mutex_t shim_mu = PTHREAD_MUTEX_INITIALIZER;
static char *shim_checked[8];

/* Writes the embedded shim headers into <cache>/emu-shim-<hash>/: the first
 * time in a process every file is compared with the embedded one, and one that
 * is missing or differs (a damaged cache) is written again. */
static int write_shim(const char *cache, char **dir_out, hn_err *err) {
    hn_hash h;
    hn_hash_init(&h);
    hash_shim(&h);
    char key[33];
    hn_hash_hex(&h, key);
    char *dir = xasprintf("%s/emu-shim-%.16s", cache, key);
    pthread_mutex_lock(&shim_mu);
    int rc = 0;
    size_t slot = 0;
    char *main_header = hn_path_join(dir, "hn_emu.h");
    int present = hn_file_exists(main_header); /* gone if `harness cache clean` ran meanwhile */
    free(main_header);
    for (; slot < HN_ARRAY_LEN(shim_checked) && shim_checked[slot]; slot++)
        if (strcmp(shim_checked[slot], dir) == 0) {
            if (present) goto out;
            break;
        }
    rc = -1;
    if (hn_mkdirs(dir, err) != 0) goto out;
    for (const struct hn_embedded_file *f = hn_embedded_files; f->name; f++) {
        const char *name = shim_name(f);
        if (!name) continue;
        char *path = hn_path_join(dir, name);
        char *sub = hn_dirname(path);
        char *have = NULL;
        size_t have_size = 0;
        int same = hn_read_file(path, &have, &have_size, NULL) == 0 && have_size == f->len &&
                   memcmp(have, f->data, f->len) == 0;
        if (have && !same)
            fprintf(stderr, "harness: cache: %s: differs from the harness's copy; written again\n", path);
        int ok = same || (hn_mkdirs(sub, err) == 0 && write_atomic(path, f->data, f->len, err) == 0);
        free(have);
        free(sub);
        free(path);
        if (!ok) goto out;
    }
    if (!hn_embedded_find("emu/hn_emu.h")) {
        hn_errf(err, "emulator: the shim header hn_emu.h is not embedded in this build");
        goto out;
    }
    if (slot < HN_ARRAY_LEN(shim_checked) && !shim_checked[slot]) shim_checked[slot] = xstrdup(dir);
    rc = 0;
out:
    pthread_mutex_unlock(&shim_mu);
    if (rc == 0) *dir_out = dir;
    else free(dir);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* the generated translation unit */

static void add_c_string(hn_sb *sb, const char *s) {
    hn_sb_addc(sb, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') hn_sb_addc(sb, '\\');
        hn_sb_addc(sb, *s);
    }
    hn_sb_addc(sb, '"');
}

/* "#line 1 "<harness emu: WHAT 'NAME'>"": where the compiler places errors in
 * the generated code that follows. */
static void add_line_label(hn_sb *sb, const char *what, const char *name) {
    char *label = xasprintf("<harness emu: %s '%s'>", what, name);
    hn_sb_adds(sb, "#line 1 ");
    add_c_string(sb, label);
    free(label);
    hn_sb_addc(sb, '\n');
}

static char *generate_tu(const char *abs_src, const emu_src_rewrite *rw,
                         const hn_compile_req *req) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, "#line 1 ");
    add_c_string(&sb, abs_src);
    hn_sb_addc(&sb, '\n');
    hn_sb_adds(&sb, rw->text);
    if (sb.len && sb.buf[sb.len - 1] != '\n') hn_sb_addc(&sb, '\n');
    hn_sb_adds(&sb, "#line 1 \"<harness emu: launch wrappers>\"\n");
    hn_sb_adds(&sb, "static __inline__ void hn_emu_point_dyn_shared() {\n");
    for (int i = 0; i < rw->n_fs; i++)
        hn_sb_addf(&sb, "    %s = (decltype(%s))hn_emu_dyn_shared();\n", rw->fs_names[i],
                   rw->fs_names[i]);
    hn_sb_adds(&sb, "}\n");
    for (int i = 0; i < req->n_kernels; i++) {
        const char *k = req->kernels[i];
        add_line_label(&sb, "kernel", k);
        hn_sb_addf(&sb, "HN_EMU_EXPORT void hn_emu_kernel_%d(void **a);\n", i);
        hn_sb_addf(&sb,
                   "void hn_emu_kernel_%d(void **a) { hn_emu_point_dyn_shared(); "
                   "hn_emu_invoke(&%s, a); }\n",
                   i, k);
        hn_sb_addf(&sb,
                   "extern \"C\" { extern __attribute__((visibility(\"default\"))) const "
                   "hn_emu_kinfo hn_emu_kernel_%d_info; }\n",
                   i);
        hn_sb_addf(&sb, "const hn_emu_kinfo hn_emu_kernel_%d_info = {", i);
        add_c_string(&sb, k);
        hn_sb_addf(&sb,
                   ", hn_emu_sig<decltype(&%s)>::n, hn_emu_sig<decltype(&%s)>::kinds, "
                   "hn_emu_sig<decltype(&%s)>::sizes};\n",
                   k, k, k);
    }
    /* the variables the harness writes (constants): address and size */
    for (int i = 0; i < req->n_symbols; i++) {
        add_line_label(&sb, "constant", req->symbols[i]);
        hn_sb_addf(&sb, "HN_EMU_EXPORT void *hn_emu_symbol_%d(unsigned long *bytes);\n", i);
        /* a const variable is in read-only memory: said at compile time, not a
         * fault when written */
        hn_sb_addf(&sb,
                   "void *hn_emu_symbol_%d(unsigned long *bytes) {\n"
                   "    static_assert(!std::is_const<std::remove_reference<decltype(%s)>::type>::value, "
                   "\"constants: '%s' is const (in read-only memory): the harness writes a __constant__ or "
                   "__device__ variable, declared without const\");\n"
                   "    *bytes = sizeof(%s);\n"
                   "    return (void *)&%s;\n"
                   "}\n",
                   i, req->symbols[i], req->symbols[i], req->symbols[i], req->symbols[i]);
    }
    return hn_sb_detach(&sb);
}

/* ------------------------------------------------------------------------- */

static void add_compile_args(argv_t *a, const char *cmd, const char *shim_dir, const char *src_dir,
                             const hn_compile_req *req, const src_scan *sc) {
    argv_add_words(a, cmd);
    for (size_t i = 0; i < HN_ARRAY_LEN(emu_flags); i++) argv_add(a, emu_flags[i]);
    if (sc->noinline) argv_add(a, "-DHN_EMU_NOINLINE");
    char *inc = hn_path_join(shim_dir, "hn_emu.h");
    argv_add(a, "-include");
    argv_add(a, inc);
    free(inc);
    argv_add(a, "-isystem");
    argv_add(a, shim_dir);
    for (int i = 0; i < req->n_defines; i++) {
        char *d = xasprintf("-D%s", req->defines[i]);
        argv_add(a, d);
        free(d);
    }
    char *d = xasprintf("-I%s", src_dir);
    argv_add(a, d);
    free(d);
    /* The variant's include folders: first for "quoted" includes, last for
     * <angled> ones, so a folder of stand-ins written for NVRTC (an empty
     * stdint.h ...) never hides the host's C library. */
    for (int i = 0; i < req->n_include_dirs; i++) {
        argv_add(a, "-iquote");
        argv_add(a, req->include_dirs[i]);
        argv_add(a, "-idirafter");
        argv_add(a, req->include_dirs[i]);
    }
    /* Of the NVRTC options, those that mean the same to the host compiler. */
    for (int i = 0; i < req->n_options; i++) {
        const char *o = req->options[i];
        if (strncmp(o, "-D", 2) == 0 || strncmp(o, "-U", 2) == 0) argv_add(a, o);
        else if (strncmp(o, "--define-macro=", 15) == 0) {
            d = xasprintf("-D%s", o + 15);
            argv_add(a, d);
            free(d);
        } else if (strncmp(o, "--undefine-macro=", 17) == 0) {
            d = xasprintf("-U%s", o + 17);
            argv_add(a, d);
            free(d);
        }
    }
    argv_add_words(a, getenv("HARNESS_EMU_CXXFLAGS"));
}

static void scan_tree(const char *rewritten, const char *abs_src, const char *src_dir,
                      const hn_compile_req *req, src_scan *sc) {
    memset(sc, 0, sizeof *sc);
    sc->unsupported = emu_src_scan_unsupported(rewritten, abs_src, 0, NULL, sc->what, sizeof sc->what);
    sc->noinline = emu_src_uses_ident(rewritten, "__noinline__");
    sc->uses_volatile = emu_src_uses_ident(rewritten, "volatile");
    char **files = NULL;
    int nf = 0;
    emu_src_quoted_includes(rewritten, src_dir, req->include_dirs, req->n_include_dirs, &files,
                            &nf);
    for (int i = 0; i < nf; i++) { /* grows as headers include headers */
        char *text = NULL;
        if (hn_read_file(files[i], &text, NULL, NULL) != 0) continue;
        char w[1024];
        int h = emu_src_scan_unsupported(text, files[i], 0, NULL, w, sizeof w);
        if (h && !sc->unsupported) snprintf(sc->what, sizeof sc->what, "%s", w);
        sc->unsupported += h;
        sc->noinline |= emu_src_uses_ident(text, "__noinline__");
        sc->uses_volatile |= emu_src_uses_ident(text, "volatile");
        char *dir = hn_dirname(files[i]);
        emu_src_quoted_includes(text, dir, req->include_dirs, req->n_include_dirs, &files, &nf);
        free(dir);
        free(text);
    }
    for (int i = 0; i < nf; i++) free(files[i]);
    free(files);
}

/* Inline asm and <<< found by the scan may sit in an inactive #if: confirm
 * with the preprocessor before failing. */
static int check_unsupported(const src_scan *sc, const char *abs_src, const char *src_dir,
                             const hn_compile_req *req, const char *tu_path, const char *cmd,
                             const char *shim_dir, char **log, hn_err *err) {
    if (!sc->unsupported) return 0;
    char what[1024];
    argv_t a = {0};
    add_compile_args(&a, cmd, shim_dir, src_dir, req, sc);
    argv_add(&a, "-E");
    argv_add(&a, "-x");
    argv_add(&a, "c++");
    argv_add(&a, tu_path);
    char *pre = NULL;
    int rc = run_capture(a.v, &pre);
    argv_free(&a);
    if (rc != 0) { /* let the real compile report it */
        free(pre);
        return 0;
    }
    int hits = emu_src_scan_unsupported(pre, abs_src, 1, shim_dir, what, sizeof what);
    free(pre);
    if (!hits) return 0;
    *log = xasprintf("%s\n", what);
    return hn_errf(err, "%s", what);
}

/* The two steps of an instrumented module: the translation unit to an
 * instrumented object (next to out_so), then the shared object from it and the
 * callback stub. Returns 0, or -1 with err and *log set. */
static int compile_instrumented(const hn_compile_req *req, const char *cmd, const char *shim_dir,
                                const char *src_dir, const src_scan *sc, const char *tu_path,
                                const char *out_so, char **log, hn_err *err) {
    char *obj = xasprintf("%s.o", out_so);
    char *version = compiler_version(cmd);
    int clang = is_clang(version);
    free(version);
    argv_t a = {0};
    add_compile_args(&a, cmd, shim_dir, src_dir, req, sc);
    const char *const *f = clang ? instr_flags_clang : instr_flags_gcc;
    size_t nf = clang ? HN_ARRAY_LEN(instr_flags_clang) : HN_ARRAY_LEN(instr_flags_gcc);
    for (size_t i = 0; i < nf; i++) argv_add(&a, f[i]);
    argv_add(&a, "-DHN_EMU_INSTRUMENTED=1");
    argv_add(&a, "-c");
    argv_add(&a, "-x");
    argv_add(&a, "c++");
    argv_add(&a, tu_path);
    argv_add(&a, "-o");
    argv_add(&a, obj);
    int rc = -1;
    int st = run_capture(a.v, log);
    argv_free(&a);
    if (st != 0) {
        char *first = first_error(*log);
        hn_errf(err, "%s: host C++ compiler failed (emu, instrumented): %s", req->src_path, first);
        free(first);
        goto out;
    }
    free(*log);
    *log = NULL;
    char *stub = hn_path_join(shim_dir, EMU_SAN_STUB);
    char *isys = xasprintf("-I%s", shim_dir);
    argv_add_words(&a, cmd);
    static const char *const link_flags[] = {"-std=c++17", "-O2", "-fPIC", "-shared", "-g1",
                                             "-fvisibility=hidden"};
    for (size_t i = 0; i < HN_ARRAY_LEN(link_flags); i++) argv_add(&a, link_flags[i]);
    argv_add(&a, isys);
    /* instrumented only for its volatile accesses (no check or profile asked for):
     * the stub does not offer the module to a sanitizing backend, so a plain
     * module stays plain under --sanitize */
    if (!instrument_of(req)) argv_add(&a, "-DHN_EMU_SAN_DETACHED=1");
    argv_add(&a, "-x");
    argv_add(&a, "c++");
    argv_add(&a, stub);
    argv_add(&a, "-x");
    argv_add(&a, "none");
    argv_add(&a, obj);
    argv_add(&a, "-o");
    argv_add(&a, out_so);
    argv_add(&a, "-Wl,-Bsymbolic");
    for (size_t i = 0; i < HN_ARRAY_LEN(instr_link_flags); i++) argv_add(&a, instr_link_flags[i]);
    argv_add(&a, "-lm");
    st = run_capture(a.v, log);
    argv_free(&a);
    free(stub);
    free(isys);
    if (st != 0) {
        char *first = first_error(*log);
        hn_errf(err, "%s: linking the instrumented module failed (emu): %s", req->src_path, first);
        free(first);
        unlink(out_so);
        goto out;
    }
    rc = 0;
out:
    unlink(obj);
    free(obj);
    return rc;
}

void hn_compile_emu_key(const hn_compile_req *req, char key[33]) {
    char resolved[PATH_MAX];
    const char *src = realpath(req->src_path, resolved) ? resolved : req->src_path;
    const char *cmd = compiler_command();
    char *version = compiler_version(cmd);
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_adds(&h, EMU_GEN_VERSION);
    hn_hash_source_tree(&h, src, req->include_dirs, req->n_include_dirs);
    hash_shim(&h);
    hn_hash_adds(&h, "defines");
    for (int i = 0; i < req->n_defines; i++) hn_hash_adds(&h, req->defines[i]);
    hn_hash_adds(&h, "includes");
    for (int i = 0; i < req->n_include_dirs; i++) hn_hash_adds(&h, req->include_dirs[i]);
    hn_hash_adds(&h, "options");
    for (int i = 0; i < req->n_options; i++) hn_hash_adds(&h, req->options[i]);
    hn_hash_adds(&h, "kernels");
    for (int i = 0; i < req->n_kernels; i++) hn_hash_adds(&h, req->kernels[i]);
    hn_hash_adds(&h, "symbols");
    for (int i = 0; i < req->n_symbols; i++) hn_hash_adds(&h, req->symbols[i]);
    hn_hash_adds(&h, cmd);
    hn_hash_adds(&h, version);
    hn_hash_adds(&h, getenv("HARNESS_EMU_CXXFLAGS"));
    for (size_t i = 0; i < HN_ARRAY_LEN(emu_flags); i++) hn_hash_adds(&h, emu_flags[i]);
    int instrument = instrument_of(req);
    if (instrument) {
        /* a module of its own; the plain module's key is unchanged */
        hn_hash_adds(&h, "instrument");
        hn_hash_add(&h, &instrument, sizeof instrument);
        int clang = is_clang(version);
        const char *const *f = clang ? instr_flags_clang : instr_flags_gcc;
        size_t nf = clang ? HN_ARRAY_LEN(instr_flags_clang) : HN_ARRAY_LEN(instr_flags_gcc);
        for (size_t i = 0; i < nf; i++) hn_hash_adds(&h, f[i]);
        hn_hash_adds(&h, "-DHN_EMU_INSTRUMENTED=1");
        for (size_t i = 0; i < HN_ARRAY_LEN(instr_link_flags); i++) hn_hash_adds(&h, instr_link_flags[i]);
    }
    hn_hash_hex(&h, key);
    free(version);
}

static int compile_module(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err) {
    double t0 = hn_now();
    hn_err local_err;
    if (!err) err = &local_err;
    memset(out, 0, sizeof *out);
    out->target = HN_TARGET_EMU;
    if (log_out) *log_out = NULL;
    if (!req->src_path) return hn_errf(err, "emulator compile: no source file");
    if (req->n_kernels < 1) return hn_errf(err, "%s: no kernels requested", req->src_path);

    int rc = -1;
    char *abs_src = NULL, *src_dir = NULL, *cache = NULL, *shim_dir = NULL;
    char *source = NULL, *tu = NULL, *tu_path = NULL, *so_path = NULL, *tmp_path = NULL;
    char *log = NULL, *cache_bad = NULL;
    emu_src_rewrite rw = {0};
    argv_t a = {0};

    char resolved[PATH_MAX];
    if (!realpath(req->src_path, resolved)) {
        hn_errf(err, "%s: cannot open: %s", req->src_path, strerror(errno));
        goto done;
    }
    abs_src = xstrdup(resolved);
    src_dir = hn_dirname(abs_src);
    if (req->cache_dir) {
        cache = xstrdup(req->cache_dir);
        if (hn_mkdirs(cache, err) != 0) goto done;
    } else {
        if (!(cache = hn_mkdtemp("harness-emu-", err))) goto done;
    }
    if (write_shim(cache, &shim_dir, err) != 0) goto done;

    hn_compile_emu_key(req, out->key);
    const char *cmd = compiler_command();
    so_path = xasprintf("%s/emu-%s.so", cache, out->key);

    if (req->cache_dir) {
        char why[256];
        int st = hn_cache_load(so_path, NULL, NULL, why, sizeof why);
        if (st == HN_CACHE_OK) {
            out->from_cache = 1;
            log = xstrdup("");
            rc = 0;
            goto done;
        }
        if (st == HN_CACHE_BAD) cache_bad = xasprintf("%s: %s", so_path, why);
    }

    /* the translation unit */
    if (hn_read_file(abs_src, &source, NULL, err) != 0) goto done;
    if (emu_src_rewrite_shared(source, abs_src, &rw, err) != 0) {
        log = xasprintf("%s\n", err->msg);
        goto done;
    }
    tu = generate_tu(abs_src, &rw, req);
    tu_path = xasprintf("%s/emu-%s.cc", cache, out->key);
    if (write_atomic(tu_path, tu, strlen(tu), err) != 0) goto done;
    src_scan sc;
    scan_tree(rw.text, abs_src, src_dir, req, &sc);
    if (check_unsupported(&sc, abs_src, src_dir, req, tu_path, cmd, shim_dir, &log, err) != 0)
        goto done;

    /* compile */
    tmp_path = hn_cache_tmp_name(so_path);
    /* volatile accesses take turns (hn_emu_volatile_step) only through the
     * instrumentation's callbacks; the key needs no mark: the source decides */
    if (instrument_of(req) || sc.uses_volatile) {
        if (compile_instrumented(req, cmd, shim_dir, src_dir, &sc, tu_path, tmp_path, &log, err) != 0)
            goto done;
    } else {
        add_compile_args(&a, cmd, shim_dir, src_dir, req, &sc);
        argv_add(&a, "-x");
        argv_add(&a, "c++");
        argv_add(&a, tu_path);
        argv_add(&a, "-o");
        argv_add(&a, tmp_path);
        argv_add(&a, "-Wl,-Bsymbolic");
        argv_add(&a, "-lm");
        int st = run_capture(a.v, &log);
        if (st != 0) {
            char *first = first_error(log);
            hn_errf(err, "%s: host C++ compiler failed (emu): %s", req->src_path, first);
            free(first);
            unlink(tmp_path);
            goto done;
        }
    }
    if (hn_cache_commit(tmp_path, so_path, err) != 0) goto done;
    rc = 0;

done:
    if (rc == 0) {
        out->path = so_path;
        so_path = NULL;
        out->n_kernels = req->n_kernels;
        out->lowered = xcalloc((size_t)req->n_kernels, sizeof *out->lowered);
        out->res = xcalloc((size_t)req->n_kernels, sizeof *out->res);
        for (int i = 0; i < req->n_kernels; i++) {
            out->lowered[i] = xasprintf("hn_emu_kernel_%d", i);
            out->res[i] = (hn_kernel_resources){-1, -1, -1, -1, -1, -1, -1};
        }
        out->n_symbols = req->n_symbols;
        out->sym_lowered = xcalloc((size_t)req->n_symbols + 1, sizeof *out->sym_lowered);
        for (int i = 0; i < req->n_symbols; i++) out->sym_lowered[i] = xasprintf("hn_emu_symbol_%d", i);
        out->log = log ? log : xstrdup("");
        log = NULL;
        out->cache_bad = cache_bad;
        cache_bad = NULL;
        out->seconds = hn_now() - t0;
    } else {
        if (log_out) {
            *log_out = log ? log : xasprintf("%s\n", err->msg);
            log = NULL;
        }
        char key[33];
        memcpy(key, out->key, sizeof key);
        memset(out, 0, sizeof *out);
        out->target = HN_TARGET_EMU;
        memcpy(out->key, key, sizeof key);
    }
    argv_free(&a);
    emu_src_rewrite_free(&rw);
    free(log);
    free(abs_src);
    free(src_dir);
    free(cache);
    free(shim_dir);
    free(source);
    free(tu);
    free(tu_path);
    free(so_path);
    free(tmp_path);
    free(cache_bad);
    return rc;
}

/* Whether the source tree of req declares __device__ or __managed__ variables. */
static int tree_declares_device_vars(const hn_compile_req *req) {
    char resolved[PATH_MAX];
    if (!realpath(req->src_path, resolved)) return 1; /* unknown: assume so */
    char *dir = hn_dirname(resolved);
    char **files = xcalloc(1, sizeof *files);
    files[0] = xstrdup(resolved);
    int nf = 1, found = 0;
    for (int i = 0; i < nf && !found; i++) { /* grows as headers include headers */
        char *text = NULL;
        if (hn_read_file(files[i], &text, NULL, NULL) != 0) continue;
        found = emu_src_declares_device_vars(text);
        char *d = hn_dirname(files[i]);
        emu_src_quoted_includes(text, d, req->include_dirs, req->n_include_dirs, &files, &nf);
        free(d);
        free(text);
    }
    for (int i = 0; i < nf; i++) free(files[i]);
    free(files);
    free(dir);
    return found;
}

int hn_compile_emu(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err) {
    hn_err local;
    if (!err) err = &local;
    if (compile_module(req, out, log_out, err) != 0) return -1;
    if (req->instrument != HN_INSTRUMENT_PROFILE) return 0;
    /* a profile: the plain module beside the instrumented one */
    hn_compile_req plain = *req;
    plain.instrument = HN_INSTRUMENT_NONE;
    hn_module_image pimg;
    double t0 = hn_now();
    if (compile_module(&plain, &pimg, log_out, err) != 0) {
        hn_err_prefix(err, "the plain module of a profile");
        hn_module_image_free(out);
        return -1;
    }
    out->companion = pimg.path;
    pimg.path = NULL;
    out->from_cache = out->from_cache && pimg.from_cache;
    hn_module_image_free(&pimg);
    out->device_vars = tree_declares_device_vars(req);
    out->seconds += hn_now() - t0;
    return 0;
}
