/* Harness stand-in for NVRTC <stdint.h>: int32_t, uint64_t ..., INT32_MAX ..., INT64_C ..., libcu++'s <cuda/std/cstdint>. */
/* Under NVRTC libcu++ defines them in the global namespace, as <stdint.h> does. */
#pragma once
#include <cuda/std/cstdint>
