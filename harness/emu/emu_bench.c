/*
 * emu_bench.c: hn_emu_bench (emu.h): what the CPU emulator costs.
 *
 *   fiber switch               two fibers handing control back and forth
 *   barrier per thread         256 threads x many __syncthreads, one worker
 *   thread, loop mode          a kernel with no collective (threads are calls)
 *   thread, fiber mode         a kernel with one barrier (threads are fibers)
 *   conv2d                     each kernels/conv2d variant on in 8 -> out 8,
 *                              128 x 128, filter 5, float accumulator,
 *                              TILE_SIZE 16, on all workers, against a
 *                              single-threaded C loop computing the same
 *                              "same"-padded convolution, side by side; then
 *                              each again instrumented, under the sanitizer
 *                              (`harness check`) and under the profile
 *                              (`harness profile`, its default 8 blocks a
 *                              launch), as multiples of its plain time
 *
 * Figures are printed, never judged: the targets (switch < 20 ns, shared-halo
 * conv2d <= 5x the C loop) are for people reading docs/emulator.md. What is
 * judged is that every figure was measured and every conv2d variant agrees with
 * the C loop. Quick: one repetition of smaller work (a 32 x 32 image).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "backend.h"
#include "compile.h"
#include "emu.h"
#include "emu_fiber.h"

#define REPS 5

/* How much work each figure takes (quick or not). */
typedef struct {
    int reps;          /* best of this many */
    long switches;     /* fiber switch round trips per repetition */
    int iters;         /* __syncthreads per thread in the barrier kernel */
    unsigned blocks;   /* blocks of 256 threads in the per-thread kernels */
    int img;           /* conv2d image size */
} bench_size;

/* The sizes of this run (set by hn_emu_bench). */
static bench_size BS = {REPS, 2000000, 2000, 4096, 128};

static const char bench_src[] =
    "/* emulator micro-benchmarks (written by hn_emu_bench) */\n"
    "__global__ void bench_barrier(int iters, int *out) {\n"
    "    int acc = 0;\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "        acc += i ^ (int)threadIdx.x;\n"
    "        __syncthreads();\n"
    "    }\n"
    "    if (acc == -1) out[0] = acc;\n"
    "}\n"
    "__global__ void bench_plain(int *out) {\n"
    "    if (threadIdx.x == 100000u) out[0] = 1;\n"
    "}\n"
    "__global__ void bench_one_barrier(int *out) {\n"
    "    __syncthreads();\n"
    "    if (threadIdx.x == 100000u) out[0] = 1;\n"
    "}\n";

/* ------------------------------------------------------------------------- */
/* the raw switch */

#if defined(__SANITIZE_ADDRESS__)
static double switch_ns(hn_err *err) {
    (void)err;
    return -1; /* unannounced switches would confuse the sanitizer */
}
#else
static void *main_sp, *fiber_sp;

static void ping(void *arg) {
    (void)arg;
    for (;;) hn_emu_switch(&fiber_sp, main_sp);
}

static double switch_ns(hn_err *err) {
    emu_stacks st;
    if (emu_stacks_init(&st, 1, 64 * 1024, err) != 0) return -1;
    char *lo, *hi;
    if (emu_stacks_get(&st, 0, &lo, &hi, err) != 0) {
        emu_stacks_free(&st);
        return -1;
    }
    fiber_sp = emu_fiber_prepare(hi, ping, NULL);
    const long n = BS.switches;
    double best = 1e9;
    for (int r = 0; r < BS.reps; r++) {
        double t0 = hn_now();
        for (long i = 0; i < n; i++) hn_emu_switch(&main_sp, fiber_sp);
        double t = (hn_now() - t0) / (2.0 * (double)n) * 1e9;
        if (t < best) best = t;
    }
    emu_stacks_free(&st);
    return best;
}
#endif

/* ------------------------------------------------------------------------- */
/* helpers */

