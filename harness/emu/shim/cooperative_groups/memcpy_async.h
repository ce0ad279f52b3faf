/*
 * cooperative_groups/memcpy_async.h: memcpy_async, wait and wait_prior for the
 * CPU emulator, which ../cooperative_groups.h defines (on the pipeline
 * primitives of ../cuda_pipeline.h); CUDA wants this header included for them.
 */
#ifndef HN_EMU_CG_MEMCPY_ASYNC_H
#define HN_EMU_CG_MEMCPY_ASYNC_H

#include "../cooperative_groups.h"

#endif
