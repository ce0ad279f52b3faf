/*
 * test_pool2d.c: the pool2d and pool2d_backward operators (harness/ops/pool2d/,
 * harness/ops/pool2d_backward/) and their kernels:
 *   - FLOP and byte counts, labels, logical shapes, shape errors naming the
 *     parameter and its value;
 *   - the forward reference against a loop written here from the definition
 *     (torch's max_pool2d with indices / avg_pool2d), on odd sizes, sizes not
 *     divisible by k, 1-sized dimensions, k = 1 and k = h, every layout, both
 *     modes; ties (the first in row-major window order), NaN and -inf windows;
 *   - the generator: seeded, the same numbers in every layout, and the backward
 *     operator's argmax input equal to the forward reference's argmax;
 *   - the backward reference against the definition (din = 0, then din[argmax]
 *     += dout, or dout / k^2 over each window), and its refusal of an argmax
 *     outside its window;
 *   - the forward kernels on the emulator, launched directly on inputs full of
 *     ties, NaN and -inf (generated inputs have none), against the loop;
 *   - every kernel variant through the harness binary on the emulator (every
 *     layout, both modes, odd sizes), `harness debug` on each, NVRTC compiles of
 *     the shipped configs, and a window larger than the image reported by name;
 *   - the cuDNN baselines' declarations, and a baseline row checked on the
 *     outputs it declares only (cuDNN's max pooling writes no argmax).
 */
#include <stdint.h>

#include "csv.h"
#include "ops/op.h"
#include "ops/pool2d/pool2d.h"
#include "run.h"
#include "sweep.h"
#include "test_emu_common.h"

static const hn_op *fwd, *bwd;

enum { NCHW, NHWC, CHWN };

/* Parameters of either operator (they share the table). */
static void params(double *p, int n, int c, int h, int w, int k, int avg, int layout) {
    p[hn_op_param_index(fwd, "n")] = n;
    p[hn_op_param_index(fwd, "channels")] = c;
    p[hn_op_param_index(fwd, "h")] = h;
    p[hn_op_param_index(fwd, "w")] = w;
    p[hn_op_param_index(fwd, "k")] = k;
    p[hn_op_param_index(fwd, "mode")] = avg;
    p[hn_op_param_index(fwd, "layout")] = layout;
}

/* Offset of (b, c, y, x) in an (n, ch, h, w) tensor stored in layout order. */
static int64_t at(int layout, int n, int ch, int h, int w, int b, int c, int y, int x) {
    if (layout == NHWC) return (((int64_t)b * h + y) * w + x) * ch + c;
    if (layout == CHWN) return (((int64_t)c * h + y) * w + x) * n + b;
    return (((int64_t)b * ch + c) * h + y) * w + x;
}

static void **alloc_bufs(const hn_op *op, const int64_t *counts) {
    void **bufs = xcalloc((size_t)op->n_buffers, sizeof *bufs);
    for (int i = 0; i < op->n_buffers; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, 4);
    return bufs;
}

static void free_bufs(const hn_op *op, void **bufs, hn_ref *refs) {
    for (int i = 0; i < op->n_buffers; i++) {
        free(bufs[i]);
        if (refs) hn_ref_free(&refs[i]);
    }
    free(bufs);
}

