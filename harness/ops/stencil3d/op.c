/*
 * stencil3d/op.c: the 7-point stencil of PMPP chapter 8 on a 3D grid.
 *
 *   in   (nz, ny, nx)  float32
 *   out  (nz, ny, nx)  float32   interior points (1 <= z < nz-1, the same in y
 *                                and x): c0 in[z][y][x]
 *                                  + c1 in[z][y][x-1] + c2 in[z][y][x+1]
 *                                  + c3 in[z][y-1][x] + c4 in[z][y+1][x]
 *                                  + c5 in[z-1][y][x] + c6 in[z+1][y][x];
 *                                boundary points (any index 0 or its size - 1):
 *                                out = in (copied: the chapter's kernels leave
 *                                them unwritten, which a poisoned output cannot)
 *
 * nz, ny and nx default to the axis n (PMPP's N^3 grid). The coefficients are
 * seven distinct float32 parameters, so a neighbour taken from the wrong side
 * shows. in is N(0, 1). The reference is a loop over z-planes on threads, in
 * double.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

static const hn_op_param PARAMS[] = {
    {"nz", 'i', "n", "planes (the slowest index)", NULL},
    {"ny", 'i', "n", "rows a plane", NULL},
    {"nx", 'i', "n", "points a row (the fastest index)", NULL},
    {"c0", 'f', "0.5", "the centre's coefficient", NULL},
    {"c1", 'f', "0.0625", "x - 1", NULL},
    {"c2", 'f', "0.125", "x + 1", NULL},
    {"c3", 'f', "-0.0625", "y - 1", NULL},
    {"c4", 'f', "0.1875", "y + 1", NULL},
    {"c5", 'f', "-0.125", "z - 1", NULL},
    {"c6", 'f', "0.25", "z + 1", NULL},
};

enum { P_NZ, P_NY, P_NX, P_C0 };
enum { B_IN, B_OUT };

static const hn_op_buffer BUFFERS[] = {
    {"in", HN_DT_F32, HN_BUF_IN, "(nz, ny, nx)"},
    {"out", HN_DT_F32, HN_BUF_OUT, "(nz, ny, nx)"},
};

static int stencil_shape(const double *p, int64_t *counts, hn_err *err) {
    for (int i = P_NZ; i <= P_NX; i++)
        if (!(p[i] >= 1 && p[i] <= 1 << 30 && p[i] == (double)(int)p[i]))
            return hn_errf(err, "stencil3d: %s = %g must be a whole number between 1 and 2^30", PARAMS[i].name, p[i]);
    for (int i = P_C0; i < P_C0 + 7; i++)
        if (!isfinite(p[i])) return hn_errf(err, "stencil3d: %s = %g must be finite", PARAMS[i].name, p[i]);
    const double n = p[P_NZ] * p[P_NY] * p[P_NX];
    if (n > 2147483647.0)
        return hn_errf(err, "stencil3d: nz * ny * nx = %g * %g * %g = %.0f points (more than 2^31-1; the kernels index "
                            "with int)",
                       p[P_NZ], p[P_NY], p[P_NX], n);
    counts[B_IN] = counts[B_OUT] = (int64_t)n;
    return 0;
}

/* Interior points: 7 multiplies and 6 adds each; the boundary's copies count 0. */
static double stencil_flop(const double *p) {
    double interior = 1;
    for (int i = P_NZ; i <= P_NX; i++) interior *= p[i] > 2 ? p[i] - 2 : 0;
    return 13 * interior;
}

static double stencil_bytes(const double *p) {
    return 8.0 * p[P_NZ] * p[P_NY] * p[P_NX];
}

static int stencil_dims(const double *p, int buffer, int64_t dims[4]) {
    (void)buffer;
    dims[0] = (int64_t)p[P_NZ], dims[1] = (int64_t)p[P_NY], dims[2] = (int64_t)p[P_NX];
    return 3;
}

static void stencil_label(const double *p, char *buf, size_t size) {
    if (p[P_NZ] == p[P_NY] && p[P_NY] == p[P_NX]) snprintf(buf, size, "%d^3", (int)p[P_NX]);
    else snprintf(buf, size, "%dx%dx%d", (int)p[P_NZ], (int)p[P_NY], (int)p[P_NX]);
}

static void stencil_generate(const double *p, void *const *bufs, uint64_t seed) {
    hn_fill_randn_f32(bufs[B_IN], (int64_t)(p[P_NZ] * p[P_NY] * p[P_NX]), seed * 2 + 1);
}

