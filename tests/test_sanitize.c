/*
 * test_sanitize.c: the emulator's sanitizer (emu/emu_san.c) on a corpus of
 * kernels: every planted bug of tests/kernels/sanitize/bugs.cu is found with
 * the right class and names the right line, and no kernel of
 * tests/kernels/sanitize/correct.cu gets any finding. Also: the instrumented
 * module has its own cache key (the plain one is untouched), findings are
 * taken once, poisoned bytes become written ones, a plain module on a
 * sanitizing backend reports nothing.
 *
 * The expected lines are marked in bugs.cu with `expect: CLASS KERNEL`.
 */
#include "test_emu_common.h"

/* One corpus kernel and how it is launched: blocks x threads, n floats of
 * input, dynamic shared memory, output floats. */
typedef struct {
    const char *kernel;
    unsigned grid, block;
    int n;
    size_t dyn;
    int out_len;
} corpus_kernel;

static const corpus_kernel bugs[] = {
    {"race_two_warps", 1, 64, 64, 0, 64},
    {"race_hidden", 1, 64, 64, 0, 64},
    {"race_missing_syncwarp", 1, 32, 32, 0, 32},
    {"race_reduce_stride", 1, 128, 128, 0, 128},
    {"race_same_word", 1, 64, 64, 0, 64},
    {"oob_global_slack", 1, 64, 62, 0, 64},
    {"oob_global_before", 1, 64, 64, 0, 64},
    {"oob_dynamic_shared", 1, 64, 64, 60 * 4, 64},
    {"oob_static_shared", 1, 32, 32, 0, 32},
    {"misaligned_int", 1, 32, 32, 0, 32},
    {"misaligned_double", 1, 32, 32, 0, 32},
    {"uninit_shared", 1, 32, 32, 0, 32},
    {"uninit_tile_edge", 1, 32, 32, 0, 32},
    {"uninit_output", 1, 32, 32, 0, 32},
    {"sync_divergent", 1, 32, 32, 0, 32},
    {"sync_exited_lane", 1, 32, 32, 0, 32},
    {"sync_deadlock", 1, 32, 32, 0, 32},
    {"misaligned_float4", 1, 32, 64, 0, 32},
    {"misaligned_float2", 1, 32, 64, 0, 64},
    {"misaligned_helper_twice", 1, 32, 64, 0, 32},
    {"race_atomic_after_store", 1, 64, 64, 0, 64},
    {"race_read_before_atomics", 1, 64, 64, 0, 1},
    {"race_volatile_warp", 1, 64, 64, 0, 1},
};

static const corpus_kernel correct[] = {
    {"ok_tree_reduce", 1, 128, 128, 0, 1},
    {"ok_syncwarp_reduce", 1, 64, 64, 0, 2},
    {"ok_shuffle_reduce", 1, 128, 100, 0, 1},
    {"ok_cg_tiles", 1, 64, 64, 0, 1},
    {"ok_atomics", 2, 64, 64, 0, 9},
    {"ok_atomic_handoff", 1, 64, 64, 0, 1},
    {"ok_own_bytes", 1, 64, 64, 0, 64},
    {"ok_read_own_write", 1, 64, 64, 0, 64},
    {"ok_volatile_syncwarp", 1, 64, 64, 0, 1},
    {"ok_double_buffer", 1, 64, 64, 0, 64},
    {"ok_broadcast", 1, 64, 64, 0, 64},
    {"ok_tail_guard", 2, 64, 100, 0, 128},
    {"ok_dynamic_reinterpret", 1, 64, 64, 64 * 4, 64},
    {"ok_coalesced", 1, 64, 64, 0, 64},
    {"ok_struct_copy", 1, 64, 64, 0, 64},
    {"ok_same_value_flag", 1, 64, 64, 0, 64},
    {"ok_converged", 1, 64, 64, 0, 64},
    {"ok_struct_padding", 1, 64, 64, 0, 64},
    {"ok_activemask_tail", 1, 64, 44, 0, 64},
    {"ok_atomic_counter", 1, 64, 64, 0, 64},
    {"ok_vector_aligned", 1, 64, 250, 0, 250},
};

static const char *const class_names[HN_SAN_NCLASS] = {"race", "memcheck", "initcheck", "synccheck"};

static char *corpus_path(const char *name) {
    return xasprintf("%s/tests/kernels/sanitize/%s", emu_root(), name);
}

