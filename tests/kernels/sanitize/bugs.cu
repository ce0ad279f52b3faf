/*
 * bugs.cu: kernels with one planted bug each, for the emulator's sanitizer
 * (tests/test_sanitize.c). Every kernel takes (const float *in, float *out,
 * int n): `in` holds n written floats, `out` is poisoned (never written).
 *
 * A line that a finding may name carries a comment `expect: CLASS KERNEL`
 * (for a race: either access); the test checks the class of the row (race,
 * memcheck, initcheck, synccheck) and that its reason names one of them.
 *
 *   race_two_warps         no barrier between the writes of one warp and the
 *                          reads of the other (block of 64)
 *   race_hidden            a race only when n > 40 (a branch on a parameter)
 *   race_missing_syncwarp  a warp-level tree reduction without __syncwarp
 *   race_reduce_stride     a block reduction whose barrier is skipped for
 *                          strides below 64: a race across two warps
 *   race_same_word         two threads write one float with no barrier
 *   oob_global_slack       reads up to 8 bytes past the end of `in` (inside
 *                          the 16-byte slack the guard page cannot see)
 *   oob_global_before      writes 4 bytes before the start of `out`
 *   oob_dynamic_shared     writes one float past the dynamic shared memory
 *   oob_static_shared      reads one float past a static __shared__ array
 *   misaligned_int         an int read 2 bytes off its alignment
 *   misaligned_double      a double read 4 bytes off its alignment
 *   misaligned_float4      a float4 loaded at an 8-byte offset (the compiler
 *                          splits the load into aligned 4-byte ones; only the
 *                          type says it needs 16)
 *   misaligned_float2      a float2 stored at an odd float
 *   misaligned_helper_twice one inlined helper loads the same misaligned float4
 *                          from two call sites: one finding, counted twice per thread
 *   race_atomic_after_store thread 0 zeroes a shared counter with a plain
 *                          store, the others atomicAdd to it with no barrier
 *   race_read_before_atomics thread 0 reads a shared sum with a plain load
 *                          while the others still atomicAdd to it
 *   race_volatile_warp     the pre-Volta warp-synchronous reduction through
 *                          volatile shared memory, without __syncwarp
 *   uninit_shared          one element of a tile is never written
 *   uninit_tile_edge       a tile loaded for 30 of 32 threads, read by all
 *   uninit_output          reads its (poisoned) output before writing it
 *   sync_divergent         __syncthreads inside a branch half the block takes
 *   sync_exited_lane       a full-mask shuffle after half the warp returned
 *   sync_deadlock          a warp waits in a shuffle, the rest at a barrier
 */

__global__ void race_two_warps(const float *in, float *out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t % n]; // expect: race race_two_warps
    /* missing __syncthreads(): warp 0 reads what warp 1 writes */
    out[t] = s[(t + 32) % 64]; // expect: race race_two_warps
}

__global__ void race_hidden(const float *in, float *out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t % n];
    __syncthreads();
    float v = s[t];
    if (n > 40 && t < 63) {
        v += s[t + 1]; // expect: race race_hidden
        s[t] = v;      // expect: race race_hidden
    }
    __syncthreads();
    out[t] = s[t];
}

__global__ void race_missing_syncwarp(const float *in, float *out, int n) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = in[t % n];
    __syncwarp();
    for (int d = 16; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d]; // expect: race race_missing_syncwarp
        /* missing __syncwarp() */
    }
    if (t == 0) out[0] = s[0];
}

__global__ void race_reduce_stride(const float *in, float *out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = in[t % n];
    __syncthreads();
    for (int d = 64; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d]; // expect: race race_reduce_stride
        if (d >= 64) __syncthreads(); /* the bug: only the first step is followed by a barrier */
    }
    if (t == 0) out[0] = s[0];
}

__global__ void race_same_word(const float *in, float *out, int n) {
    __shared__ float s[4];
    int t = threadIdx.x;
    if (t == 0) s[0] = 0.0f;
    __syncthreads();
    if (t == 3 || t == 40) s[1] = in[t % n]; // expect: race race_same_word
    __syncthreads();
    out[t] = s[0] + s[1];
}

__global__ void oob_global_slack(const float *in, float *out, int n) {
    int t = threadIdx.x;
    out[t] = in[t]; // expect: memcheck oob_global_slack
}

__global__ void oob_global_before(const float *in, float *out, int n) {
    int t = threadIdx.x;
    out[t - 1] = in[t % n]; // expect: memcheck oob_global_before
}

__global__ void oob_dynamic_shared(const float *in, float *out, int n) {
    extern __shared__ float dyn[]; /* launched with 60 floats */
    int t = threadIdx.x;
    dyn[t] = in[t % n]; // expect: memcheck oob_dynamic_shared
    __syncthreads();
    out[t] = dyn[t % 60];
}

