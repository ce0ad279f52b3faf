/*
 * test_conv2d_op.c: the conv2d operator (harness/ops/conv2d/): FLOP and byte
 * counts and labels against hand-computed values, shape checks (batch, padding,
 * filters that do not fit), the seeded input generator, the reference against a
 * direct loop on odd sizes with a batch, padding, a bias and every layout, and the
 * sampled reference (border + random pixels) against the full one.
 */
#include <stdint.h>

#include "hn_test.h"
#include "ops/op.h"

static const hn_op *op;

/* Parameters by name; the rest at their defaults (n 1, same padding, pad 0, no
 * bias, NCHW). */
static void params(double *p, int in_ch, int out_ch, int fs, int h, int w) {
    for (int i = 0; i < op->n_params; i++) p[i] = 0;
    p[hn_op_param_index(op, "n")] = 1;
    p[hn_op_param_index(op, "in_ch")] = in_ch;
    p[hn_op_param_index(op, "out_ch")] = out_ch;
    p[hn_op_param_index(op, "filter_size")] = fs;
    p[hn_op_param_index(op, "h")] = h;
    p[hn_op_param_index(op, "w")] = w;
    p[hn_op_param_index(op, "padding")] = -1;
}

static void set(double *p, const char *name, double v) {
    p[hn_op_param_index(op, name)] = v;
}

static void test_counts_and_label(void) {
    double p[32];
    params(p, 32, 512, 9, 128, 128);
    /* 2 * in * out * h * w * fs^2 = 2 * 32 * 512 * 16384 * 81 */
    CHECK_NEAR(op->flop(p), 43486543872.0, 0);
    /* 4 bytes * (in*h*w + out*in*fs^2 + out*h*w) = 4 * (524288 + 1327104 + 8388608) */
    CHECK_NEAR(op->bytes(p), 40960000.0, 0);
    char label[128];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "128x128x32 -> 512, f:9x9");
    int64_t counts[16];
    hn_err err;
    int b_in = hn_op_buffer_index(op, "in"), b_f = hn_op_buffer_index(op, "filter"),
        b_b = hn_op_buffer_index(op, "bias"), b_out = hn_op_buffer_index(op, "out");
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[b_in], 32 * 128 * 128);
    CHECK_INT(counts[b_f], 512 * 32 * 81);
    CHECK_INT(counts[b_b], 512);
    CHECK_INT(counts[b_out], 512 * 128 * 128);
    int64_t dims[4];
    CHECK_INT(op->dims(p, b_f, dims), 4);
    CHECK_INT(dims[0] * dims[1] * dims[2] * dims[3], counts[b_f]);
    CHECK_INT(op->dims(p, b_b, dims), 1);

    /* A batch of 2, "valid" (padding 0), bias: the chapter's convolution. */
    params(p, 3, 4, 5, 7, 11);
    set(p, "n", 2);
    set(p, "padding", 0);
    set(p, "use_bias", 1);
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[b_out], 2 * 4 * 3 * 7); /* (7-5+1) x (11-5+1) */
    CHECK_NEAR(op->flop(p), 2.0 * 2 * 3 * 4 * 3 * 7 * 25, 0);
    CHECK_NEAR(op->bytes(p), 4.0 * (2 * 3 * 7 * 11 + 4 * 3 * 25 + 4 + 2 * 4 * 3 * 7), 0);
    op->label(p, label, sizeof label);
    CHECK_STR(label, "7x11x3 -> 4, f:5x5, n:2, p:0, bias");
    CHECK_INT(op->dims(p, b_out, dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 4 && dims[2] == 3 && dims[3] == 7);
    set(p, "layout", 1); /* NHWC */
    CHECK_INT(op->dims(p, b_out, dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 7 && dims[3] == 4);
    op->label(p, label, sizeof label);
    CHECK_CONTAINS(label, ", NHWC");

    params(p, 0, 1, 3, 8, 8);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "in_ch = 0");
    params(p, 512, 512, 9, 4096, 4096);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "more than 2^31-1");
    params(p, 1, 1, 9, 5, 5); /* a valid 9x9 filter on a 5x5 image */
    set(p, "padding", 0);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "does not fit a 5x5 image");
    set(p, "padding", 2); /* 5 + 4 - 9 + 1 = 1: fits */
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[b_out], 1);
    set(p, "padding", -2);
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "padding = -2");
    CHECK(hn_op_find("conv3d") == NULL);
}

