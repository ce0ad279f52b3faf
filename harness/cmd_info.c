/*
 * cmd_info.c: `harness info`: versions, devices and backends, and whether each
 * part a run needs works, found out by using it:
 *
 *   NVRTC      compiles a probe kernel (with the C and toolkit headers a kernel
 *              includes) for the device's architecture, or sm_90 without one;
 *   emulator   compiles the same probe with the host C++ compiler and runs it on
 *              the CPU emulator, checking its output;
 *   cuda       when a driver sees a device: creates the backend and runs the
 *              probe on the GPU, checking its output;
 *   cache      the kernel cache folder can be created and written.
 *
 * Exit code 0 when every check passes; 1 when one is broken: a check above
 * fails, cuBLAS cannot say its version, or the machine has an NVIDIA device
 * node (/dev/nvidia0 ...) but no usable driver. A machine without a GPU is not
 * broken: the emulator runs the kernels there. Problems are listed on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cublas_v2.h>

#include "commands.h"
#include "cuda/cudnn.h"
#include "run.h"

#define PROBE_THREADS 64

/* Uses a C header stand-in (NVRTC) or the host's (emulator), a toolkit header,
 * shared memory and a barrier; out[i] = 3 * ((i + 1) % blockDim.x) + 1. */
static const char probe_src[] =
    "/* harness info: the probe kernel every backend must compile and run */\n"
    "#include <stdint.h>\n"
    "#include <cuda_fp16.h>\n"
    "__global__ void hn_info_probe(int *out, int n) {\n"
    "    __shared__ int s[64];\n"
    "    int i = (int)threadIdx.x;\n"
    "    s[i] = i * 3;\n"
    "    __syncthreads();\n"
    "    int32_t one = (int32_t)__half2float(__float2half(1.0f));\n"
    "    if (i < n) out[i] = s[(i + 1) % (int)blockDim.x] + one;\n"
    "}\n";

typedef struct {
    char *dir;       /* scratch folder holding the probe source and what compiles it */
    char *src;
    int problems;
} probe_env;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int probe_env_init(probe_env *pe, hn_err *err) {
    memset(pe, 0, sizeof *pe);
    if (!(pe->dir = hn_mkdtemp("harness-info-", err))) return -1;
    pe->src = hn_path_join(pe->dir, "hn_info_probe.cu");
    return hn_write_file(pe->src, probe_src, strlen(probe_src), err);
}

