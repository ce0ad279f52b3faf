/*
 * correct.cu: kernels that are correct in ways a careless sanitizer would
 * call wrong; tests/test_sanitize.c runs each under every check and expects
 * no finding at all. Same signature as bugs.cu: (const float *in, float *out,
 * int n), `in` written, `out` poisoned.
 *
 *   ok_tree_reduce        the textbook block reduction, a barrier per step
 *   ok_syncwarp_reduce    a warp-level reduction in shared memory with
 *                         __syncwarp between steps
 *   ok_shuffle_reduce     shuffles, then one value per warp through shared
 *                         memory and a barrier
 *   ok_cg_tiles           cooperative groups: tile.sync(), cg::reduce,
 *                         block.sync()
 *   ok_atomics            shared and global atomics from every thread
 *                         (a histogram; atomics are never racy); two blocks,
 *                         the global output written by block 0 only
 *   ok_atomic_handoff     a flag handed from one warp to another with
 *                         atomics, the data written before it read after it
 *   ok_own_bytes          each thread writes then reads its own bytes of a
 *                         char array (neighbours share words, not bytes)
 *   ok_read_own_write     a thread reads back what it wrote, no barrier
 *   ok_volatile_syncwarp  warp-synchronous code through volatile shared
 *                         memory with __syncwarp between its steps
 *   ok_double_buffer      two tiles alternating, one barrier per step
 *   ok_broadcast          every thread reads the one value thread 0 wrote
 *                         before a barrier, then thread 0 overwrites it
 *                         after the next
 *   ok_tail_guard         a grid larger than n with the usual guard
 *   ok_dynamic_reinterpret dynamic shared memory used as ints then floats,
 *                         a barrier between
 *   ok_coalesced          coalesced_threads() under a branch, an atomic per
 *                         group, the group's sync
 *   ok_struct_copy        structs copied through shared memory
 *   ok_same_value_flag    many threads set one flag to the same value with no
 *                         barrier between them (harmless: the value does not
 *                         depend on their order), read after a barrier
 *   ok_converged          the "converged" idiom: thread 0 sets a flag, a
 *                         barrier, every thread that disagrees clears it
 *   ok_struct_padding     structs with padding written field by field, copied
 *                         whole (the padding is never written, and never used)
 *   ok_activemask_tail    __activemask() after a tail guard returned the last
 *                         lanes, then shuffles on that mask (the mask must not
 *                         name the lanes that exited, though they run later)
 *   ok_atomic_counter     a shared counter zeroed, a barrier, atomics from
 *                         every thread, a barrier, read by all; thread 0 also
 *                         adds to the counter it zeroed
 *   ok_vector_aligned     float4 and float2 loads and stores at aligned
 *                         offsets, a scalar tail; a struct aligned to 8 inside
 *                         a shared array of 16-byte elements
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void ok_tree_reduce(const float *in, float *out, int n) {
    __shared__ float s[128];
    int t = threadIdx.x;
    s[t] = t < n ? in[t] : 0.0f;
    __syncthreads();
    for (int d = blockDim.x / 2; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[0] = s[0];
}

__global__ void ok_syncwarp_reduce(const float *in, float *out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x, lane = t % 32, base = t - lane;
    s[t] = in[t % n];
    __syncwarp();
    for (int d = 16; d > 0; d >>= 1) {
        float v = lane < d ? s[t + d] : 0.0f;
        __syncwarp();
        if (lane < d) s[t] += v;
        __syncwarp();
    }
    if (lane == 0) out[t / 32] = s[base];
}

__global__ void ok_shuffle_reduce(const float *in, float *out, int n) {
    __shared__ float warp_sums[4];
    int t = threadIdx.x;
    float v = in[t % n];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if (t % 32 == 0) warp_sums[t / 32] = v;
    __syncthreads();
    if (t < 32) {
        float w = t < (int)(blockDim.x / 32) ? warp_sums[t] : 0.0f;
        for (int d = 16; d > 0; d >>= 1) w += __shfl_xor_sync(0xffffffffu, w, d);
        if (t == 0) out[0] = w;
    }
}

__global__ void ok_cg_tiles(const float *in, float *out, int n) {
    __shared__ float s[64];
    __shared__ float partial[8];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
    int t = threadIdx.x;
    s[t] = in[t % n];
    tile.sync();
    /* each tile sums its own 8 elements through shared memory */
    float v = 0.0f;
    for (int i = 0; i < 8; i++) v += s[tile.meta_group_rank() * 8 + i];
    tile.sync();
    s[t] = v * 0.5f;
    float r = cg::reduce(tile, s[t], cg::plus<float>());
    if (tile.thread_rank() == 0) partial[tile.meta_group_rank()] = r;
    block.sync();
    if (t == 0) {
        float total = 0.0f;
        for (int i = 0; i < 8; i++) total += partial[i];
        out[0] = total;
    }
}

