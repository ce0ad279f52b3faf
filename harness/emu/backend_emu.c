/*
 * backend_emu.c: the "emu" backend (backend.h): CUDA kernels compiled for the
 * host (emu_compile.c) and run on the CPU with GPU semantics (emu_run.c,
 * emu_sched.c).
 *
 *   device memory   host mappings with a guard page after each buffer
 *                   (emu_mem.c); hn_dptr is the host address
 *   kernels         dlopen'd modules, their checksum verified first (cache.h);
 *                   one hn_kernel per (module, kernel)
 *   launches        synchronous, on the backend's worker pool; a fault, a
 *                   divergent barrier, a deadlock or a time-out returns -1 with
 *                   a message and leaves the backend usable
 *   events          the host's monotonic clock
 *   sanitizer       with opts.sanitize, an emu_san that instrumented modules
 *                   report to; it follows every buffer (uploads and fills write
 *                   it, poison unwrites it); sanitizer_take hands out findings
 *
 * Invariants: x86-64 only (creation fails elsewhere, saying so); kernels,
 * buffers and events must be released before the backend.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "cache.h"
#include "emu.h"
#include "emu_mem.h"
#include "emu_run.h"
#include "emu_san.h"
#include "emu_sched.h"

#define SHARED_DEFAULT (48u * 1024u)
#define SHARED_OPTIN (227u * 1024u)

typedef struct {
    hn_backend base;
    hn_backend_opts opts;
    emu_pool *pool;
    emu_mem *mem;
    emu_san *san;           /* NULL unless opts.sanitize (or HARNESS_EMU_SANITIZE) */
    int san_strict;         /* HARNESS_EMU_SANITIZE: a launch with findings fails */
    hn_device_info info;
    char *flush_buf;
    size_t flush_bytes;
} emu_backend;

/* One loaded module and one kernel of it. */
typedef struct {
    void *dl;
    void (*fn)(void **args);
    const hn_emu_kinfo *info;
    char *so_path;
    uintptr_t base, text_lo, text_hi;
    size_t tls_bytes;  /* the module's thread-locals: all its static __shared__ */
} emu_module;

struct hn_kernel {
    emu_module m;       /* the module compiled (instrumented, for a profile) */
    emu_module plain;   /* a profile's plain module (dl NULL if none): the blocks it
                           does not record run this */
    int device_vars;    /* the source has __device__ variables: one module for every block */
    int max_threads;    /* its __launch_bounds__, from NVRTC's build of the source; <= 0: none known */
};

struct hn_event {
    double t;
    int recorded;
};

static emu_backend *eb(hn_backend *b) {
    return (emu_backend *)b;
}

/* ------------------------------------------------------------------------- */
/* device description */

static void cpu_model(char *out, size_t size, int *mhz) {
    snprintf(out, size, "unknown CPU");
    *mhz = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    int have_model = 0;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        if (!have_model && strncmp(line, "model name", 10) == 0) {
            snprintf(out, size, "%s", hn_trim(colon + 1));
            have_model = 1;
        } else if (!*mhz && strncmp(line, "cpu MHz", 7) == 0) {
            *mhz = atoi(hn_trim(colon + 1));
        }
        if (have_model && *mhz) break;
    }
    fclose(f);
}

static void fill_info(hn_device_info *d, int threads) {
    memset(d, 0, sizeof *d);
    char model[160];
    int mhz;
    cpu_model(model, sizeof model, &mhz);
    snprintf(d->name, sizeof d->name, "CPU emulator (%d thread%s, %s)", threads,
             threads == 1 ? "" : "s", model);
    snprintf(d->arch, sizeof d->arch, "emu");
    d->sm_count = threads;
    d->warp_size = HN_EMU_WARP_SIZE;
    d->max_threads_per_block = HN_EMU_MAX_THREADS;
    d->max_block_dim[0] = 1024;
    d->max_block_dim[1] = 1024;
    d->max_block_dim[2] = 64;
    d->max_grid_dim[0] = 2147483647;
    d->max_grid_dim[1] = 65535;
    d->max_grid_dim[2] = 65535;
    d->shared_per_block = SHARED_DEFAULT;
    d->shared_per_block_optin = SHARED_OPTIN;
    long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);
    d->global_mem = pages > 0 && pg > 0 ? (size_t)pages * (size_t)pg : 0;
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    d->l2_bytes = llc > 0 ? (size_t)llc : 0;
    d->sm_clock_khz = mhz * 1000;
}

