/*
 * test_nvrtc_headers.c: the stand-ins NVRTC gets for the C and C++ headers it lacks
 * (harness/cuda/rtc/, docs/nvrtc_headers.md), compiled for sm_90 without a GPU:
 * every stand-in on its own, one kernel per header using what it provides
 * (tests/kernels/nvrtc/), all of them together with the toolkit's headers in either
 * order, the device assert and NDEBUG, a conv2d kernel written the way nvcc users
 * write them, and the errors that must still come through (NVRTC's message for a
 * mistake, the name of a header that exists nowhere, a user's #error, a name the
 * stand-ins leave out).
 */
#define _GNU_SOURCE
#include <string.h>

#include "compile.h"
#include "embedded.h"
#include "hn_test.h"

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

/* Compiles tests/kernels/nvrtc/<file> for sm_90, uncached, asking for `kernel`. */
static int compile_kernel(const char *file, const char *kernel, const char *const *defines,
                          int n_defines, hn_module_image *img, hn_err *err) {
    char *path = xasprintf("%s/tests/kernels/nvrtc/%s", root(), file);
    const char *kernels[] = {kernel};
    hn_compile_req req = {.src_path = path, .defines = defines, .n_defines = n_defines,
                          .kernels = kernels, .n_kernels = 1, .arch = "sm_90"};
    int rc = hn_compile_cuda(&req, img, NULL, err);
    free(path);
    return rc;
}

/* Compiles source text (named name) for sm_90, uncached, asking for `probe`. */
static int compile_source(const char *name, const char *source, hn_module_image *img, hn_err *err) {
    const char *kernels[] = {"probe"};
    hn_compile_req req = {.src_path = name, .source = source, .kernels = kernels, .n_kernels = 1,
                          .arch = "sm_90"};
    return hn_compile_cuda(&req, img, NULL, err);
}

static int image_contains(const hn_module_image *img, const char *text) {
    return img->image && memmem(img->image, img->image_size, text, strlen(text)) != NULL;
}

/* Every embedded stand-in opens with the line that says what it is, and compiles
 * when it is the only thing a kernel includes; the headers kernels commonly include
 * are all there. */
static void test_each_standin_alone(void) {
    int n = 0;
    for (const struct hn_embedded_file *f = hn_embedded_files; f->name; f++) {
        const char *name = hn_embedded_in_group(f, "rtc");
        if (!name) continue;
        n++;
        char *opening = xasprintf("/* Harness stand-in for NVRTC <%s>: ", name);
        CHECK_MSG(strncmp(f->data, opening, strlen(opening)) == 0, "%s does not open with '%s'",
                  f->name, opening);
        free(opening);
        char *src = xasprintf("#include <%s>\n__global__ void probe(int *x) { x[0] = 1; }\n", name);
        hn_module_image img;
        hn_err err;
        CHECK_MSG(compile_source("alone.cu", src, &img, &err) == 0, "<%s> alone: %s", name,
                  err.msg);
        hn_module_image_free(&img);
        free(src);
    }
    const char *expected[] = {"stdint.h", "stddef.h", "stdio.h", "assert.h", "math.h", "cmath",
                              "limits.h", "float.h", "stdbool.h", "inttypes.h", "stdlib.h",
                              "string.h", "cstdint", "cstddef", "cstdio", "climits", "cfloat",
                              "cstdlib", "cstring", "cassert", "type_traits", "limits", "utility",
                              "algorithm", "cuda.h"};
    for (size_t i = 0; i < sizeof expected / sizeof *expected; i++) {
        char *full = xasprintf("rtc/%s", expected[i]);
        CHECK_MSG(hn_embedded_find(full) != NULL, "no stand-in for <%s>", expected[i]);
        free(full);
    }
    CHECK(n >= (int)(sizeof expected / sizeof *expected));
    printf("%d stand-ins compile on their own\n", n);
}

/* One kernel per header (or C/C++ pair), using what the header provides; most
 * check values with static_assert, so a wrong constant fails the compile. */
