/* curand_kernel.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no cuRAND device API). */
#error "harness CPU emulator: curand_kernel.h (cuRAND device API) is not supported"
