/* tuned.c: --tuned, a tune's result as a variant of a sweep (see tuned.h). */
#define _GNU_SOURCE
#include "tuned.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"
#include "tune/best.h"

/* What one best.json gives the plan, before the plan exists. */
typedef struct {
    char *file;
    char *name;         /* the variant's name in the sweep: "<variant>@tuned" */
    char **configs;     /* the distinct winning "defines" */
    int n_configs;
    int n_units;        /* the results that have a configuration */
    int *unit_config;   /* per such result: its configuration */
    char **unit_case;   /* per such result: its case_values (NULL across cases) */
    double *unit_params; /* per such result: the operator's parameters of its case (n_units x n_params) */
    int across;
} source;

static void source_free(source *s) {
    for (int i = 0; i < s->n_configs; i++) free(s->configs[i]);
    for (int i = 0; i < s->n_units; i++) free(s->unit_case[i]);
    free(s->configs);
    free(s->unit_config);
    free(s->unit_case);
    free(s->unit_params);
    free(s->file);
    free(s->name);
}

/* "--tuned FILE: " and the message. */
HN_PRINTF(3, 4) static int tuned_err(hn_err *err, const char *file, const char *fmt, ...) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_addf(&sb, "--tuned %s: ", file);
    va_list ap;
    va_start(ap, fmt);
    hn_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    hn_errf(err, "%s", sb.buf);
    hn_sb_free(&sb);
    return -1;
}

/* The value of name in "A=1,B=2" (a copy), or NULL. */
static char *assignment(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > n && strncmp(p, name, n) == 0 && p[n] == '=') return xstrndup(p + n + 1, len - n - 1);
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

/* Whether text is a whole finite number (and then its value). */
static int number_text(const char *text, double *out) {
    char *end;
    double d = strtod(text, &end);
    if (end == text || *end || !isfinite(d)) return 0;
    *out = d;
    return 1;
}

/* The index of the value of axis ax written text, or -1. */
static int value_index(const hn_axis *ax, const char *text) {
    for (int k = 0; k < ax->n; k++)
        if (strcmp(ax->texts[k], text) == 0) return k;
    double x, y;
    for (int k = 0; k < ax->n; k++)
        if (number_text(text, &x) && number_text(ax->texts[k], &y) && x == y) return k;
    return -1;
}

static cJSON *json_of_value(const hn_value *v) {
    if (v->type == HN_VAL_STR) return cJSON_CreateString(v->s);
    return cJSON_CreateNumber(v->type == HN_VAL_INT ? (double)v->i : v->f);
}

static cJSON *json_of_text(const char *text) {
    double d;
    return number_text(text, &d) ? cJSON_CreateNumber(d) : cJSON_CreateString(text);
}

/* Whether some spec of p, or a source before `upto`, has this name. */
static int name_taken(const hn_plan *p, const source *src, int upto, const char *name) {
    for (int s = 0; s < p->n_specs; s++)
        if (strcmp(p->specs[s].name, name) == 0) return 1;
    for (int i = 0; i < upto; i++)
        if (strcmp(src[i].name, name) == 0) return 1;
    return 0;
}

/* The tuned config: as the best.json names it (relative to where the tune
 * ran), else relative to the best.json's folder or the one above it (a tune
 * run from the project's root writes results/x.best.json naming
 * configs/x.json). Caller frees; NULL when none exists. */
static char *find_config(const char *file, const char *config) {
    if (hn_file_exists(config)) return xstrdup(config);
    if (config[0] == '/') return NULL;
    char *dir = hn_dirname(file), *up = hn_path_join(dir, "..");
    const char *bases[] = {dir, up};
    char *found = NULL;
    for (int i = 0; i < 2 && !found; i++) {
        char *there = hn_path_join(bases[i], config);
        if (hn_file_exists(there)) found = there;
        else free(there);
    }
    free(dir);
    free(up);
    return found;
}

/* Reads best.json `file` against the sweep plan `sweep`: fills src and appends
 * the tuned variant's JSON object to `variants` (the sweep's). */