__global__ void ok_atomics(const float *in, float *out, int n) {
    __shared__ int hist[8];
    int t = threadIdx.x;
    if (t < 8) hist[t] = 0;
    __syncthreads();
    int bin = (int)in[t % n] & 7;
    atomicAdd(&hist[bin], 1);
    atomicAdd(&hist[(bin + 1) & 7], 2);
    __syncthreads();
    /* the global part in block 0 only: a second block's stores of out[0..8]
     * would race with the first's (its zero could land after the first block's
     * additions) */
    if (blockIdx.x != 0) return;
    if (t < 8) out[t] = (float)hist[t];
    if (t == 0) out[8] = 0.0f;
    __syncthreads();
    atomicAdd(&out[8], 1.0f);
}

__global__ void ok_atomic_handoff(const float *in, float *out, int n) {
    __shared__ float data[4];
    __shared__ int flag;
    int t = threadIdx.x;
    if (t == 0) flag = 0;
    __syncthreads();
    if (t == 1) {
        data[0] = in[0];
        data[1] = in[1 % n];
        __threadfence_block();
        atomicExch(&flag, 1);
    }
    if (t == 40) {
        while (atomicCAS(&flag, 1, 1) != 1) {
        }
        out[0] = data[0] + data[1];
    }
}

__global__ void ok_own_bytes(const float *in, float *out, int n) {
    __shared__ unsigned char bytes[64];
    int t = threadIdx.x;
    bytes[t] = (unsigned char)(t * 3);
    unsigned char mine = bytes[t];
    __syncthreads();
    out[t] = (float)(mine + bytes[(t + 1) % 64]) + in[t % n];
}

__global__ void ok_read_own_write(const float *in, float *out, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[t % n];
    s[t] = s[t] * 2.0f + 1.0f;
    out[t] = s[t];
}

__global__ void ok_volatile_syncwarp(const float *in, float *out, int n) {
    volatile __shared__ float vs[64];
    int t = threadIdx.x;
    vs[t] = in[t % n];
    __syncthreads();
    if (t < 32) {
        /* the warp-synchronous idiom through volatile memory, with the
         * __syncwarp Volta needs between the steps */
        float v = vs[t] + vs[t + 32];
        __syncwarp();
        vs[t] = v;
        __syncwarp();
        if (t < 16) vs[t] += vs[t + 16];
    }
    __syncthreads();
    if (t == 0) out[0] = vs[0];
}

__global__ void ok_double_buffer(const float *in, float *out, int n) {
    __shared__ float buf[2][64];
    int t = threadIdx.x;
    buf[0][t] = in[t % n];
    __syncthreads();
    float acc = 0.0f;
    for (int step = 0; step < 4; step++) {
        int cur = step & 1, nxt = cur ^ 1;
        acc += buf[cur][(t + 1) % 64];
        buf[nxt][t] = buf[cur][t] * 0.5f;
        __syncthreads();
    }
    out[t] = acc;
}

__global__ void ok_broadcast(const float *in, float *out, int n) {
    __shared__ float value;
    int t = threadIdx.x;
    if (t == 0) value = in[0];
    __syncthreads();
    float v = value;
    __syncthreads();
    if (t == 0) value = v * 2.0f;
    __syncthreads();
    out[t] = v + value + (float)n;
}

__global__ void ok_tail_guard(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 2.0f;
}

