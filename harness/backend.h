/*
 * backend.h: the one interface both backends implement.
 *
 *   cuda (backend_cuda.c): the CUDA driver API, loaded at run time with dlopen so
 *        one binary starts with or without a driver.
 *   emu  (emu/backend_emu.c): the same .cu source compiled for the host and run on
 *        the CPU with GPU semantics (fibers per thread, blocks in linear order).
 *
 * Everything above this interface (the sweep, references, checks, timing, CSV) is
 * shared, so a variant behaves the same on both except for speed.
 *
 * Device memory is addressed by hn_dptr (a CUdeviceptr on cuda, a host address on
 * emu). Kernel arguments are passed the driver API's way: an array of pointers,
 * one per parameter, each pointing at the argument's value.
 *
 * Timing is by events recorded on the backend's own stream. On emu, launches are
 * synchronous and events read the host's monotonic clock, so the same code times
 * both (emu times say nothing about GPU speed and rows are marked so).
 *
 * Ownership: hn_backend_create returns an object the caller destroys with
 * hn_backend_destroy (NULL-safe). Kernels, buffers and events belong to the
 * backend that made them and must be released before it is destroyed.
 */
#ifndef HN_BACKEND_H
#define HN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "compile.h"
#include "util.h"

typedef uint64_t hn_dptr;

typedef struct hn_device_info {
    char name[256];            /* "NVIDIA H200", or "CPU emulator (2 threads, <cpu model>)" */
    char arch[16];             /* "sm_90"; "emu" on the emulator */
    int cc_major, cc_minor;    /* compute capability; 0.0 on emu */
    int sm_count;              /* multiprocessors; worker threads on emu */
    int warp_size;
    int max_threads_per_block;
    int max_block_dim[3];
    int max_grid_dim[3];
    size_t shared_per_block;        /* without opt-in (48 KB) */
    size_t shared_per_block_optin;  /* with cuFuncSetAttribute opt-in */
    size_t global_mem;              /* bytes */
    size_t l2_bytes;
    int sm_clock_khz;          /* default (max) SM clock; 0 if unknown */
    int mem_clock_khz;         /* memory clock; 0 if unknown */
    int mem_bus_width;         /* bits; 0 if unknown */
    char driver_version[32];   /* "13.0", or "" on emu */
} hn_device_info;

/* Where a parameter's value lives and how big it is, as the kernel declares it.
 * kind is one of 'p' pointer, 'i' signed integer, 'u' unsigned integer, 'f' float
 * or double, 'o' other (a struct, passed by bytes), '?' unknown. */
typedef struct {
    char kind;
    int size;
} hn_param_info;

typedef struct hn_backend hn_backend;
typedef struct hn_kernel hn_kernel;
typedef struct hn_event hn_event;

typedef struct {
    unsigned grid[3];
    unsigned block[3];
    size_t shared_bytes;   /* dynamic shared memory */
} hn_launch_dims;

/* The emulator's sanitizer (emu/emu_san.h): what to check in kernels built
 * with HN_INSTRUMENT_ACCESSES (hn_backend_opts.sanitize), and the classes of
 * findings, in order of precedence, which are also the rows' statuses. */
enum { HN_SAN_RACE = 1, HN_SAN_MEM = 2, HN_SAN_INIT = 4, HN_SAN_SYNC = 8, HN_SAN_ALL = 15 };
enum { HN_SAN_C_RACE = 0, HN_SAN_C_MEM, HN_SAN_C_INIT, HN_SAN_C_SYNC, HN_SAN_NCLASS };

/* What the sanitizer found in the launches since the last take. */
typedef struct {
    long n[HN_SAN_NCLASS];  /* distinct findings per class */
    int first_class;        /* the class that decides the row: the first of race, mem,
                               init, sync with a finding; -1 when nothing was found */
    char *first;            /* its first finding (by block, then order in the block) in
                               one line (owned; NULL when none) */
    char *report;           /* every finding, a line each, with counts (owned; NULL when none) */
    char *note;             /* what the launches left unchecked and why, a line each ("races on
                               global memory not checked in kernel 'k': ..."; owned; NULL when none) */
} hn_san_findings;
void hn_san_findings_free(hn_san_findings *f); /* NULL-safe; leaves it empty */
/* Parses "race,mem,init,sync" (any subset) or "all" into HN_SAN_* bits. */
int hn_san_parse(const char *list, unsigned *out, hn_err *err);

