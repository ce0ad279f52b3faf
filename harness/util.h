/*
 * util.h: small things every module uses.
 *
 *   hn_err  an error message buffer. Library functions return 0 on success and
 *           -1 on failure after writing one line into the caller's hn_err; only
 *           main decides to print and exit.
 *   hn_sb   a growable string buffer (like git's strbuf). `buf` is never NULL
 *           after hn_sb_init and is always NUL-terminated.
 *   hn_hash a 128-bit content hash (two independent 64-bit FNV-1a style lanes
 *           with a final mix); used for cache keys, not for security.
 *
 * Allocation failure is fatal (xmalloc and friends abort with a message):
 * there is nothing sensible a benchmark harness can do without memory.
 */
#ifndef HN_UTIL_H
#define HN_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HN_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define HN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HN_PRINTF(f, a)
#endif

/* What kind of failure an error is, where the caller's reaction differs: a
 * kernel that faulted (bad address, trap, divergent barrier, deadlock: the
 * device or the emulated block is not to be trusted afterwards) or that ran past
 * its time limit. */
enum { HN_ERR_OTHER = 0, HN_ERR_FAULT, HN_ERR_TIMEOUT };

typedef struct {
    char msg[2048];
    int kind;          /* HN_ERR_*; hn_errf sets HN_ERR_OTHER, hn_err_prefix keeps it */
} hn_err;

/* Writes a formatted message into err (if err is not NULL) and returns -1. */
int hn_errf(hn_err *err, const char *fmt, ...) HN_PRINTF(2, 3);
/* Text for a message: as is when it fits in size - 1 characters, else its start
 * and "...", so that a hostile string cannot push the rest of a message out of an
 * hn_err. Returns buf. */
const char *hn_excerpt(const char *text, char *buf, size_t size);
/* Sets the kind of the error in err (if not NULL); returns -1. */
int hn_err_kind(hn_err *err, int kind);
/* Prepends "prefix: " to the message already in err; returns -1. */
int hn_err_prefix(hn_err *err, const char *fmt, ...) HN_PRINTF(2, 3);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) HN_PRINTF(1, 2);

typedef struct {
    char *buf;
    size_t len;
    size_t cap;
} hn_sb;

void hn_sb_init(hn_sb *sb);
void hn_sb_free(hn_sb *sb);
void hn_sb_reset(hn_sb *sb);
void hn_sb_grow(hn_sb *sb, size_t extra);
void hn_sb_add(hn_sb *sb, const void *data, size_t n);
void hn_sb_adds(hn_sb *sb, const char *s);
void hn_sb_addc(hn_sb *sb, char c);
void hn_sb_addf(hn_sb *sb, const char *fmt, ...) HN_PRINTF(2, 3);
void hn_sb_vaddf(hn_sb *sb, const char *fmt, va_list ap);
/* Gives the buffer to the caller (who frees it) and resets sb. */
char *hn_sb_detach(hn_sb *sb);

/* Reads a whole file; the result is NUL-terminated (size excludes the NUL). */
int hn_read_file(const char *path, char **data, size_t *size, hn_err *err);
/* Writes atomically: a temporary file in the same folder, then rename. */
int hn_write_file(const char *path, const void *data, size_t size, hn_err *err);
/* mkdir -p; succeeds if the folder exists. */
int hn_mkdirs(const char *path, hn_err *err);

/* A new private folder $TMPDIR/<prefix>XXXXXX (/tmp without TMPDIR), caller
 * frees the path; NULL with the reason in err. */
char *hn_mkdtemp(const char *prefix, hn_err *err);
/* Makes path's folder and checks that path can be appended to (creating it
 * empty when missing), for an output written later: 0, or -1 with err. */
int hn_check_appendable(const char *path, hn_err *err);
int hn_file_exists(const char *path);
/* Removes path when it is a regular file (not a link, a folder or a device such
 * as /dev/null, which an output option may name); 0, or -1 with errno. */
int hn_unlink_regular(const char *path);
/* Whether path's first byte past white space is '{': a JSON config, not a CSV
 * (plot and compare name it as the mistake it is). 0 when it cannot be read. */
int hn_file_is_json(const char *path);
/* A case list as --case takes it: ids and ranges, "3", "0,5-8", separated by
 * commas. Checks every id against n_cases (skipped when n_cases < 0), marks them
 * in mask[0 .. n_cases) when mask is not NULL, and gives the first id and how
 * many distinct ids there are (either may be NULL). Returns 0, or -1 with a
 * message in err naming the token. */
int hn_case_list_parse(const char *spec, int64_t n_cases, unsigned char *mask, int64_t *first, int64_t *count,
                       hn_err *err);
/* The folder part of a path ("." when there is none); caller frees. */
char *hn_dirname(const char *path);
/* The last component of a path without its extension; caller frees. */
char *hn_stem(const char *path);
/* dir + "/" + rel unless rel is absolute; caller frees. */
char *hn_path_join(const char *dir, const char *rel);

typedef struct {
    uint64_t a, b;
} hn_hash;

void hn_hash_init(hn_hash *h);
void hn_hash_add(hn_hash *h, const void *data, size_t n);
/* Adds a string with its length, so ("ab","c") and ("a","bc") differ. */
void hn_hash_adds(hn_hash *h, const char *s);
/* 32 lowercase hex digits into out (33 bytes). */
void hn_hash_hex(const hn_hash *h, char out[33]);

/* Monotonic wall clock in seconds. */
double hn_now(void);

/* splitmix64: a tiny seeded generator for sampling and test data. */
uint64_t hn_splitmix64(uint64_t *state);
/* Uniform double in [0, 1). */
double hn_rand_unit(uint64_t *state);
/* Uniform integer in [0, n). */
uint64_t hn_rand_below(uint64_t *state, uint64_t n);

/* Runs argv (argv[0] looked up on PATH; never through a shell) with stdin from
 * /dev/null. The streams named in flags are captured into output (if not NULL);
 * the others go to /dev/null. Returns the exit status (0-255), 128 + the signal
 * when the child was killed, or -1 with err when it could not be started. */
#define HN_SPAWN_STDOUT 1
#define HN_SPAWN_STDERR 2
int hn_spawn(char *const argv[], int flags, hn_sb *output, hn_err *err);

/* The CPUs this process may run on (its affinity mask: a batch job's
 * allocation, taskset), else the online CPUs. */
int hn_cpu_count(void);

/* Trims leading and trailing whitespace in place; returns s. */
char *hn_trim(char *s);

#endif
