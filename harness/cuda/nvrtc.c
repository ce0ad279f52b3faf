/*
 * nvrtc.c: compiling a kernel variant to CUBIN with NVRTC, with the on-disk cache
 * described in compile.h. Needs no GPU and no driver.
 *
 * Cache entry for key K: cuda-K.cubin (the image) and cuda-K.meta (text: one line
 * per kernel "name-expression<TAB>lowered-name<TAB>regs spill_st spill_ld stack
 * smem cmem", then "log" and the compiler log), each with its checksum record
 * (cache.h) and verified before use. Each file is written atomically, the .meta
 * first, so concurrent harness runs at worst compile the same thing twice.
 *
 * NVRTC has no C or C++ library headers; every compile gets, as in-memory headers
 * (which win over the include path), the stand-ins in harness/cuda/rtc/ (<stdint.h>,
 * <math.h>, <cmath>, <assert.h>, <type_traits>, <cuda.h> ...) and the kernel headers
 * of kernels/include/. Their text is part of the cache key. What each stand-in
 * provides, what NVRTC has built in and what is left out: docs/nvrtc_headers.md.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "cache.h"
#include "compile.h"
#include "cuda/nvrtc_opts.h"
#include "embedded.h"

const char *hn_nvrtc_version(void) {
    static char buf[32];
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unavailable";
    snprintf(buf, sizeof buf, "%d.%d", major, minor);
    return buf;
}

int hn_nvrtc_has_no_cache(int major, int minor) {
    return major > 12 || (major == 12 && minor >= 9);
}

/* The integer just before `tag` in line[0..len), or -1. */
static int number_before(const char *line, size_t len, const char *tag) {
    char *copy = xstrndup(line, len);
    const char *hit = strstr(copy, tag);
    int v = -1;
    if (hit) {
        const char *q = hit;
        while (q > copy && q[-1] == ' ') q--;
        const char *end = q;
        while (q > copy && q[-1] >= '0' && q[-1] <= '9') q--;
        if (q < end) v = atoi(q);
    }
    free(copy);
    return v;
}

/* Parses ptxas --verbose output for one lowered name:
 *   ptxas info    : Function properties for NAME
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 31 registers, used 1 barriers, 1024 bytes smem, 384 bytes cmem[0]
 */
static void parse_resources(const char *log, const char *lowered, hn_kernel_resources *r) {
    r->registers = r->spill_stores = r->spill_loads = r->stack_frame = r->static_shared =
        r->constant = r->max_threads = -1;
    char *needle = xasprintf("Function properties for %s\n", lowered);
    const char *p = strstr(log, needle);
    free(needle);
    if (!p) return;
    for (int line_no = 0; line_no < 3 && (p = strchr(p, '\n')); line_no++) {
        p++;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        int v;
        if ((v = number_before(p, len, "bytes stack frame")) >= 0) r->stack_frame = v;
        if ((v = number_before(p, len, "bytes spill stores")) >= 0) r->spill_stores = v;
        if ((v = number_before(p, len, "bytes spill loads")) >= 0) r->spill_loads = v;
        if ((v = number_before(p, len, "registers")) >= 0) {
            r->registers = v;
            r->static_shared = 0;
            if ((v = number_before(p, len, "bytes smem")) >= 0) r->static_shared = v;
            if ((v = number_before(p, len, "bytes cmem[0]")) >= 0) r->constant = v;
            break;
        }
    }
}

#ifndef HN_CUDA_INCLUDE_DIR
#define HN_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

/* The toolkit's include folder, so kernels can include what NVRTC compiles
 * from there (cuda_fp16.h, cuda_bf16.h, cooperative_groups.h, and libcu++
 * under cccl/): $HARNESS_CUDA_INCLUDE, else the toolkit the harness was built
 * with, else $CUDA_HOME/include, else /usr/local/cuda/include. NULL if none
 * exists. Caller frees. */
static char *cuda_include_dir(void) {
    const char *env = getenv("HARNESS_CUDA_INCLUDE");
    if (env && *env) return xstrdup(env);
    char *cand[3] = {xstrdup(HN_CUDA_INCLUDE_DIR), NULL, xstrdup("/usr/local/cuda/include")};
    const char *home = getenv("CUDA_HOME");
    if (home && *home) cand[1] = xasprintf("%s/include", home);
    char *found = NULL;
    for (int i = 0; i < 3; i++) {
        char *probe = cand[i] ? hn_path_join(cand[i], "cuda_fp16.h") : NULL;
        if (!found && probe && hn_file_exists(probe)) found = xstrdup(cand[i]);
        free(probe);
        free(cand[i]);
    }
    return found;
}

