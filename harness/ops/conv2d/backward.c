/*
 * conv2d/backward.c: see backward.h.
 */
#include "backward.h"

#include <stdio.h>
#include <stdlib.h>

int conv2d_bwd_decode(const char *op, double n, double in_ch, double out_ch, double fs, double h, double w,
                      double padding, conv2d_bwd_dims *d, hn_err *err) {
    const struct {
        const char *name;
        double v;
    } sizes[] = {{"n", n}, {"in_ch", in_ch}, {"out_ch", out_ch}, {"filter_size", fs}, {"h", h}, {"w", w}};
    for (size_t i = 0; i < HN_ARRAY_LEN(sizes); i++) {
        if (i == 1 && in_ch < 0) continue;
        if (!(sizes[i].v >= 1 && sizes[i].v <= 1 << 30 && sizes[i].v == (int)sizes[i].v))
            return hn_errf(err, "%s: %s = %g must be a whole number between 1 and 2^30", op, sizes[i].name,
                           sizes[i].v);
    }
    if (!(padding >= -1 && padding <= 1 << 20 && padding == (int)padding))
        return hn_errf(err, "%s: padding = %g must be -1 (\"same\") or a whole number between 0 and 2^20", op,
                       padding);
    d->n = (int)n;
    d->in_ch = in_ch < 0 ? 0 : (int)in_ch;
    d->out_ch = (int)out_ch;
    d->padding = (int)padding;
    conv2d_ref_shape(&d->s, (int)h, (int)w, (int)fs, (int)padding);
    if (d->s.oh < 1 || d->s.ow < 1)
        return hn_errf(err, "%s: a %dx%d filter with padding %d does not fit a %dx%d image (the output would be %dx%d)",
                       op, d->s.fs, d->s.fs, d->padding, d->s.h, d->s.w, d->s.oh, d->s.ow);
    return 0;
}

int conv2d_bwd_counts(const char *op, const hn_op_buffer *buffers, const double *n, int n_buffers, int64_t *counts,
                      hn_err *err) {
    for (int i = 0; i < n_buffers; i++) {
        if (n[i] > (double)(((int64_t)1 << 31) - 1))
            return hn_errf(err, "%s: buffer '%s' would have %.0f elements (more than 2^31-1; the kernels index with int)",
                           op, buffers[i].name, n[i]);
        counts[i] = (int64_t)n[i];
    }
    return 0;
}

void conv2d_bwd_label(const conv2d_bwd_dims *d, char *buf, size_t size) {
    char ch[24] = "", extra[64] = "";
    size_t k = 0;
    if (d->in_ch) snprintf(ch, sizeof ch, "x%d", d->in_ch);
    if (d->n != 1) k += (size_t)snprintf(extra + k, sizeof extra - k, ", n:%d", d->n);
    if (d->padding >= 0) snprintf(extra + k, sizeof extra - k, ", p:%d", d->padding);
    snprintf(buf, size, "%dx%d%s -> %d, f:%dx%d%s", d->s.h, d->s.w, ch, d->out_ch, d->s.fs, d->s.fs, extra);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t *conv2d_bwd_sample_pixels(const conv2d_shape *s, int64_t n_random, uint64_t seed, int64_t *n_sel,
                                  int64_t *n_border) {
    const int64_t npix = (int64_t)s->oh * s->ow, nb = conv2d_border_pixels_general(NULL, s);
    if (n_random < 1024) n_random = 1024;
    if (n_random > npix - nb) n_random = npix - nb;
    int64_t *pix = xmalloc(sizeof *pix * (size_t)(nb + n_random + 1));
    conv2d_border_pixels_general(pix, s);
    unsigned char *taken = xcalloc((size_t)npix, 1);
    for (int64_t i = 0; i < nb; i++) taken[pix[i]] = 1;
    for (int64_t i = nb; i < nb + n_random;) {
        int64_t q = (int64_t)hn_rand_below(&seed, (uint64_t)npix);
        if (taken[q]) continue;
        taken[q] = 1;
        pix[i++] = q;
    }
    free(taken);
    qsort(pix, (size_t)(nb + n_random), sizeof *pix, cmp_i64);
    *n_sel = nb + n_random;
    *n_border = nb;
    return pix;
}
