/*
 * tkernels.c: the training config (per layer type and pass, the kernel that runs
 * it); see tkernels.h.
 */
#define _GNU_SOURCE
#include "train/tkernels.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "compile.h"
#include "expr.h"
#include "tune/best.h"

/* ---------------------------------------------------------------------- */
/* the slots: what each layer type's passes are given */

typedef struct {
    const char *name;     /* "linear.forward" */
    const char *buffers;  /* comma-separated */
    const char *scalars;  /* comma-separated "name:type", type i (int), f (float), s (string) */
    const char *doc;
} slot_def;

#define CONV_SCALARS "n:i,in_ch:i,out_ch:i,h:i,w:i,filter_size:i,padding:i,pad:f,r:i,oh:i,ow:i"
#define POOL_SCALARS "n:i,channels:i,h:i,w:i,k:i,mode:s,layout:s"

static const slot_def SLOTS[] = {
    {"linear.forward", "x,weight,bias,y", "batch:i,in_f:i,out_f:i", "y = x W^T + b"},
    {"linear.backward_data", "dy,weight,dx", "batch:i,in_f:i,out_f:i", "dx = dy W"},
    {"linear.backward_weight", "dy,x,dweight", "batch:i,in_f:i,out_f:i", "dweight = dy^T x"},
    {"linear.backward_bias", "dy,dbias", "batch:i,in_f:i,out_f:i", "dbias = column sums of dy"},
    {"conv2d.forward", "in,filter,bias,out", CONV_SCALARS, "out = conv2d(in, filter) + bias, NCHW"},
    {"conv2d.backward_data", "dout,filter,din", CONV_SCALARS, "din"},
    {"conv2d.backward_filter", "in,dout,dfilter", CONV_SCALARS, "dfilter, summed over the batch"},
    {"conv2d.backward_bias", "dout,dbias", CONV_SCALARS, "dbias"},
    {"maxpool2d.forward", "in,out,argmax", POOL_SCALARS, "max over k x k windows, stride k, and the argmax"},
    {"maxpool2d.backward", "argmax,dout,din", POOL_SCALARS, "din from dout at the argmax"},
    {"relu.forward", "x,y", "n:i", "y = max(x, 0)"},
    {"relu.backward", "x,dy,dx", "n:i", "dx = x > 0 ? dy : 0"},
    {"sigmoid.forward", "x,y", "n:i", "y = 1 / (1 + e^-x)"},
    {"sigmoid.backward", "x,dy,dx", "n:i", "dx = dy s (1 - s)"},
    {"softmax_cross_entropy.forward", "logits,labels,loss,dlogits", "batch:i,classes:i",
     "mean cross-entropy of softmax(logits) and its gradient"},
    {"mse.forward", "pred,target,loss,dpred", "n:i", "mean squared error and its gradient"},
    {"sgd.update", "param,grad,velocity", "n:i,lr:f,momentum:f,weight_decay:f,step:i", "SGD with momentum"},
    {"adam.update", "param,grad,m,v", "n:i,lr:f,beta1:f,beta2:f,eps:f,weight_decay:f,step:i", "Adam"},
    {"data.gather", "images,labels_all,order,x,labels", "batch:i,offset:i,pixels:i,mean:f,inv_std:f",
     "a batch from the data set on the device"},
    {"metrics.classify", "logits,labels,loss,stats", "batch:i,classes:i", "loss and right answers, summed"},
    {"metrics.binary", "pred,target,loss,stats", "batch:i,per_sample:i", "loss and right answers, summed"},
};

static const slot_def *find_slot_def(const char *name) {
    for (size_t i = 0; i < HN_ARRAY_LEN(SLOTS); i++)
        if (strcmp(SLOTS[i].name, name) == 0) return &SLOTS[i];
    return NULL;
}

/* Whether name is in the comma-separated list (the part before ':' of each);
 * the type letter into *type when it has one. */
