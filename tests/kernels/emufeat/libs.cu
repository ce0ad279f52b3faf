/*
 * libs.cu: CUB's block and warp collectives and libcu++'s atomics, as kernels
 * compiled with NVRTC include them, for tests/test_emu_features.c (checked
 * against C there; also compiled by NVRTC for sm_90).
 *
 *   cub_reduce     BlockReduce<float, 128> Sum (thread 0), Reduce with
 *                  cuda::maximum<>, Sum with num_valid, Sum of 4 items per
 *                  thread; WarpReduce<int> Sum, WarpReduce<int, 8> Sum
 *   cub_scan       BlockScan<int, 128> ExclusiveSum (+ aggregate),
 *                  InclusiveSum, 4 items per thread, with a running prefix
 *                  callback over two tiles; WarpScan<int> InclusiveSum
 *   atomic_refs    cuda::atomic_ref fetch_add on unsigned, float and double,
 *                  fetch_max, ++, +=, compare_exchange_strong, a same-block
 *                  hand-off through load(acquire) / store(release),
 *                  cuda::std::atomic_ref fetch_add
 *   half_limits    cuda::std::numeric_limits<__half> and <__nv_bfloat16>:
 *                  max, lowest, min, epsilon, infinity, as bit patterns, and
 *                  a max-reduction seeded with -infinity()
 *   bits           <cuda/std/bit> in C++17: bit_cast, popcount, countl_zero,
 *                  countr_zero, bit_width, bit_ceil, bit_floor, has_single_bit,
 *                  rotl, countl_one, endian
 *   spans          <cuda/std/span> in C++17: dynamic and static extents, range
 *                  for, subspan, first, last
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/atomic>
#include <cuda/functional>
#include <cuda/std/atomic>
#include <cuda/std/bit>
#include <cuda/std/cstdint>
#include <cuda/std/limits>
#include <cuda/std/span>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* out: [0] sum, [1] max, [2] sum of the first 100, [3] sum of 4 items per thread,
 * [4 + w] warp sums, [8 + t / 8] sums of 8 lanes */
__global__ void cub_reduce(const float *x, const int *xi, float *out, int *iout) {
    typedef cub::BlockReduce<float, 128> BR;
    typedef cub::WarpReduce<int> WR;
    typedef cub::WarpReduce<int, 8> WR8;
    __shared__ typename BR::TempStorage tmp;
    __shared__ typename WR::TempStorage wtmp[4];
    __shared__ typename WR8::TempStorage w8tmp[16];
    int t = threadIdx.x;
    float s = BR(tmp).Sum(x[t]);
    __syncthreads();
    float m = BR(tmp).Reduce(x[t], cuda::maximum<>());
    __syncthreads();
    float part = BR(tmp).Sum(x[t], 100);
    __syncthreads();
    float items[4] = {x[t], x[t] * 2.0f, x[t] * 3.0f, x[t] * 4.0f};
    float s4 = BR(tmp).Sum(items);
    if (t == 0) {
        out[0] = s;
        out[1] = m;
        out[2] = part;
        out[3] = s4;
    }
    int ws = WR(wtmp[t / 32]).Sum(xi[t]);
    if (t % 32 == 0) iout[t / 32] = ws;
    int w8 = WR8(w8tmp[t / 8]).Sum(xi[t]);
    if (t % 8 == 0) iout[4 + t / 8] = w8;
}

struct RunningPrefix {
    int total;
    __device__ int operator()(int block_aggregate) {
        int old = total;
        total += block_aggregate;
        return old;
    }
};

/* out: [t] exclusive, [128 + t] inclusive, [256 + 4t + i] 4 items exclusive,
 * [768 + t] warp inclusive, [896 + 128 k + t] two tiles with a running prefix,
 * [1152] the aggregate */
