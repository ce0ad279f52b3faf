/* Harness stand-in for NVRTC <string.h>: memcpy, memset (built in); memmove, memcmp, memchr (libcu++'s). */
/* Not provided: strlen, strcmp, strcpy ... (no device functions behind them). */
#pragma once
#include <cuda/std/cstring>

using ::cuda::std::memchr;
using ::cuda::std::memcmp;
using ::cuda::std::memmove;
