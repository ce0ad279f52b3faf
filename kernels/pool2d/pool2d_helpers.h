/*
 * pool2d_helpers.h: what every pool2d and pool2d_backward variant shares
 * (kernels/pool2d/, kernels/pool2d_backward/, whose configs put this folder on
 * the include path).
 *
 *   Layouts as one view: a (n, channels, h, w) tensor in NCHW (layout 0), NHWC
 *   (1) or CHWN (2) order is an (outer, h, w, inner) array, element (o, y, x, i)
 *   at ((o * h + y) * w + x) * inner + i, with inner = 1, channels or n
 *   (pool2d_inner). A kernel that walks that view handles all three layouts with
 *   one index computation; consecutive threads over i (NHWC, CHWN) or x (NCHW)
 *   touch consecutive addresses.
 *   Windows: k x k, stride k, no padding; oh = h / k, ow = w / k; argmax values
 *   are plane positions y * w + x in every layout.
 *   TILE_SIZE                 the default when the config does not set it.
 *   SINGLE_BLOCK, DEBUG       the harness's conventions (hn_kernel.h): every
 *                             variant takes HN_SINGLE_BLOCK_PARAM and brackets its
 *                             body with HN_SINGLE_BLOCK_ENTER/LEAVE (no early
 *                             return); PRINT_INPUTS() prints the launch's inputs.
 */
#pragma once

#include <stdio.h>

#include "hn_kernel.h"

#ifndef TILE_SIZE
#define TILE_SIZE 128
#endif

/* The innermost extent of the (outer, h, w, inner) view of `layout`. */
__device__ inline int pool2d_inner(int layout, int n, int channels) {
    return layout == 0 ? 1 : layout == 1 ? channels : n;
}

/* torch's rule for a maximum: v wins over m when larger, or when it is NaN (a
 * NaN propagates, and a later NaN wins over an earlier one). */
__device__ inline bool pool2d_takes(float v, float m) {
    return v > m || v != v;
}

#ifdef DEBUG
#define PRINT_INPUTS()                                                                              \
    printf("block (%d,%d,%d) of (%d,%d,%d), threads (%d,%d,%d): n=%d channels=%d h=%d w=%d k=%d "   \
           "mode=%s layout=%s\n",                                                                   \
           blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z, blockDim.x,         \
           blockDim.y, blockDim.z, n, channels, h, w, k, is_max ? "max" : "avg",                    \
           layout == 0 ? "NCHW" : layout == 1 ? "NHWC" : "CHWN")
#else
#define PRINT_INPUTS() ((void)0)
#endif
