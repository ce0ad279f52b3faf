// uint, ushort, ulong without an include: nvcc on Linux has them (cuda_runtime.h ->
// <stdlib.h> -> <sys/types.h>), and kernels written for it use them (siboehm's SGEMM
// kernels: "const uint cRow = blockIdx.y"); a kernel's own typedef repeats them.
typedef unsigned int uint;

static_assert(sizeof(uint) == 4 && sizeof(ushort) == 2 && sizeof(ulong) == 8, "");

__global__ void probe(float *out) {
    const uint row = blockIdx.y;
    const ushort lane = (ushort)(threadIdx.x % 32);
    const ulong at = (ulong)row * 32 + lane;
    out[at] = 1.0f;
}