static int in_list(const char *list, const char *name, char *type) {
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        const char *stop = colon ? colon : end;
        if ((size_t)(stop - p) == len && strncmp(p, name, len) == 0) {
            if (type) *type = colon ? colon[1] : 'p';
            return 1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */

typedef struct {
    char *name;
    char *text;     /* the value as written, for -D */
    hn_value v;     /* strings point into text */
} tk_define;

typedef struct {
    char kind;      /* 'p' buffer, 'i'/'f' scalar by name, 'e' typed expression */
    char type;      /* the C type: 'p', 'i', 'u', 'l', 'f', 'd' */
    char *name;     /* the buffer or scalar */
    hn_expr *expr;
    char *text;
} tk_arg;

typedef struct {
    const slot_def *def;
    char *file;
    char *kernel;
    tk_define *defines;
    int n_defines;
    hn_expr *block[3], *grid[3], *shared;
    tk_arg *args;
    int n_args;
    char **include_dirs;
    int n_include_dirs;
    char **options;
    int n_options;
    char *tuned_from;  /* the best.json that set its defines, or NULL */
    /* compiled on first bind */
    int compiled;
    hn_module_image img;
    hn_kernel *k;
} tk_slot;

struct hn_tk {
    char *path;
    tk_slot *slots;
    int n_slots;
    hn_backend *be;
    hn_device_info dev; /* be's limits, for the geometry's checks */
    char *arch;
    char *cache_dir;
    int verbose;
};

static int bad(hn_err *err, const char *file, const char *jpath, const char *fmt, ...) HN_PRINTF(4, 5);
static int bad(hn_err *err, const char *file, const char *jpath, const char *fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hn_errf(err, "%s: %s: %s", file, jpath, msg);
}

static const char *json_type(const cJSON *j) {
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsArray(j)) return "an array";
    if (cJSON_IsObject(j)) return "an object";
    return "something else";
}

static void value_of_text(tk_define *d) {
    char *end;
    long long i = strtoll(d->text, &end, 10);
    if (*d->text && !*end) {
        d->v = (hn_value){.type = HN_VAL_INT, .i = i};
        return;
    }
    double f = strtod(d->text, &end);
    if (*d->text && !*end) {
        d->v = (hn_value){.type = HN_VAL_FLOAT, .f = f};
        return;
    }
    d->v = (hn_value){.type = HN_VAL_STR, .s = d->text};
}

/* Names an expression of slot s may use: its defines, buffers and scalars. */
typedef struct {
    const tk_slot *s;
    const char *bad_name;
} name_ctx;

static int known(void *p, const char *name) {
    name_ctx *c = p;
    for (int i = 0; i < c->s->n_defines; i++)
        if (strcmp(c->s->defines[i].name, name) == 0) return 0;
    if (in_list(c->s->def->buffers, name, NULL) || in_list(c->s->def->scalars, name, NULL)) return 0;
    c->bad_name = name;
    return -1;
}

static int parse_expr(const char *file, const char *jpath, const cJSON *j, const tk_slot *s, hn_expr **out,
                      hn_err *err) {
    char buf[64];
    const char *text;
    if (cJSON_IsNumber(j)) {
        snprintf(buf, sizeof buf, "%.17g", j->valuedouble);
        text = buf;
    } else if (cJSON_IsString(j)) {
        text = j->valuestring;
    } else {
        return bad(err, file, jpath, "expected a number or an expression, got %s", json_type(j));
    }
    hn_err e;
    if (hn_expr_parse(text, out, &e) != 0) return bad(err, file, jpath, "in '%s': %s", text, e.msg);
    name_ctx nc = {s, NULL};
    if (hn_expr_names(*out, known, &nc) != 0) {
        bad(err, file, jpath, "in '%s': unknown name '%s' (known here: the defines, %s, %s)", text, nc.bad_name,
            s->def->buffers, s->def->scalars);
        hn_expr_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

static void slot_free(tk_slot *s, hn_backend *be) {
    free(s->file);
    free(s->kernel);
    for (int i = 0; i < s->n_defines; i++) {
        free(s->defines[i].name);
        free(s->defines[i].text);
    }
    free(s->defines);
    for (int i = 0; i < 3; i++) {
        hn_expr_free(s->block[i]);
        hn_expr_free(s->grid[i]);
    }
    hn_expr_free(s->shared);
    for (int i = 0; i < s->n_args; i++) {
        free(s->args[i].name);
        free(s->args[i].text);
        hn_expr_free(s->args[i].expr);
    }
    free(s->args);
    for (int i = 0; i < s->n_include_dirs; i++) free(s->include_dirs[i]);
    free(s->include_dirs);
    for (int i = 0; i < s->n_options; i++) free(s->options[i]);
    free(s->options);
    free(s->tuned_from);
    if (s->k && be) be->ops->kernel_free(be, s->k);
    if (s->compiled) hn_module_image_free(&s->img);
}

static const char *const SLOT_KEYS[] = {"file", "kernel", "defines", "block", "grid", "shared_bytes",
                                        "args", "include_dirs", "options", "//", NULL};

static int parse_dims(const char *file, const char *jpath, const cJSON *j, const tk_slot *s, hn_expr *dims[3],
                      hn_err *err) {
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > 3)
        return bad(err, file, jpath, "expected an array of 1 to 3 expressions (x first)%s", j ? "" : "; it is missing");
    int i = 0;
    for (const cJSON *e = j->child; e; e = e->next, i++) {
        char *p = xasprintf("%s[%d]", jpath, i);
        int rc = parse_expr(file, p, e, s, &dims[i], err);
        free(p);
        if (rc != 0) return -1;
    }
    for (; i < 3; i++) hn_expr_parse("1", &dims[i], NULL);
    return 0;
}

static int parse_arg(const char *file, const char *jpath, const cJSON *j, const tk_slot *s, tk_arg *a, hn_err *err) {
    if (!cJSON_IsString(j))
        return bad(err, file, jpath, "expected a string (a buffer, a scalar, or 'type: expression'), got %s",
                   json_type(j));
    const char *text = j->valuestring;
    a->text = xstrdup(text);
    const char *colon = strchr(text, ':');
    if (colon) {
        static const struct {
            const char *name;
            char code;
        } TYPES[] = {{"int", 'i'}, {"int32", 'i'}, {"unsigned", 'u'}, {"uint32", 'u'},
                     {"long", 'l'}, {"int64", 'l'}, {"float", 'f'}, {"double", 'd'}};
        char *type = xstrndup(text, (size_t)(colon - text));
        char *t = hn_trim(type);
        a->type = 0;
        for (size_t i = 0; i < HN_ARRAY_LEN(TYPES); i++)
            if (strcmp(t, TYPES[i].name) == 0) a->type = TYPES[i].code;
        if (!a->type) {
            bad(err, file, jpath, "unknown argument type '%s' (expected int, unsigned, long, float or double)", t);
            free(type);
            return -1;
        }
        free(type);
        a->kind = 'e';
        cJSON tmp = {0};
        tmp.type = cJSON_String;
        tmp.valuestring = (char *)(colon + 1);
        return parse_expr(file, jpath, &tmp, s, &a->expr, err);
    }
    char type;
    if (in_list(s->def->buffers, text, &type)) {
        a->kind = a->type = 'p';
        a->name = xstrdup(text);
        return 0;
    }
    if (in_list(s->def->scalars, text, &type)) {
        if (type == 's')
            return bad(err, file, jpath, "'%s' is a string; pass it as a typed expression (e.g. 'int: %s == \"max\"')",
                       text, text);
        a->kind = type;
        a->type = type;
        a->name = xstrdup(text);
        return 0;
    }
    return bad(err, file, jpath, "unknown argument '%s' (%s buffers: %s; scalars: %s; or a typed expression such as "
                                 "'int: TILE * 2')",
               text, s->def->name, s->def->buffers, s->def->scalars);
}

/* A path of the config, relative to its folder; where that is not found, relative
 * to the default config's folder (configs/train/), so that a copy of
 * default.json elsewhere still finds ../../kernels/. The absolute path, or NULL
 * with *tried the places looked at (the caller frees it). */
static char *resolve(const char *dir, const char *fallback, const char *rel, char **tried) {
    char *joined = hn_path_join(dir, rel);
    char *abs = realpath(joined, NULL);
    if (abs || !fallback || rel[0] == '/') {
        *tried = joined;
        if (abs) {
            free(joined);
            *tried = NULL;
        }
        return abs;
    }
    char *second = hn_path_join(fallback, rel);
    abs = realpath(second, NULL);
    if (abs) {
        free(joined);
        free(second);
        *tried = NULL;
        return abs;
    }
    *tried = xasprintf("%s, then %s", joined, second);
    free(joined);
    free(second);
    return NULL;
}

static int parse_slot(const char *file, const char *dir, const char *fallback, const char *jpath, const cJSON *v,
                      tk_slot *s, hn_err *err) {
    if (!cJSON_IsObject(v)) return bad(err, file, jpath, "expected an object (a kernel variant), got %s", json_type(v));
    for (const cJSON *k = v->child; k; k = k->next) {
        int ok = 0;
        for (int i = 0; SLOT_KEYS[i]; i++) ok |= strcmp(k->string, SLOT_KEYS[i]) == 0;
        if (!ok)
            return bad(err, file, jpath, "unknown key '%s' (expected file, kernel, defines, block, grid, shared_bytes, "
                                         "args, include_dirs, options)",
                       k->string);
    }
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(v, "kernel");
    char *p = xasprintf("%s.kernel", jpath);
    int rc = -1;
    if (!cJSON_IsString(j) || !j->valuestring[0]) {
        bad(err, file, p, "expected the kernel's C++ name (a string)");
        goto done;
    }
    s->kernel = xstrdup(j->valuestring);
    free(p);
    p = xasprintf("%s.file", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "file");
    if (!cJSON_IsString(j)) {
        bad(err, file, p, "expected the path of the .cu file, relative to the config");
        goto done;
    }
    {
        char *tried = NULL;
        s->file = resolve(dir, fallback, j->valuestring, &tried);
        if (!s->file) {
            bad(err, file, p, "file '%s' not found (looked for %s)", j->valuestring, tried);
            free(tried);
            goto done;
        }
    }
    free(p);
    p = xasprintf("%s.defines", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "defines");
    if (j) {
        if (!cJSON_IsObject(j)) {
            bad(err, file, p, "expected an object of NAME: value, got %s", json_type(j));
            goto done;
        }
        s->defines = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof *s->defines);
        for (const cJSON *d = j->child; d; d = d->next) {
            tk_define *def = &s->defines[s->n_defines];
            if (cJSON_IsNumber(d)) {
                double x = d->valuedouble;
                def->text = x == floor(x) && fabs(x) < 9e15 ? xasprintf("%lld", (long long)x) : xasprintf("%.17g", x);
            } else if (cJSON_IsString(d)) {
                def->text = xstrdup(d->valuestring);
            } else {
                bad(err, file, p, "%s: expected one number or string (a training config runs one configuration), got %s",
                    d->string, json_type(d));
                goto done;
            }
            def->name = xstrdup(d->string);
            value_of_text(def);
            s->n_defines++;
        }
    }
    free(p);
    p = xasprintf("%s.block", jpath);
    if (parse_dims(file, p, cJSON_GetObjectItemCaseSensitive(v, "block"), s, s->block, err) != 0) goto done;
    free(p);
    p = xasprintf("%s.grid", jpath);
    if (parse_dims(file, p, cJSON_GetObjectItemCaseSensitive(v, "grid"), s, s->grid, err) != 0) goto done;
    free(p);
    p = xasprintf("%s.shared_bytes", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "shared_bytes");
    if (j) {
        if (parse_expr(file, p, j, s, &s->shared, err) != 0) goto done;
    } else {
        hn_expr_parse("0", &s->shared, NULL);
    }
    free(p);
    p = xasprintf("%s.args", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "args");
    if (!cJSON_IsArray(j)) {
        bad(err, file, p, "expected an array binding each kernel parameter in order");
        goto done;
    }
    if (cJSON_GetArraySize(j) > HN_TK_MAX_ARGS) {
        bad(err, file, p, "more than %d arguments", HN_TK_MAX_ARGS);
        goto done;
    }
    s->args = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof *s->args);
    {
        int i = 0;
        for (const cJSON *a = j->child; a; a = a->next, i++) {
            char *ap = xasprintf("%s[%d]", p, i);
            int arc = parse_arg(file, ap, a, s, &s->args[s->n_args++], err);
            free(ap);
            if (arc != 0) goto done;
        }
    }
    free(p);
    p = xasprintf("%s.include_dirs", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "include_dirs");
    if (j) {
        if (!cJSON_IsArray(j)) {
            bad(err, file, p, "expected an array of folders");
            goto done;
        }
        s->include_dirs = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof *s->include_dirs);
        for (const cJSON *d = j->child; d; d = d->next) {
            if (!cJSON_IsString(d)) {
                bad(err, file, p, "expected strings");
                goto done;
            }
            char *tried = NULL;
            char *abs = resolve(dir, fallback, d->valuestring, &tried);
            if (!abs) {
                bad(err, file, p, "folder '%s' not found (looked for %s)", d->valuestring, tried);
                free(tried);
                goto done;
            }
            s->include_dirs[s->n_include_dirs++] = abs;
        }
    }
    free(p);
    p = xasprintf("%s.options", jpath);
    j = cJSON_GetObjectItemCaseSensitive(v, "options");
    if (j) {
        if (!cJSON_IsArray(j)) {
            bad(err, file, p, "expected an array of compiler options");
            goto done;
        }
        s->options = xcalloc((size_t)cJSON_GetArraySize(j) + 1, sizeof *s->options);
        for (const cJSON *d = j->child; d; d = d->next) {
            if (!cJSON_IsString(d)) {
                bad(err, file, p, "expected strings");
                goto done;
            }
            s->options[s->n_options++] = xstrdup(d->valuestring);
        }
    }
    rc = 0;
