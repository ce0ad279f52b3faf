/*
 * cache.h: the compile cache on disk: writing an entry with its checksum
 * record, verifying it before anything uses its bytes, and knowing which names
 * in the cache folder are the harness's (for `harness cache info|clean`).
 *
 * An entry (emu-<key>.so, cuda-<key>.cubin, cuda-<key>.meta) is its payload
 * followed by a 72-byte record, written into the same file:
 *
 *   "\nharness-cache-v1 <size: 20 decimal digits> <hn_hash of the payload: 32 hex>\n"
 *
 * so the payload and its record appear together with one rename (a temporary
 * name unique to the process and call, then rename): a reader sees the old
 * entry or the new one, never a mix, and processes compiling the same key at
 * once each rename a complete entry. The record after the payload harms no
 * reader: dlopen and addr2line go by the ELF headers, the CUBIN's length is the
 * payload's, the .meta parser sees the payload only.
 *
 * Verification reads the whole file once and hashes it (FNV-1a, two 64-bit
 * lanes: any change to one byte changes both; not a defence against someone
 * forging entries). An entry that is empty, too short, without a record
 * (truncated, or written by a harness before records), of the wrong size or
 * with the wrong checksum is bad: the compilers discard it (one warning on
 * stderr naming the file and what was wrong) and compile again.
 *
 * Other files the harness keeps there, without records: emu-<key>.cc (the
 * generated source of a module), emu-bench-<hash>.cu (harness bench's kernel),
 * emu-shim-<hash>/ (the emulator's headers), and temporaries
 * (<name>.tmp.<pid>[.<n>]). Everything else in the folder is the user's and
 * is never removed.
 */
#ifndef HN_CACHE_H
#define HN_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util.h"

enum { HN_CACHE_OK = 0, HN_CACHE_MISSING = 1, HN_CACHE_BAD = 2 };

/* Bytes the record adds to an entry. */
#define HN_CACHE_RECORD_LEN 72

/* A temporary name beside path, unique to this process and call
 * ("<path>.tmp.<pid>.<n>"). Caller frees. */
char *hn_cache_tmp_name(const char *path);

/* Writes data (size bytes) and its record as the entry at path, atomically.
 * Returns 0, or -1 with err (nothing is left behind). */
int hn_cache_write(const char *path, const void *data, size_t size, hn_err *err);

/* Makes an entry of tmp, a complete file a tool wrote (the host compiler's
 * .so, under a hn_cache_tmp_name): appends the record, renames it to path.
 * Returns 0, or -1 with err and tmp removed. */
int hn_cache_commit(const char *tmp, const char *path, hn_err *err);

/* Verifies the entry at path without changing anything. Returns HN_CACHE_OK,
 * HN_CACHE_MISSING (no file of that name) or HN_CACHE_BAD with what was
 * wrong in why ("checksum mismatch ..."). On HN_CACHE_OK, if data is not
 * NULL, *data receives the payload, NUL-terminated (caller frees), and *size
 * (if not NULL) its length. */
int hn_cache_verify(const char *path, char **data, size_t *size, char *why, size_t why_size);

/* hn_cache_verify for a compiler about to use the entry: a bad entry is also
 * discarded (hn_cache_discard). Same results. */
int hn_cache_load(const char *path, char **data, size_t *size, char *why, size_t why_size);

/* Prints the one warning for a bad entry ("harness: cache: PATH: WHY;
 * discarded, compiling again") and removes the file, unless another process
 * has replaced it since it was read (then the new file is left alone). */
void hn_cache_discard(const char *path, const char *why);

/* What a name in the cache folder is. */
typedef enum {
    HN_CACHE_OTHER = 0,  /* not the harness's: never touched */
    HN_CACHE_EMU_SO,     /* emu-<key>.so (record) */
    HN_CACHE_CUBIN,      /* cuda-<key>.cubin (record) */
    HN_CACHE_META,       /* cuda-<key>.meta (record) */
    HN_CACHE_EMU_SRC,    /* emu-<key>.cc */
    HN_CACHE_BENCH_SRC,  /* emu-bench-<hash>.cu */
    HN_CACHE_SHIM,       /* emu-shim-<hash>/ (a folder) */
    HN_CACHE_TMP,        /* <one of the above>.tmp.<pid>[.<n>] */
    HN_CACHE_N_KINDS
} hn_cache_kind;

/* "emu modules (.so)" ... */
const char *hn_cache_kind_name(hn_cache_kind kind);
/* Whether entries of this kind carry a record (and can be verified). */
int hn_cache_kind_has_record(hn_cache_kind kind);

typedef struct {
    const char *name;    /* in the folder */
    const char *path;    /* folder + "/" + name */
    hn_cache_kind kind;
    int is_dir;
    uint64_t bytes;      /* a folder: its files, recursively */
    time_t mtime;
    long pid;            /* HN_CACHE_TMP: the writer's process id */
} hn_cache_file;

/* Calls fn for every name in dir (sorted; symbolic links are never
 * followed), until fn returns non-zero (which is returned). A folder that
 * does not exist has no names: returns 0. -1 with err when dir cannot be
 * read. */
int hn_cache_walk(const char *dir, int (*fn)(const hn_cache_file *f, void *ctx), void *ctx,
                  hn_err *err);

/* Whether a temporary file was left by a writer that is gone: its process no
 * longer exists and it is a minute old, or it is an hour old whatever the
 * process (a compile writes its temporary at the very end, then renames it). */
int hn_cache_tmp_is_stale(const hn_cache_file *f, time_t now);

/* Removes f (a shim folder with everything under it). Only for the harness's
 * kinds: -1 with err for HN_CACHE_OTHER or when removing fails. */
int hn_cache_remove(const hn_cache_file *f, hn_err *err);

#endif
