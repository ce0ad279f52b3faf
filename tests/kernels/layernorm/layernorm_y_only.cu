/*
 * layernorm_y_only.cu: a layernorm that writes y alone (no mean or rstd), in its
 * own argument order: the harness checks it on y only (tests/configs/edge/
 * layernorm.json, tests/test_layernorm.sh). Its variance is the one-pass
 * E[x^2] - E[x]^2, in double so that it stays exact enough.
 */
__global__ void layernorm_y_only(const float *x, const float *w, const float *b, float *y, int rows, int cols,
                                 float eps) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double s = 0.0, s2 = 0.0;
    for (int c = 0; c < cols; c++) {
        const double v = x[(size_t)r * cols + c];
        s += v, s2 += v * v;
    }
    const double m = s / cols, var = s2 / cols - m * m;
    const float rs = (float)(1.0 / sqrt((var > 0 ? var : 0.0) + eps));
    for (int c = 0; c < cols; c++) y[(size_t)r * cols + c] = (x[(size_t)r * cols + c] - (float)m) * rs * w[c] + b[c];
}
