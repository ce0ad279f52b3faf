/*
 * elementwise.cu: relu (op relu: y = max(x, 0), n values) as grid-stride and
 * vectorised kernels, correct and with one planted bug each, for `harness check`
 * (tests/configs/sancheck/elementwise.json, tests/test_sancheck.sh). A line a
 * finding must name carries `expect: CLASS KERNEL`; a kernel without marks must
 * be silent (rl_grid_short is found by the output check, not the sanitizer).
 *
 *   rl_ok            one value per thread, the guard `i < n`
 *   rl_vec_ok        four values per thread through float4 (the buffer's start is
 *                    16-byte aligned), the tail one at a time
 *   rl_tail_le       the guard `i <= n` writes one float past the end of y
 *   rl_float2_offset pairs of floats loaded through float2 from x + 1 (the first
 *                    value "peeled" though the buffer was already aligned)
 *   rl_double_copy   the sign test moves 8 bytes at a time as double, from x + 1
 *   rl_int_wrap      a scaled offset is computed as i * stride in int (stride
 *                    2^22, undone by >> 22); from i = 512 it wraps negative
 *   rl_grid_short    correct code, launched on half the blocks it needs (grid
 *                    ceil_div(n, 256) for 128 threads): half of y is never written
 */

__global__ void rl_ok(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

__global__ void rl_vec_ok(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (4 * i + 3 < n) {
        const float4 v = reinterpret_cast<const float4 *>(x)[i];
        reinterpret_cast<float4 *>(y)[i] = make_float4(fmaxf(v.x, 0.0f), fmaxf(v.y, 0.0f), fmaxf(v.z, 0.0f),
                                                       fmaxf(v.w, 0.0f));
    } else {
        for (int j = 4 * i; j < n; j++) y[j] = fmaxf(x[j], 0.0f);
    }
}

__global__ void rl_tail_le(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = i < n ? fmaxf(x[i], 0.0f) : 0.0f; // expect: memcheck rl_tail_le
}

__global__ void rl_float2_offset(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) y[0] = fmaxf(x[0], 0.0f); /* the peeled first value */
    if (2 * i + 2 < n) {
        const float2 v = reinterpret_cast<const float2 *>(x + 1)[i]; // expect: memcheck rl_float2_offset
        y[2 * i + 1] = fmaxf(v.x, 0.0f);
        y[2 * i + 2] = fmaxf(v.y, 0.0f);
    } else if (2 * i + 1 < n) {
        y[2 * i + 1] = fmaxf(x[2 * i + 1], 0.0f);
    }
}

__global__ void rl_double_copy(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) y[0] = fmaxf(x[0], 0.0f);
    if (2 * i + 2 < n) {
        double pair = reinterpret_cast<const double *>(x + 1)[i]; // expect: memcheck rl_double_copy
        float v[2];
        memcpy(v, &pair, sizeof v);
        y[2 * i + 1] = fmaxf(v[0], 0.0f);
        y[2 * i + 2] = fmaxf(v[1], 0.0f);
    } else if (2 * i + 1 < n) {
        y[2 * i + 1] = fmaxf(x[2 * i + 1], 0.0f);
    }
}

__global__ void rl_int_wrap(const float *x, float *y, int n, int stride) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int off = i * stride; /* the bug: int; (size_t)i * stride is right */
    y[i] = fmaxf(x[off >> 22], 0.0f); // expect: memcheck rl_int_wrap
}

__global__ void rl_grid_short(const float *x, float *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
