/*
 * basic.cu: small kernels for the emulator's tests (tests/test_emu_run.c), one
 * per feature, each with a CPU check in the test.
 *
 *   reduce_shared     tree reduction in static __shared__ memory with __syncthreads
 *   reduce_warp       warp-shuffle reduction (__shfl_down_sync, __shfl_xor_sync)
 *   ballot_count      __ballot_sync + __popc counting of positive values
 *   histogram         atomicAdd on a shared and on a global histogram
 *   sum_float         float atomicAdd of every element into one global sum
 *   sum_double        double atomicAdd, same
 *   dyn_cast          extern __shared__ float[] with an offset cast to int*
 *   scale<N>          a templated kernel, found by name expression
 *   poly_const        __device__ helpers and a __constant__ array
 *   saxpy_stride      a grid-stride loop (no collectives: runs in loop mode)
 *   ordered_print     SINGLE_BLOCK-style spin-wait; printf in block order
 *   sync_votes        __syncthreads_count / _and / _or
 *   warp_misc         __shfl_up_sync with width, __any/__all_sync, __activemask,
 *                     __match_any_sync, __reduce_add_sync, __syncwarp
 *   dyn_file_scope    a file-scope extern __shared__ array
 *   handoff           intra-block spin hand-off through atomics, no barrier
 *   params            a signature to report: (pointer, int, float, unsigned
 *                     char, double, long long, struct)
 *   index3d           thread and block ids of a 3D launch, loop and fiber mode
 *   noinline_call     a __noinline__ __device__ helper next to #include <memory>
 *   votes             every vote, match and warp reduction (full and half-warp
 *                     masks) and the barrier votes, on inputs that give each
 *                     predicate both outcomes
 *   late_upgrade      the switch to fibers at thread 40 of a 2D block, after 40
 *                     threads have returned in loop mode
 *   shfl_edges        shuffles past the warp and across width-8 segments
 *   print_lines       five lines in two printf calls, for the printf budget
 */
#include <stdio.h>

#define BLOCK 256

__global__ void reduce_shared(const float *in, float *out, int n) {
    __shared__ float s[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_warp(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    /* lane 0 has the sum; broadcast it with an xor butterfly check */
    float b = __shfl_sync(0xffffffffu, v, 0);
    float x = b;
    for (int m = 1; m < 32; m <<= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
    if ((threadIdx.x & 31) == 0) out[i / 32] = x;
}

__global__ void ballot_count(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred = i < n && in[i] > 0;
    unsigned b = __ballot_sync(0xffffffffu, pred);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, __popc(b));
}

__global__ void histogram(const int *in, int n, unsigned *global_hist, int bins) {
    __shared__ unsigned h[64];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) h[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&h[in[i] % bins], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&global_hist[b], h[b]);
}

__global__ void sum_float(const float *in, float *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, in[i]);
}

__global__ void sum_double(const double *in, double *sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(sum, in[i]);
}

/* floats first, then ints right after them, in one dynamic buffer */
__global__ void dyn_cast(const float *in, float *out_f, int *out_i, int n) {
    extern __shared__ float dyn[];
    int *ints = (int *)(dyn + blockDim.x);
    int t = threadIdx.x;
    dyn[t] = in[blockIdx.x * blockDim.x + t];
    ints[t] = t * 3;
    __syncthreads();
    int r = blockDim.x - 1 - t; /* read what another thread wrote */
    out_f[blockIdx.x * blockDim.x + t] = dyn[r];
    out_i[blockIdx.x * blockDim.x + t] = ints[r];
    (void)n;
}

template <int N>
__global__ void scale(float *a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= N;
}

__constant__ float coeff[4] = {1.0f, -2.0f, 0.5f, 3.0f};

__device__ float horner(float x) {
    float r = 0.0f;
    for (int k = 3; k >= 0; k--) r = r * x + coeff[k];
    return r;
}

__device__ __forceinline__ float twice(float x) { return 2.0f * x; }

__global__ void poly_const(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice(horner(x[i]));
}

__global__ void saxpy_stride(float a, const float *x, float *y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void ordered_print(int *debug_counter) {
    int id = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0)
        while (atomicAdd(debug_counter, 0) != id) {
        }
    __syncthreads();
    if (threadIdx.x < 2) printf("block %d thread %d\n", id, threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(debug_counter, 1);
    }
}

__global__ void sync_votes(const int *in, int *out) {
    int v = in[threadIdx.x];
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v > 0);
    int o = __syncthreads_or(v > 0);
    if (threadIdx.x == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
    }
}

__global__ void warp_misc(int *out) {
    int lane = threadIdx.x & 31;
    int up = __shfl_up_sync(0xffffffffu, lane, 1, 8); /* segments of 8 */
    int any = __any_sync(0xffffffffu, lane == 5);
    int all = __all_sync(0xffffffffu, lane < 31);
    unsigned active = __activemask();
    unsigned match = __match_any_sync(0xffffffffu, lane / 4);
    int total = __reduce_add_sync(0xffffffffu, lane);
    __syncwarp();
    /* half the warp shuffles among itself only */
    int half = -1;
    if (lane < 16) half = __shfl_sync(0x0000ffffu, lane * 10, 15 - lane);
    out[threadIdx.x * 7 + 0] = up;
    out[threadIdx.x * 7 + 1] = any;
    out[threadIdx.x * 7 + 2] = all;
    out[threadIdx.x * 7 + 3] = (int)active;
    out[threadIdx.x * 7 + 4] = (int)match;
    out[threadIdx.x * 7 + 5] = total;
    out[threadIdx.x * 7 + 6] = half;
}

