/*
 * debug.c: `harness debug CONFIG --kernel NAME [--set a=1,.. | --case ID]`: one
 * variant on one small case, compiled with -DDEBUG -DSINGLE_BLOCK (and
 * DEBUG_BLOCK_X/Y/Z with --block), so blocks run one at a time in linear order and
 * the kernel's printf output comes out block by block. Then the inputs, output
 * and reference as small matrices, the first mismatches with their coordinates,
 * and a mismatch map per output channel as a PNG.
 *
 * With --sanitize the kernel is instrumented and runs on the emulator under
 * the sanitizer; its findings are printed after the kernel's output (and
 * appended to --report) and make the exit code 1.
 *
 * Exit code: 0 when the output matches, 1 when it does not (or the launch
 * failed, or the sanitizer found something), 2 for bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "png.h"
#include "run.h"
#include "sweep.h"

/* Cases larger than this print no matrices (the numbers would not fit a screen). */
#define HN_DEBUG_MAX_PRINT 1024

static void coords(const int64_t *dims, int nd, int64_t e, int64_t *c) {
    for (int i = nd - 1; i >= 0; i--) {
        c[i] = e % dims[i];
        e /= dims[i];
    }
}

static void print_coords(FILE *f, const int64_t *c, int nd) {
    fputc('(', f);
    for (int i = 0; i < nd; i++) fprintf(f, "%s%lld", i ? ", " : "", (long long)c[i]);
    fputc(')', f);
}

/* Prints a buffer (any dtype, or fp64 reference values when dt < 0) as 2-D
 * slices over its last two dimensions. */
static void print_buffer(const char *title, const char *shape, const int64_t *dims, int nd, const void *buf, int dt) {
    int64_t rows = nd >= 2 ? dims[nd - 2] : 1, cols = dims[nd - 1];
    int64_t slices = 1;
    for (int i = 0; i < nd - 2; i++) slices *= dims[i];
    printf("%s %s = (", title, shape);
    for (int i = 0; i < nd; i++) printf("%s%lld", i ? ", " : "", (long long)dims[i]);
    printf("):\n");
    if (slices * rows * cols > HN_DEBUG_MAX_PRINT) {
        printf("  (%lld elements: too many to print; --save-tensors writes them as .npy)\n",
               (long long)(slices * rows * cols));
        return;
    }
    for (int64_t s = 0; s < slices; s++) {
        if (nd > 2) {
            int64_t c[4];
            coords(dims, nd - 2, s, c);
            printf("  [");
            for (int i = 0; i < nd - 2; i++) printf("%s%lld", i ? ", " : "", (long long)c[i]);
            printf("]\n");
        }
        for (int64_t y = 0; y < rows; y++) {
            printf("   ");
            for (int64_t x = 0; x < cols; x++) {
                int64_t e = (s * rows + y) * cols + x;
                double v = dt < 0 ? ((const double *)buf)[e] : hn_buffer_get(buf, (hn_dtype)dt, e);
                if (dt == HN_DT_I32) printf(" %9.0f", v);
                else printf(" %9.4f", v);
            }
            printf("\n");
        }
    }
}

