/*
 * softmax_cross_entropy/op.c: the classifier's loss and its gradient, in one
 * operator (torch.nn.functional.cross_entropy(logits, labels), reduction
 * 'mean', and what its autograd gives for the logits):
 *
 *   logits   (batch, classes)  float32
 *   labels   (batch)           int32, each in [0, classes)
 *   loss     (1)               float32  mean over rows of -log softmax(logits[b])[labels[b]]
 *   dlogits  (batch, classes)  float32  (softmax(logits[b]) - onehot(labels[b])) / batch
 *
 *   m_b = max_c logits[b][c],  s_b = sum_c exp(logits[b][c] - m_b)
 *   loss          = (1 / batch) sum_b (m_b + log s_b - logits[b][labels[b]])
 *   dlogits[b][c] = (exp(logits[b][c] - m_b) / s_b - (c == labels[b])) / batch
 *
 * logits are 3 N(0, 1) plus a per-row offset cycling through -96, 96, -32, 32
 * (row 0 first), so every case has rows whose exp overflows (e^96 > FLT_MAX) or
 * underflows without the max subtracted: a kernel must be numerically stable.
 * labels are uniform. The reference is fp64 (a vectorized exp, ../relu/eltwise.h)
 * on threads over blocks of rows; the loss sums the rows' terms in double.
 */
#include <math.h>
#include <stdlib.h>

#include "../relu/eltwise.h"

static const hn_op_param PARAMS[] = {
    {"batch", 'i', NULL, "rows (samples)", NULL},
    {"classes", 'i', NULL, "columns (classes, logits per sample)", NULL},
};

enum { P_BATCH, P_CLASSES };
enum { B_LOGITS, B_LABELS, B_LOSS, B_DLOGITS, B_COUNT };

static const hn_op_buffer BUFFERS[] = {
    {"logits", HN_DT_F32, HN_BUF_IN, "(batch, classes)"},
    {"labels", HN_DT_I32, HN_BUF_IN, "(batch)"},
    {"loss", HN_DT_F32, HN_BUF_OUT, "(1)"},
    {"dlogits", HN_DT_F32, HN_BUF_OUT, "(batch, classes)"},
};

static int sce_shape(const double *p, int64_t *counts, hn_err *err) {
    for (int i = P_BATCH; i <= P_CLASSES; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30 && p[i] == (double)(int)p[i]))
            return hn_errf(err, "softmax_cross_entropy: %s = %g must be a whole number between 1 and 2^30",
                           PARAMS[i].name, p[i]);
    const double n = p[P_BATCH] * p[P_CLASSES];
    if (n > 2147483647.0)
        return hn_errf(err, "softmax_cross_entropy: batch * classes = %g * %g = %.0f logits (more than 2^31-1; the "
                            "kernels index with int)",
                       p[P_BATCH], p[P_CLASSES], n);
    counts[B_LOGITS] = counts[B_DLOGITS] = (int64_t)n;
    counts[B_LABELS] = (int64_t)p[P_BATCH];
    counts[B_LOSS] = 1;
    return 0;
}

/* Per logit: the max, the subtraction, exp (counted as one), the sum and the
 * scaling; per row a log and the loss term are left out. */
static double sce_flop(const double *p) {
    return 5.0 * p[P_BATCH] * p[P_CLASSES];
}

static double sce_bytes(const double *p) {
    return 4.0 * (2.0 * p[P_BATCH] * p[P_CLASSES] + p[P_BATCH] + 1);
}

static int sce_dims(const double *p, int buffer, int64_t dims[4]) {
    switch (buffer) {
    case B_LOGITS:
    case B_DLOGITS: dims[0] = (int64_t)p[P_BATCH], dims[1] = (int64_t)p[P_CLASSES]; return 2;
    case B_LABELS: dims[0] = (int64_t)p[P_BATCH]; return 1;
    default: dims[0] = 1; return 1;
    }
}

static void sce_label(const double *p, char *buf, size_t size) {
    snprintf(buf, size, "b:%d, classes:%d", (int)p[P_BATCH], (int)p[P_CLASSES]);
}

/* The offset of row b's logits (see the top). */
static float row_offset(int64_t b) {
    static const float OFFSETS[4] = {-96.0f, 96.0f, -32.0f, 32.0f};
    return OFFSETS[b % 4];
}

