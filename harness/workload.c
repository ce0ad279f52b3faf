/*
 * workload.c: one case made ready to run (inputs, reference, device buffers),
 * and the per-variant pieces run.c and debug.c share: compile requests, launch
 * geometry, argument packing and signature checks, output checks. See run.h.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

void hn_build_init(hn_build *b, const hn_plan *p, const hn_variant *v, const char *const *extra,
                   int n_extra, const char *arch, const char *cache_dir) {
    memset(b, 0, sizeof *b);
    const hn_variant_spec *s = &p->specs[v->spec];
    int n = 0;
    char **own = hn_variant_define_args(p, v, &n);
    b->defines = xcalloc((size_t)(n + n_extra + 1), sizeof *b->defines);
    for (int i = 0; i < n; i++) b->defines[i] = own[i];
    free(own);
    for (int i = 0; i < n_extra; i++) b->defines[n + i] = xstrdup(extra[i]);
    b->n_defines = n + n_extra;
    for (int i = 0; i < hn_spec_launches(s); i++) b->kernels[i] = hn_spec_launch(s, i).kernel;
    b->req.src_path = s->file;
    b->req.defines = (const char *const *)b->defines;
    b->req.n_defines = b->n_defines;
    b->req.include_dirs = (const char *const *)s->include_dirs;
    b->req.n_include_dirs = s->n_include_dirs;
    b->req.kernels = b->kernels;
    b->req.n_kernels = hn_spec_launches(s);
    b->req.arch = arch;
    b->req.cache_dir = cache_dir;
    b->req.options = (const char *const *)s->options;
    b->req.n_options = s->n_options;
    b->req.symbols = (const char *const *)s->const_names;
    b->req.n_symbols = s->n_constants;
}

void hn_build_free(hn_build *b) {
    if (!b) return;
    for (int i = 0; i < b->n_defines; i++) free(b->defines[i]);
    free(b->defines);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------------- */

static uint64_t case_seed(const hn_plan *p, const hn_case *c) {
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_add(&h, &p->seed, sizeof p->seed);
    for (int a = 0; a < p->n_axes; a++) {
        char buf[64];
        hn_value_format(&c->values[a], buf, sizeof buf);
        hn_hash_adds(&h, p->axes[a].name);
        hn_hash_adds(&h, buf);
    }
    return h.a ^ (h.b * 0x9e3779b97f4a7c15ULL);
}

int hn_workload_shape(hn_workload *w, const hn_plan *p, const hn_case *c, hn_err *err) {
    memset(w, 0, sizeof *w);
    w->plan = p;
    w->c = c;
    const hn_op *op = p->op;
    if (op->n_params > HN_MAX_PARAMS || op->n_buffers > HN_MAX_BUFFERS)
        return hn_errf(err, "operator %s has %d parameters and %d buffers (at most %d and %d)", op->name,
                       op->n_params, op->n_buffers, HN_MAX_PARAMS, HN_MAX_BUFFERS);
    if (hn_plan_case_params(p, c, w->params, err) != 0) return -1;
    if (op->shape(w->params, w->counts, err) != 0) return -1;
    for (int i = 0; i < op->n_buffers; i++) w->dtype[i] = hn_op_dtype(op, w->params, i);
    w->flop = op->flop(w->params);
    w->bytes = op->bytes(w->params);
    op->label(w->params, w->label, sizeof w->label);
    return 0;
}

int hn_workload_create(hn_workload *w, const hn_plan *p, const hn_case *c, hn_backend *be,
                       double ref_budget_gflop, hn_err *err) {
    if (hn_workload_shape(w, p, c, err) != 0) return -1;
    const hn_op *op = p->op;
    w->be = be;
    double t0 = hn_now();
    for (int i = 0; i < op->n_buffers; i++) {
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        w->host[i] = xcalloc(bytes ? bytes : 1, 1);
    }
    uint64_t seed = case_seed(p, c);
    op->generate(w->params, w->host, seed);
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role != HN_BUF_INOUT) continue;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        w->inout_copy[i] = xmalloc(bytes ? bytes : 1);
        memcpy(w->inout_copy[i], w->host[i], bytes);
    }
    double t1 = hn_now();
    w->gen_seconds = t1 - t0;
    if (op->reference(w->params, w->host, w->refs, ref_budget_gflop, seed, 0, err) != 0) goto fail;
    double t2 = hn_now();
    w->ref_seconds = t2 - t1;
    if (be) {
        for (int i = 0; i < op->n_buffers; i++) {
            size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
            if (be->ops->alloc(be, bytes, &w->dev[i], err) != 0) {
                hn_err_prefix(err, "allocating '%s' (%zu bytes)", op->buffers[i].name, bytes);
                goto fail;
            }
            if (be->ops->label) be->ops->label(be, w->dev[i], op->buffers[i].name);
            if (op->buffers[i].role != HN_BUF_OUT &&
                be->ops->upload(be, w->dev[i], w->host[i], bytes, err) != 0)
                goto fail;
        }
        w->upload_seconds = hn_now() - t2;
    }
    return 0;
