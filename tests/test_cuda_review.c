/*
 * test_cuda_review.c: the CUDA backend's host side without a GPU. A stand-in
 * driver (tests/gpu/fake_libcuda.c, built here and opened through
 * HARNESS_LIBCUDA) exports what a CUDA 12.0-12.7 driver does, so the backend's
 * symbol table, module sharing, module variables, printf limits, launch checks,
 * events and fault handling run as they would on a GPU:
 *   - a driver without cuEventElapsedTime_v2 (before 12.8) and without
 *     cuFuncGetParamInfo (before 12.4) is usable;
 *   - two kernels of one image share one module, unloaded with the last;
 *   - a module variable gets the bytes given and zeroes after them; too many
 *     bytes and an unknown name are errors;
 *   - kernel printf beyond the limit is held back and counted, and what the
 *     harness prints itself between launches is neither held back nor counted;
 *   - a fault names the driver's error and leaves the backend unusable, and
 *     every error cuda.h calls sticky is one (INVALID_ADDRESS_SPACE included);
 * that every entry point's name (cuda.h's versioned one) is in the toolkit's
 * driver stub, which NVRTC versions take --no-cache, and __launch_bounds__
 * read from CUBINs whose kernel info holds byte-valued records.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "compile.h"
#include "cuda/backend_cuda.h"
#include "cuda/nvrtc_opts.h"
#include "hn_test.h"

static const char *tmp_dir(void) {
    const char *t = getenv("HARNESS_TMP");
    return t && *t ? t : "/tmp";
}

/* Builds the stand-in driver; its path (caller frees) or NULL. */
static char *build_fake_driver(void) {
    char *lib = xasprintf("%s/hn_fake_libcuda_%d.so", tmp_dir(), (int)getpid());
    char *cmd = xasprintf("cc -shared -fPIC -o '%s' -I'%s' '%s/tests/gpu/fake_libcuda.c' >&2", lib,
                          HN_CUDA_INCLUDE_DIR, HN_SOURCE_DIR);
    hn_err err;
    int ok = hn_mkdirs(tmp_dir(), &err) == 0 && system(cmd) == 0;
    free(cmd);
    if (ok) return lib;
    free(lib);
    return NULL;
}

static hn_backend *be;
static void (*fake_stats)(int *loads, int *unloads);
static unsigned char *fake_var; /* the stand-in's module variable */

static hn_module_image image(const char *key, char **lowered, int n) {
    static char bytes[4] = "CUB";
    hn_module_image img = {.target = HN_TARGET_CUDA, .image = bytes, .image_size = sizeof bytes,
                           .lowered = lowered, .n_kernels = n};
    snprintf(img.key, sizeof img.key, "%s", key);
    return img;
}

static void test_params_unknown_on_old_driver(void) {
    char *names[] = {"fake_print"};
    hn_module_image img = image("k0", names, 1);
    hn_kernel *k = NULL;
    hn_err err;
    CHECK_MSG(be->ops->kernel_load(be, &img, 0, &k, &err) == 0, "%s", err.msg);
    if (!k) return;
    hn_param_info p[4];
    int n = 0;
    CHECK(be->ops->kernel_params(be, k, p, 4, &n, &err) == 0);
    CHECK_INT(n, -1); /* no cuFuncGetParamInfo: the backend cannot tell */
    be->ops->kernel_free(be, k);
}

