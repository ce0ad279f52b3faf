/*
 * model.c: layers and the sequential model of `harness train`; see model.h.
 */
#define _GNU_SOURCE
#include "train/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

hn_model *hn_model_create(hn_backend *be, hn_tk *tk, int in_nd, const int *in_dims) {
    hn_model *m = xcalloc(1, sizeof *m);
    m->be = be;
    m->tk = tk;
    m->in_nd = in_nd;
    m->in_per = 1;
    for (int i = 0; i < in_nd; i++) {
        m->in_dims[i] = in_dims[i];
        m->in_per *= in_dims[i];
    }
    return m;
}

static void dfree(hn_backend *be, hn_dptr *p) {
    if (*p) be->ops->free(be, *p);
    *p = 0;
}

void hn_model_destroy(hn_model *m) {
    if (!m) return;
    hn_backend *be = m->be;
    for (int i = 0; i < m->n_layers; i++) {
        hn_layer *l = &m->layers[i];
        if (l->kind != HN_L_FLATTEN) {
            dfree(be, &l->y);
            if (l->dx) dfree(be, &l->dx);
        }
        dfree(be, &l->argmax);
        for (int e = 0; e < 4; e++)
            if (l->prof.ev[e]) be->ops->event_destroy(be, l->prof.ev[e]);
    }
    dfree(be, &m->x);
    dfree(be, &m->dout);
    dfree(be, &m->params);
    dfree(be, &m->grads);
    free(m->layers);
    free(m);
}

static hn_layer *add(hn_model *m, hn_layer_kind kind, const char *what) {
    if (m->n_layers == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 8;
        m->layers = xrealloc(m->layers, (size_t)m->cap * sizeof *m->layers);
    }
    hn_layer *l = &m->layers[m->n_layers++];
    memset(l, 0, sizeof *l);
    l->kind = kind;
    snprintf(l->name, sizeof l->name, "%s_%d", what, m->n_layers);
    return l;
}

void hn_model_add_linear(hn_model *m, int in_f, int out_f) {
    hn_layer *l = add(m, HN_L_LINEAR, "linear");
    l->in_f = in_f;
    l->out_f = out_f;
}

void hn_model_add_conv2d(hn_model *m, int in_ch, int out_ch, int fs, int padding) {
    hn_layer *l = add(m, HN_L_CONV2D, "conv2d");
    l->in_ch = in_ch;
    l->out_ch = out_ch;
    l->fs = fs;
    l->padding = padding;
}

void hn_model_add_maxpool2d(hn_model *m, int k) { add(m, HN_L_MAXPOOL2D, "maxpool2d")->k = k; }
void hn_model_add_relu(hn_model *m) { add(m, HN_L_RELU, "relu"); }
void hn_model_add_sigmoid(hn_model *m) { add(m, HN_L_SIGMOID, "sigmoid"); }
void hn_model_add_flatten(hn_model *m) { add(m, HN_L_FLATTEN, "flatten"); }

void hn_layer_describe(const hn_layer *l, char *buf, size_t size) {
    switch (l->kind) {
    case HN_L_LINEAR: snprintf(buf, size, "Linear(%d->%d)", l->in_f, l->out_f); break;
    case HN_L_CONV2D: snprintf(buf, size, "Conv2D(%d->%d, k%d, p%d)", l->in_ch, l->out_ch, l->fs, l->padding); break;
    case HN_L_MAXPOOL2D: snprintf(buf, size, "MaxPool2D(%d)", l->k); break;
    case HN_L_RELU: snprintf(buf, size, "ReLU"); break;
    case HN_L_SIGMOID: snprintf(buf, size, "Sigmoid"); break;
    case HN_L_FLATTEN: snprintf(buf, size, "Flatten"); break;
    }
}

static const char *shape_text(int nd, const int *d, char *buf, size_t size) {
    if (nd == 1) snprintf(buf, size, "(%d)", d[0]);
    else snprintf(buf, size, "(%d, %d, %d)", d[0], d[1], d[2]);
    return buf;
}

