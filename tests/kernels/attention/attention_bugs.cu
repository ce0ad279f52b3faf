/*
 * attention_bugs.cu: attention kernels for tests/test_attention.sh, each with
 * one mistake attention authors make (and one correct kernel that writes out
 * alone). Arguments as kernels/attention/attention.cu's.
 *
 *   attention_no_max          exp(x) without the row's max: rows with score
 *                             offsets of 96 overflow (inf / inf), -120
 *                             underflow (0 / 0): every case fails
 *   attention_causal_plus_one the causal mask one key too far (j <= i + 1):
 *                             every causal case with s >= 2 fails
 *   attention_fixed_scale     1/sqrt(d) compiled in, the scale argument
 *                             ignored: right at the default, wrong otherwise
 *   attention_lse_unwritten   out right, lse bound but never written
 *   attention_lse_no_max      lse = log(sum exp(x - max)), the max left out
 *   attention_out_only        correct, writes out alone (no lse argument):
 *                             checked on out only
 *   attention_tile_tail       a FlashAttention tile loop over all BK keys of
 *                             the last tile (zeros past s): only the causal
 *                             mask guards it, so it fails where s is not a
 *                             multiple of BK and some row sees the tail (not
 *                             causal, or t > s)
 */
#include "hn_kernel.h"

#define NEG_INF (-__int_as_float(0x7f800000))

#ifndef BQ
#define BQ 8
#endif
#ifndef BK
#define BK 8
#endif
#ifndef DMAX
#define DMAX 32
#endif

/* One query row r, three passes, with the mistakes as switches: `extra` keys
 * past the causal mask, `use_max` 0 to leave the max out of exp, lse_mode 0
 * right, 1 unwritten, 2 without the max. */
__device__ void naive_row(const float *q, const float *k, const float *v, float *out, float *lse, int r, int t,
                          int s, int d, float scale, int causal, int extra, int use_max, int lse_mode) {
    const int i = r % t;
    const float *qr = q + (size_t)r * d, *ks = k + (size_t)(r / t) * s * d, *vs = v + (size_t)(r / t) * s * d;
    float *o = out + (size_t)r * d;
    const int n = causal && i + 1 + extra < s ? i + 1 + extra : s;
    float m = NEG_INF;
    for (int j = 0; j < n; j++) {
        float x = 0.0f;
        for (int c = 0; c < d; c++) x += qr[c] * ks[(size_t)j * d + c];
        m = fmaxf(m, scale * x);
    }
    if (!use_max) m = 0.0f;
    float l = 0.0f;
    for (int c = 0; c < d; c++) o[c] = 0.0f;
    for (int j = 0; j < n; j++) {
        float x = 0.0f;
        for (int c = 0; c < d; c++) x += qr[c] * ks[(size_t)j * d + c];
        const float p = expf(scale * x - m);
        l += p;
        for (int c = 0; c < d; c++) o[c] += p * vs[(size_t)j * d + c];
    }
    for (int c = 0; c < d; c++) o[c] /= l;
    if (lse_mode == 0) lse[r] = m + logf(l);
    if (lse_mode == 2) lse[r] = logf(l);
}

#define ROW_OR_RETURN                                                                                                  \
    const int r = blockIdx.x * blockDim.x + threadIdx.x;                                                               \
    if (r >= bh * t) return

__global__ void attention_no_max(const float *q, const float *k, const float *v, float *out, float *lse, int bh, int t,
                                 int s, int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, lse, r, t, s, d, scale, causal, 0, 0, 0);
}

__global__ void attention_causal_plus_one(const float *q, const float *k, const float *v, float *out, float *lse,
                                          int bh, int t, int s, int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, lse, r, t, s, d, scale, causal, 1, 1, 0);
}

__global__ void attention_fixed_scale(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                                      int t, int s, int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, lse, r, t, s, d, rsqrtf((float)d), causal, 0, 1, 0);
    (void)scale;
}

__global__ void attention_lse_unwritten(const float *q, const float *k, const float *v, float *out, float *lse,
                                        int bh, int t, int s, int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, lse, r, t, s, d, scale, causal, 0, 1, 1);
}

__global__ void attention_lse_no_max(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                                     int t, int s, int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, lse, r, t, s, d, scale, causal, 0, 1, 2);
}

__global__ void attention_out_only(const float *q, const float *k, const float *v, float *out, int bh, int t, int s,
                                   int d, float scale, int causal) {
    ROW_OR_RETURN;
    naive_row(q, k, v, out, NULL, r, t, s, d, scale, causal, 0, 1, 1);
}

/* Block BQ, grid (ceil(t / BQ), bh): a thread a query row, K and V tiles of BK
 * keys in shared memory, zero past s, the online softmax per key. */
__global__ void attention_tile_tail(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                                    int t, int s, int d, float scale, int causal) {
    __shared__ float kt[BK][DMAX], vt[BK][DMAX];
    const int slice = blockIdx.y, i = blockIdx.x * BQ + threadIdx.x;
    const float *qr = q + ((size_t)slice * t + (i < t ? i : 0)) * d, *kg = k + (size_t)slice * s * d,
                *vg = v + (size_t)slice * s * d;
    float acc[DMAX];
    for (int c = 0; c < DMAX; c++) acc[c] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (int k0 = 0; k0 < s; k0 += BK) {
        __syncthreads();
        for (int e = threadIdx.x; e < BK * d; e += BQ) {
            const int jr = e / d, c = e % d;
            kt[jr][c] = k0 + jr < s ? kg[(size_t)(k0 + jr) * d + c] : 0.0f;
            vt[jr][c] = k0 + jr < s ? vg[(size_t)(k0 + jr) * d + c] : 0.0f;
        }
        __syncthreads();
        if (i >= t) continue;
        for (int jj = 0; jj < BK; jj++) { /* the bug: no k0 + jj < s */
            if (causal && k0 + jj > i) break;
            float x = 0.0f;
            for (int c = 0; c < d; c++) x += qr[c] * kt[jj][c];
            x *= scale;
            const float mn = fmaxf(m, x), corr = expf(m - mn), p = expf(x - mn);
            l = l * corr + p;
            for (int c = 0; c < d; c++) acc[c] = acc[c] * corr + p * vt[jj][c];
            m = mn;
        }
    }
    if (i < t) {
        for (int c = 0; c < d; c++) out[((size_t)slice * t + i) * d + c] = acc[c] / l;
        lse[(size_t)slice * t + i] = m + logf(l);
    }
    (void)bh;
}
