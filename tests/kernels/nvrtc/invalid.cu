// Stand-ins included, then a mistake on line 8: NVRTC's own error must come through.
#include <cmath>
#include <cstdint>
#include <stdio.h>
#include <type_traits>

__global__ void probe(float *x) {
    uint32_t bad = "not a number";
    x[0] = std::sqrt(x[1]) + bad;
}