static int compile_one(const char *path, const char *const *kernels, int nk,
                       const char *const *defines, int nd, int instrument, hn_module_image *img, hn_err *err) {
    char *cache = hn_default_cache_dir();
    hn_compile_req req = {0};
    req.instrument = instrument;
    req.src_path = path;
    req.kernels = kernels;
    req.n_kernels = nk;
    req.defines = defines;
    req.n_defines = nd;
    req.cache_dir = cache;
    char *log = NULL;
    int rc = hn_compile_emu(&req, img, &log, err);
    free(log);
    free(cache);
    return rc;
}

/* The CPU time the process (all its threads) has used, in seconds. */
static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Best of REPS launches (after one warm-up), in seconds of wall time; -1 on
 * failure. *cpu (if not NULL) gets the best launch's CPU time over all
 * threads: what other programs on the machine change least. */
static double time_launch_cpu(hn_backend *b, hn_kernel *k, const hn_launch_dims *d, void **args, double *cpu,
                              hn_err *err) {
    if (b->ops->launch(b, k, d, args, err) != 0) return -1;
    double best = 1e30, best_cpu = 1e30;
    for (int r = 0; r < BS.reps; r++) {
        double t0 = hn_now(), c0 = cpu_now();
        if (b->ops->launch(b, k, d, args, err) != 0) return -1;
        double t = hn_now() - t0, c = cpu_now() - c0;
        if (t < best) best = t;
        if (c < best_cpu) best_cpu = c;
    }
    if (cpu) *cpu = best_cpu;
    return best;
}

static double time_launch(hn_backend *b, hn_kernel *k, const hn_launch_dims *d, void **args, hn_err *err) {
    return time_launch_cpu(b, k, d, args, NULL, err);
}

/* ------------------------------------------------------------------------- */
/* micro-benchmarks through real kernels */