__global__ void cub_scan(const int *x, int *out) {
    typedef cub::BlockScan<int, 128> BS;
    typedef cub::WarpScan<int> WS;
    __shared__ typename BS::TempStorage tmp;
    __shared__ typename WS::TempStorage wtmp[4];
    int t = threadIdx.x, ex, inc, agg;
    BS(tmp).ExclusiveSum(x[t], ex, agg);
    __syncthreads();
    BS(tmp).InclusiveSum(x[t], inc);
    __syncthreads();
    out[t] = ex;
    out[128 + t] = inc;
    if (t == 0) out[1152] = agg;
    int items[4];
    for (int i = 0; i < 4; i++) items[i] = x[(4 * t + i) % 128] + i;
    BS(tmp).ExclusiveSum(items, items);
    __syncthreads();
    for (int i = 0; i < 4; i++) out[256 + 4 * t + i] = items[i];
    int w;
    WS(wtmp[t / 32]).InclusiveSum(x[t], w);
    out[768 + t] = w;
    RunningPrefix prefix{1000};
    for (int k = 0; k < 2; k++) {
        int v = x[(t + 64 * k) % 128], r;
        BS(tmp).ExclusiveSum(v, r, prefix);
        __syncthreads();
        out[896 + 128 * k + t] = r;
    }
}

__global__ void atomic_refs(unsigned *o) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> r(o[0]);
    r.fetch_add(1, cuda::memory_order_relaxed);
    cuda::atomic_ref<float, cuda::thread_scope_block> f(*(float *)(o + 1));
    f.fetch_add(0.5f);
    cuda::atomic_ref<unsigned> m(o[2]);
    m.fetch_max(threadIdx.x);
    cuda::atomic_ref<unsigned> c(o[3]);
    ++c;
    c += 2;
    cuda::atomic_ref<unsigned> flag(o[4]);
    if (threadIdx.x == 0) {
        while (flag.load(cuda::memory_order_acquire) == 0) {
        }
        o[5] = o[7] + 1;
    }
    if (threadIdx.x == 100) {
        o[7] = 41;
        flag.store(1, cuda::memory_order_release);
    }
    unsigned e = 0;
    cuda::atomic_ref<unsigned>(o[6]).compare_exchange_strong(e, threadIdx.x + 1);
    cuda::atomic_ref<double> d(*(double *)(o + 8));
    d.fetch_add(0.25);
    cuda::std::atomic_ref<unsigned> s(o[10]);
    s.fetch_add(3);
}

/* out: bit patterns (half in the low 16 bits) */
template <class T>
__device__ void limits_of(unsigned *o) {
    typedef cuda::std::numeric_limits<T> L;
    T v[6] = {L::max(), L::lowest(), L::min(), L::epsilon(), L::infinity(), L::denorm_min()};
    for (int i = 0; i < 6; i++) o[i] = *(const unsigned short *)&v[i];
    o[6] = L::is_specialized + 2 * L::has_infinity + 4 * L::digits;
}
__global__ void half_limits(const float *x, unsigned *o) {
    limits_of<__half>(o);
    limits_of<__nv_bfloat16>(o + 8);
    /* a max over negative values seeded with -infinity (softmax's first pass) */
    __half m = -cuda::std::numeric_limits<__half>::infinity();
    for (int i = 0; i < 8; i++) m = __hmax(m, __float2half(x[i]));
    o[16] = __half_as_ushort(m);
}

__global__ void bits(unsigned *o) {
    float f = 1.0f;
    o[0] = cuda::std::bit_cast<cuda::std::uint32_t>(f);
    o[1] = cuda::std::popcount(0xf0u) + cuda::std::countl_zero(1u) * 100 + cuda::std::countr_zero(8u) * 10000;
    o[2] = cuda::std::bit_width(5u) + cuda::std::bit_ceil(5u) * 10 + cuda::std::bit_floor(5u) * 1000 +
           cuda::std::has_single_bit(4u) * 100000;
    o[3] = cuda::std::rotl(0x80000001u, 1) + cuda::std::countl_zero((unsigned char)1) * 0x100;
    o[4] = cuda::std::countl_one(0xff000000u) + (cuda::std::endian::native == cuda::std::endian::little);
}

__device__ float span_sum(cuda::std::span<const float> s) {
    float r = 0;
    for (float v : s) r += v;
    return r;
}
/* o[0] = 1 + 2 + 3 + 4 + 4 + 2 + 3 + o[n - 2] + o[n - 1] */
__global__ void spans(float *o, int n) {
    cuda::std::span<float> all(o, n);
    float loc[4] = {1, 2, 3, 4};
    cuda::std::span<float, 4> fixed(loc);
    all[0] = span_sum(fixed) + fixed.size() + all.subspan(1, 2).size() + all.first<3>().size() + span_sum(all.last(2));
}