static int add_source(const char *file, const hn_plan *sweep, source *all, int index, cJSON *variants,
                      const cJSON *sweep_defaults, hn_err *err) {
    source *src = &all[index];
    memset(src, 0, sizeof *src);
    src->file = xstrdup(file);
    hn_best b;
    if (hn_best_load(file, &b, err) != 0) return hn_best_err(err);
    int rc = -1;
    hn_plan *tp = NULL;
    char *cfg = NULL, *text = NULL;
    cJSON *troot = NULL, *obj = NULL;
    if (!b.config || !b.variant) {
        tuned_err(err, file, "names no tuned config and variant (\"config\", \"variant\"): harness tune writes them");
        goto done;
    }
    cfg = find_config(file, b.config);
    if (!cfg) {
        tuned_err(err, file, "the config it tuned, %s, is not found (from here, nor from the best.json's folder or the one above it: run from the folder the tune ran in)", b.config);
        goto done;
    }
    if (hn_config_load(cfg, -1, &tp, err) != 0) {
        hn_err_prefix(err, "--tuned %s: the config it tuned", file);
        goto done;
    }
    if (tp->op != sweep->op) {
        tuned_err(err, file, "a tune of operator '%s' (%s), but %s runs operator '%s'", tp->op->name, cfg,
                  sweep->path, sweep->op->name);
        goto done;
    }
    int si = -1;
    for (int s = 0; s < tp->n_specs && si < 0; s++)
        if (strcmp(tp->specs[s].name, b.variant) == 0) si = s;
    if (si < 0) {
        tuned_err(err, file, "%s has no variant '%s' (the config changed since the tune?)", cfg, b.variant);
        goto done;
    }
    const hn_variant_spec *ts = &tp->specs[si];
    if (strcmp(ts->kernels_text, b.kernel) != 0) {
        tuned_err(err, file, "it tunes kernel '%s', but variant '%s' of %s runs '%s' (the config changed since the tune?)",
                  b.kernel, b.variant, cfg, ts->kernels_text);
        goto done;
    }
    /* the configurations, and the case of each result */
    src->across = b.across;
    src->configs = xcalloc((size_t)b.n_units + 1, sizeof *src->configs);
    src->unit_config = xcalloc((size_t)b.n_units + 1, sizeof *src->unit_config);
    src->unit_case = xcalloc((size_t)b.n_units + 1, sizeof *src->unit_case);
    int np = tp->op->n_params;
    src->unit_params = xcalloc((size_t)(b.n_units * np) + 1, sizeof *src->unit_params);
    for (int u = 0; u < b.n_units; u++) {
        const hn_best_unit *bu = &b.units[u];
        if (!bu->defines) continue; /* no configuration ran correctly for that case */
        /* every name a tunable of the variant, every tunable named */
        for (int d = 0; d < ts->n_defines; d++) {
            char *val = assignment(bu->defines, ts->defines[d].name);
            int missing = ts->defines[d].tunable && !val;
            free(val);
            if (missing) {
                tuned_err(err, file, "results[%d].defines '%s' has no value of '%s', a tunable of variant '%s' of %s",
                          u, bu->defines, ts->defines[d].name, b.variant, cfg);
                goto done;
            }
        }
        for (const char *p = bu->defines; *p;) {
            const char *eq = strchr(p, '='), *end = strchr(p, ',');
            if (!end) end = p + strlen(p);
            int known = 0;
            for (int d = 0; eq && eq < end && d < ts->n_defines; d++)
                known |= ts->defines[d].tunable && strlen(ts->defines[d].name) == (size_t)(eq - p) &&
                         strncmp(ts->defines[d].name, p, (size_t)(eq - p)) == 0;
            if (!known) {
                tuned_err(err, file, "results[%d].defines '%s': '%.*s' is not a tunable of variant '%s' of %s", u,
                          bu->defines, (int)(end - p), p, b.variant, cfg);
                goto done;
            }
            p = *end ? end + 1 : end;
        }
        int k = 0;
        while (k < src->n_configs && strcmp(src->configs[k], bu->defines) != 0) k++;
        if (k == src->n_configs) src->configs[src->n_configs++] = xstrdup(bu->defines);
        int n = src->n_units;
        src->unit_config[n] = k;
        if (bu->case_values && !b.across) {
            hn_case cs;
            if (hn_plan_make_case(tp, bu->case_values, &cs, err) != 0 ||
                hn_plan_case_params(tp, &cs, &src->unit_params[n * np], err) != 0) {
                hn_case_release(&cs);
                hn_err_prefix(err, "--tuned %s: results[%d].case_values '%s' in %s", file, u, bu->case_values, cfg);
                goto done;
            }
            hn_case_release(&cs);
            src->unit_case[n] = xstrdup(bu->case_values);
        } else if (!b.across) {
            tuned_err(err, file, "results[%d] has no \"case_values\" (a tune per case gives each result's case)", u);
            goto done;
        }
        src->n_units++;
    }

    /* the variant as the tuned config gives it (its keys, then its
     * defaults'), with its file and include folders made absolute, its other
     * defines at the tuned values and the tunables' winning values as a
     * space of their own (crossed into no variants: one instance each) */
    size_t tsize;
    if (hn_read_file(cfg, &text, &tsize, err) != 0) goto done;
    troot = cJSON_Parse(text);
    const cJSON *tvars = troot ? cJSON_GetObjectItemCaseSensitive(troot, "variants") : NULL;
    const cJSON *tvar = cJSON_GetArrayItem(tvars, si);
    const cJSON *tdef = troot ? cJSON_GetObjectItemCaseSensitive(troot, "defaults") : NULL;
    if (!cJSON_IsObject(tvar)) {
        tuned_err(err, file, "%s: variants[%d] is not an object", cfg, si);
        goto done;
    }
    static const char *const OURS[] = {"name", "file", "include_dirs", "defines", "tune", "restrict", "//", NULL};
    obj = cJSON_CreateObject();
    for (int pass = 0; pass < 2; pass++)
        for (const cJSON *e = pass ? (cJSON_IsObject(tdef) ? tdef->child : NULL) : tvar->child; e; e = e->next) {
            int skip = pass && cJSON_GetObjectItemCaseSensitive(tvar, e->string) != NULL;
            for (int k = 0; OURS[k] && !skip; k++) skip = strcmp(OURS[k], e->string) == 0;
            if (!skip) cJSON_AddItemToObject(obj, e->string, cJSON_Duplicate(e, 1));
        }
    /* keys the sweep's defaults would otherwise give it */
    static const char *const EMPTY[] = {"where", "options", "zero", NULL};
    for (int k = 0; EMPTY[k]; k++)
        if (!cJSON_GetObjectItemCaseSensitive(obj, EMPTY[k]) && sweep_defaults &&
            cJSON_GetObjectItemCaseSensitive(sweep_defaults, EMPTY[k]))
            cJSON_AddItemToObject(obj, EMPTY[k], cJSON_CreateArray());
    if (!cJSON_GetObjectItemCaseSensitive(obj, "shared_bytes") && sweep_defaults &&
        cJSON_GetObjectItemCaseSensitive(sweep_defaults, "shared_bytes"))
        cJSON_AddNumberToObject(obj, "shared_bytes", 0);
    char *name = xasprintf("%s@tuned", b.variant);
    for (int k = 2; name_taken(sweep, all, index, name); k++) {
        free(name);
        name = xasprintf("%s@tuned%d", b.variant, k);
    }
    src->name = name;
    cJSON_AddStringToObject(obj, "name", name);
    char *abs = realpath(ts->file, NULL);
    if (!abs) {
        tuned_err(err, file, "the kernel file %s of variant '%s' of %s is not found", ts->file, b.variant, cfg);
        goto done;
    }
    cJSON_AddStringToObject(obj, "file", abs);
    free(abs);
    if (ts->n_include_dirs) {
        cJSON *dirs = cJSON_AddArrayToObject(obj, "include_dirs");
        for (int i = 0; i < ts->n_include_dirs; i++) {
            char *d = realpath(ts->include_dirs[i], NULL);
            cJSON_AddItemToArray(dirs, cJSON_CreateString(d ? d : ts->include_dirs[i]));
            free(d);
        }
    }
    const char *label = b.variant_label ? strchr(b.variant_label, '[') : NULL;
    cJSON *defs = cJSON_AddObjectToObject(obj, "defines");
    cJSON *tune = cJSON_AddObjectToObject(obj, "tune");
    cJSON_AddItemToObject(obj, "restrict", cJSON_CreateArray());
    for (int d = 0; d < ts->n_defines; d++) {
        const hn_axis *ax = &ts->defines[d];
        if (!ax->tunable) {
            int k = 0;
            char *val = label ? assignment(label + 1, ax->name) : NULL;
            if (val) {
                size_t n = strlen(val);
                if (n && val[n - 1] == ']') val[n - 1] = '\0';
                k = value_index(ax, val);
                if (k < 0) {
                    tuned_err(err, file, "variant_label '%s': %s has no value '%s' in %s (the config changed since the tune?)",
                              b.variant_label, ax->name, val, cfg);
                    free(val);
                    goto done;
                }
                free(val);
            }
            cJSON_AddItemToObject(defs, ax->name, json_of_value(&ax->values[k]));
            continue;
        }
        cJSON *vals = cJSON_AddArrayToObject(tune, ax->name);
        for (int c = 0; c < src->n_configs; c++) {
            char *val = assignment(src->configs[c], ax->name);
            int seen = 0;
            for (int e = 0; e < c && !seen; e++) {
                char *prev = assignment(src->configs[e], ax->name);
                seen = strcmp(prev, val) == 0;
                free(prev);
            }
            if (!seen) cJSON_AddItemToArray(vals, json_of_text(val));
            free(val);
        }
    }
    cJSON_AddItemToArray(variants, obj);
    obj = NULL;
    rc = 0;
done:
    cJSON_Delete(obj);
    cJSON_Delete(troot);
    free(text);
    free(cfg);
    hn_plan_free(tp);
    hn_best_free(&b);
    return rc;
}

