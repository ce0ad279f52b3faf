// hostile.cu: kernels that misbehave, for tests/test_hostile_run.sh. Each takes the
// conv2d arguments (in, out, filter, h, w, in_ch, out_ch, filter_size, pad) and,
// where it finishes at all, writes the correct convolution, so only its misbehaviour
// shows. The misbehaviour that needs the host (sleeping, aborting the process) is
// emulator-only (HN_EMU); under NVRTC those kernels just compute.
//
//   conv_ok        a plain correct convolution (the well-behaved neighbour)
//   spin_forever   never finishes: the emulator stops it at --kernel-timeout
//   sleep_forever  never finishes and never reaches kernel code the emulator can
//                  stop: the parent's watchdog kills the worker process
//   abort_worker   kills its own process (SIGABRT, past the emulator's handler,
//                  which makes a plain abort() a fault of the launch)
//   clobber_input  correct output, then block (last) writes into its const input
//   printf_flood   correct output, and three lines of printf per thread
//   slow_conv      correct output, 40 ms per block (for interrupting a run)
#include <stdio.h>
#if defined(HN_EMU)
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#endif

__device__ void conv_at(const float *in, float *out, const float *filter, int h, int w, int in_ch,
                        int out_ch, int fs, float pad) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int o = blockIdx.z, r = (fs - 1) / 2;
    if (x >= w || y >= h || o >= out_ch) return;
    float acc = 0.0f;
    for (int c = 0; c < in_ch; c++)
        for (int i = 0; i < fs; i++)
            for (int j = 0; j < fs; j++) {
                int yy = y + i - r, xx = x + j - r;
                float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? in[((size_t)c * h + yy) * w + xx] : pad;
                acc += v * filter[(((size_t)o * in_ch + c) * fs + i) * fs + j];
            }
    out[((size_t)o * h + y) * w + x] = acc;
}

#define CONV_ARGS                                                                                   \
    const float *in, float *out, const float *filter, int h, int w, int in_ch, int out_ch, int fs, \
        float pad
#define CONV_CALL conv_at(in, out, filter, h, w, in_ch, out_ch, fs, pad)

__global__ void conv_ok(CONV_ARGS) {
    CONV_CALL;
}

__global__ void spin_forever(CONV_ARGS) {
    volatile int forever = 1;
    while (forever) {
    }
    CONV_CALL;
}

__global__ void sleep_forever(CONV_ARGS) {
#if defined(HN_EMU)
    for (;;) usleep(100000);
#endif
    CONV_CALL;
}

__global__ void abort_worker(CONV_ARGS) {
#if defined(HN_EMU)
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        signal(SIGABRT, SIG_DFL);
        abort();
    }
#endif
    CONV_CALL;
}

__global__ void clobber_input(CONV_ARGS) {
    CONV_CALL;
    __syncthreads();
    bool last = blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && blockIdx.z == gridDim.z - 1;
    if (last && threadIdx.x == 0 && threadIdx.y == 0) ((float *)in)[0] += 1000.0f;
}

__global__ void printf_flood(CONV_ARGS) {
    CONV_CALL;
    for (int i = 0; i < 3; i++) printf("flood %d %d %d\n", blockIdx.x, threadIdx.x, i);
}

__global__ void slow_conv(CONV_ARGS) {
#if defined(HN_EMU)
    if (threadIdx.x == 0 && threadIdx.y == 0) usleep(40000);
#endif
    CONV_CALL;
}
