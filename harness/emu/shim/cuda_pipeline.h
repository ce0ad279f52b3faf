/* cuda_pipeline.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no asynchronous copies, __pipeline_*). */
#error "harness CPU emulator: cuda_pipeline.h (asynchronous copies, __pipeline_*) is not supported"