static void test_header_kernels(void) {
    static const struct {
        const char *file, *kernel;
    } cases[] = {
        {"stdint.cu", "probe"},      {"stddef.cu", "probe"},   {"stdio.cu", "probe"},
        {"assert.cu", "probe"},      {"math.cu", "probe"},     {"math.cu", "probe_using_std"},
        {"limits_h.cu", "probe"},    {"float_h.cu", "probe"},  {"stdbool.cu", "probe"},
        {"inttypes.cu", "probe"},    {"stdlib.cu", "probe"},   {"string.cu", "probe"},
        {"type_traits.cu", "probe"}, {"habit.cu", "probe"},    {"sys_types.cu", "probe"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hn_module_image img;
        hn_err err;
        int rc = compile_kernel(cases[i].file, cases[i].kernel, NULL, 0, &img, &err);
        CHECK_MSG(rc == 0, "%s %s: %s", cases[i].file, cases[i].kernel, err.msg);
        if (rc == 0) {
            CHECK(img.image_size > 0);
            CHECK(img.res[0].registers > 0);
            hn_module_image_free(&img);
        }
    }
}

/* All stand-ins at once with <cooperative_groups.h>, <cuda_fp16.h> and
 * <cuda_runtime.h>, after them and before them. */
static void test_all_headers_with_toolkit(void) {
    const char *first[] = {"TOOLKIT_FIRST"};
    for (int order = 0; order < 2; order++) {
        hn_module_image img;
        hn_err err;
        int rc = compile_kernel("all_headers.cu", "probe", first, order, &img, &err);
        CHECK_MSG(rc == 0, "toolkit headers %s: %s", order ? "first" : "last", err.msg);
        if (rc == 0) {
            CHECK(image_contains(&img, "%f")); /* the printf made it into the image */
            hn_module_image_free(&img);
        }
    }
}

/* assert is live by default and reports the failed expression; NDEBUG on the
 * command line, or defined in the source before the include, compiles it out (NVRTC's
 * predefined assert only knew the former). */
static void test_assert_and_ndebug(void) {
    const char *probe = "hn_assert_probe";
    const char *on_command_line[] = {"NDEBUG"}, *in_source[] = {"NDEBUG_IN_SOURCE"};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(compile_kernel("assert.cu", "probe", NULL, 0, &img, &err) == 0, "%s", err.msg);
    CHECK(image_contains(&img, probe));
    CHECK(image_contains(&img, "assert.cu"));
    hn_module_image_free(&img);
    CHECK_MSG(compile_kernel("assert.cu", "probe", on_command_line, 1, &img, &err) == 0, "%s",
              err.msg);
    CHECK(img.image_size > 0 && !image_contains(&img, probe));
    hn_module_image_free(&img);
    CHECK_MSG(compile_kernel("assert.cu", "probe", in_source, 1, &img, &err) == 0, "%s", err.msg);
    CHECK(img.image_size > 0 && !image_contains(&img, probe));
    hn_module_image_free(&img);
}

/* A conv2d kernel as nvcc users write it: <stdint.h>, <stdio.h>, a helpers.h beside
 * it that insists on ACCUM_DTYPE and has printing helpers under DEBUG, a trailing
 * debug_counter under SINGLE_BLOCK, `extern __shared__` mid-function. */
static void test_user_conv2d(void) {
    const char *plain[] = {"ACCUM_DTYPE=float"};
    const char *debug[] = {"ACCUM_DTYPE=double", "DEBUG", "SINGLE_BLOCK"};
    const char *file = "conv2d_user/conv2d_user.cu";
    hn_module_image a, b;
    hn_err err;
    CHECK_MSG(compile_kernel(file, "conv2d_user", plain, 1, &a, &err) == 0, "%s", err.msg);
    CHECK_MSG(compile_kernel(file, "conv2d_user", debug, 3, &b, &err) == 0, "%s", err.msg);
    if (a.n_kernels && b.n_kernels) {
        CHECK_STR(a.lowered[0], "_Z11conv2d_userPKfPfS0_iiiiif");
        CHECK_STR(b.lowered[0], "_Z11conv2d_userPKfPfS0_iiiiifPi"); /* + int *debug_counter */
        CHECK(!image_contains(&a, "(%d x %d), block"));
        CHECK(image_contains(&b, "(%d x %d), block")); /* print_tile's format */
    }
    hn_module_image_free(&a);
    hn_module_image_free(&b);
    /* helpers.h's #error comes through when ACCUM_DTYPE is missing. */
    CHECK(compile_kernel(file, "conv2d_user", NULL, 0, &a, &err) != 0);
    CHECK_CONTAINS(err.msg, "helpers.h(9)");
    CHECK_CONTAINS(err.msg, "ACCUM_DTYPE must be defined");
}

/* The stand-ins swallow no errors. */
static void test_errors_come_through(void) {
    hn_module_image img;
    hn_err err;
    CHECK(compile_kernel("invalid.cu", "probe", NULL, 0, &img, &err) != 0);
    CHECK_CONTAINS(err.msg, "invalid.cu(8)");
    CHECK_CONTAINS(err.msg, "cannot be used to initialize an entity of type \"uint32_t\"");

    CHECK(compile_kernel("missing_header.cu", "probe", NULL, 0, &img, &err) != 0);
    CHECK_CONTAINS(err.msg, "missing_header.cu(3)");
    CHECK_CONTAINS(err.msg, "cannot open source file \"hn_no_such_header.h\"");

    /* What a stand-in leaves out (strlen has no device function) is NVRTC's error. */
    CHECK(compile_source("left_out.cu",
                         "#include <string.h>\n"
                         "__global__ void probe(int *x) { x[0] = (int)strlen(\"abc\"); }\n",
                         &img, &err) != 0);
    CHECK_CONTAINS(err.msg, "identifier \"strlen\" is undefined");
}

int main(void) {
    test_each_standin_alone();
    test_header_kernels();
    test_all_headers_with_toolkit();
    test_assert_and_ndebug();
    test_user_conv2d();
    test_errors_come_through();
    return hn_test_exit();
}