static void test_module_sharing(void) {
    char *names[] = {"fake_print", "fake_other"};
    hn_module_image a = image("aaaa", names, 2), b = image("bbbb", names, 2);
    hn_kernel *k0 = NULL, *k1 = NULL, *k2 = NULL;
    hn_err err;
    int l0, u0, l, u;
    fake_stats(&l0, &u0);
    CHECK(be->ops->kernel_load(be, &a, 0, &k0, &err) == 0);
    CHECK(be->ops->kernel_load(be, &a, 1, &k1, &err) == 0);
    fake_stats(&l, &u);
    CHECK_INT(l - l0, 1); /* one module for the image */
    CHECK(be->ops->kernel_load(be, &b, 0, &k2, &err) == 0);
    fake_stats(&l, &u);
    CHECK_INT(l - l0, 2);
    be->ops->kernel_free(be, k0);
    fake_stats(&l, &u);
    CHECK_INT(u - u0, 0); /* k1 still uses it */
    be->ops->kernel_free(be, k1);
    be->ops->kernel_free(be, k2);
    fake_stats(&l, &u);
    CHECK_INT(u - u0, 2);
    char *missing[] = {"no_such_kernel"};
    hn_module_image c = image("cccc", missing, 1);
    hn_kernel *k3 = NULL;
    CHECK(be->ops->kernel_load(be, &c, 0, &k3, &err) != 0);
    CHECK_CONTAINS(err.msg, "kernel no_such_kernel");
    CHECK_CONTAINS(err.msg, "CUDA_ERROR_NOT_FOUND");
    fake_stats(&l, &u);
    CHECK_INT(l - u, l0 - u0); /* the failed load's module went again */
    /* an image the driver cannot load: what to suspect, with the versions */
    static char bad_bytes[4] = "BAD";
    hn_module_image bad = image("gggg", names, 1);
    bad.image = bad_bytes;
    CHECK(be->ops->kernel_load(be, &bad, 0, &k3, &err) != 0);
    CHECK_CONTAINS(err.msg, "(CUDA_ERROR_NO_BINARY_FOR_GPU)");
    CHECK_CONTAINS(err.msg, "this device is sm_90 with driver 12.2; NVRTC ");
    CHECK(!strstr(err.msg, "is sm_90 (") && err.kind == HN_ERR_OTHER);
}

static void test_symbol_write(void) {
    char *names[] = {"fake_other"};
    hn_module_image img = image("dddd", names, 1);
    hn_kernel *k = NULL;
    hn_err err;
    CHECK(be->ops->kernel_load(be, &img, 0, &k, &err) == 0);
    if (!k) return;
    size_t size = 0;
    unsigned char big[100];
    memset(big, 0xAA, sizeof big);
    CHECK(be->ops->symbol_write(be, k, "fake_var", big, 64, &size, &err) == 0);
    CHECK(be->ops->symbol_write(be, k, "fake_var", "ABCDEFGH", 8, &size, &err) == 0);
    CHECK_INT(size, 64);
    CHECK(memcmp(fake_var, "ABCDEFGH", 8) == 0);
    int rest_zero = 1;
    for (int i = 8; i < 64; i++) rest_zero &= fake_var[i] == 0;
    CHECK(rest_zero);
    CHECK(be->ops->symbol_write(be, k, "fake_var", big, sizeof big, &size, &err) != 0);
    CHECK_STR(err.msg, "100 bytes given for a variable of 64 bytes");
    CHECK(be->ops->symbol_write(be, k, "other_var", big, 4, &size, &err) != 0);
    CHECK_CONTAINS(err.msg, "named symbol not found (CUDA_ERROR_NOT_FOUND)");
    be->ops->kernel_free(be, k);
}

/* Kernel printf under a limit; the harness's own line between launches. */
static void test_printf_limit(hn_kernel *printer) {
    hn_err err;
    long dropped = -1;
    int lines = 5;
    void *args[] = {&lines};
    hn_launch_dims d = {{1, 1, 1}, {1, 1, 1}, 0};
    CHECK(be->ops->printf_limit(be, 2, &dropped, &err) == 0);
    CHECK(be->ops->launch(be, printer, &d, args, &err) == 0);
    CHECK(be->ops->sync(be, &err) == 0);
    CHECK(be->ops->printf_limit(be, 0, &dropped, &err) == 0);
    CHECK_INT(dropped, 3);
    /* the runner's note on the lines held back, printed with a window of 0 open */
    printf("harness note: 3 lines not shown\n");
    lines = 1;
    CHECK(be->ops->launch(be, printer, &d, args, &err) == 0);
    CHECK(be->ops->sync(be, &err) == 0);
    CHECK(be->ops->printf_limit(be, -1, &dropped, &err) == 0);
    CHECK_INT(dropped, 1); /* the kernel's line only */
}

