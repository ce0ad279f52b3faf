/* emu_stub.c: placeholder until the emulator lands (delete when it does). */
#include <stdio.h>
#include "backend.h"
int hn_compile_emu(const hn_compile_req *req, hn_module_image *out, char **log_out, hn_err *err) {
    (void)out; if (log_out) *log_out = NULL;
    return hn_errf(err, "%s: emulator not implemented yet", req->src_path);
}
int hn_backend_emu_create(const hn_backend_opts *opts, hn_backend **out, hn_err *err) {
    (void)opts; (void)out;
    return hn_errf(err, "emulator not implemented yet");
}
int hn_emu_bench(FILE *out, hn_err *err) {
    (void)out;
    return hn_errf(err, "emulator not implemented yet");
}
