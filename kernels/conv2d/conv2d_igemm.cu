/*
 * conv2d_igemm: conv2d forward (NCHW, fp32) as an implicit GEMM with register
 * tiling: the im2col matrix is never built, each block gathers its tile of it
 * straight from the image into shared memory.
 *
 *   C (M, N) = A (M, K) x B (K, N)
 *   M = out_ch                      rows: output channels
 *   N = n * oh * ow                 columns: output pixels of every image, (b, y, x)
 *   K = in_ch * fs * fs             (c, p, q), the filter's own memory order
 *   A[o][k] = filter[o][k]          contiguous along K: vector loads (VEC)
 *   B[k][j] = X(b, c, y + p - r, x + q - r), `pad` outside the image (gathered)
 *   C[o][j] -> out[b][o][y][x]      contiguous along N within an image
 *
 * Why this orientation: consecutive columns are consecutive output pixels, so the
 * gather of B and the stores of C are coalesced along N (the large dimension:
 * up to 10^6 here against out_ch <= 512), and A's rows are the filter's rows,
 * contiguous, so the filter tile can be read with 128-bit loads.
 *
 * One block computes a BM x BN tile of C, walking K in steps of BK; its
 * (BM / TM) * (BN / TN) threads (1D block) each hold a TM x TN tile of C in
 * registers. Per K step every thread stages its share of the A and B tiles in
 * registers, stores them to shared memory (A transposed: As[k][m], so the inner
 * loop reads both operands along k-rows with vector loads), and runs the
 * BK-long outer-product loop. Edges are exact: rows past M and k past K load 0,
 * columns past N are computed and never stored, so K need not be a multiple of
 * BK nor M, N of the tile.
 *
 * Knobs (defines; the tune space is configs/conv2d_tune.json, restrictions there):
 *   BM, BN, BK      block tile (powers of two)
 *   TM, TN          thread tile; threads per block = (BM / TM) * (BN / TN)
 *   VEC             1, 2, 4: floats per global load of the filter tile. Used when
 *                   K % VEC == 0 and the filter is aligned (checked at run time,
 *                   the same for the whole grid); otherwise scalar loads
 *   B_VEC           1, 2, 4: consecutive columns of B one thread loads. A 1x1
 *                   filter with no padding makes B the image itself (contiguous
 *                   along N): then, when oh*ow % B_VEC == 0 and `in` is aligned,
 *                   one vector load; every other case gathers the B_VEC columns
 *                   one by one (a gather is not vectorizable: consecutive columns
 *                   cross image rows and the window's offset moves with q)
 *   A_ORDER         0: a warp's filter loads run along K (coalesced global reads,
 *                   transposing stores to shared); 1: along M (strided global
 *                   reads served by L1/L2, conflict-free shared stores)
 *   A_PAD           0 or 4: floats of padding per row of As (breaks the bank
 *                   conflicts of A_ORDER 0's transposing stores; a multiple of 4
 *                   keeps the inner loop's 128-bit reads aligned)
 *   STRIDED         0: a thread's tile is TM x TN contiguous elements; 1: groups of
 *                   4 rows/columns spaced (BM/TM)*4 / (BN/TN)*4 apart, so a warp's
 *                   128-bit shared reads and its stores of C are contiguous
 *                   (no bank conflicts in the inner loop)
 *   DOUBLE_BUFFER   0: one shared buffer, two barriers per K step; 1: two buffers,
 *                   the next tile's global loads issued before this tile's math
 *                   and stored after it, one barrier per K step
 *   UNROLL_K        unroll factor of the BK loop of outer products
 *   MIN_BLOCKS      __launch_bounds__'s minimum resident blocks per SM
 *   RASTER          the order of the (1D) grid's tiles: 0 M fastest, so the blocks
 *                   that share an input tile run at the same time (the input is
 *                   read from DRAM about once; the filter stays in L2), 1 N fastest
 *   ACCUM_DTYPE     the accumulator (float; double works, slowly)
 *
 *   harness tune configs/conv2d_tune.json --backend emu --space-only
 *   harness tune configs/conv2d_tune.json [--strategy random --budget 50]
 *   harness compile configs/conv2d_tune.json --arch sm_90
 *
 * Arguments: (in, out, filter, bias, n, in_ch, out_ch, h, w, fs, r, oh, ow, pad,
 * use_bias), r the padding above and left ((fs-1)/2 for "same", else padding).
 * Launch: block (THREADS), grid (ceil(N / BN) * ceil(M / BM)). NCHW only. The
 * family's menu is in conv2d_pad.cu; the design is in docs/conv2d_igemm.md.
 */
