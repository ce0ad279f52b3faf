/*
 * attention/op.c: scaled dot-product attention, forward
 * (torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
 * scale=scale)), with each query row's log-sum-exp, which FlashAttention
 * kernels keep for the backward pass (buffers and formula: attention.h;
 * docs/ops/attention.md).
 *
 * A kernel is checked on the outputs it is given: one that writes out alone is
 * checked on out (as layernorm's y without mean and rstd).
 *
 * Inputs: q, k and v are N(0, 1), except that k's column 0 is shifted by
 * ATTN_SHIFT and q's column 0 is set so that query row r's scores carry an
 * offset cycling through 96, 0, -120, 32 (row 0 first, rows counted over every
 * slice): q[r][0] = offset / (scale * ATTN_SHIFT). A row's offset is the same
 * for every key, so softmax does not see it, but exp of the scores overflows
 * float (e^96 > FLT_MAX) or underflows to 0 (e^-120) without the row's max
 * subtracted: only a numerically stable kernel passes, and lse carries the
 * offset. The other columns give the scores a spread of about one unit (at
 * the default scale), the shifted column of k one of |offset| / ATTN_SHIFT.
 *
 * The reference (ref.c) is fp64, blocked over keys with the online softmax,
 * on threads; above the budget, whole query rows are checked (the first, the
 * last and seeded random ones).
 */
#include <math.h>
#include <stdlib.h>

#include "../linear/linear.h"
#include "attention.h"

/* The shift of k's column 0 (see above). */
#define ATTN_SHIFT 64.0f

static const hn_op_param PARAMS[] = {
    {"batch", 'i', "1", "batches", NULL},
    {"heads", 'i', "1", "heads (each (batch, head) slice is independent)", NULL},
    {"t", 'i', NULL, "queries per slice (the query sequence length)", NULL},
    {"s", 'i', "t", "keys and values per slice (the key sequence length)", NULL},
    {"d", 'i', NULL, "the head dimension (of q, k, v and out)", NULL},
    {"causal", 'i', "0", "1: query i sees keys j <= i only (torch's is_causal, top-left diagonal)", NULL},
    {"scale", 'f', "1.0 / sqrt(max(d, 1))", "the scores' factor (1/sqrt(d); max: d < 1 reaches the shape check)", NULL},
};

static const hn_op_buffer BUFFERS[] = {
    {"q", HN_DT_F32, HN_BUF_IN, "(batch, heads, t, d)"},   {"k", HN_DT_F32, HN_BUF_IN, "(batch, heads, s, d)"},
    {"v", HN_DT_F32, HN_BUF_IN, "(batch, heads, s, d)"},   {"out", HN_DT_F32, HN_BUF_OUT, "(batch, heads, t, d)"},
    {"lse", HN_DT_F32, HN_BUF_OUT, "(batch, heads, t)"},
};

void attn_params(const double *p, attn_dims *a) {
    a->bh = (int64_t)p[ATTN_BATCH] * (int64_t)p[ATTN_HEADS];
    a->t = (int64_t)p[ATTN_T], a->s = (int64_t)p[ATTN_S], a->d = (int64_t)p[ATTN_D];
    a->causal = p[ATTN_CAUSAL] != 0;
    a->scale = (float)p[ATTN_SCALE];
}

double attn_pairs(const attn_dims *a) {
    const double t = (double)a->t, s = (double)a->s;
    if (!a->causal) return t * s;
    /* rows i < s see i + 1 keys, the others all s */
    return t <= s ? t * (t + 1) / 2 : s * (s + 1) / 2 + (t - s) * s;
}

static int attention_shape(const double *p, int64_t *counts, hn_err *err) {
    for (int i = ATTN_BATCH; i <= ATTN_D; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30 && p[i] == (double)(int)p[i]))
            return hn_errf(err, "attention: %s = %g must be a whole number between 1 and 2^30", PARAMS[i].name, p[i]);
    if (p[ATTN_CAUSAL] != 0 && p[ATTN_CAUSAL] != 1)
        return hn_errf(err, "attention: causal = %g must be 0 (every key) or 1 (keys j <= i)", p[ATTN_CAUSAL]);
    if (!isfinite(p[ATTN_SCALE]) || !isfinite((float)p[ATTN_SCALE]))
        return hn_errf(err, "attention: scale = %g is not a finite float32", p[ATTN_SCALE]);
    /* q and out: bh t d; k and v: bh s d; lse: bh t */
    const double bh = p[ATTN_BATCH] * p[ATTN_HEADS];
    static const int LEN[3] = {ATTN_T, ATTN_S, ATTN_T};
    static const char *const WHAT[3] = {"q and out", "k and v", "lse"};
    for (int i = 0; i < 3; i++) {
        const double n = bh * p[LEN[i]] * (i < 2 ? p[ATTN_D] : 1);
        if (n > 2147483647.0)
            return hn_errf(err, "attention: %s would have batch * heads * %s%s = %.0f elements (more than 2^31-1; the "
                                "kernels index with int)",
                           WHAT[i], PARAMS[LEN[i]].name, i < 2 ? " * d" : "", n);
    }
    counts[ATTN_Q] = counts[ATTN_OUT] = (int64_t)(bh * p[ATTN_T] * p[ATTN_D]);
    counts[ATTN_K] = counts[ATTN_V] = (int64_t)(bh * p[ATTN_S] * p[ATTN_D]);
    counts[ATTN_LSE] = (int64_t)(bh * p[ATTN_T]);
    return 0;
}

