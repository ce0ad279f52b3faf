/* space.c: building a tune space with restrictions applied as early as they can
 * be (see space.h). */
#define _GNU_SOURCE
#include "space.h"

#include <stdlib.h>
#include <string.h>

/* Restriction evaluations a space's construction may take: realistic spaces
 * take thousands (harness bench tune: 4367 for 11.3 million raw), this many
 * take seconds; beyond it a construction would run for hours (a restriction
 * naming all of 3 tunables of 4096 values each is 6.9e10 evaluations). */
#define SPACE_MAX_EVALUATIONS 20000000LL

/* A restriction's results are remembered per combination of the tunables it
 * names when there are at most this many combinations. */
#define MEMO_MAX ((int64_t)1 << 22)

/* The names a restriction's expression looks up, resolved once: the lookup
 * callback sees the same name pointers on every evaluation, so a small table
 * keyed by pointer avoids string compares in the inner loop. */
typedef struct {
    const char *name;
    int tunable; /* index among the tunables, or -1 */
} name_slot;

typedef struct {
    const hn_space *s;
    const hn_variant_spec *spec;
    const int *vals;     /* current value index of each bound tunable */
    hn_scope scope;      /* for everything else */
    name_slot *slots;
    int n_slots, cap_slots;
} build_ctx;

static int tunable_of(const build_ctx *b, const char *name) {
    for (int t = 0; t < b->s->n_tunables; t++)
        if (strcmp(b->spec->defines[b->s->define_index[t]].name, name) == 0) return t;
    return -1;
}

static int lookup(void *ctx, const char *name, hn_value *out) {
    build_ctx *b = ctx;
    int t = -2;
    for (int i = 0; i < b->n_slots; i++)
        if (b->slots[i].name == name) {
            t = b->slots[i].tunable;
            break;
        }
    if (t == -2) {
        t = tunable_of(b, name);
        if (b->n_slots == b->cap_slots) {
            b->cap_slots = b->cap_slots ? 2 * b->cap_slots : 16;
            b->slots = xrealloc(b->slots, (size_t)b->cap_slots * sizeof *b->slots);
        }
        b->slots[b->n_slots++] = (name_slot){name, t};
    }
    if (t >= 0) {
        *out = b->spec->defines[b->s->define_index[t]].values[b->vals[t]];
        return 0;
    }
    return hn_scope_lookup(&b->scope, name, out);
}

/* For the level of a restriction: the last tunable it names; and whether it
 * needs a case or a device. */
typedef struct {
    build_ctx *b;
    int level;
    int needs_case, needs_device;
    unsigned char *named; /* [n_tunables]: the tunables it names */
} names_ctx;

static int note_name(void *ctx, const char *name) {
    names_ctx *n = ctx;
    int t = tunable_of(n->b, name);
    if (t > n->level) n->level = t;
    if (t >= 0) n->named[t] = 1;
    if (t >= 0) return 0;
    const hn_plan *p = n->b->s->plan;
    for (int a = 0; a < p->n_axes; a++) n->needs_case |= strcmp(p->axes[a].name, name) == 0;
    n->needs_case |= hn_op_param_index(p->op, name) >= 0;
    for (int i = 0; hn_device_names[i]; i++) n->needs_device |= strcmp(hn_device_names[i], name) == 0;
    return 0;
}

/* "restrict[2]" or "where[0]": the JSON path of restriction i of the space (rx
 * holds the variant's restricts, then some of its wheres). Static storage. */
static const char *rx_path(const hn_variant_spec *spec, const hn_expr *e, int i) {
    static _Thread_local char path[32];
    if (i < spec->n_restrict) {
        snprintf(path, sizeof path, "restrict[%d]", i);
        return path;
    }
    for (int w = 0; w < spec->n_where; w++)
        if (spec->where[w] == e) snprintf(path, sizeof path, "where[%d]", w);
    return path;
}

