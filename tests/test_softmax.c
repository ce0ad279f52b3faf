/*
 * test_softmax.c: the softmax_cross_entropy operator: counts, labels, shapes
 * and shape errors; the generator (row offsets that overflow exp in float,
 * labels in range); the reference against a loop written here from the
 * definition (libm exp and log, no max subtracted: fine in double for these
 * logits) on odd and 1-sized shapes, one thread against two; the kernels of
 * configs/softmax_cross_entropy_sweep.json on the emulator (run, debug, and the
 * module-scope loss accumulator reset across launches); and a planted kernel
 * that skips the max subtraction, which the check must fail.
 */
#define _GNU_SOURCE
#define HN_TEST_SCRATCH "softmax"
#include <stdint.h>

#include "hn_test.h"
#include "hn_test_files.h"
#include "hn_test_sweep.h"
#include "ops/op.h"

static const hn_op *op;
enum { B_LOGITS, B_LABELS, B_LOSS, B_DLOGITS };

static void test_counts_and_errors(void) {
    double p[4] = {64, 1000};
    int64_t counts[8], dims[4];
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    CHECK_INT(counts[B_LOGITS], 64000);
    CHECK_INT(counts[B_LABELS], 64);
    CHECK_INT(counts[B_LOSS], 1);
    CHECK_INT(counts[B_DLOGITS], 64000);
    CHECK(op->buffers[B_LABELS].dtype == HN_DT_I32);
    CHECK_STR(op->buffers[B_LOSS].name, "loss");
    CHECK_NEAR(op->flop(p), 5.0 * 64000, 0);
    CHECK_NEAR(op->bytes(p), 4.0 * (2 * 64000 + 64 + 1), 0);
    CHECK_INT(op->dims(p, B_DLOGITS, dims), 2);
    CHECK(dims[0] == 64 && dims[1] == 1000);
    CHECK_INT(op->dims(p, B_LOSS, dims), 1);
    CHECK_INT(dims[0], 1);
    char label[64];
    op->label(p, label, sizeof label);
    CHECK_STR(label, "b:64, classes:1000");
    p[0] = 0;
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "softmax_cross_entropy: batch = 0");
    p[0] = 4, p[1] = -3;
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "classes = -3");
    p[0] = 1, p[1] = 1 << 30; /* the largest size allowed */
    CHECK_MSG(op->shape(p, counts, &err) == 0, "%s", err.msg);
    p[0] = (1 << 30) + 1.0, p[1] = 1;
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "batch = 1.07374e+09 must be");
    p[0] = 65536, p[1] = 65536;
    CHECK(op->shape(p, counts, &err) != 0);
    CHECK_CONTAINS(err.msg, "more than 2^31-1");
}

static void **make_bufs(const double *p, int64_t *counts, uint64_t seed) {
    hn_err err;
    CHECK(op->shape(p, counts, &err) == 0);
    void **bufs = xcalloc(4, sizeof *bufs);
    for (int i = 0; i < 4; i++) bufs[i] = xcalloc((size_t)counts[i] + 1, 4);
    op->generate(p, bufs, seed);
    return bufs;
}

static void free_bufs(void **bufs) {
    for (int i = 0; i < 4; i++) free(bufs[i]);
    free(bufs);
}

