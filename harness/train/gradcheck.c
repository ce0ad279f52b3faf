/*
 * gradcheck.c: finite-difference checks of every layer's backward, and the
 * other kernels of training (optimizers, batch gather, running statistics)
 * against the host; see gradcheck.h.
 */
#include "train/gradcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"
#include "train/loss.h"
#include "train/model.h"
#include "train/optim.h"

#define GC_H (1.0 / 128)      /* the step: exact in float for our inputs */
#define GC_ATOL 1e-4
#define GC_RTOL 1e-3

/* ---------------------------------------------------------------------- */
/* the fp64 forward of a layer through the catalogue's references */

typedef struct {
    const char *op;             /* catalogue operator */
    const char *pnames[12];     /* its parameters, by name (NULL-terminated) */
    double pvals[12];
    const char *in_buf, *w_buf, *b_buf, *out_buf; /* which buffers hold x, W, b, y */
} ref_spec;

/* y (double, every element) = the operator's reference with x, w, b. */
static int ref_forward(const ref_spec *rs, const float *x, const float *w, const float *b, double *y, int64_t ny,
                       hn_err *err) {
    const hn_op *op = hn_op_find(rs->op);
    if (!op) return hn_errf(err, "gradcheck: no operator '%s'", rs->op);
    double p[32];
    for (int i = 0; i < op->n_params; i++) {
        int k = 0;
        while (rs->pnames[k] && strcmp(rs->pnames[k], op->params[i].name) != 0) k++;
        if (!rs->pnames[k]) return hn_errf(err, "gradcheck: %s: parameter %s not given", rs->op, op->params[i].name);
        p[i] = rs->pvals[k];
    }
    int64_t counts[16];
    if (op->shape(p, counts, err) != 0) return -1;
    void *bufs[16] = {0};
    void *own[16] = {0};
    for (int i = 0; i < op->n_buffers; i++) {
        const char *name = op->buffers[i].name;
        if (rs->in_buf && strcmp(name, rs->in_buf) == 0) bufs[i] = (void *)x;
        else if (rs->w_buf && strcmp(name, rs->w_buf) == 0) bufs[i] = (void *)w;
        else if (rs->b_buf && strcmp(name, rs->b_buf) == 0) bufs[i] = (void *)b;
        else bufs[i] = own[i] = xcalloc((size_t)(counts[i] ? counts[i] : 1), hn_dtype_size(hn_op_dtype(op, p, i)));
    }
    hn_ref refs[16];
    memset(refs, 0, sizeof refs);
    int rc = op->reference(p, bufs, refs, 1e30, 1, 1, err);
    int out = hn_op_buffer_index(op, rs->out_buf);
    if (rc == 0 && (out < 0 || refs[out].index || refs[out].n != ny))
        rc = hn_errf(err, "gradcheck: %s: the reference of %s is not the full %lld values", rs->op, rs->out_buf,
                     (long long)ny);
    if (rc == 0) memcpy(y, refs[out].values, (size_t)ny * sizeof *y);
    for (int i = 0; i < op->n_buffers; i++) {
        hn_ref_free(&refs[i]);
        free(own[i]);
    }
    return rc;
}

/* ---------------------------------------------------------------------- */
/* inputs */

static double q_uniform(uint64_t *s) { return (double)((int64_t)hn_rand_below(s, 8192) - 4096) / 4096.0; } /* [-1, 1) in 2^-12 */

static void fill_q(float *v, int64_t n, double scale, uint64_t *s) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)(q_uniform(s) * scale);
}

/* distinct values 2^-5 apart, in random order (max pooling: no ties, no step crosses one) */
static void fill_distinct(float *v, int64_t n, uint64_t *s) {
    for (int64_t i = 0; i < n; i++) v[i] = (float)((double)(i - n / 2) / 32.0);
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)hn_rand_below(s, (uint64_t)i + 1);
        float t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* at least 2^-5 away from zero (ReLU: no step crosses the kink) */
