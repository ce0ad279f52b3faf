/*
 * gemm/gemm.h: what the gemm operator's files share (op.c, the description and
 * the reference; cublas.c, the baseline): parameter and buffer positions and
 * the parameters as a struct. The fp64 multiply and the sampled rows are
 * linear's (../linear/linear.h).
 */
#ifndef HN_OPS_GEMM_H
#define HN_OPS_GEMM_H

#include "../linear/linear.h"

enum { GEMM_M, GEMM_N, GEMM_K, GEMM_ALPHA, GEMM_BETA, GEMM_TRANS_A, GEMM_TRANS_B, GEMM_DTYPE };
enum { GEMM_B_A, GEMM_B_B, GEMM_B_C, GEMM_N_BUFFERS };

typedef struct {
    int m, n, k;
    float alpha, beta;   /* as the kernels get them: rounded to float */
    int trans_a, trans_b; /* 1: stored transposed ("T") */
    hn_dtype in_dtype;    /* a's and b's: float32, float16 or bfloat16 (c is float32) */
} gemm_dims;

void gemm_params(const double *p, gemm_dims *d);

#define GEMM_N_BASELINES 1
extern const hn_op_baseline gemm_baselines[GEMM_N_BASELINES];

#endif
