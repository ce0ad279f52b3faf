/*
 * conv2d_helpers.h: what every conv2d variant shares.
 *
 *   TILE_SIZE, ACCUM_DTYPE   defaults when the config does not set them.
 *   SINGLE_BLOCK, DEBUG      the harness's debug conventions from hn_kernel.h
 *                            (supplied by the harness on both backends): every
 *                            variant takes HN_SINGLE_BLOCK_PARAM and brackets its
 *                            body with HN_SINGLE_BLOCK_ENTER/LEAVE, so its blocks run
 *                            one at a time in linear order under `harness debug`
 *                            even on a GPU. Kernels must not return early.
 *   PRINT_INPUTS()           with DEBUG: the launch's inputs, printed by the leader
 *                            thread of each printing block (hn_debug_leader()).
 *
 * Layout, for every variant: in (in_ch, h, w), filter (out_ch, in_ch, fs, fs),
 * out (out_ch, h, w); "same" output size; r = (fs - 1) / 2; `pad` outside the image.
 */
#pragma once

#include <stdio.h>

#include "hn_kernel.h"

#ifndef TILE_SIZE
#define TILE_SIZE 16
#endif
#ifndef ACCUM_DTYPE
#define ACCUM_DTYPE float
#endif

#define CONV2D_STR2(x) #x
#define CONV2D_STR(x) CONV2D_STR2(x)

#ifdef DEBUG
#define PRINT_INPUTS()                                                                      \
    printf("block (%d,%d,%d) of (%d,%d,%d), threads (%d,%d,%d): h=%d w=%d in_ch=%d "       \
           "out_ch=%d filter=%d pad=%g TILE_SIZE=%d ACCUM_DTYPE=%s\n",                      \
           blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z, blockDim.x, \
           blockDim.y, blockDim.z, h, w, in_channels, out_channels, filter_size, (double)pad, \
           TILE_SIZE, CONV2D_STR(ACCUM_DTYPE))
#else
#define PRINT_INPUTS() ((void)0)
#endif
