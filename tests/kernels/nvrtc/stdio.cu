// <stdio.h> and <cstdio>: printf (and std::printf) in device code.
#include <stdio.h>
#include <cstdio>

__global__ void probe(const float *x, size_t n) {
    if (threadIdx.x == 0) printf("block %d: x[0] = %f of %zu\n", blockIdx.x, x[0], n);
    std::printf("thread %d\n", threadIdx.x);
}