static void fill_away(float *v, int64_t n, uint64_t *s) {
    for (int64_t i = 0; i < n; i++) {
        double m = (double)(64 + hn_rand_below(s, 4096 - 64)) / 2048.0; /* [2^-5, 2) */
        v[i] = (float)(hn_rand_below(s, 2) ? m : -m);
    }
}

/* ---------------------------------------------------------------------- */
/* comparing */

typedef struct {
    FILE *out;
    int quiet; /* print the failing tensors only (and the summary) */
    int failed, checked;
} report;

/* "backward 0.5, finite difference 0.25" from "backward|finite difference" */
static const char *names_of(const char *names, double a, double b) {
    static char buf[160];
    const char *bar = strchr(names, '|');
    snprintf(buf, sizeof buf, "%.*s %.6g, %s %.6g", (int)(bar - names), names, a, bar + 1, b);
    return buf;
}

static void compare_to(report *r, const char *layer, const char *tensor, const float *analytic, const double *numeric,
                       int64_t n, const char *names) {
    double max_abs = 0, worst_ratio = 0;
    int64_t bad = 0, worst = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)analytic[i] - numeric[i]);
        double tol = GC_ATOL + GC_RTOL * fabs(numeric[i]);
        if (!(d <= tol)) bad++;
        if (d > max_abs || isnan(d)) max_abs = d;
        if (d / tol > worst_ratio || isnan(d)) worst_ratio = d / tol, worst = i;
    }
    r->checked++;
    if (bad) r->failed++;
    if (r->quiet && !bad) return;
    fprintf(r->out, "  %-28s %-8s %5lld values  max |err| %.2e  %s", layer, tensor, (long long)n, max_abs,
            bad ? "FAIL" : "ok");
    if (bad)
        fprintf(r->out, " (%lld over tolerance; worst [%lld]: %s)", (long long)bad, (long long)worst,
                names_of(names, analytic[worst], numeric[worst]));
    fprintf(r->out, "\n");
}

/* A backward's gradient against the finite differences. */
static void compare(report *r, const char *layer, const char *tensor, const float *analytic, const double *numeric,
                    int64_t n) {
    compare_to(r, layer, tensor, analytic, numeric, n, "backward|finite difference");
}

/* ---------------------------------------------------------------------- */
/* one layer */

typedef struct {
    const char *title;
    hn_layer_kind kind;
    int a, b, c, d;         /* linear (in_f, out_f); conv (in_ch, out_ch, fs, padding); pool (k) */
    int batch;
    int in_nd;
    int in_dims[3];
    int fill;               /* 0 uniform, 1 distinct, 2 away from zero */
} layer_case;

static void ref_of(const layer_case *lc, const hn_layer *l, int batch, ref_spec *rs) {
    memset(rs, 0, sizeof *rs);
    int k = 0;
#define P(n, v) (rs->pnames[k] = (n), rs->pvals[k++] = (v))
    switch (lc->kind) {
    case HN_L_LINEAR:
        rs->op = "linear";
        P("batch", batch), P("in_f", l->in_f), P("out_f", l->out_f);
        rs->in_buf = "x", rs->w_buf = "weight", rs->b_buf = "bias", rs->out_buf = "y";
        break;
    case HN_L_CONV2D:
        rs->op = "conv2d";
        P("n", batch), P("in_ch", l->in_ch), P("out_ch", l->out_ch), P("filter_size", l->fs), P("h", l->in_dims[1]),
            P("w", l->in_dims[2]), P("padding", l->padding), P("pad", 0), P("use_bias", 1), P("layout", 0);
        rs->in_buf = "in", rs->w_buf = "filter", rs->b_buf = "bias", rs->out_buf = "out";
        break;
    case HN_L_MAXPOOL2D:
        rs->op = "pool2d";
        P("n", batch), P("channels", l->in_dims[0]), P("h", l->in_dims[1]), P("w", l->in_dims[2]), P("k", l->k),
            P("mode", 0), P("layout", 0);
        rs->in_buf = "in", rs->out_buf = "out";
        break;
    case HN_L_RELU:
    case HN_L_SIGMOID:
        rs->op = lc->kind == HN_L_RELU ? "relu" : "sigmoid";
        P("n", (double)batch * l->in_per);
        rs->in_buf = "x", rs->out_buf = "y";
        break;
    default: break;
    }
#undef P
}

