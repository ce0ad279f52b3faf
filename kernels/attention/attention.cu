/*
 * attention: scaled dot-product attention, forward, with each query row's
 * log-sum-exp (the attention operator, docs/ops/attention.md):
 *
 *   out[r] = sum_j softmax_j(x_rj) v[j],  lse[r] = log sum_j exp(x_rj),
 *   x_rj = scale * q[r] . k[j] over the keys row r sees (all s, or j <= i
 *   with causal: torch's is_causal, the diagonal at the top left)
 *
 * q, out (bh, t, d), k, v (bh, s, d), lse (bh, t), row-major float, bh =
 * batch * heads independent slices. Scores carry per-row offsets of up to
 * +-120, so exp without the row's max overflows or underflows: every kernel
 * subtracts it.
 *
 *   attention_naive  one thread per query row, three passes over the keys
 *                    (the max score, the sum of exponentials, the weighted
 *                    sum of v written into out), each score recomputed
 *   attention_warp   one warp per query row (WARPS rows a block): lanes take
 *                    32 keys at a time, one score each; the warp's max and sum
 *                    by __shfl_xor_sync, the online softmax (the running sum
 *                    and output rescaled when the max grows); each p_j
 *                    broadcast by __shfl_sync to the lanes, which own the
 *                    output's columns lane, lane + 32, ... (d <= DMAX)
 *   attention_flash  FlashAttention's forward: a block of BQ threads per tile
 *                    of BQ queries of one slice (a thread a row), the q tile
 *                    (pre-scaled by scale * log2 e, for exp2f) in shared
 *                    memory, K and V tiles of BK keys staged in shared memory
 *                    in turn (zeros past s), each row's scores for the tile in
 *                    shared memory, one online-softmax rescale per tile; under
 *                    the causal mask the key tiles stop at the tile's last
 *                    query (block skipping). Any t, s; d <= DMAX. Tunable:
 *                    configs/attention_tune.json
 *
 *   harness run configs/attention_sweep.json
 *   harness debug configs/attention_sweep.json --kernel attention_warp --set t=5,s=40,d=16,causal=1
 *   harness tune configs/attention_tune.json
 */
#include "hn_kernel.h"

/* -infinity (NVRTC has no INFINITY macro: math.h is not there) */
#define NEG_INF (-__int_as_float(0x7f800000))
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

#ifndef DMAX
#define DMAX 128
#endif
#ifndef WARPS
#define WARPS 4
#endif
/* the output columns a lane of attention_warp owns: lane, lane + 32, ... below DMAX */
#define LANE_COLS ((DMAX + 31) / 32)
#ifndef BQ
#define BQ 32
#endif
#ifndef BK
#define BK 16
#endif

__device__ __forceinline__ float dot_row(const float *a, const float *b, int d) {
    float x = 0.0f;
    for (int c = 0; c < d; c++) x += a[c] * b[c];
    return x;
}

/* Block 128, grid ceil(bh * t / 128). */
__global__ void attention_naive(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                                int t, int s, int d, float scale, int causal) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= bh * t) return;
    const int i = r % t;
    const float *qr = q + (size_t)r * d, *ks = k + (size_t)(r / t) * s * d, *vs = v + (size_t)(r / t) * s * d;
    float *o = out + (size_t)r * d;
    const int n = causal && i + 1 < s ? i + 1 : s; /* the keys row i sees */
    float m = NEG_INF;
    for (int j = 0; j < n; j++) m = fmaxf(m, scale * dot_row(qr, ks + (size_t)j * d, d));
    float l = 0.0f;
    for (int j = 0; j < n; j++) l += expf(scale * dot_row(qr, ks + (size_t)j * d, d) - m);
    for (int c = 0; c < d; c++) o[c] = 0.0f;
    const float inv = 1.0f / l;
    for (int j = 0; j < n; j++) {
        const float p = expf(scale * dot_row(qr, ks + (size_t)j * d, d) - m) * inv;
        for (int c = 0; c < d; c++) o[c] += p * vs[(size_t)j * d + c];
    }
    lse[r] = m + logf(l);
}