/* The output shape of l from its input shape. */
static int infer(hn_layer *l, hn_err *err) {
    char s[64], desc[64];
    hn_layer_describe(l, desc, sizeof desc);
    shape_text(l->in_nd, l->in_dims, s, sizeof s);
    l->out_nd = l->in_nd;
    memcpy(l->out_dims, l->in_dims, sizeof l->out_dims);
    switch (l->kind) {
    case HN_L_LINEAR:
        if (l->in_nd != 1 || l->in_dims[0] != l->in_f)
            return hn_errf(err, "layer %s %s: takes %d features per sample but gets %s%s", l->name, desc, l->in_f, s,
                           l->in_nd != 1 ? " (flatten it first)" : "");
        l->out_dims[0] = l->out_f;
        l->n_weight = (int64_t)l->out_f * l->in_f;
        l->n_bias = l->out_f;
        break;
    case HN_L_CONV2D: {
        if (l->in_nd != 3 || l->in_dims[0] != l->in_ch)
            return hn_errf(err, "layer %s %s: takes %d channels but gets %s", l->name, desc, l->in_ch, s);
        int oh = l->in_dims[1] + 2 * l->padding - l->fs + 1, ow = l->in_dims[2] + 2 * l->padding - l->fs + 1;
        if (l->padding < 0 || oh < 1 || ow < 1)
            return hn_errf(err, "layer %s %s: no output for an input of %s", l->name, desc, s);
        l->out_dims[0] = l->out_ch;
        l->out_dims[1] = oh;
        l->out_dims[2] = ow;
        l->n_weight = (int64_t)l->out_ch * l->in_ch * l->fs * l->fs;
        l->n_bias = l->out_ch;
        break;
    }
    case HN_L_MAXPOOL2D:
        if (l->in_nd != 3 || l->k < 1 || l->in_dims[1] < l->k || l->in_dims[2] < l->k)
            return hn_errf(err, "layer %s %s: does not fit an input of %s", l->name, desc, s);
        l->out_dims[1] = l->in_dims[1] / l->k;
        l->out_dims[2] = l->in_dims[2] / l->k;
        break;
    case HN_L_FLATTEN:
        l->out_nd = 1;
        l->out_dims[0] = 1;
        for (int i = 0; i < l->in_nd; i++) l->out_dims[0] *= l->in_dims[i];
        l->out_dims[1] = l->out_dims[2] = 0;
        break;
    default: break;
    }
    l->in_per = l->out_per = 1;
    for (int i = 0; i < l->in_nd; i++) l->in_per *= l->in_dims[i];
    for (int i = 0; i < l->out_nd; i++) l->out_per *= l->out_dims[i];
    return 0;
}

