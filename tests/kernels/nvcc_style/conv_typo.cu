// conv_typo: does not compile (a missing semicolon), for tests of rows that never ran.
__global__ void conv_typo(const float *in, float *out) {
    out[threadIdx.x] = in[threadIdx.x]
}
