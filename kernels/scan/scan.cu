/*
 * scan: y = the prefix sum of each row of x (rows, cols), inclusive or
 * exclusive (the scan operator, docs/ops/scan.md: PMPP chapter 11's parallel
 * scan). Every kernel is a template on the element type T (float or int, the
 * operator's dtype float32 or int32); grid y (or the thread index, for the
 * sequential one) walks the rows. An exclusive scan loads x shifted by one
 * (element e of the section holds x[e - 1], x[-1] being 0), as PMPP does, so
 * the scans themselves are all inclusive.
 *
 *   scan_sequential<T>   one thread a row, adding in order: the baseline (and
 *                        the work-efficient lower bound: cols adds a row)
 *   scan_kogge_stone<T>  one block a row of up to BLOCK elements: Kogge-Stone
 *                        (log2 cols steps, each thread adds its partner's value
 *                        at distance 1, 2, 4, ...), double-buffered in shared
 *                        memory so a step's reads never meet its writes
 *   scan_brent_kung<T>   one block a row of up to SECTION = 2 BLOCK elements:
 *                        Brent-Kung (an up-sweep reduction tree, then a
 *                        down-sweep distributing the partial sums: about
 *                        2 cols adds instead of cols log2 cols)
 *   scan_pass1<T>        the three-phase hierarchical scan, any length: pass 1,
 *   scan_pass2<T>        grid (ceil_div(cols, SECTION), rows), scans each
 *   scan_pass3<T>        section with Brent-Kung into y and writes its total
 *                        into a scratch buffer of block sums; pass 2, grid
 *                        (1, rows), scans a row's block sums in place (chunks of
 *                        SECTION with a carry); pass 3 adds the sum of the
 *                        blocks before it to every element of a section
 *   scan_lookback<T>     single pass, decoupled look-back (Merrill and Garland,
 *                        2016): a block takes the next tile of its row from a
 *                        ticket counter (so every tile before it belongs to a
 *                        block already running: no deadlock whatever order
 *                        the GPU starts blocks in), scans it, publishes its
 *                        total, then walks back over its predecessors' published
 *                        totals until one has its inclusive prefix, and
 *                        publishes its own. A tile's status and value are one
 *                        64-bit word written and read with atomics, so a
 *                        reader never sees a status without its value. The
 *                        variant zeroes both scratch buffers ("zero").
 *
 * BLOCK is the block size, a power of two; SECTION = 2 BLOCK.
 *
 *   harness run configs/scan_sweep.json
 *   harness debug configs/scan_sweep.json --kernel 'scan_lookback<float>' --set rows=2,cols=1000
 */
#ifndef BLOCK
#define BLOCK 256
#endif
#define SECTION (2 * BLOCK)

// ---------------------------------------------------------------------------
// the sequential baseline

template <typename T> __global__ void scan_sequential(const T *x, T *y, int rows, int cols, int exclusive) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const T *xr = x + (size_t)r * cols;
    T *yr = y + (size_t)r * cols;
    T s = 0;
    if (exclusive)
        for (int c = 0; c < cols; c++) yr[c] = s, s += xr[c];
    else
        for (int c = 0; c < cols; c++) s += xr[c], yr[c] = s;
}

// ---------------------------------------------------------------------------
// one block a row

/* Element e of row blockIdx.y as the scan reads it: x[e], or x[e - 1] for an
 * exclusive scan; 0 outside the row. */
template <typename T> __device__ T scan_load(const T *x, int cols, int exclusive, int e) {
    const int src = e - exclusive;
    return e < cols && src >= 0 ? x[(size_t)blockIdx.y * cols + src] : T(0);
}

template <typename T> __global__ void scan_kogge_stone(const T *x, T *y, int cols, int exclusive) {
    __shared__ T buf[2][BLOCK];
    const int t = threadIdx.x;
    int in = 0;
    buf[0][t] = scan_load(x, cols, exclusive, t);
    for (int off = 1; off < cols; off *= 2) {
        __syncthreads(); // the step before wrote buf[in]; and read buf[1 - in], which this step writes
        buf[1 - in][t] = t >= off ? buf[in][t] + buf[in][t - off] : buf[in][t];
        in = 1 - in;
    }
    if (t < cols) y[(size_t)blockIdx.y * cols + t] = buf[in][t];
}

/* Brent-Kung over s[SECTION] in place (inclusive): up-sweep, down-sweep. Every
 * thread calls it; it starts and ends with a barrier. */
template <typename T> __device__ void brent_kung(T *s) {
    const int t = threadIdx.x;
    for (int stride = 1; stride <= BLOCK; stride *= 2) {
        __syncthreads();
        const int i = (t + 1) * 2 * stride - 1;
        if (i < SECTION) s[i] += s[i - stride];
    }
    for (int stride = SECTION / 4; stride > 0; stride /= 2) {
        __syncthreads();
        const int i = (t + 1) * 2 * stride - 1;
        if (i + stride < SECTION) s[i + stride] += s[i];
    }
    __syncthreads();
}

