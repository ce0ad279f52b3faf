/* cuda_fp16.hpp: the CPU emulator defines everything in cuda_fp16.h. */
#include "cuda_fp16.h"
