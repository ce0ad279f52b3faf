/*
 * stencil3d: the 7-point stencil of PMPP chapter 8 on an nz x ny x nx grid
 * (the stencil3d operator, docs/ops/stencil3d.md). Interior points:
 *   out = c0 in + c1 in[x-1] + c2 in[x+1] + c3 in[y-1] + c4 in[y+1] + c5 in[z-1] + c6 in[z+1];
 * boundary points (any index 0 or its size - 1) copy in. in[(z * ny + y) * nx + x].
 *
 *   stencil_naive       one thread a point, every neighbour read from global
 *                       memory (block BX x BY x BZ, any sizes)
 *   stencil_shared      a block of IN^3 threads loads an IN^3 input tile (its
 *                       output tile plus a halo of 1) into shared memory; the
 *                       inner OUT^3 = (IN - 2)^3 threads compute (Fig. 8.8)
 *   stencil_coarsened   thread coarsening in z: a block of IN^2 threads walks ZC
 *                       planes, keeping the planes z-1, z and z+1 of its tile in
 *                       shared memory and loading one new plane a step (Fig. 8.10)
 *   stencil_register    register tiling: as stencil_coarsened, but the planes z-1
 *                       and z+1 are only ever read at a thread's own (y, x), so
 *                       they live in registers; only plane z is shared (Fig. 8.12)
 *
 * Points outside the grid load 0 (every thread writes its shared cells, so
 * nothing reads a cell left from an earlier block); a tile's threads on the
 * grid's boundary copy their point.
 *
 *   harness run configs/stencil3d_sweep.json
 *   harness debug configs/stencil3d_sweep.json --kernel stencil_register --set nz=5,ny=6,nx=20
 */
#ifndef IN
#define IN 8
#endif
#define OUT (IN - 2)
#ifndef ZC
#define ZC 16
#endif

__device__ bool on_boundary(int z, int y, int x, int nz, int ny, int nx) {
    return z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1;
}

__global__ void stencil_naive(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                              float c3, float c4, float c5, float c6) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    const size_t plane = (size_t)ny * nx, i = (size_t)z * plane + (size_t)y * nx + x;
    if (on_boundary(z, y, x, nz, ny, nx)) {
        out[i] = in[i];
        return;
    }
    out[i] = c0 * in[i] + c1 * in[i - 1] + c2 * in[i + 1] + c3 * in[i - nx] + c4 * in[i + nx] + c5 * in[i - plane] +
             c6 * in[i + plane];
}

__global__ void stencil_shared(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                               float c3, float c4, float c5, float c6) {
    __shared__ float t[IN][IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    const int x = blockIdx.x * OUT + tx - 1, y = blockIdx.y * OUT + ty - 1, z = blockIdx.z * OUT + tz - 1;
    const bool inside = x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz;
    const size_t i = inside ? ((size_t)z * ny + y) * nx + x : 0;
    t[tz][ty][tx] = inside ? in[i] : 0.0f;
    __syncthreads();
    if (!inside || tx < 1 || tx > IN - 2 || ty < 1 || ty > IN - 2 || tz < 1 || tz > IN - 2) return;
    if (on_boundary(z, y, x, nz, ny, nx)) out[i] = t[tz][ty][tx];
    else
        out[i] = c0 * t[tz][ty][tx] + c1 * t[tz][ty][tx - 1] + c2 * t[tz][ty][tx + 1] + c3 * t[tz][ty - 1][tx] +
                 c4 * t[tz][ty + 1][tx] + c5 * t[tz - 1][ty][tx] + c6 * t[tz + 1][ty][tx];
}

/* in[z][y][x], or 0 outside the grid. */
__device__ float load(const float *in, int z, int y, int x, int nz, int ny, int nx) {
    return z >= 0 && z < nz && y >= 0 && y < ny && x >= 0 && x < nx ? in[((size_t)z * ny + y) * nx + x] : 0.0f;
}

__global__ void stencil_coarsened(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                                  float c3, float c4, float c5, float c6) {
    __shared__ float prev[IN][IN], curr[IN][IN], next[IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * OUT + tx - 1, y = blockIdx.y * OUT + ty - 1, z0 = blockIdx.z * ZC;
    const bool computes = tx >= 1 && tx <= IN - 2 && ty >= 1 && ty <= IN - 2 && x < nx && y < ny;
    prev[ty][tx] = load(in, z0 - 1, y, x, nz, ny, nx);
    curr[ty][tx] = load(in, z0, y, x, nz, ny, nx);
    for (int z = z0; z < z0 + ZC && z < nz; z++) {
        next[ty][tx] = load(in, z + 1, y, x, nz, ny, nx);
        __syncthreads(); // the tile's planes z-1, z, z+1 are loaded
        if (computes) {
            const size_t i = ((size_t)z * ny + y) * nx + x;
            if (on_boundary(z, y, x, nz, ny, nx)) out[i] = curr[ty][tx];
            else
                out[i] = c0 * curr[ty][tx] + c1 * curr[ty][tx - 1] + c2 * curr[ty][tx + 1] + c3 * curr[ty - 1][tx] +
                         c4 * curr[ty + 1][tx] + c5 * prev[ty][tx] + c6 * next[ty][tx];
        }
        __syncthreads(); // every thread has read plane z before it moves down
        prev[ty][tx] = curr[ty][tx];
        curr[ty][tx] = next[ty][tx];
    }
}

__global__ void stencil_register(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                                 float c3, float c4, float c5, float c6) {
    __shared__ float curr_s[IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * OUT + tx - 1, y = blockIdx.y * OUT + ty - 1, z0 = blockIdx.z * ZC;
    const bool computes = tx >= 1 && tx <= IN - 2 && ty >= 1 && ty <= IN - 2 && x < nx && y < ny;
    float prev = load(in, z0 - 1, y, x, nz, ny, nx);
    float curr = load(in, z0, y, x, nz, ny, nx);
    curr_s[ty][tx] = curr;
    for (int z = z0; z < z0 + ZC && z < nz; z++) {
        const float next = load(in, z + 1, y, x, nz, ny, nx);
        __syncthreads(); // plane z is in curr_s
        if (computes) {
            const size_t i = ((size_t)z * ny + y) * nx + x;
            if (on_boundary(z, y, x, nz, ny, nx)) out[i] = curr;
            else
                out[i] = c0 * curr + c1 * curr_s[ty][tx - 1] + c2 * curr_s[ty][tx + 1] + c3 * curr_s[ty - 1][tx] +
                         c4 * curr_s[ty + 1][tx] + c5 * prev + c6 * next;
        }
        __syncthreads(); // every thread has read plane z before it is overwritten
        prev = curr;
        curr = next;
        curr_s[ty][tx] = next;
    }
}
