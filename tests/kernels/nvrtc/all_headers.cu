// Every stand-in at once, with the toolkit's headers before them (-DTOOLKIT_FIRST) or
// after them.
#ifdef TOOLKIT_FIRST
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <assert.h>
#include <cassert>
#include <cfloat>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <limits>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>
#include <utility>

#ifndef TOOLKIT_FIRST
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

namespace cg = cooperative_groups;

__global__ void probe(float *x, const uint32_t *u, size_t n) {
    cg::thread_block block = cg::this_thread_block();
    assert(n > 0);
    __half h = __float2half(sqrtf(x[0]) + std::sqrt(x[1]) + std::abs(x[2]));
    float v = __half2float(h) + std::max(x[3], FLT_EPSILON) + (float)(u[0] & INT32_MAX);
    v += std::numeric_limits<float>::max() * 0.0f + (float)INT_MAX * 0.0f;
    static_assert(std::is_same_v<std::uint32_t, uint32_t>, "");
    memcpy(x + 4, &v, sizeof v);
    if (block.thread_rank() == 0) printf("%" PRIu32 " %f\n", u[0], v);
    block.sync();
}
