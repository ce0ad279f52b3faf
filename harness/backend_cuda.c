/* backend_cuda.c: placeholder; the driver backend lands next. */
#include "backend.h"
#include <stdio.h>
int hn_cuda_available(char *why, size_t why_size) {
    snprintf(why, why_size, "no CUDA driver (not implemented yet)");
    return 0;
}
int hn_backend_cuda_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err) {
    (void)opts; (void)out;
    return hn_errf(err, "cuda backend not implemented yet");
}
