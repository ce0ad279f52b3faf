/* cuda_bf16.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no bfloat16, __nv_bfloat16). */
#error "harness CPU emulator: cuda_bf16.h (bfloat16, __nv_bfloat16) is not supported"