static void test_generator(void) {
    float a[1001], b[1001];
    hn_fill_randn_f32(a, 1001, 42);
    hn_fill_randn_f32(b, 1001, 42);
    CHECK(memcmp(a, b, sizeof a) == 0);
    hn_fill_randn_f32(b, 1001, 43);
    CHECK(memcmp(a, b, sizeof a) != 0);
    double sum = 0, sq = 0;
    for (int i = 0; i < 1001; i++) sum += a[i], sq += (double)a[i] * a[i];
    double mean = sum / 1001, var = sq / 1001 - mean * mean;
    CHECK_MSG(fabs(mean) < 0.15 && fabs(var - 1) < 0.2, "mean %g var %g", mean, var);
}

/* Offset of (b, c, y, x) in a (n, ch, h, w) tensor stored in layout order. */
static int64_t at(int layout, int n, int ch, int h, int w, int b, int c, int y, int x) {
    if (layout == 1) return (((int64_t)b * h + y) * w + x) * ch + c;
    if (layout == 2) return (((int64_t)c * h + y) * w + x) * n + b;
    return (((int64_t)b * ch + c) * h + y) * w + x;
}

/* The reference against a direct loop written here from the definition. */
static void check_against_loop(int n, int in_ch, int out_ch, int fs, int h, int w, int padding, float pad, int bias,
                               int layout) {
    double p[32];
    params(p, in_ch, out_ch, fs, h, w);
    set(p, "n", n);
    set(p, "padding", padding);
    set(p, "pad", pad);
    set(p, "use_bias", bias);
    set(p, "layout", layout);
    int64_t counts[16];
    hn_err err;
    CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
    void *bufs[16];
    for (int i = 0; i < op->n_buffers; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, sizeof(float));
    op->generate(p, bufs, 11);
    hn_ref refs[16] = {{0}};
    CHECK(op->reference(p, bufs, refs, 1e9, 11, 2, &err) == 0);
    int b_out = hn_op_buffer_index(op, "out");
    const float *in = bufs[hn_op_buffer_index(op, "in")], *f = bufs[hn_op_buffer_index(op, "filter")],
                *bb = bufs[hn_op_buffer_index(op, "bias")];
    int pad_lo = padding < 0 ? (fs - 1) / 2 : padding;
    int oh = padding < 0 ? h : h + 2 * padding - fs + 1, ow = padding < 0 ? w : w + 2 * padding - fs + 1;
    double *want = xcalloc((size_t)counts[b_out], sizeof *want);
    for (int b = 0; b < n; b++)
        for (int o = 0; o < out_ch; o++)
            for (int y = 0; y < oh; y++)
                for (int x = 0; x < ow; x++) {
                    double s = bb[o];
                    for (int c = 0; c < in_ch; c++)
                        for (int i = 0; i < fs; i++)
                            for (int j = 0; j < fs; j++) {
                                int yy = y + i - pad_lo, xx = x + j - pad_lo;
                                double v = yy >= 0 && yy < h && xx >= 0 && xx < w
                                               ? in[at(layout, n, in_ch, h, w, b, c, yy, xx)]
                                               : pad;
                                s += v * f[((o * in_ch + c) * fs + i) * fs + j];
                            }
                    want[at(layout, n, out_ch, oh, ow, b, o, y, x)] = s;
                }
    const hn_ref *r = &refs[b_out];
    CHECK_INT(r->n, counts[b_out]);
    double worst = 0;
    for (int64_t k = 0; k < r->n; k++) {
        int64_t e = r->index ? r->index[k] : k;
        double d = fabs(r->values[k] - want[e]);
        if (d > worst) worst = d;
    }
    CHECK_MSG(worst < 1e-9, "n %d %d->%d fs %d %dx%d padding %d bias %d layout %d: worst diff %g", n, in_ch, out_ch, fs,
              h, w, padding, bias, layout, worst);
    if (bias) {
        float zero = 0;
        int all_zero = 1;
        for (int o = 0; o < out_ch; o++) all_zero &= memcmp(&bb[o], &zero, sizeof zero) == 0;
        CHECK_MSG(!all_zero, "use_bias 1 generated no bias");
    }
    free(want);
    for (int i = 0; i < op->n_buffers; i++) {
        hn_ref_free(&refs[i]);
        free(bufs[i]);
    }
}