#include "hn_kernel.h"

#ifndef ACCUM_DTYPE
#define ACCUM_DTYPE float
#endif
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
#ifndef VEC
#define VEC 4
#endif
#ifndef B_VEC
#define B_VEC 1
#endif
#ifndef A_ORDER
#define A_ORDER 0
#endif
#ifndef A_PAD
#define A_PAD 4
#endif
#ifndef STRIDED
#define STRIDED 1
#endif
#ifndef DOUBLE_BUFFER
#define DOUBLE_BUFFER 1
#endif
#ifndef UNROLL_K
#define UNROLL_K 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef RASTER
#define RASTER 0
#endif

#define IGEMM_THREADS ((BM / TM) * (BN / TN))

/* `#pragma unroll N` with N from a define; GCC (the emulator's usual compiler)
 * spells it `GCC unroll`. */
#define IGEMM_PRAGMA(x) _Pragma(#x)
#if defined(HN_EMU) && defined(__GNUC__) && !defined(__clang__)
#define IGEMM_UNROLL(n) IGEMM_PRAGMA(GCC unroll n)
#else
#define IGEMM_UNROLL(n) IGEMM_PRAGMA(unroll n)
#endif

namespace igemm {
constexpr int THREADS = IGEMM_THREADS;
constexpr int TX = BN / TN, TY = BM / TM;             /* threads along N, along M */
constexpr int VM = TM < 4 ? TM : 4, VN = TN < 4 ? TN : 4; /* inner-loop vector widths */
constexpr int GM = TM / VM, GN = TN / VN;             /* vector groups per thread tile */
constexpr int NBUF = DOUBLE_BUFFER ? 2 : 1;
constexpr int LDA = BM + A_PAD, LDB = BN;             /* shared row strides */
/* the filter tile: BM rows of BK / VEC vectors */
constexpr int A_VPR = BK / VEC;
constexpr int A_TOTAL = BM * A_VPR;
constexpr int A_LOADS = (A_TOTAL + THREADS - 1) / THREADS;
/* the input tile: BK rows of BN / B_VEC column groups; B_CT threads along a row,
 * B_RSTEP rows per pass */
constexpr int B_GROUPS = BN / B_VEC;
constexpr int B_CT = THREADS < B_GROUPS ? THREADS : B_GROUPS;
constexpr int B_RSTEP = THREADS / B_CT;
constexpr int B_COLS = B_GROUPS / B_CT;
constexpr int B_ROWS = (BK + B_RSTEP - 1) / B_RSTEP;

static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile");
static_assert(TM % VM == 0 && TN % VN == 0, "TM and TN must be 1, 2 or a multiple of 4");
static_assert(BK % VEC == 0 && (VEC == 1 || VEC == 2 || VEC == 4), "VEC must be 1, 2 or 4 and divide BK");
static_assert(BN % B_VEC == 0 && (B_VEC == 1 || B_VEC == 2 || B_VEC == 4), "B_VEC must be 1, 2 or 4 and divide BN");
static_assert(THREADS % B_CT == 0, "threads and BN / B_VEC must be powers of two");
static_assert(A_PAD % 4 == 0 && LDA % VM == 0 && BN % 4 == 0, "shared rows must stay aligned for the inner loop's vector reads");
static_assert(UNROLL_K >= 1 && BK % UNROLL_K == 0, "UNROLL_K must divide BK");

/* V consecutive floats: one load or store of V * 4 bytes (p aligned to it). */
template <int V> struct vec;
template <> struct vec<1> {
    static __device__ __forceinline__ void ld(float *d, const float *s) { d[0] = s[0]; }
    static __device__ __forceinline__ void st(float *d, const float *s) { d[0] = s[0]; }
};
template <> struct vec<2> {
    static __device__ __forceinline__ void ld(float *d, const float *s) {
        float2 t = *reinterpret_cast<const float2 *>(s);
        d[0] = t.x, d[1] = t.y;
    }
    static __device__ __forceinline__ void st(float *d, const float *s) {
        *reinterpret_cast<float2 *>(d) = make_float2(s[0], s[1]);
    }
};
template <> struct vec<4> {
    static __device__ __forceinline__ void ld(float *d, const float *s) {
        float4 t = *reinterpret_cast<const float4 *>(s);
        d[0] = t.x, d[1] = t.y, d[2] = t.z, d[3] = t.w;
    }
    static __device__ __forceinline__ void st(float *d, const float *s) {
        *reinterpret_cast<float4 *>(d) = make_float4(s[0], s[1], s[2], s[3]);
    }
};

/* Row of the block tile for element i (< TM) of thread row ty; column likewise. */
__device__ __forceinline__ int tile_row(int ty, int i) {
    return STRIDED ? (i / VM) * (TY * VM) + ty * VM + i % VM : ty * TM + i;
}
__device__ __forceinline__ int tile_col(int tx, int j) {
    return STRIDED ? (j / VN) * (TX * VN) + tx * VN + j % VN : tx * TN + j;
}

__device__ __forceinline__ bool aligned(const void *p, int bytes) {
    return (reinterpret_cast<unsigned long long>(p) & (unsigned long long)(bytes - 1)) == 0;
}
} // namespace igemm