done:
    free(p);
    return rc;
}

/* The most frequent "defines" of a best.json's results (the configuration that
 * won the most cases; the only one for a tune --across), read by tune/best.c. */
static int read_tuned(const char *path, char **kernel, char **defines, hn_err *err) {
    hn_best b;
    if (hn_best_load(path, &b, err) != 0) return hn_best_err(err);
    *kernel = xstrdup(b.kernel);
    *defines = xstrdup(hn_best_most_frequent(&b));
    hn_best_free(&b);
    return 0;
}

static int apply_tuned(hn_tk *t, const char *path, hn_err *err) {
    char *kernel = NULL, *defines = NULL;
    if (read_tuned(path, &kernel, &defines, err) != 0) return -1;
    int hits = 0;
    for (int i = 0; i < t->n_slots; i++) {
        tk_slot *s = &t->slots[i];
        if (strcmp(s->kernel, kernel) != 0) continue;
        hits++;
        char *save = NULL, *copy = xstrdup(defines);
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            if (!eq) continue;
            *eq = '\0';
            tk_define *d = NULL;
            for (int k = 0; k < s->n_defines; k++)
                if (strcmp(s->defines[k].name, tok) == 0) d = &s->defines[k];
            if (!d) {
                s->defines = xrealloc(s->defines, (size_t)(s->n_defines + 1) * sizeof *s->defines);
                d = &s->defines[s->n_defines++];
                d->name = xstrdup(tok);
            } else {
                free(d->text);
            }
            d->text = xstrdup(eq + 1);
            value_of_text(d);
        }
        free(copy);
        free(s->tuned_from);
        s->tuned_from = xstrdup(path);
    }
    int rc = 0;
    if (!hits) {
        hn_sb runs;
        hn_sb_init(&runs);
        for (int i = 0; i < t->n_slots; i++) {
            int seen = 0;
            for (int j = 0; j < i; j++) seen |= strcmp(t->slots[j].kernel, t->slots[i].kernel) == 0;
            if (!seen) hn_sb_addf(&runs, "%s%s", runs.len ? ", " : "", t->slots[i].kernel);
        }
        rc = hn_errf(err, "--tuned %s: it tunes kernel '%s', which no slot of %s runs (they run %s); tune one of those "
                          "(docs/tuning.md), or name the tuned kernel in a config of your own (--kernels)",
                     path, kernel, t->path, runs.len ? runs.buf : "nothing");
        hn_sb_free(&runs);
    }
    free(kernel);
    free(defines);
    return rc;
}