static void test_launch_checks_and_events(hn_kernel *printer) {
    hn_err err;
    int lines = 0;
    void *args[] = {&lines};
    hn_launch_dims d = {{1, 1, 1}, {2048, 1, 1}, 0};
    CHECK(be->ops->launch(be, printer, &d, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "exceeds the device's limit of 1024");
    hn_event *e0 = NULL, *e1 = NULL;
    float ms = 0;
    CHECK(be->ops->event_create(be, &e0, &err) == 0 && be->ops->event_create(be, &e1, &err) == 0);
    CHECK(be->ops->event_record(be, e0, &err) == 0 && be->ops->event_record(be, e1, &err) == 0);
    CHECK_MSG(be->ops->event_elapsed(be, e0, e1, &ms, &err) == 0, "%s", err.msg);
    CHECK(ms == 1.5f);
    be->ops->event_destroy(be, e0);
    be->ops->event_destroy(be, e1);
}

static void test_fault(void) {
    char *names[] = {"fake_fault"};
    hn_module_image img = image("eeee", names, 1);
    hn_kernel *k = NULL;
    hn_err err;
    CHECK(be->ops->kernel_load(be, &img, 0, &k, &err) == 0);
    if (!k) return;
    hn_launch_dims d = {{1, 1, 1}, {32, 1, 1}, 0};
    long dropped = 0;
    CHECK(be->ops->printf_limit(be, 0, &dropped, &err) == 0);
    CHECK(be->ops->launch(be, k, &d, NULL, &err) != 0);
    printf("harness: the row's fault\n"); /* not a kernel's line: shown, though the window holds 0 */
    CHECK_INT(err.kind, HN_ERR_FAULT);
    CHECK_CONTAINS(err.msg, "an illegal memory access was encountered (CUDA_ERROR_ILLEGAL_ADDRESS) in ");
    CHECK_CONTAINS(err.msg, "cuLaunchKernel");
    hn_dptr p = 0;
    CHECK(be->ops->alloc(be, 16, &p, &err) != 0);
    CHECK_CONTAINS(err.msg, "the CUDA context is unusable after an earlier fault: an illegal memory access");
    be->ops->kernel_free(be, k);
}

/* Every error cuda.h says leaves the context unusable is a fault (the runner
 * then restarts); ordinary ones are not. */
static void test_sticky_errors(void) {
    const int sticky[] = {700, 702, 710, 714, 715, 716, 717 /* INVALID_ADDRESS_SPACE */, 718, 719, 226, 721, 810, 911};
    for (size_t i = 0; i < HN_ARRAY_LEN(sticky); i++) CHECK_MSG(hn_cuda_error_sticky(sticky[i]), "%d", sticky[i]);
    const int plain[] = {0, 1 /* INVALID_VALUE */, 2 /* OUT_OF_MEMORY */, 500 /* NOT_FOUND */, 701, 209, 218};
    for (size_t i = 0; i < HN_ARRAY_LEN(plain); i++) CHECK_MSG(!hn_cuda_error_sticky(plain[i]), "%d", plain[i]);
}

static void test_nvrtc_options(void) {
    CHECK(!hn_nvrtc_has_no_cache(11, 8));
    CHECK(!hn_nvrtc_has_no_cache(12, 4));
    CHECK(!hn_nvrtc_has_no_cache(12, 8));
    CHECK(hn_nvrtc_has_no_cache(12, 9));
    CHECK(hn_nvrtc_has_no_cache(13, 0));
}

/* Every entry point the backend asks for, by the name cuda.h gives it, is in
 * the toolkit's own driver stub (the headers and the names agree): the stub
 * loads and only its cuInit fails (CUDA_ERROR_STUB_LIBRARY). In a child, as
 * the driver is opened once per process. */
static void test_names_in_toolkit_stub(void) {
    const char *cand[] = {HN_CUDA_INCLUDE_DIR "/../lib64/stubs/libcuda.so", HN_CUDA_INCLUDE_DIR "/../lib/stubs/libcuda.so"};
    const char *stub = NULL;
    for (size_t i = 0; i < HN_ARRAY_LEN(cand) && !stub; i++)
        if (access(cand[i], R_OK) == 0) stub = cand[i];
    if (!stub) {
        printf("no driver stub beside %s: the name test is skipped\n", HN_CUDA_INCLUDE_DIR);
        return;
    }
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        setenv("HARNESS_LIBCUDA", stub, 1);
        char why[512] = "";
        hn_cuda_available(why, sizeof why);
        if (write(fds[1], why, strlen(why)) < 0) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    char why[512] = "";
    ssize_t n = read(fds[0], why, sizeof why - 1);
    why[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    CHECK_MSG(strncmp(why, "the CUDA driver did not initialise", 34) == 0, "%s: %s", stub, why);
}

/* __launch_bounds__ read from the CUBIN of kernels whose .nv.info holds 4-byte
 * EIFMT_BVAL records before EIATTR_MAX_THREADS (shared memory and a barrier
 * give one): each kernel's bound, as NVRTC built it. */
static void test_launch_bounds_after_bval(void) {
    const char *src =
        "__global__ void __launch_bounds__(128) kz(float *x) { __shared__ float s[128]; s[threadIdx.x] = "
        "blockIdx.z; __syncthreads(); if (blockIdx.z == 0) atomicAdd(x, s[127 - threadIdx.x]); }\n"
        "__global__ void __launch_bounds__(512, 1) kd(double *x) { extern __shared__ double d[]; d[threadIdx.x] = "
        "x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = d[511 - threadIdx.x] + blockIdx.z; }\n"
        "__global__ void __launch_bounds__(64) kt(float *x) { x[threadIdx.x] += 1; }\n";
    const char *kernels[] = {"kz", "kd", "kt"};
    hn_compile_req req = {.src_path = "bounds_bval.cu", .source = src, .kernels = kernels, .n_kernels = 3,
                          .arch = "sm_90"};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &img, NULL, &err) == 0, "%s", err.msg);
    if (!img.image) return;
    const int want[] = {128, 512, 64};
    for (int i = 0; i < 3; i++) {
        const int got = hn_cubin_max_threads(img.image, img.image_size, img.lowered[i]);
        CHECK_MSG(got == want[i], "%s: %d", kernels[i], got);
    }
    hn_module_image_free(&img);
}