__global__ void ok_dynamic_reinterpret(const float *in, float *out, int n) {
    extern __shared__ float dyn[];
    int *as_int = reinterpret_cast<int *>(dyn);
    int t = threadIdx.x;
    as_int[t] = t;
    __syncthreads();
    int k = as_int[(t + 1) % blockDim.x];
    __syncthreads();
    dyn[t] = in[t % n] + (float)k;
    __syncthreads();
    out[t] = dyn[blockDim.x - 1 - t];
}

__global__ void ok_coalesced(const float *in, float *out, int n) {
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) count = 0;
    __syncthreads();
    if (in[t % n] > 0.5f) {
        cg::coalesced_group g = cg::coalesced_threads();
        if (g.thread_rank() == 0) atomicAdd(&count, (int)g.size());
        g.sync();
    }
    __syncthreads();
    out[t] = (float)count;
}

struct ok_pair {
    float a, b;
    int tag;
};

__global__ void ok_struct_copy(const float *in, float *out, int n) {
    __shared__ ok_pair pairs[64];
    int t = threadIdx.x;
    ok_pair p = {in[t % n], in[(t + 1) % n], t};
    pairs[t] = p;
    __syncthreads();
    ok_pair q = pairs[63 - t];
    out[t] = q.a + q.b + (float)q.tag;
}

__global__ void ok_same_value_flag(const float *in, float *out, int n) {
    __shared__ int found;
    int t = threadIdx.x;
    if (t == 0) found = 0;
    __syncthreads();
    if (in[t % n] > 0.5f) found = 1;
    __syncthreads();
    out[t] = (float)found;
}

__global__ void ok_converged(const float *in, float *out, int n) {
    __shared__ bool converged;
    int t = threadIdx.x;
    float x = in[t % n];
    for (int it = 0; it < 3; it++) {
        if (t == 0) converged = true;
        __syncthreads();
        if (x > 0.25f) converged = false;
        x *= 0.5f;
        __syncthreads();
        if (converged) break;
        __syncthreads();
    }
    out[t] = x;
}

struct ok_padded {
    char tag;   /* then 3 bytes of padding */
    float value;
};

__global__ void ok_struct_padding(const float *in, float *out, int n) {
    __shared__ ok_padded items[64];
    int t = threadIdx.x;
    items[t].tag = (char)(t & 7);
    items[t].value = in[t % n];
    __syncthreads();
    ok_padded mine = items[63 - t];
    out[t] = mine.value + (float)mine.tag;
}

__global__ void ok_activemask_tail(const float *in, float *out, int n) {
    int t = threadIdx.x;
    if (t >= n) return;
    unsigned m = __activemask();
    float first = __shfl_sync(m, in[t], __ffs(m) - 1);
    out[t] = first + (float)__popc(__ballot_sync(m, 1));
}

__global__ void ok_atomic_counter(const float *in, float *out, int n) {
    __shared__ int count;
    int t = threadIdx.x;
    if (t == 0) {
        count = 0;
        atomicAdd(&count, 1);
    }
    __syncthreads();
    if (t > 0) atomicAdd(&count, in[t % n] > 0.5f);
    __syncthreads();
    out[t] = (float)count;
}

struct ok_dpair {
    double d;
    int i;
};
struct ok_wrap {
    float x;
    ok_dpair p; /* 16 bytes at offset 8: every other element's p is 8 bytes off a multiple of 16 */
};
__global__ void ok_vector_aligned(const float *in, float *out, int n) {
    __shared__ ok_wrap pairs[64];
    int t = threadIdx.x;
    ok_dpair q;
    if (4 * t + 3 < n) {
        float4 v = reinterpret_cast<const float4 *>(in)[t];
        reinterpret_cast<float4 *>(out)[t] = make_float4(v.w, v.z, v.y, v.x);
        float2 h = reinterpret_cast<const float2 *>(in)[t];
        q.d = h.x;
        q.i = (int)h.y;
    } else {
        for (int k = 4 * t; k < n; k++) out[k] = in[k];
        q.d = 0.0;
        q.i = 0;
    }
    pairs[t].x = 1.0f;
    pairs[t].p = q;
    __syncthreads();
    ok_dpair p = pairs[(t + 1) % 64].p;
    if (t == 0) out[0] += (float)p.d + (float)p.i + pairs[1].x;
}
