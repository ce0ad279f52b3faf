/* Harness stand-in for NVRTC <limits.h>: CHAR_BIT, INT_MAX, LLONG_MIN ... (libcu++'s <cuda/std/climits>), MB_LEN_MAX. */
#pragma once
#include <cuda/std/climits>

#ifndef MB_LEN_MAX
#define MB_LEN_MAX 16
#endif