/* The in-memory headers every NVRTC compile gets: the stand-ins for the C and
 * C++ headers NVRTC lacks (group rtc) and the kernel headers both backends
 * offer (group kernel), by the name a kernel includes them with. Returns how
 * many (at most max). */
static int rtc_headers(const char **names, const char **texts, int max) {
    int n = 0;
    for (const struct hn_embedded_file *f = hn_embedded_files; f->name && n < max; f++) {
        const char *name = hn_embedded_in_group(f, "rtc");
        if (!name) name = hn_embedded_in_group(f, "kernel");
        if (!name) continue;
        names[n] = name;
        texts[n++] = f->data;
    }
    return n;
}

/* What every source starts with under NVRTC, ahead of the variant's defines: the
 * names nvcc gives every kernel on Linux without an include. nvcc pre-includes
 * cuda_runtime.h, which includes the host's <stdlib.h>, whose <sys/types.h> (glibc,
 * _DEFAULT_SOURCE, on in g++) declares uint, ushort and ulong; kernels written for
 * nvcc use them unasked (siboehm's SGEMM kernels: "const uint cRow = blockIdx.y").
 * The emulator's host compiler has them from the same headers. A kernel's own
 * typedef of the same name repeats these, which C++ allows. The same implicit
 * include brings the host's <math.h> and libstdc++'s std::size_t: llm.c's kernels
 * say -INFINITY with only <stdio.h>, <stdlib.h> and <float.h> included, and
 * PyTorch-style ones std::size_t with only <cstdint>; so std::size_t and
 * std::ptrdiff_t come first, and the <math.h> stand-in (rtc/math.h: INFINITY,
 * NAN, M_PI ...) where the source names one of its macros (names_math_macro). */
static const char RTC_PRELUDE[] = "typedef unsigned int uint;\n"
                                  "typedef unsigned short ushort;\n"
                                  "typedef unsigned long ulong;\n"
                                  "namespace std { using ::size_t; using ::ptrdiff_t; }\n";

/* Whether src names a macro of <math.h> (INFINITY, NAN, HUGE_VAL(F), M_*, FP_*) as
 * a whole identifier: such a source gets the <math.h> stand-in ahead of it, as
 * nvcc's implicit cuda_runtime.h gives it the host's. Only then: the stand-in
 * pulls libcu++'s <cuda/std/limits>, which would add about 0.2 s to every compile. */
static int names_math_macro(const char *src) {
    static const char *const names[] = {"INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", NULL};
    for (const char *p = src; *p;) {
        if (!(isalpha((unsigned char)*p) || *p == '_')) {
            p++;
            continue;
        }
        const char *b = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        if (b > src && isdigit((unsigned char)b[-1])) continue; /* 1e5f and the like */
        const size_t len = (size_t)(p - b);
        if ((len > 2 && (!strncmp(b, "M_", 2) || !strncmp(b, "FP_", 3)))) return 1;
        for (int i = 0; names[i]; i++)
            if (strlen(names[i]) == len && !strncmp(b, names[i], len)) return 1;
    }
    return 0;
}

void hn_compile_cuda_key(const hn_compile_req *req, char key[33]) {
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_adds(&h, "harness-nvrtc-4");
    hn_hash_adds(&h, RTC_PRELUDE);
    hn_hash_adds(&h, hn_nvrtc_version());
    hn_hash_adds(&h, req->arch);
    {
        char *inc = cuda_include_dir();
        hn_hash_adds(&h, inc ? inc : "<no toolkit headers>");
        free(inc);
    }
    {
        const char *names[256], *texts[256];
        int n = rtc_headers(names, texts, 256);
        for (int i = 0; i < n; i++) {
            hn_hash_adds(&h, names[i]);
            hn_hash_adds(&h, texts[i]);
        }
    }
    hn_hash_add(&h, &req->line_info, sizeof req->line_info);
    if (req->source) hn_hash_adds(&h, req->source);
    else hn_hash_source_tree(&h, req->src_path, req->include_dirs, req->n_include_dirs);
    for (int i = 0; i < req->n_defines; i++) hn_hash_adds(&h, req->defines[i]);
    hn_hash_adds(&h, "|");
    for (int i = 0; i < req->n_include_dirs; i++) hn_hash_adds(&h, req->include_dirs[i]);
    hn_hash_adds(&h, "|");
    for (int i = 0; i < req->n_kernels; i++) hn_hash_adds(&h, req->kernels[i]);
    hn_hash_adds(&h, "|");
    for (int i = 0; i < req->n_symbols; i++) hn_hash_adds(&h, req->symbols[i]);
    hn_hash_adds(&h, "|");
    for (int i = 0; i < req->n_options; i++) hn_hash_adds(&h, req->options[i]);
    hn_hash_hex(&h, key);
}