static void emu_device_info(hn_backend *b, hn_device_info *info) {
    *info = eb(b)->info;
}

/* ------------------------------------------------------------------------- */
/* kernels */

typedef struct {
    uintptr_t base;
    uintptr_t text_lo, text_hi;
    size_t tls;
    int found;
} module_ranges;

static int find_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    module_ranges *m = data;
    if ((uintptr_t)info->dlpi_addr != m->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_TLS) m->tls = ph->p_memsz;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = m->base + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!m->found || lo < m->text_lo) m->text_lo = lo;
        if (!m->found || hi > m->text_hi) m->text_hi = hi;
        m->found = 1;
    }
    return m->found;
}

/* dlsym for a function: ISO C has no cast from void * to a function pointer,
 * POSIX guarantees the representation, so copy the bytes. */
static void sym_fn(void *dl, const char *name, void *fnptr, size_t size) {
    void *p = dlsym(dl, name);
    if (size == sizeof p) memcpy(fnptr, &p, sizeof p);
}

static void module_unload(hn_backend *b, emu_module *m) {
    if (m->dl) {
        /* dlopen counts references: the module (and the static __shared__
         * storage its thread-locals point at) goes only with the last one. */
        void *dl = m->dl;
        dlclose(dl);
        void *still = dlopen(m->so_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (still) dlclose(still);
        else emu_pool_forget_module(eb(b)->pool, dl);
    }
    free(m->so_path);
    memset(m, 0, sizeof *m);
}

static void emu_kernel_free(hn_backend *b, hn_kernel *k) {
    if (!k) return;
    module_unload(b, &k->m);
    module_unload(b, &k->plain);
    free(k);
}

/* Loads kernel `sym` of the module at path into m. */
static int module_load(const char *path, const char *sym, emu_module *m, hn_err *err) {
    memset(m, 0, sizeof *m);
    /* A module that lost bytes since it was compiled would fault (SIGBUS) when
     * its pages are touched: its checksum is checked first. */
    char why[256];
    int st = hn_cache_verify(path, NULL, NULL, why, sizeof why);
    if (st != HN_CACHE_OK)
        return hn_errf(err, "emulator: cannot load %s: %s (the next compile builds it again)", path,
                       st == HN_CACHE_MISSING ? "no such file" : why);
    m->so_path = xstrdup(path);
    m->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->dl) return hn_errf(err, "emulator: cannot load %s: %s", path, dlerror());
    int (*abi)(void) = NULL;
    void (*init)(const hn_emu_rt *, long) = NULL;
    sym_fn(m->dl, "hn_emu_module_abi", &abi, sizeof abi);
    sym_fn(m->dl, "hn_emu_module_init", &init, sizeof init);
    if (!abi || !init || abi() != HN_EMU_ABI_VERSION)
        return hn_errf(err, "emulator: %s was built for another emulator version; delete it to rebuild", path);
    init(emu_sched_rt(), emu_sched_tls_offset());
    /* an instrumented module: its accesses go to the sanitizer */
    void (*san_init)(const hn_emu_san_rt *) = NULL;
    sym_fn(m->dl, "hn_emu_module_san", &san_init, sizeof san_init);
    if (san_init) san_init(emu_san_rt());
    sym_fn(m->dl, sym, &m->fn, sizeof m->fn);
    char *info_sym = xasprintf("%s_info", sym);
    m->info = dlsym(m->dl, info_sym);
    free(info_sym);
    if (!m->fn || !m->info) return hn_errf(err, "emulator: %s has no launch wrapper %s", path, sym);
    Dl_info di;
    if (dladdr((void *)m->info, &di) == 0) return hn_errf(err, "emulator: cannot locate %s in memory", path);
    module_ranges r = {.base = (uintptr_t)di.dli_fbase};
    dl_iterate_phdr(find_module, &r);
    if (!r.found) return hn_errf(err, "emulator: cannot find the code of %s", path);
    m->base = r.base;
    m->text_lo = r.text_lo;
    m->text_hi = r.text_hi;
    m->tls_bytes = r.tls;
    return 0;
}

