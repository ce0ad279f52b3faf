/*
 * layernorm_bugs.cu: layernorm kernels for tests/test_layernorm.sh (llm.c's
 * argument order), each with one mistake:
 *
 *   layernorm_unbiased  the variance divided by cols - 1 (torch.var's default,
 *                       not layer_norm's): rstd off by sqrt(cols / (cols - 1))
 *   layernorm_no_eps    eps left out: wrong everywhere here (even eps 1e-5
 *                       shows beside a variance of 0.25, and one column has
 *                       variance 0: rstd infinite)
 */
__device__ void stats(const float *x, int C, float *m, float *v) {
    float s = 0.0f;
    for (int c = 0; c < C; c++) s += x[c];
    *m = s / C;
    float q = 0.0f;
    for (int c = 0; c < C; c++) q += (x[c] - *m) * (x[c] - *m);
    *v = q;
}

__global__ void layernorm_unbiased(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                   const float *bias, int N, int C, float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float *x = inp + (size_t)r * C;
    float m, q;
    stats(x, C, &m, &q);
    const float rs = rsqrtf(q / (C > 1 ? C - 1 : 1) + eps);
    for (int c = 0; c < C; c++) out[(size_t)r * C + c] = (x[c] - m) * rs * weight[c] + bias[c];
    mean[r] = m, rstd[r] = rs;
}

__global__ void layernorm_no_eps(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                 const float *bias, int N, int C, float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float *x = inp + (size_t)r * C;
    float m, q;
    stats(x, C, &m, &q);
    const float rs = rsqrtf(q / C);
    for (int c = 0; c < C; c++) out[(size_t)r * C + c] = (x[c] - m) * rs * weight[c] + bias[c];
    mean[r] = m, rstd[r] = rs;
    (void)eps;
}
