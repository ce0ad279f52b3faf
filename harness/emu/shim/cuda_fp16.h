/* cuda_fp16.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no half precision, __half). */
#error "harness CPU emulator: cuda_fp16.h (half precision, __half) is not supported"
