/*
 * linear/linear.h: what the fully connected layer's two operators share
 * (linear: the forward pass, op.c here; linear_backward: its gradients, in
 * harness/ops/linear_backward/): the parameters and their check, the fp64
 * multiply both references use (gemm.c), the sampled rows of cases too large
 * to check whole, and cuBLAS's status names for the baselines.
 *
 * Both operators have the parameters batch, in_f, out_f, in that order, and
 * keep every tensor row-major:
 *   x       (batch, in_f)     dx      (batch, in_f)
 *   weight  (out_f, in_f)     dweight (out_f, in_f)
 *   bias    (out_f)           dbias   (out_f)
 *   y       (batch, out_f)    dy      (batch, out_f)
 */
#ifndef HN_OPS_LINEAR_H
#define HN_OPS_LINEAR_H

#include <stdint.h>

#include "ops/op.h"

/* Parameter positions, the same in both operators. */
enum { LIN_BATCH, LIN_IN_F, LIN_OUT_F, LIN_N_PARAMS };

typedef struct {
    int batch, in_f, out_f;
} linear_dims;

void linear_params(const double *p, linear_dims *d);

/* Checks batch, in_f and out_f (each between 1 and 2^30, and every
 * tensor above under 2^31 elements, since kernels index with int); the
 * message starts with `op`. Returns 0, or -1 with err. */
int linear_check(const char *op, const double *p, hn_err *err);

/* "b:64, 1024 -> 512": the case label of both operators. */
void linear_label(const double *p, char *buf, size_t size);

/* C (m, n) = op(A) op(B) in fp64, from float matrices: op(A) is (m, k), a is
 * stored (m, k) row-major, or (k, m) when trans_a; op(B) is (k, n), b is stored
 * (k, n), or (n, k) when trans_b. c is written entirely (row-major, leading
 * dimension n). Every input converts exactly to double and every product and
 * sum is in double. threads <= 0: one per CPU.
 *
 * How: conv2d's fp64 multiply (harness/ops/conv2d/ref.h: a 1x1 filter over a
 * 1-high image is a GEMM), its AVX-512 or AVX2 kernel where the CPU has one;
 * of C and C^T, the one that needs fewer elements transposed (operands, or the
 * result) is computed, unless it is too narrow to keep every core busy. */
void linear_gemm_ref(double *c, const float *a, int trans_a, const float *b, int trans_b, int m, int n, int k,
                     int threads);

/* The rows to check of an output with n_rows rows costing flop_per_row each:
 * NULL (every row; *n_sel = n_rows) when they all fit budget_gflop, else a
 * sorted, seeded set: the first and last rows and random others, at least 16
 * and as many as the budget allows (caller frees). */
int64_t *linear_sample_rows(int64_t n_rows, double flop_per_row, double budget_gflop, uint64_t seed, int64_t *n_sel);

/* Finishes a reference of n_rows rows of `cols` values each: with rows (the
 * sampled rows of linear_sample_rows, of total_rows), the element index of
 * every value and the method "sampled N of M rows (...)"; without, "full". */
void linear_ref_rows(hn_ref *ref, const int64_t *rows, int64_t n_rows, int64_t cols, int64_t total_rows);

/* The cuBLAS baselines (cublas.c): linear's and linear_backward's. */
#define LINEAR_N_BASELINES 1
#define LINEAR_BACKWARD_N_BASELINES 1
extern const hn_op_baseline linear_baselines[LINEAR_N_BASELINES];
extern const hn_op_baseline linear_backward_baselines[LINEAR_BACKWARD_N_BASELINES];

#endif
