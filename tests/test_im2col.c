/*
 * test_im2col.c: the im2col operator's reference against the definition
 * written out here (cols[b][(c*fs + p)*fs + q][y*ow + x] = X[b][c][y + p -
 * pad_lo][x + q - pad_lo], the pad value outside the image), bit for bit: valid
 * and "same" convolutions, a padding wider than the filter (whole rows and
 * columns of pad), odd sizes, a pad value other than 0, and a case large
 * enough to be streamed out, on one thread and two.
 */
#include <math.h>
#include <stdint.h>

#include "hn_test.h"
#include "ops/conv2d/ref.h"
#include "ops/op.h"

static void check_case(int n, int c, int fs, int h, int w, int padding, double pad, int threads) {
    const hn_op *op = hn_op_find("im2col");
    double p[8] = {n, c, fs, h, w, padding, pad};
    int64_t counts[2];
    hn_err err;
    CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
    float *in = xmalloc(sizeof(float) * (size_t)counts[0]);
    op->generate(p, (void *const[]){in, NULL}, 5);
    hn_ref refs[2] = {{0}};
    CHECK(op->reference(p, (void *const[]){in, NULL}, refs, 1e9, 5, threads, &err) == 0);
    conv2d_shape s;
    conv2d_ref_shape(&s, h, w, fs, padding);
    CHECK_INT(refs[1].n, counts[1]);
    CHECK(refs[1].index == NULL && refs[0].values == NULL);
    int64_t bad = 0, e = 0;
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++)
            for (int pp = 0; pp < fs; pp++)
                for (int q = 0; q < fs; q++)
                    for (int y = 0; y < s.oh; y++)
                        for (int x = 0; x < s.ow; x++, e++) {
                            const int yy = y + pp - s.pad_lo, xx = x + q - s.pad_lo;
                            const double want = yy >= 0 && yy < h && xx >= 0 && xx < w
                                                    ? (double)in[(((int64_t)b * c + ch) * h + yy) * w + xx]
                                                    : pad;
                            if (memcmp(&want, &refs[1].values[e], sizeof want) != 0 && bad++ < 3)
                                CHECK_MSG(0, "n %d c %d fs %d %dx%d padding %d: element %lld is %.9g, want %.9g", n, c,
                                          fs, h, w, padding, (long long)e, refs[1].values[e], want);
                        }
    CHECK_INT(e, counts[1]);
    hn_ref_free(&refs[0]);
    hn_ref_free(&refs[1]);
    free(in);
}

/* Parameters in the operator's order: n, in_ch, filter_size, h, w, padding, pad. */
static int shape_of(double n, double c, double fs, double h, double w, double padding, int64_t *counts, hn_err *err) {
    const double p[8] = {n, c, fs, h, w, padding, 0};
    return hn_op_find("im2col")->shape(p, counts, err);
}

/* Counts, bytes, dims and labels against the formulas in the operator's comment,
 * and each limit refused just past it and accepted at it. */