static int compile_corpus(const char *file, const corpus_kernel *ks, int nk, int instrument, hn_module_image *img) {
    char *path = corpus_path(file);
    const char **names = xcalloc((size_t)nk, sizeof *names);
    for (int i = 0; i < nk; i++) names[i] = ks[i].kernel;
    char *cache = emu_cache();
    hn_compile_req req = {0};
    req.src_path = path;
    req.kernels = names;
    req.n_kernels = nk;
    req.cache_dir = cache;
    req.instrument = instrument;
    char *log = NULL;
    hn_err err;
    int rc = hn_compile_emu(&req, img, &log, &err);
    if (rc != 0) fprintf(stderr, "%s\n%s\n", err.msg, log ? log : "");
    free(log);
    free(cache);
    free(names);
    free(path);
    return rc;
}

/* Runs kernel i of img under b and returns its findings (and the launch's
 * error in *err). */
static void run_one(hn_backend *b, const hn_module_image *img, int i, const corpus_kernel *k,
                    hn_san_findings *f, hn_err *err) {
    hn_kernel *kk = emu_load(b, img, i);
    float *in = xmalloc((size_t)k->n * sizeof *in);
    for (int j = 0; j < k->n; j++) in[j] = (float)((j * 37) % 101) / 101.0f;
    hn_dptr d_in = 0, d_out = 0;
    hn_err e;
    if (b->ops->alloc(b, (size_t)k->n * 4, &d_in, &e) != 0 || b->ops->alloc(b, (size_t)k->out_len * 4, &d_out, &e) != 0)
        emu_die("alloc", &e);
    b->ops->upload(b, d_in, in, (size_t)k->n * 4, &e);
    b->ops->poison(b, d_out, (size_t)k->out_len * 4, &e);
    int n = k->n;
    void *args[] = {&d_in, &d_out, &n};
    hn_launch_dims d = {{k->grid, 1, 1}, {k->block, 1, 1}, k->dyn};
    memset(err, 0, sizeof *err);
    b->ops->launch(b, kk, &d, args, err);
    b->ops->sanitizer_take(b, f);
    b->ops->free(b, d_in);
    b->ops->free(b, d_out);
    b->ops->kernel_free(b, kk);
    free(in);
}

/* Whether the reason names one of the lines of bugs.cu marked for this kernel
 * and class. */
static int names_marked_line(const char *source, const char *kernel, const char *cls, const char *reason) {
    char *mark = xasprintf("expect: %s %s\n", cls, kernel);
    int line = 1, found = 0, any = 0;
    for (const char *p = source; *p; p++) {
        if (*p == '\n') line++;
        if (strncmp(p, mark, strlen(mark)) == 0) {
            any = 1;
            char *where = xasprintf("bugs.cu:%d", line);
            for (const char *r = reason; r && (r = strstr(r, where)) != NULL; r++)
                if (r[strlen(where)] < '0' || r[strlen(where)] > '9') found = 1;
            free(where);
        }
    }
    if (!any) fprintf(stderr, "  no line marked '%s' in bugs.cu\n", mark);
    free(mark);
    return found;
}

/* An emulator backend of `threads` workers that runs the sanitizer's `checks`. */
static hn_backend *san_backend(int threads, unsigned checks) {
    hn_backend_opts o = {0};
    o.emu_threads = threads;
    o.kernel_timeout = 10;
    o.sanitize = checks;
    hn_backend *b = NULL;
    hn_err err;
    if (hn_backend_emu_create(&o, &b, &err) != 0) emu_die("backend", &err);
    return b;
}