static int emu_kernel_load(hn_backend *b, const hn_module_image *img, int index, hn_kernel **out,
                           hn_err *err) {
    *out = NULL;
    if (img->target != HN_TARGET_EMU || !img->path)
        return hn_errf(err, "emulator: the module was not compiled for the emulator");
    if (index < 0 || index >= img->n_kernels)
        return hn_errf(err, "emulator: kernel %d of a module with %d", index, img->n_kernels);
    hn_kernel *k = xcalloc(1, sizeof *k);
    if (module_load(img->path, img->lowered[index], &k->m, err) != 0) goto fail;
    if (img->companion && module_load(img->companion, img->lowered[index], &k->plain, err) != 0) goto fail;
    k->device_vars = img->device_vars;
    k->max_threads = img->res ? img->res[index].max_threads : -1;
    *out = k;
    return 0;
fail:
    emu_kernel_free(b, k);
    return -1;
}

static int emu_kernel_params(hn_backend *b, hn_kernel *k, hn_param_info *params, int max_params,
                             int *n_params, hn_err *err) {
    (void)b, (void)err;
    *n_params = k->m.info->n_params;
    for (int i = 0; i < k->m.info->n_params && i < max_params; i++) {
        params[i].kind = k->m.info->kinds[i];
        params[i].size = k->m.info->sizes[i];
    }
    return 0;
}

/* ------------------------------------------------------------------------- */
/* memory */

static int emu_alloc(hn_backend *b, size_t bytes, hn_dptr *out, hn_err *err) {
    emu_backend *e = eb(b);
    void *p;
    if (emu_mem_alloc(e->mem, bytes, &p, err) != 0) return -1;
    if (e->san) {
        emu_region r;
        unsigned long id;
        if (emu_mem_info(e->mem, p, &r, &id)) emu_san_buffer_add(e->san, &r, id);
    }
    *out = (hn_dptr)(uintptr_t)p;
    return 0;
}

/* The address and size of module variable `lowered` (an accessor the
 * generated unit exports, emu_compile.c) of one module, or NULL. */
static void *module_symbol(const emu_module *m, const char *lowered, size_t *size) {
    void *(*get)(unsigned long *) = NULL;
    unsigned long n = 0;
    if (m->dl) sym_fn(m->dl, lowered, &get, sizeof get);
    void *at = get ? get(&n) : NULL;
    *size = at ? (size_t)n : 0;
    return at;
}

static int emu_symbol_write(hn_backend *b, hn_kernel *k, const char *lowered, const void *src, size_t bytes,
                            size_t *size, hn_err *err) {
    (void)b;
    void *at = module_symbol(&k->m, lowered, size);
    if (!at) return hn_errf(err, "emulator: %s has no variable accessor %s", k->m.so_path, lowered);
    if (bytes > *size) return hn_errf(err, "%zu bytes given for a variable of %zu bytes", bytes, *size);
    /* a profile's plain module has a copy of its own */
    size_t plain_size = 0;
    void *plain = k->plain.dl ? module_symbol(&k->plain, lowered, &plain_size) : NULL;
    void *const dst[2] = {at, plain};
    for (int i = 0; i < 2; i++) {
        if (!dst[i]) continue;
        memcpy(dst[i], src, bytes);
        memset((char *)dst[i] + bytes, 0, *size - bytes);
    }
    return 0;
}

static void emu_label(hn_backend *b, hn_dptr p, const char *name) {
    emu_backend *e = eb(b);
    emu_mem_label(e->mem, (void *)(uintptr_t)p, name);
    if (e->san) emu_san_buffer_label(e->san, (void *)(uintptr_t)p, name);
}

static void emu_free(hn_backend *b, hn_dptr p) {
    emu_backend *e = eb(b);
    if (e->san) emu_san_buffer_remove(e->san, (void *)(uintptr_t)p);
    emu_mem_free(e->mem, (void *)(uintptr_t)p);
}

static int check_range(emu_backend *e, const char *what, hn_dptr p, size_t bytes, hn_err *err) {
    if (bytes == 0 || emu_mem_contains(e->mem, (void *)(uintptr_t)p, bytes)) return 0;
    return hn_errf(err, "emulator: %s of %zu bytes at %p is not inside one device buffer", what,
                   bytes, (void *)(uintptr_t)p);
}

