// Follows blameitonme1/cuda, convolution/basic_kernel.cu: PMPP chapter 7's
// conv_2d_basic_kernel (one thread per output pixel, the filter from global memory,
// ghost cells skipped, i.e. zero padding to "same" size), with its bounds check on
// the output. Retyped; the torch launcher conv_2d() and cdiv are left out.
//   P (height, width) = N (height, width) * F (2r+1, 2r+1): conv2d, one channel in and out.
__global__
void conv_2d_basic_kernel(float *N, float *F, float *P, int r, int width, int height){
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float PValue = 0.f;
    if(row < height && col < width){
        for(int frow = -r; frow <= r; ++frow){
            for(int fcol = -r; fcol <=r; ++fcol){
                int in_row = row + frow;
                int in_col = col + fcol;
                if(in_row < height && in_row >=0 && in_col < width && in_col >= 0){
                    PValue += N[in_row * width + in_col] * F[(frow + r) * (2 * r + 1) + (fcol + r)];
                }
            }
        }
        P[row * width + col] = PValue;
    }
}
