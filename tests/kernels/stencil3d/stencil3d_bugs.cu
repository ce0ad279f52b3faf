/*
 * stencil3d_bugs.cu: kernels/stencil3d/stencil3d.cu's kernels with one planted
 * bug each, for tests/test_stencil3d.sh.
 *
 *   stencil_naive_edge      the interior test lets x = nx - 1 through: its x + 1
 *                           neighbour is the next row's first point (wrong only
 *                           where a point with x = nx - 1 is otherwise interior:
 *                           nz and ny of 3 or more)
 *   stencil_coarsened_top   halo off by one in z: the block loads the planes
 *                           z0 - 1 .. z0 + ZC - 1, one short, so its last plane
 *                           has no z + 1 (wrong only when a block's last plane is
 *                           interior: nz > ZC)
 *   stencil_register_race   register tiling without the barrier between reading
 *                           plane z and overwriting it with plane z + 1 (harness
 *                           check names the race; the emulator, running threads
 *                           in order, gives neighbours from the wrong plane)
 *   stencil_shared_halo     the input tile starts at the output tile (no - 1):
 *                           the halo is off by one in every dimension, and no
 *                           tile reaches the faces x = 0, y = 0, z = 0 (never
 *                           written: every grid)
 */
#ifndef IN
#define IN 8
#endif
#define OUT (IN - 2)
#ifndef ZC
#define ZC 4
#endif

__device__ bool on_boundary(int z, int y, int x, int nz, int ny, int nx) {
    return z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1;
}

__device__ float load(const float *in, int z, int y, int x, int nz, int ny, int nx) {
    return z >= 0 && z < nz && y >= 0 && y < ny && x >= 0 && x < nx ? in[((size_t)z * ny + y) * nx + x] : 0.0f;
}

__global__ void stencil_naive_edge(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                                   float c3, float c4, float c5, float c6) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= nx || y >= ny || z >= nz) return;
    const size_t plane = (size_t)ny * nx, i = (size_t)z * plane + (size_t)y * nx + x;
    if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1) { // BUG: x == nx - 1 left out
        out[i] = in[i];
        return;
    }
    out[i] = c0 * in[i] + c1 * in[i - 1] + c2 * in[i + 1] + c3 * in[i - nx] + c4 * in[i + nx] + c5 * in[i - plane] +
             c6 * in[i + plane];
}

__global__ void stencil_coarsened_top(const float *in, float *out, int nz, int ny, int nx, float c0, float c1,
                                      float c2, float c3, float c4, float c5, float c6) {
    __shared__ float prev[IN][IN], curr[IN][IN], next[IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * OUT + tx - 1, y = blockIdx.y * OUT + ty - 1, z0 = blockIdx.z * ZC;
    const bool computes = tx >= 1 && tx <= IN - 2 && ty >= 1 && ty <= IN - 2 && x < nx && y < ny;
    prev[ty][tx] = load(in, z0 - 1, y, x, nz, ny, nx);
    curr[ty][tx] = load(in, z0, y, x, nz, ny, nx);
    for (int z = z0; z < z0 + ZC && z < nz; z++) {
        next[ty][tx] = z + 1 < z0 + ZC ? load(in, z + 1, y, x, nz, ny, nx) : 0.0f; // BUG: plane z0 + ZC is the halo
        __syncthreads();
        if (computes) {
            const size_t i = ((size_t)z * ny + y) * nx + x;
            if (on_boundary(z, y, x, nz, ny, nx)) out[i] = curr[ty][tx];
            else
                out[i] = c0 * curr[ty][tx] + c1 * curr[ty][tx - 1] + c2 * curr[ty][tx + 1] + c3 * curr[ty - 1][tx] +
                         c4 * curr[ty + 1][tx] + c5 * prev[ty][tx] + c6 * next[ty][tx];
        }
        __syncthreads();
        prev[ty][tx] = curr[ty][tx];
        curr[ty][tx] = next[ty][tx];
    }
}

__global__ void stencil_register_race(const float *in, float *out, int nz, int ny, int nx, float c0, float c1,
                                      float c2, float c3, float c4, float c5, float c6) {
    __shared__ float curr_s[IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * OUT + tx - 1, y = blockIdx.y * OUT + ty - 1, z0 = blockIdx.z * ZC;
    const bool computes = tx >= 1 && tx <= IN - 2 && ty >= 1 && ty <= IN - 2 && x < nx && y < ny;
    float prev = load(in, z0 - 1, y, x, nz, ny, nx);
    float curr = load(in, z0, y, x, nz, ny, nx);
    curr_s[ty][tx] = curr;
    for (int z = z0; z < z0 + ZC && z < nz; z++) {
        const float next = load(in, z + 1, y, x, nz, ny, nx);
        __syncthreads();
        if (computes) {
            const size_t i = ((size_t)z * ny + y) * nx + x;
            if (on_boundary(z, y, x, nz, ny, nx)) out[i] = curr;
            else
                out[i] = c0 * curr + c1 * curr_s[ty][tx - 1] + c2 * curr_s[ty][tx + 1] + c3 * curr_s[ty - 1][tx] +
                         c4 * curr_s[ty + 1][tx] + c5 * prev + c6 * next;
        }
        // BUG: no barrier: a thread overwrites its cell while its neighbours may still read plane z
        prev = curr;
        curr = next;
        curr_s[ty][tx] = next;
    }
}

__global__ void stencil_shared_halo(const float *in, float *out, int nz, int ny, int nx, float c0, float c1, float c2,
                                    float c3, float c4, float c5, float c6) {
    __shared__ float t[IN][IN][IN];
    const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    const int x = blockIdx.x * OUT + tx, y = blockIdx.y * OUT + ty, z = blockIdx.z * OUT + tz; // BUG: - 1 each
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
