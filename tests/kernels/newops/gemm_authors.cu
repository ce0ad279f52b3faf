/*
 * gemm_authors: SGEMM kernels as their authors write them, bound to the gemm
 * operator from docs/ops/gemm.md alone (tests/configs/newops/gemm_authors.json,
 * tests/test_newops.sh). Row-major c = alpha op(a) op(b) + beta c unless said.
 *
 *   sgemm_vec4_db      float4 loads, double-buffered shared memory (siboehm's
 *                      kernels 6 and 9): a BM x BN tile per block, TM x TN per
 *                      thread; N/N only, m % BM, n % BN, k % BK == 0 (config where)
 *   sgemm_warptile     warp tile WM x WN per warp, thread tile TM x TN; any shape, N/N
 *   scale_c, sgemm_splitk  split-K in two launches: c *= beta, then each
 *                      blockIdx.z adds alpha * its K slice with atomicAdd
 *   sgemm_colmajor     cuBLAS convention: column-major C = alpha op(A) op(B) + beta C
 *                      with lda/ldb/ldc and 'N'/'T' as int flags
 *   sgemm_author_args  the author's order, alpha and beta as double
 *   BUG_* (defines)    planted bugs, see test_newops.sh
 */

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 8
#endif
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif

/* (BM/TM) x (BN/TN) threads; a tile of A (BM x BK) and B (BK x BN) per stage,
 * A stored transposed in shared memory (As[k][m]) so the inner loop reads rows. */
__global__ void sgemm_vec4_db(int M, int N, int K, float alpha, const float *A, const float *B, float beta,
                              float *C) {
    __shared__ float As[2][BK][BM];
    __shared__ float Bs[2][BK][BN];
    const int threads = (BM / TM) * (BN / TN);
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ty = threadIdx.y, tx = threadIdx.x;
    float acc[TM][TN] = {};

    /* each thread loads float4s: A's tile is BM rows of BK/4 float4s */
    auto load = [&](int stage, int k0) {
        for (int e = tid; e < BM * BK / 4; e += threads) {
            int r = e / (BK / 4), c4 = e % (BK / 4);
            float4 v = *reinterpret_cast<const float4 *>(&A[(size_t)(row0 + r) * K + k0 + c4 * 4]);
            As[stage][c4 * 4 + 0][r] = v.x;
            As[stage][c4 * 4 + 1][r] = v.y;
            As[stage][c4 * 4 + 2][r] = v.z;
            As[stage][c4 * 4 + 3][r] = v.w;
        }
        for (int e = tid; e < BK * BN / 4; e += threads) {
            int r = e / (BN / 4), c4 = e % (BN / 4);
            *reinterpret_cast<float4 *>(&Bs[stage][r][c4 * 4]) =
                *reinterpret_cast<const float4 *>(&B[(size_t)(k0 + r) * N + col0 + c4 * 4]);
        }
    };

    load(0, 0);
    __syncthreads();
    int stage = 0;
    for (int k0 = 0; k0 < K; k0 += BK) {
        if (k0 + BK < K) load(stage ^ 1, k0 + BK);
        for (int p = 0; p < BK; p++) {
            float ra[TM], rb[TN];
            for (int i = 0; i < TM; i++) ra[i] = As[stage][p][ty * TM + i];
            for (int j = 0; j < TN; j++) rb[j] = Bs[stage][p][tx * TN + j];
            for (int i = 0; i < TM; i++)
                for (int j = 0; j < TN; j++) acc[i][j] += ra[i] * rb[j];
        }
#ifndef BUG_NO_SYNC
        __syncthreads();
#endif
        stage ^= 1;
    }
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) {
            float *out = &C[(size_t)(row0 + ty * TM + i) * N + col0 + tx * TN + j];
            *out = alpha * acc[i][j] + beta * *out;
        }
}

#ifndef WM
#define WM 32
#endif
#ifndef WN
#define WN 32
#endif
/* A block of (BM/WM) x (BN/WN) warps; a warp's WM x WN tile split over its 32
 * lanes as (WM/TM) x (WN/TN) thread tiles (WM/TM * WN/TN == 32). Bounds on every
 * load and store, so any m, n, k. */