/* Section `sec` of row blockIdx.y scanned into s (elements past the row are 0). */
template <typename T> __device__ void scan_section(T *s, const T *x, int cols, int exclusive, int sec) {
    const int t = threadIdx.x, base = sec * SECTION;
    s[t] = scan_load(x, cols, exclusive, base + t);
    s[t + BLOCK] = scan_load(x, cols, exclusive, base + t + BLOCK);
    brent_kung(s);
}

/* s + add into the section's elements of y that lie in the row. */
template <typename T> __device__ void store_section(T *y, const T *s, int cols, int sec, T add) {
    const int t = threadIdx.x, base = sec * SECTION;
    T *yr = y + (size_t)blockIdx.y * cols;
    if (base + t < cols) yr[base + t] = s[t] + add;
    if (base + t + BLOCK < cols) yr[base + t + BLOCK] = s[t + BLOCK] + add;
}

template <typename T> __global__ void scan_brent_kung(const T *x, T *y, int cols, int exclusive) {
    __shared__ T s[SECTION];
    scan_section(s, x, cols, exclusive, 0);
    store_section(y, s, cols, 0, T(0));
}

// ---------------------------------------------------------------------------
// the three-phase hierarchical scan: block scans, a scan of block sums, adds

template <typename T> __global__ void scan_pass1(const T *x, T *y, T *sums, int cols, int exclusive) {
    __shared__ T s[SECTION];
    scan_section(s, x, cols, exclusive, blockIdx.x);
    store_section(y, s, cols, blockIdx.x, T(0));
    if (threadIdx.x == 0) sums[(size_t)blockIdx.y * gridDim.x + blockIdx.x] = s[SECTION - 1];
}

template <typename T> __global__ void scan_pass2(T *sums, int parts) {
    __shared__ T s[SECTION];
    const int t = threadIdx.x;
    T *row = sums + (size_t)blockIdx.y * parts;
    T carry = 0;
    for (int base = 0; base < parts; base += SECTION) {
        s[t] = base + t < parts ? row[base + t] : T(0);
        s[t + BLOCK] = base + t + BLOCK < parts ? row[base + t + BLOCK] : T(0);
        brent_kung(s);
        if (base + t < parts) row[base + t] = s[t] + carry;
        if (base + t + BLOCK < parts) row[base + t + BLOCK] = s[t + BLOCK] + carry;
        carry += s[SECTION - 1];
        __syncthreads(); // every thread has read s before the next chunk overwrites it
    }
}

template <typename T> __global__ void scan_pass3(T *y, const T *sums, int cols) {
    if (blockIdx.x == 0) return;
    const T add = sums[(size_t)blockIdx.y * gridDim.x + blockIdx.x - 1];
    const int base = blockIdx.x * SECTION, t = threadIdx.x;
    T *yr = y + (size_t)blockIdx.y * cols;
    if (base + t < cols) yr[base + t] += add;
    if (base + t + BLOCK < cols) yr[base + t + BLOCK] += add;
}

// ---------------------------------------------------------------------------
// single pass: decoupled look-back

/* A tile's published state: status in the high 32 bits, the value's bits in the
 * low 32 (0: nothing yet; the scratch is zeroed before each launch). */
enum { TILE_EMPTY = 0, TILE_AGGREGATE = 1, TILE_PREFIX = 2 };

__device__ unsigned value_bits(float v) {
    return __float_as_uint(v);
}
__device__ unsigned value_bits(int v) {
    return (unsigned)v;
}
__device__ void from_bits(unsigned b, float *v) {
    *v = __uint_as_float(b);
}
__device__ void from_bits(unsigned b, int *v) {
    *v = (int)b;
}

template <typename T> __device__ void publish(unsigned long long *state, unsigned status, T v) {
    atomicExch(state, (unsigned long long)status << 32 | value_bits(v));
}

/* tiles (rows, gridDim.x): each tile's state; tickets (rows): the next tile to
 * hand out in each row. Both zeroed before the launch. */
template <typename T>
__global__ void scan_lookback(const T *x, T *y, unsigned long long *tiles, int *tickets, int cols, int exclusive) {
    __shared__ T s[SECTION];
    __shared__ int tile_sh;
    __shared__ T before_sh;
    if (threadIdx.x == 0) tile_sh = atomicAdd(&tickets[blockIdx.y], 1);
    __syncthreads();
    const int tile = tile_sh;
    scan_section(s, x, cols, exclusive, tile);
    if (threadIdx.x == 0) {
        unsigned long long *state = tiles + (size_t)blockIdx.y * gridDim.x;
        const T total = s[SECTION - 1];
        T before = 0;
        if (tile == 0) {
            publish(&state[0], TILE_PREFIX, total);
        } else {
            publish(&state[tile], TILE_AGGREGATE, total);
            for (int j = tile - 1; j >= 0;) {
                const unsigned long long w = atomicAdd(&state[j], 0ull); /* an atomic read */
                const unsigned status = (unsigned)(w >> 32);
                if (status == TILE_EMPTY) continue; /* tile j's block holds an earlier ticket: it is running */
                T v;
                from_bits((unsigned)w, &v);
                before += v;
                if (status == TILE_PREFIX) break;
                j--;
            }
            publish(&state[tile], TILE_PREFIX, before + total);
        }
        before_sh = before;
    }
    __syncthreads();
    store_section(y, s, cols, tile, before_sh);
}
