// <stdbool.h>: bool is a C++ keyword; the header still includes and says so.
#include <stdbool.h>

static_assert(__bool_true_false_are_defined && sizeof(bool) == 1 && true, "");

__global__ void probe(bool *out) { out[threadIdx.x] = false; }