static void test_shape(void) {
    const hn_op *op = hn_op_find("im2col");
    int64_t counts[2], dims[4];
    hn_err err;
    double p[8] = {2, 3, 3, 7, 9, 0, 0}; /* valid 3x3 on 7x9: 5x7 outputs */
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[0], 2 * 3 * 7 * 9);
    CHECK_INT(counts[1], 2 * (3 * 3 * 3) * (5 * 7));
    CHECK_NEAR(op->flop(p), 0, 0);
    CHECK_NEAR(op->bytes(p), 4.0 * (2 * 3 * 7 * 9 + 2 * 27 * 35), 0);
    CHECK_INT(op->dims(p, 0, dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 7 && dims[3] == 9);
    CHECK_INT(op->dims(p, 1, dims), 3);
    CHECK(dims[0] == 2 && dims[1] == 27 && dims[2] == 35);
    char label[64];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "7x9x3, f:3x3, p:0, n:2");
    p[0] = 1, p[5] = -1;
    op->label(p, label, sizeof label);
    CHECK_STR(label, "7x9x3, f:3x3, p:-1");
    CHECK(op->shape(p, counts, &err) == 0); /* "same": 7x9 outputs */
    CHECK_INT(counts[1], 27 * 63);
    p[3] = 0;
    CHECK_NEAR(op->bytes(p), 0, 0); /* a bad shape has no bytes */

    static const char *const NAMES[] = {"n", "in_ch", "filter_size", "h", "w"};
    for (int i = 0; i < 5; i++) {
        double q[5] = {1, 1, 1, 4, 4};
        q[i] = 0;
        CHECK(shape_of(q[0], q[1], q[2], q[3], q[4], 0, counts, &err) != 0);
        char want[96];
        snprintf(want, sizeof want, "im2col: %s = 0 must be between 1 and 2^30", NAMES[i]);
        CHECK_STR(err.msg, want);
        if (i != 2) { /* the largest allowed, the others 1 (a filter as large needs too large an image) */
            double one[5] = {1, 1, 1, 1, 1};
            one[i] = 1 << 30;
            CHECK_MSG(shape_of(one[0], one[1], one[2], one[3], one[4], 0, counts, &err) == 0, "%s = 2^30: %s",
                      NAMES[i], err.msg);
        }
        q[i] = (1 << 30) + 1.0;
        CHECK_MSG(shape_of(q[0], q[1], q[2], q[3], q[4], 0, counts, &err) != 0, "%s = 2^30 + 1", NAMES[i]);
    }
    CHECK(shape_of(1, 1, 3, 4, 4, -2, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "padding = -2 must be -1");
    CHECK(shape_of(1, 1, 3, 4, 4, (1 << 20) + 1, counts, &err) != 0);
    CHECK(shape_of(1, 1, 1, 1, 1, 1 << 20, counts, &err) != 0); /* padding allowed, output too big */
    CHECK_CONTAINS(err.msg, "buffer 'cols'");
    /* A filter that fits one side but not the other. */
    CHECK(shape_of(1, 1, 3, 2, 9, 0, counts, &err) != 0);
    CHECK_STR(err.msg, "im2col: a 3x3 filter with padding 0 does not fit a 2x9 image");
    CHECK(shape_of(1, 1, 3, 9, 2, 0, counts, &err) != 0);
    CHECK(shape_of(1, 1, 3, 3, 3, 0, counts, &err) == 0); /* 1x1 output */
    /* 2^31 elements are refused (the kernels index with int), 2^30 are not. */
    CHECK(shape_of(2, 1, 1, 32768, 32768, 0, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "buffer 'in' would have 2147483648 elements");
    CHECK(shape_of(1, 1, 1, 32768, 32768, 0, counts, &err) == 0);
    CHECK(shape_of(1, 2, 4, 16384, 16384, -1, counts, &err) != 0); /* in 2^29, cols 2^33 */
    CHECK_CONTAINS(err.msg, "buffer 'cols' would have 8589934592 elements");
}

/* The generator writes every input element (a NaN-filled buffer has none left),
 * the same for a seed and different for another. */
static void test_generator(void) {
    const hn_op *op = hn_op_find("im2col");
    double p[8] = {2, 3, 3, 7, 9, 0, 0};
    int64_t counts[2];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    float *a = xmalloc(sizeof *a * (size_t)counts[0]), *b = xmalloc(sizeof *b * (size_t)counts[0]);
    for (int64_t i = 0; i < counts[0]; i++) a[i] = b[i] = NAN;
    op->generate(p, (void *const[]){a, NULL}, 4);
    int64_t unwritten = 0;
    for (int64_t i = 0; i < counts[0]; i++) unwritten += isnan(a[i]);
    CHECK_INT(unwritten, 0);
    op->generate(p, (void *const[]){b, NULL}, 4);
    CHECK(memcmp(a, b, sizeof *a * (size_t)counts[0]) == 0);
    op->generate(p, (void *const[]){b, NULL}, 5);
    CHECK(memcmp(a, b, sizeof *a * (size_t)counts[0]) != 0);
    free(a), free(b);
}

int main(void) {
    test_generator();
    test_shape();
    check_case(1, 3, 3, 7, 9, 0, 0.0, 1);
    check_case(2, 2, 5, 11, 6, -1, 0.5, 2);
    check_case(1, 1, 3, 5, 5, 4, -2.0, 1); /* rows and columns entirely of pad */
    check_case(3, 2, 1, 4, 3, 0, 0.0, 2);
    /* a filter wider than the image and its padding on one side: some rows of cols
     * have no column inside the image, below rows that do */
    check_case(1, 2, 7, 5, 2, 3, 0.75, 1);
    /* 17 MB of cols: streamed, split between threads */
    check_case(1, 4, 5, 150, 150, -1, 0.25, 1);
    check_case(1, 4, 5, 150, 150, -1, 0.25, 2);
    return hn_test_exit();
}