fail:
    hn_workload_free(w);
    return -1;
}

void hn_workload_free(hn_workload *w) {
    if (!w || !w->plan) return;
    const hn_op *op = w->plan->op;
    for (int i = 0; i < op->n_buffers; i++) {
        free(w->host[i]);
        free(w->inout_copy[i]);
        hn_ref_free(&w->refs[i]);
        if (w->be && w->dev[i]) w->be->ops->free(w->be, w->dev[i]);
    }
    for (int i = 0; i < HN_MAX_SCRATCH; i++)
        if (w->be && w->scratch[i]) w->be->ops->free(w->be, w->scratch[i]);
    memset(w, 0, sizeof *w);
}

/* ---------------------------------------------------------------------- */

void hn_geometry_text(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_sb *grid,
                      hn_sb *block) {
    const hn_launch_spec l = hn_spec_launch(&p->specs[v->spec], launch);
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    for (int i = 0; i < 6; i++) {
        hn_sb *sb = i < 3 ? grid : block;
        const hn_expr *e = i < 3 ? l.grid[i] : l.block[i - 3];
        int64_t x;
        hn_err err;
        if (i % 3) hn_sb_addc(sb, 'x');
        if (hn_expr_eval_int(e, hn_scope_lookup, &scope, &x, &err) == 0) hn_sb_addf(sb, "%lld", (long long)x);
        else hn_sb_addc(sb, '?');
    }
}

int hn_eval_geometry(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_launch_dims *d,
                     hn_err *err) {
    const hn_launch_spec l = hn_spec_launch(&p->specs[v->spec], launch);
    /* launch 0 of a single-launch variant is the variant: its messages say "block[0]", not "launches[0].block[0]" */
    char where[32] = "";
    if (hn_spec_launches(&p->specs[v->spec]) > 1) snprintf(where, sizeof where, "launches[%d].", launch);
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    for (int i = 0; i < 3; i++) {
        int64_t x;
        if (hn_expr_eval_int(l.block[i], hn_scope_lookup, &scope, &x, err) != 0)
            return hn_err_prefix(err, "%sblock[%d] '%s'", where, i, hn_expr_text(l.block[i]));
        if (x < 1 || x > UINT32_MAX)
            return hn_errf(err, "%sblock[%d] '%s' = %lld (must be %s)", where, i, hn_expr_text(l.block[i]),
                           (long long)x, x < 1 ? "at least 1" : "under 2^32: a launch dimension is 32 bits");
        d->block[i] = (unsigned)x;
        if (hn_expr_eval_int(l.grid[i], hn_scope_lookup, &scope, &x, err) != 0)
            return hn_err_prefix(err, "%sgrid[%d] '%s'", where, i, hn_expr_text(l.grid[i]));
        if (x < 1 || x > UINT32_MAX)
            return hn_errf(err, "%sgrid[%d] '%s' = %lld (must be %s)", where, i, hn_expr_text(l.grid[i]),
                           (long long)x, x < 1 ? "at least 1" : "under 2^32: a launch dimension is 32 bits");
        d->grid[i] = (unsigned)x;
    }
    int64_t sh;
    if (hn_expr_eval_int(l.shared, hn_scope_lookup, &scope, &sh, err) != 0)
        return hn_err_prefix(err, "%sshared_bytes '%s'", where, hn_expr_text(l.shared));
    if (sh < 0)
        return hn_errf(err, "%sshared_bytes '%s' = %lld is negative", where, hn_expr_text(l.shared), (long long)sh);
    d->shared_bytes = (size_t)sh;
    return 0;
}

void hn_row_work(const hn_plan *p, const hn_workload *w, const hn_variant *v, double *flop, double *bytes) {
    const hn_op *op = p->op;
    *flop = w->flop;
    *bytes = w->bytes;
    if (!v) return;
    int all = 1;
    for (int i = 0; i < op->n_buffers; i++) all &= hn_variant_binds(p, v, i);
    if (all) return;
    double f = 0, b = 0;
    for (int i = 0; i < op->n_buffers; i++) {
        if (!hn_variant_binds(p, v, i)) continue;
        b += (double)w->counts[i] * hn_dtype_size(w->dtype[i]);
        if (op->buffers[i].role != HN_BUF_IN && op->flop_of) f += op->flop_of(w->params, i);
    }
    *bytes = b;
    if (op->flop_of) *flop = f;
}

/* Whether argument a passes buffer's address (itself, or a field of it). */
static int arg_binds(const hn_arg *a, int buffer) {
    if (a->kind == HN_ARG_BUFFER) return a->index == buffer;
    for (int i = 0; i < a->n_fields; i++)
        if (arg_binds(&a->fields[i], buffer)) return 1;
    return 0;
}

