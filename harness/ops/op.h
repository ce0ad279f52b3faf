/*
 * op.h: what the harness knows about an operator (conv2d, pool2d, ...),
 * independent of any kernel that implements it: its parameters, its buffers
 * (typed tensors), how to generate inputs, the fp64 CPU reference, its FLOP and
 * byte counts, and the vendor libraries' implementations to measure beside the
 * variants (baselines).
 *
 * An operator is one folder, harness/ops/<name>/, whose files define
 * `const hn_op hn_op_<name>`; the build lists every folder in a generated
 * registry, so adding an operator edits no shared file (docs/operators.md).
 *
 * A config names one operator ("op": "conv2d") and gives each of its parameters
 * as an expression over the sweep's axes (or lets it default). Kernel arguments
 * bind by name to the operator's buffers ("in", "out", ...) and parameters.
 *
 * Parameters are an array of doubles in the order of op->params: integer ones
 * hold whole numbers; a choice parameter (type 'c') holds the index of its
 * value in `choices` (the config gives the value's name, e.g. "NHWC").
 *
 * Buffers: as many as the operator has, each with a dtype and a role. The
 * reference of an output buffer is complete (index == NULL, n equal to the
 * buffer's element count) or a sample (index[i] is the element whose expected
 * value is values[i]), for cases too large to compute in full. Values are fp64
 * whatever the buffer's dtype (int32 outputs hold exact integers and are compared
 * exactly).
 */
#ifndef HN_OP_H
#define HN_OP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* float16 and bfloat16 are 2-byte storage types (a GEMM's half inputs): the
 * checks and the references read them as the floats they hold; --save-tensors
 * writes float16 as numpy's "<f2" and bfloat16, which numpy lacks, as "<f4"
 * (exact: every bfloat16 is a float32). */
typedef enum { HN_DT_F32, HN_DT_F64, HN_DT_I32, HN_DT_F16, HN_DT_BF16 } hn_dtype;
typedef enum { HN_BUF_IN, HN_BUF_OUT, HN_BUF_INOUT } hn_buf_role;

size_t hn_dtype_size(hn_dtype t);
const char *hn_dtype_name(hn_dtype t);  /* "float32", ... */
const char *hn_dtype_numpy(hn_dtype t); /* "<f4", ...: the saved file's (bfloat16: "<f4") */

/* IEEE half and bfloat16 from and to float: to float exactly, from float
 * rounded to nearest even (overflow to infinity, NaN kept NaN), as CUDA's
 * __float2half_rn and __float2bfloat16_rn. */
float hn_half_to_float(uint16_t h);
uint16_t hn_float_to_half(float f);
float hn_bf16_to_float(uint16_t h);
uint16_t hn_float_to_bf16(float f);

typedef struct {
    const char *name;   /* "in" */
    hn_dtype dtype;
    hn_buf_role role;
    const char *shape;  /* documentation: "(n, in_ch, h, w)" */
} hn_op_buffer;

typedef struct {
    const char *name;   /* "h" */
    char type;          /* 'i' 32-bit int, 'f' float (the case's value is rounded to float32),
                           'd' double, 'c' a choice of `choices` */
    const char *dflt;   /* default expression (over the axes and earlier parameters), or
                           NULL when the config must set it */
    const char *doc;
    const char *const *choices; /* 'c': the value names, NULL-terminated */
} hn_op_param;

typedef struct {
    double *values;     /* expected values, fp64 */
    int64_t *index;     /* NULL: all elements in order; else element indices */
    int64_t n;
    char method[96];    /* "full", or "sampled 4096 of 1048576 (border + random)" */
} hn_ref;

/* Releases r's arrays (values through hn_ref_values_free) and zeroes it. */
void hn_ref_free(hn_ref *r);

/* n doubles (uninitialised) for a reference's values, released by hn_ref_free
 * or hn_ref_values_free, never by free(). Arrays of 1 MiB and more are 2 MiB
 * aligned, on transparent huge pages where Linux gives them, and recycled: a
 * released one is kept (a few, up to 512 MiB) for the next reference of about
 * its size, so a memory-bound reference writes mapped memory rather than
 * faulting every page in (which costs more than its work). */
double *hn_ref_alloc_values(int64_t n);
/* Releases an array of hn_ref_alloc_values (or of malloc); NULL is fine. */
void hn_ref_values_free(double *v);

/* Runs fn(ctx, begin, end) over [0, n), in contiguous chunks (about 8 a
 * thread) taken in order by the caller and hn_ref_threads(n, min_per_thread,
 * threads) - 1 helper threads, whichever is free; returns when every chunk is
 * done, without waiting for helpers that have not started (they find nothing
 * left). fn must not care which thread runs a chunk, nor in what order. */
void hn_ref_parallel(int64_t n, int64_t min_per_thread, int threads, void (*fn)(void *ctx, int64_t begin, int64_t end),
                     void *ctx);
/* How many: `threads` (<= 0: one per CPU), at most n / min_per_thread and 64,
 * at least 1. */
int hn_ref_threads(int64_t n, int64_t min_per_thread, int threads);

struct hn_backend;
struct hn_device_info;
struct hn_workload;

/* A vendor library's implementation of the operator, measured like a variant
 * (poison, warm-up, check, samples, check again) in rows of its own named
 * `name`. Only on the cuda backend. */