/* The result of src nearest to params (n of them, of operator op), and whether
 * it is the same case. */
static int nearest_unit(const source *src, const hn_op *op, const double *params, int *exact) {
    int np = op->n_params, best = -1;
    double best_d = INFINITY;
    *exact = 0;
    for (int u = 0; u < src->n_units; u++) {
        const double *q = &src->unit_params[u * np];
        double d = 0;
        int same = 1;
        for (int i = 0; i < np; i++) {
            if (params[i] == q[i]) continue;
            same = 0;
            d += op->params[i].type == 'c' ? 1e6 : fabs(asinh(params[i]) - asinh(q[i]));
        }
        if (same) {
            *exact = 1;
            return u;
        }
        if (d < best_d) best_d = d, best = u;
    }
    return best;
}

/* Turns each source's one instance into one per configuration and says which
 * runs each case. */
static int make_groups(hn_plan *p, source *src, int n_src, hn_err *err) {
    int *spec_of = xcalloc((size_t)n_src + 1, sizeof *spec_of);
    int total = p->n_variants;
    for (int g = 0; g < n_src; g++) {
        spec_of[g] = -1;
        for (int s = 0; s < p->n_specs; s++)
            if (strcmp(p->specs[s].name, src[g].name) == 0) spec_of[g] = s;
        total += src[g].n_configs - 1;
    }
    hn_variant *nv = xcalloc((size_t)total + 1, sizeof *nv);
    p->tuned = xcalloc((size_t)n_src + 1, sizeof *p->tuned);
    p->n_tuned = n_src;
    int k = 0, rc = 0;
    for (int v = 0; v < p->n_variants; v++) {
        hn_variant *old = &p->variants[v];
        int g = -1;
        for (int i = 0; i < n_src; i++)
            if (spec_of[i] == old->spec) g = i;
        if (g < 0 || p->tuned[g].n) { /* not tuned (a second instance cannot be: one combination) */
            nv[k++] = *old;
            continue;
        }
        const hn_variant_spec *s = &p->specs[old->spec];
        p->tuned[g].first = k;
        p->tuned[g].n = src[g].n_configs;
        p->tuned[g].file = xstrdup(src[g].file);
        for (int c = 0; c < src[g].n_configs; c++) {
            hn_variant x = {.spec = old->spec, .label = xstrdup(old->label)};
            x.choice = xcalloc((size_t)s->n_defines + 1, sizeof *x.choice);
            memcpy(x.choice, old->choice, (size_t)s->n_defines * sizeof *x.choice);
            for (int d = 0; d < s->n_defines; d++) {
                if (!s->defines[d].tunable) continue;
                char *val = assignment(src[g].configs[c], s->defines[d].name);
                int idx = val ? value_index(&s->defines[d], val) : -1;
                if (idx < 0 && rc == 0)
                    rc = tuned_err(err, src[g].file, "'%s': no value '%s' of %s", src[g].configs[c], val ? val : "",
                                   s->defines[d].name);
                free(val);
                x.choice[d] = idx < 0 ? 0 : idx;
            }
            nv[k++] = x;
        }
        free(old->choice);
        free(old->label);
    }
    free(p->variants);
    p->variants = nv;
    p->n_variants = k;
    for (int g = 0; g < n_src && rc == 0; g++)
        if (!p->tuned[g].n) rc = tuned_err(err, src[g].file, "the variant '%s' has no instance in the plan", src[g].name);
    /* each case's configuration */
    double *params = xcalloc((size_t)p->op->n_params + 1, sizeof *params);
    for (int g = 0; g < n_src && rc == 0; g++) {
        hn_tuned_group *t = &p->tuned[g];
        t->of_case = xcalloc((size_t)p->n_cases + 1, sizeof *t->of_case);
        t->note = xcalloc((size_t)p->n_cases + 1, sizeof *t->note);
        for (int64_t c = 0; c < p->n_cases && rc == 0; c++) {
            if (src[g].across || !src[g].n_units) {
                t->of_case[c] = t->first + (src[g].n_units ? src[g].unit_config[0] : 0);
                t->note[c] = xasprintf("across cases (%s)", t->file);
                continue;
            }
            if (hn_plan_case_params(p, &p->cases[c], params, err) != 0) {
                rc = -1;
                break;
            }
            int exact, u = nearest_unit(&src[g], p->op, params, &exact);
            t->of_case[c] = t->first + src[g].unit_config[u];
            t->note[c] = exact ? xasprintf("this case (%s)", t->file)
                               : xasprintf("nearest tuned case %s (%s)", src[g].unit_case[u], t->file);
        }
    }
    free(params);
    free(spec_of);
    return rc;
}