int hn_tk_load(const char *path, const char *tuned, hn_tk **out, hn_err *err) {
    *out = NULL;
    char *text = NULL;
    size_t size;
    if (hn_read_file(path, &text, &size, err) != 0) return -1;
    cJSON *root = cJSON_Parse(text);
    if (!root) {
        hn_errf(err, "%s: not valid JSON (near '%.30s')", path, cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() : "");
        free(text);
        return -1;
    }
    free(text);
    hn_tk *t = xcalloc(1, sizeof *t);
    t->path = xstrdup(path);
    char *dir = hn_dirname(path);
    char *def_path = hn_tk_default_path(), *def_dir = hn_dirname(def_path);
    free(def_path);
    int rc = -1;
    if (cJSON_GetObjectItemCaseSensitive(root, "variants") && !cJSON_GetObjectItemCaseSensitive(root, "layers")) {
        hn_errf(err, "%s: a sweep config (it has \"variants\"), not a training config: --kernels takes one like "
                     "configs/train/default.json, whose \"layers\" name a kernel per layer type and pass; paste a "
                     "variant of this file into a copy of it (docs/training.md)",
                path);
        goto done;
    }
    for (const cJSON *k = root->child; k; k = k->next)
        if (strcmp(k->string, "name") && strcmp(k->string, "description") && strcmp(k->string, "//") &&
            strcmp(k->string, "layers")) {
            hn_errf(err, "%s: %s: unknown key (expected name, description, layers)", path, k->string);
            goto done;
        }
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(root, "layers");
    if (!cJSON_IsObject(layers)) {
        hn_errf(err, "%s: layers: expected an object of layer type -> pass -> kernel", path);
        goto done;
    }
    int cap = (int)HN_ARRAY_LEN(SLOTS);
    t->slots = xcalloc((size_t)cap, sizeof *t->slots);
    for (const cJSON *type = layers->child; type; type = type->next) {
        if (strcmp(type->string, "//") == 0) continue;
        char *tp = xasprintf("layers.%s", type->string);
        if (!cJSON_IsObject(type)) {
            bad(err, path, tp, "expected an object of pass -> kernel");
            free(tp);
            goto done;
        }
        for (const cJSON *pass = type->child; pass; pass = pass->next) {
            if (strcmp(pass->string, "//") == 0) continue;
            char *name = xasprintf("%s.%s", type->string, pass->string);
            char *jpath = xasprintf("layers.%s", name);
            const slot_def *def = find_slot_def(name);
            int prc = 0;
            if (!def) {
                hn_sb known;
                hn_sb_init(&known);
                for (size_t i = 0; i < HN_ARRAY_LEN(SLOTS); i++) hn_sb_addf(&known, "%s%s", i ? ", " : "", SLOTS[i].name);
                prc = bad(err, path, jpath, "unknown layer type and pass (known: %s)", known.buf);
                hn_sb_free(&known);
            } else {
                for (int i = 0; i < t->n_slots; i++)
                    if (t->slots[i].def == def) prc = bad(err, path, jpath, "given twice");
            }
            if (prc == 0) {
                tk_slot *s = &t->slots[t->n_slots++];
                s->def = def;
                prc = parse_slot(path, dir, def_dir, jpath, pass, s, err);
            }
            free(name);
            free(jpath);
            if (prc != 0) {
                free(tp);
                goto done;
            }
        }
        free(tp);
    }
    if (tuned && apply_tuned(t, tuned, err) != 0) goto done;
    rc = 0;
done:
    free(dir);
    free(def_dir);
    cJSON_Delete(root);
    if (rc != 0) {
        hn_tk_destroy(t);
        return -1;
    }
    *out = t;
    return 0;
}