typedef struct {
    const char *name;       /* the rows' variant name, "cublas_im2col_sgemm" */
    const char *family;     /* the library: rows get a speedup_vs_<family> column */
    const char *precision;  /* "float" or "double": variants of that precision are
                               compared with it */
    /* The output buffers it writes, by name, NULL-terminated: its rows are checked
     * on these only, as a variant is on the outputs it binds (cuDNN's max pooling
     * gives no argmax). NULL: every output of the operator. */
    const char *const *outputs;
    /* Once per run: the baseline's state, or NULL with why in err (no library,
     * no such operation on this device): its rows are then `skipped`. */
    void *(*open)(struct hn_backend *be, const struct hn_device_info *dev, hn_err *err);
    void (*close)(void *state);
    /* Per case, before the measured work: scratch space, algorithm choice, input
     * conversions. Writes what will run (the rows' kernel column) into what. */
    int (*prepare)(void *state, struct hn_workload *w, char *what, size_t what_size, hn_err *err);
    /* The measured work, enqueued on the backend's stream. */
    int (*issue)(void *state, hn_err *err);
    /* After the case (NULL-safe on a state whose prepare failed). */
    void (*release)(void *state);
} hn_op_baseline;

typedef struct hn_op {
    const char *name;
    const char *doc;
    const hn_op_param *params;
    int n_params;
    const hn_op_buffer *buffers;
    int n_buffers;
    const hn_op_baseline *baselines;
    int n_baselines;
    /* Mid-size cases for `harness bench ops`, NULL-terminated, each a list of
     * parameter assignments "in_ch=64,h=128,..." (the others at their defaults;
     * an axis-named default such as h = img_size must be assigned). */
    const char *const *bench_cases;

    /* Validates the parameters and gives each buffer's element count. */
    int (*shape)(const double *p, int64_t *counts, hn_err *err);
    /* Optional: buffer i's dtype for the case's parameters (gemm's inputs follow
     * its `dtype` parameter); NULL: buffers[i].dtype always. */
    hn_dtype (*dtype)(const double *p, int buffer);
    /* Floating-point operations (an FMA counts 2) and the fewest bytes a kernel
     * must move (each input read once, each output written once). */
    double (*flop)(const double *p);
    double (*bytes)(const double *p);
    /* Optional, for operators with several outputs a kernel may compute apart
     * (dx, dweight, dbias): the FLOP of output buffer b alone. A row of a kernel
     * given only some outputs counts theirs (and the bytes of the buffers it is
     * given); without it, such a row counts flop(). */
    double (*flop_of)(const double *p, int b);
    /* The logical shape of buffer i (for messages, saved tensors and debug
     * views): fills dims (at most 4) and returns their count; their product is
     * the element count. */
    int (*dims)(const double *p, int buffer, int64_t dims[4]);
    /* A short human label of the case, e.g. "128x128x32 -> 512, f:9x9". */
    void (*label)(const double *p, char *buf, size_t size);
    /* Fills every input buffer (bufs[i] has counts[i] elements) from seed. */
    void (*generate)(const double *p, void *const *bufs, uint64_t seed);
    /* Computes the reference of every output buffer into refs[i] (entries of
     * input-only buffers are left empty). When the full reference would cost
     * more than budget_gflop, may compute a seeded sample instead. */
    int (*reference)(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop,
                     uint64_t seed, int threads, hn_err *err);
} hn_op;

/* The registry (generated by the build from harness/ops/<name>/). */
const hn_op *hn_op_find(const char *name);
/* Comma-separated list of known operator names, for messages. */
const char *hn_op_names(void);
/* The number of registered operators and the i-th one. */
int hn_op_count(void);
const hn_op *hn_op_at(int i);
int hn_op_param_index(const hn_op *op, const char *name);
/* The shape check of a 2-D operator: params[a] and params[b] (values p[a],
 * p[b]) whole numbers between 1 and 2^30 whose product, the element count put
 * in *n, is under 2^31 (the kernels index with int). Messages start with `op`.
 * Returns 0, or -1 with err. */
int hn_op_check_2d(const char *op, const hn_op_param *params, const double *p, int a, int b, int64_t *n, hn_err *err);
/* Buffer i's dtype for parameters p (op->dtype's, else the buffer's own). */
hn_dtype hn_op_dtype(const hn_op *op, const double *p, int buffer);
int hn_op_buffer_index(const hn_op *op, const char *name);
/* Whether baseline b writes buffer i (an output it declares, or any output when
 * it declares none). */
int hn_op_baseline_writes(const hn_op *op, const hn_op_baseline *b, int buffer);
/* The index of `value` among param i's choices, or -1. */
int hn_op_choice_index(const hn_op_param *p, const char *value);

/* Times every operator's reference on its bench cases (all operators, or the
 * one named only) against a plain copy of the same bytes, and prints a line per
 * case: GFLOP/s, GB/s, and the reference's time over the copy's. Returns 0, or
 * -1 when a case cannot be set up. */
int hn_op_bench(FILE *out, const char *only);

/* Fills a float buffer with seeded standard-normal values (as numpy's randn does
 * in the seed notebook; the exact stream is ours). */
void hn_fill_randn_f32(float *x, int64_t n, uint64_t seed);
/* Seeded standard-normal doubles. */
void hn_fill_randn_f64(double *x, int64_t n, uint64_t seed);
/* Uniform integers in [lo, hi). */
void hn_fill_uniform_i32(int32_t *x, int64_t n, int32_t lo, int32_t hi, uint64_t seed);

#endif
