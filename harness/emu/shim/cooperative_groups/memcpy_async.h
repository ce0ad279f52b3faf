/*
 * cooperative_groups/memcpy_async.h: for the CPU emulator, memcpy_async, wait
 * and wait_prior fail to compile where used, with a message naming them
 * (declared in ../cooperative_groups.h); including this header is fine.
 */
#ifndef HN_EMU_CG_MEMCPY_ASYNC_H
#define HN_EMU_CG_MEMCPY_ASYNC_H

#include "../cooperative_groups.h"

#endif
