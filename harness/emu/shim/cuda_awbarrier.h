/* cuda_awbarrier.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no asynchronous barriers). */
#error "harness CPU emulator: cuda_awbarrier.h (asynchronous barriers) is not supported"