static void test_generator(void) {
    double p[4] = {8, 100};
    int64_t counts[8];
    void **a = make_bufs(p, counts, 3), **b = make_bufs(p, counts, 3);
    CHECK(memcmp(a[0], b[0], (size_t)counts[0] * 4) == 0 && memcmp(a[1], b[1], (size_t)counts[1] * 4) == 0);
    const float *x = a[B_LOGITS];
    const int32_t *labels = a[B_LABELS];
    /* rows 1 and 5 sit near +96 (exp overflows float there), rows 0 and 4 near -96 */
    float max1 = -1e30f, max0 = -1e30f;
    for (int c = 0; c < 100; c++) {
        max1 = x[100 + c] > max1 ? x[100 + c] : max1;
        max0 = x[c] > max0 ? x[c] : max0;
    }
    CHECK_MSG(max1 > 89 && max0 < -80, "row maxima %g and %g", max1, max0);
    for (int b = 0; b < 8; b++) CHECK(labels[b] >= 0 && labels[b] < 100);
    /* every row's mean is its offset, -96, 96, -32, 32 in turn (3 N(0, 1) over 100
     * values: the mean is within 1.5 of it) */
    static const double OFFSET[4] = {-96, 96, -32, 32};
    for (int b = 0; b < 8; b++) {
        double mean = 0, sq = 0;
        for (int c = 0; c < 100; c++) mean += x[b * 100 + c] / 100.0;
        for (int c = 0; c < 100; c++) sq += (x[b * 100 + c] - mean) * (x[b * 100 + c] - mean) / 99.0;
        CHECK_MSG(fabs(mean - OFFSET[b % 4]) < 1.5, "row %d: mean %g", b, mean);
        CHECK_MSG(sqrt(sq) > 2 && sqrt(sq) < 4, "row %d: standard deviation %g, want about 3", b, sqrt(sq));
    }
    free_bufs(a), free_bufs(b);
    /* Labels change with the seed (seeds 2 and 3 give different ones: 8 uniform
     * labels of 100 agree by chance with probability 1e-16). */
    void **s2 = make_bufs(p, counts, 2), **s3 = make_bufs(p, counts, 3);
    CHECK(memcmp(s2[B_LABELS], s3[B_LABELS], (size_t)counts[B_LABELS] * 4) != 0);
    free_bufs(s2), free_bufs(s3);
}

static void check_against_loop(int batch, int classes, int threads) {
    double p[4] = {batch, classes};
    int64_t counts[8];
    hn_err err;
    void **bufs = make_bufs(p, counts, 11);
    hn_ref refs[4] = {{0}};
    CHECK(op->reference(p, bufs, refs, 1e9, 11, threads, &err) == 0);
    const float *x = bufs[B_LOGITS];
    const int32_t *labels = bufs[B_LABELS];
    double loss = 0, worst = 0;
    for (int b = 0; b < batch; b++) {
        /* the definition, straight: exp of logits near +-100 is fine in double */
        double s = 0;
        for (int c = 0; c < classes; c++) s += exp((double)x[b * classes + c]);
        loss += -log(exp((double)x[b * classes + labels[b]]) / s);
        for (int c = 0; c < classes; c++) {
            double want = (exp((double)x[b * classes + c]) / s - (c == labels[b])) / batch;
            double d = fabs(refs[B_DLOGITS].values[b * classes + c] - want);
            if (d > worst) worst = d;
        }
    }
    loss /= batch;
    CHECK(refs[B_DLOGITS].n == counts[B_DLOGITS] && refs[B_DLOGITS].index == NULL);
    CHECK_INT(refs[B_LOSS].n, 1);
    CHECK_MSG(worst < 1e-15, "b %d classes %d: dlogits worst %g", batch, classes, worst);
    CHECK_MSG(fabs(refs[B_LOSS].values[0] - loss) <= 1e-12 * fabs(loss) + 1e-15, "b %d classes %d: loss %.17g, want %.17g",
              batch, classes, refs[B_LOSS].values[0], loss);
    if (classes == 1) CHECK(refs[B_LOSS].values[0] == 0); /* one class: p = 1, loss 0 */
    for (int i = 0; i < 4; i++) hn_ref_free(&refs[i]);
    free_bufs(bufs);
}

static void test_reference(void) {
    check_against_loop(1, 1, 1);
    check_against_loop(3, 1, 1);
    check_against_loop(1, 7, 1);
    check_against_loop(5, 2, 2);
    check_against_loop(13, 1000, 2);
    check_against_loop(255, 33, 1);
    /* enough logits for two threads: they agree with one */
    double p[4] = {1100, 2000};
    int64_t counts[8];
    hn_err err;
    void **bufs = make_bufs(p, counts, 5);
    hn_ref r1[4] = {{0}}, r2[4] = {{0}};
    CHECK(op->reference(p, bufs, r1, 1e9, 5, 1, &err) == 0);
    CHECK(op->reference(p, bufs, r2, 1e9, 5, 2, &err) == 0);
    CHECK(memcmp(r1[B_DLOGITS].values, r2[B_DLOGITS].values, sizeof(double) * (size_t)counts[B_DLOGITS]) == 0);
    CHECK_NEAR(r1[B_LOSS].values[0], r2[B_LOSS].values[0], 1e-12 * fabs(r1[B_LOSS].values[0]));
    for (int i = 0; i < 4; i++) hn_ref_free(&r1[i]), hn_ref_free(&r2[i]);
    free_bufs(bufs);
}