void hn_tk_destroy(hn_tk *t) {
    if (!t) return;
    for (int i = 0; i < t->n_slots; i++) slot_free(&t->slots[i], t->be);
    free(t->slots);
    free(t->path);
    free(t->arch);
    free(t->cache_dir);
    free(t);
}

void hn_tk_set_backend(hn_tk *t, hn_backend *be, const char *arch, const char *cache_dir, int verbose) {
    t->be = be;
    memset(&t->dev, 0, sizeof t->dev);
    if (be) be->ops->device_info(be, &t->dev);
    free(t->arch);
    free(t->cache_dir);
    t->arch = arch ? xstrdup(arch) : NULL;
    t->cache_dir = cache_dir ? xstrdup(cache_dir) : NULL;
    t->verbose = verbose;
}

static tk_slot *find_slot(const hn_tk *t, const char *name) {
    for (int i = 0; i < t->n_slots; i++)
        if (strcmp(t->slots[i].def->name, name) == 0) return &t->slots[i];
    return NULL;
}

int hn_tk_has(const hn_tk *t, const char *slot) { return find_slot(t, slot) != NULL; }

/* ---------------------------------------------------------------------- */
/* compile and bind */

static char *slot_label(const tk_slot *s) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, s->kernel);
    for (int i = 0; i < s->n_defines; i++)
        hn_sb_addf(&sb, "%s%s=%s", i ? "," : "[", s->defines[i].name, s->defines[i].text);
    if (s->n_defines) hn_sb_addc(&sb, ']');
    return hn_sb_detach(&sb);
}