static int emu_upload(hn_backend *b, hn_dptr dst, const void *src, size_t bytes, hn_err *err) {
    if (check_range(eb(b), "upload", dst, bytes, err) != 0) return -1;
    if (bytes) memcpy((void *)(uintptr_t)dst, src, bytes);
    if (eb(b)->san) emu_san_mark(eb(b)->san, (void *)(uintptr_t)dst, bytes, 1);
    return 0;
}

static int emu_download(hn_backend *b, void *dst, hn_dptr src, size_t bytes, hn_err *err) {
    if (check_range(eb(b), "download", src, bytes, err) != 0) return -1;
    if (bytes) memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return 0;
}

static int emu_fill(hn_backend *b, hn_dptr dst, unsigned char byte, size_t bytes, hn_err *err) {
    if (check_range(eb(b), "fill", dst, bytes, err) != 0) return -1;
    if (bytes) memset((void *)(uintptr_t)dst, byte, bytes);
    if (eb(b)->san) emu_san_mark(eb(b)->san, (void *)(uintptr_t)dst, bytes, 1);
    return 0;
}

static int emu_poison(hn_backend *b, hn_dptr dst, size_t bytes, hn_err *err) {
    if (check_range(eb(b), "poison", dst, bytes, err) != 0) return -1;
    if (bytes) memset((void *)(uintptr_t)dst, 0xFF, bytes);
    if (eb(b)->san) emu_san_mark(eb(b)->san, (void *)(uintptr_t)dst, bytes, 0);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* launches */

static int check_dims(const emu_backend *e, const hn_kernel *k, const hn_launch_dims *d,
                      hn_err *err) {
    static const char axis[] = "xyz";
    const hn_device_info *in = &e->info;
    for (int i = 0; i < 3; i++) {
        if (d->block[i] < 1 || d->block[i] > (unsigned)in->max_block_dim[i])
            return hn_errf(err, "block dimension %c = %u is outside the device limit 1..%d", axis[i],
                           d->block[i], in->max_block_dim[i]);
        if (d->grid[i] < 1 || d->grid[i] > (unsigned)in->max_grid_dim[i])
            return hn_errf(err, "grid dimension %c = %u is outside the device limit 1..%d", axis[i],
                           d->grid[i], in->max_grid_dim[i]);
    }
    unsigned long long threads = (unsigned long long)d->block[0] * d->block[1] * d->block[2];
    if (threads > (unsigned long long)in->max_threads_per_block)
        return hn_errf(err, "block of %u x %u x %u = %llu threads exceeds the device limit of %d "
                            "threads per block",
                       d->block[0], d->block[1], d->block[2], threads, in->max_threads_per_block);
    if (k->max_threads > 0 && threads > (unsigned long long)k->max_threads)
        return hn_errf(err, "block of %u x %u x %u = %llu threads exceeds this kernel's __launch_bounds__ of %d "
                            "threads (NVRTC's build of it says so): a GPU refuses this launch",
                       d->block[0], d->block[1], d->block[2], threads, k->max_threads);
    if (d->shared_bytes > in->shared_per_block_optin)
        return hn_errf(err, "dynamic shared memory of %zu bytes exceeds the device limit of %zu "
                            "bytes (with opt-in)",
                       d->shared_bytes, in->shared_per_block_optin);
    if (d->shared_bytes + k->m.tls_bytes > in->shared_per_block_optin)
        return hn_errf(err, "dynamic (%zu bytes) plus static (%zu bytes: every __shared__ "
                            "variable of the module) shared memory exceeds the device limit of "
                            "%zu bytes",
                       d->shared_bytes, k->m.tls_bytes, in->shared_per_block_optin);
    return 0;
}

static int emu_launch(hn_backend *b, hn_kernel *k, const hn_launch_dims *d, void **args,
                      hn_err *err) {
    emu_backend *e = eb(b);
    if (check_dims(e, k, d, err) != 0) return hn_err_prefix(err, "kernel '%s'", k->m.info->name);
    if (k->m.info->n_params > 0 && !args)
        return hn_errf(err, "kernel '%s': %d parameters but no arguments", k->m.info->name,
                       k->m.info->n_params);
    for (int i = 0; i < k->m.info->n_params; i++)
        if (!args[i])
            return hn_errf(err, "kernel '%s': argument %d is NULL (args[i] must point at the "
                                "value)",
                           k->m.info->name, i);
    emu_launch_req r = {
        .name = k->m.info->name,
        .fn = k->m.fn,
        .args = args,
        .grid = {d->grid[0], d->grid[1], d->grid[2]},
        .block = {d->block[0], d->block[1], d->block[2]},
        .dyn_shared = d->shared_bytes,
        .text_lo = k->m.text_lo,
        .text_hi = k->m.text_hi,
        .so_base = k->m.base,
        .so_path = k->m.so_path,
        .timeout = e->opts.kernel_timeout,
        .mem = e->mem,
        .module = k->m.dl,
        .shared_limit = e->info.shared_per_block_optin,
        .san = e->san,
    };
    if (e->opts.profile && k->plain.dl && !k->device_vars) {
        /* the blocks the profile does not record run the plain module */
        r.plain.fn = k->plain.fn;
        r.plain.module = k->plain.dl;
        r.plain.text_lo = k->plain.text_lo;
        r.plain.text_hi = k->plain.text_hi;
        r.plain.so_base = k->plain.base;
        r.plain.so_path = k->plain.so_path;
    }
    if (e->san) {
        emu_san_launch l = {.kernel = k->m.info->name, .so_path = k->m.so_path, .so_base = k->m.base,
                            .text_lo = k->m.text_lo, .text_hi = k->m.text_hi, .grid = r.grid, .block = r.block};
        emu_san_launch_begin(e->san, &l);
    }
    /* launches are synchronous: busy for exactly their duration */
    if (e->opts.busy_since) *e->opts.busy_since = hn_now();
    int rc = emu_pool_launch(e->pool, &r, err);
    if (e->opts.busy_since) *e->opts.busy_since = 0;
    if (e->san_strict) {
        hn_san_findings f;
        emu_san_take(e->san, &f);
        if (f.first_class >= 0) {
            fprintf(stderr, "harness: sanitizer (HARNESS_EMU_SANITIZE): kernel '%s':\n%s", k->m.info->name, f.report);
            hn_errf(err, "%s", f.first);
            rc = -1;
        }
        hn_san_findings_free(&f);
    }
    return rc;
}

static int emu_printf_limit(hn_backend *b, long max_lines, long *dropped, hn_err *err) {
    (void)b, (void)err;
    long d = emu_sched_print_dropped();
    if (dropped) *dropped = d;
    emu_sched_print_limit(max_lines);
    return 0;
}

static void emu_sanitizer_take(hn_backend *b, hn_san_findings *out) {
    emu_san_take(eb(b)->san, out);
}

static void emu_profile_take(hn_backend *b, hn_profile *out) {
    emu_san_profile_take(eb(b)->san, out);
}

static int emu_sync(hn_backend *b, hn_err *err) {
    (void)b, (void)err;
    return 0; /* launches are synchronous */
}

/* ------------------------------------------------------------------------- */
/* events and the cache flush */

static int emu_event_create(hn_backend *b, hn_event **out, hn_err *err) {
    (void)b, (void)err;
    *out = xcalloc(1, sizeof **out);
    return 0;
}

static void emu_event_destroy(hn_backend *b, hn_event *ev) {
    (void)b;
    free(ev);
}

static int emu_event_record(hn_backend *b, hn_event *ev, hn_err *err) {
    (void)b, (void)err;
    ev->t = hn_now();
    ev->recorded = 1;
    return 0;
}

static int emu_event_elapsed(hn_backend *b, hn_event *start, hn_event *stop, float *ms,
                             hn_err *err) {
    (void)b;
    if (!start->recorded || !stop->recorded)
        return hn_errf(err, "emulator: elapsed time of an event that was never recorded");
    *ms = (float)((stop->t - start->t) * 1e3);
    return 0;
}

/* Writes a buffer the size of the last-level cache (at most 32 MB). */
static int emu_flush_l2(hn_backend *b, hn_err *err) {
    (void)err;
    emu_backend *e = eb(b);
    size_t n = e->info.l2_bytes;
    if (n > ((size_t)32 << 20)) n = (size_t)32 << 20;
    if (!n) return 0;
    /* A cold cache means the kernel finds none of its buffers cached: evicting
     * their lines does that at a cost in proportion to them, where writing the
     * whole last-level cache took ~90 % of a small case's row (a 32 MiB memset
     * before each of its samples). Buffers of more than a quarter of it are
     * written over instead, as a GPU's L2 is. */
    if (emu_mem_evict(e->mem, n / 4)) return 0;
    if (!e->flush_buf) {
        e->flush_buf = xmalloc(n);
        e->flush_bytes = n;
    }
    static unsigned char v;
    memset(e->flush_buf, ++v, e->flush_bytes);
    return 0;
}

/* ------------------------------------------------------------------------- */

static void emu_destroy(hn_backend *b) {
    emu_backend *e = eb(b);
    emu_pool_destroy(e->pool);
    emu_mem_destroy(e->mem);
    emu_san_destroy(e->san);
    free(e->flush_buf);
    free(e);
}

static const hn_backend_ops emu_ops = {
    .name = "emu",
    .target = HN_TARGET_EMU,
    .destroy = emu_destroy,
    .device_info = emu_device_info,
    .kernel_load = emu_kernel_load,
    .kernel_free = emu_kernel_free,
    .kernel_params = emu_kernel_params,
    .alloc = emu_alloc,
    .free = emu_free,
    .upload = emu_upload,
    .download = emu_download,
    .fill = emu_fill,
    .poison = emu_poison,
    .label = emu_label,
    .symbol_write = emu_symbol_write,
    .sanitizer_take = emu_sanitizer_take,
    .profile_take = emu_profile_take,
    .launch = emu_launch,
    .sync = emu_sync,
    .printf_limit = emu_printf_limit,
    .event_create = emu_event_create,
    .event_destroy = emu_event_destroy,
    .event_record = emu_event_record,
    .event_elapsed = emu_event_elapsed,
    .flush_l2 = emu_flush_l2,
};

size_t hn_emu_stack_bytes(void) {
    const char *v = getenv("HARNESS_EMU_STACK_KB");
    long kb = v && *v ? strtol(v, NULL, 10) : 256;
    if (kb < 64) kb = 64;
    if (kb > 65536) kb = 65536;
    return (size_t)kb * 1024;
}

int hn_backend_emu_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err) {
    *out = NULL;
#if !defined(__x86_64__) || !defined(__linux__)
    (void)opts;
    return hn_errf(err, "the CPU emulator needs an x86-64 Linux host (its fiber switch and fault "
                        "handling are written for it)");
#else
    emu_backend *e = xcalloc(1, sizeof *e);
    e->base.ops = &emu_ops;
    if (opts) e->opts = *opts;
    int threads = e->opts.emu_threads > 0 ? e->opts.emu_threads : hn_cpu_count();
    /* far more than any machine's cores; --emu-threads 100000 ran the process
     * out of memory (an abort) before a thread could fail to start */
    if (threads > 4096) {
        free(e);
        return hn_errf(err, "--emu-threads %d: at most 4096 emulator worker threads", threads);
    }
    if (emu_pool_create(threads, hn_emu_stack_bytes(), &e->pool, err) != 0) {
        free(e);
        return -1;
    }
    e->mem = emu_mem_create();
    const char *env = getenv("HARNESS_EMU_SANITIZE");
    if (!e->opts.sanitize && env && *env) {
        /* every module is instrumented (emu_compile.c); findings fail launches */
        unsigned bits;
        if (hn_san_parse(env, &bits, err) != 0) {
            hn_err_prefix(err, "HARNESS_EMU_SANITIZE");
            emu_pool_destroy(e->pool);
            emu_mem_destroy(e->mem);
            free(e);
            return -1;
        }
        e->opts.sanitize = bits;
        e->san_strict = 1;
    }
    if (e->opts.sanitize || e->opts.profile) e->san = emu_san_create(e->opts.sanitize);
    if (e->opts.profile) emu_san_profile(e->san, e->opts.profile_blocks);
    fill_info(&e->info, threads);
    *out = &e->base;
    return 0;
#endif
}
