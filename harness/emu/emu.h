/*
 * emu.h: what the rest of the harness calls in the CPU emulator besides the
 * backend (backend.h: hn_backend_emu_create) and the compiler (compile.h:
 * hn_compile_emu). How it works, what it supports and its limits:
 * docs/emulator.md.
 */
#ifndef HN_EMU_H_PUBLIC
#define HN_EMU_H_PUBLIC

#include <stddef.h>
#include <stdio.h>

#include "util.h"

/* Measures the emulator and prints the figures to out: nanoseconds per fiber
 * switch, per barrier per thread, per thread without collectives, and the
 * emulated time of each kernels/conv2d variant on a mid-size case against a
 * single-threaded C loop computing the same convolution, side by side in the
 * same run. Compiles its kernels into hn_default_cache_dir(); finds
 * kernels/conv2d under $HARNESS_ROOT, else the source tree the harness was
 * built from. Prints figures (never judges their speed). quick: one repetition
 * of smaller work (a second or two). Returns -1 with err set if the emulator
 * cannot run, or a conv2d variant is missing, fails or disagrees with the loop. */
int hn_emu_bench(FILE *out, int quick, hn_err *err);

/* The stack each emulated thread gets: $HARNESS_EMU_STACK_KB (64 KB to 64 MB),
 * default 256 KB. */
size_t hn_emu_stack_bytes(void);

#endif