static int check_signature(hn_backend *be, const tk_slot *s, hn_err *err) {
    hn_param_info params[64];
    int n = -1;
    if (be->ops->kernel_params(be, s->k, params, 64, &n, err) != 0) return -1;
    if (n < 0) return 0;
    if (n != s->n_args)
        return hn_errf(err, "kernel %s takes %d parameters but the config binds %d", s->kernel, n, s->n_args);
    for (int i = 0; i < n && i < 64; i++) {
        int size = 0;
        char kind = '?';
        switch (s->args[i].type) {
        case 'p': size = 8, kind = 'p'; break;
        case 'i': size = 4, kind = 'i'; break;
        case 'u': size = 4, kind = 'u'; break;
        case 'l': size = 8, kind = 'i'; break;
        case 'f': size = 4, kind = 'f'; break;
        case 'd': size = 8, kind = 'f'; break;
        }
        int size_ok = params[i].size <= 0 || params[i].size == size;
        int kind_ok = params[i].kind == '?' || params[i].kind == 'o' || params[i].kind == kind ||
                      (params[i].kind == 'u' && kind == 'i') || (params[i].kind == 'i' && kind == 'u');
        if (!size_ok || !kind_ok)
            return hn_errf(err, "argument %d ('%s') does not fit parameter %d of %s (%d bytes, kind %c)", i,
                           s->args[i].text, i, s->kernel, params[i].size, params[i].kind);
    }
    return 0;
}

/* Compiles s for target into img (the caller frees it). */
static int compile_image(const hn_tk *t, const tk_slot *s, hn_target target, const char *arch, const char *cache_dir,
                         hn_module_image *img, hn_err *err) {
    char **defs = xcalloc((size_t)s->n_defines + 1, sizeof *defs);
    for (int i = 0; i < s->n_defines; i++) defs[i] = xasprintf("%s=%s", s->defines[i].name, s->defines[i].text);
    const char *kernels[1] = {s->kernel};
    hn_compile_req req = {
        .src_path = s->file,
        .defines = (const char *const *)defs,
        .n_defines = s->n_defines,
        .include_dirs = (const char *const *)s->include_dirs,
        .n_include_dirs = s->n_include_dirs,
        .kernels = kernels,
        .n_kernels = 1,
        .arch = arch,
        .cache_dir = cache_dir,
        .options = (const char *const *)s->options,
        .n_options = s->n_options,
    };
    char *log = NULL;
    int rc = hn_compile(target, &req, img, &log, err);
    for (int i = 0; i < s->n_defines; i++) free(defs[i]);
    free(defs);
    if (rc != 0) {
        if (log && *log && t->verbose) fprintf(stderr, "%s\n", log);
        free(log);
        return hn_err_prefix(err, "%s (%s in %s)", s->def->name, s->kernel, s->file);
    }
    free(log);
    return 0;
}

int hn_tk_compile_all(hn_tk *t, int cuda, const char *arch, const char *cache_dir, FILE *out, hn_err *err) {
    int failed = 0;
    for (int i = 0; i < t->n_slots; i++) {
        tk_slot *s = &t->slots[i];
        hn_module_image img;
        memset(&img, 0, sizeof img);
        hn_err e;
        int rc = compile_image(t, s, cuda ? HN_TARGET_CUDA : HN_TARGET_EMU, arch, cache_dir, &img, &e);
        char *label = slot_label(s);
        if (out) {
            if (rc == 0 && cuda && img.res)
                fprintf(out, "  %-30s %-44s ok: %d registers, %d bytes spilled%s\n", s->def->name, label,
                        img.res[0].registers, img.res[0].spill_stores, img.from_cache ? " (cached)" : "");
            else
                fprintf(out, "  %-30s %-44s %s%s\n", s->def->name, label, rc == 0 ? "ok" : "FAILED: ", rc == 0 ? "" : e.msg);
        }
        free(label);
        if (rc != 0) failed++;
        else hn_module_image_free(&img);
    }
    (void)err;
    return failed;
}

static int compile_slot(hn_tk *t, tk_slot *s, hn_err *err) {
    if (!t->be) return hn_errf(err, "%s: no backend to compile for", s->def->name);
    if (compile_image(t, s, t->be->ops->target, t->arch, t->cache_dir, &s->img, err) != 0) return -1;
    s->compiled = 1;
    if (t->be->ops->kernel_load(t->be, &s->img, 0, &s->k, err) != 0)
        return hn_err_prefix(err, "%s: loading %s", s->def->name, s->kernel);
    if (check_signature(t->be, s, err) != 0) return hn_err_prefix(err, "%s: layers.%s.args", t->path, s->def->name);
    if (t->verbose) {
        char *label = slot_label(s);
        fprintf(stderr, "harness train: %-30s %s%s\n", s->def->name, label, s->img.from_cache ? " (cached)" : "");
        free(label);
    }
    return 0;
}

