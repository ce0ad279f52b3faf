/*
 * broken.cu: deliberately wrong kernels for tests/test_emu_faults.c. Each must
 * make the emulator's launch fail with a message naming the kernel, block,
 * thread and line; the `@name` comments mark the lines the test expects.
 *
 *   divergent_barrier    threads wait at two different __syncthreads
 *   same_line_barrier    if (c) __syncthreads(); else __syncthreads(); on one line
 *   exit_at_barrier      one thread returns while the others wait
 *   warp_deadlock        half a warp in __shfl_sync, the other half at a barrier
 *   missing_lanes        a full mask in a 16-thread block
 *   exited_lane          lanes leave before a full-mask shuffle
 *   oob_write            writes one element past the end of a buffer
 *   null_write           writes through a null pointer
 *   under_write          writes a few elements before the start of a buffer
 *   deep_recursion       recursion until the fiber stack overflows
 *   spin_forever         spins on a plain load: only the time-out stops it
 *   spin_atomic          spins on an atomic that never changes
 *   crash_while_spinning block 0 writes past a buffer while the others spin on a flag
 *   failed_assert        assert() in device code
 *   divide_by_zero       integer division by zero
 *   dyn_overflow         writes past the end of the dynamic shared memory
 *   dyn_read_overflow    reads one float past it
 *   dyn_pad_write        writes into the padding after 13 bytes of dynamic shared memory
 *   static_overflow      writes one element past a static __shared__ array
 *   (after ok_sum, a correct kernel)
 *   early_exit_shfl      lanes 0-7 return, the rest shuffle with the full mask
 *   late_exit_shfl       lane 31 returns after a barrier, before the others shuffle
 *   bad_width            a shuffle width that is not a power of two up to 32
 *   mask_without_self    lane 0's mask leaves lane 0 out
 *   mask_mismatch        lane 1 arrives with a mask that overlaps lane 0's
 *   barrier_deadlock     half the block at a barrier, half in a shuffle needing it
 *   exit_before_barrier  thread k returns, the others reach __syncthreads
 *   spin_alone           thread 1 spins with nothing else in its block to run
 *   bad_collective       a collective op the runtime does not know
 *   static_read_overflow reads one element past a 2-D static __shared__ array
 *   ok_sum               a correct reduction, run after every failure
 */
#include <assert.h>

__global__ void divergent_barrier(int *out) {
    if (threadIdx.x < 16) {
        __syncthreads(); // @barrier_a
        out[threadIdx.x] = 1;
    } else {
        __syncthreads(); // @barrier_b
        out[threadIdx.x] = 2;
    }
}

__global__ void same_line_barrier(int *out, int k) {
    if (threadIdx.x < k) __syncthreads(); else __syncthreads(); // @same_line
    out[threadIdx.x] = 1;
}

__global__ void exit_at_barrier(int *out) {
    if (threadIdx.x == 5) return;
    __syncthreads(); // @exit_barrier
    out[threadIdx.x] = 1;
}

__global__ void warp_deadlock(int *out) {
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        v = __shfl_sync(0xffffffffu, v, 0); // @deadlock_shfl
    else
        __syncthreads(); // @deadlock_bar
    out[threadIdx.x] = v;
}

__global__ void missing_lanes(int *out) {
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0); // @missing
}

__global__ void exited_lane(int *out) {
    if (threadIdx.x >= 8) return;
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0); // @exited
}

__global__ void oob_write(float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 1.0f; // @oob
}

__global__ void under_write(float *out, int back) {
    if (threadIdx.x == 0) out[-back] = 3.0f;
}

// A float4 store 4 bytes past a 16-byte boundary: the CPU's aligned vector store
// raises a general-protection fault, which gives no address (a GPU: "misaligned address").
__global__ void misaligned_float4(float *out) {
    float4 v = make_float4(1.0f, 2.0f, 3.0f, 4.0f);
    *reinterpret_cast<float4 *>(out + 1 + 4 * threadIdx.x) = v; // @misaligned
}

__global__ void null_write(float *out) {
    float *p = threadIdx.x == 3 ? nullptr : out;
    p[threadIdx.x] = 2.0f; // @null
}

__device__ int deep(int n, volatile int *sink) {
    volatile int pad[64];
    pad[n & 63] = n;
    if (n == 0) return 0;
    int r = deep(n - 1, sink) + pad[n & 63]; // @deep
    *sink = r;
    return r;
}

