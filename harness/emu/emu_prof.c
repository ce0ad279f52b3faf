/* emu_prof.c: the emulator's memory profile; see emu_prof.h. */
#define _GNU_SOURCE
#include "emu_prof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

enum { K_LOAD = 0, K_STORE, K_ATOMIC };

/* What one instruction did, summed over its requests. */
typedef struct {
    uintptr_t pc;
    int space, kind;
    double requests, sectors, wavefronts, ideal, accesses;
} prof_site;

/* The addresses one lane gave one instruction, in the order it executed it:
 * entry k of every lane of a warp makes the instruction's k-th request. An
 * address is its offset in its device buffer or shared variable (sectors and
 * banks count from the start of each, as if it were aligned as a GPU aligns
 * it: cudaMalloc's 256 bytes, the start of shared memory) above the
 * buffer's or variable's number. Lanes run one after another in loop mode,
 * so each appends to a stream of its own. */
typedef struct {
    uint64_t *v;
    int n, cap;
} prof_lane;
#define OBJ_SHIFT 40

#define PROF_CACHE 64

struct emu_prof_worker {
    uintptr_t cache_pc[PROF_CACHE];
    int8_t cache_space[PROF_CACHE];
    int cache_site[PROF_CACHE];
    /* pc -> site index (open addressing) */
    uintptr_t *map_pc;
    int *map_site;
    int map_cap;
    prof_site *sites;
    int n_sites, cap_sites;
    uint8_t *site_size;  /* [sites]: bytes per access of the instruction */
    /* the block being recorded */
    int active;
    unsigned nthreads, nwarps;
    prof_lane *lanes;  /* [nwarps][occ_cap][32]: each lane's addresses per site */
    int occ_cap;       /* the site dimension `lanes` was laid out for */
    unsigned long long blocks;
};

struct emu_prof {
    int blocks_per_launch;
    unsigned long long stride, phase;   /* the launch's profiled blocks: linear % stride == phase */
    pthread_mutex_t mu;
    prof_site *sites;
    int n_sites, cap_sites;
    unsigned long long blocks, blocks_profiled;
    int launches;
    char *kernel, *so_path;
    uintptr_t so_base, text_lo, text_hi;
};

/* ------------------------------------------------------------------------- */

emu_prof *emu_prof_create(int blocks) {
    emu_prof *p = xcalloc(1, sizeof *p);
    p->blocks_per_launch = blocks < 0 ? 0 : blocks;
    p->stride = 1;
    pthread_mutex_init(&p->mu, NULL);
    return p;
}