int hn_space_build(const hn_plan *p, const hn_variant *base, const hn_case *c, const double *params,
                   const hn_device_info *dev, int64_t max_valid, hn_space **out, hn_err *err) {
    *out = NULL;
    double t0 = hn_now();
    const hn_variant_spec *spec = &p->specs[base->spec];
    hn_space *s = xcalloc(1, sizeof *s);
    s->plan = p;
    s->spec = base->spec;
    s->define_index = xcalloc((size_t)spec->n_defines + 1, sizeof *s->define_index);
    s->n_values = xcalloc((size_t)spec->n_defines + 1, sizeof *s->n_values);
    s->radix = xcalloc((size_t)spec->n_defines + 1, sizeof *s->radix);
    for (int d = 0; d < spec->n_defines; d++)
        if (spec->defines[d].tunable) {
            s->define_index[s->n_tunables] = d;
            s->n_values[s->n_tunables++] = spec->defines[d].n;
        }
    s->n_raw = 1;
    for (int t = 0; t < s->n_tunables; t++) s->n_raw *= s->n_values[t];
    int64_t r = 1;
    for (int t = s->n_tunables - 1; t >= 0; t--) {
        s->radix[t] = r;
        r = r <= INT64_MAX / (s->n_values[t] ? s->n_values[t] : 1) ? r * s->n_values[t] : INT64_MAX;
    }
    if (s->n_raw > 9.0e18) {
        hn_errf(err, "variants[%d].tune: %.3g combinations is more than a space can index", base->spec, s->n_raw);
        hn_space_free(s);
        return -1;
    }

    int *vals = xcalloc((size_t)s->n_tunables + 1, sizeof *vals);
    build_ctx b = {.s = s, .spec = spec, .vals = vals, .scope = {p, c, base, params, 0, dev}};
    unsigned char *named = xcalloc((size_t)s->n_tunables + 1, 1);
    /* The restrictions: the variant's "restrict", then each of its "where" that names
     * a tunable ("WIDTH == n" with WIDTH tuned): a configuration such a where rules
     * out would only be a skipped row, spending the budget, and a case could end
     * with none correct. A where naming no tunable rules out the whole case; it
     * stays the run's business (its rows are skipped), not an empty space. */
    const hn_expr **rx = xcalloc((size_t)(spec->n_restrict + spec->n_where) + 1, sizeof *rx);
    int nr = 0;
    for (int i = 0; i < spec->n_restrict; i++) rx[nr++] = spec->restrict_[i];
    for (int i = 0; i < spec->n_where; i++) {
        names_ctx n = {&b, -1, 0, 0, named};
        hn_expr_names(spec->where[i], note_name, &n);
        if (n.level >= 0) rx[nr++] = spec->where[i];
    }
    /* each restriction at the level of the last tunable it names; its result
     * remembered per combination of the tunables it names (everything else it
     * reads is fixed for the build), so each combination is evaluated once */
    int *level = xcalloc((size_t)nr + 1, sizeof *level);
    int64_t **stride = xcalloc((size_t)nr + 1, sizeof *stride);
    unsigned char **memo = xcalloc((size_t)nr + 1, sizeof *memo);
    int rc = 0;
    for (int i = 0; i < nr && rc == 0; i++) {
        memset(named, 0, (size_t)s->n_tunables + 1);
        names_ctx n = {&b, -1, 0, 0, named};
        hn_expr_names(rx[i], note_name, &n);
        level[i] = n.level;
        /* without a case (or a device), restrictions that need one are left out */
        if ((n.needs_case && !c) || (n.needs_device && !dev)) level[i] = -2;
        if (level[i] < 0) continue;
        int64_t size = 1;
        stride[i] = xcalloc((size_t)s->n_tunables + 1, sizeof *stride[i]);
        for (int t = 0; t < s->n_tunables && size <= MEMO_MAX; t++)
            if (named[t]) stride[i][t] = size, size *= s->n_values[t];
        if (size <= MEMO_MAX) memo[i] = xcalloc((size_t)size, 1);
    }
    /* the restrictions of each level, in order */
    int *by_level = xcalloc((size_t)nr + 1, sizeof *by_level), *level_start = xcalloc((size_t)s->n_tunables + 2, sizeof *level_start);
    for (int t = 0, k = 0; t < s->n_tunables; t++) {
        level_start[t] = k;
        for (int i = 0; i < nr; i++)
            if (level[i] == t) by_level[k++] = i;
        level_start[t + 1] = k;
    }
    int64_t cap = 0;
    s->n_restrict = nr;
    s->unevaluable = xcalloc((size_t)nr + 1, sizeof *s->unevaluable);
    int64_t *succeeded = xcalloc((size_t)nr + 1, sizeof *succeeded); /* evaluations that gave a value */
    /* depth-first: vals[0..depth) bound; restrictions of a level checked when it binds */
    int depth = 0, ok_root = 1;
    for (int i = 0; rc == 0 && i < nr; i++) {
        if (level[i] != -1) continue;
        hn_value v;
        if (hn_expr_eval(rx[i], lookup, &b, &v, err) != 0) {
            /* naming no tunable, it decides every configuration at once */
            char cs[64] = "";
            if (c) snprintf(cs, sizeof cs, " for case %lld", (long long)c->id);
            rc = hn_err_prefix(err, "variants[%d].%s ('%s') could not be evaluated%s", base->spec,
                               rx_path(spec, rx[i], i), hn_expr_text(rx[i]), cs);
            break;
        }
        s->evaluations++;
        ok_root &= hn_value_truthy(&v);
    }
    if (rc == 0 && ok_root && s->n_tunables > 0) {
        vals[0] = -1;
        while (depth >= 0 && rc == 0) {
            if (++vals[depth] >= s->n_values[depth]) { /* this level is exhausted */
                depth--;
                continue;
            }
            int ok = 1;
            for (int k = level_start[depth]; ok && k < level_start[depth + 1]; k++) {
                int i = by_level[k];
                unsigned char *m = NULL;
                if (memo[i]) {
                    int64_t idx = 0;
                    for (int t = 0; t <= depth; t++) idx += vals[t] * stride[i][t];
                    m = &memo[i][idx];
                    if (*m) {
                        ok = *m == 1;
                        if (*m == 3) s->unevaluable[i].excluded += (double)s->radix[depth];
                        continue;
                    }
                }
                hn_value v;
                hn_err eerr;
                s->evaluations++;
                if (hn_expr_eval(rx[i], lookup, &b, &v, &eerr) != 0) {
                    /* not evaluable here (a division by zero): the subtree is
                     * excluded, as not satisfying it, and counted for one notice */
                    hn_space_unevaluable *u = &s->unevaluable[i];
                    if (!u->failed++) {
                        char *at = hn_space_describe_vals(s, vals, depth + 1);
                        snprintf(u->first, sizeof u->first, "%.120s at %.120s", eerr.msg, at);
                        free(at);
                    }
                    u->excluded += (double)s->radix[depth];
                    ok = 0;
                    if (m) *m = 3;
                } else {
                    succeeded[i]++;
                    ok = hn_value_truthy(&v);
                    if (m) *m = ok ? 1 : 2;
                }
                if (s->evaluations > SPACE_MAX_EVALUATIONS) {
                    rc = hn_errf(err,
                                 "variants[%d].restrict: more than %.0e restriction evaluations building a space of "
                                 "%.3g raw configurations: a restriction is checked once its last tunable is bound, "
                                 "so one that names every tunable cannot cut the space; restrict fewer tunables at a "
                                 "time, or give them fewer values",
                                 base->spec, (double)SPACE_MAX_EVALUATIONS, s->n_raw);
                    break;
                }
            }
            if (rc != 0 || !ok) continue;
            if (depth + 1 < s->n_tunables) {
                vals[++depth] = -1;
                continue;
            }
            if (max_valid == HN_SPACE_FIRST && s->n_valid == 1) break;
            if (s->n_valid == max_valid) {
                rc = hn_errf(err, "variants[%d].tune: more than %lld valid configurations (restrict the space)",
                             base->spec, (long long)max_valid);
                break;
            }
            if (s->n_valid == cap) {
                cap = cap ? 2 * cap : 1024;
                s->valid = xrealloc(s->valid, (size_t)cap * sizeof *s->valid);
            }
            s->valid[s->n_valid++] = hn_space_raw(s, vals);
        }
    }
    /* a restriction that could be evaluated for none of the configurations it
     * was asked about is a mistake in it, not a property of some of them */
    for (int i = 0; rc == 0 && i < nr; i++)
        if (s->unevaluable[i].failed > 0 && succeeded[i] == 0) {
            char cs[64] = "";
            if (c) snprintf(cs, sizeof cs, " for case %lld", (long long)c->id);
            rc = hn_errf(err,
                         "variants[%d].%s ('%s') could not be evaluated for any configuration%s (%lld "
                         "combination%s of its tunables tried; the first: %s)",
                         base->spec, rx_path(spec, rx[i], i), hn_expr_text(rx[i]), cs, (long long)s->unevaluable[i].failed,
                         s->unevaluable[i].failed == 1 ? "" : "s", s->unevaluable[i].first);
        }
    free(succeeded);
    free(rx);
    free(vals);
    for (int i = 0; i < nr; i++) free(stride[i]), free(memo[i]);
    free(stride);
    free(memo);
    free(named);
    free(by_level);
    free(level_start);
    free(level);
    free(b.slots);
    s->build_seconds = hn_now() - t0;
    if (rc != 0) {
        hn_space_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

void hn_space_free(hn_space *s) {
    if (!s) return;
    free(s->define_index);
    free(s->n_values);
    free(s->radix);
    free(s->valid);
    free(s->unevaluable);
    free(s);
}

int hn_space_value(const hn_space *s, int64_t raw, int t) {
    return (int)(raw / s->radix[t] % s->n_values[t]);
}

int64_t hn_space_raw(const hn_space *s, const int *vals) {
    int64_t r = 0;
    for (int t = 0; t < s->n_tunables; t++) r += vals[t] * s->radix[t];
    return r;
}

int64_t hn_space_find(const hn_space *s, int64_t raw) {
    int64_t lo = 0, hi = s->n_valid;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (s->valid[mid] < raw) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n_valid && s->valid[lo] == raw ? lo : -1;
}

void hn_space_apply(const hn_space *s, int64_t raw, hn_variant *v) {
    for (int t = 0; t < s->n_tunables; t++) v->choice[s->define_index[t]] = hn_space_value(s, raw, t);
}

char *hn_space_describe_vals(const hn_space *s, const int *vals, int n) {
    const hn_variant_spec *spec = &s->plan->specs[s->spec];
    hn_sb sb;
    hn_sb_init(&sb);
    for (int t = 0; t < n; t++) {
        const hn_axis *ax = &spec->defines[s->define_index[t]];
        hn_sb_addf(&sb, "%s%s=%s", t ? "," : "", ax->name, ax->texts[vals[t]]);
    }
    return hn_sb_detach(&sb);
}

char *hn_space_describe(const hn_space *s, int64_t raw) {
    int vals[64];
    int n = s->n_tunables < 64 ? s->n_tunables : 64;
    for (int t = 0; t < n; t++) vals[t] = hn_space_value(s, raw, t);
    return hn_space_describe_vals(s, vals, n);
}

int64_t hn_space_parse(const hn_space *s, const char *config) {
    const hn_variant_spec *spec = &s->plan->specs[s->spec];
    int vals[64];
    if (s->n_tunables > 64) return -1;
    for (int t = 0; t < s->n_tunables; t++) {
        const hn_axis *ax = &spec->defines[s->define_index[t]];
        size_t nl = strlen(ax->name);
        vals[t] = -1;
        /* NAME=text, between commas (texts hold no commas: they are define values) */
        for (const char *p = config; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
            if (strncmp(p, ax->name, nl) != 0 || p[nl] != '=') continue;
            const char *v = p + nl + 1, *end = strchr(v, ',');
            size_t vl = end ? (size_t)(end - v) : strlen(v);
            for (int k = 0; k < s->n_values[t] && vals[t] < 0; k++)
                if (strlen(ax->texts[k]) == vl && strncmp(ax->texts[k], v, vl) == 0) vals[t] = k;
            break;
        }
        if (vals[t] < 0) return -1;
    }
    return hn_space_raw(s, vals);
}
