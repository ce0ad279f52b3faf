/*
 * patterns.cu: memory access patterns with known per-request figures, for the
 * emulator's profile (tests/test_profile.c). Blocks of 64 threads (two warps);
 * sectors count from the start of the buffer, as if it were 256-byte aligned
 * like cudaMalloc's. Each line the profile must report carries
 * `want: SPACE KIND SECTORS-OR-CONFLICTS-PER-REQUEST REQUESTS-PER-BLOCK`.
 */

__global__ void coalesced(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i]; // want: global load 4 2
    out[i] = v;      // want: global store 4 2
}

__global__ void strided(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i * 32]; // want: global load 32 2
    out[i] = v;           // want: global store 4 2
}

__global__ void broadcast_misaligned(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = in[0];     // want: global load 1 2
    float b = in[i + 1]; // want: global load 5 2
    out[i] = a + b;      // want: global store 4 2
}

__global__ void half_warps(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 32 < 16) out[i] = in[i]; // want: global load 2 2 want: global store 2 2
}

__global__ void banks(const float *in, float *out) {
    __shared__ float s[64 * 32];
    __shared__ double d[64];
    int t = threadIdx.x;
    float v = in[t];      // want: global load 4 2
    s[t] = v;             // want: shared store 0 2
    s[64 + 2 * t] = v;    // want: shared store 1 2
    s[t * 32] = 1.0f;     // want: shared store 31 2
    d[t] = 2.0;           // want: shared store 0 2
    __syncthreads();
    float r = s[0] + (float)d[t]; // want: shared load 0 4
    out[t] = r;           // want: global store 4 2
}