/* Whether the text [p, p + n) holds name as a whole identifier. */
static int has_ident(const char *p, size_t n, const char *name) {
    size_t k = strlen(name);
    for (const char *q = p; k && (q = memmem(q, n - (size_t)(q - p), name, k)) != NULL; q++) {
        int before = q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_');
        int after = (size_t)(q - p) + k < n && (isalnum((unsigned char)q[k]) || q[k] == '_');
        if (!before && !after) return 1;
    }
    return 0;
}

/* A define named like a name of a header the source did not write (-DT=float
 * and NVRTC's built-in "template<typename T>"): the log's first error is in
 * that header, and its echoed source line holds the define's name. Returns a
 * line saying so, or "" (static storage). */
static const char *define_clash_hint(const char *log, const hn_compile_req *req) {
    static char hint[512];
    const char *err_line = strstr(log, "): error");
    if (!err_line) return "";
    const char *bol = err_line;
    while (bol > log && bol[-1] != '\n') bol--;
    if (strncmp(bol, req->src_path, strlen(req->src_path)) == 0) return "";
    const char *echo = strchr(err_line, '\n');
    if (!echo) return "";
    echo++;
    const char *eol = strchr(echo, '\n');
    size_t n = eol ? (size_t)(eol - echo) : strlen(echo);
    for (int i = 0; i < req->n_defines; i++) {
        char name[128];
        size_t k = strcspn(req->defines[i], "=");
        if (k == 0 || k >= sizeof name) continue;
        memcpy(name, req->defines[i], k);
        name[k] = '\0';
        if (!has_ident(echo, n, name)) continue;
        snprintf(hint, sizeof hint,
                 "harness: the define %s (-D%s) replaced a name in %.*s, where the error is: rename the define\n",
                 name, req->defines[i], (int)(strchr(bol, '(') ? strchr(bol, '(') - bol : 0), bol);
        return hint;
    }
    return "";
}

static void fill_image(hn_module_image *out, const hn_compile_req *req) {
    out->target = HN_TARGET_CUDA;
    out->n_kernels = req->n_kernels;
    out->lowered = xcalloc((size_t)req->n_kernels + 1, sizeof *out->lowered);
    out->res = xcalloc((size_t)req->n_kernels + 1, sizeof *out->res);
    out->n_symbols = req->n_symbols;
    out->sym_lowered = xcalloc((size_t)req->n_symbols + 1, sizeof *out->sym_lowered);
}

/* Loads the entry for key into out: 0 when both files verify and the metadata
 * is for these kernels. A bad file is discarded with a warning and named in
 * out->cache_bad; a missing .cubin is a plain miss. */
