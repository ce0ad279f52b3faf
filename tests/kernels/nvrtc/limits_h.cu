// <limits.h> and <climits>: the integer limits.
#include <limits.h>
#include <climits>

static_assert(CHAR_BIT == 8 && SCHAR_MIN == -128 && UCHAR_MAX == 255 && SHRT_MAX == 32767, "");
static_assert(INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1 && UINT_MAX == 4294967295u, "");
static_assert(LLONG_MAX == 9223372036854775807LL && ULLONG_MAX == ~0ull, "");
static_assert(LONG_MAX == LLONG_MAX && LONG_MIN == LLONG_MIN, "");

__global__ void probe(int *out) { out[threadIdx.x] = threadIdx.x == 0 ? INT_MAX : INT_MIN; }
