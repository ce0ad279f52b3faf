// Follows karpathy/llm.c, dev/cuda/matmul_forward.cu: matmul_forward_kernel1 (naive,
// one thread per output) and matmul_forward_kernel4 (8x8 outputs per thread, float4
// loads and stores). Retyped; the launchers, cuBLAS versions and main are left out.
//   out (BT, OC) = inp (BT, C) @ weight (OC, C)^T + bias (OC): the catalogue's linear.
// kernel4 assumes BT and OC multiples of 8 and C a multiple of 4 (llm.c's sizes).
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

__global__ void matmul_forward_kernel1(float* out,
                                       const float* inp, const float* weight, const float* bias,
                                       int BT, int C, int OC) {
    // out is (B,T,OC), inp is (B,T,C), weight is (OC, C), bias is (OC)
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (bt < BT && oc < OC) {
        float val = (bias != NULL) ? bias[oc] : 0.0f;
        const float* wrow = weight + oc * C;
        const float* inp_bt = inp + bt * C;
        for (int i = 0; i < C; i++) {
            val += inp_bt[i] * wrow[i];
        }
        out[bt * OC + oc] = val;
    }
}

__device__ float4 ld_vec(const float* address) {
    return *reinterpret_cast<const float4*>(address);
}

__device__ void st_vec(float* address, float4 val) {
    *reinterpret_cast<float4*>(address) = val;
}

__global__ void matmul_forward_kernel4(float* out,
                                       const float* inp, const float* weight, const float* bias,
                                       int BT, int C, int OC) {
    int bt = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    int oc = 8 * (blockIdx.y * blockDim.y + threadIdx.y);
    if (bt < BT && oc < OC) {
        float vals[8][8] = {};
        if (bias != NULL) {
            for (int i = 0; i < 8; i++) {
                for (int j = 0; j < 8; j += 4) {
                    float4 b = ld_vec(bias + oc + j);
                    vals[i][j + 0] = b.x;
                    vals[i][j + 1] = b.y;
                    vals[i][j + 2] = b.z;
                    vals[i][j + 3] = b.w;
                }
            }
        }
        for (int k = 0; k < C; k += 4) {
            float4 rhs[8];
            for (int u = 0; u < 8; ++u) {
                rhs[u] = ld_vec(weight + k + (oc + u) * C);
            }
            for (int i = 0; i < 8; ++i) {
                float4 lhs = ld_vec(inp + k + (bt + i) * C);
                for (int j = 0; j < 8; ++j) {
                    vals[i][j] += lhs.x * rhs[j].x;
                    vals[i][j] += lhs.y * rhs[j].y;
                    vals[i][j] += lhs.z * rhs[j].z;
                    vals[i][j] += lhs.w * rhs[j].w;
                }
            }
        }
        for (int i = 0; i < 8; ++i) {
            for (int j = 0; j < 8; j += 4) {
                float4 result;
                result.x = vals[i][j + 0];
                result.y = vals[i][j + 1];
                result.z = vals[i][j + 2];
                result.w = vals[i][j + 3];
                st_vec(out + (bt + i) * OC + oc + j, result);
            }
        }
    }
}