__global__ void __launch_bounds__(IGEMM_THREADS, MIN_BLOCKS)
conv2d_igemm(const float *__restrict__ in, float *__restrict__ out, const float *__restrict__ filter,
             const float *__restrict__ bias, int n, int in_ch, int out_ch, int h, int w, int fs, int r, int oh,
             int ow, float pad, int use_bias HN_SINGLE_BLOCK_PARAM) {
    using namespace igemm;
    __shared__ __align__(16) float As[NBUF][BK][LDA]; // (k, m): the filter tile, transposed
    __shared__ __align__(16) float Bs[NBUF][BK][LDB]; // (k, j): the gathered input tile
    HN_SINGLE_BLOCK_ENTER();
    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const int npix = oh * ow, hw = h * w;
    const int M = out_ch, K = in_ch * fs * fs;
    const int N = n * npix; /* the output's element count is < 2^31 (the operator checks) */
    /* the block's tile: a 1D grid of tiles_m * tiles_n blocks, RASTER 0 walking M
     * fastest (the blocks that gather the same input columns run together, so
     * the input is read from DRAM about once), 1 walking N fastest */
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int mt = RASTER ? blockIdx.x / tiles_n : blockIdx.x % tiles_m;
    const int nt = RASTER ? blockIdx.x % tiles_n : blockIdx.x / tiles_m;
    const int m0 = mt * BM, n0 = nt * BN;
    const int n_left = N - n0, m_left = M - m0; /* columns and rows of this tile that exist */
#ifdef DEBUG
    if (hn_debug_leader())
        printf("block %d: rows [%d, %d) of M=%d, columns [%d, %d) of N=%d, K=%d; BM=%d BN=%d BK=%d TM=%d TN=%d "
               "threads=%d\n",
               blockIdx.x, m0, m0 + BM, M, n0, n0 + BN, N, K, BM, BN, BK, TM, TN, THREADS);
#endif

    /* ---- the filter tile's loader: slot i holds VEC floats of row am, from ak ---- */
    const bool a_vec = VEC > 1 && K % VEC == 0 && aligned(filter, VEC * 4);
    float ra[A_LOADS][VEC];

    /* ---- the input tile's loader ---- */
    /* Each thread owns column groups cb + ci * B_CT (B_VEC columns each) and rows
     * rb + ri * B_RSTEP of every B tile. Per column: the image's base offset with
     * the window's origin (iy0, ix0) folded in; per row: its k as (p, q) and the
     * offset c*hw + p*w + q, advanced by BK each step without a division. */
    const int cb = tid % B_CT, rb = tid / B_CT;
    const bool b_vec = B_VEC > 1 && fs == 1 && r == 0 && npix % B_VEC == 0 && aligned(in, B_VEC * 4);
    int col_base[B_COLS][B_VEC], col_iy[B_COLS][B_VEC], col_ix[B_COLS][B_VEC];
#pragma unroll
    for (int ci = 0; ci < B_COLS; ci++)
#pragma unroll
        for (int v = 0; v < B_VEC; v++) {
            int j = (cb + ci * B_CT) * B_VEC + v;
            if (j < n_left) {
                int col = n0 + j, b = col / npix, pix = col - b * npix;
                int oy = pix / ow, ox = pix - oy * ow;
                col_iy[ci][v] = oy - r;
                col_ix[ci][v] = ox - r;
                col_base[ci][v] = b * in_ch * hw + (oy - r) * w + (ox - r);
            } else { /* past N: never inside the image, never stored */
                col_iy[ci][v] = -(1 << 29);
                col_ix[ci][v] = 0;
                col_base[ci][v] = 0;
            }
        }
    const int fs2 = fs * fs;
    const int dq = BK % fs, dp = BK / fs % fs, dc_hw = BK / fs2 * hw; /* BK as (c, p, q) steps */
    int row_p[B_ROWS], row_q[B_ROWS], row_off[B_ROWS];
#pragma unroll
    for (int ri = 0; ri < B_ROWS; ri++) {
        int k = rb + ri * B_RSTEP;
        int c = k / fs2, pq = k - c * fs2, p = pq / fs, q = pq - p * fs;
        row_p[ri] = p, row_q[ri] = q, row_off[ri] = c * hw + p * w + q;
    }
    float rbv[B_ROWS][B_COLS][B_VEC];

    /* Global -> registers, the K step starting at k0. */
    auto load_tiles = [&](int k0) {
#pragma unroll
        for (int i = 0; i < A_LOADS; i++) {
            int e = tid + i * THREADS;
            int am = A_ORDER ? e % BM : e / A_VPR, ak = (A_ORDER ? e / BM : e % A_VPR) * VEC;
            int k = k0 + ak;
            bool row_ok = (A_TOTAL % THREADS == 0 || e < A_TOTAL) && am < m_left;
            const float *src = filter + (row_ok ? (m0 + am) * K + k : 0);
            if (a_vec) {
                if (row_ok && k < K) vec<VEC>::ld(ra[i], src);
                else
#pragma unroll
                    for (int v = 0; v < VEC; v++) ra[i][v] = 0.0f;
            } else {
#pragma unroll
                for (int v = 0; v < VEC; v++) ra[i][v] = row_ok && k + v < K ? src[v] : 0.0f;
            }
        }
#pragma unroll
        for (int ri = 0; ri < B_ROWS; ri++) {
            const int kr = rb + ri * B_RSTEP;
            const bool k_ok = (BK % B_RSTEP == 0 || kr < BK) && k0 + kr < K;
#pragma unroll
            for (int ci = 0; ci < B_COLS; ci++) {
                if (b_vec) { /* fs == 1, r == 0: B is the image, contiguous along N */
                    if (k_ok && (cb + ci * B_CT) * B_VEC < n_left)
                        vec<B_VEC>::ld(rbv[ri][ci], in + col_base[ci][0] + row_off[ri]);
                    else
#pragma unroll
                        for (int v = 0; v < B_VEC; v++) rbv[ri][ci][v] = 0.0f;
                } else {
#pragma unroll
                    for (int v = 0; v < B_VEC; v++) {
                        int iy = col_iy[ci][v] + row_p[ri], ix = col_ix[ci][v] + row_q[ri];
                        bool inside = (unsigned)iy < (unsigned)h && (unsigned)ix < (unsigned)w;
                        rbv[ri][ci][v] = !k_ok ? 0.0f : inside ? in[col_base[ci][v] + row_off[ri]] : pad;
                    }
                }
            }
            /* this row's (p, q, offset) for the next step */
            row_q[ri] += dq, row_off[ri] += dq;
            if (row_q[ri] >= fs) row_q[ri] -= fs, row_p[ri]++, row_off[ri] += w - fs;
            row_p[ri] += dp, row_off[ri] += dp * w;
            if (row_p[ri] >= fs) row_p[ri] -= fs, row_off[ri] += hw - fs * w;
            row_off[ri] += dc_hw;
        }
    };

    /* Registers -> shared buffer `buf`. */
    auto store_tiles = [&](int buf) {
#pragma unroll
        for (int i = 0; i < A_LOADS; i++) {
            int e = tid + i * THREADS;
            if (A_TOTAL % THREADS != 0 && e >= A_TOTAL) continue;
            int am = A_ORDER ? e % BM : e / A_VPR, ak = (A_ORDER ? e / BM : e % A_VPR) * VEC;
#pragma unroll
            for (int v = 0; v < VEC; v++) As[buf][ak + v][am] = ra[i][v];
        }
#pragma unroll
        for (int ri = 0; ri < B_ROWS; ri++) {
            int kr = rb + ri * B_RSTEP;
            if (BK % B_RSTEP != 0 && kr >= BK) continue;
#pragma unroll
            for (int ci = 0; ci < B_COLS; ci++) vec<B_VEC>::st(&Bs[buf][kr][(cb + ci * B_CT) * B_VEC], rbv[ri][ci]);
        }
    };

    ACCUM_DTYPE acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0;

    /* The BK outer products of shared buffer `buf`. */
    auto compute = [&](int buf) {
        IGEMM_UNROLL(UNROLL_K)
        for (int kk = 0; kk < BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int g = 0; g < GM; g++) vec<VM>::ld(&a[g * VM], &As[buf][kk][tile_row(ty, g * VM)]);
#pragma unroll
            for (int g = 0; g < GN; g++) vec<VN>::ld(&b[g * VN], &Bs[buf][kk][tile_col(tx, g * VN)]);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] += (ACCUM_DTYPE)a[i] * (ACCUM_DTYPE)b[j];
        }
    };

    const int steps = (K + BK - 1) / BK;
