/*
 * emu_source.h: reading CUDA source text for the emulator.
 *
 *   A small C++ lexer (comments, string and character literals, raw strings,
 *   preprocessor lines as single tokens) that is good enough to find
 *   declarations and a few tokens; not a parser.
 *
 *   emu_src_rewrite_shared: rewrites every `extern __shared__ T name[];` (which no
 *   macro can handle: `extern` vs `static`) into a pointer at the launch's
 *   dynamic shared buffer. At function scope it becomes a local
 *   `T *const name = (T *)hn_emu_dyn_shared();`; at file scope a
 *   `static thread_local T *name;` that the launch wrapper points at the buffer
 *   before each thread runs. Alignment attributes are dropped (the buffer is
 *   128-byte aligned). The rewritten text has the same lines as the original
 *   (a multi-line declaration is padded with newlines), so compiler messages and
 *   line tables keep the user's line numbers.
 *
 *   emu_src_scan_unsupported: finds inline asm and device-side kernel launches
 *   (<<<...>>>), in raw source or in preprocessor output (following its line
 *   markers, skipping system headers and the shim).
 *
 * Invariants: outputs are owned by the caller (free with the matching _free).
 */
#ifndef HN_EMU_SOURCE_H
#define HN_EMU_SOURCE_H

#include <stddef.h>

#include "util.h"

typedef struct {
    char *text;        /* the rewritten source (NUL-terminated) */
    char **fs_names;   /* file-scope dynamic shared pointers, qualified (ns::name) */
    int n_fs;
    int n_rewritten;   /* declarations rewritten */
} emu_src_rewrite;

/* Rewrites the extern __shared__ declarations of src (from file `path`, for
 * messages). Returns -1 with "path:line: ..." in err for a declaration it
 * cannot handle. */
int emu_src_rewrite_shared(const char *src, const char *path, emu_src_rewrite *out, hn_err *err);
void emu_src_rewrite_free(emu_src_rewrite *r);

/* Looks for constructs the emulator cannot run. With preprocessed != 0, text is
 * compiler -E output and positions follow its line markers; files under
 * skip_dir (may be NULL) and system headers are ignored. Returns the number
 * found; the first is described in `what` as "file:line: ...". */
int emu_src_scan_unsupported(const char *text, const char *path, int preprocessed,
                             const char *skip_dir, char *what, size_t size);

/* Whether identifier `word` appears in text (outside comments and literals). */
int emu_src_uses_ident(const char *text, const char *word);

/* Whether text declares a variable that lives in device memory for the whole
 * program (`__device__ T x;`, `__managed__`): state blocks could share. */
int emu_src_declares_device_vars(const char *text);

/* The quoted includes (#include "x") of text, resolved beside `dir` and then in
 * include_dirs; appends existing paths not yet in *list (caller frees each
 * and the array). */
void emu_src_quoted_includes(const char *text, const char *dir, const char *const *include_dirs,
                             int n_include_dirs, char ***list, int *n);

#endif
