/*
 * optim: the optimizers' parameter updates for `harness train`, over one flat
 * buffer holding every parameter of the model (and, beside it, the gradients and
 * the optimizer's state in the same order), so a step is one launch however many
 * layers there are. Grid-stride loops: any grid covers any n.
 *
 *   sgd_momentum   torch.optim.SGD(momentum, weight_decay, dampening 0, not
 *                  Nesterov): g = grad + wd * p; buf = momentum * buf + g (buf = g
 *                  on the first step: the caller zeroes buf, which gives the same
 *                  result for momentum * 0 + g); p -= lr * buf
 *   adam           torch.optim.Adam (not AMSGrad): g = grad + wd * p;
 *                  m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
 *                  p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps), with the bias
 *                  corrections bc1 = 1 - b1^t, bc2 = 1 - b2^t computed by the
 *                  caller (configs/train/default.json: "float: 1 - pow(beta1, step)")
 *
 * Block (256), grid min(ceil(n/256), 1024) in configs/train/default.json.
 *
 *   harness train xor --optimizer sgd
 *   harness train xor --optimizer adam
 */
#include "hn_kernel.h"

__global__ void sgd_momentum(float *param, const float *grad, float *velocity, int n, float lr, float momentum,
                             float weight_decay) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float g = grad[i] + weight_decay * param[i];
        if (momentum != 0.0f) {
            const float b = momentum * velocity[i] + g;
            velocity[i] = b;
            g = b;
        }
        param[i] -= lr * g;
    }
}

__global__ void adam(float *param, const float *grad, float *m, float *v, int n, float lr, float beta1, float beta2,
                     float eps, float weight_decay, float bias_correction1, float bias_correction2) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const float step_size = lr / bias_correction1;
    const float sqrt_bc2 = sqrtf(bias_correction2);
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float g = grad[i] + weight_decay * param[i];
        const float mi = beta1 * m[i] + (1.0f - beta1) * g;
        const float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
        m[i] = mi;
        v[i] = vi;
        param[i] -= step_size * mi / (sqrtf(vi) / sqrt_bc2 + eps);
    }
}