#if DOUBLE_BUFFER
    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    for (int s = 0; s < steps; s++) {
        const int cur = s & 1;
        const bool more = s + 1 < steps;
        if (more) load_tiles((s + 1) * BK); /* in flight during the math below */
        compute(cur);
        if (more) store_tiles(cur ^ 1); /* the other buffer: nobody reads it since the last barrier */
        __syncthreads();
    }
#else
    for (int s = 0; s < steps; s++) {
        load_tiles(s * BK);
        store_tiles(0);
        __syncthreads();
        compute(0);
        __syncthreads();
    }
#endif

    /* ---- epilogue: bias, then C to out[b][o][pix] ---- */
    /* per column of the thread tile: its offset b*M*npix + pix, or -1 past N */
    int col_off[TN];
#pragma unroll
    for (int j = 0; j < TN; j++) {
        int jl = tile_col(tx, j);
        if (jl < n_left) {
            int col = n0 + jl, b = col / npix;
            col_off[j] = b * M * npix + (col - b * npix);
        } else {
            col_off[j] = -1;
        }
    }
    /* VN columns of a group are one image's consecutive pixels when npix % VN == 0
     * (the group starts at a multiple of VN), so one vector store. */
    const bool out_vec = VN > 1 && npix % VN == 0 && aligned(out, VN * 4);
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int il = tile_row(ty, i);
        if (il >= m_left) continue;
        int o = m0 + il;
        ACCUM_DTYPE bo = use_bias ? (ACCUM_DTYPE)bias[o] : (ACCUM_DTYPE)0;
#pragma unroll
        for (int g = 0; g < GN; g++) {
            float v[VN];
#pragma unroll
            for (int t = 0; t < VN; t++) v[t] = (float)(acc[i][g * VN + t] + bo);
            if (out_vec) {
                if (col_off[g * VN] >= 0) vec<VN>::st(out + col_off[g * VN] + o * npix, v);
            } else {
#pragma unroll
                for (int t = 0; t < VN; t++)
                    if (col_off[g * VN + t] >= 0) out[col_off[g * VN + t] + o * npix] = v[t];
            }
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
