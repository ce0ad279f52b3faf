// <math.h> and <cmath>: CUDA's math functions (NVRTC built-ins), their std:: names,
// the macros NVRTC lacks, and a kernel that says `using namespace std;`.
#include <math.h>
#include <cmath>

static_assert(INFINITY > 3.4e38f && NAN != NAN && HUGE_VAL > 1.7e308, "");
static_assert(M_PI > 3.14159 && M_PI < 3.14160 && FP_NORMAL != FP_ZERO, "");

__global__ void probe(float *x, double *d, int *i) {
    x[0] = sqrtf(x[1]) + expf(x[2]) + fabsf(x[3]) + fminf(x[4], x[5]) + fmaxf(x[6], 0.0f) +
           rsqrtf(x[7]);
    x[1] = std::sqrt(x[8]) + std::abs(x[9]) + std::exp(x[10]) + std::pow(x[11], 2) +
           std::floor(x[12]);
    d[0] = std::sqrt(d[1]) + std::fma(d[2], d[3], d[4]) + (double)(float)M_PI;
    i[0] = std::abs(i[1]) + std::isnan(x[13]) + std::isnormal(d[5]) + std::fpclassify(x[14]) +
           std::isgreater(x[15], d[6]);
    x[2] = std::max(x[16], x[17]) + std::min(x[18], INFINITY);
}

using namespace std;

__global__ void probe_using_std(float *x, double *d, int *i) {
    x[0] = sqrt(x[1]) + abs(x[2]) + exp(x[3]) + max(x[4], x[5]) + min(x[6], 1.0f);
    d[0] = sqrt(d[1]) + abs(d[2]) + floor(d[3]);
    i[0] = abs(i[1]) + max(i[2], i[3]) + isnan(x[7]);
}