static void probe_env_free(probe_env *pe) {
    if (pe->dir) nftw(pe->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(pe->dir);
    free(pe->src);
}

/* One line of the checks section; a broken one is also said on stderr and counted. */
static void report(probe_env *pe, const char *what, int ok, const char *fmt, ...) HN_PRINTF(4, 5);
static void report(probe_env *pe, const char *what, int ok, const char *fmt, ...) {
    char line[sizeof(hn_err) + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("  %-9s %s: %s\n", what, ok ? "ok" : "BROKEN", line);
    if (!ok) {
        fprintf(stderr, "harness info: %s: %s\n", what, line);
        pe->problems++;
    }
}

static int probe_compile(probe_env *pe, hn_target target, const char *arch, hn_module_image *img,
                         hn_err *err) {
    const char *kernels[] = {"hn_info_probe"};
    hn_compile_req req = {0};
    req.src_path = pe->src;
    req.kernels = kernels;
    req.n_kernels = 1;
    req.arch = arch;
    req.cache_dir = pe->dir; /* fresh: the probe is compiled, never taken from a cache */
    char *log = NULL;
    int rc = hn_compile(target, &req, img, &log, err);
    free(log);
    return rc;
}

/* Loads the probe from img on be, runs it and checks its output. */
static int probe_run(hn_backend *be, const hn_module_image *img, hn_err *err) {
    hn_kernel *k = NULL;
    hn_dptr d_out = 0;
    int host[PROBE_THREADS];
    int rc = -1;
    if (be->ops->kernel_load(be, img, 0, &k, err) != 0) goto done;
    if (be->ops->alloc(be, sizeof host, &d_out, err) != 0) goto done;
    if (be->ops->fill(be, d_out, 0xff, sizeof host, err) != 0) goto done;
    int n = PROBE_THREADS;
    void *args[] = {&d_out, &n};
    hn_launch_dims d = {{1, 1, 1}, {PROBE_THREADS, 1, 1}, 0};
    if (be->ops->launch(be, k, &d, args, err) != 0 || be->ops->sync(be, err) != 0) goto done;
    if (be->ops->download(be, host, d_out, sizeof host, err) != 0) goto done;
    for (int i = 0; i < PROBE_THREADS; i++)
        if (host[i] != 3 * ((i + 1) % PROBE_THREADS) + 1) {
            hn_errf(err, "the probe kernel computed a wrong value: out[%d] = %d, expected %d", i, host[i],
                    3 * ((i + 1) % PROBE_THREADS) + 1);
            goto done;
        }
    rc = 0;
done:
    if (d_out) be->ops->free(be, d_out);
    if (k) be->ops->kernel_free(be, k);
    return rc;
}

/* The kernel cache folder can be created and a file written in it. */
static int cache_writable(const char *dir, hn_err *err) {
    if (hn_mkdirs(dir, err) != 0) return -1;
    char *probe = xasprintf("%s/.harness-info-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd < 0) {
        hn_errf(err, "%s: cannot write: %s", dir, strerror(errno));
        free(probe);
        return -1;
    }
    close(fd);
    unlink(probe);
    free(probe);
    return 0;
}

/* The first NVIDIA device node, or "" (a GPU the driver should see). */
static void nvidia_device_node(char *buf, size_t size) {
    glob_t g;
    buf[0] = '\0';
    if (glob("/dev/nvidia[0-9]*", 0, NULL, &g) == 0 && g.gl_pathc > 0)
        snprintf(buf, size, "%s", g.gl_pathv[0]);
    globfree(&g);
}

int hn_cmd_info(const hn_cli *cli) {
    (void)cli;
    printf("harness %s\n", HN_VERSION);
    printf("NVRTC %s\n", hn_nvrtc_version());
    int major = 0, minor = 0, patch = 0;
    int have_cublas = cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
                      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
                      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS;
    if (have_cublas) printf("cuBLAS %d.%d.%d\n", major, minor, patch);
    else printf("cuBLAS unavailable\n");
    /* cuDNN is optional (its baselines' rows are skipped without it): never "broken" */
    hn_err dnn_err;
    if (hn_cudnn_load(&dnn_err) == 0) {
        size_t v = hn_dnn.cudnnGetVersion();
        printf("cuDNN %zu.%zu.%zu (%s, loaded at run time)\n", v / 10000, v / 100 % 100, v % 100, hn_cudnn_library());
    } else {
        printf("cuDNN unavailable: %s\n", dnn_err.msg);
    }
    char drv[32];
    hn_cuda_driver_version(drv, sizeof drv);
    printf("CUDA driver %s\n", drv);
    const char *cxx = getenv("HARNESS_CXX");
    printf("host C++ compiler (emulator) %s\n", cxx && *cxx ? cxx : HN_CXX_COMPILER);
    char *cache = hn_default_cache_dir();
    printf("kernel cache %s\n", cache);

    printf("\nbackends:\n");
    char why[sizeof(hn_err)];
    hn_err err;
    hn_backend *gpu = NULL;
    char arch[16] = "sm_90";
    int cuda_ok = hn_cuda_available(why, sizeof why);
    if (cuda_ok) {
        if (hn_backend_cuda_create(NULL, &gpu, &err) == 0) {
            hn_device_info in;
            gpu->ops->device_info(gpu, &in);
            snprintf(arch, sizeof arch, "%s", in.arch);
            printf("  cuda  yes: %s, %s, %d SMs, %.1f GiB, L2 %.1f MiB, SM clock %d MHz, memory %d MHz x %d bit\n",
                   in.name, in.arch, in.sm_count, (double)in.global_mem / (1 << 30),
                   (double)in.l2_bytes / (1 << 20), in.sm_clock_khz / 1000, in.mem_clock_khz / 1000,
                   in.mem_bus_width);
        } else {
            snprintf(why, sizeof why, "%s", err.msg);
            printf("  cuda  no: %s\n", why);
        }
    } else {
        printf("  cuda  no: %s\n", why);
    }
    hn_backend *emu = NULL;
    hn_err emu_err;
    if (hn_backend_emu_create(NULL, &emu, &emu_err) == 0) {
        hn_device_info in;
        emu->ops->device_info(emu, &in);
        printf("  emu   yes: %s\n", in.name);
    } else {
        printf("  emu   no: %s\n", emu_err.msg);
    }
    printf("default backend (auto): %s\n", cuda_ok ? "cuda" : "emu");

    printf("\nchecks:\n");
    probe_env pe;
    if (probe_env_init(&pe, &err) != 0) {
        report(&pe, "probe", 0, "%s", err.msg);
    } else {
        hn_module_image img;
        double t0 = hn_now();
        if (probe_compile(&pe, HN_TARGET_CUDA, arch, &img, &err) != 0) {
            report(&pe, "NVRTC", 0, "cannot compile the probe kernel: %s", err.msg);
        } else {
            report(&pe, "NVRTC", 1, "compiled the probe kernel for %s in %.2f s", arch, hn_now() - t0);
            if (gpu) {
                if (probe_run(gpu, &img, &err) != 0) report(&pe, "cuda", 0, "the probe kernel failed: %s", err.msg);
                else report(&pe, "cuda", 1, "ran the probe kernel and checked its output");
            }
            hn_module_image_free(&img);
        }
        if (cuda_ok && !gpu) report(&pe, "cuda", 0, "a device is present but the backend failed: %s", why);
        char node[256];
        nvidia_device_node(node, sizeof node);
        if (!cuda_ok && node[0]) {
            report(&pe, "cuda", 0, "%s exists, but the driver is not usable: %s", node, why);
        }
        if (!emu) {
            report(&pe, "emulator", 0, "cannot create the backend: %s", emu_err.msg);
        } else {
            t0 = hn_now();
            if (probe_compile(&pe, HN_TARGET_EMU, NULL, &img, &err) != 0) {
                report(&pe, "emulator", 0, "cannot compile the probe kernel: %s", err.msg);
            } else {
                if (probe_run(emu, &img, &err) != 0) {
                    report(&pe, "emulator", 0, "the probe kernel failed: %s", err.msg);
                } else {
                    report(&pe, "emulator", 1, "compiled and ran the probe kernel in %.2f s", hn_now() - t0);
                }
                hn_module_image_free(&img);
            }
        }
    }
    if (cache_writable(cache, &err) != 0) report(&pe, "cache", 0, "%s", err.msg);
    else report(&pe, "cache", 1, "%s is writable", cache);
    if (!have_cublas) report(&pe, "cuBLAS", 0, "cannot read its version (the GPU baseline needs it)");
    hn_backend_destroy(emu);
    hn_backend_destroy(gpu);
    probe_env_free(&pe);
    free(cache);
    if (pe.problems) {
        fprintf(stderr, "harness info: %d problem%s\n", pe.problems, pe.problems == 1 ? "" : "s");
        return 1;
    }
    return 0;
}
