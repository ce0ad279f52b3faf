/*
 * softmax.cu: softmax cross-entropy (op softmax_cross_entropy) with a warp per row
 * in one block (grid 1, block 32 * WARPS), correct and with one planted bug each,
 * for `harness check` (tests/configs/sancheck/softmax.json, tests/test_sancheck.sh).
 * A line a finding must name carries `expect: CLASS KERNEL`; a kernel without
 * marks must be silent.
 *
 *   sm_ok             shuffle max and sum per row, the loss terms summed by a
 *                     shared array of per-warp sums, thread 0 writes the loss
 *   sm_vec_ok         rows read as float4 where the row start is 16-byte aligned
 *                     (classes % 4 == 0), else one float at a time
 *   sm_loss_atomic    every warp atomicAdds its terms into *loss, which nobody
 *                     zeroed (the output starts as poison)
 *   sm_grad_accum     the gradient row is written with `d[c] +=`: a read of the
 *                     output before anything wrote it
 *   sm_lanes_exit     lanes past `classes` return before the full-mask shuffles
 *   sm_vec_misaligned rows read as float4 whatever classes is: rows whose start
 *                     is not 16-byte aligned
 *   sm_warp_sums_race the per-warp sums are read by warp 0 without a barrier after
 *                     the other warps store them
 */
#ifndef WARPS
#define WARPS 2
#endif
#define SM_LOWEST (-3.402823466e+38f)

__device__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}
__device__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* the row's loss term, and its gradient row written to d */
__device__ float row_grad(const float *x, float *d, int label, int classes, float inv_batch) {
    const int lane = threadIdx.x % 32;
    float m = SM_LOWEST;
    for (int c = lane; c < classes; c += 32) m = fmaxf(m, x[c]);
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
    s = warp_sum(s);
    for (int c = lane; c < classes; c += 32) d[c] = (expf(x[c] - m) / s - (c == label ? 1.0f : 0.0f)) * inv_batch;
    return logf(s) + m - x[label];
}

__global__ void sm_ok(const float *logits, const int *labels, float *loss, float *dlogits, int batch, int classes) {
    __shared__ float warp_terms[WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = warp; b < batch; b += WARPS)
        terms += row_grad(logits + (size_t)b * classes, dlogits + (size_t)b * classes, labels[b], classes, inv_batch);
    if (lane == 0) warp_terms[warp] = terms;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < WARPS; i++) total += warp_terms[i];
        *loss = total * inv_batch;
    }
}

/* the row's max and sum of exponentials, reading four floats at a time when it can */
__device__ void row_stats_vec(const float *x, int classes, bool vec, float *m_out, float *s_out) {
    const int lane = threadIdx.x % 32;
    float m = SM_LOWEST;
    if (vec) {
        const float4 *x4 = reinterpret_cast<const float4 *>(x);
        for (int c = lane; c < classes / 4; c += 32) {
            const float4 v = x4[c]; // expect: memcheck sm_vec_misaligned
            m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
        }
        for (int c = classes / 4 * 4 + lane; c < classes; c += 32) m = fmaxf(m, x[c]);
    } else {
        for (int c = lane; c < classes; c += 32) m = fmaxf(m, x[c]);
    }
    m = warp_max(m);
    float s = 0.0f;
    for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
    *m_out = m;
    *s_out = warp_sum(s);
}

__device__ void sm_vec(const float *logits, const int *labels, float *loss, float *dlogits, int batch, int classes,
                       bool aligned_only) {
    __shared__ float warp_terms[WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = warp; b < batch; b += WARPS) {
        const float *x = logits + (size_t)b * classes;
        float *d = dlogits + (size_t)b * classes;
        float m, s;
        row_stats_vec(x, classes, aligned_only ? classes % 4 == 0 : true, &m, &s);
        const int label = labels[b];
        for (int c = lane; c < classes; c += 32) d[c] = (expf(x[c] - m) / s - (c == label ? 1.0f : 0.0f)) * inv_batch;
        terms += logf(s) + m - x[label];
    }
    if (lane == 0) warp_terms[warp] = terms;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < WARPS; i++) total += warp_terms[i];
        *loss = total * inv_batch;
    }
}

__global__ void sm_vec_ok(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                          int classes) {
    sm_vec(logits, labels, loss, dlogits, batch, classes, true);
}

__global__ void sm_vec_misaligned(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                                  int classes) {
    sm_vec(logits, labels, loss, dlogits, batch, classes, false);
}

__global__ void sm_loss_atomic(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                               int classes) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = warp; b < batch; b += WARPS)
        terms += row_grad(logits + (size_t)b * classes, dlogits + (size_t)b * classes, labels[b], classes, inv_batch);
    if (lane == 0) atomicAdd(loss, terms * inv_batch); // expect: initcheck sm_loss_atomic
}

__global__ void sm_grad_accum(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                              int classes) {
    __shared__ float warp_terms[WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = warp; b < batch; b += WARPS) {
        const float *x = logits + (size_t)b * classes;
        float *d = dlogits + (size_t)b * classes;
        float m = SM_LOWEST;
        for (int c = lane; c < classes; c += 32) m = fmaxf(m, x[c]);
        m = warp_max(m);
        float s = 0.0f;
        for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
        s = warp_sum(s);
        const int label = labels[b];
        for (int c = lane; c < classes; c += 32) d[c] += expf(x[c] - m) / s * inv_batch; // expect: initcheck sm_grad_accum
        __syncwarp(); /* lane 0 updates another lane's element next */
        if (lane == 0) d[label] -= inv_batch;
        terms += logf(s) + m - x[label];
    }
    if (lane == 0) warp_terms[warp] = terms;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < WARPS; i++) total += warp_terms[i];
        *loss = total * inv_batch;
    }
}

__global__ void sm_lanes_exit(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                              int classes) {
    const int lane = threadIdx.x % 32;
    if (lane >= classes) return; /* "nothing to do" for these lanes: but the shuffles name them */
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = threadIdx.x / 32; b < batch; b += WARPS) {
        const float *x = logits + (size_t)b * classes;
        float m = x[lane];
        for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off)); // expect: synccheck sm_lanes_exit
        float s = 0.0f;
        for (int c = lane; c < classes; c += 32) s += expf(x[c] - m);
        s = warp_sum(s);
        for (int c = lane; c < classes; c += 32)
            dlogits[(size_t)b * classes + c] = (expf(x[c] - m) / s - (c == labels[b] ? 1.0f : 0.0f)) * inv_batch;
        terms += logf(s) + m - x[labels[b]];
    }
    if (threadIdx.x == 0) *loss = terms * inv_batch;
}

__global__ void sm_warp_sums_race(const float *logits, const int *labels, float *loss, float *dlogits, int batch,
                                  int classes) {
    __shared__ float warp_terms[WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float inv_batch = 1.0f / batch;
    float terms = 0.0f;
    for (int b = warp; b < batch; b += WARPS)
        terms += row_grad(logits + (size_t)b * classes, dlogits + (size_t)b * classes, labels[b], classes, inv_batch);
    if (lane == 0) warp_terms[warp] = terms; // expect: race sm_warp_sums_race
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int i = 0; i < WARPS; i++) total += warp_terms[i]; // expect: race sm_warp_sums_race
        *loss = total * inv_batch;
    }
}