static void test_bugs(hn_backend *b) {
    hn_module_image img;
    if (compile_corpus("bugs.cu", bugs, (int)HN_ARRAY_LEN(bugs), HN_INSTRUMENT_ACCESSES, &img) != 0) {
        CHECK(0);
        return;
    }
    char *path = corpus_path("bugs.cu"), *source = NULL;
    hn_err err;
    if (hn_read_file(path, &source, NULL, &err) != 0) emu_die("read bugs.cu", &err);
    for (int i = 0; i < (int)HN_ARRAY_LEN(bugs); i++) {
        const corpus_kernel *k = &bugs[i];
        /* the expected class is the first word of the kernel's name */
        int want = strncmp(k->kernel, "race", 4) == 0        ? HN_SAN_C_RACE
                   : strncmp(k->kernel, "oob", 3) == 0 ||
                           strncmp(k->kernel, "misaligned", 10) == 0 ? HN_SAN_C_MEM
                   : strncmp(k->kernel, "uninit", 6) == 0    ? HN_SAN_C_INIT
                                                             : HN_SAN_C_SYNC;
        hn_san_findings f;
        run_one(b, &img, i, k, &f, &err);
        fprintf(stderr, "%s: %s\n", k->kernel, f.first ? f.first : "(nothing found)");
        CHECK_MSG(f.first_class == want, "%s: class %d (%s), want %s; launch: %s; report:\n%s", k->kernel,
                  f.first_class, f.first_class >= 0 ? class_names[f.first_class] : "none", class_names[want],
                  err.msg, f.report ? f.report : "");
        CHECK_MSG(names_marked_line(source, k->kernel, class_names[want], f.first), "%s: the reason names no marked line: %s",
                  k->kernel, f.first ? f.first : "(none)");
        CHECK_MSG(f.first && strstr(f.first, "block (0,0,0) thread ("), "%s: no block and thread in: %s", k->kernel,
                  f.first ? f.first : "(none)");
        char *kname = xasprintf("kernel '%s'", k->kernel);
        CHECK_MSG(f.first && strstr(f.first, kname), "%s: the kernel is not named in: %s", k->kernel,
                  f.first ? f.first : "(none)");
        free(kname);
        if (strcmp(k->kernel, "misaligned_helper_twice") == 0) {
            /* two instructions, one line, the same access of the same thread: one
             * line in the report (it read twice before), with both counts */
            CHECK_MSG(f.n[HN_SAN_C_MEM] == 1, "%s: %ld memcheck findings, want 1:\n%s", k->kernel,
                      f.n[HN_SAN_C_MEM], f.report ? f.report : "");
            const char *nl = f.report ? strchr(f.report, '\n') : NULL;
            CHECK_MSG(nl && !nl[1] && strstr(f.report, "times]"), "%s: want one line, counted:\n%s", k->kernel,
                      f.report ? f.report : "");
        }
        hn_san_findings_free(&f);
    }
    free(source);
    free(path);
    hn_module_image_free(&img);
}

static void test_correct(hn_backend *b) {
    hn_module_image img;
    if (compile_corpus("correct.cu", correct, (int)HN_ARRAY_LEN(correct), HN_INSTRUMENT_ACCESSES, &img) != 0) {
        CHECK(0);
        return;
    }
    for (int i = 0; i < (int)HN_ARRAY_LEN(correct); i++) {
        hn_san_findings f;
        hn_err err;
        run_one(b, &img, i, &correct[i], &f, &err);
        CHECK_MSG(f.first_class < 0 && !err.msg[0], "%s: false alarm: %s (launch: %s)\n%s", correct[i].kernel,
                  f.first ? f.first : "", err.msg, f.report ? f.report : "");
        hn_san_findings_free(&f);
    }
    hn_module_image_free(&img);
}

/* The instrumented module is a module of its own; a plain one reports
 * nothing even on a sanitizing backend; findings are handed out once. */
static void test_modules_and_take(hn_backend *b) {
    const corpus_kernel one[] = {{"uninit_output", 1, 32, 32, 0, 32}};
    hn_module_image plain, inst;
    if (compile_corpus("bugs.cu", one, 1, HN_INSTRUMENT_NONE, &plain) != 0 ||
        compile_corpus("bugs.cu", one, 1, HN_INSTRUMENT_ACCESSES, &inst) != 0) {
        CHECK(0);
        return;
    }
    CHECK(strcmp(plain.key, inst.key) != 0);
    CHECK(strcmp(plain.path, inst.path) != 0);
    hn_san_findings f;
    hn_err err;
    run_one(b, &plain, 0, &one[0], &f, &err);
    CHECK_MSG(f.first_class < 0, "a plain module reported: %s", f.first ? f.first : "");
    hn_san_findings_free(&f);
    run_one(b, &inst, 0, &one[0], &f, &err);
    CHECK_INT(f.first_class, HN_SAN_C_INIT);
    CHECK(f.n[HN_SAN_C_INIT] == 1 && f.report && strstr(f.report, "[32 times]"));
    hn_san_findings_free(&f);
    b->ops->sanitizer_take(b, &f);
    CHECK_INT(f.first_class, -1);
    CHECK(f.first == NULL && f.report == NULL);
    hn_san_findings_free(&f);
    hn_module_image_free(&plain);
    hn_module_image_free(&inst);
}

/* The global race check covers launches whose device buffers hold at most
 * 64 MiB in all: two blocks that write one word are a race it reports, and the
 * same launch with a 65 MiB buffer beside them is not checked for races on
 * global memory, which the findings' note says, naming the kernel and the size.
 * One worker thread: two blocks whose single writes meet on two workers at the
 * same moment can both find the word's cell empty (the cells take no lock, see
 * docs/emulator.md), and CI saw that miss. */
