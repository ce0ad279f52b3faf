/*
 * shapes.cu: launch shapes real kernels use, for tests/test_emu_features.c.
 *
 *   warp2d     a 10 x 7 block (70 threads: warps of 32, 32 and 6): lane and warp
 *              from the linear index, __activemask, __ballot_sync,
 *              __reduce_add_sync, __shfl_up_sync (width 8), __shfl_xor_sync
 *              (width 16), __match_any_sync, all on the active mask
 *   grid3d     a grid of 70000 x 2 x 2 blocks: blockIdx and gridDim in 3D, more
 *              than 65535 blocks in x
 *   vec_atomics  sm_90's atomicAdd on float2 and float4 (per element), and the
 *              old value it returns
 */
__global__ void warp2d(unsigned *o) {
    int lin = threadIdx.y * blockDim.x + threadIdx.x;
    int lane = lin % 32, warp = lin / 32;
    unsigned act = __activemask();
    unsigned b = __ballot_sync(act, lin & 1);
    int sum = __reduce_add_sync(act, lin);
    int up = __shfl_up_sync(act, lin, 3, 8);
    int x = __shfl_xor_sync(act, lin, 5, 16);
    unsigned m = __match_any_sync(act, lin / 4);
    unsigned *r = o + lin * 8;
    r[0] = lane, r[1] = warp, r[2] = act, r[3] = b, r[4] = sum, r[5] = up, r[6] = x, r[7] = m;
}

/* o[z * 2 + y]: the sum of blockIdx.x + 1 over x; o[4]: gridDim as seen by the last block */
__global__ void grid3d(unsigned long long *o) {
    if (threadIdx.x == 0) atomicAdd(o + blockIdx.z * 2 + blockIdx.y, blockIdx.x + 1ull);
    if (blockIdx.x == gridDim.x - 1 && blockIdx.y == 1 && blockIdx.z == 1 && threadIdx.x == 0)
        o[4] = gridDim.x * 100 + gridDim.y * 10 + gridDim.z;
}

/* o[0..3] += (1, 2, 3, 4), o[4..5] += (0.5, 0.25) per thread; o[8 + t]: 1 when the
 * returned old float4 is a multiple of (1, 2, 3, 4) */
__global__ void vec_atomics(float *o) {
    float4 old = atomicAdd((float4 *)o, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
    atomicAdd((float2 *)(o + 4), make_float2(0.5f, 0.25f));
    o[8 + threadIdx.x] = old.y == 2.0f * old.x && old.z == 3.0f * old.x && old.w == 4.0f * old.x;
}