/* The whole of fd 1 the backend wrote through, as a string (caller frees). */
static char *read_all(int fd) {
    lseek(fd, 0, SEEK_SET);
    hn_sb sb;
    hn_sb_init(&sb);
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) hn_sb_addf(&sb, "%.*s", (int)n, buf);
    return sb.buf;
}

int main(void) {
    test_nvrtc_options();
    test_sticky_errors();
    test_launch_bounds_after_bval();
    test_names_in_toolkit_stub();
    char *lib = build_fake_driver();
    CHECK_MSG(lib != NULL, "cannot build tests/gpu/fake_libcuda.c with cc");
    if (!lib) return hn_test_exit();
    setenv("HARNESS_LIBCUDA", lib, 1);
    /* stdout into a file, to see what reached it */
    char *out_path = xasprintf("%s/hn_cuda_review_stdout_%d", tmp_dir(), (int)getpid());
    int out_fd = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int real_stdout = dup(1);
    fflush(stdout);
    dup2(out_fd, 1);

    char why[512];
    CHECK_MSG(hn_cuda_available(why, sizeof why), "%s", why);
    hn_err err;
    hn_backend_opts o = {0};
    CHECK_MSG(hn_backend_cuda_create(&o, &be, &err) == 0, "%s", err.msg);
    void *h = dlopen(lib, RTLD_NOW);
    *(void **)&fake_stats = h ? dlsym(h, "fake_stats") : NULL;
    fake_var = h ? dlsym(h, "fake_var") : NULL;
    CHECK(fake_stats && fake_var);
    if (be && fake_stats && fake_var) {
        hn_device_info dev;
        be->ops->device_info(be, &dev);
        CHECK_STR(dev.name, "Fake GPU");
        CHECK_STR(dev.arch, "sm_90");
        test_params_unknown_on_old_driver();
        test_module_sharing();
        test_symbol_write();
        char *names[] = {"fake_print"};
        hn_module_image img = image("ffff", names, 1);
        hn_kernel *printer = NULL;
        CHECK(be->ops->kernel_load(be, &img, 0, &printer, &err) == 0);
        if (printer) {
            test_printf_limit(printer);
            test_launch_checks_and_events(printer);
            be->ops->kernel_free(be, printer);
        }
        test_fault();
        hn_backend_destroy(be);
    }
    fflush(stdout);
    dup2(real_stdout, 1);
    char *text = read_all(out_fd);
    CHECK_MSG(strstr(text, "kernel line 0\nkernel line 1\n") && !strstr(text, "kernel line 2"), "stdout: %s", text);
    CHECK_MSG(strstr(text, "harness note: 3 lines not shown\n") != NULL, "stdout: %s", text);
    CHECK_MSG(strstr(text, "harness: the row's fault\n") != NULL, "stdout: %s", text);
    free(text);
    close(out_fd);
    unlink(out_path);
    free(out_path);
    if (h) dlclose(h);
    unlink(lib);
    free(lib);
    return hn_test_exit();
}