__global__ void deep_recursion(int *out) {
    out[0] = deep(1 << 30, out + 1);
}

__global__ void spin_forever(volatile int *flag) {
    while (flag[0] == 0) { // @spin
    }
}

__global__ void spin_atomic(int *flag) {
    while (atomicAdd(flag, 0) == 0) { // @spin_atomic
    }
}

__global__ void crash_while_spinning(volatile int *flag, float *bad) {
    if (blockIdx.x == 0) {
        if (threadIdx.x == 0) bad[16] = 1.0f; // @crash (bad has 16 floats)
        return;
    }
    while (flag[0] == 0) {
    }
}

__global__ void failed_assert(int *out) {
    int v = threadIdx.x;
    assert(v < 20); // @assert
    out[threadIdx.x] = v;
}

__global__ void divide_by_zero(int *out, int zero) {
    out[threadIdx.x] = (int)threadIdx.x / zero; // @div
}

__global__ void dyn_overflow(float *out) {
    extern __shared__ float buf[];
    buf[threadIdx.x + 1] = 1.0f; // @dyn
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x];
}

__global__ void dyn_read_overflow(float *out) {
    extern __shared__ float rbuf[];
    rbuf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = rbuf[threadIdx.x + 1]; // @dyn_read
}

__global__ void dyn_pad_write(char *out) {
    extern __shared__ char bytes[];
    bytes[threadIdx.x] = 1; // @dyn_pad
    __syncthreads();
    out[threadIdx.x] = bytes[0];
}

__global__ void static_overflow(float *out) {
    __shared__ float tile[32]; // @tile_decl
    tile[threadIdx.x] = 0.0f;
    __syncthreads();
    tile[threadIdx.x + 1] = 2.0f; // @tile
    out[threadIdx.x] = tile[threadIdx.x];
}

__global__ void static_read_overflow(float *out) {
    __shared__ float grid2[4][8];
    grid2[threadIdx.x / 8][threadIdx.x % 8] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = grid2[threadIdx.x / 8][threadIdx.x % 8 + 1]; // @grid2
}

__global__ void ok_sum(const int *in, int *out) {
    __shared__ int s[128];
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if ((int)threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = s[0];
}

/* the block turns to fibers at thread 8, the first past the early return:
 * lanes 0-7 have exited by then */
__global__ void early_exit_shfl(int *out) {
    if (threadIdx.x < 8) return;
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 8); // @early_exit
}

/* after the barrier lane 31 runs first (it completed it) and leaves; lanes
 * 0-15 meet at __syncwarp, then lane 15 asks for every lane */
__global__ void late_exit_shfl(int *out) {
    __syncthreads();
    if (threadIdx.x >= 16) return;
    __syncwarp(0x0000ffffu);
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0); // @late_exit
}

__global__ void bad_width(int *out, int width) {
    out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0, width); // @bad_width
}

__global__ void mask_without_self(int *out) {
    out[threadIdx.x] = __shfl_sync(threadIdx.x == 0 ? 0x2u : 0xffffffffu, (int)threadIdx.x, 1); // @no_self
}

__global__ void mask_mismatch(int *out) {
    unsigned m = threadIdx.x == 1 ? 0x3u : 0xffffffffu;
    out[threadIdx.x] = __shfl_sync(m, (int)threadIdx.x, 0); // @mismatch
}

__global__ void barrier_deadlock(int *out) {
    int v = threadIdx.x;
    if (threadIdx.x < 16)
        __syncthreads(); // @bd_bar
    else
        v = __shfl_sync(0xffffffffu, v, 0); // @bd_shfl
    out[threadIdx.x] = v;
}

__global__ void exit_before_barrier(int *out, int k) {
    if ((int)threadIdx.x == k) return;
    __syncthreads(); // @exit_before
    out[threadIdx.x] = 1;
}

__global__ void spin_alone(int *flag) {
    if (threadIdx.x == 1)
        while (atomicAdd(flag, 0) == 0) { // @spin_alone
        }
}

/* calls the runtime directly, as a shim out of step with it would */
__global__ void bad_collective(int *out, int op) {
    out[threadIdx.x] = (int)hn_emu_coll(op, 0xffffffffu, 0, 0, 32, 0, __LINE__, __FILE__); // @bad_op
}
