/* mma.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no warp matrix functions, nvcuda::wmma). */
#error "harness CPU emulator: mma.h (warp matrix functions, nvcuda::wmma) is not supported"
