/*
 * test_nvrtc.c: NVRTC compiles (harness/nvrtc.c) without a GPU: every variant of
 * every config in configs/ for sm_80 and sm_90, the on-disk cache (hit on the
 * second compile, miss after an included header changes), resource reports, and
 * compile errors that name the user's file and line.
 */
#include <dirent.h>
#include <unistd.h>

#include <cublas_v2.h>

#include "config.h"
#include "embedded.h"
#include "hn_test.h"
#include "sweep.h"
#include "run.h"

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

static char *tmp_dir(const char *name) {
    const char *base = getenv("HARNESS_TMP") ? getenv("HARNESS_TMP") : "/tmp";
    char *d = xasprintf("%s/%s.%d", base, name, (int)getpid());
    hn_mkdirs(d, NULL);
    return d;
}

static void test_every_config_variant(void) {
    char *dir = xasprintf("%s/configs", root());
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    char *cache = tmp_dir("nvrtc-cache");
    int compiled = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        char *path = xasprintf("%s/%s", dir, e->d_name);
        hn_plan *p;
        hn_err err;
        CHECK_MSG(hn_plan_load(path, -1, &p, &err) == 0, "%s", err.msg);
        for (int v = 0; p && v < p->n_variants; v++) {
            const char *archs[] = {"sm_80", "sm_90"};
            for (int a = 0; a < 2; a++) {
                hn_build b;
                hn_build_init(&b, p, &p->variants[v], NULL, 0, archs[a], cache);
                hn_module_image img;
                char *log = NULL;
                int rc = hn_compile_cuda(&b.req, &img, &log, &err);
                CHECK_MSG(rc == 0, "%s %s %s: %s", e->d_name, p->variants[v].label, archs[a], err.msg);
                if (rc == 0) {
                    CHECK(img.image_size > 0);
                    CHECK(img.res[0].registers > 0);
                    CHECK_INT(img.res[0].spill_stores, 0);
                    compiled++;
                    hn_module_image_free(&img);
                }
                free(log);
                hn_build_free(&b);
            }
        }
        hn_plan_free(p);
        free(path);
    }
    closedir(d);
    CHECK(compiled >= 10);
    printf("compiled %d variant/arch pairs\n", compiled);
    free(cache);
    free(dir);
}

static int write_text(const char *path, const char *text) {
    return hn_write_file(path, text, strlen(text), NULL);
}

