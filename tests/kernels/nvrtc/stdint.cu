// <stdint.h> and <cstdint>: fixed-width types, their limits, INTn_C (tests/test_nvrtc_headers.c).
#include <stdint.h>
#include <cstdint>

static_assert(sizeof(uint8_t) == 1 && sizeof(int16_t) == 2 && sizeof(uint32_t) == 4, "");
static_assert(sizeof(int64_t) == 8 && sizeof(uintptr_t) == sizeof(void *), "");
static_assert(INT32_MAX == 2147483647 && UINT32_MAX == 4294967295u, "");
static_assert(INT64_MIN < 0 && UINT64_C(1) << 63 != 0 && SIZE_MAX == ~(size_t)0, "");
static_assert(sizeof(std::uint32_t) == 4 && sizeof(std::intptr_t) == 8, "");

__global__ void probe(uint32_t *out, const int64_t *in) {
    out[threadIdx.x] = (uint32_t)(in[threadIdx.x] & INT32_MAX);
}