typedef struct {
    const tk_slot *s;
    const hn_tk_val *vals;
    int n;
} scope;

static int lookup(void *p, const char *name, hn_value *out) {
    const scope *sc = p;
    for (int i = 0; i < sc->s->n_defines; i++)
        if (strcmp(sc->s->defines[i].name, name) == 0) {
            *out = sc->s->defines[i].v;
            return 0;
        }
    for (int i = 0; i < sc->n; i++) {
        const hn_tk_val *v = &sc->vals[i];
        if (strcmp(v->name, name) != 0) continue;
        switch (v->kind) {
        case 'i': *out = (hn_value){.type = HN_VAL_INT, .i = v->i}; return 0;
        case 'f': *out = (hn_value){.type = HN_VAL_FLOAT, .f = v->f}; return 0;
        case 's': *out = (hn_value){.type = HN_VAL_STR, .s = v->s}; return 0;
        default: *out = (hn_value){.type = HN_VAL_INT, .i = (int64_t)v->p}; return 0;
        }
    }
    return -1;
}

static const hn_tk_val *find_val(const hn_tk_val *vals, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(vals[i].name, name) == 0) return &vals[i];
    return NULL;
}

/* An error of a slot whose defines --tuned set says so: the value that does not
 * compile or fit came from the tune's file, not from the config it names. */
static int tuned_err(const tk_slot *s, hn_err *err) {
    if (s->tuned_from) hn_err_prefix(err, "with the defines of --tuned %s", s->tuned_from);
    return -1;
}

int hn_tk_prepare(hn_tk *t, const char *slot, hn_err *err) {
    tk_slot *s = find_slot(t, slot);
    if (!s) return hn_errf(err, "%s: layers.%s: missing (the model needs it)", t->path, slot);
    if (!s->compiled && compile_slot(t, s, err) != 0) return tuned_err(s, err);
    return 0;
}

/* The geometry against the device's limits, so that a config that asks for
 * too much is an error naming its file and JSON path (exit 2), not a failed
 * launch. Limits of 0 (a backend that does not know them) are not checked. */
static int check_limits(const hn_tk *t, const char *slot, const hn_launch_dims *d, hn_err *err) {
    const hn_device_info *in = &t->dev;
    const unsigned long long threads = (unsigned long long)d->block[0] * d->block[1] * d->block[2];
    for (int i = 0; i < 3; i++)
        if (in->max_block_dim[i] > 0 && d->block[i] > (unsigned)in->max_block_dim[i])
            return hn_errf(err, "%s: layers.%s.block[%d] = %u exceeds the device limit of %d (%s)", t->path, slot, i,
                           d->block[i], in->max_block_dim[i], in->name);
    if (in->max_threads_per_block > 0 && threads > (unsigned long long)in->max_threads_per_block)
        return hn_errf(err, "%s: layers.%s.block: %u x %u x %u = %llu threads exceeds the device limit of %d per block (%s)",
                       t->path, slot, d->block[0], d->block[1], d->block[2], threads, in->max_threads_per_block,
                       in->name);
    for (int i = 0; i < 3; i++)
        if (in->max_grid_dim[i] > 0 && d->grid[i] > (unsigned)in->max_grid_dim[i])
            return hn_errf(err, "%s: layers.%s.grid[%d] = %u exceeds the device limit of %d (%s)", t->path, slot, i,
                           d->grid[i], in->max_grid_dim[i], in->name);
    const size_t shared_max = in->shared_per_block_optin > in->shared_per_block ? in->shared_per_block_optin
                                                                                 : in->shared_per_block;
    if (shared_max > 0 && d->shared_bytes > shared_max)
        return hn_errf(err, "%s: layers.%s.shared_bytes = %zu exceeds the device limit of %zu bytes (%s)", t->path,
                       slot, d->shared_bytes, shared_max, in->name);
    return 0;
}

static int bind_slot(hn_tk *t, tk_slot *s, const char *slot, const hn_tk_val *vals, int n_vals, hn_tk_call *call,
                     hn_err *err);

int hn_tk_bind(hn_tk *t, const char *slot, const hn_tk_val *vals, int n_vals, hn_tk_call *call, hn_err *err) {
    memset(call, 0, sizeof *call);
    tk_slot *s = find_slot(t, slot);
    if (!s) return hn_errf(err, "%s: layers.%s: missing (the model needs it)", t->path, slot);
    if (bind_slot(t, s, slot, vals, n_vals, call, err) != 0) return tuned_err(s, err);
    return 0;
}