/* Channels side by side, scaled up; grey = match, red = mismatch, black = NaN/Inf. */
static int write_mismatch_map(const char *path, const int64_t *dims, int nd, const void *out, hn_dtype dt,
                              const double *ref, double atol, double rtol, hn_err *err) {
    int64_t ch = nd >= 3 ? dims[nd - 3] : 1, h = nd >= 2 ? dims[nd - 2] : 1, w = dims[nd - 1];
    for (int i = 0; i < nd - 3; i++) ch *= dims[i];
    int64_t big = h > w ? h : w;
    int scale = big >= 256 ? 1 : (int)(256 / big);
    if (scale > 16) scale = 16;
    int gap = 4;
    int64_t width = ch * w * scale + (ch - 1) * gap, height = h * scale;
    if (width > 16384 || height > 16384) return hn_errf(err, "the mismatch map would be %lldx%lld pixels", (long long)width, (long long)height);
    unsigned char *rgb = xmalloc((size_t)(width * height * 3));
    memset(rgb, 255, (size_t)(width * height * 3));
    for (int64_t c = 0; c < ch; c++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                int64_t e = (c * h + y) * w + x;
                unsigned char col[3] = {200, 200, 200};
                double o = hn_buffer_get(out, dt, e);
                if (!isfinite(o)) col[0] = col[1] = col[2] = 0;
                else if (!hn_check_close(o, ref[e], atol, rtol)) col[0] = 220, col[1] = 30, col[2] = 30;
                for (int dy = 0; dy < scale; dy++)
                    for (int dx = 0; dx < scale; dx++) {
                        int64_t px = c * (w * scale + gap) + x * scale + dx, py = y * scale + dy;
                        memcpy(&rgb[(py * width + px) * 3], col, 3);
                    }
            }
    int rc = hn_png_write_rgb(path, (int)width, (int)height, rgb, err);
    free(rgb);
    return rc;
}

/* The case with the fewest FLOP, for a debug run given no case. */
static int64_t smallest_case(const hn_plan *p) {
    int64_t best = -1;
    double best_flop = 0;
    for (int64_t c = 0; c < p->n_cases; c++) {
        hn_workload w;
        hn_err err;
        if (hn_workload_shape(&w, p, &p->cases[c], &err) != 0) continue;
        if (best < 0 || w.flop < best_flop) best = c, best_flop = w.flop;
    }
    return best;
}

/* Whether the debug launch passes a debug_counter: when the config binds it,
 * when the kernel has one parameter more than the config binds (the trailing
 * SINGLE_BLOCK counter), or, where the backend cannot tell the kernel's
 * parameters, always (a kernel ignores a trailing argument it does not take,
 * while one that takes it and gets none would crash). */
static int takes_counter(const hn_plan *p, const hn_variant *v, int launch, hn_backend *be, hn_kernel *k) {
    const hn_launch_spec l = hn_spec_launch(&p->specs[v->spec], launch);
    const hn_launch_spec *s = &l;
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].kind == HN_ARG_DEBUG_COUNTER) return 1;
    hn_param_info params[64];
    int n = -1;
    hn_err err;
    if (be->ops->kernel_params(be, k, params, 64, &n, &err) != 0 || n < 0) return 1;
    return n == s->n_args + 1;
}

/* Prints what the sanitizer found in the launch (and appends it to
 * --report); returns 1 when it found something. */
static int sanitizer_report(const hn_cli *cli, hn_backend *be, const char *variant, const char *label) {
    if (!cli->sanitize || !be->ops->sanitizer_take) return 0;
    hn_san_findings f;
    be->ops->sanitizer_take(be, &f);
    long total = 0;
    for (int i = 0; i < HN_SAN_NCLASS; i++) total += f.n[i];
    char *text = xasprintf("sanitizer (%s): variant %s, case %s: %ld finding%s%s\n%s%s", cli->sanitize, variant,
                           label, total, total == 1 ? "" : "s", total ? ":" : "", f.report ? f.report : "",
                           f.note ? f.note : "");
    fputs(text, stdout);
    fflush(stdout);
    if (cli->report) {
        FILE *out = fopen(cli->report, "a");
        int ok = out && fputs(text, out) >= 0;
        if (out && fclose(out) != 0) ok = 0;
        if (!ok) fprintf(stderr, "harness debug: --report %s: cannot append: %s\n", cli->report, strerror(errno));
    }
    free(text);
    int found = f.first_class >= 0;
    hn_san_findings_free(&f);
    return found;
}

/* Whether the source at path (or a header it includes with quotes, from its
 * folder) reads DEBUG_BLOCK_X/Y/Z, directly or through hn_kernel.h's
 * hn_debug_block()/hn_debug_leader(): if not, --block changes nothing. */
