/* Harness stand-in for NVRTC <stdlib.h>: malloc, free, abs (built in); calloc, aligned_alloc, div (libcu++'s); EXIT_*. */
/* Not provided (no device function behind them): exit, abort (use __trap()), rand,
 * atoi, strtol, qsort, getenv ... */
#pragma once
#include <cuda/std/cstdlib>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1

using ::cuda::std::aligned_alloc;
using ::cuda::std::calloc;
using ::cuda::std::div;
using ::cuda::std::div_t;
using ::cuda::std::ldiv;
using ::cuda::std::ldiv_t;
using ::cuda::std::lldiv;
using ::cuda::std::lldiv_t;
