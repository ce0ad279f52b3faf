// unroll_tuned: the im2col unroll with three tunables, for the tests of harness
// tune (tests/test_tune.sh, tests/configs/tune_small.json): BLOCK threads per
// block, ITEMS elements of cols per thread, ORDER how a thread's items are laid
// out (0: consecutive elements, 1: BLOCK apart, so a warp's stores coalesce).
__global__ void unroll_tuned(const float *in, float *cols, int in_ch, int h, int w, int fs, int oh, int ow) {
    long long npix = (long long)oh * ow, total = (long long)in_ch * fs * fs * npix;
    long long first = (long long)blockIdx.x * BLOCK * ITEMS;
    for (int k = 0; k < ITEMS; k++) {
        long long t = ORDER ? first + (long long)k * BLOCK + threadIdx.x
                            : first + (long long)threadIdx.x * ITEMS + k;
        if (t >= total) continue;
        int row = (int)(t / npix), j = (int)(t % npix);
        int c = row / (fs * fs), p = row / fs % fs, q = row % fs;
        cols[t] = in[((size_t)c * h + j / ow + p) * w + j % ow + q];
    }
}