__device__ __forceinline__ float warp_max(float x) {
    for (int o = 16; o > 0; o /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

__device__ __forceinline__ float warp_sum(float x) {
    for (int o = 16; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

/* Block (32, WARPS), grid ceil(bh * t / WARPS). A warp leaves whole past the
 * last row, so the full shuffle mask holds. */
__global__ void attention_warp(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                               int t, int s, int d, float scale, int causal) {
    const int r = blockIdx.x * WARPS + threadIdx.y, lane = threadIdx.x;
    /* past the last row; and d > DMAX (the configs' "where" keeps such cases out):
     * nothing written, the row a mismatch rather than columns lost */
    if (r >= bh * t || d > DMAX) return;
    const int i = r % t;
    const float *qr = q + (size_t)r * d, *ks = k + (size_t)(r / t) * s * d, *vs = v + (size_t)(r / t) * s * d;
    const int n = causal && i + 1 < s ? i + 1 : s;
    float acc[LANE_COLS];
#pragma unroll
    for (int u = 0; u < LANE_COLS; u++) acc[u] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (int j0 = 0; j0 < n; j0 += 32) {
        const int j = j0 + lane;
        const float x = j < n ? scale * dot_row(qr, ks + (size_t)j * d, d) : NEG_INF;
        const float mnew = fmaxf(m, warp_max(x)); /* finite: lane 0's key is seen */
        const float p = j < n ? expf(x - mnew) : 0.0f, corr = expf(m - mnew);
        l = l * corr + warp_sum(p);
#pragma unroll
        for (int u = 0; u < LANE_COLS; u++) acc[u] *= corr;
        const int nj = n - j0 < 32 ? n - j0 : 32;
        for (int jj = 0; jj < nj; jj++) {
            const float pj = __shfl_sync(0xffffffffu, p, jj);
            const float *vr = vs + (size_t)(j0 + jj) * d;
#pragma unroll
            for (int u = 0; u < LANE_COLS; u++)
                if (lane + 32 * u < d) acc[u] += pj * vr[lane + 32 * u];
        }
        m = mnew;
    }
    const float inv = 1.0f / l;
#pragma unroll
    for (int u = 0; u < LANE_COLS; u++)
        if (lane + 32 * u < d) out[(size_t)r * d + lane + 32 * u] = acc[u] * inv;
    if (lane == 0) lse[r] = m + logf(l);
}

/* Block BQ, grid (ceil(t / BQ), bh). Shared memory: (DMAX BQ + 2 BK DMAX +
 * BK BQ) floats. */
__global__ void attention_flash(const float *q, const float *k, const float *v, float *out, float *lse, int bh,
                                int t, int s, int d, float scale, int causal) {
    __shared__ float qs[DMAX][BQ];  /* the query tile, transposed: thread tid reads column tid */
    __shared__ float kt[BK][DMAX];  /* the key tile (zeros past s) */
    __shared__ float vt[BK][DMAX];  /* the value tile */
    __shared__ float xs[BK][BQ];    /* each row's scores for the tile (log2 units) */
    const int slice = blockIdx.y, q0 = blockIdx.x * BQ, tid = threadIdx.x, i = q0 + tid;
    if (d > DMAX) return; /* the whole block: the tiles would overflow (configs keep such cases out with "where") */
    const float *qg = q + (size_t)slice * t * d, *kg = k + (size_t)slice * s * d, *vg = v + (size_t)slice * s * d;
    const float qscale = scale * LOG2E;
    for (int e = tid; e < BQ * d; e += BQ) {
        const int rr = e / d, c = e % d;
        qs[c][rr] = q0 + rr < t ? qg[(size_t)(q0 + rr) * d + c] * qscale : 0.0f;
    }
    /* the keys this row sees (none past t), and the tile's last one */
    const int n = i >= t ? 0 : causal && i + 1 < s ? i + 1 : s;
    const int last = q0 + BQ < t ? q0 + BQ : t;
    const int kend = causal && last < s ? last : s;
    float acc[DMAX];
#pragma unroll
    for (int c = 0; c < DMAX; c++) acc[c] = 0.0f;
    float m = NEG_INF, l = 0.0f;
    for (int k0 = 0; k0 < kend; k0 += BK) {
        __syncthreads(); /* the previous tile is used up (and qs written, the first time) */
        for (int e = tid; e < BK * d; e += BQ) {
            const int jr = e / d, c = e % d;
            const bool in = k0 + jr < s;
            kt[jr][c] = in ? kg[(size_t)(k0 + jr) * d + c] : 0.0f;
            vt[jr][c] = in ? vg[(size_t)(k0 + jr) * d + c] : 0.0f;
        }
        __syncthreads();
        const int nk = n - k0 < BK ? n - k0 : BK; /* this row's keys in the tile */
        if (nk <= 0) continue;
        float mt = m;
        for (int jj = 0; jj < nk; jj++) {
            float x = 0.0f;
            for (int c = 0; c < d; c++) x += qs[c][tid] * kt[jj][c];
            xs[jj][tid] = x;
            mt = fmaxf(mt, x);
        }
        const float corr = exp2f(m - mt);
        l *= corr;
#pragma unroll
        for (int c = 0; c < DMAX; c++) acc[c] *= corr;
        for (int jj = 0; jj < nk; jj++) {
            const float p = exp2f(xs[jj][tid] - mt);
            l += p;
#pragma unroll
            for (int c = 0; c < DMAX; c++)
                if (c < d) acc[c] += p * vt[jj][c];
        }
        m = mt;
    }
    if (i < t) {
        const float inv = 1.0f / l;
        float *o = out + ((size_t)slice * t + i) * d;
#pragma unroll
        for (int c = 0; c < DMAX; c++)
            if (c < d) o[c] = acc[c] * inv;
        lse[(size_t)slice * t + i] = (m + log2f(l)) * LN2;
    }
    (void)bh;
}