static int micro(FILE *out, hn_err *err) {
    char *cache = hn_default_cache_dir();
    if (hn_mkdirs(cache, err) != 0) {
        free(cache);
        return -1;
    }
    hn_hash h;
    hn_hash_init(&h);
    hn_hash_adds(&h, bench_src);
    char key[33];
    hn_hash_hex(&h, key);
    char *path = xasprintf("%s/emu-bench-%.12s.cu", cache, key);
    free(cache);
    /* Written again unless it holds exactly bench_src (a damaged cache). */
    char *have = NULL;
    int same = hn_read_file(path, &have, NULL, NULL) == 0 && strcmp(have, bench_src) == 0;
    free(have);
    if (!same && hn_write_file(path, bench_src, strlen(bench_src), err) != 0) {
        free(path);
        return -1;
    }
    const char *ks[] = {"bench_barrier", "bench_plain", "bench_one_barrier"};
    hn_module_image img;
    int rc = compile_one(path, ks, 3, NULL, 0, 0, &img, err);
    free(path);
    if (rc != 0) return -1;
    hn_backend_opts o = {.emu_threads = 1};
    hn_backend *b = NULL;
    hn_kernel *k[3] = {NULL, NULL, NULL};
    hn_dptr d_out = 0;
    rc = -1;
    if (hn_backend_emu_create(&o, &b, err) != 0) goto done;
    for (int i = 0; i < 3; i++)
        if (b->ops->kernel_load(b, &img, i, &k[i], err) != 0) goto done;
    if (b->ops->alloc(b, 64, &d_out, err) != 0) goto done;

    int iters = BS.iters;
    void *a0[] = {&iters, &d_out};
    hn_launch_dims d0 = {{1, 1, 1}, {256, 1, 1}, 0};
    double t = time_launch(b, k[0], &d0, a0, err);
    if (t < 0) goto done;
    fprintf(out, "  barrier, per thread:             %6.1f ns  (256 threads x %d __syncthreads, 1 worker)\n",
            t / (256.0 * iters) * 1e9, iters);

    void *a1[] = {&d_out};
    hn_launch_dims d1 = {{BS.blocks, 1, 1}, {256, 1, 1}, 0};
    t = time_launch(b, k[1], &d1, a1, err);
    if (t < 0) goto done;
    fprintf(out, "  thread without collectives:      %6.1f ns  (loop mode; %u blocks x 256, 1 worker)\n",
            t / (BS.blocks * 256.0) * 1e9, BS.blocks);
    t = time_launch(b, k[2], &d1, a1, err);
    if (t < 0) goto done;
    fprintf(out, "  thread with one barrier:         %6.1f ns  (fiber mode; same grid, 1 worker)\n",
            t / (BS.blocks * 256.0) * 1e9);
    rc = 0;
done:
    if (b) {
        if (d_out) b->ops->free(b, d_out);
        for (int i = 0; i < 3; i++)
            if (k[i]) b->ops->kernel_free(b, k[i]);
        hn_backend_destroy(b);
    }
    hn_module_image_free(&img);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* conv2d */

/* "same"-padded conv2d in float, one thread, the obvious loops.
 * in (in_ch, h, w), filter (out_ch, in_ch, fs, fs), out (out_ch, h, w). */
static void conv2d_loop(float *out, const float *in, const float *filter, int h, int w, int in_ch,
                        int out_ch, int fs, float pad) {
    int r = (fs - 1) / 2;
    for (int o = 0; o < out_ch; o++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                float acc = 0.0f;
                for (int c = 0; c < in_ch; c++) {
                    const float *ic = in + (size_t)c * h * w;
                    const float *f = filter + ((size_t)o * in_ch + c) * fs * fs;
                    for (int p = 0; p < fs; p++) {
                        int yy = y + p - r;
                        for (int q = 0; q < fs; q++) {
                            int xx = x + q - r;
                            float v = yy >= 0 && yy < h && xx >= 0 && xx < w ? ic[yy * w + xx] : pad;
                            acc += v * f[p * fs + q];
                        }
                    }
                }
                out[((size_t)o * h + y) * w + x] = acc;
            }
}

static char *conv2d_dir(void) {
    const char *root = getenv("HARNESS_ROOT");
    char *d = xasprintf("%s/kernels/conv2d", root && *root ? root : HN_SOURCE_DIR);
    return d;
}

/* The emulated time of one conv2d variant, plain or instrumented under a
 * backend `b` (sanitizing when instrumented): best of REPS, max |diff| in *md.
 * Returns -1 with the reason in *why (printed, the bench goes on). */
static double conv2d_variant(hn_backend *b, const char *path, const char *name, int v, int instrument,
                             hn_dptr d_in, hn_dptr d_f, hn_dptr d_out, const float *ref, float *got, size_t n_out,
                             double *md, double *cpu, hn_err *why) {
    const int in_ch = 8, out_ch = 8, h = BS.img, w = BS.img, fs = 5, T = 16;
    (void)in_ch;
    const char *defs[] = {"TILE_SIZE=16", "ACCUM_DTYPE=float"};
    hn_module_image img;
    if (compile_one(path, &name, 1, defs, 2, instrument, &img, why) != 0) return -1;
    hn_kernel *k = NULL;
    if (b->ops->kernel_load(b, &img, 0, &k, why) != 0) {
        hn_module_image_free(&img);
        return -1;
    }
    int O = T - fs + 1, halo = v == 3;
    int tile = halo ? O : T;
    hn_launch_dims d = {{(unsigned)((w + tile - 1) / tile), (unsigned)((h + tile - 1) / tile),
                         v == 0 ? 1u : (unsigned)out_ch},
                        {(unsigned)T, (unsigned)T, 1},
                        v >= 2 ? (size_t)T * T * 4 : 0};
    int hh = h, ww = w, ic = 8, oc = out_ch, f = fs;
    float pd = 0.0f;
    void *args[] = {&d_in, &d_out, &d_f, &hh, &ww, &ic, &oc, &f, &pd};
    hn_err err;
    if (b->ops->poison) b->ops->poison(b, d_out, n_out * 4, &err);
    double t = time_launch_cpu(b, k, &d, args, cpu, why);
    if (b->ops->profile_take) {
        hn_profile prof;
        b->ops->profile_take(b, &prof);
        hn_profile_free(&prof);
    }
    if (t >= 0 && b->ops->sanitizer_take) {
        hn_san_findings fs_;
        b->ops->sanitizer_take(b, &fs_);
        if (fs_.first_class >= 0) {
            hn_errf(why, "sanitizer: %s", fs_.first);
            t = -1;
        }
        hn_san_findings_free(&fs_);
    }
    if (t >= 0) {
        b->ops->download(b, got, d_out, n_out * 4, &err);
        *md = 0;
        for (size_t i = 0; i < n_out; i++) {
            double dd = fabs((double)got[i] - (double)ref[i]);
            if (!(dd <= *md)) *md = dd; /* a NaN sticks */
        }
    }
    b->ops->kernel_free(b, k);
    hn_module_image_free(&img);
    return t;
}

/* Emulated and C-loop results differ by float rounding only (different order of
 * the same float sums); a kernel bug makes an error of the output's own size. */
#define CONV2D_TOL 1e-3

static int conv2d(FILE *out, hn_err *err) {
    const int in_ch = 8, out_ch = 8, h = BS.img, w = BS.img, fs = 5, T = 16;
    const float pad = 0.0f;
    static const char *const variants[] = {"conv2d_pad", "conv2d_pad_z_out",
                                           "conv2d_pad_z_out_shared",
                                           "conv2d_pad_z_out_shared_halo"};
    enum { NV = 4 };
    char *dir = conv2d_dir();
    size_t n_in = (size_t)in_ch * h * w, n_f = (size_t)out_ch * in_ch * fs * fs,
           n_out = (size_t)out_ch * h * w;
    float *in = xmalloc(n_in * sizeof *in), *filter = xmalloc(n_f * sizeof *filter);
    float *ref = xmalloc(n_out * sizeof *ref), *got = xmalloc(n_out * sizeof *got);
    uint64_t seed = 12345;
    for (size_t i = 0; i < n_in; i++) in[i] = (float)(hn_rand_unit(&seed) * 2 - 1);
    for (size_t i = 0; i < n_f; i++) filter[i] = (float)(hn_rand_unit(&seed) * 2 - 1);

    fprintf(out, "conv2d, in %d -> out %d channels, %d x %d, filter %d, float accumulator, "
                 "TILE_SIZE %d (%s)\n",
            in_ch, out_ch, h, w, fs, T, dir);
    double loop = 1e30;
    for (int r = 0; r < BS.reps; r++) {
        double t0 = hn_now();
        conv2d_loop(ref, in, filter, h, w, in_ch, out_ch, fs, pad);
        double t = hn_now() - t0;
        if (t < loop) loop = t;
    }
    fprintf(out, "  C loop, 1 thread:                %8.2f ms\n", loop * 1e3);

    /* mode 0: plain; 1: instrumented, under the sanitizer (every check); 2:
     * the profile (instrumented and plain modules, 8 blocks a launch recorded) */
    double plain[NV], plain_cpu[NV];
    int rc = -1, failed = 0;
    for (int mode = 0; mode < 3; mode++) {
        hn_backend *b = NULL;
        hn_backend_opts o = {0};
        if (mode == 1) o.sanitize = HN_SAN_ALL;
        if (mode == 2) {
            o.profile = 1;
            o.profile_blocks = 8;
        }
        hn_dptr d_in = 0, d_f = 0, d_out = 0;
        if (hn_backend_emu_create(&o, &b, err) != 0) goto done;
        hn_device_info di;
        b->ops->device_info(b, &di);
        if (b->ops->alloc(b, n_in * 4, &d_in, err) != 0 || b->ops->alloc(b, n_f * 4, &d_f, err) != 0 ||
            b->ops->alloc(b, n_out * 4, &d_out, err) != 0 || b->ops->upload(b, d_in, in, n_in * 4, err) != 0 ||
            b->ops->upload(b, d_f, filter, n_f * 4, err) != 0) {
            hn_backend_destroy(b);
            goto done;
        }
        if (mode == 0)
            fprintf(out, "  %-30s %9s %9s %11s   (emulated on %d worker thread%s)\n", "variant", "ms",
                    "x C loop", "max |diff|", di.sm_count, di.sm_count == 1 ? "" : "s");
        else if (mode == 1)
            fprintf(out, "  %-30s %9s %9s %11s %11s   (instrumented: harness check, every check)\n",
                    "sanitizer", "ms", "x plain", "max |diff|", "x plain CPU");
        else
            fprintf(out, "  %-30s %9s %9s %11s %11s   (harness profile: 8 blocks a launch recorded)\n",
                    "profile", "ms", "x plain", "max |diff|", "x plain CPU");
        for (int v = 0; v < NV; v++) {
            char *path = xasprintf("%s/%s.cu", dir, variants[v]);
            if (!hn_file_exists(path)) {
                fprintf(out, "  %-30s failed: %s not found\n", variants[v], path);
                free(path);
                failed++;
                if (mode == 0) plain[v] = -1;
                continue;
            }
            double md = 0, cpu = 0;
            hn_err why;
            int instrument = mode == 1 ? HN_INSTRUMENT_ACCESSES : mode == 2 ? HN_INSTRUMENT_PROFILE : 0;
            double t = conv2d_variant(b, path, variants[v], v, instrument, d_in, d_f, d_out, ref, got, n_out, &md,
                                      &cpu, &why);
            free(path);
            if (mode == 0) {
                plain[v] = t;
                plain_cpu[v] = cpu;
            }
            const char *bad = t >= 0 && !(md <= CONV2D_TOL) ? "  MISMATCH: failed" : "";
            failed += t < 0 || *bad;
            if (t < 0)
                fprintf(out, "  %-30s failed: %s\n", variants[v], why.msg);
            else if (mode == 0)
                fprintf(out, "  %-30s %9.2f %9.2f %11.2e%s\n", variants[v], t * 1e3, t / loop, md, bad);
            else
                fprintf(out, "  %-30s %9.2f %9.2f %11.2e %11.2f%s\n", variants[v], t * 1e3,
                        plain[v] > 0 ? t / plain[v] : 0.0, md, plain_cpu[v] > 0 ? cpu / plain_cpu[v] : 0.0, bad);
        }
        b->ops->free(b, d_in);
        b->ops->free(b, d_f);
        b->ops->free(b, d_out);
        hn_backend_destroy(b);
    }
    if (failed) {
        hn_errf(err, "%d conv2d run%s failed or disagree with the C loop", failed, failed == 1 ? "" : "s");
        goto done;
    }
    rc = 0;
done:
    free(in);
    free(filter);
    free(ref);
    free(got);
    free(dir);
    return rc;
}

/* ------------------------------------------------------------------------- */

int hn_emu_bench(FILE *out, int quick, hn_err *err) {
    BS = quick ? (bench_size){1, 100000, 200, 256, 32} : (bench_size){REPS, 2000000, 2000, 4096, 128};
    hn_backend_opts o = {0}; /* default: one worker per core, as the conv2d runs use */
    hn_backend *probe = NULL;
    if (hn_backend_emu_create(&o, &probe, err) != 0) return -1;
    hn_device_info di;
    probe->ops->device_info(probe, &di);
    hn_backend_destroy(probe);
    fprintf(out, "harness CPU emulator benchmark: %s, %d CPU%s\n", di.name, hn_cpu_count(),
            hn_cpu_count() == 1 ? "" : "s");
    double sw = switch_ns(err);
    if (sw >= 0) fprintf(out, "  fiber switch:                    %6.1f ns\n", sw);
    else fprintf(out, "  fiber switch:                       n/a (sanitizer build)\n");
    if (micro(out, err) != 0) return -1;
    if (conv2d(out, err) != 0) return -1;
    fflush(out);
    return 0;
}