static void test_counts_labels_shapes(void) {
    double p[16];
    int64_t counts[16], dims[4];
    hn_err err;
    const int f_in = hn_op_buffer_index(fwd, "in"), f_out = hn_op_buffer_index(fwd, "out"),
              f_am = hn_op_buffer_index(fwd, "argmax");
    const int b_in = hn_op_buffer_index(bwd, "in"), b_am = hn_op_buffer_index(bwd, "argmax"),
              b_dout = hn_op_buffer_index(bwd, "dout"), b_din = hn_op_buffer_index(bwd, "din");
    CHECK(f_in >= 0 && f_out >= 0 && f_am >= 0 && b_in >= 0 && b_am >= 0 && b_dout >= 0 && b_din >= 0);
    CHECK(fwd->buffers[f_am].dtype == HN_DT_I32 && bwd->buffers[b_am].dtype == HN_DT_I32);
    CHECK(bwd->buffers[b_din].role == HN_BUF_OUT && bwd->buffers[b_am].role == HN_BUF_IN);
    /* cuDNN's: the forward one declares `out` alone (cuDNN gives no argmax) */
    CHECK_INT(fwd->n_baselines, 1);
    CHECK_INT(bwd->n_baselines, 1);
    CHECK_STR(fwd->baselines[0].family, "cudnn");
    CHECK_STR(bwd->baselines[0].family, "cudnn");
    CHECK(hn_op_baseline_writes(fwd, &fwd->baselines[0], f_out));
    CHECK(!hn_op_baseline_writes(fwd, &fwd->baselines[0], f_am));
    CHECK(!hn_op_baseline_writes(fwd, &fwd->baselines[0], f_in));
    CHECK(hn_op_baseline_writes(bwd, &bwd->baselines[0], b_din));
    CHECK(!hn_op_baseline_writes(bwd, &bwd->baselines[0], b_dout));

    /* 2 images, 3 channels, 7x11, k 3: a 2x3 output, the last row and 2 columns in no window */
    params(p, 2, 3, 7, 11, 3, 0, NCHW);
    CHECK_MSG(fwd->shape(p, counts, &err) == 0, "%s", err.msg);
    CHECK_INT(counts[f_in], 2 * 3 * 7 * 11);
    CHECK_INT(counts[f_out], 2 * 3 * 2 * 3);
    CHECK_INT(counts[f_am], 2 * 3 * 2 * 3);
    /* one operation per window element; bytes: the covered input, out, argmax (max) */
    CHECK_NEAR(fwd->flop(p), 2.0 * 3 * 2 * 3 * 9, 0);
    CHECK_NEAR(fwd->bytes(p), 4.0 * (36 * 9 + 36 * 2), 0);
    char label[128];
    fwd->label(p, label, sizeof label);
    CHECK_STR(label, "7x11x3, k:3, max, n:2");
    CHECK_INT(fwd->dims(p, f_out, dims), 4);
    CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == 2 && dims[3] == 3);
    CHECK_MSG(bwd->shape(p, counts, &err) == 0, "%s", err.msg);
    CHECK_INT(counts[b_in], 2 * 3 * 7 * 11);
    CHECK_INT(counts[b_din], 2 * 3 * 7 * 11);
    CHECK_INT(counts[b_am], 36);
    CHECK_INT(counts[b_dout], 36);
    /* backward: din written, dout and argmax read (the forward input is not needed) */
    CHECK_NEAR(bwd->flop(p), 36.0 * 9, 0);
    CHECK_NEAR(bwd->bytes(p), 4.0 * (2 * 3 * 7 * 11 + 36 * 2), 0);
    bwd->label(p, label, sizeof label);
    CHECK_STR(label, "7x11x3, k:3, max, n:2");

    params(p, 1, 16, 32, 32, 2, 1, NHWC); /* avg: no argmax written */
    CHECK_NEAR(fwd->bytes(p), 4.0 * (16 * 32 * 32 + 16 * 16 * 16), 0);
    CHECK_NEAR(bwd->bytes(p), 4.0 * (16 * 32 * 32 + 16 * 16 * 16), 0);
    fwd->label(p, label, sizeof label);
    CHECK_STR(label, "32x32x16, k:2, avg, NHWC");
    CHECK_INT(fwd->dims(p, f_in, dims), 4);
    CHECK(dims[0] == 1 && dims[1] == 32 && dims[2] == 32 && dims[3] == 16);
    CHECK_INT(bwd->dims(p, b_dout, dims), 4);
    CHECK(dims[0] == 1 && dims[1] == 16 && dims[2] == 16 && dims[3] == 16);
    params(p, 4, 3, 9, 5, 2, 0, CHWN);
    CHECK_INT(bwd->dims(p, b_din, dims), 4);
    CHECK(dims[0] == 3 && dims[1] == 9 && dims[2] == 5 && dims[3] == 4);
    CHECK_INT(fwd->dims(p, f_am, dims), 4);
    CHECK(dims[0] == 3 && dims[1] == 4 && dims[2] == 2 && dims[3] == 4);

    /* a window as large as the image is fine; a larger one is an error naming k */
    params(p, 1, 1, 5, 7, 5, 0, NCHW);
    CHECK(fwd->shape(p, counts, &err) == 0);
    CHECK_INT(counts[f_out], 1);
    params(p, 1, 1, 8, 8, 9, 0, NCHW);
    CHECK(fwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "pool2d: k = 9 is larger than h = 8");
    params(p, 1, 1, 9, 4, 5, 1, NCHW);
    CHECK(bwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "pool2d_backward: k = 5 is larger than w = 4");
    params(p, 1, 1, 8, 8, 0, 0, NCHW);
    CHECK(fwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "k = 0");
    params(p, 1, 0, 8, 8, 2, 0, NCHW);
    CHECK(bwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "channels = 0");
    params(p, 64, 1024, 256, 256, 2, 0, NCHW);
    CHECK(fwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "more than 2^31-1");
    params(p, 1, 1, 8, 8, 2, 2, NCHW);
    CHECK(fwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "mode = 2");
    params(p, 1, 1, 8, 8, 2, 0, 3);
    CHECK(fwd->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "layout = 3");
}

/* torch's max_pool2d (with indices) and avg_pool2d, from the definition:
 * windows k x k at stride k; max starts at -inf and takes v when v > max or v is
 * NaN, in row-major window order. Output in layout order. */
static void forward_loop(const float *in, int n, int ch, int h, int w, int k, int avg, int layout, double *out,
                         int32_t *argmax) {
    const int oh = h / k, ow = w / k;
    for (int b = 0; b < n; b++)
        for (int c = 0; c < ch; c++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    double m = -INFINITY, s = 0;
                    int32_t am = oy * k * w + ox * k;
                    for (int p = 0; p < k; p++)
                        for (int q = 0; q < k; q++) {
                            const int y = oy * k + p, x = ox * k + q;
                            const double v = in[at(layout, n, ch, h, w, b, c, y, x)];
                            s += v;
                            if (v > m || isnan(v)) m = v, am = y * w + x;
                        }
                    const int64_t e = at(layout, n, ch, oh, ow, b, c, oy, ox);
                    out[e] = avg ? s / (k * k) : m;
                    argmax[e] = am;
                }
}