static void test_reference_against_loop(void) {
    check_against_loop(1, 3, 2, 3, 9, 7, -1, 0.0f, 0, 0);   /* the seed's "same" */
    check_against_loop(1, 2, 3, 4, 6, 5, -1, 0.5f, 0, 0);   /* even filter, pad value */
    check_against_loop(3, 2, 5, 3, 7, 9, 0, 0.0f, 1, 0);    /* batch, valid, bias */
    check_against_loop(2, 1, 1, 5, 5, 6, 2, -1.0f, 1, 0);   /* explicit padding */
    check_against_loop(2, 3, 2, 3, 5, 4, 1, 0.0f, 0, 1);    /* NHWC */
    check_against_loop(3, 2, 2, 1, 1, 3, 0, 0.0f, 1, 2);    /* CHWN, 1x1 filter, 1-high image */
}

static void test_sampled_reference(void) {
    double p[32];
    params(p, 3, 2, 5, 60, 70);
    set(p, "pad", 0.25);
    set(p, "n", 2);
    int64_t counts[16];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    void *bufs[16];
    for (int i = 0; i < op->n_buffers; i++) bufs[i] = xcalloc((size_t)counts[i], sizeof(float));
    op->generate(p, bufs, 7);
    hn_ref full[16] = {{0}}, part[16] = {{0}};
    int b_out = hn_op_buffer_index(op, "out");
    CHECK(op->reference(p, bufs, full, 1e9, 7, 1, &err) == 0);
    CHECK(full[b_out].index == NULL && full[b_out].n == counts[b_out]);
    CHECK_STR(full[b_out].method, "full");
    /* A budget far under the case's cost forces the sample. */
    CHECK(op->reference(p, bufs, part, 1e-7, 7, 1, &err) == 0);
    CHECK(part[b_out].index != NULL);
    CHECK(part[b_out].n < counts[b_out]);
    CHECK_CONTAINS(part[b_out].method, "sampled");
    CHECK_CONTAINS(part[b_out].method, "border");
    /* Every border pixel (r = 2: 60*70 - 56*66 = 504 of 4200) of every channel of
     * both images is in, plus at least 1024 random ones. */
    int64_t border = 0;
    for (int64_t i = 0; i < part[b_out].n; i++) {
        int64_t e = part[b_out].index[i], pix = e % (60 * 70), y = pix / 70, x = pix % 70;
        CHECK_NEAR(part[b_out].values[i], full[b_out].values[e], 1e-12);
        if (y < 2 || y >= 58 || x < 2 || x >= 68) border++;
    }
    CHECK_INT(border, 2 * 2 * 504);
    CHECK_INT(part[b_out].n, 2 * 2 * (504 + 1024));
    for (int i = 0; i < op->n_buffers; i++) {
        hn_ref_free(&full[i]);
        hn_ref_free(&part[i]);
        free(bufs[i]);
    }
}

int main(void) {
    op = hn_op_find("conv2d");
    CHECK(op != NULL);
    if (!op) return hn_test_exit();
    test_counts_and_label();
    test_generator();
    test_reference_against_loop();
    test_sampled_reference();
    return hn_test_exit();
}
