// A header that exists nowhere: the stand-ins must not hide NVRTC's error naming it.
#include <stdint.h>
#include <hn_no_such_header.h>

__global__ void probe(uint32_t *x) { x[0] = 1; }