/* The kernels. The row-block kernel's module-scope accumulator must be back at
 * 0 after every launch: a run launches one loaded module several times (warm-up,
 * samples) and checks the output after the warm-up and again after timing. */
static void test_kernels_on_emu(void) {
    CHECK(hn_test_sweep_emu("configs/softmax_cross_entropy_sweep.json", "0.00005") >= 10);
    hn_test_debug_emu("configs/softmax_cross_entropy_sweep.json", "softmax_xent_single_block", "batch=3,classes=7");
    hn_test_debug_emu("configs/softmax_cross_entropy_sweep.json", "softmax_xent_row_block[BLOCK=128]",
                      "batch=5,classes=300");
}

/* A kernel without the max subtracted: exp overflows on the +96 rows, so the
 * check must fail it (exit 1, rows `mismatch`). */
static void test_unstable_kernel_fails(void) {
    static const char *const KERNEL =
        "__global__ void softmax_unstable(const float *logits, const int *labels, float *loss, float *dlogits,\n"
        "                                 int batch, int classes) {\n"
        "    if (blockIdx.x != 0 || threadIdx.x != 0) return;\n"
        "    float total = 0;\n"
        "    for (int b = 0; b < batch; b++) {\n"
        "        const float *x = logits + (size_t)b * classes;\n"
        "        float s = 0;\n"
        "        for (int c = 0; c < classes; c++) s += expf(x[c]);\n"
        "        total += logf(s) - x[labels[b]];\n"
        "        for (int c = 0; c < classes; c++)\n"
        "            dlogits[(size_t)b * classes + c] = (expf(x[c]) / s - (c == labels[b])) / batch;\n"
        "    }\n"
        "    *loss = total / batch;\n"
        "}\n";
    char *dir = hn_test_scratch("unstable");
    char *cu = xasprintf("%s/softmax_unstable.cu", dir), *cfg = xasprintf("%s/unstable.json", dir),
         *out = xasprintf("%s/unstable.csv", dir);
    hn_write_file(cu, KERNEL, strlen(KERNEL), NULL);
    const char *CONFIG = "{\"op\": \"softmax_cross_entropy\", \"axes\": {\"batch\": [4], \"classes\": [10]},"
                         " \"variants\": [{\"file\": \"softmax_unstable.cu\", \"kernel\": \"softmax_unstable\","
                         " \"block\": [1], \"grid\": [1], \"args\": [\"logits\", \"labels\", \"loss\", \"dlogits\","
                         " \"batch\", \"classes\"]}]}";
    hn_write_file(cfg, CONFIG, strlen(CONFIG), NULL);
    const char *args[] = {"run", cfg, "--backend", "emu", "--out", out, "--force", "--quiet", "--max-samples", "1", NULL};
    char *so, *se;
    int rc = hn_test_run_harness(NULL, args, &so, &se);
    CHECK_MSG(rc == 1, "the unstable kernel's run exited %d:\n%s%s", rc, so, se);
    hn_table t = {0};
    hn_err err;
    if (hn_table_load(out, &t, &err) == 0) {
        CHECK_INT(t.n_rows, 1);
        if (t.n_rows == 1) CHECK_STR(hn_table_get(&t, 0, "status"), "mismatch");
        hn_table_free(&t);
    } else {
        CHECK_MSG(0, "%s", err.msg);
    }
    free(so), free(se), free(cu), free(cfg), free(out), free(dir);
}

int main(void) {
    op = hn_op_find("softmax_cross_entropy");
    CHECK(op != NULL);
    if (!op) return hn_test_exit();
    test_counts_and_errors();
    test_generator();
    test_reference();
    if (getenv("HARNESS_BIN")) {
        test_kernels_on_emu();
        test_unstable_kernel_fails();
    } else {
        fprintf(stderr, "HARNESS_BIN not set: the kernels were not run on the emulator\n");
    }
    hn_test_cleanup();
    return hn_test_exit();
}
