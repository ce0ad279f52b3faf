// <inttypes.h> and <cinttypes>: the printf format macros, matching <stdint.h>'s types.
#include <inttypes.h>
#include <cinttypes>

__global__ void probe(const int64_t *a, const uint32_t *b, const uintptr_t *c) {
    printf("%" PRId64 " %" PRIu32 " %" PRIxPTR " %" PRIX64 "\n", a[0], b[0], c[0], (uint64_t)a[1]);
    std::int64_t same = a[2];
    (void)same;
}