static void test_global_limit(void) {
    hn_backend *b = san_backend(1, HN_SAN_ALL);
    char *dir = emu_tmp_dir("sanitize-limit");
    char *path = xasprintf("%s/both_write.cu", dir);
    const char *src = "__global__ void both_write(const float *in, float *out, int n) {\n"
                      "    if (threadIdx.x == 0) out[0] = in[blockIdx.x % n];\n"
                      "}\n";
    hn_err err;
    if (hn_write_file(path, src, strlen(src), &err) != 0) emu_die("write", &err);
    const char *names[] = {"both_write"};
    char *cache = emu_cache();
    hn_compile_req req = {0};
    req.src_path = path;
    req.kernels = names;
    req.n_kernels = 1;
    req.cache_dir = cache;
    req.instrument = HN_INSTRUMENT_ACCESSES;
    hn_module_image img;
    char *log = NULL;
    if (hn_compile_emu(&req, &img, &log, &err) != 0) {
        CHECK_MSG(0, "both_write: %s\n%s", err.msg, log ? log : "");
        hn_backend_destroy(b);
        free(log);
        free(cache);
        free(path);
        free(dir);
        return;
    }
    free(log);
    const corpus_kernel k = {"both_write", 2, 32, 32, 0, 1};
    hn_san_findings f;
    run_one(b, &img, 0, &k, &f, &err);
    CHECK_MSG(f.first_class == HN_SAN_C_RACE && f.first && strstr(f.first, "global"),
              "two blocks writing out[0]: %s", f.first ? f.first : "(nothing found)");
    CHECK_MSG(!f.note, "a note with 8 bytes of buffers: %s", f.note);
    hn_san_findings_free(&f);
    hn_dptr big = 0;
    if (b->ops->alloc(b, (size_t)65 << 20, &big, &err) != 0) emu_die("alloc 65 MiB", &err);
    run_one(b, &img, 0, &k, &f, &err);
    CHECK_MSG(f.n[HN_SAN_C_RACE] == 0, "checked for races beyond the limit: %s", f.first ? f.first : "");
    CHECK_MSG(f.note && strstr(f.note, "races on global memory not checked in kernel 'both_write': 65 MiB of device "
                                       "buffers, more than the 64 MiB the check covers"),
              "the note: %s", f.note ? f.note : "(none)");
    hn_san_findings_free(&f);
    b->ops->free(b, big);
    hn_module_image_free(&img);
    hn_backend_destroy(b);
    free(cache);
    free(path);
    free(dir);
}

/* Only the checks asked for are made. */
static void test_subset(void) {
    hn_backend *b = san_backend(1, HN_SAN_RACE);
    hn_err err;
    const corpus_kernel ks[] = {{"uninit_output", 1, 32, 32, 0, 32}, {"race_two_warps", 1, 64, 64, 0, 64}};
    hn_module_image img;
    if (compile_corpus("bugs.cu", ks, 2, HN_INSTRUMENT_ACCESSES, &img) != 0) {
        CHECK(0);
        hn_backend_destroy(b);
        return;
    }
    hn_san_findings f;
    run_one(b, &img, 0, &ks[0], &f, &err);
    CHECK_MSG(f.first_class < 0, "race only, but: %s", f.first ? f.first : "");
    hn_san_findings_free(&f);
    run_one(b, &img, 1, &ks[1], &f, &err);
    CHECK_INT(f.first_class, HN_SAN_C_RACE);
    CHECK_INT(f.n[HN_SAN_C_INIT], 0);
    hn_san_findings_free(&f);
    hn_module_image_free(&img);
    hn_backend_destroy(b);
    unsigned bits = 0;
    CHECK(hn_san_parse("race,init", &bits, &err) == 0 && bits == (HN_SAN_RACE | HN_SAN_INIT));
    CHECK(hn_san_parse("all", &bits, &err) == 0 && bits == HN_SAN_ALL);
    CHECK(hn_san_parse("race,bogus", &bits, &err) != 0 && strstr(err.msg, "bogus"));
    CHECK(hn_san_parse("", &bits, &err) != 0);
}

int main(void) {
    hn_backend *b = san_backend(2, HN_SAN_ALL);
    test_bugs(b);
    test_correct(b);
    test_modules_and_take(b);
    hn_backend_destroy(b);
    test_global_limit();
    test_subset();
    return hn_test_exit();
}
