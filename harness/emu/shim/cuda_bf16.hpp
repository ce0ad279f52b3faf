/* cuda_bf16.hpp: the CPU emulator defines everything in cuda_bf16.h. */
#include "cuda_bf16.h"