int hn_variant_binds(const hn_plan *p, const hn_variant *v, int buffer) {
    const hn_variant_spec *s = &p->specs[v->spec];
    for (int li = 0; li < hn_spec_launches(s); li++) {
        const hn_launch_spec l = hn_spec_launch(s, li);
        for (int i = 0; i < l.n_args; i++)
            if (arg_binds(&l.args[i], buffer)) return 1;
    }
    /* a struct constant can hold a buffer's address too */
    for (int i = 0; i < s->n_constants; i++)
        if (s->const_vals[i].kind == HN_ARG_STRUCT && arg_binds(&s->const_vals[i], buffer)) return 1;
    return 0;
}

static int has_counter_arg(const hn_launch_spec *l) {
    for (int i = 0; i < l->n_args; i++)
        if (l->args[i].kind == HN_ARG_DEBUG_COUNTER) return 1;
    return 0;
}

static int set_typed(char type, const hn_value *v, hn_argval *out, hn_err *err) {
    double d = v->type == HN_VAL_INT ? (double)v->i : v->f;
    if (v->type == HN_VAL_STR) return hn_errf(err, "is the string \"%s\", not a number", v->s);
    switch (type) {
    case 'i':
        if (v->type != HN_VAL_INT || v->i < INT32_MIN || v->i > INT32_MAX)
            return hn_errf(err, "= %g does not fit an int", d);
        out->i = (int32_t)v->i;
        return 0;
    case 'u':
        if (v->type != HN_VAL_INT || v->i < 0 || v->i > UINT32_MAX)
            return hn_errf(err, "= %g does not fit an unsigned int", d);
        out->u = (uint32_t)v->i;
        return 0;
    case 'l':
        if (v->type != HN_VAL_INT) return hn_errf(err, "= %g is not an integer", d);
        out->l = v->i;
        return 0;
    case 'f': out->f = (float)d; return 0;
    case 'd': out->d = d; return 0;
    case 'b':
        if (v->type != HN_VAL_INT || (v->i != 0 && v->i != 1)) return hn_errf(err, "= %g is not a bool (0 or 1)", d);
        out->l = 0;
        out->b = (uint8_t)v->i;
        return 0;
    }
    return hn_errf(err, "has an unknown type");
}

/* The value of a parameter or typed-expression argument for w's case. */
static int arg_value(const hn_arg *a, const hn_workload *w, hn_scope *scope, hn_argval *out, hn_err *err) {
    hn_value val;
    if (a->kind == HN_ARG_PARAM) {
        double d = w->params[a->index];
        val = a->type == 'i' ? (hn_value){.type = HN_VAL_INT, .i = (int64_t)d} : (hn_value){.type = HN_VAL_FLOAT, .f = d};
    } else if (hn_expr_eval(a->expr, hn_scope_lookup, scope, &val, err) != 0) {
        return -1;
    }
    return set_typed(a->type, &val, out, err);
}

/* The address buffer argument a passes for w's case: the buffer's, or where
 * its offset ("y + 256", in elements) points, from 0 to the buffer's end
 * (one past the last element, as C allows). */
static int buffer_value(const hn_arg *a, const hn_workload *w, hn_scope *scope, hn_dptr *out, hn_err *err) {
    *out = w->dev[a->index];
    if (!a->expr) return 0;
    hn_value val;
    if (hn_expr_eval(a->expr, hn_scope_lookup, scope, &val, err) != 0) return hn_err_prefix(err, "%s", a->where);
    const char *name = w->plan->op->buffers[a->index].name;
    const long long count = (long long)w->counts[a->index];
    if (val.type != HN_VAL_INT)
        return hn_errf(err, "%s: '%s': the offset into buffer '%s' is not an integer (elements)", a->where, a->text,
                       name);
    if (val.i < 0 || val.i > count)
        return hn_errf(err, "%s: '%s': offset %lld is outside buffer '%s' (%lld elements: 0 to %lld)", a->where,
                       a->text, (long long)val.i, name, count, count);
    *out += (hn_dptr)val.i * hn_dtype_size(w->dtype[a->index]);
    return 0;
}

/* The bytes of struct argument a for w's case into out (a->size bytes, padding 0). */
static int pack_struct(const hn_arg *a, const hn_workload *w, hn_scope *scope, unsigned char *out, hn_err *err) {
    memset(out, 0, (size_t)a->size);
    for (int i = 0; i < a->n_fields; i++) {
        const hn_arg *f = &a->fields[i];
        hn_argval v;
        switch (f->kind) {
        case HN_ARG_STRUCT:
            if (pack_struct(f, w, scope, out + f->offset, err) != 0) return hn_err_prefix(err, "field %d", i);
            continue;
        case HN_ARG_BUFFER:
            if (buffer_value(f, w, scope, &v.p, err) != 0) return -1;
            break;
        case HN_ARG_SCRATCH:
            v.p = f->index < w->n_scratch && w->scratch_bytes[f->index] ? w->scratch[f->index] : 0;
            break;
        case HN_ARG_PARAM:
        case HN_ARG_EXPR:
            if (arg_value(f, w, scope, &v, err) != 0) return hn_err_prefix(err, "field %d '%s'", i, f->text);
            break;
        default: return hn_errf(err, "field %d '%s' is not a value", i, f->text);
        }
        memcpy(out + f->offset, &v, (size_t)hn_arg_type_size(f->type)); /* every member starts at the union's start */
    }
    return 0;
}