__global__ void sgemm_warptile(const float *A, const float *B, float *C, int M, int N, int K, float alpha,
                               float beta) {
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    const int tid = threadIdx.x, nthreads = blockDim.x;
    const int warp = tid / 32, lane = tid % 32;
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);
    const int lr = lane / (WN / TN), lc = lane % (WN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = tid; e < BM * BK; e += nthreads) {
            int r = e / BK, p = e % BK;
            int gr = row0 + r, gp = k0 + p;
#ifdef BUG_K_TAIL
            As[p][r] = (gr < M && gp <= K) ? A[(size_t)gr * K + gp] : 0.0f;
#else
            As[p][r] = (gr < M && gp < K) ? A[(size_t)gr * K + gp] : 0.0f;
#endif
        }
        for (int e = tid; e < BK * BN; e += nthreads) {
            int p = e / BN, c = e % BN;
            int gp = k0 + p, gc = col0 + c;
#ifdef BUG_K_TAIL
            Bs[p][c] = (gp <= K && gc < N) ? B[(size_t)gp * N + gc] : 0.0f;
#else
            Bs[p][c] = (gp < K && gc < N) ? B[(size_t)gp * N + gc] : 0.0f;
#endif
        }
        __syncthreads();
        for (int p = 0; p < BK; p++)
            for (int i = 0; i < TM; i++)
                for (int j = 0; j < TN; j++)
                    acc[i][j] += As[p][wr * WM + lr * TM + i] * Bs[p][wc * WN + lc * TN + j];
        __syncthreads();
    }
    for (int i = 0; i < TM; i++)
        for (int j = 0; j < TN; j++) {
            int r = row0 + wr * WM + lr * TM + i, c = col0 + wc * WN + lc * TN + j;
            if (r < M && c < N) {
#ifdef BUG_BETA_IGNORED
                C[(size_t)r * N + c] = alpha * acc[i][j];
#else
                C[(size_t)r * N + c] = alpha * acc[i][j] + beta * C[(size_t)r * N + c];
#endif
            }
        }
}

/* split-K, launch 1: c *= beta (c = 0 at beta 0, whatever c held) */
__global__ void scale_c(float *c, int count, float beta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
}

/* split-K, launch 2: blockIdx.z takes K slice [z*kslice, (z+1)*kslice); one
 * thread per c element of the slice's partial product, added atomically. */
__global__ void sgemm_splitk(const float *a, const float *b, float *c, int m, int n, int k, float alpha,
                             int trans_a, int trans_b, int kslice) {
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m || j >= n) return;
    int p0 = blockIdx.z * kslice, p1 = min(k, p0 + kslice);
    float acc = 0.0f;
    for (int p = p0; p < p1; p++) {
        float av = trans_a ? a[(size_t)p * m + i] : a[(size_t)i * k + p];
#ifdef BUG_TRANS_SWAPPED
        float bv = trans_b ? b[(size_t)p * k + j] : b[(size_t)p * n + j]; /* T's index swapped */
#else
        float bv = trans_b ? b[(size_t)j * k + p] : b[(size_t)p * n + j];
#endif
        acc += av * bv;
    }
    atomicAdd(&c[(size_t)i * n + j], alpha * acc);
}

/* cuBLAS convention, column-major: C (M x N, ldc) = alpha op(A) op(B) + beta C,
 * op(A) M x K, op(B) K x N; transa/transb 0 'N' or 1 'T'. */
__global__ void sgemm_colmajor(int transa, int transb, int M, int N, int K, float alpha, const float *A, int lda,
                               const float *B, int ldb, float beta, float *C, int ldc) {
    int row = blockIdx.x * blockDim.x + threadIdx.x; /* column-major: x walks rows */
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int p = 0; p < K; p++) {
        float av = transa ? A[row * lda + p] : A[p * lda + row];
        float bv = transb ? B[p * ldb + col] : B[col * ldb + p];
        acc += av * bv;
    }
    C[col * ldc + row] = alpha * acc + (beta == 0.0f ? 0.0f : beta * C[col * ldc + row]);
}

/* the author's own signature: sizes first, scalars as double */
__global__ void sgemm_author_args(int M, int N, int K, double alpha, const float *A, const float *B, double beta,
                                  float *C) {
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M || j >= N) return;
    double acc = 0.0;
    for (int p = 0; p < K; p++) acc += (double)A[i * K + p] * B[p * N + j];
    C[i * N + j] = (float)(alpha * acc + beta * C[i * N + j]);
}
