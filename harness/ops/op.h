/*
 * op.h: what the harness knows about an operator (conv2d, ...), independent of
 * any kernel that implements it: its parameters, its buffers and their sizes, how
 * to generate inputs, the fp64 CPU reference, and its FLOP and byte counts.
 *
 * A config names one operator ("op": "conv2d") and gives each of its parameters
 * as an expression over the sweep's axes. Kernel arguments bind by name to the
 * operator's buffers ("in", "out", ...) and parameters ("h", "pad", ...).
 *
 * Parameters are passed around as an array of doubles in the order of
 * op->params; integer parameters hold whole numbers (checked by the config).
 *
 * The reference for an output buffer is either complete (index == NULL, n equal
 * to the buffer's element count) or a sample (index[i] is the element whose
 * expected value is values[i]), for cases too large to compute in full.
 */
#ifndef HN_OP_H
#define HN_OP_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

typedef enum { HN_DT_F32, HN_DT_F64, HN_DT_I32 } hn_dtype;
typedef enum { HN_BUF_IN, HN_BUF_OUT, HN_BUF_INOUT } hn_buf_role;

size_t hn_dtype_size(hn_dtype t);
const char *hn_dtype_name(hn_dtype t); /* "float32", ... */

typedef struct {
    const char *name;   /* "in" */
    hn_dtype dtype;
    hn_buf_role role;
    const char *shape;  /* documentation: "(in_ch, h, w)" */
} hn_op_buffer;

typedef struct {
    const char *name;   /* "h" */
    char type;          /* 'i' 32-bit int, 'f' float, 'd' double */
    const char *dflt;   /* default expression, or NULL when the config must set it */
    const char *doc;
} hn_op_param;

typedef struct {
    double *values;     /* expected values, fp64 */
    int64_t *index;     /* NULL: all elements in order; else element indices */
    int64_t n;
    char method[96];    /* "full", or "sampled 4096 of 1048576 (border + random)" */
} hn_ref;

void hn_ref_free(hn_ref *r);

typedef struct hn_op {
    const char *name;
    const char *doc;
    const hn_op_param *params;
    int n_params;
    const hn_op_buffer *buffers;
    int n_buffers;

    /* Validates the parameters and gives each buffer's element count. */
    int (*shape)(const double *p, int64_t *counts, hn_err *err);
    /* Floating-point operations (an FMA counts 2) and the fewest bytes a kernel
     * must move (each input read once, each output written once). */
    double (*flop)(const double *p);
    double (*bytes)(const double *p);
    /* The logical shape of buffer i (for messages and debug views): fills dims
     * (at most 4) and returns their count; their product is the element count. */
    int (*dims)(const double *p, int buffer, int64_t dims[4]);
    /* A short human label of the case, e.g. "128x128x32 -> 512, f:9x9". */
    void (*label)(const double *p, char *buf, size_t size);
    /* Fills every input buffer (bufs[i] has counts[i] elements) from seed. */
    void (*generate)(const double *p, void *const *bufs, uint64_t seed);
    /* Computes the reference of every output buffer into refs[i] (entries of
     * input-only buffers are left empty). When the full reference would cost
     * more than budget_gflop, computes a seeded sample instead. */
    int (*reference)(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop,
                     uint64_t seed, int threads, hn_err *err);
} hn_op;

/* The registry. */
const hn_op *hn_op_find(const char *name);
/* Comma-separated list of known operator names, for messages. */
const char *hn_op_names(void);
int hn_op_param_index(const hn_op *op, const char *name);
int hn_op_buffer_index(const hn_op *op, const char *name);

/* Fills a float buffer with seeded standard-normal values (as numpy's randn does
 * in the seed notebook; the exact stream is ours). */
void hn_fill_randn_f32(float *x, int64_t n, uint64_t seed);

#endif