typedef struct {
    const float *in;
    double *out;
    int64_t nz, ny, nx;
    double c[7];
} stencil_job;

/* A row of interior points x = 1 .. nx-2 (the row's y and z interior too): in
 * points at the row's first point, a plane holds `plane` points. 8 points at a
 * time as vectors of doubles (GCC's vector extensions: -O2 does not vectorize
 * a loop of unknown length), compiled for AVX-512, AVX2 and the baseline and
 * picked at load time (target_clones). */
enum { ST_LANES = 8 };
typedef float st_v8f __attribute__((vector_size(32)));
typedef double st_v8d __attribute__((vector_size(64)));

/* in[0..7] as doubles into *v (a pointer: a 64-byte vector returned by value
 * changes the ABI between the clones). */
static inline void st_load8(const float *in, st_v8d *v) {
    st_v8f f;
    memcpy(&f, in, sizeof f);
    *v = __builtin_convertvector(f, st_v8d);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) static void
stencil_row(double *restrict out, const float *restrict in, int64_t nx, int64_t plane, const double c[7]) {
    const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5], c6 = c[6];
    int64_t x = 1;
    for (; x + ST_LANES <= nx - 1; x += ST_LANES) {
        st_v8d m, w, e, s, n, d, u;
        st_load8(in + x, &m), st_load8(in + x - 1, &w), st_load8(in + x + 1, &e);
        st_load8(in + x - nx, &s), st_load8(in + x + nx, &n);
        st_load8(in + x - plane, &d), st_load8(in + x + plane, &u);
        const st_v8d v = c0 * m + c1 * w + c2 * e + c3 * s + c4 * n + c5 * d + c6 * u;
        memcpy(out + x, &v, sizeof v);
    }
    for (; x < nx - 1; x++)
        out[x] = c0 * in[x] + c1 * in[x - 1] + c2 * in[x + 1] + c3 * in[x - nx] + c4 * in[x + nx] +
                 c5 * in[x - plane] + c6 * in[x + plane];
}

/* Planes [begin, end) of the output. */
static void stencil_planes(void *ctx, int64_t begin, int64_t end) {
    const stencil_job *j = ctx;
    const int64_t nx = j->nx, ny = j->ny, plane = nx * ny;
    for (int64_t z = begin; z < end; z++)
        for (int64_t y = 0; y < ny; y++) {
            const int64_t row = (z * ny + y) * nx;
            const float *in = j->in + row;
            double *out = j->out + row;
            if (z == 0 || z == j->nz - 1 || y == 0 || y == ny - 1 || nx < 3) {
                for (int64_t x = 0; x < nx; x++) out[x] = in[x];
                continue;
            }
            out[0] = in[0], out[nx - 1] = in[nx - 1];
            stencil_row(out, in, nx, plane, j->c);
        }
}

static int stencil_reference(const double *p, void *const *bufs, hn_ref *refs, double budget_gflop, uint64_t seed,
                             int threads, hn_err *err) {
    (void)budget_gflop, (void)seed, (void)err;
    stencil_job job = {bufs[B_IN], NULL, (int64_t)p[P_NZ], (int64_t)p[P_NY], (int64_t)p[P_NX], {0}};
    for (int i = 0; i < 7; i++) job.c[i] = p[P_C0 + i];
    const int64_t n = job.nz * job.ny * job.nx;
    hn_ref *ref = &refs[B_OUT];
    ref->n = n;
    ref->values = job.out = hn_ref_alloc_values(n);
    snprintf(ref->method, sizeof ref->method, "full");
    /* a thread takes 2^18 points at least */
    hn_ref_parallel(job.nz, 1 + ((int64_t)1 << 18) / (job.ny * job.nx), threads, stencil_planes, &job);
    return 0;
}

static const char *const BENCH[] = {"nz=256,ny=256,nx=256", "nz=64,ny=512,nx=1000", NULL};

const hn_op hn_op_stencil3d = {
    .name = "stencil3d",
    .doc = "the 7-point 3D stencil of PMPP chapter 8 on an nz x ny x nx grid, boundary points copied",
    .params = PARAMS,
    .n_params = (int)HN_ARRAY_LEN(PARAMS),
    .buffers = BUFFERS,
    .n_buffers = (int)HN_ARRAY_LEN(BUFFERS),
    .bench_cases = BENCH,
    .shape = stencil_shape,
    .flop = stencil_flop,
    .bytes = stencil_bytes,
    .dims = stencil_dims,
    .label = stencil_label,
    .generate = stencil_generate,
    .reference = stencil_reference,
};