int hn_pack_args(const hn_plan *p, const hn_variant *v, int launch, const hn_workload *w, hn_dptr debug_counter,
                 int append_counter, hn_argval *vals, void **args, int *n_args, hn_err *err) {
    const hn_launch_spec l = hn_spec_launch(&p->specs[v->spec], launch);
    const hn_launch_spec *s = &l;
    if (s->n_args > HN_MAX_ARGS) return hn_errf(err, "more than %d arguments", HN_MAX_ARGS);
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    int n = 0;
    for (int i = 0; i < s->n_args; i++, n++) {
        const hn_arg *a = &s->args[i];
        args[n] = &vals[n];
        switch (a->kind) {
        case HN_ARG_BUFFER:
            if (buffer_value(a, w, &scope, &vals[n].p, err) != 0) return -1;
            break;
        case HN_ARG_SCRATCH:
            /* an empty one is NULL; one bound before hn_workload_scratch, a bug */
            vals[n].p = a->index < w->n_scratch && w->scratch_bytes[a->index] ? w->scratch[a->index] : 0;
            break;
        case HN_ARG_DEBUG_COUNTER:
            if (!debug_counter && !append_counter) { /* not a debug run: the kernel declares none (hn_check_signature) */
                n--;
                continue;
            }
            if (!debug_counter)
                return hn_errf(err, "args[%d] binds debug_counter, which exists only in debug runs "
                                    "(SINGLE_BLOCK)",
                               i);
            vals[n].p = debug_counter;
            break;
        case HN_ARG_PARAM:
        case HN_ARG_EXPR:
            if (arg_value(a, w, &scope, &vals[n], err) != 0) return hn_err_prefix(err, "args[%d] '%s'", i, a->text);
            /* an integer parameter bound by name goes as 64 bits, sign-extended: a
             * 4-byte parameter reads its low half (little-endian, as every target
             * is), an int64_t / size_t / long long one the whole (hn_check_signature) */
            if (a->kind == HN_ARG_PARAM && a->type == 'i') vals[n].l = (int64_t)vals[n].i;
            break;
        case HN_ARG_STRUCT:
            if (pack_struct(a, w, &scope, vals[n].bytes, err) != 0) return hn_err_prefix(err, "args[%d]", i);
            break;
        }
    }
    if (append_counter && !has_counter_arg(s)) {
        vals[n].p = debug_counter;
        args[n] = &vals[n];
        n++;
    }
    *n_args = n;
    return 0;
}

static const char *describe_param(const hn_param_info *pi, char *buf, size_t size) {
    const char *kind = pi->kind == 'p' ? "pointer"
                     : pi->kind == 'i' ? "signed integer"
                     : pi->kind == 'u' ? "unsigned integer"
                     : pi->kind == 'f' ? (pi->size == 8 ? "double" : "float")
                                       : "value";
    if (pi->kind == 'o') kind = "struct";
    const int an = pi->size == 8 || pi->size == 11 || pi->size == 18 || (pi->size >= 80 && pi->size < 90);
    snprintf(buf, size, "%s %d-byte %s", an ? "an" : "a", pi->size, kind);
    return buf;
}

static void expected_param(const hn_arg *a, hn_param_info *pi) {
    if (a && a->kind == HN_ARG_STRUCT) {
        *pi = (hn_param_info){'o', a->size};
        return;
    }
    switch (a ? a->type : 'p') { /* NULL: the debug counter */
    case 'p': *pi = (hn_param_info){'p', 8}; break;
    case 'i': *pi = (hn_param_info){'i', 4}; break;
    case 'u': *pi = (hn_param_info){'u', 4}; break;
    case 'l': *pi = (hn_param_info){'i', 8}; break;
    case 'f': *pi = (hn_param_info){'f', 4}; break;
    case 'd': *pi = (hn_param_info){'f', 8}; break;
    case 'b': *pi = (hn_param_info){'u', 1}; break;
    default: *pi = (hn_param_info){'?', 0}; break;
    }
}

/* Compares every input buffer on the device with the generated one and
 * re-uploads any that differ, so no variant sees another's writes. Returns the
 * first buffer a kernel wrote into (and how many bytes differ), or -1. */
int hn_verify_inputs(hn_workload *w, size_t *n_diff, hn_err *err) {
    const hn_op *op = w->plan->op;
    int first = -1;
    *n_diff = 0;
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role != HN_BUF_IN) continue;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        unsigned char *now = xmalloc(bytes ? bytes : 1);
        if (w->be->ops->download(w->be, now, w->dev[i], bytes, err) != 0) {
            free(now);
            return -2;
        }
        if (memcmp(now, w->host[i], bytes) != 0) {
            const unsigned char *was = w->host[i];
            size_t d = 0;
            for (size_t b = 0; b < bytes; b++) d += now[b] != was[b];
            if (first < 0) first = i, *n_diff = d;
            if (w->be->ops->upload(w->be, w->dev[i], w->host[i], bytes, err) != 0) {
                free(now);
                return -2;
            }
        }
        free(now);
    }
    return first;
}