static int bind_slot(hn_tk *t, tk_slot *s, const char *slot, const hn_tk_val *vals, int n_vals, hn_tk_call *call,
                     hn_err *err) {
    if (!s->compiled && compile_slot(t, s, err) != 0) return -1;
    if (!s->k) return hn_errf(err, "%s: %s did not load", t->path, slot);
    scope sc = {s, vals, n_vals};
    call->slot = s->def->name;
    call->k = s->k;
    for (int i = 0; i < 3; i++) {
        int64_t x;
        if (hn_expr_eval_int(s->block[i], lookup, &sc, &x, err) != 0)
            return hn_err_prefix(err, "%s: layers.%s.block[%d] '%s'", t->path, slot, i, hn_expr_text(s->block[i]));
        if (x < 1 || x > UINT32_MAX)
            return hn_errf(err, "%s: layers.%s.block[%d] '%s' = %lld (must be at least 1)", t->path, slot, i,
                           hn_expr_text(s->block[i]), (long long)x);
        call->dims.block[i] = (unsigned)x;
        if (hn_expr_eval_int(s->grid[i], lookup, &sc, &x, err) != 0)
            return hn_err_prefix(err, "%s: layers.%s.grid[%d] '%s'", t->path, slot, i, hn_expr_text(s->grid[i]));
        if (x < 1 || x > UINT32_MAX)
            return hn_errf(err, "%s: layers.%s.grid[%d] '%s' = %lld (must be at least 1)", t->path, slot, i,
                           hn_expr_text(s->grid[i]), (long long)x);
        call->dims.grid[i] = (unsigned)x;
    }
    int64_t sh;
    if (hn_expr_eval_int(s->shared, lookup, &sc, &sh, err) != 0)
        return hn_err_prefix(err, "%s: layers.%s.shared_bytes", t->path, slot);
    if (sh < 0) return hn_errf(err, "%s: layers.%s.shared_bytes is negative", t->path, slot);
    call->dims.shared_bytes = (size_t)sh;
    if (check_limits(t, slot, &call->dims, err) != 0) return -1;
    for (int i = 0; i < s->n_args; i++) {
        const tk_arg *a = &s->args[i];
        call->args[i] = &call->vals[i];
        hn_value v;
        if (a->kind == 'p' || a->kind == 'i' || a->kind == 'f') {
            const hn_tk_val *given = find_val(vals, n_vals, a->name);
            if (!given) return hn_errf(err, "%s: the model gave no value for '%s'", slot, a->name);
            if (a->kind == 'p') {
                call->vals[i].p = given->p;
                continue;
            }
            v = given->kind == 'i' ? (hn_value){.type = HN_VAL_INT, .i = given->i}
                                   : (hn_value){.type = HN_VAL_FLOAT, .f = given->f};
        } else if (hn_expr_eval(a->expr, lookup, &sc, &v, err) != 0) {
            return hn_err_prefix(err, "%s: layers.%s.args[%d] '%s'", t->path, slot, i, a->text);
        }
        if (v.type == HN_VAL_STR) return hn_errf(err, "%s: layers.%s.args[%d] '%s' is a string", t->path, slot, i, a->text);
        double d = v.type == HN_VAL_INT ? (double)v.i : v.f;
        switch (a->type) {
        case 'i':
            if (v.type != HN_VAL_INT || v.i < INT32_MIN || v.i > INT32_MAX)
                return hn_errf(err, "%s: layers.%s.args[%d] '%s' = %g does not fit an int", t->path, slot, i, a->text, d);
            call->vals[i].i = (int32_t)v.i;
            break;
        case 'u':
            if (v.type != HN_VAL_INT || v.i < 0 || v.i > UINT32_MAX)
                return hn_errf(err, "%s: layers.%s.args[%d] '%s' = %g does not fit an unsigned", t->path, slot, i,
                               a->text, d);
            call->vals[i].u = (uint32_t)v.i;
            break;
        case 'l':
            if (v.type != HN_VAL_INT) return hn_errf(err, "%s: layers.%s.args[%d] is not an integer", t->path, slot, i);
            call->vals[i].l = v.i;
            break;
        case 'f': call->vals[i].f = (float)d; break;
        case 'd': call->vals[i].d = d; break;
        }
    }
    call->n_args = s->n_args;
    return 0;
}

int hn_tk_launch(hn_backend *be, const hn_tk_call *call, hn_err *err) {
    if (be->ops->launch(be, call->k, &call->dims, (void **)call->args, err) != 0)
        return hn_err_prefix(err, "%s", call->slot);
    return 0;
}

void hn_tk_describe(const hn_tk *t, FILE *out) {
    for (int i = 0; i < t->n_slots; i++) {
        const tk_slot *s = &t->slots[i];
        if (!s->compiled) continue;
        char *label = slot_label(s);
        const char *base = strrchr(s->file, '/');
        fprintf(out, "  %-30s %-44s %s%s%s\n", s->def->name, label, base ? base + 1 : s->file,
                s->tuned_from ? "  tuned: " : "", s->tuned_from ? s->tuned_from : "");
        free(label);
    }
}

char *hn_tk_default_path(void) {
    const char *root = getenv("HARNESS_ROOT");
    if (root && *root) {
        char *p = xasprintf("%s/configs/train/default.json", root);
        if (hn_file_exists(p)) return p;
        free(p);
    }
    char *p = xasprintf("configs/train/default.json");
    if (hn_file_exists(p)) return p;
    free(p);
    return xasprintf("%s/configs/train/default.json", HN_SOURCE_DIR);
}
