/*
 * wmma.cu: warp matrix functions (nvcuda::wmma) and asynchronous copies for
 * tests/test_emu_wmma.c; also compiled by NVRTC for sm_90 there.
 *
 *   gemm_*      D = A B + C0, one warp per output tile, accumulating over K;
 *               A, B in either layout with any legal ldm, C0/D row or column
 *               major (c_col): h = __half, b = __nv_bfloat16, t = tf32 (the
 *               kernel rounds each element with __float_to_tf32), d = double;
 *               r/c the layouts of A and B; the accumulator f (float) or h.
 *   frag_ops    element-wise work on fragments: x[i] scaled, shifted, clamped
 *   frag_sizes  num_elements of several fragments
 *   tf32_trunc  mma of unrounded floats: the low 13 bits are ignored
 *   pipe_copy   __pipeline_memcpy_async of 4, 8 and 16 bytes (4 of the 16 zero-filled)
 *   cg_copy     cooperative_groups::memcpy_async into shared memory, wait
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>
#include <type_traits>
#ifndef HN_EMU
#include <cuda/barrier> /* cuda::aligned_size_t; the emulator's cooperative_groups.h has it */
#endif

using namespace nvcuda;
namespace cg = cooperative_groups;


/* one warp per (M x N) tile of D; blockDim.x = 32 * warps */
template <class T, class LA, class LB, class TC, int M, int N, int K, bool TF32>
__device__ void gemm_tile(const T *a, const T *b, const TC *c0, TC *d, int m, int n, int k, int lda,
                          int ldb, int ldc, int c_col) {
    int tile = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int tiles_n = n / N;
    if (tile >= (m / M) * tiles_n) return; /* a whole warp leaves */
    int i0 = tile / tiles_n * M, j0 = tile % tiles_n * N;
    const bool a_row = std::is_same<LA, wmma::row_major>::value;
    const bool b_row = std::is_same<LB, wmma::row_major>::value;
    typedef typename std::conditional<TF32, wmma::precision::tf32, T>::type E;
    wmma::fragment<wmma::matrix_a, M, N, K, E, LA> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, E, LB> fb;
    wmma::fragment<wmma::accumulator, M, N, K, TC> acc;
    wmma::layout_t cl = c_col ? wmma::mem_col_major : wmma::mem_row_major;
    size_t c_off = c_col ? (size_t)j0 * ldc + i0 : (size_t)i0 * ldc + j0;
    wmma::load_matrix_sync(acc, c0 + c_off, ldc, cl);
    for (int kk = 0; kk < k; kk += K) {
        wmma::load_matrix_sync(fa, a + (a_row ? (size_t)i0 * lda + kk : (size_t)kk * lda + i0), lda);
        wmma::load_matrix_sync(fb, b + (b_row ? (size_t)kk * ldb + j0 : (size_t)j0 * ldb + kk), ldb);
        if (TF32) {
            for (int t = 0; t < fa.num_elements; t++) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
            for (int t = 0; t < fb.num_elements; t++) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
        }
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(d + c_off, acc, ldc, cl);
}

#define GEMM(NAME, T, LA, LB, TC, M, N, K, TF32)                                              \
    extern "C" __global__ void NAME(const T *a, const T *b, const TC *c0, TC *d, int m, int n, \
                                    int k, int lda, int ldb, int ldc, int c_col) {             \
        gemm_tile<T, wmma::LA, wmma::LB, TC, M, N, K, TF32>(a, b, c0, d, m, n, k, lda, ldb,   \
                                                            ldc, c_col);                      \
    }

GEMM(gemm_h_rr_f_16x16x16, __half, row_major, row_major, float, 16, 16, 16, false)
GEMM(gemm_h_rc_f_16x16x16, __half, row_major, col_major, float, 16, 16, 16, false)
GEMM(gemm_h_cr_f_16x16x16, __half, col_major, row_major, float, 16, 16, 16, false)
GEMM(gemm_h_cc_f_16x16x16, __half, col_major, col_major, float, 16, 16, 16, false)
GEMM(gemm_h_rc_h_16x16x16, __half, row_major, col_major, __half, 16, 16, 16, false)
GEMM(gemm_h_rr_f_32x8x16, __half, row_major, row_major, float, 32, 8, 16, false)
GEMM(gemm_h_cc_h_8x32x16, __half, col_major, col_major, __half, 8, 32, 16, false)
GEMM(gemm_b_rr_f_16x16x16, __nv_bfloat16, row_major, row_major, float, 16, 16, 16, false)
GEMM(gemm_b_cr_f_32x8x16, __nv_bfloat16, col_major, row_major, float, 32, 8, 16, false)
GEMM(gemm_b_rc_f_8x32x16, __nv_bfloat16, row_major, col_major, float, 8, 32, 16, false)
GEMM(gemm_t_rr_f_16x16x8, float, row_major, row_major, float, 16, 16, 8, true)
GEMM(gemm_t_cc_f_16x16x8, float, col_major, col_major, float, 16, 16, 8, true)
GEMM(gemm_d_rc_d_8x8x4, double, row_major, col_major, double, 8, 8, 4, false)
GEMM(gemm_d_cr_d_8x8x4, double, col_major, row_major, double, 8, 8, 4, false)

/* y = min(2 x + 1, 20) element by element, through fragments (one warp, 16 x 16) */
extern "C" __global__ void frag_ops(const float *x, float *y) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> f;
    wmma::load_matrix_sync(f, x, 16, wmma::mem_row_major);
    for (int i = 0; i < f.num_elements; i++) f.x[i] = fminf(2.0f * f.x[i] + 1.0f, 20.0f);
    wmma::store_matrix_sync(y, f, 16, wmma::mem_row_major);
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> h;
    wmma::fill_fragment(h, 0.5f);
    for (int i = 0; i < h.num_elements; i++) h.x[i] = h.x[i] + h.x[i];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> g;
    wmma::fill_fragment(g, 0.0f);
    for (int i = 0; i < g.num_elements; i++) g.x[i] = __half2float(h.x[i]) + 3.0f; /* 4 */
    wmma::store_matrix_sync(y + 256, g, 16, wmma::mem_col_major);
}