/* The emulator's memory profile of the launches since the last take
 * (emu/emu_prof.h): one row per source line, memory space and kind of access.
 * Counts are scaled up when only some blocks were profiled. */
enum { HN_PROF_GLOBAL = 0, HN_PROF_SHARED = 1 };
enum { HN_PROF_LOAD = 0, HN_PROF_STORE = 1, HN_PROF_ATOMIC = 2 };
typedef struct {
    char *file;          /* the source file as compiled (absolute), "?" if unknown */
    int line;
    char *func;          /* the function the line is in (demangled) */
    int space;           /* HN_PROF_GLOBAL or HN_PROF_SHARED */
    int kind;            /* HN_PROF_LOAD, STORE or ATOMIC */
    double requests;     /* warp-wide instances of its instructions */
    double sectors;      /* global: 32-byte sectors its requests touched */
    double wavefronts;   /* shared: wavefronts its requests took */
    double ideal;        /* shared: wavefronts they would take without bank conflicts */
    double accesses;     /* thread-level accesses */
} hn_prof_row;
typedef struct {
    hn_prof_row *rows;   /* ordered by file, line, space, kind */
    int n;
    char *kernel;
    unsigned long long blocks, blocks_profiled; /* over the launches */
    int launches;
} hn_profile;
void hn_profile_free(hn_profile *p); /* NULL-safe; leaves it empty */

/* Limits and run-time options of a backend, set at creation. */
typedef struct {
    int device;            /* cuda: device ordinal */
    int emu_threads;       /* emu: worker threads; 0 = one per core */
    double kernel_timeout; /* seconds; 0 = none. emu: a launch running longer fails */
    size_t printf_fifo;    /* cuda: device printf buffer; 0 = driver default */
    /* If not NULL: set to hn_now() when work is issued to an idle device and to 0
     * once the device is idle again (after a synchronising call returns), so
     * another process can tell a launch that never returns. */
    volatile double *busy_since;
    unsigned sanitize;     /* emu: HN_SAN_* checks of instrumented kernels; 0 = none */
    int profile;           /* emu: profile the memory accesses of instrumented kernels
                              (instead of checking them) */
    int profile_blocks;    /* emu, with profile: blocks per launch to profile (0 = all) */
} hn_backend_opts;