void emu_prof_destroy(emu_prof *p) {
    if (!p) return;
    free(p->sites);
    free(p->kernel);
    free(p->so_path);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static int is_prime(unsigned long long n) {
    if (n < 2) return 0;
    for (unsigned long long d = 2; d * d <= n; d++)
        if (n % d == 0) return 0;
    return 1;
}

void emu_prof_launch_begin(emu_prof *p, unsigned long long nblocks, const char *kernel, const char *so_path,
                           uintptr_t so_base, uintptr_t text_lo, uintptr_t text_hi) {
    pthread_mutex_lock(&p->mu);
    unsigned long long want = (unsigned long long)p->blocks_per_launch;
    p->stride = 1;
    p->phase = 0;
    if (want && nblocks > want) {
        /* a prime stride near nblocks / want (never a divisor of the grid's
         * sides, so the blocks profiled are spread over all of them), the
         * first one in the middle of the first stride */
        unsigned long long s = nblocks / want;
        while (!is_prime(s)) s++;
        p->stride = s;
        p->phase = s / 2;
    }
    p->blocks += nblocks;
    p->blocks_profiled += p->stride == 1 ? nblocks : (nblocks + p->stride - 1 - p->phase) / p->stride;
    /* the kernels of the launches since the last take, joined by ';' (a
     * variant of several launches is profiled as one, as its row's kernel
     * column lists them) */
    if (p->launches == 0 || !p->kernel) {
        free(p->kernel);
        p->kernel = xstrdup(kernel);
    } else {
        char *k = xasprintf("%s;%s", p->kernel, kernel);
        free(p->kernel);
        p->kernel = k;
    }
    p->launches++;
    if (!p->so_path || strcmp(p->so_path, so_path) != 0) {
        free(p->so_path);
        p->so_path = xstrdup(so_path);
    }
    p->so_base = so_base;
    p->text_lo = text_lo;
    p->text_hi = text_hi;
    pthread_mutex_unlock(&p->mu);
}

int emu_prof_records(const emu_prof *p, unsigned long long linear) {
    return linear % p->stride == p->phase;
}

emu_prof_worker *emu_prof_worker_create(void) {
    emu_prof_worker *w = xcalloc(1, sizeof(emu_prof_worker));
    memset(w->cache_space, -1, sizeof w->cache_space);
    return w;
}

static void free_lanes(emu_prof_worker *w) {
    if (w->lanes)
        for (size_t i = 0; i < (size_t)w->nwarps * (size_t)w->occ_cap * HN_EMU_WARP_SIZE; i++) free(w->lanes[i].v);
    free(w->lanes);
    w->lanes = NULL;
    w->occ_cap = 0;
}

void emu_prof_worker_destroy(emu_prof_worker *w) {
    if (!w) return;
    free_lanes(w);
    free(w->site_size);
    free(w->map_pc);
    free(w->map_site);
    free(w->sites);
    free(w);
}

/* ------------------------------------------------------------------------- */
/* recording */

static int site_of(emu_prof_worker *w, uintptr_t pc, int space, int kind);

#define LANES(w, warp, site) (&(w)->lanes[((size_t)(warp) * (size_t)(w)->occ_cap + (size_t)(site)) * HN_EMU_WARP_SIZE])

/* Makes room for site index `need` in `lanes` (keeping what they hold). */
static void grow_block_arrays(emu_prof_worker *w, int need) {
    if (need < w->occ_cap) return;
    int cap = w->occ_cap ? w->occ_cap : 16;
    while (cap <= need) cap *= 2;
    prof_lane *lanes = xcalloc((size_t)w->nwarps * (size_t)cap * HN_EMU_WARP_SIZE, sizeof *lanes);
    for (unsigned wp = 0; w->lanes && wp < w->nwarps; wp++)
        memcpy(lanes + (size_t)wp * cap * HN_EMU_WARP_SIZE, LANES(w, wp, 0),
               (size_t)w->occ_cap * HN_EMU_WARP_SIZE * sizeof *lanes);
    free(w->lanes);
    w->lanes = lanes;
    w->occ_cap = cap;
}

int emu_prof_block_begin(emu_prof_worker *w, const emu_prof *p, unsigned long long linear, unsigned nthreads) {
    w->active = 0;
    if (!emu_prof_records(p, linear)) return 0;
    unsigned nwarps = (nthreads + HN_EMU_WARP_SIZE - 1) / HN_EMU_WARP_SIZE;
    if (nthreads != w->nthreads || nwarps != w->nwarps) {
        /* another shape: lay the streams out again */
        free_lanes(w);
        w->nthreads = nthreads;
        w->nwarps = nwarps;
    }
    grow_block_arrays(w, w->n_sites > 16 ? w->n_sites : 16);
    w->active = 1;
    w->blocks++;
    return 1;
}

static int site_of(emu_prof_worker *w, uintptr_t pc, int space, int kind) {
    if (w->map_cap == 0 || 2 * (w->n_sites + 1) > w->map_cap) {
        int cap = w->map_cap ? 2 * w->map_cap : 256;
        uintptr_t *pcs = xcalloc((size_t)cap, sizeof *pcs);
        int *ids = xcalloc((size_t)cap, sizeof *ids);
        for (int i = 0; i < w->n_sites; i++) {
            uintptr_t k = w->sites[i].pc;
            unsigned h = (unsigned)((k >> 2) * 0x9e3779b1u) & (unsigned)(cap - 1);
            while (pcs[h]) h = (h + 1) & (unsigned)(cap - 1);
            pcs[h] = k;
            ids[h] = i;
        }
        free(w->map_pc);
        free(w->map_site);
        w->map_pc = pcs;
        w->map_site = ids;
        w->map_cap = cap;
    }
    unsigned h = (unsigned)((pc >> 2) * 0x9e3779b1u) & (unsigned)(w->map_cap - 1);
    while (w->map_pc[h]) {
        if (w->map_pc[h] == pc) {
            int id = w->map_site[h];
            if (w->sites[id].space == space) return id;
            /* one instruction reaching both spaces (a generic pointer): a site per space */
        }
        h = (h + 1) & (unsigned)(w->map_cap - 1);
    }
    if (w->n_sites == w->cap_sites) {
        w->cap_sites = w->cap_sites ? 2 * w->cap_sites : 64;
        w->sites = xrealloc(w->sites, (size_t)w->cap_sites * sizeof *w->sites);
        w->site_size = xrealloc(w->site_size, (size_t)w->cap_sites * sizeof *w->site_size);
    }
    int id = w->n_sites++;
    w->site_size[id] = 0;
    memset(&w->sites[id], 0, sizeof w->sites[id]);
    w->sites[id].pc = pc;
    w->sites[id].space = space;
    w->sites[id].kind = kind;
    w->map_pc[h] = pc;
    w->map_site[h] = id;
    if (w->active) grow_block_arrays(w, id);
    return id;
}

/* The site of (pc, space) through a small direct-mapped cache in front of
 * the hash table (a loop body alternates between a few instructions). */
static inline int site_cached(emu_prof_worker *w, uintptr_t pc, int space, int kind) {
    unsigned h = (unsigned)((pc >> 1) ^ (pc >> 7)) & (PROF_CACHE - 1);
    if (w->cache_pc[h] == pc && w->cache_space[h] == space) return w->cache_site[h];
    int site = site_of(w, pc, space, kind);
    w->cache_pc[h] = pc;
    w->cache_space[h] = (int8_t)space;
    w->cache_site[h] = site;
    return site;
}

void emu_prof_access(emu_prof_worker *w, int space, unsigned obj, uintptr_t off, size_t n,
                     unsigned long long info, uintptr_t pc, unsigned thread) {
    if (!w->active || thread >= w->nthreads) return;
    int kind = (info & HN_EMU_SAN_ATOMIC) ? K_ATOMIC : (info & HN_EMU_SAN_WRITE) ? K_STORE : K_LOAD;
    int site = site_cached(w, pc, space, kind);
    if (!w->site_size[site]) w->site_size[site] = (uint8_t)(n > 255 ? 255 : n);
    prof_lane *l = &LANES(w, thread / HN_EMU_WARP_SIZE, site)[thread % HN_EMU_WARP_SIZE];
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    l->v[l->n++] = ((uint64_t)obj << OBJ_SHIFT) | ((uint64_t)off & ((1ull << OBJ_SHIFT) - 1));
}

/* The 32-byte sectors a global request touches: lanes `mask`, addr[l]. */
static int sectors_of(uint32_t mask, const uint64_t *addr, unsigned size) {
    uint64_t sec[2 * HN_EMU_WARP_SIZE];
    int ns = 0;
    for (int l = 0; l < HN_EMU_WARP_SIZE; l++) {
        if (!(mask >> l & 1u)) continue;
        uint64_t first = addr[l] >> 5, last = (addr[l] + size - 1) >> 5;
        for (uint64_t x = first; x <= last && ns < (int)HN_ARRAY_LEN(sec); x++) {
            int seen = 0;
            for (int i = ns - 1; i >= 0 && !seen; i--) seen = sec[i] == x;
            if (!seen) sec[ns++] = x;
        }
    }
    return ns;
}

/* The wavefronts a shared request takes, and how many it would take without
 * bank conflicts (its phases with an active lane). */
static void wavefronts_of(uint32_t mask, const uint64_t *addr, unsigned size, int *wf, int *ideal) {
    int per_phase = size <= 4 ? 32 : size <= 8 ? 16 : 8;
    *wf = *ideal = 0;
    for (int ph = 0; ph < HN_EMU_WARP_SIZE; ph += per_phase) {
        uint64_t words[4 * HN_EMU_WARP_SIZE];
        int nw = 0;
        for (int l = ph; l < ph + per_phase; l++) {
            if (!(mask >> l & 1u)) continue;
            uint64_t first = addr[l] >> 2, last = (addr[l] + size - 1) >> 2;
            for (uint64_t x = first; x <= last && nw < (int)HN_ARRAY_LEN(words); x++) {
                int seen = 0;
                for (int i = nw - 1; i >= 0 && !seen; i--) seen = words[i] == x;
                if (!seen) words[nw++] = x;
            }
        }
        if (!nw) continue;
        int per_bank[32] = {0}, most = 0;
        for (int i = 0; i < nw; i++) {
            int b = (int)(words[i] & 31u);
            if (++per_bank[b] > most) most = per_bank[b];
        }
        *wf += most;
        *ideal += 1;
    }
}

void emu_prof_block_end(emu_prof_worker *w, int done) {
    if (!w->active) return;
    w->active = 0;
    for (unsigned wp = 0; wp < w->nwarps; wp++)
        for (int site = 0; site < w->n_sites; site++) {
            prof_lane *ln = LANES(w, wp, site);
            int most = 0;
            for (int l = 0; l < HN_EMU_WARP_SIZE; l++)
                if (ln[l].n > most) most = ln[l].n;
            if (done && most) {
                prof_site *st = &w->sites[site];
                unsigned size = w->site_size[site] ? w->site_size[site] : 1;
                uint64_t addr[HN_EMU_WARP_SIZE];
                for (int k = 0; k < most; k++) {
                    uint32_t mask = 0;
                    for (int l = 0; l < HN_EMU_WARP_SIZE; l++)
                        if (ln[l].n > k) {
                            mask |= 1u << l;
                            addr[l] = ln[l].v[k];
                        }
                    st->requests += 1;
                    st->accesses += __builtin_popcount(mask);
                    if (st->space == EMU_PROF_GLOBAL) {
                        st->sectors += sectors_of(mask, addr, size);
                    } else {
                        int wf, ideal;
                        wavefronts_of(mask, addr, size, &wf, &ideal);
                        st->wavefronts += wf;
                        st->ideal += ideal;
                    }
                }
            }
            for (int l = 0; l < HN_EMU_WARP_SIZE; l++) ln[l].n = 0;
        }
}

void emu_prof_merge(emu_prof_worker *w, emu_prof *p) {
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < w->n_sites; i++) {
        const prof_site *s = &w->sites[i];
        if (s->requests == 0) continue;
        prof_site *d = NULL;
        for (int j = 0; j < p->n_sites && !d; j++)
            if (p->sites[j].pc == s->pc && p->sites[j].space == s->space) d = &p->sites[j];
        if (!d) {
            if (p->n_sites == p->cap_sites) {
                p->cap_sites = p->cap_sites ? 2 * p->cap_sites : 64;
                p->sites = xrealloc(p->sites, (size_t)p->cap_sites * sizeof *p->sites);
            }
            d = &p->sites[p->n_sites++];
            *d = *s;
            continue;
        }
        d->requests += s->requests;
        d->sectors += s->sectors;
        d->wavefronts += s->wavefronts;
        d->ideal += s->ideal;
        d->accesses += s->accesses;
    }
    pthread_mutex_unlock(&p->mu);
    /* the sites stay (their pcs are the module's until it is unloaded), their
     * figures start again */
    for (int i = 0; i < w->n_sites; i++) {
        prof_site *s = &w->sites[i];
        s->requests = s->sectors = s->wavefronts = s->ideal = s->accesses = 0;
    }
    w->blocks = 0;
}