/* L = sum(f(x, w, b) * dy) in double. */
static int loss_of(const ref_spec *rs, const float *x, const float *w, const float *b, const float *dy, double *y,
                   int64_t ny, double *L, hn_err *err) {
    if (ref_forward(rs, x, w, b, y, ny, err) != 0) return -1;
    double s = 0;
    for (int64_t i = 0; i < ny; i++) s += y[i] * dy[i];
    *L = s;
    return 0;
}

/* Central differences of L with respect to every element of v (x, w or b). */
static int numeric_grad(const ref_spec *rs, float *x, float *w, float *b, const float *dy, float *v, int64_t n,
                        double *y, int64_t ny, double *g, hn_err *err) {
    for (int64_t i = 0; i < n; i++) {
        float keep = v[i];
        double lp, lm;
        v[i] = (float)(keep + GC_H);
        if (loss_of(rs, x, w, b, dy, y, ny, &lp, err) != 0) return -1;
        v[i] = (float)(keep - GC_H);
        if (loss_of(rs, x, w, b, dy, y, ny, &lm, err) != 0) return -1;
        v[i] = keep;
        g[i] = (lp - lm) / (2 * GC_H);
    }
    return 0;
}

/* n floats of NaN into dst */
static int poison(hn_backend *be, hn_dptr dst, int64_t n, hn_err *err) {
    float *nan = xmalloc((size_t)(n ? n : 1) * sizeof *nan);
    for (int64_t i = 0; i < n; i++) nan[i] = NAN;
    int rc = be->ops->upload(be, dst, nan, (size_t)n * sizeof *nan, err);
    free(nan);
    return rc;
}