static int reads_debug_block(const char *path, int depth) {
    char *text;
    hn_err err;
    if (!path || depth > 8 || hn_read_file(path, &text, NULL, &err) != 0) return 1; /* unknown: assume it does */
    int found = strstr(text, "DEBUG_BLOCK_") || strstr(text, "hn_debug_block") || strstr(text, "hn_debug_leader");
    for (const char *q = text; !found && (q = strstr(q, "#include")) != NULL;) {
        q += 8;
        while (*q == ' ' || *q == '\t') q++;
        if (*q != '"') continue;
        const char *end = strchr(q + 1, '"');
        if (!end) break;
        char *name = xasprintf("%.*s", (int)(end - q - 1), q + 1);
        if (strcmp(name, "hn_kernel.h") != 0) {
            char *dir = hn_dirname(path);
            char *inc = xasprintf("%s/%s", dir, name);
            found = hn_file_exists(inc) ? reads_debug_block(inc, depth + 1) : 1;
            free(inc);
            free(dir);
        }
        free(name);
        q = end;
    }
    free(text);
    return found;
}

int hn_cmd_debug(const hn_cli *cli) {
    hn_err err;
    hn_plan *p;
    if (hn_plan_load(cli->config, cli->seed, &p, &err) != 0) {
        fprintf(stderr, "harness: %s\n", err.msg);
        return 2;
    }
    int rc = 2;
    hn_backend *be = NULL;
    hn_case made = {0};
    const hn_case *c = NULL;
    hn_build b = {0};
    hn_module_image img = {0};
    hn_kernel *ks[HN_MAX_LAUNCHES] = {0};
    hn_workload w = {0};
    hn_dptr counter = 0;
    char *cache = NULL, *dir = NULL;
    char **extra = NULL;
    int n_extra = 0;

    if (!cli->kernel) {
        fprintf(stderr, "harness debug: --kernel NAME is required (one of:");
        for (int i = 0; i < p->n_variants; i++) fprintf(stderr, " %s", p->variants[i].label);
        fprintf(stderr, ")\n");
        goto done;
    }
    int vi = hn_plan_find_variant(p, cli->kernel);
    if (vi < 0) {
        fprintf(stderr, "harness debug: no variant '%s' in %s (variants:", cli->kernel, p->path);
        for (int i = 0; i < p->n_variants; i++) fprintf(stderr, " %s", p->variants[i].label);
        fprintf(stderr, ")\n");
        goto done;
    }
    const hn_variant *v = &p->variants[vi];
    if (strcmp(v->label, cli->kernel) != 0) {
        /* a spec or kernel name that several variants share (one per define
         * value): the first is debugged; the others are named */
        int n_same = 0;
        for (int i = 0; i < p->n_variants; i++) n_same += p->variants[i].spec == v->spec;
        if (n_same > 1) {
            printf("note: --kernel %s is %d variants; debugging %s (name another:", cli->kernel, n_same, v->label);
            for (int i = 0; i < p->n_variants; i++)
                if (p->variants[i].spec == v->spec && i != vi) printf(" '%s'", p->variants[i].label);
            printf(")\n");
        }
    }
    if (cli->set) {
        if (hn_plan_make_case(p, cli->set, &made, &err) != 0) {
            fprintf(stderr, "harness debug: %s\n", err.msg);
            goto done;
        }
        c = &made;
    } else {
        int64_t n_listed = 0;
        if (cli->cases && (hn_case_list_parse(cli->cases, -1, NULL, NULL, &n_listed, &err), n_listed != 1)) {
            fprintf(stderr, "harness debug: --case %s: debug runs one case; give one id\n", cli->cases);
            goto done;
        }
        int64_t id = cli->case_id >= 0 ? cli->case_id : smallest_case(p);
        if (id < 0 || id >= p->n_cases) {
            fprintf(stderr, "harness debug: --case %lld: the plan has %lld cases\n", (long long)id, (long long)p->n_cases);
            goto done;
        }
        c = &p->cases[id];
    }
    {
        /* A case whose parameters do not evaluate (--set in_ch=x) is bad input: say so before compiling. */
        hn_workload shape;
        if (hn_workload_shape(&shape, p, c, &err) != 0) {
            if (cli->set) fprintf(stderr, "harness debug: --set %s: %s\n", cli->set, err.msg);
            else fprintf(stderr, "harness debug: %s\n", err.msg);
            goto done;
        }
    }
    extra = xcalloc(6, sizeof *extra);
    extra[n_extra++] = xstrdup("DEBUG");
    extra[n_extra++] = xstrdup("SINGLE_BLOCK");
    unsigned bx = 0, by = 0, bz = 0;
    if (cli->block) {
        char tail;
        /* %u would take -1 as 4294967295 */
        if (strchr(cli->block, '-') || sscanf(cli->block, "%u,%u,%u%c", &bx, &by, &bz, &tail) != 3) {
            fprintf(stderr, "harness debug: --block %s: expected X,Y,Z (e.g. 0,1,0), block indices from 0\n", cli->block);
            goto done;
        }
        extra[n_extra++] = xasprintf("DEBUG_BLOCK_X=%u", bx);
        extra[n_extra++] = xasprintf("DEBUG_BLOCK_Y=%u", by);
        extra[n_extra++] = xasprintf("DEBUG_BLOCK_Z=%u", bz);
    }

    unsigned sanitize = 0;
    const char *backend = cli->backend;
    if (cli->sanitize) {
        if (hn_san_parse(cli->sanitize, &sanitize, &err) != 0) {
            fprintf(stderr, "harness debug: --sanitize: %s\n", err.msg);
            goto done;
        }
        if (strcmp(backend, "cuda") == 0) {
            fprintf(stderr, "harness debug: --sanitize runs kernels on the CPU emulator (--backend emu)\n");
            goto done;
        }
        backend = "emu";
    }
    if (cli->report && !cli->sanitize) {
        fprintf(stderr, "harness debug: --report %s: the sanitizer's report, which needs --sanitize\n", cli->report);
        goto done;
    }
    if (cli->report && hn_check_appendable(cli->report, &err) != 0) {
        fprintf(stderr, "harness debug: --report: %s\n", err.msg);
        goto done;
    }
    /* One emulator worker: blocks then run one at a time in linear order
     * whether or not the kernel waits on debug_counter. */
    hn_backend_opts bo = {.emu_threads = cli->emu_threads > 0 ? cli->emu_threads : 1,
                          .kernel_timeout = cli->kernel_timeout >= 0 ? cli->kernel_timeout : 60,
                          .printf_fifo = (size_t)64 << 20,
                          .sanitize = sanitize};
    if (hn_backend_create(backend, &bo, !cli->quiet, &be, &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    rc = 1;
    hn_device_info dev;
    be->ops->device_info(be, &dev);
    int is_emu = strcmp(be->ops->name, "emu") == 0;
    cache = cli->cache_dir ? xstrdup(cli->cache_dir) : hn_default_cache_dir();
    hn_build_init(&b, p, v, (const char *const *)extra, n_extra, is_emu ? NULL : dev.arch, cache);
    if (sanitize) b.req.instrument = HN_INSTRUMENT_ACCESSES;
    char *log = NULL;
    if (hn_compile(be->ops->target, &b.req, &img, &log, &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        free(log);
        goto done;
    }
    free(log);
    const hn_variant_spec *spec = &p->specs[v->spec];
    const int nl = hn_spec_launches(spec);
    int counter_arg[HN_MAX_LAUNCHES];
    for (int li = 0; li < nl; li++) {
        if (be->ops->kernel_load(be, &img, li, &ks[li], &err) != 0 ||
            hn_check_signature(p, v, li, be, ks[li], counter_arg[li] = takes_counter(p, v, li, be, ks[li]), &err) !=
                0) {
            if (nl > 1) hn_err_prefix(&err, "launches[%d] (%s)", li, hn_spec_launch(spec, li).kernel);
            fprintf(stderr, "harness debug: %s\n", err.msg);
            goto done;
        }
    }
    if (hn_workload_create(&w, p, c, be, 1e12, &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    hn_launch_dims ds[HN_MAX_LAUNCHES];
    int in_grid = 0; /* --block is in the grid of some launch */
    for (int li = 0; li < nl; li++) {
        if (hn_eval_geometry(p, v, li, &w, &ds[li], &err) != 0) {
            fprintf(stderr, "harness debug: %s\n", err.msg);
            goto done;
        }
        in_grid |= bx < ds[li].grid[0] && by < ds[li].grid[1] && bz < ds[li].grid[2];
    }
    if (hn_workload_scratch(&w, v, &err) != 0 || hn_workload_constants(&w, v, &img, ks[0], &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    if (cli->block && !in_grid) {
        /* no block would print: said, rather than an empty kernel output */
        const hn_launch_dims *d = &ds[0];
        fprintf(stderr,
                "harness debug: --block %s is outside the grid %ux%ux%u of this case (X 0..%u, Y 0..%u, Z 0..%u)%s: "
                "no block would print\n",
                cli->block, d->grid[0], d->grid[1], d->grid[2], d->grid[0] - 1, d->grid[1] - 1, d->grid[2] - 1,
                nl > 1 ? " and those of its other launches" : "");
        rc = 2;
        goto done;
    }
    if (be->ops->alloc(be, sizeof(int), &counter, &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    hn_argval vals[HN_MAX_LAUNCHES][HN_MAX_ARGS + 1];
    void *args[HN_MAX_LAUNCHES][HN_MAX_ARGS + 1];
    for (int li = 0; li < nl; li++) {
        int n_args;
        if (hn_pack_args(p, v, li, &w, counter, counter_arg[li], vals[li], args[li], &n_args, &err) != 0) {
            if (nl > 1) hn_err_prefix(&err, "launches[%d]", li);
            fprintf(stderr, "harness debug: %s\n", err.msg);
            goto done;
        }
    }
    printf("debug: %s on case %s [%s: %s]\n", v->label, w.label, be->ops->name, dev.name);
    printf("defines:");
    for (int i = 0; i < b.n_defines; i++) printf(" -D%s", b.defines[i]);
    printf("\n");
    int all_counted = 1;
    const char *uncounted = NULL; /* the first kernel without the counter */
    for (int li = 0; li < nl; li++) {
        const hn_launch_dims *d = &ds[li];
        char which[160] = "launch";
        if (nl > 1) snprintf(which, sizeof which, "launch %d of %d (%s)", li + 1, nl, hn_spec_launch(spec, li).kernel);
        printf("%s: grid %ux%ux%u, block %ux%ux%u, %zu bytes of dynamic shared memory%s\n", which, d->grid[0],
               d->grid[1], d->grid[2], d->block[0], d->block[1], d->block[2], d->shared_bytes,
               counter_arg[li] ? ", + debug_counter" : " (the kernel takes no debug_counter)");
        all_counted &= counter_arg[li];
        if (!counter_arg[li] && !uncounted) uncounted = hn_spec_launch(spec, li).kernel;
    }
    if (cli->block && !reads_debug_block(b.req.src_path, 0))
        printf("note: --block: %s never reads DEBUG_BLOCK_X/Y/Z (nor hn_debug_block()/hn_debug_leader() of "
               "hn_kernel.h), so it changes nothing: every block prints\n",
               b.req.src_path);
    int ordered = is_emu ? bo.emu_threads == 1 : all_counted;
    if (!ordered && is_emu)
        printf("note: %d emulator workers run blocks side by side, so their output may interleave "
               "(debug runs one worker unless --emu-threads says otherwise)\n", bo.emu_threads);
    if (!ordered && !is_emu)
        printf("note: %s takes no debug_counter, so on a GPU its blocks are not serialized: SINGLE_BLOCK "
               "needs the kernel to wait for its turn on that counter (a trailing int *debug_counter, "
               "HN_SINGLE_BLOCK_ENTER/LEAVE from hn_kernel.h), and printf output of different blocks may "
               "interleave. On the emulator (--backend emu) blocks run one at a time in linear order "
               "whatever the kernel.\n",
               uncounted);
    printf("--- kernel output (%s) ---\n", ordered ? "blocks one at a time, in linear order" : "blocks in any order");
    fflush(stdout);
    /* each launch in order, its blocks' turn counter from 0 */
    int launched = hn_poison_outputs(&w, spec->zero, &err) == 0;
    for (int li = 0; launched && li < nl; li++) {
        if (nl > 1) printf("--- launch %d of %d: %s ---\n", li + 1, nl, hn_spec_launch(spec, li).kernel);
        fflush(stdout);
        launched = be->ops->fill(be, counter, 0, sizeof(int), &err) == 0 &&
                   be->ops->launch(be, ks[li], &ds[li], args[li], &err) == 0 && be->ops->sync(be, &err) == 0;
        fflush(stdout);
        if (!launched && nl > 1) hn_err_prefix(&err, "launch %d of %d (%s)", li + 1, nl, hn_spec_launch(spec, li).kernel);
    }
    fflush(stdout);
    printf("--- end of kernel output ---\n%s", launched ? "\n" : "");
    int found = sanitizer_report(cli, be, v->label, w.label);
    if (!launched) {
        fprintf(stderr, "harness debug: launch failed: %s\n", err.msg);
        goto done;
    }

    hn_row_check rcheck;
    if (hn_check_outputs(&w, v, NULL, &rcheck, &err) != 0) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    const hn_op *op = p->op;
    /* As in run: a kernel that wrote into an input fails, whatever its outputs
     * (the inputs printed below are the generated ones). */
    size_t n_diff = 0;
    int clobbered = hn_verify_inputs(&w, &n_diff, &err);
    if (clobbered == -2) {
        fprintf(stderr, "harness debug: %s\n", err.msg);
        goto done;
    }
    int all_match = 1;
    for (int i = 0; i < op->n_buffers; i++) {
        int64_t dims[4];
        int nd = op->dims(w.params, i, dims);
        hn_dtype dt = w.dtype[i];
        if (op->buffers[i].role == HN_BUF_IN) {
            print_buffer(op->buffers[i].name, op->buffers[i].shape, dims, nd, w.host[i], dt);
            continue;
        }
        if (op->buffers[i].role == HN_BUF_INOUT) { /* read and written: what the kernel started from */
            char title[128];
            snprintf(title, sizeof title, "%s (input)", op->buffers[i].name);
            print_buffer(title, op->buffers[i].shape, dims, nd, w.inout_copy[i], dt);
        }
        if (!hn_variant_binds(p, v, i)) { /* as in run: a kernel is checked on the outputs it is given */
            printf("%s: not given to this kernel (not checked)\n", op->buffers[i].name);
            continue;
        }
        /* The reference as a full buffer where it is complete (debug cases are
         * computed in full; a layout may still order it by index). */
        const hn_ref *ref = &w.refs[i];
        double *full = xmalloc((size_t)(w.counts[i] ? w.counts[i] : 1) * sizeof *full);
        for (int64_t e = 0; e < w.counts[i]; e++) full[e] = NAN;
        for (int64_t k = 0; k < ref->n; k++) full[ref->index ? ref->index[k] : k] = ref->values[k];
        char title[128];
        snprintf(title, sizeof title, "%s (kernel)", op->buffers[i].name);
        print_buffer(title, op->buffers[i].shape, dims, nd, w.host[i], dt);
        snprintf(title, sizeof title, "%s (reference)", op->buffers[i].name);
        print_buffer(title, op->buffers[i].shape, dims, nd, full, -1);
        /* this output's tolerances */
        hn_scope scope = {p, w.c, v, w.params, 0, NULL};
        double atol = 0, rtol = 0;
        const hn_out_check *oc = p->out_check ? &p->out_check[i] : NULL;
        hn_expr_eval_double(oc && oc->atol ? oc->atol : p->atol, hn_scope_lookup, &scope, &atol, &err);
        hn_expr_eval_double(oc && oc->rtol ? oc->rtol : p->rtol, hn_scope_lookup, &scope, &rtol, &err);
        if (dt == HN_DT_I32) atol = rtol = 0;
        hn_check_result cr;
        hn_check_buffer(w.host[i], dt, ref, atol, rtol, &cr);
        /* Mismatches of this buffer, with coordinates. */
        int64_t bad = 0;
        for (int64_t e = 0; e < w.counts[i]; e++) {
            if (isnan(full[e])) continue;
            double o = hn_buffer_get(w.host[i], dt, e);
            if (hn_check_close(o, full[e], atol, rtol)) continue;
            if (bad++ < 10) {
                int64_t cc[4];
                coords(dims, nd, e, cc);
                printf("%s %s ", bad == 1 ? "first mismatches of" : "                   ", op->buffers[i].name);
                print_coords(stdout, cc, nd);
                printf(": kernel %.6g, reference %.6g, diff %.3g\n", o, full[e], o - full[e]);
            }
        }
        all_match &= cr.match_fraction >= 1.0;
        printf("%s: %lld of %lld elements match (atol %.3g, rtol %.3g), %lld NaN/Inf, max abs err %.3g, max rel err %.3g\n",
               op->buffers[i].name, (long long)cr.matched, (long long)cr.checked, atol, rtol, (long long)cr.nonfinite,
               cr.max_abs_err, cr.max_rel_err);
        dir = xstrdup(cli->out ? cli->out : "debug");
        if (hn_mkdirs(dir, &err) == 0) {
            char safe[256];
            hn_sanitize_name(v->label, safe, sizeof safe);
            char *png = xasprintf("%s/mismatch-%s-%s.png", dir, safe, op->buffers[i].name);
            if (write_mismatch_map(png, dims, nd, w.host[i], dt, full, atol, rtol, &err) == 0)
                printf("mismatch map: %s (one panel per channel; grey = match, red = mismatch, black = NaN/Inf)\n", png);
            else
                fprintf(stderr, "harness debug: mismatch map: %s\n", err.msg);
            free(png);
        } else {
            fprintf(stderr, "harness debug: %s\n", err.msg);
        }
        free(dir);
        dir = NULL;
        free(full);
    }
    if (clobbered >= 0)
        printf("%s: the kernel wrote into this input (%zu bytes changed); harness run reports the row as a mismatch\n",
               op->buffers[clobbered].name, n_diff);
    if (rcheck.worst_buffer < 0) { /* given no output: checked on nothing */
        char why[512];
        hn_op_outputs_text(op, why, sizeof why);
        printf("%s\n", why);
        all_match = 0;
    }
    rc = all_match && !found && clobbered < 0 ? 0 : 1;
    printf("verdict: %s%s%s%s%s\n", all_match ? "output matches the reference" : "output does NOT match the reference",
           clobbered >= 0 ? "; the kernel wrote into its input '" : "", clobbered >= 0 ? op->buffers[clobbered].name : "",
           clobbered >= 0 ? "'" : "", found ? "; the sanitizer found something (above)" : "");
done:
    if (counter) be->ops->free(be, counter);
    hn_workload_free(&w);
    for (int li = 0; li < HN_MAX_LAUNCHES; li++)
        if (ks[li]) be->ops->kernel_free(be, ks[li]);
    hn_module_image_free(&img);
    hn_build_free(&b);
    for (int i = 0; i < n_extra; i++) free(extra[i]);
    free(extra);
    free(cache);
    free(dir);
    hn_case_release(&made);
    hn_backend_destroy(be);
    hn_plan_free(p);
    return rc;
}