/* The typed-argument prefix ("long", "double" ...) that passes a value as the
 * parameter pi wants, or NULL when none does (a pointer, a struct). */
static const char *typed_prefix(const hn_param_info *pi) {
    /* a bool, a char, or an empty tag struct (std::bool_constant<B>): one byte */
    if (pi->size == 1 && (pi->kind == 'i' || pi->kind == 'u' || pi->kind == 'o')) return "bool";
    if (pi->kind == 'i' || pi->kind == 'u')
        return pi->size == 8 ? "long" : pi->size == 4 ? (pi->kind == 'u' ? "unsigned" : "int") : NULL;
    if (pi->kind == 'f') return pi->size == 8 ? "double" : pi->size == 4 ? "float" : NULL;
    return NULL;
}

int hn_check_signature(const hn_plan *p, const hn_variant *v, int launch, hn_backend *be, hn_kernel *k,
                       int append_counter, hn_err *err) {
    const hn_launch_spec l = hn_spec_launch(&p->specs[v->spec], launch);
    const hn_launch_spec *s = &l;
    hn_param_info params[64];
    int n = -1;
    if (be->ops->kernel_params(be, k, params, 64, &n, err) != 0) return -1;
    if (n < 0) return 0; /* the backend cannot tell */
    /* outside debug runs a debug_counter in args is left out: a kernel
     * declares it only under SINGLE_BLOCK (HN_SINGLE_BLOCK_PARAM) */
    int dropped = 0, at[64];
    for (int i = 0, k = 0; i < s->n_args; i++) {
        if (!append_counter && s->args[i].kind == HN_ARG_DEBUG_COUNTER)
            dropped++;
        else if (k < 64)
            at[k++] = i;
    }
    int want = s->n_args - dropped + (append_counter && !has_counter_arg(s) ? 1 : 0);
    if (dropped && n == s->n_args) /* the kernel takes it in every build */
        for (int i = 0; i < s->n_args; i++)
            if (s->args[i].kind == HN_ARG_DEBUG_COUNTER)
                return hn_errf(err, "args[%d] binds debug_counter, which exists only in debug runs (SINGLE_BLOCK)", i);
    if (n != want)
        return hn_errf(err, "kernel %s takes %d parameter%s but the config binds %d argument%s%s",
                       s->kernel, n, n == 1 ? "" : "s", want, want == 1 ? "" : "s",
                       append_counter ? " (debug_counter included)"
                       : dropped  ? " (debug_counter left out: it is passed only in debug runs)"
                                  : "");
    for (int i = 0; i < n && i < 64; i++) {
        hn_param_info e;
        const int ai = i < s->n_args - dropped ? at[i] : s->n_args; /* the argument of parameter i */
        const char *text = ai < s->n_args ? s->args[ai].text : "debug_counter";
        expected_param(ai < s->n_args ? &s->args[ai] : NULL, &e);
        int size_ok = params[i].size <= 0 || params[i].size == e.size;
        /* an integer operator parameter named as it is ("n") takes the integer
         * type of 4 or 8 bytes the kernel declares (int64_t, size_t, unsigned
         * long long ...): hn_pack_args passes it as 64 bits */
        if (ai < s->n_args && s->args[ai].kind == HN_ARG_PARAM && s->args[ai].type == 'i' &&
            (params[i].kind == 'i' || params[i].kind == 'u') && (params[i].size == 4 || params[i].size == 8))
            size_ok = 1;
        int kind_ok = params[i].kind == '?' || params[i].kind == 'o' || params[i].kind == e.kind ||
                      (params[i].kind == 'u' && e.kind == 'i') || (params[i].kind == 'i' && e.kind == 'u');
        if (!size_ok || !kind_ok) {
            char a[64], b[64], hint[160] = "";
            /* a value (not a buffer) can be converted: say how */
            const char *prefix = typed_prefix(&params[i]);
            if (ai < s->n_args && s->args[ai].kind != HN_ARG_BUFFER && s->args[ai].kind != HN_ARG_DEBUG_COUNTER &&
                e.kind != 'p' && prefix) {
                const char *colon = strchr(text, ':');
                const char *expr = s->args[ai].kind == HN_ARG_EXPR && colon ? colon + 1 : text;
                while (*expr == ' ') expr++;
                snprintf(hint, sizeof hint, " (write \"%s: %.80s\" in args to pass it as one)", prefix, expr);
            }
            return hn_errf(err, "argument %d ('%s') is %s but parameter %d of %s is %s%s", i, text,
                           describe_param(&e, a, sizeof a), i, s->kernel,
                           describe_param(&params[i], b, sizeof b), hint);
        }
    }
    return 0;
}

