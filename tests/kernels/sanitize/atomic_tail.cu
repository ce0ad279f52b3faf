/*
 * An integer atomicAdd as a kernel's last statement, on an output never
 * written: compiled with tail calls, the kernel jumped to the atomic and the
 * atomic to the sanitizer's callback, whose return address was then the
 * emulator's runtime, so the finding said "at an unknown place (pc ...)"
 * instead of this file's line.
 */
__global__ void count_tail(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd((int *)y + i, x[i] > 0 ? 1 : 0);
}