static void test_cache_and_header_edit(void) {
    char *dir = tmp_dir("nvrtc-edit");
    char *cache = xasprintf("%s/cache", dir);
    char *src = xasprintf("%s/k.cu", dir);
    char *hdr = xasprintf("%s/scale.h", dir);
    write_text(hdr, "#define SCALE 2.0f\n");
    write_text(src, "#include \"scale.h\"\n"
                    "template <int N> __global__ void scale(float *x) { x[threadIdx.x] *= SCALE * N; }\n");
    const char *kernels[] = {"scale<3>"};
    const char *defines[] = {"UNUSED=1"};
    hn_compile_req req = {.src_path = src, .defines = defines, .n_defines = 1, .kernels = kernels,
                          .n_kernels = 1, .arch = "sm_90", .cache_dir = cache};
    hn_module_image a, b, c;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &a, NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(a.from_cache, 0);
    CHECK_STR(a.lowered[0], "_Z5scaleILi3EEvPf"); /* the template's mangled name */
    CHECK_MSG(hn_compile_cuda(&req, &b, NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(b.from_cache, 1);
    CHECK_STR(b.key, a.key);
    CHECK_STR(b.lowered[0], a.lowered[0]);
    CHECK(b.image_size == a.image_size && memcmp(a.image, b.image, a.image_size) == 0);
    CHECK_INT(b.res[0].registers, a.res[0].registers);
    write_text(hdr, "#define SCALE 3.0f\n");
    CHECK_MSG(hn_compile_cuda(&req, &c, NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.from_cache, 0);
    CHECK(strcmp(c.key, a.key) != 0);
    /* Another define is another binary. */
    hn_module_image d;
    const char *defines2[] = {"UNUSED=2"};
    req.defines = defines2;
    CHECK(hn_compile_cuda(&req, &d, NULL, &err) == 0);
    CHECK_INT(d.from_cache, 0);
    hn_module_image_free(&a);
    hn_module_image_free(&b);
    hn_module_image_free(&c);
    hn_module_image_free(&d);
    free(src);
    free(hdr);
    free(cache);
    free(dir);
}

static void test_compile_error(void) {
    char *dir = tmp_dir("nvrtc-error");
    char *src = xasprintf("%s/broken.cu", dir);
    write_text(src, "__global__ void broken(float *x) {\n"
                    "    x[0] = undefined_thing;\n"
                    "}\n");
    const char *kernels[] = {"broken"};
    hn_compile_req req = {.src_path = src, .kernels = kernels, .n_kernels = 1, .arch = "sm_90"};
    hn_module_image img;
    char *log = NULL;
    hn_err err;
    CHECK(hn_compile_cuda(&req, &img, &log, &err) != 0);
    CHECK_CONTAINS(err.msg, "broken.cu(2)");
    CHECK_CONTAINS(err.msg, "undefined_thing");
    CHECK_CONTAINS(log, "broken.cu(2)");
    char line[256];
    hn_first_error_line(log, line, sizeof line);
    CHECK_CONTAINS(line, "error");
    free(log);
    /* a host launcher in the file: NVRTC's "-default-device" advice is wrong for
     * it, the message says what to do */
    write_text(src, "__global__ void broken(float *x) { x[0] = 1.0f; }\n"
                    "void launch(float *x) { broken<<<1, 1>>>(x); }\n");
    log = NULL;
    CHECK(hn_compile_cuda(&req, &img, &log, &err) != 0);
    CHECK_CONTAINS(err.msg, "host functions are not allowed in JIT mode");
    CHECK_CONTAINS(err.msg, "put host code (a launcher, main) under #ifndef __CUDA_ARCH__");
    free(log);
    /* a define named like a name of NVRTC's built-in header (T): the variant's
     * defines come ahead of the source, after that header, so it compiles, and
     * the source sees the value (the kernel's parameter is a T *) */
    write_text(src, "__global__ void broken(T *x) { x[0] = (T)1; int line = __LINE__; x[1] = (T)line; }\n");
    const char *defs[] = {"T=float"};
    req.defines = defs;
    req.n_defines = 1;
    log = NULL;
    CHECK_MSG(hn_compile_cuda(&req, &img, &log, &err) == 0, "-DT=float: %s", err.msg);
    free(log);
    hn_module_image_free(&img);
    /* a define named like a parameter of a toolkit header the source includes
     * (cuda_fp16.hpp's "a"): the error is in that header, and the message says
     * which define to rename; an error of the source keeps its line number */
    write_text(src, "#include <cuda_fp16.h>\n__global__ void broken(float *x) { x[0] = 1.0f; }\n");
    const char *defs2[] = {"a=1"};
    req.defines = defs2;
    log = NULL;
    CHECK(hn_compile_cuda(&req, &img, &log, &err) != 0);
    CHECK_CONTAINS(err.msg, "harness: the define a (-Da=1) replaced a name in ");
    free(log);
    write_text(src, "__global__ void broken(float *x) {\n  x[0] = 1.0f;\n  x[1] = undeclared;\n}\n");
    req.defines = defs;
    log = NULL;
    CHECK(hn_compile_cuda(&req, &img, &log, &err) != 0);
    CHECK_CONTAINS(err.msg, "broken.cu(3): error: identifier \"undeclared\" is undefined");
    req.defines = NULL;
    req.n_defines = 0;
    free(log);
    /* A kernel name that does not exist. */
    write_text(src, "__global__ void present(float *x) { x[0] = 1; }\n");
    const char *missing[] = {"absent"};
    req.kernels = missing;
    CHECK(hn_compile_cuda(&req, &img, NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "absent");
    /* A bad architecture. */
    req.kernels = kernels;
    req.arch = "gfx90a";
    CHECK(hn_compile_cuda(&req, &img, NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "expected sm_XX");
    free(src);
    free(dir);
}

/* The cuBLAS baseline's pieces build and load without a GPU: the embedded im2col
 * kernel compiles, and cuBLAS (linked into the binary) answers. */
static void test_baseline_parts(void) {
    const struct hn_embedded_file *f = hn_embedded_find("baseline/conv2d_im2col.cu");
    CHECK(f != NULL);
    if (!f) return;
    const char *names[] = {"conv2d_im2col<float>", "conv2d_im2col<double>", "conv2d_f32_to_f64",
                           "conv2d_f64_to_f32", "conv2d_add_bias"};
    hn_compile_req req = {.src_path = "conv2d_im2col.cu", .source = f->data, .kernels = names, .n_kernels = 5,
                          .arch = "sm_90"};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &img, NULL, &err) == 0, "%s", err.msg);
    if (img.n_kernels) {
        CHECK(img.image_size > 0);
        CHECK_STR(img.lowered[1], "_Z13conv2d_im2colIdEvPKfPT_iiiifiixi");
        hn_module_image_free(&img);
    }
    int major = 0;
    CHECK(cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS);
    CHECK(major >= 12);
}

/* hn_cubin_max_threads reads each kernel's __launch_bounds__ from the CUBIN (x * y
 * * z, template arguments included), -1 for a kernel without; damaged images are
 * -1, never a crash */
static void test_launch_bounds(void) {
    char *dir = tmp_dir("nvrtc-bounds");
    char *src = xasprintf("%s/bounds.cu", dir);
    write_text(src, "__global__ void __launch_bounds__(192) b192(float *x) { x[threadIdx.x] = 1; }\n"
                    "__global__ void __launch_bounds__(256, 2) b256(float *x) { x[threadIdx.x] = 2; }\n"
                    "template <int T> __global__ void __launch_bounds__(T) bt(float *x) { x[threadIdx.x] = T; }\n"
                    "__global__ void none(float *x) { x[threadIdx.x] = 3; }\n");
    const char *kernels[] = {"b192", "b256", "bt<64>", "none"};
    hn_compile_req req = {.src_path = src, .kernels = kernels, .n_kernels = 4, .arch = "sm_90"};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &img, NULL, &err) == 0, "%s", err.msg);
    const int want[] = {192, 256, 64, -1};
    for (int i = 0; i < 4; i++)
        CHECK_MSG(hn_cubin_max_threads(img.image, img.image_size, img.lowered[i]) == want[i], "%s: %d", kernels[i],
                  hn_cubin_max_threads(img.image, img.image_size, img.lowered[i]));
    for (size_t cut = 0; cut < img.image_size; cut += 61) { /* truncated: never a wrong bound, no read past the
                                                               end (the tail past the sections may go) */
        const int got = hn_cubin_max_threads(img.image, cut, img.lowered[0]);
        CHECK_MSG(got == -1 || got == 192, "cut at %zu: %d", cut, got);
    }
    unsigned char *bad = xmalloc(img.image_size);
    memcpy(bad, img.image, img.image_size);
    memset(bad + 0x28, 0xff, 8); /* the section table's offset past the end */
    CHECK(hn_cubin_max_threads(bad, img.image_size, img.lowered[0]) == -1);
    CHECK(hn_cubin_max_threads("not an ELF", 10, "x") == -1);
    free(bad);
    hn_module_image_free(&img);
    free(src), free(dir);
}

int main(void) {
    test_baseline_parts();
    test_every_config_variant();
    test_cache_and_header_edit();
    test_compile_error();
    test_launch_bounds();
    return hn_test_exit();
}