/* 4 d per (query, key) pair that takes part: 2 d for the score q_i . k_j and
 * 2 d for p_ij v_j (FlashAttention's count; the softmax's exp, max and sums,
 * a few per pair, are left out). The causal mask halves it when s = t (the
 * exact count of visible pairs, attn_pairs). */
static double attention_flop(const double *p) {
    attn_dims a;
    attn_params(p, &a);
    return 4.0 * (double)a.d * (double)a.bh * attn_pairs(&a);
}

/* lse alone needs the scores only. */
static double attention_flop_of(const double *p, int b) {
    return b == ATTN_LSE ? attention_flop(p) / 2 : attention_flop(p);
}

/* q, k, v read once, out and lse written once (whatever the mask). */
static double attention_bytes(const double *p) {
    attn_dims a;
    attn_params(p, &a);
    return 4.0 * (double)a.bh * (double)(2 * a.t * a.d + 2 * a.s * a.d + a.t);
}

static int attention_dims(const double *p, int buffer, int64_t dims[4]) {
    dims[0] = (int64_t)p[ATTN_BATCH], dims[1] = (int64_t)p[ATTN_HEADS];
    dims[2] = (int64_t)p[buffer == ATTN_K || buffer == ATTN_V ? ATTN_S : ATTN_T];
    if (buffer == ATTN_LSE) return 3;
    dims[3] = (int64_t)p[ATTN_D];
    return 4;
}

/* "2x4, t:128 s:100 d:64, causal, scale:0.5": batch x heads, the sizes (s
 * when it is not t), the mask, the scale when it is not 1/sqrt(d). */
static void attention_label(const double *p, char *buf, size_t size) {
    attn_dims a;
    attn_params(p, &a);
    int len = snprintf(buf, size, "%dx%d, t:%lld", (int)p[ATTN_BATCH], (int)p[ATTN_HEADS], (long long)a.t);
    if (a.s != a.t && len >= 0 && (size_t)len < size) len += snprintf(buf + len, size - (size_t)len, " s:%lld", (long long)a.s);
    if (len >= 0 && (size_t)len < size) len += snprintf(buf + len, size - (size_t)len, " d:%lld", (long long)a.d);
    if (a.causal && len >= 0 && (size_t)len < size) len += snprintf(buf + len, size - (size_t)len, ", causal");
    if (a.scale != (float)(1.0 / sqrt((double)a.d)) && len >= 0 && (size_t)len < size)
        snprintf(buf + len, size - (size_t)len, ", scale:%g", (double)a.scale);
}

static void attention_generate(const double *p, void *const *bufs, uint64_t seed) {
    static const float OFFSET[4] = {96.0f, 0.0f, -120.0f, 32.0f};
    attn_dims a;
    attn_params(p, &a);
    float *q = bufs[ATTN_Q], *k = bufs[ATTN_K];
    hn_fill_randn_f32(q, a.bh * a.t * a.d, seed * 3 + 1);
    hn_fill_randn_f32(k, a.bh * a.s * a.d, seed * 3 + 2);
    hn_fill_randn_f32(bufs[ATTN_V], a.bh * a.s * a.d, seed * 3 + 3);
    /* a tiny scale would need q beyond float to reach the offsets: none then */
    const int offsets = fabsf(a.scale) >= 1e-20f;
    for (int64_t r = 0; r < a.bh * a.t; r++)
        q[r * a.d] = offsets ? OFFSET[r % 4] / (a.scale * ATTN_SHIFT) : 0.0f;
    for (int64_t j = 0; j < a.bh * a.s; j++) k[j * a.d] += ATTN_SHIFT;
}

static int attention_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                               int threads, hn_err *err) {
    (void)err;
    attn_dims a;
    attn_params(p, &a);
    const int64_t total = a.bh * a.t;
    int64_t n_rows;
    int64_t *rows = linear_sample_rows(total, 4.0 * (double)a.d * attn_pairs(&a) / (double)a.t, budget_gflop, seed,
                                       &n_rows);
    hn_ref *out = &refs[ATTN_OUT], *lse = &refs[ATTN_LSE];
    out->n = n_rows * a.d;
    out->values = hn_ref_alloc_values(out->n);
    lse->n = n_rows;
    lse->values = hn_ref_alloc_values(lse->n);
    attn_ref(&a, bufs[ATTN_Q], bufs[ATTN_K], bufs[ATTN_V], rows, n_rows, out->values, lse->values, threads);
    linear_ref_rows(out, rows, n_rows, a.d, total);
    linear_ref_rows(lse, rows, n_rows, 1, total);
    free(rows);
    return 0;
}

static const char *const BENCH[] = {
    /* s and scale, defaults over other parameters, are given (bench's rule) */
    "heads=8,t=1024,s=1024,d=64,scale=0.125",
    "batch=2,heads=4,t=1024,s=1024,d=128,causal=1,scale=0.0884",
    "heads=16,t=250,s=999,d=80,scale=0.1118",
    NULL,
};

const hn_op hn_op_attention = {
    .name = "attention",
    .doc = "scaled dot-product attention, forward, with each row's log-sum-exp "
           "(torch.nn.functional.scaled_dot_product_attention; FlashAttention's forward)",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = attention_shape,
    .flop = attention_flop,
    .flop_of = attention_flop_of,
    .bytes = attention_bytes,
    .dims = attention_dims,
    .label = attention_label,
    .generate = attention_generate,
    .reference = attention_reference,
};