extern __shared__ __align__(16) int fs_dyn[];

__global__ void dyn_file_scope(int *out) {
    fs_dyn[threadIdx.x] = (int)(threadIdx.x + 100 * blockIdx.x);
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = fs_dyn[(threadIdx.x + 1) % blockDim.x];
}

/* thread 1 waits for thread 0's flag, thread 0 waits for thread 1's answer */
__global__ void handoff(int *flags, int *out) {
    if (threadIdx.x == 0) {
        atomicExch(&flags[0], 1);
        while (atomicAdd(&flags[1], 0) == 0) {
        }
        out[0] = flags[1];
    } else if (threadIdx.x == 1) {
        while (atomicCAS(&flags[0], 1, 2) != 1) {
        }
        atomicExch(&flags[1], 42);
    }
}

struct pair {
    int a, b;
};

__global__ void params(float *p, int i, float f, unsigned char c, double d, long long ll,
                       pair pr) {
    if (threadIdx.x == 0) p[0] = (float)(i + f + c + d + ll + pr.a + pr.b);
}

/* every thread writes its linear block and thread id; `sync` adds a barrier
 * (uniform across the block), which switches the block to fibers */
__global__ void index3d(int *out, int sync) {
    int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int per = blockDim.x * blockDim.y * blockDim.z;
    if (sync) __syncthreads();
    out[b * per + t] = b * 10000 + t;
}

/* a __noinline__ helper in a file that also includes <memory> (libstdc++
 * spells __attribute__((__noinline__)) there) */
#include <memory>
__noinline__ __device__ int not_inlined(int x) { return x * 7; }
__global__ void noinline_call(int *out) { out[threadIdx.x] = not_inlined((int)threadIdx.x); }

/* 64 threads (two warps); VOTES_OUT values per thread, in the order of
 * test_emu_run.c's votes_ref. Lanes 0-15 also vote among themselves (mask
 * 0x0000ffff); the others leave 0xdead there. */
#define VOTES_OUT 24
__global__ void votes(const int *in, unsigned *out) {
    int t = threadIdx.x, lane = t & 31, v = in[t], pred = -1;
    unsigned *o = out + t * VOTES_OUT;
    o[0] = __ballot_sync(0xffffffffu, v > 0);
    o[1] = (unsigned)__any_sync(0xffffffffu, v > 0);
    o[2] = (unsigned)__all_sync(0xffffffffu, v > 0);
    o[3] = (unsigned)__reduce_add_sync(0xffffffffu, v);
    o[4] = (unsigned)__reduce_min_sync(0xffffffffu, v);
    o[5] = __reduce_min_sync(0xffffffffu, (unsigned)v);
    o[6] = (unsigned)__reduce_max_sync(0xffffffffu, v);
    o[7] = __reduce_max_sync(0xffffffffu, (unsigned)v);
    o[8] = __reduce_and_sync(0xffffffffu, v);
    o[9] = __reduce_or_sync(0xffffffffu, v);
    o[10] = __reduce_xor_sync(0xffffffffu, v);
    o[11] = __match_any_sync(0xffffffffu, v);
    o[12] = __match_all_sync(0xffffffffu, v, &pred);
    o[13] = (unsigned)pred;
    o[14] = (unsigned)__syncthreads_count(v > 0);
    o[15] = (unsigned)__syncthreads_and(v > 0);
    o[16] = (unsigned)__syncthreads_or(v > 0);
    for (int k = 17; k < VOTES_OUT; k++) o[k] = 0xdeadu;
    if (lane < 16) {
        o[17] = __ballot_sync(0x0000ffffu, v > 0);
        o[18] = (unsigned)__any_sync(0x0000ffffu, v > 0);
        o[19] = (unsigned)__all_sync(0x0000ffffu, v > 0);
        o[20] = (unsigned)__reduce_min_sync(0x0000ffffu, v);
        o[21] = __match_any_sync(0x0000ffffu, v);
        pred = -1;
        o[22] = __match_all_sync(0x0000ffffu, v, &pred);
        o[23] = (unsigned)pred;
    }
}

/* 8x8 threads: those with linear id < 40 return at once (loop mode); the rest
 * reach __activemask, so the block turns to fibers at thread 40 (lane 8 of warp
 * 1): every thread runs once with its own ids, and warp 1's lanes 0-7 count as
 * exited */
__global__ void late_upgrade(int *runs, unsigned *out) {
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    atomicAdd(&runs[t], 1);
    if (t < 40) return;
    unsigned *o = out + (t - 40) * 4;
    o[0] = __activemask();
    o[1] = threadIdx.x;
    o[2] = threadIdx.y;
    o[3] = __ballot_sync(0xffffff00u, threadIdx.x & 1);
}

/* xor past the warp, or into a later segment, gives the lane its own value,
 * into an earlier segment the other lane's; down past a segment's end its own;
 * a source lane wraps within its segment */
__global__ void shfl_edges(int *out) {
    int lane = threadIdx.x & 31, v = 100 + (int)threadIdx.x;
    int *o = out + threadIdx.x * 4;
    o[0] = __shfl_xor_sync(0xffffffffu, v, 32);
    o[1] = __shfl_xor_sync(0xffffffffu, v, 8, 8);
    o[2] = __shfl_down_sync(0xffffffffu, v, 3, 8);
    o[3] = __shfl_sync(0xffffffffu, v, lane + 1, 8);
}

__global__ void print_lines(int *unused) {
    (void)unused;
    printf("a\nb\nc\n");
    printf("d\ne\n");
}
