/*
 * test_profile.c: the emulator's memory profile (emu/emu_prof.c, profile.c)
 * on access patterns with known answers (tests/kernels/profile/patterns.cu):
 * coalesced, strided, broadcast and misaligned global loads (sectors per
 * request 4, 32, 1, 5), half-warp requests, shared-memory bank conflicts (none,
 * 2-way, 32-way, 8-byte words, broadcast); every block profiled, so counts are
 * exact; each figure on the line the kernel file marks. Then a grid where only
 * some blocks are profiled: the plain module runs the rest (right output),
 * counts are scaled, ratios unchanged. And the printed table and listing.
 */
#define _GNU_SOURCE
#include "profile.h"
#include "test_emu_common.h"

static const char *const kernels[] = {"coalesced", "strided", "broadcast_misaligned", "half_warps", "banks"};

static char *source;

/* The marks of kernel k's lines: "want: ..." in patterns.cu between its
 * __global__ and the next one. */
typedef struct {
    int line;
    char space[16], kind[16];
    double per_req, req_per_block;
} mark;

static int marks_of(const char *kernel, mark *out, int max) {
    char *head = xasprintf("__global__ void %s(", kernel);
    const char *p = strstr(source, head);
    free(head);
    if (!p) return 0;
    const char *end = strstr(p + 1, "__global__ void ");
    int line = 1, n = 0;
    for (const char *q = source; q < p; q++) line += *q == '\n';
    for (const char *q = p; *q && (!end || q < end); q++) {
        if (*q == '\n') line++;
        if (strncmp(q, "want: ", 6) == 0 && n < max) {
            mark *m = &out[n];
            if (sscanf(q + 6, "%15s %15s %lf %lf", m->space, m->kind, &m->per_req, &m->req_per_block) == 4) {
                m->line = line;
                n++;
            }
        }
    }
    return n;
}

static void check_kernel(hn_backend *b, const hn_module_image *img, int k, unsigned grid, unsigned long long profiled) {
    hn_kernel *kk = emu_load(b, img, k);
    size_t n = (size_t)grid * 64 * 33 + 16;
    float *in = xcalloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++) in[i] = (float)(i % 7);
    hn_err err;
    hn_dptr d_in = emu_buf(b, in, n * 4), d_out = emu_buf(b, NULL, (size_t)grid * 64 * 4);
    void *args[] = {&d_in, &d_out};
    CHECK_MSG(emu_launch(b, kk, grid, 1, 1, 64, 1, 1, 0, args, &err) == 0, "%s: %s", kernels[k], err.msg);
    hn_profile p;
    b->ops->profile_take(b, &p);
    CHECK_INT(p.launches, 1);
    CHECK_INT(p.blocks, grid);
    CHECK_INT(p.blocks_profiled, profiled);
    mark ms[8];
    int nm = marks_of(kernels[k], ms, 8);
    CHECK_MSG(nm > 0 && nm == p.n, "%s: %d rows, %d marked lines", kernels[k], p.n, nm);
    for (int i = 0; i < nm; i++) {
        const hn_prof_row *r = NULL;
        for (int j = 0; j < p.n && !r; j++)
            if (p.rows[j].line == ms[i].line && strcmp(hn_profile_space_name(p.rows[j].space), ms[i].space) == 0 &&
                strcmp(hn_profile_kind_name(p.rows[j].kind), ms[i].kind) == 0)
                r = &p.rows[j];
        CHECK_MSG(r != NULL, "%s: no %s %s row at line %d", kernels[k], ms[i].space, ms[i].kind, ms[i].line);
        if (!r) continue;
        CHECK_MSG(strstr(r->file, "patterns.cu") != NULL, "%s: file %s", kernels[k], r->file);
        double per = r->space == HN_PROF_GLOBAL ? hn_profile_sectors_per_request(r) : hn_profile_conflicts_per_request(r);
        CHECK_MSG(fabs(per - ms[i].per_req) < 1e-9, "%s line %d: %g per request, want %g", kernels[k], ms[i].line,
                  per, ms[i].per_req);
        CHECK_MSG(fabs(r->requests - ms[i].req_per_block * grid) < 1e-6, "%s line %d: %g requests, want %g",
                  kernels[k], ms[i].line, r->requests, ms[i].req_per_block * grid);
    }
    /* the output is right whichever module ran a block */
    float *got = xmalloc((size_t)grid * 64 * 4);
    emu_get(b, got, d_out, (size_t)grid * 64 * 4);
    if (k == 0)
        for (size_t i = 0; i < (size_t)grid * 64; i++) CHECK_MSG(got[i] == in[i], "coalesced out[%zu]", i);
    free(got);
    hn_profile_free(&p);
    b->ops->free(b, d_in);
    b->ops->free(b, d_out);
    b->ops->kernel_free(b, kk);
    free(in);
}