static void sce_generate(const double *p, void *const *bufs, uint64_t seed) {
    const int64_t batch = (int64_t)p[P_BATCH], classes = (int64_t)p[P_CLASSES];
    float *logits = bufs[B_LOGITS];
    hn_fill_randn_f32(logits, batch * classes, seed * 2 + 1);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t c = 0; c < classes; c++) logits[b * classes + c] = 3.0f * logits[b * classes + c] + row_offset(b);
    hn_fill_uniform_i32(bufs[B_LABELS], batch, 0, (int32_t)classes, seed * 2 + 2);
}

/* ------------------------------------------------------------------------------------
 * The reference: blocks of SCE_BLOCK rows on threads (hn_ref_parallel), each
 * block's sum of loss terms kept apart and the blocks' sums added in order, so
 * the loss is the same whatever the threads.
 */

enum { SCE_BLOCK = 8 };

typedef struct {
    const float *logits;
    const int32_t *labels;
    double *dlogits; /* the reference's values, (batch, classes) */
    double *block_sums;
    int64_t classes, batch;
} sce_job;

/* Blocks [begin, end): per row the max (in float), exp(x - max) and their sum
 * in one pass (eltwise_exp_sum), then the scaling and the label's -1 / batch. */
static void sce_blocks(void *ctx, int64_t begin, int64_t end) {
    const sce_job *j = ctx;
    const int64_t classes = j->classes;
    const double inv_batch = 1.0 / (double)j->batch;
    for (int64_t blk = begin; blk < end; blk++) {
        double sum_terms = 0;
        const int64_t hi = (blk + 1) * SCE_BLOCK < j->batch ? (blk + 1) * SCE_BLOCK : j->batch;
        for (int64_t b = blk * SCE_BLOCK; b < hi; b++) {
            const float *x = j->logits + b * classes;
            double *d = j->dlogits + b * classes;
            const float m = eltwise_max(x, classes);
            const double s = eltwise_exp_sum(d, x, m, classes);
            const int32_t label = j->labels[b];
            sum_terms += (double)m + log(s) - (double)x[label];
            const double scale = 1.0 / (s * (double)j->batch), at_label = d[label] * scale - inv_batch;
            eltwise_scale(d, d, scale, classes);
            d[label] = at_label;
        }
        j->block_sums[blk] = sum_terms;
    }
}

static int sce_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                         int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    const int64_t batch = (int64_t)p[P_BATCH], classes = (int64_t)p[P_CLASSES];
    const int64_t blocks = (batch + SCE_BLOCK - 1) / SCE_BLOCK;
    hn_ref *dl = &refs[B_DLOGITS], *loss = &refs[B_LOSS];
    dl->n = batch * classes;
    dl->values = hn_ref_alloc_values(dl->n);
    snprintf(dl->method, sizeof dl->method, "full");
    sce_job job = {bufs[B_LOGITS], bufs[B_LABELS], dl->values, xmalloc(sizeof(double) * (size_t)blocks), classes,
                   batch};
    /* a thread takes 2^18 logits at least (0.2 ms of exp) */
    hn_ref_parallel(blocks, 1 + ((int64_t)1 << 18) / (SCE_BLOCK * classes), threads, sce_blocks, &job);
    double total = 0;
    for (int64_t blk = 0; blk < blocks; blk++) total += job.block_sums[blk];
    free(job.block_sums);
    loss->n = 1;
    loss->values = xmalloc(sizeof(double));
    loss->values[0] = total / (double)batch;
    snprintf(loss->method, sizeof loss->method, "full");
    return 0;
}

static const char *const BENCH[] = {"batch=1024,classes=1000", "batch=255,classes=10007", NULL};

const hn_op hn_op_softmax_cross_entropy = {
    .name = "softmax_cross_entropy",
    .doc = "mean cross-entropy of softmax(logits) against integer labels, and its gradient "
           "(torch.nn.functional.cross_entropy)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = sce_shape,
    .flop = sce_flop,
    .bytes = sce_bytes,
    .dims = sce_dims,
    .label = sce_label,
    .generate = sce_generate,
    .reference = sce_reference,
};
