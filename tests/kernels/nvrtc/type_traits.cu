// <type_traits>, <limits>, <utility> and <algorithm>: libcu++'s, in std::.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <utility>

static_assert(std::is_same_v<std::remove_cv_t<const volatile int>, int>, "");
static_assert(std::is_floating_point<float>::value && !std::is_integral_v<double>, "");
static_assert(std::is_same_v<std::conditional_t<true, char, long>, char>, "");
static_assert(std::numeric_limits<float>::max() == 0x1.fffffep127f, "");
static_assert(std::numeric_limits<int>::min() == -2147483647 - 1, "");
static_assert(std::numeric_limits<float>::epsilon() == 1.0f / 8388608, "");
static_assert(std::min(3, 4) == 3 && std::max(3, 4) == 4 && std::max({1, 5, 2}) == 5, "");
static_assert(std::clamp(7, 0, 5) == 5, "");

template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
__device__ T twice(T v) {
    return v + v;
}

__global__ void probe(float *x, int *i) {
    x[0] = std::min(x[1], x[2]) + std::max(x[3], std::numeric_limits<float>::lowest()) +
           twice(x[4]);
    auto p = std::make_pair(i[0], x[5]);
    auto [a, b] = p;
    std::swap(i[1], i[2]);
    i[3] = a + (int)b + std::exchange(i[4], 0) + (int)std::index_sequence<1, 2, 3>::size();
}