static int poison(hn_backend *be, hn_dptr p, size_t bytes, hn_err *err) {
    if (!p || !bytes) return 0;
    return be->ops->poison ? be->ops->poison(be, p, bytes, err) : be->ops->fill(be, p, 0xFF, bytes, err);
}

int hn_poison_outputs(hn_workload *w, uint64_t zero, hn_err *err) {
    const hn_op *op = w->plan->op;
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role == HN_BUF_IN || (i < HN_ZERO_BUFFERS && zero >> i & 1)) continue;
        if (op->buffers[i].role == HN_BUF_INOUT) { /* its generated input, which the reference started from */
            if (w->be->ops->upload(w->be, w->dev[i], w->inout_copy[i],
                                   (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]), err) != 0)
                return hn_err_prefix(err, "restoring in-out buffer '%s'", op->buffers[i].name);
            continue;
        }
        if (poison(w->be, w->dev[i], (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]), err) != 0)
            return -1;
    }
    for (int i = 0; i < w->n_scratch; i++)
        if (!(zero & HN_ZERO_SCRATCH(i)) && poison(w->be, w->scratch[i], w->scratch_bytes[i], err) != 0) return -1;
    return hn_zero_outputs(w, zero, err);
}

int hn_zero_outputs(hn_workload *w, uint64_t zero, hn_err *err) {
    const hn_op *op = w->plan->op;
    for (int i = 0; i < op->n_buffers && i < HN_ZERO_BUFFERS; i++) {
        if (!(zero >> i & 1) || op->buffers[i].role == HN_BUF_IN) continue;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        if (w->be->ops->fill(w->be, w->dev[i], 0, bytes, err) != 0)
            return hn_err_prefix(err, "setting output '%s' to 0 (zero)", op->buffers[i].name);
    }
    for (int i = 0; i < w->n_scratch; i++)
        if ((zero & HN_ZERO_SCRATCH(i)) && w->scratch_bytes[i] &&
            w->be->ops->fill(w->be, w->scratch[i], 0, w->scratch_bytes[i], err) != 0)
            return hn_err_prefix(err, "setting scratch buffer %d to 0 (zero)", i);
    return 0;
}

/* The size of v's scratch buffer i for w's case, checked: at least 0. */
static int scratch_size(const hn_workload *w, const hn_variant *v, int i, int64_t *bytes, hn_err *err) {
    const hn_plan *p = w->plan;
    const hn_variant_spec *s = &p->specs[v->spec];
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    if (hn_expr_eval_int(s->scratch_bytes[i], hn_scope_lookup, &scope, bytes, err) != 0)
        return hn_err_prefix(err, "scratch.%s '%s'", s->scratch_names[i], hn_expr_text(s->scratch_bytes[i]));
    if (*bytes < 0)
        return hn_errf(err, "scratch.%s '%s' = %lld bytes (must be at least 0)", s->scratch_names[i],
                       hn_expr_text(s->scratch_bytes[i]), (long long)*bytes);
    return 0;
}

int hn_workload_scratch_total(const hn_workload *w, const hn_variant *v, double *bytes, hn_err *err) {
    *bytes = 0;
    if (!v) return 0;
    for (int i = 0; i < w->plan->specs[v->spec].n_scratch; i++) {
        int64_t b;
        if (scratch_size(w, v, i, &b, err) != 0) return -1;
        *bytes += (double)b;
    }
    return 0;
}

int hn_workload_scratch(hn_workload *w, const hn_variant *v, hn_err *err) {
    w->n_scratch = 0;
    if (!v) return 0;
    const hn_plan *p = w->plan;
    const hn_variant_spec *s = &p->specs[v->spec];
    /* more than the device holds fails here, with the sizes, rather than in
     * the allocator (the emulator's device memory is the host's: an
     * allocation it cannot hold is killed when first filled) */
    int64_t sizes[HN_MAX_SCRATCH];
    double total = 0;
    for (int i = 0; i < s->n_scratch; i++) {
        if (scratch_size(w, v, i, &sizes[i], err) != 0) return -1;
        total += (double)sizes[i];
    }
    if (s->n_scratch == 0) return 0;
    hn_device_info dev = {0};
    if (w->be->ops->device_info) w->be->ops->device_info(w->be, &dev);
    if (dev.global_mem && total > (double)dev.global_mem)
        return hn_errf(err, "scratch buffers of %.4g GB in all are more than the device's %.4g GB of memory",
                       total * 1e-9, (double)dev.global_mem * 1e-9);
    for (int i = 0; i < s->n_scratch; i++) {
        const int64_t bytes = sizes[i];
        /* exactly its size, so that the emulator's guard pages and sanitizer
         * see a kernel overrun it, whatever variant ran before */
        if ((size_t)bytes != w->scratch_cap[i]) {
            if (w->scratch[i]) w->be->ops->free(w->be, w->scratch[i]);
            w->scratch[i] = 0, w->scratch_cap[i] = 0;
            if (bytes > 0 && w->be->ops->alloc(w->be, (size_t)bytes, &w->scratch[i], err) != 0)
                return hn_err_prefix(err, "scratch.%s: %lld bytes", s->scratch_names[i], (long long)bytes);
            w->scratch_cap[i] = (size_t)bytes;
        }
        if (w->scratch[i] && w->be->ops->label) { /* this variant's name, also on a reused allocation */
            char name[64];
            snprintf(name, sizeof name, "%s (scratch)", s->scratch_names[i]);
            w->be->ops->label(w->be, w->scratch[i], name);
        }
        w->scratch_bytes[i] = (size_t)bytes;
        w->n_scratch = i + 1;
    }
    return 0;
}