static int check_layer(hn_backend *be, hn_tk *tk, const layer_case *lc, uint64_t seed, report *r, hn_err *err) {
    hn_model *m = hn_model_create(be, tk, lc->in_nd, lc->in_dims);
    m->input_grad = 1;
    switch (lc->kind) {
    case HN_L_LINEAR: hn_model_add_linear(m, lc->a, lc->b); break;
    case HN_L_CONV2D: hn_model_add_conv2d(m, lc->a, lc->b, lc->c, lc->d); break;
    case HN_L_MAXPOOL2D: hn_model_add_maxpool2d(m, lc->a); break;
    case HN_L_RELU: hn_model_add_relu(m); break;
    case HN_L_SIGMOID: hn_model_add_sigmoid(m); break;
    default: break;
    }
    int rc = -1;
    int B = lc->batch;
    float *x = NULL, *params = NULL, *dy = NULL, *dx = NULL, *grads = NULL;
    double *y = NULL, *g = NULL;
    if (hn_model_finish(m, B, err) != 0) goto done;
    const hn_layer *l = &m->layers[0];
    int64_t nx = B * l->in_per, ny = B * l->out_per, np = m->n_params;
    uint64_t s = seed;
    x = xcalloc((size_t)nx, sizeof *x);
    dy = xcalloc((size_t)ny, sizeof *dy);
    dx = xcalloc((size_t)nx, sizeof *dx);
    params = xcalloc((size_t)(np ? np : 1), sizeof *params);
    grads = xcalloc((size_t)(np ? np : 1), sizeof *grads);
    y = xcalloc((size_t)ny, sizeof *y);
    g = xcalloc((size_t)(nx > np ? nx : np), sizeof *g);
    if (lc->fill == 1) fill_distinct(x, nx, &s);
    else if (lc->fill == 2) fill_away(x, nx, &s);
    else fill_q(x, nx, 2.0, &s);
    fill_q(params, np, 1.0, &s);
    fill_q(dy, ny, 1.0, &s);
    /* every output starts as NaN: a kernel that leaves an element unwritten fails
     * the check (training would read the previous step's value there) */
    if (hn_model_set_params(m, params, err) != 0 || be->ops->upload(be, m->x, x, (size_t)nx * 4, err) != 0 ||
        be->ops->upload(be, m->dout, dy, (size_t)ny * 4, err) != 0 || poison(be, l->y, ny, err) != 0 ||
        poison(be, l->dx, nx, err) != 0 || (np && poison(be, m->grads, np, err) != 0) || hn_model_forward(m, B, err) != 0 ||
        hn_model_backward(m, B, err) != 0 || be->ops->download(be, dx, l->dx, (size_t)nx * 4, err) != 0 ||
        (np && be->ops->download(be, grads, m->grads, (size_t)np * 4, err) != 0))
        goto done;
    /* the forward too: the device's y against the reference */
    {
        ref_spec rs;
        ref_of(lc, l, B, &rs);
        float *w = np ? params : NULL, *b = np ? params + l->n_weight : NULL;
        float *ydev = xcalloc((size_t)ny, sizeof *ydev);
        if (be->ops->download(be, ydev, l->y, (size_t)ny * 4, err) != 0 || ref_forward(&rs, x, w, b, y, ny, err) != 0) {
            free(ydev);
            goto done;
        }
        compare_to(r, lc->title, "y", ydev, y, ny, "kernel|reference"); /* the forward: no finite difference */
        free(ydev);
        if (numeric_grad(&rs, x, w, b, dy, x, nx, y, ny, g, err) != 0) goto done;
        compare(r, lc->title, "dx", dx, g, nx);
        if (np) {
            if (numeric_grad(&rs, x, w, b, dy, w, l->n_weight, y, ny, g, err) != 0) goto done;
            compare(r, lc->title, "dweight", grads, g, l->n_weight);
            if (numeric_grad(&rs, x, w, b, dy, b, l->n_bias, y, ny, g, err) != 0) goto done;
            compare(r, lc->title, "dbias", grads + l->n_weight, g, l->n_bias);
        }
    }
    rc = 0;
done:
    if (rc != 0) hn_err_prefix(err, "gradcheck %s", lc->title);
    free(x);
    free(dy);
    free(dx);
    free(params);
    free(grads);
    free(y);
    free(g);
    hn_model_destroy(m);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* losses: the model is one Flatten, so its output is its input */

static double loss_ref_mse(const float *pred, const float *target, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)pred[i] - target[i];
        s += d * d;
    }
    return s / (double)n;
}

