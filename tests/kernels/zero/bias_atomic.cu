/*
 * bias_atomic: dE/db of conv2d as many authors first write it: a thread per
 * element of dout, each adding its value into its channel's dbias with
 * atomicAdd. The kernel accumulates into its output, so the output must start
 * at 0: the variant says "zero": ["dbias"] (tests/test_zero_outputs.sh).
 * Padding 0 only: npix = (h - filter_size + 1) * (w - filter_size + 1).
 */
extern "C" __global__ void bias_atomic(const float *dout, float *dbias, int planes, int npix, int out_ch) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < (long long)planes * npix) atomicAdd(&dbias[(i / npix) % out_ch], dout[i]);
}