static int cache_load(const hn_compile_req *req, const char *key, hn_module_image *out) {
    if (!req->cache_dir) return -1;
    char *cubin_path = xasprintf("%s/cuda-%s.cubin", req->cache_dir, key);
    char *meta_path = xasprintf("%s/cuda-%s.meta", req->cache_dir, key);
    char *cubin = NULL, *meta = NULL, *bad = NULL;
    size_t cubin_size = 0;
    char why[256];
    int rc = -1;
    int st = hn_cache_load(cubin_path, &cubin, &cubin_size, why, sizeof why);
    if (st == HN_CACHE_MISSING) goto done;
    if (st == HN_CACHE_BAD) {
        bad = xasprintf("%s: %s", cubin_path, why);
        goto done;
    }
    st = hn_cache_load(meta_path, &meta, NULL, why, sizeof why);
    if (st == HN_CACHE_MISSING) {
        /* The .meta is written first, so a .cubin without one lost it. */
        snprintf(why, sizeof why, "missing beside its .cubin");
        hn_cache_discard(meta_path, why);
    }
    if (st != HN_CACHE_OK) {
        bad = xasprintf("%s: %s", meta_path, why);
        goto done;
    }
    fill_image(out, req);
    char *p = meta;
    for (int i = 0; i < req->n_kernels; i++) {
        char *eol = strchr(p, '\n');
        if (!eol) goto bad;
        *eol = '\0';
        char *t1 = strchr(p, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t1 || !t2) goto bad;
        *t1 = *t2 = '\0';
        if (strcmp(p, req->kernels[i]) != 0) goto bad;
        out->lowered[i] = xstrdup(t1 + 1);
        hn_kernel_resources *r = &out->res[i];
        if (sscanf(t2 + 1, "%d %d %d %d %d %d", &r->registers, &r->spill_stores, &r->spill_loads,
                   &r->stack_frame, &r->static_shared, &r->constant) != 6)
            goto bad;
        p = eol + 1;
    }
    for (int i = 0; i < req->n_symbols; i++) { /* "symbol<TAB>name<TAB>lowered" */
        char *eol = strchr(p, '\n');
        if (!eol) goto bad;
        *eol = '\0';
        char *t1 = strchr(p, '\t');
        char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t1 || !t2) goto bad;
        *t1 = *t2 = '\0';
        if (strcmp(p, "symbol") != 0 || strcmp(t1 + 1, req->symbols[i]) != 0) goto bad;
        out->sym_lowered[i] = xstrdup(t2 + 1);
        p = eol + 1;
    }
    if (strncmp(p, "log\n", 4) != 0) goto bad;
    out->log = xstrdup(p + 4);
    out->image = cubin;
    out->image_size = cubin_size;
    out->path = cubin_path;
    cubin = NULL;
    cubin_path = NULL;
    out->from_cache = 1;
    rc = 0;
    goto done;
bad:
    /* Verified bytes that do not describe these kernels: not ours to trust. */
    hn_module_image_free(out);
    snprintf(why, sizeof why, "does not describe the kernels of its key");
    hn_cache_discard(meta_path, why);
    bad = xasprintf("%s: %s", meta_path, why);
done:
    out->cache_bad = bad;
    free(cubin);
    free(meta);
    free(cubin_path);
    free(meta_path);
    return rc;
}

static void cache_store(const hn_compile_req *req, const char *key, hn_module_image *img) {
    if (!req->cache_dir || hn_mkdirs(req->cache_dir, NULL) != 0) return;
    hn_sb meta;
    hn_sb_init(&meta);
    for (int i = 0; i < img->n_kernels; i++) {
        const hn_kernel_resources *r = &img->res[i];
        hn_sb_addf(&meta, "%s\t%s\t%d %d %d %d %d %d\n", req->kernels[i], img->lowered[i],
                   r->registers, r->spill_stores, r->spill_loads, r->stack_frame, r->static_shared,
                   r->constant);
    }
    for (int i = 0; i < img->n_symbols; i++) hn_sb_addf(&meta, "symbol\t%s\t%s\n", req->symbols[i], img->sym_lowered[i]);
    hn_sb_addf(&meta, "log\n%s", img->log);
    char *cubin_path = xasprintf("%s/cuda-%s.cubin", req->cache_dir, key);
    char *meta_path = xasprintf("%s/cuda-%s.meta", req->cache_dir, key);
    /* The .meta first: the .cubin's arrival commits the entry, so a reader
     * that finds a .cubin finds a complete .meta beside it (processes racing
     * on one key write the same things). */
    if (hn_cache_write(meta_path, meta.buf, meta.len, NULL) == 0 &&
        hn_cache_write(cubin_path, img->image, img->image_size, NULL) == 0) {
        img->path = cubin_path;
        cubin_path = NULL;
    }
    free(cubin_path);
    free(meta_path);
    hn_sb_free(&meta);
}

