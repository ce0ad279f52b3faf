/*
 * global_race.cu: per-channel sums (op conv2d_backward_bias, as reduce.cu) whose
 * blocks share global memory, racing and correct, for the global race check of
 * `harness check` (tests/configs/sancheck/global_race.json, tests/test_sancheck.sh).
 * A line a finding must name carries `expect: CLASS KERNEL`; a kernel without
 * marks must be silent.
 *
 *   gr_ww_neighbour   each block zeroes the next channel's sum before writing its
 *                     own: two blocks store to one element (write after write)
 *   gr_raw_prev       each block reads the previous block's sum with nothing
 *                     ordering the blocks (read after write across blocks)
 *   gr_dbias_plus     two blocks per channel add their partial with a plain
 *                     `dbias[c] +=` (the classic lost update)
 *   gr_hist_plain     one block, a histogram in global memory with a plain
 *                     `hist[bin] += v` from every thread
 *   gr_atomic         gr_dbias_plus fixed: atomicAdd
 *   gr_atomic_ref     the same through cuda::atomic_ref::fetch_add
 *   gr_grid_stride    each thread sums whole channels in a grid-stride loop:
 *                     disjoint writes
 *   gr_last_block     threadFenceReduction's finish: partials, __threadfence(),
 *                     an atomic counter; the last block of a channel reads them
 *   gr_cas_loop       float addition by the atomicCAS loop, whose first read
 *                     `old = *addr` is plain
 *   gr_sync_scratch   a block's global scratch written, read and written again,
 *                     each step ordered by __syncthreads
 */
#include <cuda/atomic>

#ifndef BLOCK
#define BLOCK 64
#endif

/* the block's sum of dout[c*npix + j] for j in [j0, j1) (every thread gets it) */
__device__ float block_sum(const float *dout, int c, int npix, int j0, int j1) {
    __shared__ float s[BLOCK];
    const int t = threadIdx.x;
    float acc = 0.0f;
    for (int j = j0 + t; j < j1; j += BLOCK) acc += dout[(size_t)c * npix + j];
    s[t] = acc;
    __syncthreads();
    for (int k = BLOCK / 2; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    const float r = s[0];
    __syncthreads();
    return r;
}

__global__ void gr_ww_neighbour(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x;
    const float sum = block_sum(dout, c, npix, 0, npix);
    if (threadIdx.x == 0 && c + 1 < out_ch) dbias[c + 1] = 0.0f; // expect: race gr_ww_neighbour
    if (threadIdx.x == 0) dbias[c] = sum; // expect: race gr_ww_neighbour
}

__global__ void gr_raw_prev(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x;
    const float sum = block_sum(dout, c, npix, 0, npix);
    if (threadIdx.x == 0) dbias[c] = sum; // expect: race gr_raw_prev
    /* "is the previous channel's sum there yet?": nothing says it is */
    if (threadIdx.x == 0 && c > 0 && dbias[c - 1] != dbias[c - 1]) dbias[c] = 0.0f; // expect: race gr_raw_prev
}

__global__ void gr_dbias_plus(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x, half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    const float sum = block_sum(dout, c, npix, j0, j1);
    if (threadIdx.x == 0) dbias[c] += sum; // expect: race gr_dbias_plus
}

__global__ void gr_hist_plain(const float *dout, float *dbias, int out_ch, int npix) {
    for (int p = threadIdx.x; p < out_ch * npix; p += BLOCK) dbias[p / npix] += dout[p]; // expect: race gr_hist_plain
}

__global__ void gr_atomic(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x, half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    const float sum = block_sum(dout, c, npix, j0, j1);
    if (threadIdx.x == 0) atomicAdd(&dbias[c], sum);
}

__global__ void gr_atomic_ref(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x, half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    const float sum = block_sum(dout, c, npix, j0, j1);
    if (threadIdx.x == 0) {
        cuda::atomic_ref<float, cuda::thread_scope_device> r(dbias[c]);
        r.fetch_add(sum);
    }
}

__global__ void gr_grid_stride(const float *dout, float *dbias, int out_ch, int npix) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < out_ch; c += gridDim.x * blockDim.x) {
        float acc = 0.0f;
        for (int j = 0; j < npix; j++) acc += dout[(size_t)c * npix + j];
        dbias[c] = acc;
    }
}

/* partial: (out_ch, 2) sums, count: (out_ch) blocks done, both zeroed */
__global__ void gr_last_block(const float *dout, float *dbias, int out_ch, int npix, float *partial,
                              unsigned *count) {
    __shared__ bool last;
    const int c = blockIdx.x, half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    const float sum = block_sum(dout, c, npix, j0, j1);
    if (threadIdx.x == 0) {
        partial[2 * c + blockIdx.y] = sum;
        __threadfence(); /* the partial is visible before the count says so */
        last = atomicInc(&count[c], gridDim.y) == gridDim.y - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) dbias[c] = partial[2 * c] + partial[2 * c + 1];
}

__global__ void gr_cas_loop(const float *dout, float *dbias, int out_ch, int npix) {
    const int c = blockIdx.x, half = (npix + 1) / 2, j0 = blockIdx.y * half, j1 = min(npix, j0 + half);
    const float sum = block_sum(dout, c, npix, j0, j1);
    if (threadIdx.x == 0) {
        int *addr = (int *)&dbias[c];
        int old = *addr, assumed;
        do {
            assumed = old;
            old = atomicCAS(addr, assumed, __float_as_int(__int_as_float(assumed) + sum));
        } while (assumed != old);
    }
}

/* work: (out_ch, BLOCK) */
__global__ void gr_sync_scratch(const float *dout, float *dbias, int out_ch, int npix, float *work) {
    const int c = blockIdx.x, t = threadIdx.x;
    float *w = work + (size_t)c * BLOCK;
    float acc = 0.0f;
    for (int j = t; j < npix; j += BLOCK) acc += dout[(size_t)c * npix + j];
    w[t] = acc;
    __syncthreads();
    if (t == 0) {
        float s = 0.0f;
        for (int k = 0; k < BLOCK; k++) s += w[k];
        w[0] = s;
    }
    __syncthreads();
    const float total = w[0];
    __syncthreads();
    w[t] = t == 0 ? total : 0.0f; /* reused: the next step's input */
    __syncthreads();
    if (t == 0) dbias[c] = w[0];
}
