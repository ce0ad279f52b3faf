/*
 * test_conv2d_op.c: the conv2d operator (harness/ops/conv2d.c): FLOP and byte
 * counts and labels against hand-computed values, shape checks, the seeded input
 * generator, and the sampled reference (border + random pixels) against the full
 * one.
 */
#include <stdint.h>

#include "hn_test.h"
#include "ops/op.h"

/* in_ch, out_ch, filter_size, h, w, pad */
static void test_counts_and_label(void) {
    const hn_op *op = hn_op_find("conv2d");
    CHECK(op != NULL);
    if (!op) return;
    double p[6] = {32, 512, 9, 128, 128, 0};
    /* 2 * in * out * h * w * fs^2 = 2 * 32 * 512 * 16384 * 81 */
    CHECK_NEAR(op->flop(p), 43486543872.0, 0);
    /* 4 bytes * (in*h*w + out*in*fs^2 + out*h*w) = 4 * (524288 + 1327104 + 8388608) */
    CHECK_NEAR(op->bytes(p), 40960000.0, 0);
    char label[128];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "128x128x32 -> 512, f:9x9");
    int64_t counts[3];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[0], 32 * 128 * 128);
    CHECK_INT(counts[1], 512 * 32 * 81);
    CHECK_INT(counts[2], 512 * 128 * 128);
    int64_t dims[4];
    CHECK_INT(op->dims(p, 1, dims), 4);
    CHECK_INT(dims[0] * dims[1] * dims[2] * dims[3], counts[1]);
    double q[6] = {3, 4, 5, 7, 11, 0.5}; /* h != w */
    CHECK_NEAR(op->flop(q), 2.0 * 3 * 4 * 7 * 11 * 25, 0);
    op->label(q, label, sizeof label);
    CHECK_STR(label, "7x11x3 -> 4, f:5x5");
    double bad[6] = {0, 1, 3, 8, 8, 0};
    CHECK(op->shape(bad, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "in_ch = 0");
    double huge[6] = {512, 512, 9, 4096, 4096, 0};
    CHECK(op->shape(huge, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "more than 2^31-1");
    CHECK_INT(hn_op_buffer_index(op, "filter"), 1);
    CHECK_INT(hn_op_param_index(op, "pad"), 5);
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

static void test_sampled_reference(void) {
    const hn_op *op = hn_op_find("conv2d");
    double p[6] = {3, 2, 5, 60, 70, 0.25};
    int64_t counts[3];
    hn_err err;
    op->shape(p, counts, &err);
    void *bufs[3];
    for (int i = 0; i < 3; i++) bufs[i] = xcalloc((size_t)counts[i], sizeof(float));
    op->generate(p, bufs, 7);
    hn_ref full[3] = {0}, part[3] = {0};
    CHECK(op->reference(p, bufs, full, 1e9, 7, 1, &err) == 0);
    CHECK(full[2].index == NULL && full[2].n == counts[2]);
    CHECK_STR(full[2].method, "full");
    /* A budget far under the case's cost forces the sample. */
    CHECK(op->reference(p, bufs, part, 1e-7, 7, 1, &err) == 0);
    CHECK(part[2].index != NULL);
    CHECK(part[2].n < counts[2]);
    CHECK_CONTAINS(part[2].method, "sampled");
    CHECK_CONTAINS(part[2].method, "border");
    /* Every border pixel (r = 2: 60*70 - 56*66 = 504 of 4200) of every channel is in,
     * plus at least 1024 random ones. */
    int64_t border = 0;
    for (int64_t i = 0; i < part[2].n; i++) {
        int64_t e = part[2].index[i], pix = e % (60 * 70), y = pix / 70, x = pix % 70;
        CHECK_NEAR(part[2].values[i], full[2].values[e], 1e-12);
        if (y < 2 || y >= 58 || x < 2 || x >= 68) border++;
    }
    CHECK_INT(border, 2 * 504);
    CHECK_INT(part[2].n, 2 * (504 + 1024));
    for (int i = 0; i < 3; i++) {
        hn_ref_free(&full[i]);
        hn_ref_free(&part[i]);
        free(bufs[i]);
    }
}

int main(void) {
    test_counts_and_label();
    test_generator();
    test_sampled_reference();
    return hn_test_exit();
}
