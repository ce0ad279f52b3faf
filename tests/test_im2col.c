/*
 * test_im2col.c: the im2col operator's reference against the definition
 * written out here (cols[b][(c*fs + p)*fs + q][y*ow + x] = X[b][c][y + p -
 * pad_lo][x + q - pad_lo], the pad value outside the image), bit for bit: valid
 * and "same" convolutions, a padding wider than the filter (whole rows and
 * columns of pad), odd sizes, a pad value other than 0, and a case large
 * enough to be streamed out, on one thread and two.
 */
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

int main(void) {
    check_case(1, 3, 3, 7, 9, 0, 0.0, 1);
    check_case(2, 2, 5, 11, 6, -1, 0.5, 2);
    check_case(1, 1, 3, 5, 5, 4, -2.0, 1); /* rows and columns entirely of pad */
    check_case(3, 2, 1, 4, 3, 0, 0.0, 2);
    /* 17 MB of cols: streamed, split between threads */
    check_case(1, 4, 5, 150, 150, -1, 0.25, 1);
    check_case(1, 4, 5, 150, 150, -1, 0.25, 2);
    return hn_test_exit();
}