int hn_plan_load_tuned(const char *path, int64_t seed_override, const char *const *files, int n_files,
                       hn_plan **out, hn_err *err) {
    *out = NULL;
    hn_plan *base = NULL;
    if (hn_plan_load(path, seed_override, &base, err) != 0) return -1;
    if (n_files == 0) {
        *out = base;
        return 0;
    }
    char *text = NULL;
    size_t size;
    int rc = -1;
    hn_plan *p = NULL;
    source *src = xcalloc((size_t)n_files, sizeof *src);
    int n_src = 0;
    cJSON *root = NULL;
    if (hn_read_file(path, &text, &size, err) != 0) goto done;
    root = cJSON_Parse(text);
    cJSON *variants = root ? cJSON_GetObjectItemCaseSensitive(root, "variants") : NULL;
    if (!cJSON_IsArray(variants)) {
        hn_errf(err, "%s: not the config just loaded (changed while reading?)", path);
        goto done;
    }
    const cJSON *defaults = cJSON_GetObjectItemCaseSensitive(root, "defaults");
    for (int f = 0; f < n_files; f++) {
        for (int e = 0; e < f; e++)
            if (strcmp(files[e], files[f]) == 0) {
                tuned_err(err, files[f], "given twice");
                goto done;
            }
        int rc_add = add_source(files[f], base, src, f, variants, cJSON_IsObject(defaults) ? defaults : NULL, err);
        n_src = f + 1;
        if (rc_add != 0) goto done;
        /* parsed after each, so that a variant the sweep cannot take is the one just added */
        char *aug = cJSON_PrintUnformatted(root);
        hn_plan_free(p);
        p = NULL;
        int prc = hn_plan_parse(aug, path, seed_override, &p, err);
        free(aug);
        if (prc != 0) {
            hn_err_prefix(err, "--tuned %s: its variant, added to %s as variants[%d] '%s', does not fit there",
                          files[f], path, cJSON_GetArraySize(variants) - 1, src[f].name);
            goto done;
        }
    }
    if (make_groups(p, src, n_src, err) != 0) goto done;
    *out = p;
    p = NULL;
    rc = 0;
done:
    for (int i = 0; i < n_src; i++) source_free(&src[i]);
    free(src);
    cJSON_Delete(root);
    free(text);
    hn_plan_free(p);
    hn_plan_free(base);
    return rc;
}

