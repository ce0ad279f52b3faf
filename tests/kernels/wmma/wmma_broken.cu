/*
 * wmma_broken.cu: misuses of nvcuda::wmma and the pipeline that a GPU gets
 * silently wrong (or faults on without a line), for tests/test_emu_wmma.c.
 * Each kernel is one warp (32 threads); the marked line is where the
 * emulator must report it.
 *
 *   half_warp_load      lanes 16-31 skip a load_matrix_sync and go to the store
 *   exit_before_mma     lanes 16-31 return before mma_sync
 *   misaligned_load     a pointer 2 bytes past a 32-byte boundary
 *   bad_ldm             ldm 12 for __half (not a multiple of 8)
 *   bad_ldm_float       ldm 18 for a float accumulator store (not a multiple of 4)
 *   lane_pointers       each half warp passes its own pointer
 *   load_past_end       a 16 x 16 tile from the last 8 rows of a 24 x 16 buffer
 *   uninit_load         a tile of a buffer nothing wrote (harness check only)
 *   early_read          reads the pipeline's destination before the wait (harness
 *                       check: an uninitialised read, the copy lands at the wait)
 *   cg_no_wait          a __syncthreads where cg::wait belongs: the read of another
 *                       thread's part races with the copy that lands at the wait
 *   pipe_bad_size       __pipeline_memcpy_async of 12 bytes
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

using namespace nvcuda;

extern "C" __global__ void half_warp_load(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    if (threadIdx.x < 16) wmma::load_matrix_sync(fa, a, 16); // @half_warp_load
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

extern "C" __global__ void exit_before_mma(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, a, 16);
    if (threadIdx.x >= 16) return;
    wmma::mma_sync(acc, fa, fb, acc); // @exit_before_mma
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}

extern "C" __global__ void misaligned_load(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a + 1, 16); // @misaligned_load
    d[threadIdx.x] = __half2float(fa.x[0]);
}

extern "C" __global__ void bad_ldm(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
    wmma::load_matrix_sync(fb, a, 12); // @bad_ldm
    d[threadIdx.x] = __half2float(fb.x[0]);
}

extern "C" __global__ void bad_ldm_float(const __half *a, float *d) {
    (void)a;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::store_matrix_sync(d, acc, 18, wmma::mem_col_major); // @bad_ldm_float
}

extern "C" __global__ void lane_pointers(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
    wmma::load_matrix_sync(fa, a + (threadIdx.x / 16) * 256, 16); // @lane_pointers
    d[threadIdx.x] = __half2float(fa.x[0]);
}

extern "C" __global__ void load_past_end(const __half *a, float *d) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a + 256, 16); // @load_past_end
    d[threadIdx.x] = __half2float(fa.x[0]);
}

extern "C" __global__ void uninit_load(const __half *a, float *d) {
    (void)a;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(acc, d, 16, wmma::mem_row_major); // @uninit_load
    wmma::store_matrix_sync(d + 256, acc, 16, wmma::mem_row_major);
}

extern "C" __global__ void early_read(const __half *a, float *d) {
    __shared__ __align__(16) __half s[32 * 8];
    __pipeline_memcpy_async(&s[threadIdx.x * 8], &a[threadIdx.x * 8], 16);
    __pipeline_commit();
    float v = __half2float(s[threadIdx.x * 8]); // @early_read
    __pipeline_wait_prior(0);
    d[threadIdx.x] = v;
}

extern "C" __global__ void pipe_bad_size(const __half *a, float *d) {
    __shared__ __align__(16) __half s[32 * 8];
    __pipeline_memcpy_async(&s[threadIdx.x * 8], &a[threadIdx.x * 8], 12); // @pipe_bad_size
    __pipeline_commit();
    __pipeline_wait_prior(0);
    d[threadIdx.x] = __half2float(s[threadIdx.x * 8]);
}

extern "C" __global__ void cg_no_wait(const __half *a, float *d) {
    __shared__ float s[32];
    namespace cg = cooperative_groups;
    cg::thread_block block = cg::this_thread_block();
    s[threadIdx.x] = 0.0f;
    __syncthreads();
    cg::memcpy_async(block, s, (const float *)a, sizeof s);
    __syncthreads();                      /* cg::wait(block) belongs here */
    float v = s[(threadIdx.x + 1) % 32]; // @cg_no_wait
    cg::wait(block);
    d[threadIdx.x] = v;
}
