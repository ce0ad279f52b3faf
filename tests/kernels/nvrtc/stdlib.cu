// <stdlib.h> and <cstdlib>: the device-side part (malloc, free, abs, div ...).
#include <stdlib.h>
#include <cstdlib>

__global__ void probe(int *out, long long v) {
    int *tmp = (int *)malloc(4 * sizeof(int));
    if (!tmp) return;
    tmp[0] = abs(out[1]) + std::abs(out[2]) + (int)llabs(v) + div(7, 2).quot + std::div(9L, 4L).rem;
    out[0] = tmp[0] + EXIT_SUCCESS;
    free(tmp);
}