__global__ void oob_static_shared(const float *in, float *out, int n) {
    __shared__ float s[32];
    int t = threadIdx.x;
    s[t] = in[t % n];
    __syncthreads();
    out[t] = s[t] + s[t + 1]; // expect: memcheck oob_static_shared
}

__global__ void misaligned_int(const float *in, float *out, int n) {
    int t = threadIdx.x;
    const int *p = (const int *)((const char *)in + 2);
    out[t] = (float)p[t % (n - 1)]; // expect: memcheck misaligned_int
}

__global__ void misaligned_double(const float *in, float *out, int n) {
    int t = threadIdx.x;
    const double *p = (const double *)(in + 1);
    out[t] = (float)p[t % (n / 2 - 1)]; // expect: memcheck misaligned_double
}

__global__ void uninit_shared(const float *in, float *out, int n) {
    __shared__ float tile[32];
    int t = threadIdx.x;
    if (t != 5) tile[t] = in[t % n];
    __syncthreads();
    out[t] = tile[31 - t]; // expect: initcheck uninit_shared
}

__global__ void uninit_tile_edge(const float *in, float *out, int n) {
    __shared__ float tile[34];
    int t = threadIdx.x;
    if (t < 30) tile[t] = in[t % n]; /* the bug: the last two are never loaded */
    __syncthreads();
    out[t] = tile[t] + tile[t + 2]; // expect: initcheck uninit_tile_edge
}

__global__ void uninit_output(const float *in, float *out, int n) {
    int t = threadIdx.x;
    out[t] += in[t % n]; // expect: initcheck uninit_output
}

__global__ void sync_divergent(const float *in, float *out, int n) {
    int t = threadIdx.x;
    float v = in[t % n];
    if (t < 16) {
        __syncthreads(); // expect: synccheck sync_divergent
        v += 1.0f;
    } else {
        __syncthreads(); // expect: synccheck sync_divergent
    }
    out[t] = v;
}

__global__ void sync_exited_lane(const float *in, float *out, int n) {
    int t = threadIdx.x;
    if (t >= 16) return; // expect: synccheck sync_exited_lane
    float v = __shfl_sync(0xffffffffu, in[t % n], 0); // expect: synccheck sync_exited_lane
    out[t] = v;
}

__global__ void sync_deadlock(const float *in, float *out, int n) {
    int t = threadIdx.x;
    float v = in[t % n];
    if (t < 16) v = __shfl_down_sync(0xffffffffu, v, 1); // expect: synccheck sync_deadlock
    __syncthreads(); // expect: synccheck sync_deadlock
    out[t] = v;
}

__global__ void misaligned_float4(const float *in, float *out, int n) {
    int t = threadIdx.x;
    float4 v = *reinterpret_cast<const float4 *>(in + 4 * (t % (n / 4 - 1)) + 2); // expect: memcheck misaligned_float4
    out[t] = v.x + v.y + v.z + v.w;
}

__device__ float4 load4(const float *p) {
    return *reinterpret_cast<const float4 *>(p); // expect: memcheck misaligned_helper_twice
}

__global__ void misaligned_helper_twice(const float *in, float *out, int n) {
    int t = threadIdx.x;
    float4 a = load4(in + 2);
    out[t] = a.x;
    float4 b = load4(in + 2); /* out may alias in: loaded again, another instruction */
    out[t] += b.y + (float)n;
}

__global__ void misaligned_float2(const float *in, float *out, int n) {
    int t = threadIdx.x;
    if (t < n / 2 - 1) *reinterpret_cast<float2 *>(out + 2 * t + 1) = make_float2(in[t], in[t + 1]); // expect: memcheck misaligned_float2
}

__global__ void race_atomic_after_store(const float *in, float *out, int n) {
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) count = 0; // expect: race race_atomic_after_store
    atomicAdd(&count, in[t % n] > 0.5f); // expect: race race_atomic_after_store
    __syncthreads();
    out[t] = (float)count;
}

__global__ void race_read_before_atomics(const float *in, float *out, int n) {
    __shared__ float sum;
    int t = threadIdx.x;
    if (t == 0) sum = 0.0f;
    __syncthreads();
    atomicAdd(&sum, in[t % n]); // expect: race race_read_before_atomics
    if (t == 0) out[0] = sum; // expect: race race_read_before_atomics
}

__global__ void race_volatile_warp(const float *in, float *out, int n) {
    volatile __shared__ float vs[64];
    int t = threadIdx.x;
    vs[t] = in[t % n];
    __syncthreads();
    if (t < 32) {
        vs[t] += vs[t + 32]; // expect: race race_volatile_warp
        if (t < 16) vs[t] += vs[t + 16]; // expect: race race_volatile_warp
    }
    __syncthreads();
    if (t == 0) out[0] = vs[0];
}
