/* backend.c: choosing a backend; see backend.h. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

int hn_backend_create(const char *name, const hn_backend_opts *opts, int verbose,
                      hn_backend **out, hn_err *err) {
    *out = NULL;
    if (strcmp(name, "cuda") == 0) return hn_backend_cuda_create(opts, out, err);
    if (strcmp(name, "emu") == 0) return hn_backend_emu_create(opts, out, err);
    if (strcmp(name, "auto") != 0)
        return hn_errf(err, "unknown backend '%s' (expected cuda, emu or auto)", name);
    char why[sizeof err->msg];
    if (hn_cuda_available(why, sizeof why)) {
        if (hn_backend_cuda_create(opts, out, err) == 0) {
            if (verbose) fprintf(stderr, "harness: backend cuda (auto)\n");
            return 0;
        }
        memcpy(why, err->msg, sizeof why);
    }
    if (verbose) fprintf(stderr, "harness: backend emu (auto: %s)\n", why);
    return hn_backend_emu_create(opts, out, err);
}

void hn_backend_destroy(hn_backend *b) {
    if (b) b->ops->destroy(b);
}