const hn_tuned_group *hn_tuned_group_of(const hn_plan *p, int v) {
    for (int g = 0; g < p->n_tuned; g++)
        if (v >= p->tuned[g].first && v < p->tuned[g].first + p->tuned[g].n) return &p->tuned[g];
    return NULL;
}

int hn_tuned_runs(const hn_plan *p, int v, int64_t c) {
    const hn_tuned_group *t = hn_tuned_group_of(p, v);
    return !t || t->of_case[c] == v;
}

int hn_tuned_distinct(const hn_plan *p, const unsigned char *selected) {
    int n = 0;
    for (int v = 0; v < p->n_variants; v++) {
        if (selected && !selected[v]) continue;
        const hn_tuned_group *t = hn_tuned_group_of(p, v);
        int counted = 0;
        for (int u = t ? t->first : v; u < v && !counted; u++) counted = !selected || selected[u];
        n += !counted;
    }
    return n;
}

void hn_tuned_label(const hn_plan *p, int v, char *out, size_t size) {
    const hn_variant *x = &p->variants[v];
    const hn_variant_spec *s = &p->specs[x->spec];
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, x->label);
    int n = 0;
    for (int d = 0; hn_tuned_group_of(p, v) && d < s->n_defines; d++)
        if (s->defines[d].tunable)
            hn_sb_addf(&sb, "%s%s=%s", n++ ? "," : "[", s->defines[d].name, s->defines[d].texts[x->choice[d]]);
    if (n) hn_sb_addc(&sb, ']');
    snprintf(out, size, "%s", sb.buf);
    hn_sb_free(&sb);
}
