// <stddef.h> and <cstddef>: size_t, ptrdiff_t, NULL, offsetof (a constant expression), std::byte.
#include <stddef.h>
#include <cstddef>

struct pixel {
    char tag;
    double value;
    float rgb[3];
};
static_assert(offsetof(pixel, value) == 8 && offsetof(pixel, rgb[2]) == 24, "");
static_assert(sizeof(size_t) == 8 && sizeof(std::size_t) == 8 && sizeof(std::ptrdiff_t) == 8, "");
static_assert(sizeof(std::byte) == 1 && alignof(max_align_t) >= alignof(double), "");

__global__ void probe(size_t *out, const pixel *p) {
    ptrdiff_t d = &p[1].rgb[0] - &p[0].rgb[0];
    out[0] = p != NULL ? offsetof(pixel, rgb) + (size_t)d : 0;
    out[1] = std::to_integer<size_t>(std::byte{7});
}