static int check_loss(hn_backend *be, hn_tk *tk, hn_loss_kind kind, int batch, int classes, uint64_t seed, report *r,
                      hn_err *err) {
    int dims[1] = {classes};
    hn_model *m = hn_model_create(be, tk, 1, dims);
    hn_model_add_flatten(m);
    hn_loss loss = {0};
    int rc = -1;
    int64_t n = (int64_t)batch * classes;
    float *logits = xcalloc((size_t)n, sizeof *logits), *target = xcalloc((size_t)n, sizeof *target);
    float *dlogits = xcalloc((size_t)n, sizeof *dlogits);
    int32_t *labels = xcalloc((size_t)batch, sizeof *labels);
    double *g = xcalloc((size_t)n, sizeof *g);
    uint64_t s = seed;
    const char *title = kind == HN_LOSS_XENT ? "softmax_cross_entropy" : "mse";
    if (hn_model_finish(m, batch, err) != 0 || hn_loss_init(&loss, m, kind, err) != 0) goto done;
    fill_q(logits, n, 2.0, &s);
    if (kind == HN_LOSS_XENT)
        for (int b = 0; b < batch; b++) labels[b] = (int32_t)hn_rand_below(&s, (uint64_t)classes);
    else
        for (int64_t i = 0; i < n; i++) target[i] = (float)hn_rand_below(&s, 2);
    if (be->ops->upload(be, m->x, logits, (size_t)n * 4, err) != 0 ||
        be->ops->upload(be, loss.target, kind == HN_LOSS_XENT ? (void *)labels : (void *)target,
                        kind == HN_LOSS_XENT ? (size_t)batch * 4 : (size_t)n * 4, err) != 0 ||
        poison(be, m->dout, n, err) != 0 || poison(be, loss.loss, 1, err) != 0 || hn_model_forward(m, batch, err) != 0 || hn_loss_forward(&loss, batch, err) != 0 ||
        be->ops->download(be, dlogits, m->dout, (size_t)n * 4, err) != 0)
        goto done;
    float lval;
    if (hn_loss_value(&loss, &lval, err) != 0) goto done;
    ref_spec rs = {.op = "softmax_cross_entropy", .pnames = {"batch", "classes"}, .pvals = {batch, classes},
                   .in_buf = "logits", .w_buf = "labels", .out_buf = "loss"};
    double lref;
    if (kind == HN_LOSS_XENT) {
        if (ref_forward(&rs, logits, (float *)labels, NULL, &lref, 1, err) != 0) goto done;
    } else {
        lref = loss_ref_mse(logits, target, n);
    }
    compare_to(r, title, "loss", &lval, &lref, 1, "kernel|reference");
    for (int64_t i = 0; i < n; i++) {
        float keep = logits[i];
        double lp, lm;
        logits[i] = (float)(keep + GC_H);
        if (kind == HN_LOSS_XENT) {
            if (ref_forward(&rs, logits, (float *)labels, NULL, &lp, 1, err) != 0) goto done;
        } else {
            lp = loss_ref_mse(logits, target, n);
        }
        logits[i] = (float)(keep - GC_H);
        if (kind == HN_LOSS_XENT) {
            if (ref_forward(&rs, logits, (float *)labels, NULL, &lm, 1, err) != 0) goto done;
        } else {
            lm = loss_ref_mse(logits, target, n);
        }
        logits[i] = keep;
        g[i] = (lp - lm) / (2 * GC_H);
    }
    compare(r, title, kind == HN_LOSS_XENT ? "dlogits" : "dpred", dlogits, g, n);
    /* the running statistics kernel (metrics.classify / metrics.binary) after it:
     * the batch's summed loss, right answers (the first largest logit; a sigmoid
     * output on the right side of 0.5, per output) and count */
    {
        double st[3], want[3] = {lref * batch, 0, batch};
        float got[3];
        for (int b = 0; b < batch; b++) {
            const float *row = logits + (int64_t)b * classes;
            if (kind == HN_LOSS_XENT) {
                int best = 0;
                for (int c = 1; c < classes; c++)
                    if (row[c] > row[best]) best = c;
                want[1] += best == labels[b];
            } else {
                for (int c = 0; c < classes; c++)
                    want[1] += (double)((row[c] > 0.5f) == (target[(int64_t)b * classes + c] > 0.5f)) / classes;
            }
        }
        if (hn_loss_read(&loss, st, err) != 0) goto done;
        for (int i = 0; i < 3; i++) got[i] = (float)st[i];
        compare_to(r, title, "stats", got, want, 3, "kernel|reference");
    }
    rc = 0;
done:
    if (rc != 0) hn_err_prefix(err, "gradcheck %s", title);
    hn_loss_free(&loss);
    hn_model_destroy(m);
    free(logits);
    free(target);
    free(dlogits);
    free(labels);
    free(g);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* optimizers: a few updates of the kernel against PyTorch's rule in double */

#define OPT_STEPS 3

/* OPT_STEPS updates of p (n) with the gradients g (OPT_STEPS x n), as
 * torch.optim.SGD (momentum, dampening 0) or torch.optim.Adam do them. */
static void optim_ref(const hn_optim *o, const float *p0, const float *g, int64_t n, double *p) {
    for (int64_t i = 0; i < n; i++) {
        double x = p0[i], s1 = 0, s2 = 0;
        for (int t = 1; t <= OPT_STEPS; t++) {
            double gi = g[(int64_t)(t - 1) * n + i] + o->weight_decay * x;
            if (o->kind == HN_OPT_SGD) {
                if (o->momentum != 0) gi = s1 = t == 1 ? gi : o->momentum * s1 + gi;
                x -= o->lr * gi;
            } else {
                s1 = o->beta1 * s1 + (1 - o->beta1) * gi;
                s2 = o->beta2 * s2 + (1 - o->beta2) * gi * gi;
                double bc1 = 1 - pow(o->beta1, t), bc2 = 1 - pow(o->beta2, t);
                x -= o->lr / bc1 * s1 / (sqrt(s2) / sqrt(bc2) + o->eps);
            }
        }
        p[i] = x;
    }
}

/* The update kernel of kind (a slot the config has) on a model of n_params
 * parameters (several blocks of the default launch), OPT_STEPS steps with new
 * gradients each, against optim_ref. lr 0.1: every update is far above the
 * tolerance, so a wrong rule (a missing bias correction, momentum or sign) fails. */
static int check_optim(hn_backend *be, hn_tk *tk, hn_optim_kind kind, double momentum, uint64_t seed, report *r,
                       hn_err *err) {
    char title[48];
    if (kind == HN_OPT_ADAM) snprintf(title, sizeof title, "Adam, %d steps", OPT_STEPS);
    else if (momentum != 0) snprintf(title, sizeof title, "SGD (momentum %g), %d steps", momentum, OPT_STEPS);
    else snprintf(title, sizeof title, "SGD, %d steps", OPT_STEPS);
    int dims[1] = {40};
    hn_model *m = hn_model_create(be, tk, 1, dims);
    hn_model_add_linear(m, 40, 30); /* 1230 parameters */
    hn_optim o = {0};
    int rc = -1;
    float *p0 = NULL, *g = NULL, *pdev = NULL;
    double *pref = NULL;
    if (hn_model_finish(m, 1, err) != 0 || hn_optim_init(&o, m, kind, 0.1, err) != 0) goto done;
    if (kind == HN_OPT_SGD) hn_optim_set_momentum(&o, momentum);
    int64_t n = m->n_params;
    uint64_t s = seed;
    p0 = xcalloc((size_t)n, sizeof *p0);
    g = xcalloc((size_t)n * OPT_STEPS, sizeof *g);
    pdev = xcalloc((size_t)n, sizeof *pdev);
    pref = xcalloc((size_t)n, sizeof *pref);
    fill_q(p0, n, 1.0, &s);
    fill_q(g, n * OPT_STEPS, 1.0, &s);
    if (hn_model_set_params(m, p0, err) != 0) goto done;
    for (int t = 0; t < OPT_STEPS; t++)
        if (be->ops->upload(be, m->grads, g + (int64_t)t * n, (size_t)n * sizeof *g, err) != 0 ||
            hn_optim_step(&o, err) != 0)
            goto done;
    if (be->ops->download(be, pdev, m->params, (size_t)n * sizeof *pdev, err) != 0) goto done;
    optim_ref(&o, p0, g, n, pref);
    compare_to(r, title, "param", pdev, pref, n, "kernel|reference");
    rc = 0;
done:
    if (rc != 0) hn_err_prefix(err, "gradcheck %s", title);
    hn_optim_free(&o);
    hn_model_destroy(m);
    free(p0);
    free(g);
    free(pdev);
    free(pref);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* the batch gather: x[b][j] = (images[order[offset + b]][j] / 255 - mean) * inv_std,
 * labels[b] = labels_all[order[offset + b]] */

static int check_gather(hn_backend *be, hn_tk *tk, uint64_t seed, report *r, hn_err *err) {
    enum { N = 11, PIXELS = 35, BATCH = 5, OFFSET = 3 }; /* 5x7 images; a batch from the middle of the order */
    const char *title = "data.gather";
    const double mean = 0.3125, inv_std = 2.5;
    unsigned char images[N * PIXELS], labels_all[N];
    int32_t order[N], labels[BATCH];
    float x[BATCH * PIXELS], got_labels[BATCH];
    double want[BATCH * PIXELS], want_labels[BATCH];
    uint64_t s = seed;
    for (int i = 0; i < N * PIXELS; i++) images[i] = (unsigned char)hn_rand_below(&s, 256);
    for (int i = 0; i < N; i++) labels_all[i] = (unsigned char)hn_rand_below(&s, 10), order[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = (int)hn_rand_below(&s, (uint64_t)i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int b = 0; b < BATCH; b++) {
        int src = order[OFFSET + b];
        for (int j = 0; j < PIXELS; j++) want[b * PIXELS + j] = (images[src * PIXELS + j] / 255.0 - mean) * inv_std;
        want_labels[b] = labels_all[src];
    }
    hn_dptr d_images = 0, d_labels_all = 0, d_order = 0, d_x = 0, d_labels = 0;
    int rc = -1;
    if (be->ops->alloc(be, sizeof images, &d_images, err) != 0 || be->ops->alloc(be, sizeof labels_all, &d_labels_all, err) != 0 ||
        be->ops->alloc(be, sizeof order, &d_order, err) != 0 || be->ops->alloc(be, sizeof x, &d_x, err) != 0 ||
        be->ops->alloc(be, sizeof labels, &d_labels, err) != 0 ||
        be->ops->upload(be, d_images, images, sizeof images, err) != 0 ||
        be->ops->upload(be, d_labels_all, labels_all, sizeof labels_all, err) != 0 ||
        be->ops->upload(be, d_order, order, sizeof order, err) != 0 || poison(be, d_x, BATCH * PIXELS, err) != 0 ||
        be->ops->fill(be, d_labels, 0xff, sizeof labels, err) != 0) /* -1 */
        goto done;
    hn_tk_val v[] = {HN_TK_BUF("images", d_images), HN_TK_BUF("labels_all", d_labels_all), HN_TK_BUF("order", d_order),
                     HN_TK_BUF("x", d_x),           HN_TK_BUF("labels", d_labels),         HN_TK_INT("batch", BATCH),
                     HN_TK_INT("offset", OFFSET),   HN_TK_INT("pixels", PIXELS),           HN_TK_FLT("mean", mean),
                     HN_TK_FLT("inv_std", inv_std)};
    hn_tk_call call;
    if (hn_tk_bind(tk, "data.gather", v, (int)HN_ARRAY_LEN(v), &call, err) != 0 || hn_tk_launch(be, &call, err) != 0 ||
        be->ops->download(be, x, d_x, sizeof x, err) != 0 || be->ops->download(be, labels, d_labels, sizeof labels, err) != 0)
        goto done;
    for (int b = 0; b < BATCH; b++) got_labels[b] = (float)labels[b];
    compare_to(r, title, "x", x, want, BATCH * PIXELS, "kernel|reference");
    compare_to(r, title, "labels", got_labels, want_labels, BATCH, "kernel|reference");
    rc = 0;
done:
    if (rc != 0) hn_err_prefix(err, "gradcheck %s", title);
    hn_dptr bufs[] = {d_images, d_labels_all, d_order, d_x, d_labels};
    for (size_t i = 0; i < HN_ARRAY_LEN(bufs); i++)
        if (bufs[i]) be->ops->free(be, bufs[i]);
    return rc;
}

int hn_gradcheck_prepare(hn_tk *tk, hn_err *err) {
    static const char *const SLOTS[] = {"linear.forward",         "linear.backward_data",   "linear.backward_weight",
                                        "linear.backward_bias",   "conv2d.forward",         "conv2d.backward_data",
                                        "conv2d.backward_filter", "conv2d.backward_bias",   "maxpool2d.forward",
                                        "maxpool2d.backward",     "relu.forward",           "relu.backward",
                                        "sigmoid.forward",        "sigmoid.backward",       "softmax_cross_entropy.forward",
                                        "mse.forward",            "metrics.classify",       "metrics.binary"};
    for (size_t i = 0; i < HN_ARRAY_LEN(SLOTS); i++)
        if (hn_tk_prepare(tk, SLOTS[i], err) != 0) return -1;
    static const char *const OPTIONAL[] = {"sgd.update", "adam.update", "data.gather"}; /* those the config has */
    for (size_t i = 0; i < HN_ARRAY_LEN(OPTIONAL); i++)
        if (hn_tk_has(tk, OPTIONAL[i]) && hn_tk_prepare(tk, OPTIONAL[i], err) != 0) return -1;
    return 0;
}

int hn_gradcheck_run(hn_backend *be, hn_tk *tk, FILE *out, int quiet, int64_t seed, hn_err *err) {
    static const layer_case CASES[] = {
        {"Linear(5->4), batch 3", HN_L_LINEAR, 5, 4, 0, 0, 3, 1, {5, 0, 0}, 0},
        {"Linear(17->3), batch 2", HN_L_LINEAR, 17, 3, 0, 0, 2, 1, {17, 0, 0}, 0},
        {"Conv2D(2->3, k3, p1) 5x6", HN_L_CONV2D, 2, 3, 3, 1, 2, 3, {2, 5, 6}, 0},
        {"Conv2D(3->2, k3, p0) 6x5", HN_L_CONV2D, 3, 2, 3, 0, 2, 3, {3, 6, 5}, 0},
        {"Conv2D(1->2, k5, p2) 7x7", HN_L_CONV2D, 1, 2, 5, 2, 1, 3, {1, 7, 7}, 0},
        {"MaxPool2D(2) 6x7", HN_L_MAXPOOL2D, 2, 0, 0, 0, 2, 3, {3, 6, 7}, 1},
        {"MaxPool2D(3) 7x6", HN_L_MAXPOOL2D, 3, 0, 0, 0, 1, 3, {2, 7, 6}, 1},
        {"ReLU (3x10)", HN_L_RELU, 0, 0, 0, 0, 3, 1, {10, 0, 0}, 2},
        {"Sigmoid (3x10)", HN_L_SIGMOID, 0, 0, 0, 0, 3, 1, {10, 0, 0}, 0},
    };
    report r = {out, quiet, 0, 0};
    /* the inputs of each case from its own seed; --seed S moves them all */
    uint64_t base = seed > 0 ? (uint64_t)seed * 1000003u : 0;
    char from[48] = "";
    if (seed >= 0) snprintf(from, sizeof from, "; inputs from seed %lld", (long long)seed);
    fprintf(out, "Gradient check: backward (%s) against central finite differences in double (h = 2^-7; "
                 "ok when |err| <= %g + %g |fd|%s)\n",
            be->ops->name, GC_ATOL, GC_RTOL, from);
    for (size_t i = 0; i < HN_ARRAY_LEN(CASES); i++)
        if (check_layer(be, tk, &CASES[i], base + 1000 + i, &r, err) != 0) return -1;
    if (check_loss(be, tk, HN_LOSS_XENT, 3, 5, base + 77, &r, err) != 0) return -1;
    if (check_loss(be, tk, HN_LOSS_MSE, 3, 2, base + 78, &r, err) != 0) return -1;
    /* the optimizers the config has (training needs only the one it runs) */
    if (hn_tk_has(tk, "sgd.update") && (check_optim(be, tk, HN_OPT_SGD, 0.9, base + 91, &r, err) != 0 ||
                                        check_optim(be, tk, HN_OPT_SGD, 0, base + 92, &r, err) != 0))
        return -1;
    if (hn_tk_has(tk, "adam.update") && check_optim(be, tk, HN_OPT_ADAM, 0, base + 93, &r, err) != 0) return -1;
    if (hn_tk_has(tk, "data.gather") && check_gather(be, tk, base + 94, &r, err) != 0) return -1;
    fprintf(out, "%d of %d tensors ok%s\n", r.checked - r.failed, r.checked, r.failed ? "" : ": every gradient matches");
    return r.failed;
}