typedef struct {
    const char *name;      /* "cuda" or "emu" */
    hn_target target;      /* what hn_compile must produce for this backend */

    void (*destroy)(hn_backend *b);
    void (*device_info)(hn_backend *b, hn_device_info *info);

    /* Loads kernel number `index` of a compiled image. The kernel's declared
     * parameters are described in params (up to max_params; *n_params gets the
     * count, or -1 if the backend cannot tell). */
    int (*kernel_load)(hn_backend *b, const hn_module_image *img, int index, hn_kernel **out,
                       hn_err *err);
    void (*kernel_free)(hn_backend *b, hn_kernel *k);
    int (*kernel_params)(hn_backend *b, hn_kernel *k, hn_param_info *params, int max_params,
                         int *n_params, hn_err *err);

    int (*alloc)(hn_backend *b, size_t bytes, hn_dptr *out, hn_err *err);
    void (*free)(hn_backend *b, hn_dptr p);
    int (*upload)(hn_backend *b, hn_dptr dst, const void *src, size_t bytes, hn_err *err);
    int (*download)(hn_backend *b, void *dst, hn_dptr src, size_t bytes, hn_err *err);
    int (*fill)(hn_backend *b, hn_dptr dst, unsigned char byte, size_t bytes, hn_err *err);

    /* Checks dims against the device's and the kernel's limits (threads, block
     * and grid dimensions, shared memory incl. opt-in above 48 KB) and launches
     * on the backend's stream. Returns -1 with a message naming the limit broken
     * or, on emu, the fault (kernel, block, thread, line). */
    int (*launch)(hn_backend *b, hn_kernel *k, const hn_launch_dims *dims, void **args,
                  hn_err *err);
    /* Waits for all work; reports asynchronous launch failures. */
    int (*sync)(hn_backend *b, hn_err *err);

    int (*event_create)(hn_backend *b, hn_event **out, hn_err *err);
    void (*event_destroy)(hn_backend *b, hn_event *e);
    int (*event_record)(hn_backend *b, hn_event *e, hn_err *err);
    /* Milliseconds between two recorded events (waits for the second). */
    int (*event_elapsed)(hn_backend *b, hn_event *start, hn_event *stop, float *ms, hn_err *err);

    /* Evicts the device's L2 cache (writes a buffer of its size), outside any
     * timed interval; a no-op where meaningless. */
    int (*flush_l2)(hn_backend *b, hn_err *err);

    /* Kernel printf output from now on: at most max_lines lines per launch reach
     * stdout (< 0: all of it); the rest is counted, and *dropped (if not NULL)
     * gets the lines held back since the previous call. On cuda a "launch" is
     * the output between two synchronising calls. */
    int (*printf_limit)(hn_backend *b, long max_lines, long *dropped, hn_err *err);

    /* Optional (NULL: fill with 0xFF): fills with 0xFF bytes (NaN for floats) and,
     * where the backend tracks initialisation (the emulator's sanitizer), marks
     * the bytes as never written, so a kernel reading them is reported. */
    int (*poison)(hn_backend *b, hn_dptr dst, size_t bytes, hn_err *err);
    /* Optional (NULL: nothing): names a buffer for the backend's messages (the
     * emulator's faults and sanitizer say "device buffer 'dlogits'", not "#4"). */
    void (*label)(hn_backend *b, hn_dptr p, const char *name);
    /* Optional (NULL: module variables cannot be written): writes bytes from src
     * to the start of the module variable `lowered` (an entry of
     * hn_module_image.sym_lowered) of k's module and zeroes the rest of it, as
     * cudaMemcpyToSymbol into a freshly loaded module would leave it; *size gets
     * the variable's size (0 if not found). Fails when bytes is more than that. */
    int (*symbol_write)(hn_backend *b, hn_kernel *k, const char *lowered, const void *src, size_t bytes,
                        size_t *size, hn_err *err);
    /* Optional (NULL: nothing is checked): what the sanitizer found since the
     * last call (hn_backend_opts.sanitize), then forgets it. */
    void (*sanitizer_take)(hn_backend *b, hn_san_findings *out);
    /* Optional (NULL: no profile): the memory profile of the launches since the
     * last call (hn_backend_opts.profile), then forgets it. */
    void (*profile_take)(hn_backend *b, hn_profile *out);

    /* Optional (NULL where the backend cannot tell): measures the SM clock now,
     * in MHz, with a short probe kernel (clock64 against %globaltimer). */
    int (*sm_clock)(hn_backend *b, double *mhz, hn_err *err);
} hn_backend_ops;

struct hn_backend {
    const hn_backend_ops *ops;
};

/* Creates a backend by name: "cuda", "emu" or "auto" (cuda if a driver and a
 * device are present, else emu; says which on stderr when verbose). */
int hn_backend_create(const char *name, const hn_backend_opts *opts, int verbose,
                      hn_backend **out, hn_err *err);
void hn_backend_destroy(hn_backend *b);

/* Constructors of the two implementations. */
int hn_backend_cuda_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err);
int hn_backend_emu_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err);

/* Whether a CUDA driver can be loaded and sees at least one device; fills why
 * with the reason when not (no libcuda.so.1, no device, init error). */
int hn_cuda_available(char *why, size_t why_size);
/* hn_cuda_available asked in a child process, so that the caller's process
 * neither loads the driver nor initialises CUDA (a run forks its worker after
 * this). 1 when a device is usable (or the child could not be started: the
 * backend then says why itself), else 0 with why. */
int hn_cuda_available_isolated(char *why, size_t why_size);
/* The devices the CUDA driver sees (0 without a driver). Initialises the
 * driver: never call it in a process that forks workers afterwards. */
int hn_cuda_device_count(void);
/* The cuda backend's own stream (a CUstream), for libraries such as cuBLAS that
 * must issue work where the harness times it; NULL for other backends. */
void *hn_backend_cuda_stream(hn_backend *b);

/* The driver's CUDA version as "13.0", or "none" (returns -1). */
int hn_cuda_driver_version(char *buf, size_t size);

#endif
