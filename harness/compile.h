/*
 * compile.h: turning one kernel variant (a .cu file + -D defines) into a loadable
 * module, for either backend, with an on-disk cache.
 *
 * A variant is compiled once per run; the result lives in the cache folder under
 * a key that hashes the source, every header it includes with "quotes" (found by
 * scanning, recursively), the options, the target and the compiler's version, so a
 * second run compiles nothing and an edited header recompiles.
 *
 *   cuda: NVRTC -> CUBIN for req->arch (e.g. "sm_90"); needs no GPU and no driver.
 *         Kernels are found by C++ name expressions (nvrtcAddNameExpression), so
 *         templates work and extern "C" is not required; the lowered (mangled)
 *         names come back in hn_module_image.lowered[]. ptxas --verbose fills the
 *         per-kernel resource report.
 *   emu:  the host C++ compiler with the emulator's shim header -> a shared object
 *         (see emu/emu_compile.c); lowered[] then holds the name of the exported
 *         launch wrapper of each kernel.
 *
 * Every cached file is verified (size and checksum, cache.h) before its bytes are
 * used; a bad one is discarded with a warning on stderr and compiled again.
 *
 * Invariants: a successful compile fills image (cuda: the CUBIN bytes; emu: NULL,
 * with `path` naming the .so in the cache), lowered[i] for every requested kernel,
 * and `log` (possibly empty, never NULL).
 */
#ifndef HN_COMPILE_H
#define HN_COMPILE_H

#include <stddef.h>

#include "util.h"

typedef enum { HN_TARGET_CUDA, HN_TARGET_EMU } hn_target;

typedef struct {
    const char *src_path;               /* the .cu file (its folder is an include dir) */
    const char *const *defines;         /* "NAME=VALUE" or "NAME" */
    int n_defines;
    const char *const *include_dirs;    /* extra folders (cuda: -I; emu: -iquote and -idirafter) */
    int n_include_dirs;
    const char *const *kernels;         /* C++ name expressions, e.g. "reduce<256>" */
    int n_kernels;
    const char *arch;                   /* cuda: "sm_90"; emu: ignored */
    const char *cache_dir;              /* NULL: no caching */
    int line_info;                      /* cuda: -lineinfo; emu: always has -g1 */
    const char *const *options;         /* extra NVRTC options (the emulator takes -D/-U) */
    int n_options;
    const char *source;                 /* cuda: if set, compiled instead of reading
                                           src_path (which then only names it) */
    int instrument;                     /* emu: HN_INSTRUMENT_* (a module of its own, with its
                                           own cache key); cuda: ignored */
    const char *const *symbols;         /* C++ names of module-scope variables the harness
                                           writes (a variant's "constants"), e.g. "F", "ns::F" */
    int n_symbols;
} hn_compile_req;

/* Instrumented emulator modules (emu/emu_compile.c): every load and store the
 * compiler cannot prove private to a thread calls the emulator's sanitizer
 * (emu/emu_san.c) with its address, size and source line. */
/* HN_INSTRUMENT_PROFILE: the instrumented module plus the plain one beside it
 * (hn_module_image.companion), so a profile runs the blocks it does not record
 * at full speed. */
enum { HN_INSTRUMENT_NONE = 0, HN_INSTRUMENT_ACCESSES = 1, HN_INSTRUMENT_PROFILE = 2 };

/* What ptxas reported for one kernel; -1 where unknown. */
typedef struct {
    int registers;
    int spill_stores;   /* bytes */
    int spill_loads;    /* bytes */
    int stack_frame;    /* bytes */
    int static_shared;  /* bytes */
    int constant;       /* bytes of cmem[0] */
    int max_threads;    /* threads per block its __launch_bounds__ allow; 0 or -1: none known.
                           Emulator images: from NVRTC's CUBIN of the same source, where run
                           and check built one (hn_cubin_max_threads) */
} hn_kernel_resources;

typedef struct {
    hn_target target;
    void *image;                 /* cuda: CUBIN bytes (owned) */
    size_t image_size;
    char *path;                  /* the cached file (CUBIN or .so); owned, may be NULL */
    char **lowered;              /* n_kernels names (owned) */
    hn_kernel_resources *res;    /* n_kernels entries (owned) */
    int n_kernels;
    char *log;                   /* compiler output, never NULL (owned) */
    int from_cache;              /* 1 when nothing was compiled (the entry verified) */
    char *cache_bad;             /* "PATH: what was wrong" when a bad cache entry was
                                    discarded and compiled again (owned); else NULL */
    double seconds;              /* time spent compiling or loading from cache */
    char key[33];                /* the cache key */
    char *companion;             /* emu, HN_INSTRUMENT_PROFILE: the plain module (owned) */
    char **sym_lowered;          /* n_symbols names the backend finds req->symbols by
                                    (cuda: NVRTC's lowered names; emu: accessors) (owned) */
    int n_symbols;
    int device_vars;             /* emu, HN_INSTRUMENT_PROFILE: the source declares __device__
                                    or __managed__ variables (blocks may share state, so
                                    every block must run one module) */
} hn_module_image;

void hn_module_image_free(hn_module_image *img);

/* Compiles for the cuda target with NVRTC. On failure returns -1, err names the
 * file and says what failed, and *log_out (if not NULL) receives the compiler log
 * (caller frees). */
int hn_compile_cuda(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err);

/* Compiles for the emu target with the host C++ compiler; same contract. */
int hn_compile_emu(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err);

/* The threads per block a kernel of a CUBIN allows by its __launch_bounds__:
 * x * y * z of the EIATTR_MAX_THREADS record in the ELF section
 * ".nv.info.<lowered>"; -1 when it has none or the image is not such an ELF. */
int hn_cubin_max_threads(const void *image, size_t size, const char *lowered);

/* Dispatches on target. */
int hn_compile(hn_target target, const hn_compile_req *req, hn_module_image *out, char **log_out,
               hn_err *err);

/* The cache key hn_compile would use for req (32 hex digits), without
 * compiling: it names the content (source tree, defines, options, target,
 * compiler), so equal keys mean the same compiled kernel. */
void hn_compile_key(hn_target target, const hn_compile_req *req, char key[33]);
void hn_compile_cuda_key(const hn_compile_req *req, char key[33]);
void hn_compile_emu_key(const hn_compile_req *req, char key[33]);

/* The NVRTC version as "13.0", or "unavailable". */
const char *hn_nvrtc_version(void);

/* Adds to h the contents of path and, recursively, of every header it
 * includes that resolves beside the including file (quoted includes) or in
 * include_dirs (quoted or angled). Headers that cannot be found (system headers,
 * missing ones the compiler will report) are hashed by name. Used for cache keys
 * by both targets. */
void hn_hash_source_tree(hn_hash *h, const char *path, const char *const *include_dirs,
                         int n_include_dirs);

/* Checks that path and every header it includes (as above, plus absolute
 * names) are regular files of a sane size, so no compiler is asked to read
 * /dev/zero or a FIFO. hn_compile does this first. */
int hn_check_source_tree(const char *path, const char *const *include_dirs, int n_include_dirs, hn_err *err);

/* The default cache folder: $HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/harness,
 * else $HOME/.cache/harness, else ".cache/harness". Caller frees. */
char *hn_default_cache_dir(void);

#endif
