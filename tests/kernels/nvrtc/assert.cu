// <assert.h> and <cassert>: CUDA's device assert; NDEBUG (on the command line or, as in
// C, defined before the include) turns it off. The test looks for the assertion's text
// in the CUBIN: present when assert is live, absent when it is compiled out.
#ifdef NDEBUG_IN_SOURCE
#define NDEBUG
#endif
#include <assert.h>
#include <cassert>

__global__ void probe(const int *n) {
    assert(n[threadIdx.x] > 0 && "hn_assert_probe");
}