int hn_workload_constants(const hn_workload *w, const hn_variant *v, const hn_module_image *img, hn_kernel *k,
                          hn_err *err) {
    const hn_plan *p = w->plan;
    const hn_variant_spec *s = &p->specs[v->spec];
    if (s->n_constants == 0) return 0;
    if (!w->be->ops->symbol_write)
        return hn_errf(err, "constants: the %s backend cannot write module variables", w->be->ops->name);
    if (img->n_symbols != s->n_constants)
        return hn_errf(err, "constants: the module was compiled for %d variables, the variant has %d", img->n_symbols,
                       s->n_constants);
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    for (int i = 0; i < s->n_constants; i++) {
        const hn_arg *a = &s->const_vals[i];
        const char *name = s->const_names[i];
        hn_argval val;
        const void *src = &val;
        size_t bytes;
        if (a->kind == HN_ARG_BUFFER) {
            src = w->host[a->index];
            bytes = (size_t)w->counts[a->index] * hn_dtype_size(w->dtype[a->index]);
        } else if (a->kind == HN_ARG_STRUCT) {
            if (pack_struct(a, w, &scope, val.bytes, err) != 0) return hn_err_prefix(err, "constants.%s", name);
            bytes = (size_t)a->size;
        } else {
            if (arg_value(a, w, &scope, &val, err) != 0) return hn_err_prefix(err, "constants.%s '%s'", name, a->text);
            bytes = (size_t)hn_arg_type_size(a->type);
        }
        size_t size = 0;
        const int wrote = w->be->ops->symbol_write(w->be, k, img->sym_lowered[i], src, bytes, &size, err);
        if (a->kind == HN_ARG_BUFFER && wrote != 0 && size && bytes > size)
            return hn_errf(err,
                           "constants.%s: the buffer %s is %zu bytes (%lld %s), more than the %zu bytes of the "
                           "variable %s (does a define that sizes it match the case?)",
                           name, a->text, bytes, (long long)w->counts[a->index],
                           hn_dtype_name(w->dtype[a->index]), size, name);
        if (a->kind == HN_ARG_STRUCT && size && size != bytes)
            return hn_errf(err,
                           "constants.%s: the struct %s takes %zu bytes (its fields laid out as C does), the "
                           "variable %s is %zu bytes (a field's type or the padding differs)",
                           name, a->text, bytes, name, size);
        if (a->kind != HN_ARG_BUFFER && size && size != bytes && (size == 4 || size == 8))
            return hn_errf(err,
                           "constants.%s '%s': the value is a %zu-byte %s, the variable %s is %zu bytes (give "
                           "its type: \"%s: ...\")",
                           name, a->text, bytes, hn_arg_type_name(a->type), name, size,
                           size == 8 ? (a->type == 'f' ? "double" : "long") : a->type == 'd' ? "float" : "int");
        if (a->kind != HN_ARG_BUFFER && size && size != bytes)
            return hn_errf(err,
                           "constants.%s '%s': the value is a %zu-byte %s, the variable %s is %zu bytes: a value "
                           "fills a variable of 4 or 8 bytes; an array takes an input buffer's contents, a "
                           "struct its fields ([...], as in args)",
                           name, a->text, bytes, hn_arg_type_name(a->type), name, size);
        if (wrote != 0) return hn_err_prefix(err, "constants.%s", name);
    }
    return 0;
}

/* The tolerance of output b: its own expression, else the config's. */
static int eval_tol(const hn_plan *p, hn_expr *own, hn_expr *general, const char *what, const char *buf,
                    hn_scope *scope, double *out, hn_err *err) {
    hn_expr *e = own ? own : general;
    if (hn_expr_eval_double(e, hn_scope_lookup, scope, out, err) != 0)
        return own ? hn_err_prefix(err, "check.%s.%s '%s'", buf, what, hn_expr_text(e))
                   : hn_err_prefix(err, "check.%s '%s'", what, hn_expr_text(e));
    (void)p;
    /* a negative or NaN tolerance matches no element: every row would read as a mismatch */
    if (!(*out >= 0))
        return own ? hn_errf(err, "check.%s.%s '%s' = %g: a tolerance must be at least 0", buf, what, hn_expr_text(e),
                             *out)
                   : hn_errf(err, "check.%s '%s' = %g: a tolerance must be at least 0", what, hn_expr_text(e), *out);
    return 0;
}

