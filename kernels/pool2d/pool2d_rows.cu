/*
 * pool2d_rows: like pool2d_naive, but the block first reads the k input rows
 * under its outputs into shared memory with consecutive threads on consecutive
 * floats, so every global load of a warp is coalesced in NCHW too (where
 * pool2d_naive's warps read k floats apart); each thread then pools its own
 * window out of shared memory. NCHW only (in NHWC and CHWN pool2d_naive's reads
 * are coalesced already).
 *
 * Block (TILE_SIZE): the outputs ox0 .. ox0 + TILE_SIZE - 1 of output row r =
 * (b * channels + c) * oh + oy; grid (n * channels * oh, ceil(ow / TILE_SIZE));
 * dynamic shared memory k * k * TILE_SIZE floats: k rows of TILE_SIZE * k. Thread
 * t reads its window at shared offsets t * k + q, k words apart: for even k that
 * is a k-way bank conflict (2-way for k = 2), paid in shared memory rather than
 * in global sectors.
 *
 *   harness run configs/pool2d_sweep.json
 *   harness debug configs/pool2d_sweep.json --kernel pool2d_rows --set n=1,channels=2,h=7,w=9,k=2,mode=max
 *
 * The family's menu is in pool2d_naive.cu.
 */
#include "pool2d_helpers.h"

__global__ void pool2d_rows(const float *in, float *out, int *argmax, int n, int channels, int h, int w, int k,
                            int is_max, int layout HN_SINGLE_BLOCK_PARAM) {
    extern __shared__ float rows[]; // (k, TILE_SIZE * k): the input under the block's windows
    HN_SINGLE_BLOCK_ENTER();
#ifdef DEBUG
    if (hn_debug_leader()) PRINT_INPUTS();
#endif
    const int oh = h / k, ow = w / k, stride = TILE_SIZE * k;
    const long long r = blockIdx.x; // the output row: plane * oh + oy
    const int oy = (int)(r % oh);
    const long long plane = r / oh;
    const int ox0 = blockIdx.y * TILE_SIZE;
    const int n_out = ow - ox0 < TILE_SIZE ? ow - ox0 : TILE_SIZE;
    const int span = n_out * k; // input columns under the block's windows
    const float *src = in + (plane * h + (long long)oy * k) * w + (long long)ox0 * k;
    for (int p = 0; p < k; p++)
        for (int j = threadIdx.x; j < span; j += blockDim.x) rows[p * stride + j] = src[(long long)p * w + j];
    __syncthreads();
#ifdef DEBUG
    if (hn_debug_leader()) {
        printf("block (%d,%d,%d): output row %lld (oy=%d), outputs %d..%d\n", blockIdx.x, blockIdx.y, blockIdx.z,
               r, oy, ox0, ox0 + n_out - 1);
        hn_print_matrix("rows", rows, k, span, stride);
    }
#endif
    const int tx = threadIdx.x;
    if (tx < n_out) {
        const float *win = rows + tx * k;
        const long long e = r * ow + ox0 + tx;
        if (is_max) {
            float m = win[0];
            int at = oy * k * w + (ox0 + tx) * k;
            for (int p = 0; p < k; p++)
                for (int q = 0; q < k; q++) {
                    const float v = win[p * stride + q];
                    if (pool2d_takes(v, m)) {
                        m = v;
                        at = (oy * k + p) * w + (ox0 + tx) * k + q;
                    }
                }
            out[e] = m;
            argmax[e] = at;
        } else {
            float s = 0.0f;
            for (int p = 0; p < k; p++)
                for (int q = 0; q < k; q++) s += win[p * stride + q];
            out[e] = s / (float)(k * k);
        }
    }
    HN_SINGLE_BLOCK_LEAVE();
}
