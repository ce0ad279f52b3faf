// Follows karpathy/llm.c: dev/cuda/softmax_forward.cu (softmax_forward_kernel1, a
// thread per row), dev/cuda/crossentropy_forward.cu (crossentropy_forward_kernel1,
// a thread per (b, t)) and dev/cuda/crossentropy_softmax_backward.cu
// (crossentropy_softmax_backward_kernel1, a thread per logit, dlogits += ...).
// Retyped; launchers and main left out. llm.c's host code does the rest: it fills
// dlosses with 1 / (B*T), zeroes dlogits, and takes the mean of losses on the CPU.
// The two kernels at the end are ours (marked), standing in for that host code.
#include <stdio.h>
#include <stdlib.h>
#include <float.h>
#include <math.h>
#include <cuda_runtime.h>

__global__ void softmax_forward_kernel1(float* out, const float* inp, int N, int C) {
    // inp is (N, C), out is (N, C), each row of inp will get softmaxed
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        const float* inp_row = inp + i * C;
        float* out_row = out + i * C;
        float maxval = -INFINITY;
        for (int j = 0; j < C; j++) {
            if (inp_row[j] > maxval) {
                maxval = inp_row[j];
            }
        }
        double sum = 0.0;
        for (int j = 0; j < C; j++) {
            out_row[j] = expf(inp_row[j] - maxval);
            sum += out_row[j];
        }
        for (int j = 0; j < C; j++) {
            out_row[j] /= (float)sum;
        }
    }
}

__global__ void crossentropy_forward_kernel1(float* losses,
                                             const float* probs, const int* targets,
                                             int B, int T, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T) {
        int b = i / T;
        int t = i % T;
        const float* probs_bt = probs + b * T * V + t * V;
        int ix = targets[b * T + t];
        losses[b * T + t] = -logf(probs_bt[ix]);
    }
}

__global__ void crossentropy_softmax_backward_kernel1(float* dlogits,
                           const float* dlosses, const float* probs, const int* targets,
                           int B, int T, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T * V) {
        int b = i / (T * V);
        int t = (i / V) % T;
        int v = i % V;
        float* dlogits_bt = dlogits + b * T * V + t * V;
        const float* probs_bt = probs + b * T * V + t * V;
        float dloss = dlosses[b * T + t];
        int ix = targets[b * T + t];
        float p = probs_bt[v];
        float indicator = v == ix ? 1.0f : 0.0f;
        dlogits_bt[v] += (p - indicator) * dloss;
    }
}

// --- not llm.c: the host code's part, as kernels ---

// dlosses[i] = 1 / n (llm.c: "const float dloss_mean = 1.0f / (B*T)" on the host)
__global__ void fill_dlosses(float* dlosses, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dlosses[i] = 1.0f / n;
}

// *loss = mean of losses (llm.c: a loop on the CPU after cudaMemcpy); one thread
__global__ void mean_loss(float* loss, const float* losses, int n) {
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += losses[i];
    *loss = (float)(sum / n);
}