int hn_compile_cuda(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err) {
    memset(out, 0, sizeof *out);
    if (log_out) *log_out = NULL;
    double t0 = hn_now();
    if (!req->arch || strncmp(req->arch, "sm_", 3) != 0)
        return hn_errf(err, "%s: bad target architecture '%s' (expected sm_XX, e.g. sm_90)",
                       req->src_path, req->arch ? req->arch : "(none)");
    hn_compile_cuda_key(req, out->key);
    char key[33];
    memcpy(key, out->key, sizeof key);
    if (cache_load(req, key, out) == 0) {
        memcpy(out->key, key, sizeof key);
        out->seconds = hn_now() - t0;
        return 0;
    }
    memcpy(out->key, key, sizeof key);
    char *cache_bad = out->cache_bad; /* fill_image and failures below reset out */
    out->cache_bad = NULL;

    char *src;
    if (req->source) src = xstrdup(req->source);
    else if (hn_read_file(req->src_path, &src, NULL, err) != 0) {
        free(cache_bad);
        return -1;
    }

    /* Options: the source's folder and extra folders, defines, target, resources. */
    int n_opts = 0, cap = 10 + req->n_defines + req->n_include_dirs + req->n_options;
    char **opts = xcalloc((size_t)cap, sizeof *opts);
    char *here = hn_dirname(req->src_path);
    opts[n_opts++] = xasprintf("--gpu-architecture=%s", req->arch);
    opts[n_opts++] = xstrdup("-std=c++17");
    opts[n_opts++] = xstrdup("--ptxas-options=--verbose");
    /* NVRTC 12.9+ reuses the CUDA driver's compute cache where a driver is
     * installed, and a cubin served from there comes with no ptxas report. We
     * keep our own cache (which stores the report), so NVRTC's is turned off;
     * an older NVRTC has no such cache and rejects the option. */
    int nv_major = 0, nv_minor = 0;
    if (nvrtcVersion(&nv_major, &nv_minor) == NVRTC_SUCCESS && hn_nvrtc_has_no_cache(nv_major, nv_minor))
        opts[n_opts++] = xstrdup("--no-cache");
    if (req->line_info) opts[n_opts++] = xstrdup("-lineinfo");
    opts[n_opts++] = xasprintf("-I%s", here);
    for (int i = 0; i < req->n_include_dirs; i++) opts[n_opts++] = xasprintf("-I%s", req->include_dirs[i]);
    {
        /* After the user's folders: the toolkit's headers and libcu++. */
        char *inc = cuda_include_dir();
        if (inc) {
            opts[n_opts++] = xasprintf("-I%s", inc);
            opts[n_opts++] = xasprintf("-I%s/cccl", inc);
            free(inc);
        }
    }
    /* RTC_PRELUDE, then the variant's defines as #define lines ahead of the
     * source (then #line 1, so lines and __LINE__ stay the file's), not -D
     * options: NVRTC's built-in header, which comes before the source, then never
     * sees them, and a -DT=float does not break its "template <typename T>". A
     * value holding a line break (which a #define cannot) stays a -D option. */
    {
        hn_sb pre;
        hn_sb_init(&pre);
        hn_sb_adds(&pre, RTC_PRELUDE);
        if (names_math_macro(src)) hn_sb_adds(&pre, "#include <math.h>\n");
        for (int i = 0; i < req->n_defines; i++) {
            const char *d = req->defines[i], *eq = strchr(d, '=');
            if (strpbrk(d, "\r\n")) {
                opts[n_opts++] = xasprintf("-D%s", d);
                continue;
            }
            if (eq)
                hn_sb_addf(&pre, "#define %.*s %s\n", (int)(eq - d), d, eq + 1);
            else
                hn_sb_addf(&pre, "#define %s 1\n", d);
        }
        hn_sb_addf(&pre, "#line 1\n%s", src);
        free(src);
        src = pre.buf;
    }
    for (int i = 0; i < req->n_options; i++) opts[n_opts++] = xstrdup(req->options[i]);
    free(here);

    nvrtcProgram prog = NULL;
    int rc = -1;
    char **sym_exprs = NULL;
    const char *hdr_names[256], *hdr_texts[256];
    int n_hdrs = rtc_headers(hdr_names, hdr_texts, 256);
    nvrtcResult r = nvrtcCreateProgram(&prog, src, req->src_path, n_hdrs, hdr_texts, hdr_names);
    if (r != NVRTC_SUCCESS) {
        hn_errf(err, "%s: nvrtcCreateProgram: %s", req->src_path, nvrtcGetErrorString(r));
        goto done;
    }
    for (int i = 0; i < req->n_kernels; i++) {
        r = nvrtcAddNameExpression(prog, req->kernels[i]);
        if (r != NVRTC_SUCCESS) {
            hn_errf(err, "%s: kernel name '%s': %s", req->src_path, req->kernels[i], nvrtcGetErrorString(r));
            goto done;
        }
    }
    /* a variable's address, "&ns::F", names it as cuModuleGetGlobal wants it */
    sym_exprs = xcalloc((size_t)req->n_symbols + 1, sizeof *sym_exprs);
    for (int i = 0; i < req->n_symbols; i++) {
        sym_exprs[i] = xasprintf("&%s", req->symbols[i]);
        r = nvrtcAddNameExpression(prog, sym_exprs[i]);
        if (r != NVRTC_SUCCESS) {
            hn_errf(err, "%s: constant '%s': %s", req->src_path, req->symbols[i], nvrtcGetErrorString(r));
            goto done;
        }
    }
    nvrtcResult cr = nvrtcCompileProgram(prog, n_opts, (const char *const *)opts);
    size_t log_size = 0;
    nvrtcGetProgramLogSize(prog, &log_size);
    char *log = xcalloc(log_size + 1, 1);
    if (log_size) nvrtcGetProgramLog(prog, log);
    if (cr != NVRTC_SUCCESS) {
        hn_sb defs;
        hn_sb_init(&defs);
        for (int i = 0; i < req->n_defines; i++) hn_sb_addf(&defs, " -D%s", req->defines[i]);
        /* NVRTC's advice (-default-device) is wrong for the usual cause, a host
         * launcher in a file written for nvcc */
        const char *host_hint =
            strstr(log, "host functions are not allowed in JIT mode")
                ? "harness: NVRTC compiles device code only: put host code (a launcher, main) under #ifndef "
                  "__CUDA_ARCH__ (nvcc's device pass, NVRTC and the CPU emulator all skip it), mark device "
                  "helpers __device__; a generic lambda ([](auto v) {...}) in device code needs \"options\": "
                  "[\"-default-device\"] in the variant\n"
                : "";
        /* the hints before the log, which can be longer than a message holds */
        hn_errf(err, "%s: NVRTC compile failed for %s (%s%s):\n%s%s%s", req->src_path, req->arch,
                nvrtcGetErrorString(cr), defs.buf, host_hint, define_clash_hint(log, req), log);
        hn_sb_free(&defs);
        if (log_out) *log_out = log;
        else free(log);
        goto done;
    }
    fill_image(out, req);
    out->log = log;
    for (int i = 0; i < req->n_kernels; i++) {
        const char *lowered = NULL;
        r = nvrtcGetLoweredName(prog, req->kernels[i], &lowered);
        if (r != NVRTC_SUCCESS || !lowered) {
            hn_errf(err, "%s: kernel '%s' not found after compiling (is it a __global__ function of "
                         "this file? %s)",
                    req->src_path, req->kernels[i], nvrtcGetErrorString(r));
            hn_module_image_free(out);
            goto done;
        }
        out->lowered[i] = xstrdup(lowered);
        parse_resources(out->log, lowered, &out->res[i]);
    }
    for (int i = 0; i < req->n_symbols; i++) {
        const char *lowered = NULL;
        r = nvrtcGetLoweredName(prog, sym_exprs[i], &lowered);
        if (r != NVRTC_SUCCESS || !lowered) {
            hn_errf(err, "%s: constant '%s' not found after compiling (is it a __constant__ or __device__ "
                         "variable at file or namespace scope? %s)",
                    req->src_path, req->symbols[i], nvrtcGetErrorString(r));
            hn_module_image_free(out);
            goto done;
        }
        out->sym_lowered[i] = xstrdup(lowered);
    }
    r = nvrtcGetCUBINSize(prog, &out->image_size);
    if (r == NVRTC_SUCCESS && out->image_size) {
        out->image = xmalloc(out->image_size);
        r = nvrtcGetCUBIN(prog, out->image);
    }
    if (r != NVRTC_SUCCESS || !out->image_size) {
        hn_errf(err, "%s: no CUBIN produced (%s)", req->src_path, nvrtcGetErrorString(r));
        hn_module_image_free(out);
        goto done;
    }
    cache_store(req, key, out);
    if (log_out) *log_out = xstrdup(out->log);
    out->cache_bad = cache_bad;
    cache_bad = NULL;
    rc = 0;
done:
    free(cache_bad);
    for (int i = 0; sym_exprs && i < req->n_symbols; i++) free(sym_exprs[i]);
    free(sym_exprs);
    if (prog) nvrtcDestroyProgram(&prog);
    for (int i = 0; i < n_opts; i++) free(opts[i]);
    free(opts);
    free(src);
    out->seconds = hn_now() - t0;
    return rc;
}