int hn_check_outputs(hn_workload *w, const hn_variant *v, const hn_op_baseline *b, hn_row_check *rc, hn_err *err) {
    const hn_plan *p = w->plan;
    const hn_op *op = p->op;
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    memset(rc, 0, sizeof *rc);
    rc->passed = 1;
    rc->worst_buffer = -1;
    rc->worst.match_fraction = 1.0;
    for (int i = 0; i < op->n_buffers; i++) {
        if (op->buffers[i].role == HN_BUF_IN) continue;
        /* a variant answers for the outputs it is given, not for the others; a
         * baseline for those it writes */
        if (v && !hn_variant_binds(p, v, i)) continue;
        if (!v && b && !hn_op_baseline_writes(op, b, i)) continue;
        const hn_out_check *oc = p->out_check ? &p->out_check[i] : NULL;
        double atol, rtol;
        if (eval_tol(p, oc ? oc->atol : NULL, p->atol, "atol", op->buffers[i].name, &scope, &atol, err) != 0 ||
            eval_tol(p, oc ? oc->rtol : NULL, p->rtol, "rtol", op->buffers[i].name, &scope, &rtol, err) != 0)
            return -1;
        double min_match = oc && oc->min_match >= 0 ? oc->min_match : p->min_match;
        size_t bytes = (size_t)w->counts[i] * hn_dtype_size(w->dtype[i]);
        if (w->be->ops->download(w->be, w->host[i], w->dev[i], bytes, err) != 0) return -1;
        hn_check_result r;
        hn_check_buffer(w->host[i], w->dtype[i], &w->refs[i], atol, rtol, &r);
        if (w->dtype[i] == HN_DT_I32) atol = rtol = 0;
        int ok = r.match_fraction >= min_match;
        rc->passed &= ok;
        rc->n_outputs++;
        /* the worst: a failing output over a passing one, then the lowest match
         * fraction, then the largest error */
        int worse = rc->worst_buffer < 0;
        if (!worse) {
            int worst_ok = rc->worst.match_fraction >= rc->min_match;
            worse = (!ok && worst_ok) ||
                    (ok == worst_ok && (r.match_fraction < rc->worst.match_fraction ||
                                        (r.match_fraction == rc->worst.match_fraction &&
                                         r.max_abs_err > rc->worst.max_abs_err)));
        }
        if (worse) {
            rc->worst = r;
            rc->worst_buffer = i;
            rc->atol = atol;
            rc->rtol = rtol;
            rc->min_match = min_match;
        }
    }
    /* A variant given no output would pass whatever it did (an in-place
     * kernel bound to its input alone): it fails, worst_buffer -1. */
    if (v && rc->n_outputs == 0) rc->passed = 0;
    return 0;
}

void hn_op_outputs_text(const hn_op *op, char *buf, size_t size) {
    char outs[256] = "";
    size_t used = 0;
    int input = 0;
    while (input < op->n_buffers - 1 && op->buffers[input].role != HN_BUF_IN) input++;
    for (int b = 0; b < op->n_buffers; b++) {
        if (op->buffers[b].role == HN_BUF_IN) continue;
        int n = snprintf(outs + used, sizeof outs - used, "%s'%s'", used ? ", " : "", op->buffers[b].name);
        if (n > 0 && (size_t)n < sizeof outs - used) used += (size_t)n;
    }
    snprintf(buf, size,
             "args bind none of %s's outputs (%s), so nothing the kernel did was checked: give it the output it "
             "writes (an input such as '%s' must stay unchanged: a kernel computing in place writes its result to an "
             "output instead)",
             op->name, outs, op->buffers[input].name);
}

void hn_variant_precision(const hn_plan *p, const hn_variant *v, const hn_workload *w, char *out, size_t size) {
    snprintf(out, size, "float");
    const hn_expr *e = v ? p->specs[v->spec].precision : NULL;
    if (!e) return;
    hn_scope scope = {p, w->c, v, w->params, 0, NULL};
    hn_value val;
    hn_err err;
    if (hn_expr_eval((hn_expr *)e, hn_scope_lookup, &scope, &val, &err) != 0) return;
    hn_value_format(&val, out, size);
}

void hn_first_error_line(const char *log, char *out, size_t size) {
    const char *hit = NULL;
    for (const char *p = log; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = xstrndup(p, len);
        if (strstr(line, "error")) {
            hit = p;
            free(line);
            break;
        }
        free(line);
        p = eol ? eol + 1 : NULL;
    }
    if (!hit) hit = log ? log : "";
    const char *eol = strchr(hit, '\n');
    size_t len = eol ? (size_t)(eol - hit) : strlen(hit);
    if (len >= size) len = size - 1;
    memcpy(out, hit, len);
    out[len] = '\0';
}

void hn_sanitize_name(const char *in, char *out, size_t size) {
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < size; p++)
        out[n++] = (isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.') ? *p : '_';
    out[n] = '\0';
}