/* num_elements of each kind of fragment, times 32 (the matrix's size) */
extern "C" __global__ void frag_sizes(int *out) {
    if (threadIdx.x != 0) return;
    out[0] = 32 * wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>::num_elements;
    out[1] = 32 * wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::col_major>::num_elements;
    out[2] = 32 * wmma::fragment<wmma::accumulator, 8, 32, 16, float>::num_elements;
    out[3] = 32 * wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>::num_elements;
    out[4] = 32 * wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major>::num_elements;
}

/* a 16 x 16 x 8 tf32 product of floats that were not rounded: d = a b */
extern "C" __global__ void tf32_trunc(const float *a, const float *b, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 8);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

/* __float_to_tf32 of n floats */
extern "C" __global__ void tf32_round(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = wmma::__float_to_tf32(x[i]);
}

/* each thread copies 16 + 8 + 4 bytes of its own 8 ints through the pipeline,
 * the last 4 of the 16 zero-filled; y gets 7 ints a thread of what reached
 * shared memory, from the next thread's part */
extern "C" __global__ void pipe_copy(const int *x, int *y) {
    __shared__ __align__(16) int s[64 * 8];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&s[t * 8], &x[t * 8], 16, 4);
    __pipeline_commit();
    __pipeline_memcpy_async(&s[t * 8 + 4], &x[t * 8 + 4], 8);
    __pipeline_memcpy_async(&s[t * 8 + 6], &x[t * 8 + 6], 4);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    for (int i = 0; i < 7; i++) y[t * 7 + i] = s[(t + 1) % 64 * 8 + i];
}

/* the block copies n floats to shared memory with memcpy_async (bytes, then
 * the aligned_size_t form, then element counts), doubles them */
extern "C" __global__ void cg_copy(const float *x, float *y, int n) {
    __shared__ __align__(16) float s[3][256];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, s[0], x, sizeof(float) * n);
    cg::memcpy_async(block, s[1], x + n, cuda::aligned_size_t<16>(sizeof(float) * n));
    cg::wait_prior<1>(block);
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    cg::memcpy_async(tile, s[2] + tile.meta_group_rank() * 32, 32, x + 2 * n + tile.meta_group_rank() * 32, 32);
    cg::wait(block);
    for (int i = block.thread_rank(); i < 3 * n; i += block.size()) y[i] = 2.0f * s[i / n][i % n];
}