/* The table and the listing name the lines and figures. */
static void test_printing(hn_backend *b, const hn_module_image *img) {
    hn_kernel *kk = emu_load(b, img, 1);
    float in[64 * 33] = {0};
    hn_err err;
    hn_dptr d_in = emu_buf(b, in, sizeof in), d_out = emu_buf(b, NULL, 64 * 4);
    void *args[] = {&d_in, &d_out};
    CHECK(emu_launch(b, kk, 1, 1, 1, 64, 1, 1, 0, args, &err) == 0);
    hn_profile p;
    b->ops->profile_take(b, &p);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    hn_profile_print_table(f, &p, "profile");
    hn_profile_print_listing(f, &p);
    fclose(f);
    CHECK_CONTAINS(text, "kernel 'strided', 1 launch, every block (1) profiled");
    CHECK_CONTAINS(text, "sectors/req");
    CHECK_CONTAINS(text, "32.00");
    CHECK_CONTAINS(text, "float v = in[i * 32];");
    CHECK_CONTAINS(text, "^ global load: 2 req, 32.00 sectors/req, 50.0%");
    free(text);
    hn_profile_free(&p);
    b->ops->free(b, d_in);
    b->ops->free(b, d_out);
    b->ops->kernel_free(b, kk);
}

int main(void) {
    char *path = xasprintf("%s/tests/kernels/profile/patterns.cu", emu_root());
    hn_err err;
    if (hn_read_file(path, &source, NULL, &err) != 0) emu_die("read patterns.cu", &err);
    char *cache = emu_cache();
    hn_compile_req req = {0};
    req.src_path = path;
    req.kernels = kernels;
    req.n_kernels = (int)HN_ARRAY_LEN(kernels);
    req.cache_dir = cache;
    req.instrument = HN_INSTRUMENT_PROFILE;
    hn_module_image img;
    char *log = NULL;
    if (hn_compile_emu(&req, &img, &log, &err) != 0) emu_die(log ? log : "compile", &err);
    CHECK(img.companion != NULL && strcmp(img.companion, img.path) != 0);
    CHECK_INT(img.device_vars, 0);

    /* every block profiled: exact counts */
    hn_backend_opts o = {0};
    o.emu_threads = 2;
    o.kernel_timeout = 10;
    o.profile = 1;
    o.profile_blocks = 0;
    hn_backend *b = NULL;
    if (hn_backend_emu_create(&o, &b, &err) != 0) emu_die("backend", &err);
    for (int k = 0; k < (int)HN_ARRAY_LEN(kernels); k++) check_kernel(b, &img, k, 3, 3);
    test_printing(b, &img);
    hn_backend_destroy(b);

    /* 2 of 64 blocks: stride 31 (prime), blocks 15 and 46; counts scaled */
    o.profile_blocks = 2;
    if (hn_backend_emu_create(&o, &b, &err) != 0) emu_die("backend", &err);
    check_kernel(b, &img, 0, 64, 2);
    check_kernel(b, &img, 4, 64, 2);
    hn_backend_destroy(b);

    hn_module_image_free(&img);
    free(log);
    free(cache);
    free(path);
    free(source);
    return hn_test_exit();
}
