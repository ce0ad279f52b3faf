/* emu_bench.c: placeholder */
#include "emu.h"
int hn_emu_bench(FILE *out, hn_err *err) { (void)out; return hn_errf(err, "not yet"); }
