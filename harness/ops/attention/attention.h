/*
 * attention/attention.h: what the attention operator's description (op.c)
 * and its fp64 reference (ref.c) share: the parameter and buffer positions,
 * the case's sizes, and the reference's entry point.
 *
 * Scaled dot-product attention, forward (torch.nn.functional.
 * scaled_dot_product_attention), per (batch, head) slice, row-major:
 *
 *   q    (batch, heads, t, d)  float32
 *   k    (batch, heads, s, d)  float32
 *   v    (batch, heads, s, d)  float32
 *   out  (batch, heads, t, d)  float32  out_i = sum_j softmax_j(x_i) v_j
 *   lse  (batch, heads, t)     float32  lse_i = log sum_j exp(x_ij)
 *
 * x_ij = scale * q_i . k_j over the keys j query i sees: all of them, or with
 * causal = 1 those with j <= i (torch's is_causal: the mask's diagonal at the
 * top left, whatever t and s; every row sees key 0, so none is empty).
 */
#ifndef HN_OPS_ATTENTION_H
#define HN_OPS_ATTENTION_H

#include <stdint.h>

#include "ops/op.h"

enum { ATTN_BATCH, ATTN_HEADS, ATTN_T, ATTN_S, ATTN_D, ATTN_CAUSAL, ATTN_SCALE, ATTN_N_PARAMS };
enum { ATTN_Q, ATTN_K, ATTN_V, ATTN_OUT, ATTN_LSE, ATTN_N_BUFFERS };

typedef struct {
    int64_t bh;      /* batch * heads: the independent slices */
    int64_t t, s, d; /* queries, keys, head dimension */
    int causal;      /* 0, or 1: query i sees keys j <= i */
    float scale;     /* the case's value (rounded to float32, as the kernels get it) */
} attn_dims;

void attn_params(const double *p, attn_dims *a);

/* The keys query i sees: s, or min(i + 1, s) when causal. */
static inline int64_t attn_visible(const attn_dims *a, int64_t i) {
    return a->causal && i + 1 < a->s ? i + 1 : a->s;
}

/* The (query, key) pairs of one slice that take part: t s, or under the
 * causal mask sum_i min(i + 1, s). */
double attn_pairs(const attn_dims *a);

/* out and lse of the query rows `rows` (n_rows of them, global row indices
 * bh * t + i; NULL: every row, in order) in fp64 from the float inputs:
 * out_vals gets n_rows * d values, lse_vals n_rows. Threads: hn_ref_parallel's. */
void attn_ref(const attn_dims *a, const float *q, const float *k, const float *v, const int64_t *rows,
              int64_t n_rows, double *out_vals, double *lse_vals, int threads);

#endif