/* ------------------------------------------------------------------------- */
/* source lines */

/* Resolves every pc (module addresses) to (file, line, function) with one
 * addr2line run: per address the innermost frame outside the shim. Unknown
 * ones get file "?" and line 0. */
static void resolve(const emu_prof *p, const uintptr_t *pcs, int n, char **files, int *lines, char **funcs) {
    for (int i = 0; i < n; i++) {
        files[i] = NULL;
        lines[i] = 0;
        funcs[i] = NULL;
    }
    if (n > 0 && p->so_path) {
        char **argv = xcalloc((size_t)n + 9, sizeof *argv);
        int a = 0;
        argv[a++] = xstrdup("addr2line");
        argv[a++] = xstrdup("-a");
        argv[a++] = xstrdup("-f");
        argv[a++] = xstrdup("-i");
        argv[a++] = xstrdup("-C");
        argv[a++] = xstrdup("-e");
        argv[a++] = xstrdup(p->so_path);
        for (int i = 0; i < n; i++)
            argv[a++] = pcs[i] >= p->text_lo && pcs[i] < p->text_hi ? xasprintf("0x%lx", (unsigned long)(pcs[i] - p->so_base))
                                                                     : xstrdup("0x0");
        hn_sb sb;
        hn_sb_init(&sb);
        if (hn_spawn(argv, HN_SPAWN_STDOUT, &sb, NULL) == 0) {
            /* per address: "0x...", then pairs (function, file:line), innermost first */
            int cur = -1, taken = 0;
            char *save = NULL;
            char *prev_fn = NULL;
            for (char *ln = strtok_r(sb.buf, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
                if (strncmp(ln, "0x", 2) == 0 && !prev_fn) {
                    cur++;
                    taken = 0;
                    continue;
                }
                if (!prev_fn) {
                    prev_fn = ln;
                    continue;
                }
                /* ln is "file:line" for function prev_fn */
                if (cur >= 0 && cur < n && !taken && strncmp(ln, "??", 2) != 0 && !strstr(ln, "/emu-shim-")) {
                    char *colon = strrchr(ln, ':');
                    char *disc = strstr(ln, " (discriminator");
                    if (disc) *disc = '\0';
                    if (colon) {
                        *colon = '\0';
                        files[cur] = xstrdup(ln);
                        lines[cur] = atoi(colon + 1);
                        funcs[cur] = xstrdup(prev_fn);
                        taken = 1;
                    }
                }
                prev_fn = NULL;
            }
        }
        hn_sb_free(&sb);
        for (int i = 0; i < a; i++) free(argv[i]);
        free(argv);
    }
    for (int i = 0; i < n; i++)
        if (!files[i]) files[i] = xstrdup("?");
}

static int cmp_row(const void *a, const void *b) {
    const hn_prof_row *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c) return c;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->space != y->space) return x->space - y->space;
    return x->kind - y->kind;
}

