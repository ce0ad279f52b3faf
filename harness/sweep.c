/* sweep.c: see sweep.h. */
#include "sweep.h"

#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "tune/space.h"

static int combination_values(const hn_plan *p, int64_t index, hn_value *values) {
    for (int a = p->n_axes - 1; a >= 0; a--) {
        int n = p->axes[a].n;
        values[a] = p->axes[a].values[index % n];
        index /= n;
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int hn_sweep_enumerate(hn_plan *p, hn_err *err) {
    int64_t total = 1;
    for (int a = 0; a < p->n_axes; a++) {
        total *= p->axes[a].n;
        if (total > HN_SWEEP_MAX_COMBINATIONS)
            return hn_errf(err, "axes: more than %lld combinations; narrow the axes",
                           HN_SWEEP_MAX_COMBINATIONS);
    }
    int64_t *pass = xmalloc((size_t)total * sizeof *pass);
    int64_t n_pass = 0;
    hn_value *values = xcalloc((size_t)p->n_axes, sizeof *values);
    double *params = xcalloc((size_t)p->op->n_params, sizeof *params);
    hn_case c = {.values = values};
    for (int64_t i = 0; i < total; i++) {
        combination_values(p, i, values);
        hn_err e;
        if (hn_plan_case_params(p, &c, params, &e) != 0) {
            /* A parameter that cannot be computed for a combination is an error of
             * the config, not a silent filter. */
            char buf[512] = "";
            for (int a = 0; a < p->n_axes; a++) {
                char v[64];
                hn_value_format(&values[a], v, sizeof v);
                snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%s", a ? "," : "",
                         p->axes[a].name, v);
            }
            hn_errf(err, "%s (for %s)", e.msg, buf);
            goto fail;
        }
        hn_scope s = {p, &c, NULL, params, 0, NULL};
        int ok = 1;
        for (int w = 0; ok && w < p->n_where; w++) {
            hn_value v;
            if (hn_expr_eval(p->where[w], hn_scope_lookup, &s, &v, &e) != 0) {
                char text[128];
                hn_errf(err, "where[%d] ('%s'): %s", w,
                        hn_excerpt(hn_expr_text(p->where[w]), text, sizeof text), e.msg);
                goto fail;
            }
            ok = hn_value_truthy(&v);
        }
        if (ok) pass[n_pass++] = i;
    }
    p->n_total = n_pass;
    if (n_pass == 0) {
        hn_errf(err, "where: none of the %lld combinations of the axes passes it; nothing would run",
                (long long)total);
        goto fail;
    }
    int64_t n = n_pass;
    if (p->sample_count > 0 && p->sample_count < n_pass) {
        /* Partial Fisher-Yates: the first `count` slots become the sample. */
        uint64_t state = p->seed;
        for (int64_t i = 0; i < p->sample_count; i++) {
            int64_t j = i + (int64_t)hn_rand_below(&state, (uint64_t)(n_pass - i));
            int64_t t = pass[i];
            pass[i] = pass[j];
            pass[j] = t;
        }
        n = p->sample_count;
        qsort(pass, (size_t)n, sizeof *pass, cmp_i64);
    }
    p->cases = xcalloc((size_t)(n ? n : 1), sizeof *p->cases);
    p->n_cases = n;
    for (int64_t i = 0; i < n; i++) {
        p->cases[i].id = i;
        p->cases[i].index = pass[i];
        p->cases[i].values = xcalloc((size_t)p->n_axes, sizeof(hn_value));
        combination_values(p, pass[i], p->cases[i].values);
    }
    free(pass);
    free(values);
    free(params);
    return 0;
fail:
    free(pass);
    free(values);
    free(params);
    return -1;
}

/* Whether every name of e is a define of spec. */
static int only_defines(void *spec, const char *name) {
    const hn_variant_spec *s = spec;
    for (int d = 0; d < s->n_defines; d++)
        if (strcmp(s->defines[d].name, name) == 0) return 0;
    return -1;
}

/* A precision that names only defines ("ACCUM_DTYPE") is known for each define
 * combination: it must be "float" or "double", as it picks the peak (FP32 or
 * FP64) and the baselines a row is compared with. One that names the case is
 * evaluated per row. */
static int check_precision(const hn_plan *p, const hn_variant_spec *s, int si, const hn_variant *v, hn_err *err) {
    if (!s->precision || hn_expr_names(s->precision, only_defines, (void *)s) != 0) return 0;
    hn_scope scope = {p, NULL, v, NULL, 0, NULL};
    hn_value val;
    hn_err e;
    char text[128], got[96];
    hn_excerpt(hn_expr_text(s->precision), text, sizeof text);
    if (hn_expr_eval(s->precision, hn_scope_lookup, &scope, &val, &e) != 0)
        return hn_errf(err, "variants[%d].precision ('%s'): %s", si, text, e.msg);
    /* the 16-bit and tf32 ones (a __half accumulator, tensor cores) are
     * compared with the FP32 peak and no baseline */
    static const char *const KNOWN[] = {"float", "double", "half", "bfloat16", "tf32", NULL};
    for (int k = 0; val.type == HN_VAL_STR && KNOWN[k]; k++)
        if (strcmp(val.s, KNOWN[k]) == 0) return 0;
    hn_value_format(&val, got, sizeof got);
    return hn_errf(err, "variants[%d].precision ('%s'): expected \"float\" or \"double\" (the peak and the "
                        "baselines a row is compared with), or \"half\", \"bfloat16\" or \"tf32\", got %s%s%s",
                   si, text, val.type == HN_VAL_STR ? "\"" : "", got, val.type == HN_VAL_STR ? "\"" : "");
}

int hn_sweep_expand_variants(hn_plan *p, hn_err *err) {
    int cap = 16;
    p->variants = xcalloc((size_t)cap, sizeof *p->variants);
    for (int si = 0; si < p->n_specs; si++) {
        hn_variant_spec *s = &p->specs[si];
        int64_t combos = 1;
        for (int d = 0; d < s->n_defines; d++) {
            if (s->defines[d].tunable) continue; /* harness tune searches those */
            combos *= s->defines[d].n; /* at most 2^17 * 2^31: no overflow */
            if (combos > HN_SWEEP_MAX_DEFINE_COMBINATIONS)
                return hn_errf(err, "variants[%d].defines: more than %lld combinations", si,
                               HN_SWEEP_MAX_DEFINE_COMBINATIONS);
        }
        /* Labels within a spec differ (define names and values are unique), so
         * only an earlier spec of the same name can repeat one. */
        int shares_name = 0;
        for (int k = 0; k < si; k++) shares_name |= strcmp(p->specs[k].name, s->name) == 0;
        int kept = 0;
        for (int64_t k = 0; k < combos; k++) {
            hn_variant v = {.spec = si};
            v.choice = xcalloc((size_t)s->n_defines + 1, sizeof *v.choice);
            int64_t r = k;
            for (int d = s->n_defines - 1; d >= 0; d--) {
                if (s->defines[d].tunable) continue;
                v.choice[d] = (int)(r % s->defines[d].n);
                r /= s->defines[d].n;
            }
            /* Tunables: the first configuration of the space (restrictions that
             * need a case or a device wait for harness tune); none is an error. */
            int tunables = 0;
            for (int d = 0; d < s->n_defines; d++) tunables += s->defines[d].tunable;
            if (tunables) {
                hn_space *sp = NULL;
                if (hn_space_build(p, &v, NULL, NULL, NULL, HN_SPACE_FIRST, &sp, err) != 0) {
                    free(v.choice);
                    return -1;
                }
                int empty = sp->n_valid == 0;
                if (!empty) hn_space_apply(sp, sp->valid[0], &v);
                hn_space_free(sp);
                if (empty) {
                    free(v.choice);
                    return hn_errf(err, "variants[%d].restrict: no configuration of the tunables satisfies the "
                                        "restrictions (the tune space is empty)",
                                   si);
                }
            }
            int ok = 1;
            hn_scope scope = {p, NULL, &v, NULL, 0, NULL};
            for (int w = 0; ok && w < s->n_where; w++) {
                if (hn_expr_names(s->where[w], only_defines, s) != 0) continue;
                hn_value val;
                hn_err e;
                if (hn_expr_eval(s->where[w], hn_scope_lookup, &scope, &val, &e) != 0) {
                    char text[128];
                    free(v.choice);
                    return hn_errf(err, "variants[%d].where[%d] ('%s'): %s", si, w,
                                   hn_excerpt(hn_expr_text(s->where[w]), text, sizeof text),
                                   e.msg);
                }
                ok = hn_value_truthy(&val);
            }
            if (!ok) {
                free(v.choice);
                continue;
            }
            if (check_precision(p, s, si, &v, err) != 0) {
                free(v.choice);
                return -1;
            }
            hn_sb label;
            hn_sb_init(&label);
            hn_sb_adds(&label, s->name);
            int multi = 0;
            for (int d = 0; d < s->n_defines; d++) {
                if (s->defines[d].n < 2 || s->defines[d].tunable) continue;
                hn_sb_addf(&label, "%s%s=%s", multi ? "," : "[", s->defines[d].name,
                           s->defines[d].texts[v.choice[d]]);
                multi = 1;
            }
            if (multi) hn_sb_addc(&label, ']');
            v.label = hn_sb_detach(&label);
            for (int i = 0; shares_name && i < p->n_variants; i++)
                if (p->variants[i].spec != si && strcmp(p->variants[i].label, v.label) == 0) {
                    hn_errf(err, "variants[%d]: the variant '%s' appears twice; give one a different \"name\"",
                            si, v.label);
                    free(v.label);
                    free(v.choice);
                    return -1;
                }
            if (p->n_variants == HN_SWEEP_MAX_VARIANTS) {
                free(v.label);
                free(v.choice);
                return hn_errf(err, "variants: more than %d variant instances", HN_SWEEP_MAX_VARIANTS);
            }
            if (p->n_variants == cap) {
                cap *= 2;
                p->variants = xrealloc(p->variants, (size_t)cap * sizeof *p->variants);
            }
            p->variants[p->n_variants++] = v;
            kept++;
        }
        if (!kept)
            return hn_errf(err, "variants[%d] ('%s'): its where constraints exclude every define combination",
                           si, s->name);
    }
    return 0;
}

int hn_sweep_variant_applies(const hn_plan *p, const hn_variant *v, const hn_case *c,
                             const double *params, const char **failed, hn_err *err) {
    const hn_variant_spec *s = &p->specs[v->spec];
    hn_scope scope = {p, c, v, params, 0, NULL};
    for (int w = 0; w < s->n_where; w++) {
        hn_value val;
        if (hn_expr_eval(s->where[w], hn_scope_lookup, &scope, &val, err) != 0) {
            char text[128];
            hn_err_prefix(err, "where '%s'", hn_excerpt(hn_expr_text(s->where[w]), text, sizeof text));
            return -1;
        }
        if (!hn_value_truthy(&val)) {
            if (failed) *failed = hn_expr_text(s->where[w]);
            return 0;
        }
    }
    return 1;
}

/* ---------------------------------------------------------------------- */
/* a whole plan */

/* A tolerance may name defines, of any variant: each variant it applies to (one
 * checked on that output) must then have them, else each of its rows would fail
 * to evaluate it. */
typedef struct {
    const hn_plan *plan;
    const hn_variant_spec *spec;
    const char *missing;
} tol_define_check;

static int define_of_spec(void *ctx, const char *name) {
    tol_define_check *t = ctx;
    int is_define = 0;
    for (int i = 0; i < t->plan->n_define_names && !is_define; i++)
        is_define = strcmp(t->plan->define_names[i], name) == 0;
    for (int i = 0; is_define && i < t->spec->n_defines; i++)
        if (strcmp(t->spec->defines[i].name, name) == 0) return 0;
    if (!is_define) return 0;
    t->missing = name;
    return -1;
}

static int check_tolerance_defines(const hn_plan *p, hn_err *err) {
    const hn_op *op = p->op;
    for (int v = 0; v < p->n_variants; v++) {
        const int si = p->variants[v].spec;
        if (v > 0 && p->variants[v - 1].spec == si) continue; /* a spec's instances share its defines */
        for (int b = 0; b < op->n_buffers; b++) {
            if (op->buffers[b].role == HN_BUF_IN || !hn_variant_binds(p, &p->variants[v], b)) continue;
            const hn_out_check *oc = &p->out_check[b];
            const hn_expr *tols[2] = {oc->atol ? oc->atol : p->atol, oc->rtol ? oc->rtol : p->rtol};
            for (int k = 0; k < 2; k++) {
                tol_define_check t = {p, &p->specs[si], NULL};
                if (!tols[k] || hn_expr_names(tols[k], define_of_spec, &t) == 0) continue;
                const int own = k ? oc->rtol != NULL : oc->atol != NULL;
                char text[128];
                return hn_errf(err,
                               "%s: check.%s%s%s: '%s' names %s, a define that variants[%d] ('%s') does not have: "
                               "give that variant the define too, or write the tolerance without it",
                               p->path, own ? op->buffers[b].name : "", own ? "." : "", k ? "rtol" : "atol",
                               hn_excerpt(hn_expr_text(tols[k]), text, sizeof text), t.missing, si,
                               p->specs[si].name);
            }
        }
    }
    return 0;
}

/* The variants, the cases, and every case a problem the operator can pose. */
static int complete(hn_plan *plan, hn_err *err) {
    if (hn_sweep_expand_variants(plan, err) != 0 || hn_sweep_enumerate(plan, err) != 0)
        return hn_err_prefix(err, "%s", plan->path);
    if (check_tolerance_defines(plan, err) != 0) return -1;
    /* which variants some case runs: a variant whose where (naming the case)
     * is false for every case would run nothing, as a where that leaves no case */
    unsigned char *runs = xcalloc((size_t)plan->n_variants + 1, 1);
    int left = plan->n_variants;
    for (int64_t i = 0; i < plan->n_cases; i++) {
        hn_workload w;
        if (hn_workload_shape(&w, plan, &plan->cases[i], err) == 0) {
            for (int v = 0; left && v < plan->n_variants; v++) {
                hn_err e;
                if (runs[v]) continue;
                /* 1: it runs; -1: an error, which is the row's to report */
                if (hn_sweep_variant_applies(plan, &plan->variants[v], &plan->cases[i], w.params, NULL, &e) != 0)
                    runs[v] = 1, left--;
            }
            continue;
        }
        free(runs);
        hn_sb vals;
        hn_sb_init(&vals);
        for (int a = 0; a < plan->n_axes; a++) {
            char buf[64];
            hn_value_format(&plan->cases[i].values[a], buf, sizeof buf);
            hn_sb_addf(&vals, "%s%s=%s", a ? ", " : "", plan->axes[a].name, buf);
        }
        char cut[128];
        hn_err_prefix(err, "%s: axes: case %lld (%s)", plan->path, (long long)i, hn_excerpt(vals.buf, cut, sizeof cut));
        hn_sb_free(&vals);
        snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
                 " (leave such cases out with \"where\")");
        return -1;
    }
    /* said, not refused: a plan sampled small may leave a variant no case
     * (its rows are then skipped), and the rest of the sweep is worth running */
    hn_sb note;
    hn_sb_init(&note);
    for (int v = 0; left && v < plan->n_variants; v++) {
        if (runs[v]) continue;
        /* the first of its constraints to fail, at case 0, as the example */
        hn_workload w;
        const char *failed = "";
        hn_err e;
        if (hn_workload_shape(&w, plan, &plan->cases[0], &e) == 0)
            hn_sweep_variant_applies(plan, &plan->variants[v], &plan->cases[0], w.params, &failed, &e);
        char text[128];
        hn_sb_addf(&note,
                   "%s%s: variants[%d] ('%s'): its where is false for every one of the %lld cases (the first: '%s' "
                   "at case 0): every row of it will be skipped",
                   note.len ? "\n" : "", plan->path, plan->variants[v].spec, plan->variants[v].label,
                   (long long)plan->n_cases, hn_excerpt(failed ? failed : "", text, sizeof text));
    }
    plan->notice = note.len ? hn_sb_detach(&note) : NULL;
    hn_sb_free(&note);
    free(runs);
    return 0;
}

