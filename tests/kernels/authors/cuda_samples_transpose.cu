// NVIDIA/cuda-samples, Samples/6_Performance/transpose/transpose.cu, and Mark Harris's
// "An Efficient Matrix Transpose in CUDA C/C++" (cuda-training-series), retyped:
//   transposeNaive             reads coalesced, writes strided
//   transposeCoalesced         a TILE_DIM square tile through shared memory
//   transposeNoBankConflicts   like transposeCoalesced, the tile padded by one column
//   transposeCoalescedBlog     the blog's version: no size arguments, the width is
//                              gridDim.x * TILE_DIM, BLOCK_ROWS rows a thread loop
// Each assumes width and height are multiples of TILE_DIM, as the sample does.
// harness run tests/configs/authors/cuda_samples_transpose.json --backend emu
#include <stdio.h>
#include <assert.h>
#include <cuda_runtime.h>

#define TILE_DIM 16
#define BLOCK_ROWS 16

__global__ void transposeNaive(float *odata, float *idata, int width, int height) {
  int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
  int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;

  int index_in = xIndex + width * yIndex;
  int index_out = yIndex + height * xIndex;

  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
    odata[index_out + i] = idata[index_in + i * width];
  }
}

__global__ void transposeCoalesced(float *odata, float *idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM];

  int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
  int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
  int index_in = xIndex + (yIndex)*width;

  xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
  yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
  int index_out = xIndex + (yIndex)*height;

  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
    tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
  }

  __syncthreads();

  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
    odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
  }
}

__global__ void transposeNoBankConflicts(float *odata, float *idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];

  int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
  int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
  int index_in = xIndex + (yIndex)*width;

  xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
  yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
  int index_out = xIndex + (yIndex)*height;

  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
    tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
  }

  __syncthreads();

  for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS) {
    odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
  }
}

// the blog's: 32 x 8 threads, each copying four elements of a 32 x 32 tile
const int BLOG_TILE = 32;
const int BLOG_ROWS = 8;

__global__ void transposeCoalescedBlog(float *odata, const float *idata) {
  __shared__ float tile[BLOG_TILE][BLOG_TILE + 1];

  int x = blockIdx.x * BLOG_TILE + threadIdx.x;
  int y = blockIdx.y * BLOG_TILE + threadIdx.y;
  int width = gridDim.x * BLOG_TILE;

  for (int j = 0; j < BLOG_TILE; j += BLOG_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];

  __syncthreads();

  x = blockIdx.y * BLOG_TILE + threadIdx.x;  // transpose block offset
  y = blockIdx.x * BLOG_TILE + threadIdx.y;
  width = gridDim.y * BLOG_TILE;

  for (int j = 0; j < BLOG_TILE; j += BLOG_ROWS)
    odata[(y + j) * width + x] = tile[threadIdx.x][threadIdx.y + j];
}
