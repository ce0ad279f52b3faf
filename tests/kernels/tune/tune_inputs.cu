// tune_inputs: element-wise relu kernels for tests/test_tune_inputs.sh, the
// configs an outside user wrote for harness tune. BLOCK threads per block,
// ITEMS elements per thread.
//   relu_items  correct for every configuration, except with -DBUG3=1, where
//               ITEMS=3 skips each thread's last element (a tunable that makes
//               the kernel wrong: tune must never pick it)
//   relu_hang   never returns when ITEMS == 4 (a time-out for some tunables)
//   relu_fault  writes out of bounds when ITEMS == 4 (a fault for some tunables)
#ifndef BUG3
#define BUG3 0
#endif
__global__ void relu_items(const float *x, float *y, int n) {
    long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
    for (int k = 0; k < ITEMS; k++) {
        long long i = base + k;
        if (BUG3 && ITEMS == 3 && k == 2) continue;
        if (i < n) { float v = x[i]; y[i] = v <= 0.0f ? 0.0f : v; }
    }
}

__global__ void relu_hang(const float *x, float *y, int n) {
    long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
    if (ITEMS == 4) { volatile int spin = 1; while (spin) {} }
    for (int k = 0; k < ITEMS; k++) {
        long long i = base + k;
        if (i < n) { float v = x[i]; y[i] = v <= 0.0f ? 0.0f : v; }
    }
}

// relu_fault: writes far out of bounds when ITEMS == 4 (a fault for some tunables)
__global__ void relu_fault(const float *x, float *y, int n) {
    long long base = ((long long)blockIdx.x * BLOCK + threadIdx.x) * ITEMS;
    for (int k = 0; k < ITEMS; k++) {
        long long i = base + k;
        if (ITEMS == 4) y[i + 100000000LL] = 1.0f;
        if (i < n) { float v = x[i]; y[i] = v <= 0.0f ? 0.0f : v; }
    }
}
