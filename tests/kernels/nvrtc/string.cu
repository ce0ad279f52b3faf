// <string.h> and <cstring>: memcpy and memset in device code (and std::memcpy, memmove).
#include <string.h>
#include <cstring>

struct params {
    float scale;
    int n;
};

__global__ void probe(float *out, const params *p) {
    params local;
    memcpy(&local, p, sizeof local);
    float row[8];
    memset(row, 0, sizeof row);
    std::memcpy(row, out, 4 * sizeof(float));
    std::memmove(row + 1, row, 4 * sizeof(float));
    out[threadIdx.x] = row[threadIdx.x % 8] * local.scale + local.n;
}