void hn_plan_print_notice(const hn_plan *p) {
    for (const char *s = p->notice; s && *s;) {
        const char *eol = strchr(s, '\n');
        const int n = eol ? (int)(eol - s) : (int)strlen(s);
        fprintf(stderr, "harness: note: %.*s\n", n, s);
        s += n + (eol != NULL);
    }
}

const char *hn_define_value_hint(const hn_plan *p, const hn_variant *v, const char *message, char *buf, size_t size) {
    const hn_variant_spec *s = &p->specs[v->spec];
    buf[0] = '\0';
    for (int d = 0; d < s->n_defines; d++) {
        const hn_value *val = &s->defines[d].values[v->choice[d]];
        if (val->type != HN_VAL_STR || !strstr(message, val->s)) continue;
        const char *kind = NULL;
        for (int a = 0; !kind && a < p->n_axes; a++)
            if (strcmp(p->axes[a].name, val->s) == 0) kind = "an axis";
        if (!kind && hn_op_param_index(p->op, val->s) >= 0) kind = "a parameter";
        if (!kind) continue;
        snprintf(buf, size,
                 " (the define %s is '%s', the name of %s: a define is compiled into the variant once, before any "
                 "case, so it cannot take a case's value; give the values it may take as a list and a \"where\" "
                 "keeping each case's own: \"defines\": {\"%s\": [64, 128]}, \"where\": \"%s == %s\")",
                 s->defines[d].name, val->s, kind, s->defines[d].name, s->defines[d].name, val->s);
        break;
    }
    return buf;
}

int hn_plan_load(const char *path, int64_t seed_override, hn_plan **out, hn_err *err) {
    if (hn_config_load(path, seed_override, out, err) != 0) return -1;
    if (complete(*out, err) == 0) return 0;
    hn_plan_free(*out);
    *out = NULL;
    return -1;
}

int hn_plan_parse(const char *text, const char *path, int64_t seed_override, hn_plan **out, hn_err *err) {
    if (hn_config_parse(text, path, seed_override, out, err) != 0) return -1;
    if (complete(*out, err) == 0) return 0;
    hn_plan_free(*out);
    *out = NULL;
    return -1;
}