/* Binds every kernel of l for batch samples. */
static int bind(hn_model *m, hn_layer *l, int batch, hn_err *err) {
    hn_tk *tk = m->tk;
    l->n_bwd = 0;
    l->bound_batch = batch;
    switch (l->kind) {
    case HN_L_LINEAR: {
        hn_tk_val v[] = {HN_TK_BUF("x", l->x),        HN_TK_BUF("weight", l->weight), HN_TK_BUF("bias", l->bias),
                         HN_TK_BUF("y", l->y),        HN_TK_BUF("dy", l->dy),         HN_TK_BUF("dx", l->dx),
                         HN_TK_BUF("dweight", l->dweight), HN_TK_BUF("dbias", l->dbias), HN_TK_INT("batch", batch),
                         HN_TK_INT("in_f", l->in_f),  HN_TK_INT("out_f", l->out_f)};
        int n = (int)HN_ARRAY_LEN(v);
        if (hn_tk_bind(tk, "linear.forward", v, n, &l->fwd, err) != 0) return -1;
        if (l->need_dx && hn_tk_bind(tk, "linear.backward_data", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        if (hn_tk_bind(tk, "linear.backward_weight", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        if (hn_tk_bind(tk, "linear.backward_bias", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        return 0;
    }
    case HN_L_CONV2D: {
        hn_tk_val v[] = {HN_TK_BUF("in", l->x),         HN_TK_BUF("filter", l->weight),  HN_TK_BUF("bias", l->bias),
                         HN_TK_BUF("out", l->y),        HN_TK_BUF("dout", l->dy),        HN_TK_BUF("din", l->dx),
                         HN_TK_BUF("dfilter", l->dweight), HN_TK_BUF("dbias", l->dbias), HN_TK_INT("n", batch),
                         HN_TK_INT("in_ch", l->in_ch),  HN_TK_INT("out_ch", l->out_ch),  HN_TK_INT("h", l->in_dims[1]),
                         HN_TK_INT("w", l->in_dims[2]), HN_TK_INT("filter_size", l->fs), HN_TK_INT("padding", l->padding),
                         HN_TK_FLT("pad", 0.0),         HN_TK_INT("r", l->padding),      HN_TK_INT("oh", l->out_dims[1]),
                         HN_TK_INT("ow", l->out_dims[2])};
        int n = (int)HN_ARRAY_LEN(v);
        if (hn_tk_bind(tk, "conv2d.forward", v, n, &l->fwd, err) != 0) return -1;
        if (l->need_dx && hn_tk_bind(tk, "conv2d.backward_data", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        if (hn_tk_bind(tk, "conv2d.backward_filter", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        if (hn_tk_bind(tk, "conv2d.backward_bias", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        return 0;
    }
    case HN_L_MAXPOOL2D: {
        hn_tk_val v[] = {HN_TK_BUF("in", l->x),          HN_TK_BUF("out", l->y),         HN_TK_BUF("argmax", l->argmax),
                         HN_TK_BUF("dout", l->dy),       HN_TK_BUF("din", l->dx),        HN_TK_INT("n", batch),
                         HN_TK_INT("channels", l->in_dims[0]), HN_TK_INT("h", l->in_dims[1]), HN_TK_INT("w", l->in_dims[2]),
                         HN_TK_INT("k", l->k),           HN_TK_STR("mode", "max"),       HN_TK_STR("layout", "NCHW")};
        int n = (int)HN_ARRAY_LEN(v);
        if (hn_tk_bind(tk, "maxpool2d.forward", v, n, &l->fwd, err) != 0) return -1;
        if (l->need_dx && hn_tk_bind(tk, "maxpool2d.backward", v, n, &l->bwd[l->n_bwd++], err) != 0) return -1;
        return 0;
    }
    case HN_L_RELU:
    case HN_L_SIGMOID: {
        int64_t count = (int64_t)batch * l->in_per;
        if (count > INT32_MAX) return hn_errf(err, "layer %s: %lld elements do not fit an int", l->name, (long long)count);
        hn_tk_val v[] = {HN_TK_BUF("x", l->x), HN_TK_BUF("y", l->y), HN_TK_BUF("dy", l->dy), HN_TK_BUF("dx", l->dx),
                         HN_TK_INT("n", count)};
        int n = (int)HN_ARRAY_LEN(v);
        int relu = l->kind == HN_L_RELU;
        if (hn_tk_bind(tk, relu ? "relu.forward" : "sigmoid.forward", v, n, &l->fwd, err) != 0) return -1;
        if (l->need_dx && hn_tk_bind(tk, relu ? "relu.backward" : "sigmoid.backward", v, n, &l->bwd[l->n_bwd++], err) != 0)
            return -1;
        return 0;
    }
    case HN_L_FLATTEN: return 0;
    }
    return 0;
}

static int alloc(hn_backend *be, size_t bytes, hn_dptr *out, const char *what, hn_err *err) {
    if (be->ops->alloc(be, bytes, out, err) != 0) return hn_err_prefix(err, "allocating %s (%zu bytes)", what, bytes);
    if (be->ops->label) be->ops->label(be, *out, what);
    return 0;
}

int hn_model_finish(hn_model *m, int max_batch, hn_err *err) {
    hn_backend *be = m->be;
    m->max_batch = max_batch;
    if (m->n_layers == 0) return hn_errf(err, "the model has no layers");
    /* shapes and parameter offsets */
    int nd = m->in_nd;
    int dims[3] = {m->in_dims[0], m->in_dims[1], m->in_dims[2]};
    m->n_params = 0;
    for (int i = 0; i < m->n_layers; i++) {
        hn_layer *l = &m->layers[i];
        l->in_nd = nd;
        memcpy(l->in_dims, dims, sizeof dims);
        if (infer(l, err) != 0) return -1;
        nd = l->out_nd;
        memcpy(dims, l->out_dims, sizeof dims);
        l->param_off = m->n_params;
        m->n_params += l->n_weight + l->n_bias;
        l->need_dx = i > 0 || m->input_grad;
    }
    m->out_per = m->layers[m->n_layers - 1].out_per;
    /* buffers */
    size_t f = sizeof(float);
    if (alloc(be, (size_t)max_batch * m->in_per * f, &m->x, "the input batch", err) != 0) return -1;
    if (alloc(be, (size_t)max_batch * m->out_per * f, &m->dout, "the output gradient", err) != 0) return -1;
    if (m->n_params) {
        if (alloc(be, (size_t)m->n_params * f, &m->params, "the parameters", err) != 0 ||
            alloc(be, (size_t)m->n_params * f, &m->grads, "the gradients", err) != 0)
            return -1;
        if (be->ops->fill(be, m->grads, 0, (size_t)m->n_params * f, err) != 0) return -1;
    }
    hn_dptr cur = m->x;
    for (int i = 0; i < m->n_layers; i++) {
        hn_layer *l = &m->layers[i];
        l->x = cur;
        if (l->n_weight) {
            l->weight = m->params + (hn_dptr)l->param_off * f;
            l->bias = l->weight + (hn_dptr)l->n_weight * f;
            l->dweight = m->grads + (hn_dptr)l->param_off * f;
            l->dbias = l->dweight + (hn_dptr)l->n_weight * f;
        }
        if (l->kind == HN_L_FLATTEN) {
            l->y = cur;
        } else {
            size_t out_bytes = (size_t)max_batch * l->out_per * f;
            if (alloc(be, out_bytes, &l->y, l->name, err) != 0) return -1;
            if (l->need_dx && alloc(be, (size_t)max_batch * l->in_per * f, &l->dx, l->name, err) != 0) return -1;
            if (l->kind == HN_L_MAXPOOL2D && alloc(be, (size_t)max_batch * l->out_per * sizeof(int32_t), &l->argmax,
                                                   l->name, err) != 0)
                return -1;
        }
        cur = l->y;
        for (int e = 0; e < 4; e++)
            if (be->ops->event_create(be, &l->prof.ev[e], err) != 0) return -1;
    }
    hn_dptr g = m->dout;
    for (int i = m->n_layers - 1; i >= 0; i--) {
        hn_layer *l = &m->layers[i];
        l->dy = g;
        if (l->kind == HN_L_FLATTEN) l->dx = g;
        g = l->dx;
    }
    for (int i = 0; i < m->n_layers; i++)
        if (bind(m, &m->layers[i], max_batch, err) != 0) return -1;
    return 0;
}

int hn_model_set_params(hn_model *m, const float *host, hn_err *err) {
    if (!m->n_params) return 0;
    return m->be->ops->upload(m->be, m->params, host, (size_t)m->n_params * sizeof(float), err);
}

int hn_model_init(hn_model *m, uint64_t seed, hn_err *err) {
    float *host = xcalloc((size_t)(m->n_params ? m->n_params : 1), sizeof *host);
    uint64_t state = seed;
    for (int i = 0; i < m->n_layers; i++) {
        const hn_layer *l = &m->layers[i];
        if (!l->n_weight) continue;
        int fan_in = l->kind == HN_L_LINEAR ? l->in_f : l->in_ch * l->fs * l->fs;
        /* kaiming_uniform(a = sqrt(5)): gain sqrt(2 / (1 + a^2)) = sqrt(1/3), bound
         * gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias bound is the same. */
        double bound = 1.0 / sqrt((double)fan_in);
        float *w = host + l->param_off;
        for (int64_t j = 0; j < l->n_weight + l->n_bias; j++) w[j] = (float)((2.0 * hn_rand_unit(&state) - 1.0) * bound);
    }
    int rc = hn_model_set_params(m, host, err);
    free(host);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* passes */

static int rebind(hn_model *m, int batch, hn_err *err) {
    if (batch < 1 || batch > m->max_batch)
        return hn_errf(err, "batch of %d samples (the model holds 1 to %d)", batch, m->max_batch);
    for (int i = 0; i < m->n_layers; i++)
        if (m->layers[i].bound_batch != batch && bind(m, &m->layers[i], batch, err) != 0) return -1;
    return 0;
}

int hn_model_forward(hn_model *m, int batch, hn_err *err) {
    if (rebind(m, batch, err) != 0) return -1;
    hn_backend *be = m->be;
    for (int i = 0; i < m->n_layers; i++) {
        hn_layer *l = &m->layers[i];
        if (l->kind == HN_L_FLATTEN) continue;
        if (m->profile && be->ops->event_record(be, l->prof.ev[0], err) != 0) return -1;
        if (hn_tk_launch(be, &l->fwd, err) != 0) return hn_err_prefix(err, "layer %s forward", l->name);
        if (m->profile) {
            if (be->ops->event_record(be, l->prof.ev[1], err) != 0) return -1;
            l->prof.pending_fwd = 1;
        }
    }
    return 0;
}

int hn_model_backward(hn_model *m, int batch, hn_err *err) {
    if (rebind(m, batch, err) != 0) return -1;
    hn_backend *be = m->be;
    for (int i = m->n_layers - 1; i >= 0; i--) {
        hn_layer *l = &m->layers[i];
        if (l->kind == HN_L_FLATTEN || l->n_bwd == 0) continue;
        if (m->profile && be->ops->event_record(be, l->prof.ev[2], err) != 0) return -1;
        for (int k = 0; k < l->n_bwd; k++)
            if (hn_tk_launch(be, &l->bwd[k], err) != 0) return hn_err_prefix(err, "layer %s backward", l->name);
        if (m->profile) {
            if (be->ops->event_record(be, l->prof.ev[3], err) != 0) return -1;
            l->prof.pending_bwd = 1;
        }
    }
    return 0;
}

hn_dptr hn_model_output(const hn_model *m) { return m->layers[m->n_layers - 1].y; }

int hn_model_collect_profile(hn_model *m, hn_err *err) {
    hn_backend *be = m->be;
    for (int i = 0; i < m->n_layers; i++) {
        hn_prof *p = &m->layers[i].prof;
        float ms;
        if (p->pending_fwd) {
            if (be->ops->event_elapsed(be, p->ev[0], p->ev[1], &ms, err) != 0) return -1;
            p->fwd_ms += ms;
            p->fwd_n++;
            p->pending_fwd = 0;
        }
        if (p->pending_bwd) {
            if (be->ops->event_elapsed(be, p->ev[2], p->ev[3], &ms, err) != 0) return -1;
            p->bwd_ms += ms;
            p->bwd_n++;
            p->pending_bwd = 0;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* weights on disk */

#define WEIGHTS_MAGIC "HNWEIGHTS1\n"
/* the input's normalisation, a line after the magic where the model has one:
 * weights trained on (p / 255 - mean) / std are evaluated on the same inputs,
 * whatever training images (--limit) the loading run takes */
#define NORM_TAG "input.normalise"

static void tensor_header(const hn_layer *l, int bias, hn_sb *sb) {
    hn_sb_addf(sb, "%s.%s ", l->name, bias ? "bias" : "weight");
    if (bias) hn_sb_addf(sb, "1 %lld\n", (long long)l->n_bias);
    else if (l->kind == HN_L_LINEAR) hn_sb_addf(sb, "2 %d %d\n", l->out_f, l->in_f);
    else hn_sb_addf(sb, "4 %d %d %d %d\n", l->out_ch, l->in_ch, l->fs, l->fs);
}

int hn_model_save(const hn_model *m, const char *path, hn_err *err) {
    float *host = xcalloc((size_t)(m->n_params ? m->n_params : 1), sizeof *host);
    if (m->n_params && m->be->ops->download(m->be, host, m->params, (size_t)m->n_params * sizeof(float), err) != 0) {
        free(host);
        return -1;
    }
    hn_sb sb;
    hn_sb_init(&sb);
    hn_sb_adds(&sb, WEIGHTS_MAGIC);
    if (m->has_norm) hn_sb_addf(&sb, "%s %.17g %.17g\n", NORM_TAG, m->norm_mean, m->norm_std);
    for (int i = 0; i < m->n_layers; i++) {
        const hn_layer *l = &m->layers[i];
        if (!l->n_weight) continue;
        for (int b = 0; b < 2; b++) {
            tensor_header(l, b, &sb);
            const float *data = host + l->param_off + (b ? l->n_weight : 0);
            hn_sb_add(&sb, data, (size_t)(b ? l->n_bias : l->n_weight) * sizeof(float));
        }
    }
    int rc = hn_write_file(path, sb.buf, sb.len, err);
    if (rc != 0) hn_err_prefix(err, "--save %s", path);
    hn_sb_free(&sb);
    free(host);
    return rc;
}

int hn_model_load(hn_model *m, const char *path, hn_err *err) {
    char *data = NULL;
    size_t size = 0;
    if (hn_read_file(path, &data, &size, err) != 0) return hn_err_prefix(err, "--load");
    int rc = -1;
    float *host = xcalloc((size_t)(m->n_params ? m->n_params : 1), sizeof *host);
    size_t at = strlen(WEIGHTS_MAGIC);
    if (size < at || memcmp(data, WEIGHTS_MAGIC, at) != 0) {
        hn_errf(err, "--load %s: not a weights file written by harness train --save", path);
        goto done;
    }
    size_t tag = strlen(NORM_TAG);
    int has_norm = 0;
    double mean = NAN, sd = NAN;
    if (size - at > tag && memcmp(data + at, NORM_TAG " ", tag + 1) == 0) {
        const char *eol = memchr(data + at, '\n', size - at);
        char line[128];
        size_t len = eol ? (size_t)(eol - (data + at)) : 0;
        char extra;
        if (len > 0 && len < sizeof line) {
            memcpy(line, data + at, len);
            line[len] = '\0';
        }
        if (!eol || len >= sizeof line || sscanf(line + tag, "%lf %lf %c", &mean, &sd, &extra) != 2 ||
            !isfinite(mean) || !isfinite(sd) || sd <= 0) {
            hn_errf(err, "--load %s: a broken '%s' line (expected '%s <mean> <std>', std above 0)", path, NORM_TAG,
                    NORM_TAG);
            goto done;
        }
        has_norm = 1;
        at += len + 1;
    }
    for (int i = 0; i < m->n_layers; i++) {
        const hn_layer *l = &m->layers[i];
        if (!l->n_weight) continue;
        for (int b = 0; b < 2; b++) {
            hn_sb want;
            hn_sb_init(&want);
            tensor_header(l, b, &want);
            int same = size - at >= want.len && memcmp(data + at, want.buf, want.len) == 0;
            if (!same && size - at < want.len && memcmp(data + at, want.buf, size - at) == 0) {
                /* the file ends before the tensor, or in its header line */
                want.buf[want.len - 1] = '\0';
                hn_errf(err, "--load %s: truncated %s tensor '%s'", path, at == size ? "before" : "in the header of",
                        want.buf);
                hn_sb_free(&want);
                goto done;
            }
            if (!same) {
                const char *eol = memchr(data + at, '\n', size - at);
                int len = eol ? (int)(eol - (data + at)) : 0;
                if (len > 80) len = 80;
                want.buf[want.len - 1] = '\0';
                hn_errf(err, "--load %s: expected tensor '%s' here, found '%.*s' (weights of another model?)", path,
                        want.buf, len, data + at);
                hn_sb_free(&want);
                goto done;
            }
            at += want.len;
            hn_sb_free(&want);
            size_t bytes = (size_t)(b ? l->n_bias : l->n_weight) * sizeof(float);
            if (size - at < bytes) {
                hn_errf(err, "--load %s: truncated in %s.%s", path, l->name, b ? "bias" : "weight");
                goto done;
            }
            float *dst = host + l->param_off + (b ? l->n_weight : 0);
            memcpy(dst, data + at, bytes);
            at += bytes;
            for (size_t k = 0; k < bytes / sizeof(float); k++)
                if (!isfinite(dst[k])) {
                    hn_errf(err, "--load %s: %s.%s[%zu] is %s: these weights cannot be trained or evaluated (saved "
                                 "from a run that diverged?)",
                            path, l->name, b ? "bias" : "weight", k, isnan(dst[k]) ? "NaN" : "infinite");
                    goto done;
                }
        }
    }
    if (at != size) {
        hn_errf(err, "--load %s: %zu bytes after the last tensor (weights of another model?)", path, size - at);
        goto done;
    }
    rc = hn_model_set_params(m, host, err);
    if (rc == 0 && has_norm) {
        m->has_norm = 1;
        m->norm_mean = mean;
        m->norm_std = sd;
    }
done:
    free(data);
    free(host);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* --save-tensors */

static int save_npy(hn_backend *be, const char *dir, const char *stem, const char *what, hn_dptr src, int batch,
                    int nd, const int *dims, int is_int, FILE *manifest, int *first, hn_err *err) {
    int64_t shape[5];
    int n = 0;
    int64_t count = 1;
    if (batch > 0) shape[n++] = batch;
    for (int i = 0; i < nd; i++) shape[n++] = dims[i];
    for (int i = 0; i < n; i++) count *= shape[i];
    void *host = xcalloc((size_t)(count ? count : 1), 4);
    int rc = be->ops->download(be, host, src, (size_t)count * 4, err);
    char *path = xasprintf("%s/%s.%s.npy", dir, stem, what);
    if (rc == 0) rc = hn_npy_write(path, is_int ? "<i4" : "<f4", shape, n, host, 4, err);
    if (rc == 0 && manifest) {
        fprintf(manifest, "%s\"%s\": \"%s.%s.npy\"", *first ? "" : ", ", what, stem, what);
        *first = 0;
    }
    free(path);
    free(host);
    return rc;
}

int hn_model_save_tensors(const hn_model *m, int batch, const char *dir, FILE *manifest, hn_err *err) {
    hn_backend *be = m->be;
    for (int i = 0; i < m->n_layers; i++) {
        const hn_layer *l = &m->layers[i];
        char stem[48], desc[64];
        snprintf(stem, sizeof stem, "%02d_%s", i + 1, l->name);
        hn_layer_describe(l, desc, sizeof desc);
        const char *type = l->kind == HN_L_LINEAR      ? "linear"
                           : l->kind == HN_L_CONV2D    ? "conv2d"
                           : l->kind == HN_L_MAXPOOL2D ? "maxpool2d"
                           : l->kind == HN_L_RELU      ? "relu"
                           : l->kind == HN_L_SIGMOID   ? "sigmoid"
                                                       : "flatten";
        fprintf(manifest, "%s    {\"index\": %d, \"name\": \"%s\", \"type\": \"%s\", \"describe\": \"%s\"", i ? ",\n" : "",
                i + 1, l->name, type, desc);
        if (l->kind == HN_L_LINEAR) fprintf(manifest, ", \"in_features\": %d, \"out_features\": %d", l->in_f, l->out_f);
        if (l->kind == HN_L_CONV2D)
            fprintf(manifest, ", \"in_channels\": %d, \"out_channels\": %d, \"kernel_size\": %d, \"padding\": %d, \"stride\": 1",
                    l->in_ch, l->out_ch, l->fs, l->padding);
        if (l->kind == HN_L_MAXPOOL2D) fprintf(manifest, ", \"kernel_size\": %d, \"stride\": %d", l->k, l->k);
        fprintf(manifest, ", \"files\": {");
        int first = 1;
        if (l->kind != HN_L_FLATTEN) {
            int wd[4] = {l->kind == HN_L_LINEAR ? l->out_f : l->out_ch, l->kind == HN_L_LINEAR ? l->in_f : l->in_ch, l->fs,
                         l->fs};
            int bd[1] = {(int)l->n_bias};
            int wnd = l->kind == HN_L_LINEAR ? 2 : 4;
            if (save_npy(be, dir, stem, "x", l->x, batch, l->in_nd, l->in_dims, 0, manifest, &first, err) != 0 ||
                (l->n_weight && save_npy(be, dir, stem, "weight", l->weight, 0, wnd, wd, 0, manifest, &first, err) != 0) ||
                (l->n_weight && save_npy(be, dir, stem, "bias", l->bias, 0, 1, bd, 0, manifest, &first, err) != 0) ||
                save_npy(be, dir, stem, "y", l->y, batch, l->out_nd, l->out_dims, 0, manifest, &first, err) != 0 ||
                (l->kind == HN_L_MAXPOOL2D &&
                 save_npy(be, dir, stem, "argmax", l->argmax, batch, l->out_nd, l->out_dims, 1, manifest, &first, err) != 0) ||
                save_npy(be, dir, stem, "dy", l->dy, batch, l->out_nd, l->out_dims, 0, manifest, &first, err) != 0 ||
                (l->dx && save_npy(be, dir, stem, "dx", l->dx, batch, l->in_nd, l->in_dims, 0, manifest, &first, err) != 0) ||
                (l->n_weight &&
                 save_npy(be, dir, stem, "dweight", l->dweight, 0, wnd, wd, 0, manifest, &first, err) != 0) ||
                (l->n_weight && save_npy(be, dir, stem, "dbias", l->dbias, 0, 1, bd, 0, manifest, &first, err) != 0))
                return hn_err_prefix(err, "--save-tensors %s", dir);
        }
        fprintf(manifest, "}}");
    }
    return 0;
}