/* The forward reference on `in` (NULL: generated with seed) against the loop. */
static void check_forward(int n, int ch, int h, int w, int k, int avg, int layout, const float *in_given) {
    double p[16];
    params(p, n, ch, h, w, k, avg, layout);
    int64_t counts[16];
    hn_err err;
    if (fwd->shape(p, counts, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    void **bufs = alloc_bufs(fwd, counts);
    const int b_in = hn_op_buffer_index(fwd, "in"), b_out = hn_op_buffer_index(fwd, "out"),
              b_am = hn_op_buffer_index(fwd, "argmax");
    if (in_given) memcpy(bufs[b_in], in_given, (size_t)counts[b_in] * sizeof(float));
    else fwd->generate(p, bufs, 7);
    hn_ref refs[16] = {{0}};
    CHECK_MSG(fwd->reference(p, (void *const *)bufs, refs, 1e9, 7, 2, &err) == 0, "%s", err.msg);
    double *want = xcalloc((size_t)counts[b_out], sizeof *want);
    int32_t *want_am = xcalloc((size_t)counts[b_out], sizeof *want_am);
    forward_loop(bufs[b_in], n, ch, h, w, k, avg, layout, want, want_am);
    CHECK_INT(refs[b_out].n, counts[b_out]);
    CHECK(refs[b_out].index == NULL);
    CHECK(refs[b_in].n == 0 && refs[b_in].values == NULL);
    int bad = 0, bad_am = 0;
    for (int64_t e = 0; e < counts[b_out]; e++) {
        const double got = refs[b_out].values[e];
        if (isnan(want[e]) ? !isnan(got) : fabs(got - want[e]) > 1e-12 * (1 + fabs(want[e]))) bad++;
    }
    if (avg) {
        /* nothing to check: an empty sample */
        CHECK_INT(refs[b_am].n, 0);
        CHECK(refs[b_am].index != NULL);
        CHECK_CONTAINS(refs[b_am].method, "not checked");
    } else {
        CHECK_INT(refs[b_am].n, counts[b_am]);
        CHECK(refs[b_am].index == NULL);
        for (int64_t e = 0; e < counts[b_am] && refs[b_am].n == counts[b_am]; e++)
            bad_am += refs[b_am].values[e] != want_am[e];
    }
    CHECK_MSG(bad == 0 && bad_am == 0, "n=%d ch=%d %dx%d k=%d %s layout %d: %d values, %d argmax wrong", n, ch, h, w,
              k, avg ? "avg" : "max", layout, bad, bad_am);
    free(want);
    free(want_am);
    free_bufs(fwd, bufs, refs);
}

static const int SHAPES[][5] = {
    /* n, ch, h, w, k */
    {1, 1, 1, 1, 1},  {1, 1, 1, 9, 1},  {2, 3, 7, 9, 2},  {1, 5, 13, 11, 3}, {3, 1, 5, 17, 5},
    {2, 2, 6, 6, 6},  {1, 3, 8, 1, 1},  {3, 4, 31, 33, 4}, {1, 1, 65, 64, 7}, {2, 17, 9, 10, 3},
};

static void test_forward_reference(void) {
    for (size_t s = 0; s < HN_ARRAY_LEN(SHAPES); s++)
        for (int layout = 0; layout < 3; layout++)
            for (int avg = 0; avg < 2; avg++)
                check_forward(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], SHAPES[s][3], SHAPES[s][4], avg, layout, NULL);
    /* Inner extents of 15 and 31 (NHWC channels, CHWN images): a whole vector of
     * 16 lanes does not fit, the scalar tail takes them all or the last 15. */
    for (int layout = 0; layout < 3; layout++)
        for (int avg = 0; avg < 2; avg++) {
            check_forward(1, 15, 6, 7, 2, avg, layout, NULL);
            check_forward(31, 2, 5, 5, 2, avg, layout, NULL);
        }
    /* Output rows of more than 2048 elements (ow * inner: 2250 in NCHW, then in
     * NHWC), which the reference takes one at a time rather than in groups. */
    for (int layout = 0; layout < 3; layout++)
        for (int avg = 0; avg < 2; avg++) {
            check_forward(1, 1, 4, 4500, 2, avg, layout, NULL);
            check_forward(2, 3, 4, 1500, 2, avg, layout, NULL);
        }

    /* ties (few distinct values): the first maximum in row-major window order;
     * NaN: it wins, the last NaN of a window is the argmax; -inf windows: the first */
    /* wide enough that rows (ow 9) and the inner extents (6 channels, 5 images)
     * take the reference's vector path as well as its scalar tail */
    enum { N = 5, C = 6, H = 9, W = 28, K = 3 };
    static float in[N * C * H * W];
    uint64_t seed = 99;
    for (int i = 0; i < N * C * H * W; i++) in[i] = (float)hn_rand_below(&seed, 3);
    for (int layout = 0; layout < 3; layout++)
        for (int avg = 0; avg < 2; avg++) check_forward(N, C, H, W, K, avg, layout, in);
    for (int i = 0; i < N * C * H * W; i++) {
        const uint64_t r = hn_rand_below(&seed, 10);
        in[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)(r % 2);
    }
    for (int i = 0; i < 3 * W; i++) in[i] = -INFINITY; /* a row of all -inf windows */
    for (int layout = 0; layout < 3; layout++) check_forward(N, C, H, W, K, 0, layout, in);

    /* one window by hand: 2 ties at (0,1) and (1,0), the first wins */
    const float tie[] = {1, 5, 2, 5, 0, 3};
    double p[16];
    params(p, 1, 1, 2, 3, 2, 0, NCHW);
    int64_t counts[16];
    hn_err err;
    CHECK(fwd->shape(p, counts, &err) == 0);
    void **bufs = alloc_bufs(fwd, counts);
    memcpy(bufs[0], tie, sizeof tie);
    hn_ref refs[16] = {{0}};
    CHECK(fwd->reference(p, (void *const *)bufs, refs, 1e9, 1, 1, &err) == 0);
    CHECK_NEAR(refs[hn_op_buffer_index(fwd, "out")].values[0], 5, 0);
    CHECK_NEAR(refs[hn_op_buffer_index(fwd, "argmax")].values[0], 1, 0); /* y * w + x = 0 * 3 + 1 */
    free_bufs(fwd, bufs, refs);
}

static void test_generator(void) {
    /* seeded; the same numbers in every layout */
    double p[16];
    int64_t counts[16];
    hn_err err;
    enum { N = 2, C = 3, H = 5, W = 7 };
    float *in[3];
    for (int layout = 0; layout < 3; layout++) {
        params(p, N, C, H, W, 2, 0, layout);
        CHECK(fwd->shape(p, counts, &err) == 0);
        void **bufs = alloc_bufs(fwd, counts);
        fwd->generate(p, bufs, 5);
        in[layout] = bufs[0];
        bufs[0] = NULL;
        free_bufs(fwd, bufs, NULL);
    }
    int same = 1;
    for (int b = 0; b < N; b++)
        for (int c = 0; c < C; c++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    for (int l = 1; l < 3; l++)
                        same &= in[l][at(l, N, C, H, W, b, c, y, x)] == in[0][at(0, N, C, H, W, b, c, y, x)];
    CHECK_MSG(same, "the layouts hold different numbers");
    /* every third window (NCHW order) holds its maximum at its first and last
     * element, so a kernel giving ties to the last maximum fails */
    int ties = 0, windows = 0;
    for (int l = 0; l < 3; l++)
        for (int b = 0, win = 0; b < N; b++)
            for (int c = 0; c < C; c++)
                for (int oy = 0; oy < H / 2; oy++)
                    for (int ox = 0; ox < W / 2; ox++, win++) {
                        float m = -INFINITY;
                        for (int q = 0; q < 4; q++) m = fmaxf(m, in[l][at(l, N, C, H, W, b, c, 2 * oy + q / 2, 2 * ox + q % 2)]);
                        const float first = in[l][at(l, N, C, H, W, b, c, 2 * oy, 2 * ox)];
                        const float last = in[l][at(l, N, C, H, W, b, c, 2 * oy + 1, 2 * ox + 1)];
                        windows += win % 3 == 0;
                        ties += win % 3 == 0 && first == m && last == m;
                    }
    CHECK_MSG(windows > 0 && ties == windows, "%d of %d windows tied", ties, windows);
    params(p, N, C, H, W, 2, 0, NCHW);
    void **again = alloc_bufs(fwd, counts);
    fwd->generate(p, again, 5);
    CHECK(memcmp(again[0], in[0], sizeof(float) * N * C * H * W) == 0);
    fwd->generate(p, again, 6);
    CHECK(memcmp(again[0], in[0], sizeof(float) * N * C * H * W) != 0);
    free_bufs(fwd, again, NULL);
    for (int l = 0; l < 3; l++) free(in[l]);

    /* the backward operator's input is the forward's (same seed), and its argmax
     * input is the forward reference's argmax, in both modes and every layout */
    for (int layout = 0; layout < 3; layout++)
        for (int avg = 0; avg < 2; avg++) {
            params(p, 3, 4, 11, 13, 3, avg, layout);
            int64_t cf[16], cb[16];
            CHECK(fwd->shape(p, cf, &err) == 0 && bwd->shape(p, cb, &err) == 0);
            void **bf = alloc_bufs(fwd, cf), **bb = alloc_bufs(bwd, cb);
            fwd->generate(p, bf, 31);
            bwd->generate(p, bb, 31);
            /* the forward's input is the backward's with ties planted */
            pool2d_dims d;
            CHECK(pool2d_decode("pool2d", p, &d, NULL, NULL, &err) == 0);
            float *tied = xmalloc((size_t)cf[0] * sizeof(float));
            memcpy(tied, bb[hn_op_buffer_index(bwd, "in")], (size_t)cf[0] * sizeof(float));
            pool2d_plant_ties(&d, tied);
            CHECK(memcmp(bf[hn_op_buffer_index(fwd, "in")], tied, (size_t)cf[0] * sizeof(float)) == 0);
            free(tied);
            memcpy(bf[hn_op_buffer_index(fwd, "in")], bb[hn_op_buffer_index(bwd, "in")], (size_t)cf[0] * sizeof(float));
            params(p, 3, 4, 11, 13, 3, 0, layout); /* the forward's argmax, in max mode */
            hn_ref refs[16] = {{0}};
            CHECK(fwd->reference(p, (void *const *)bf, refs, 1e9, 31, 2, &err) == 0);
            const hn_ref *am = &refs[hn_op_buffer_index(fwd, "argmax")];
            const int32_t *given = bb[hn_op_buffer_index(bwd, "argmax")];
            int bad = 0;
            for (int64_t e = 0; e < am->n; e++) bad += am->values[e] != given[e];
            CHECK_MSG(bad == 0 && am->n == cb[hn_op_buffer_index(bwd, "argmax")], "layout %d %s: %d argmax differ",
                      layout, avg ? "avg" : "max", bad);
            const float *dout = bb[hn_op_buffer_index(bwd, "dout")];
            double sq = 0;
            for (int64_t e = 0; e < am->n; e++) sq += (double)dout[e] * dout[e];
            CHECK_MSG(sq > 0.3 * (double)am->n && sq < 3.0 * (double)am->n, "dout is not N(0,1)-like: %g", sq);
            free_bufs(fwd, bf, refs);
            free_bufs(bwd, bb, NULL);
        }
}

/* The gradient from the definition: din = 0; max: din[argmax] += dout; avg:
 * din[window] += dout / k^2. */
static void backward_loop(const int32_t *argmax, const float *dout, int n, int ch, int h, int w, int k, int avg,
                          int layout, double *din) {
    const int oh = h / k, ow = w / k;
    memset(din, 0, sizeof(double) * (size_t)n * ch * h * w);
    for (int b = 0; b < n; b++)
        for (int c = 0; c < ch; c++)
            for (int oy = 0; oy < oh; oy++)
                for (int ox = 0; ox < ow; ox++) {
                    const int64_t e = at(layout, n, ch, oh, ow, b, c, oy, ox);
                    if (!avg) {
                        din[at(layout, n, ch, h, w, b, c, argmax[e] / w, argmax[e] % w)] += dout[e];
                        continue;
                    }
                    for (int p = 0; p < k; p++)
                        for (int q = 0; q < k; q++)
                            din[at(layout, n, ch, h, w, b, c, oy * k + p, ox * k + q)] += (double)dout[e] / (k * k);
                }
}

static void check_backward(int n, int ch, int h, int w, int k, int avg, int layout) {
    double p[16];
    params(p, n, ch, h, w, k, avg, layout);
    int64_t counts[16];
    hn_err err;
    if (bwd->shape(p, counts, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    void **bufs = alloc_bufs(bwd, counts);
    bwd->generate(p, bufs, 13);
    hn_ref refs[16] = {{0}};
    CHECK_MSG(bwd->reference(p, (void *const *)bufs, refs, 1e9, 13, 2, &err) == 0, "%s", err.msg);
    const int b_din = hn_op_buffer_index(bwd, "din");
    double *want = xmalloc(sizeof(double) * (size_t)counts[b_din]);
    backward_loop(bufs[hn_op_buffer_index(bwd, "argmax")], bufs[hn_op_buffer_index(bwd, "dout")], n, ch, h, w, k, avg,
                  layout, want);
    CHECK_INT(refs[b_din].n, counts[b_din]);
    CHECK(refs[b_din].index == NULL);
    int bad = 0;
    for (int64_t e = 0; e < counts[b_din] && refs[b_din].n == counts[b_din]; e++)
        bad += fabs(refs[b_din].values[e] - want[e]) > 1e-12 * (1 + fabs(want[e]));
    CHECK_MSG(bad == 0, "backward n=%d ch=%d %dx%d k=%d %s layout %d: %d of %lld wrong", n, ch, h, w, k,
              avg ? "avg" : "max", layout, bad, (long long)counts[b_din]);
    free(want);
    free_bufs(bwd, bufs, refs);
}

static void test_backward_reference(void) {
    for (size_t s = 0; s < HN_ARRAY_LEN(SHAPES); s++)
        for (int layout = 0; layout < 3; layout++)
            for (int avg = 0; avg < 2; avg++)
                check_backward(SHAPES[s][0], SHAPES[s][1], SHAPES[s][2], SHAPES[s][3], SHAPES[s][4], avg, layout);

    /* an argmax outside its window is refused, naming the element */
    double p[16];
    params(p, 1, 2, 6, 7, 3, 0, NCHW);
    int64_t counts[16];
    hn_err err;
    CHECK(bwd->shape(p, counts, &err) == 0);
    void **bufs = alloc_bufs(bwd, counts);
    bwd->generate(p, bufs, 3);
    int32_t *am = bufs[hn_op_buffer_index(bwd, "argmax")];
    for (int bad_value = 0; bad_value < 3; bad_value++) {
        const int32_t saved = am[3];
        /* element 3 is (c 0, oy 1, ox 1): its window is rows 3..5, columns 3..5 */
        am[3] = bad_value == 0 ? 0 : bad_value == 1 ? 3 * 7 + 6 : -1;
        hn_ref refs[16] = {{0}};
        CHECK(bwd->reference(p, (void *const *)bufs, refs, 1e9, 3, 1, &err) != 0);
        CHECK_CONTAINS(err.msg, "argmax element 3");
        for (int i = 0; i < bwd->n_buffers; i++) hn_ref_free(&refs[i]);
        am[3] = saved;
    }
    free_bufs(bwd, bufs, NULL);
}

/* ---------------------------------------------------------------------------------
 * Kernels on inputs the generator never makes: ties, NaN, -inf.
 */

static void test_kernel_ties(void) {
    const char *root = getenv("HARNESS_ROOT");
    if (!root) {
        fprintf(stderr, "HARNESS_ROOT not set: skipping the kernels on ties\n");
        return;
    }
    enum { N = 3, C = 5, H = 11, W = 14, K = 3, T = 32 };
    const int oh = H / K, ow = W / K, n_in = N * C * H * W, n_out = N * C * oh * ow;
    float *in = xmalloc(sizeof(float) * n_in), *out = xmalloc(sizeof(float) * n_out);
    int32_t *am = xmalloc(sizeof(int32_t) * n_out), *want_am = xmalloc(sizeof(int32_t) * n_out);
    double *want = xmalloc(sizeof(double) * n_out);
    uint64_t seed = 5;
    for (int i = 0; i < n_in; i++) {
        const uint64_t r = hn_rand_below(&seed, 12);
        in[i] = r == 0 ? NAN : r == 1 ? -INFINITY : (float)(r % 3);
    }
    for (int i = 0; i < 2 * W; i++) in[i] = -INFINITY;
    hn_backend *be = emu_backend(2, 60.0);
    static const char *const NAMES[] = {"pool2d_naive", "pool2d_rows"};
    for (int v = 0; v < 2; v++) {
        char *path = xasprintf("%s/kernels/pool2d/%s.cu", root, NAMES[v]);
        const char *defs[] = {"TILE_SIZE=32"};
        hn_module_image img;
        hn_err err;
        char *log = NULL;
        if (emu_compile_file(path, &NAMES[v], 1, defs, 1, &img, &log, &err) != 0) {
            CHECK_MSG(0, "%s: %s\n%s", NAMES[v], err.msg, log ? log : "");
            free(log);
            free(path);
            continue;
        }
        hn_kernel *kern = emu_load(be, &img, 0);
        hn_dptr d_in = emu_buf(be, in, sizeof(float) * n_in), d_out = emu_buf(be, NULL, sizeof(float) * n_out),
                d_am = emu_buf(be, NULL, sizeof(int32_t) * n_out);
        for (int layout = 0; layout < (v == 0 ? 3 : 1); layout++)
            for (int avg = 0; avg < 2; avg++) {
                int n = N, c = C, h = H, w = W, k = K, is_max = !avg, lay = layout;
                void *args[] = {&d_in, &d_out, &d_am, &n, &c, &h, &w, &k, &is_max, &lay};
                int rc = v == 0 ? emu_launch(be, kern, (n_out + T - 1) / T, 1, 1, T, 1, 1, 0, args, &err)
                                : emu_launch(be, kern, N * C * oh, (ow + T - 1) / T, 1, T, 1, 1,
                                             sizeof(float) * K * K * T, args, &err);
                CHECK_MSG(rc == 0, "%s: %s", NAMES[v], err.msg);
                emu_get(be, out, d_out, sizeof(float) * n_out);
                emu_get(be, am, d_am, sizeof(int32_t) * n_out);
                forward_loop(in, N, C, H, W, K, avg, layout, want, want_am);
                int bad = 0;
                for (int e = 0; e < n_out; e++) {
                    if (avg) {
                        const int both_nan = isnan(out[e]) && isnan(want[e]);
                        bad += !both_nan && !(out[e] == (float)want[e] || fabs(out[e] - want[e]) < 1e-6);
                    } else {
                        bad += isnan(want[e]) ? !isnan(out[e]) : out[e] != (float)want[e];
                        bad += am[e] != want_am[e];
                    }
                }
                CHECK_MSG(bad == 0, "%s layout %d %s: %d of %d outputs wrong", NAMES[v], layout, avg ? "avg" : "max",
                          bad, n_out);
            }
        be->ops->free(be, d_in);
        be->ops->free(be, d_out);
        be->ops->free(be, d_am);
        be->ops->kernel_free(be, kern);
        hn_module_image_free(&img);
        free(path);
    }
    hn_backend_destroy(be);
    free(in);
    free(out);
    free(am);
    free(want_am);
    free(want);
}

/* ---------------------------------------------------------------------------------
 * Kernels, through the harness binary.
 */

static const char *harness_bin(void) {
    return getenv("HARNESS_BIN");
}

/* Runs the harness with args (NULL-terminated); its exit status, output into out. */
static int run_harness(hn_sb *out, const char *const *args) {
    const char *argv[32] = {harness_bin()};
    int n = 1;
    for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
    argv[n] = NULL;
    hn_err err;
    hn_sb_reset(out);
    int rc = hn_spawn((char *const *)argv, HN_SPAWN_STDOUT | HN_SPAWN_STDERR, out, &err);
    if (rc < 0) fprintf(stderr, "cannot start %s: %s\n", argv[0], err.msg);
    return rc;
}

static char *tmp_dir(void) {
    const char *t = getenv("HARNESS_TMP");
    /* one folder, overwritten by each run (--force), so runs leave no litter */
    char *dir = xasprintf("%s/test_pool2d", t && *t ? t : "/tmp");
    hn_err err;
    if (hn_mkdirs(dir, &err) != 0) fprintf(stderr, "%s\n", err.msg);
    return dir;
}

static const char *const LAYOUT_ARG = "\"int: layout == \\\"NCHW\\\" ? 0 : layout == \\\"NHWC\\\" ? 1 : 2\"";

/* A config over every layout and mode, odd sizes, 1-sized dimensions and k up
 * to 3, for `op` with its two variants; written to path. */
static void write_config(const char *path, const char *root, int backward) {
    hn_sb s;
    hn_sb_init(&s);
    hn_sb_addf(&s,
               "{\"name\": \"test_%s\", \"op\": \"%s\",\n"
               " \"axes\": {\"layout\": [\"NCHW\", \"NHWC\", \"CHWN\"], \"mode\": [\"max\", \"avg\"], \"n\": [1, 2],\n"
               "          \"channels\": [1, 3], \"h\": [1, 7], \"w\": [1, 9], \"k\": [1, 2, 3]},\n"
               " \"where\": [\"k <= h\", \"k <= w\"],\n"
               " \"timing\": {\"repeat\": 1, \"warmup\": 0},\n"
               " \"check\": {\"atol\": 1e-6, \"rtol\": 1e-5, \"min_match\": 1.0},\n"
               " \"defaults\": {\"defines\": {\"TILE_SIZE\": 32}, \"block\": [\"TILE_SIZE\"],\n"
               "   \"include_dirs\": [\"%s/kernels/pool2d\"],\n",
               backward ? "bwd" : "fwd", backward ? "pool2d_backward" : "pool2d", root);
    if (backward)
        hn_sb_addf(&s,
                   "   \"args\": [\"argmax\", \"dout\", \"din\", \"n\", \"channels\", \"h\", \"w\", \"k\", "
                   "\"int: mode == \\\"max\\\"\", %s]},\n"
                   " \"variants\": [\n"
                   "  {\"file\": \"%s/kernels/pool2d_backward/pool2d_backward_gather.cu\", \"kernel\": "
                   "\"pool2d_backward_gather\", \"grid\": [\"ceil_div(n * channels * h * w, TILE_SIZE)\"]},\n"
                   "  {\"file\": \"%s/kernels/pool2d_backward/pool2d_backward_scatter.cu\", \"kernel\": "
                   "\"pool2d_backward_scatter\",\n"
                   "   \"grid\": [\"ceil_div(n * channels * (h / k) * (w / k), TILE_SIZE)\"]}]}\n",
                   LAYOUT_ARG, root, root);
    else
        hn_sb_addf(&s,
                   "   \"args\": [\"in\", \"out\", \"argmax\", \"n\", \"channels\", \"h\", \"w\", \"k\", "
                   "\"int: mode == \\\"max\\\"\", %s]},\n"
                   " \"variants\": [\n"
                   "  {\"file\": \"%s/kernels/pool2d/pool2d_naive.cu\", \"kernel\": \"pool2d_naive\",\n"
                   "   \"grid\": [\"ceil_div(n * channels * (h / k) * (w / k), TILE_SIZE)\"]},\n"
                   "  {\"file\": \"%s/kernels/pool2d/pool2d_rows.cu\", \"kernel\": \"pool2d_rows\",\n"
                   "   \"grid\": [\"n * channels * (h / k)\", \"ceil_div(w / k, TILE_SIZE)\"],\n"
                   "   \"shared_bytes\": \"4 * k * k * TILE_SIZE\", \"where\": \"layout == \\\"NCHW\\\"\"}]}\n",
                   LAYOUT_ARG, root, root);
    hn_err err;
    if (hn_write_file(path, s.buf, s.len, &err) != 0) CHECK_MSG(0, "%s", err.msg);
    hn_sb_free(&s);
}

/* Every row of the results is ok, or skipped by a where naming the layout;
 * returns the number of ok rows of `variant`. */
static int ok_rows(const char *csv, const char *variant, int *others_bad) {
    hn_table t;
    hn_err err;
    if (hn_table_load(csv, &t, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return 0;
    }
    int ok = 0;
    for (int r = 0; r < t.n_rows; r++) {
        const char *status = hn_table_get(&t, r, "status"), *v = hn_table_get(&t, r, "variant");
        if (strcmp(status, "ok") == 0) {
            ok += strcmp(v, variant) == 0;
            continue;
        }
        if (strcmp(status, "skipped") == 0 && strstr(hn_table_get(&t, r, "reason"), "layout")) continue;
        if (*others_bad < 5)
            fprintf(stderr, "row %d (%s, %s): %s: %s\n", r, hn_table_get(&t, r, "label"), v, status,
                    hn_table_get(&t, r, "reason"));
        (*others_bad)++;
    }
    hn_table_free(&t);
    return ok;
}

static void test_kernels(void) {
    const char *root = getenv("HARNESS_ROOT");
    if (!harness_bin() || !root) {
        fprintf(stderr, "HARNESS_BIN or HARNESS_ROOT not set: the kernel checks need the harness binary\n");
        return;
    }
    char *dir = tmp_dir();
    hn_sb out;
    hn_sb_init(&out);
    /* 24 (layout, mode, n, channels) x 6 (h, w, k) = 144 cases per operator */
    for (int backward = 0; backward < 2; backward++) {
        char *cfg = xasprintf("%s/%s.json", dir, backward ? "bwd" : "fwd");
        char *csv = xasprintf("%s/%s.csv", dir, backward ? "bwd" : "fwd");
        write_config(cfg, root, backward);
        const char *args[] = {"run", cfg, "--backend", "emu", "--out", csv, "--quiet", "--force", NULL};
        int rc = run_harness(&out, args);
        CHECK_MSG(rc == 0, "harness run %s exited %d:\n%s", cfg, rc, out.buf);
        int bad = 0;
        const char *v1 = backward ? "pool2d_backward_gather" : "pool2d_naive",
                   *v2 = backward ? "pool2d_backward_scatter" : "pool2d_rows";
        CHECK_INT(ok_rows(csv, v1, &bad), 144);
        CHECK_INT(ok_rows(csv, v2, &bad), backward ? 144 : 48);
        CHECK_MSG(bad == 0, "%d rows of %s are neither ok nor skipped by layout", bad / 2, csv);
        free(cfg);
        free(csv);
    }

    /* harness debug on each kernel of the shipped configs, both modes */
    static const char *const DEBUG[][2] = {
        {"configs/pool2d_sweep.json", "pool2d_naive"},
        {"configs/pool2d_sweep.json", "pool2d_rows"},
        {"configs/pool2d_backward_sweep.json", "pool2d_backward_gather"},
        {"configs/pool2d_backward_sweep.json", "pool2d_backward_scatter"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(DEBUG); i++)
        for (int avg = 0; avg < 2; avg++) {
            char *cfg = xasprintf("%s/%s", root, DEBUG[i][0]);
            const char *set = avg ? "n=2,channels=2,h=7,w=9,k=3,mode=avg" : "n=1,channels=3,h=5,w=7,k=2,mode=max";
            const char *args[] = {"debug", cfg, "--backend", "emu", "--kernel", DEBUG[i][1], "--set", set,
                                  "--out", dir, NULL};
            int rc = run_harness(&out, args);
            CHECK_MSG(rc == 0, "harness debug %s --kernel %s exited %d:\n%s", cfg, DEBUG[i][1], rc, out.buf);
            CHECK_CONTAINS(out.buf, "verdict: output matches the reference");
            CHECK_CONTAINS(out.buf, avg ? "mode=avg" : "mode=max"); /* the kernel's DEBUG line */
            free(cfg);
        }

    /* NVRTC compiles every variant of the shipped configs for sm_90 (no GPU) */
    static const char *const CONFIGS[] = {"pool2d_sweep", "pool2d_backward_sweep", "pool2d_layouts"};
    for (size_t i = 0; i < HN_ARRAY_LEN(CONFIGS); i++) {
        char *cfg = xasprintf("%s/configs/%s.json", root, CONFIGS[i]);
        const char *args[] = {"compile", cfg, "--arch", "sm_90", NULL};
        int rc = run_harness(&out, args);
        CHECK_MSG(rc == 0, "harness compile %s exited %d:\n%s", cfg, rc, out.buf);
        CHECK_CONTAINS(out.buf, i == 1 ? "pool2d_backward_scatter" : "pool2d_rows");
        free(cfg);
    }

    /* a window larger than the image: the operator's message, naming k and h */
    char *bad_cfg = xasprintf("%s/bad.json", dir);
    char *text = xasprintf("{\"op\": \"pool2d\", \"axes\": {\"channels\": [2], \"img_size\": [8], \"k\": [9]},"
                           " \"defaults\": {\"block\": [32], \"grid\": [1], \"args\": [\"in\", \"out\"]},"
                           " \"variants\": [{\"file\": \"%s/kernels/pool2d/pool2d_naive.cu\", \"kernel\": "
                           "\"pool2d_naive\"}]}",
                           root);
    hn_err err;
    CHECK(hn_write_file(bad_cfg, text, strlen(text), &err) == 0);
    const char *args[] = {"list", bad_cfg, NULL};
    run_harness(&out, args);
    CHECK_CONTAINS(out.buf, "pool2d: k = 9 is larger than h = 8");
    free(text);
    free(bad_cfg);
    hn_sb_free(&out);
    free(dir);
}

/* A baseline row is checked on the outputs the baseline declares, as a variant
 * is on those it binds: on the emulator, a correct `out` and an argmax left
 * poisoned pass for cuDNN's pooling baseline (which writes no argmax) and fail
 * for a check of every output. */
static void test_baseline_checked_on_its_outputs(void) {
    char *path = xasprintf("%s/configs/pool2d_sweep.json", emu_root());
    hn_plan *p = NULL;
    hn_err err;
    CHECK_MSG(hn_plan_load(path, -1, &p, &err) == 0, "%s", err.msg);
    free(path);
    if (!p) return;
    hn_case c;
    CHECK_MSG(hn_plan_make_case(p, "n=2,channels=3,h=7,w=9,k=2,mode=max", &c, &err) == 0, "%s", err.msg);
    hn_backend *be = emu_backend(1, 10);
    hn_workload w;
    CHECK_MSG(hn_workload_create(&w, p, &c, be, 1e9, &err) == 0, "%s", err.msg);
    const int out = hn_op_buffer_index(fwd, "out");
    CHECK(hn_poison_outputs(&w, 0, &err) == 0);
    float *vals = w.host[out];
    CHECK(w.refs[out].index == NULL && w.refs[out].n == w.counts[out]);
    for (int64_t i = 0; i < w.counts[out]; i++) vals[i] = (float)w.refs[out].values[i];
    CHECK(be->ops->upload(be, w.dev[out], vals, (size_t)w.counts[out] * sizeof(float), &err) == 0);
    hn_row_check rc;
    CHECK(hn_check_outputs(&w, NULL, &fwd->baselines[0], &rc, &err) == 0);
    CHECK(rc.passed);
    CHECK_INT(rc.n_outputs, 1);
    CHECK(hn_check_outputs(&w, NULL, NULL, &rc, &err) == 0);
    CHECK(!rc.passed);
    CHECK_INT(rc.n_outputs, 2);
    CHECK_STR(fwd->buffers[rc.worst_buffer].name, "argmax");
    hn_workload_free(&w);
    hn_case_release(&c);
    hn_backend_destroy(be);
    hn_plan_free(p);
}

int main(void) {
    fwd = hn_op_find("pool2d");
    bwd = hn_op_find("pool2d_backward");
    CHECK(fwd != NULL && bwd != NULL);
    if (!fwd || !bwd) return hn_test_exit();
    CHECK_INT(fwd->n_params, bwd->n_params);
    test_counts_labels_shapes();
    test_forward_reference();
    test_generator();
    test_backward_reference();
    test_kernel_ties();
    test_kernels();
    test_baseline_checked_on_its_outputs();
    return hn_test_exit();
}
