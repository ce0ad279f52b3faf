/*
 * Reads of an output before it is written, through memcpy calls whose size the
 * compiler can bound (n <= 16): GCC expands those into plain moves, which
 * -fsanitize=thread does not instrument, so harness check missed them until the
 * instrumented build kept memcpy, memmove and memset as calls.
 *   COPY 0: memcpy of a size the compiler bounds to 8
 *   COPY 1: memmove of the same
 *   COPY 2: memset of a bounded size into an input's copy, then a bounded
 *           memcpy out of shared memory never written (the shared array)
 */
#include <string.h>

__global__ void relu_peek(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v[2] = {0, 0};
    const int k = n <= 64 ? 4 : 8; /* 4 here: bounded, not constant */
#if COPY == 0
    if (k <= 16) memcpy(v, y + i, k);
#elif COPY == 1
    if (k <= 16) memmove(v, y + i, k);
#else
    __shared__ float s[64];
    if (k <= 16) memcpy(v, s + threadIdx.x, k);
#endif
    y[i] = x[i] > 0 ? x[i] : 0;
    if (v[0] == 12345.0f) y[i] = 1; /* keeps the copy */
}