void emu_prof_take(emu_prof *p, hn_profile *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    int n = p->n_sites;
    uintptr_t *pcs = xcalloc((size_t)n + 1, sizeof *pcs);
    char **files = xcalloc((size_t)n + 1, sizeof *files), **funcs = xcalloc((size_t)n + 1, sizeof *funcs);
    int *lines = xcalloc((size_t)n + 1, sizeof *lines);
    for (int i = 0; i < n; i++) pcs[i] = p->sites[i].pc;
    resolve(p, pcs, n, files, lines, funcs);
    double scale = p->blocks_profiled ? (double)p->blocks / (double)p->blocks_profiled : 1.0;
    out->rows = xcalloc((size_t)n + 1, sizeof *out->rows);
    for (int i = 0; i < n; i++) {
        const prof_site *s = &p->sites[i];
        hn_prof_row *r = NULL;
        for (int j = 0; j < out->n && !r; j++)
            if (out->rows[j].line == lines[i] && out->rows[j].space == s->space && out->rows[j].kind == s->kind &&
                strcmp(out->rows[j].file, files[i]) == 0)
                r = &out->rows[j];
        if (!r) {
            r = &out->rows[out->n++];
            r->file = xstrdup(files[i]);
            r->line = lines[i];
            r->func = xstrdup(funcs[i] ? funcs[i] : "?");
            r->space = s->space;
            r->kind = s->kind;
        }
        r->requests += s->requests * scale;
        r->sectors += s->sectors * scale;
        r->wavefronts += s->wavefronts * scale;
        r->ideal += s->ideal * scale;
        r->accesses += s->accesses * scale;
    }
    qsort(out->rows, (size_t)out->n, sizeof *out->rows, cmp_row);
    out->kernel = xstrdup(p->kernel ? p->kernel : "?");
    out->blocks = p->blocks;
    out->blocks_profiled = p->blocks_profiled;
    out->launches = p->launches;
    for (int i = 0; i < n; i++) {
        free(files[i]);
        free(funcs[i]);
    }
    free(files);
    free(funcs);
    free(lines);
    free(pcs);
    p->n_sites = 0;
    p->blocks = p->blocks_profiled = 0;
    p->launches = 0;
    pthread_mutex_unlock(&p->mu);
}
