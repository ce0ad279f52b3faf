/* nvrtc.c: placeholder; NVRTC compile lands next. */
#include "compile.h"
int hn_compile_cuda(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err) {
    (void)out; if (log_out) *log_out = NULL;
    return hn_errf(err, "%s: NVRTC compile not implemented yet", req->src_path);
}
const char *hn_nvrtc_version(void) { return "unavailable"; }
