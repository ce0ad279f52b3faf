// relu_shadowed: a template parameter named like the define its config passes
// (-DBLOCK=64 with template <int BLOCK>), an easy mistake: the compile fails, and
// the row's reason must name this file's line (GCC reports it at "<command-line>"),
// for tests/test_kernels_as_written.sh.
template <int BLOCK>
__global__ void relu_shadowed(const float *x, float *y, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
