/*
 * test_emu_compile.c: the emulator's compile path: the on-disk cache (a second
 * compile loads, an edited header recompiles), unsupported constructs named at
 * compile time, compiler errors with the user's file:line (also an error inside a
 * define's expansion, which GCC puts at "<command-line>"), the parameter
 * signature of a kernel, and the rewrite of `extern __shared__` declarations
 * (unit tests of emu_source.c, then end to end in shared_decls.cu).
 */
#define _GNU_SOURCE
#include <time.h>
#include <unistd.h>

#include "emu/emu_source.h"
#include "test_emu_common.h"

static char *tmp;

static char *write_tmp(const char *name, const char *text) {
    char *p = xasprintf("%s/%s", tmp, name);
    hn_err err;
    if (hn_write_file(p, text, strlen(text), &err) != 0) emu_die("write", &err);
    return p;
}

/* Compiles `text` saved as `name` with one kernel; returns rc; fills msg+log. */
static int compile_text(const char *name, const char *text, const char *kernel, char *msg,
                        size_t size, char **log) {
    char *p = write_tmp(name, text);
    hn_module_image img;
    hn_err err;
    const char *ks[] = {kernel};
    *log = NULL;
    int rc = emu_compile_file(p, ks, 1, NULL, 0, &img, log, &err);
    snprintf(msg, size, "%s", rc ? err.msg : "");
    if (rc == 0) {
        *log = xstrdup(img.log);
        hn_module_image_free(&img);
    }
    free(p);
    return rc;
}

static void test_cache_and_headers(void) {
    char header[256];
    snprintf(header, sizeof header, "/* run %ld.%ld */\n#define ANSWER 41\n", (long)getpid(),
             (long)time(NULL));
    char *h = write_tmp("cached_helper.h", header);
    char *cu = write_tmp("cached.cu", "#include \"cached_helper.h\"\n"
                                      "__global__ void answer(int *out) { out[0] = ANSWER; }\n");
    const char *ks[] = {"answer"};
    hn_module_image a, b, c;
    hn_err err;
    char *log = NULL;
    CHECK_MSG(emu_compile_file(cu, ks, 1, NULL, 0, &a, &log, &err) == 0, "%s", err.msg);
    CHECK_INT(a.from_cache, 0);
    CHECK(a.path && hn_file_exists(a.path));
    CHECK_STR(a.lowered[0], "hn_emu_kernel_0");
    CHECK(a.log != NULL);
    CHECK(a.image == NULL);
    CHECK_MSG(emu_compile_file(cu, ks, 1, NULL, 0, &b, &log, &err) == 0, "%s", err.msg);
    CHECK_INT(b.from_cache, 1);
    CHECK_STR(a.key, b.key);
    CHECK_STR(a.path, b.path);
    /* a different define is a different module */
    const char *defs[] = {"UNUSED_FLAG=1"};
    hn_module_image d;
    CHECK_MSG(emu_compile_file(cu, ks, 1, defs, 1, &d, &log, &err) == 0, "%s", err.msg);
    CHECK(strcmp(d.key, a.key) != 0);
    hn_module_image_free(&d);
    /* editing the header recompiles, and the new value runs */
    snprintf(header, sizeof header, "/* run %ld.%ld */\n#define ANSWER 42\n", (long)getpid(),
             (long)time(NULL));
    CHECK(hn_write_file(h, header, strlen(header), &err) == 0);
    CHECK_MSG(emu_compile_file(cu, ks, 1, NULL, 0, &c, &log, &err) == 0, "%s", err.msg);
    CHECK_INT(c.from_cache, 0);
    CHECK(strcmp(c.key, a.key) != 0);
    hn_backend *be = emu_backend(1, 10);
    hn_kernel *k = emu_load(be, &c, 0);
    hn_dptr d_out = emu_buf(be, NULL, 4);
    void *args[] = {&d_out};
    int out = 0;
    CHECK_MSG(emu_launch(be, k, 1, 1, 1, 1, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, &out, d_out, 4);
    CHECK_INT(out, 42);
    be->ops->free(be, d_out);
    be->ops->kernel_free(be, k);
    hn_backend_destroy(be);
    hn_module_image_free(&a);
    hn_module_image_free(&b);
    hn_module_image_free(&c);
    free(h);
    free(cu);
}

static void test_unsupported(void) {
    static const struct {
        const char *file, *text, *kernel, *expect;
    } cases[] = {
        {"u_asm.cu",
         "__global__ void k(int *o) {\n"
         "    asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(o[0]));\n"
         "}\n",
         "k", "u_asm.cu:2: inline asm is not supported"},
        {"u_tex.cu",
         "__global__ void k(float *o, cudaTextureObject_t t) {\n"
         "    o[0] = tex2D<float>(t, 0.5f, 0.5f);\n"
         "}\n",
         "k", "tex2D is not supported"},
        {"u_wmma.cu",
         "#include <mma.h>\n"
         "using namespace nvcuda;\n"
         "__global__ void k(int *o) {\n"
         "    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> f;\n"
         "    o[0] = f.num_elements;\n"
         "}\n",
         "k", "the integer and sub-byte types (signed/unsigned char, s4, u4, b1) are not supported"},
        {"u_dynpar.cu",
         "__global__ void child(int *o) { o[0] = 1; }\n"
         "__global__ void k(int *o) {\n"
         "    child<<<1, 1>>>(o);\n"
         "}\n",
         "k", "u_dynpar.cu:3: dynamic parallelism"},
        {"u_host_launch.cu",
         "namespace ops {\n"
         "__global__ void child(int *o) { o[0] = 1; }\n"
         "void launch(int *o) { if (o) { auto go = [&] { child<<<1, 1>>>(o); }; go(); } }\n"
         "}\n"
         "__global__ void k(int *o) { o[0] = 2; }\n",
         "k", "u_host_launch.cu:3: a kernel launch <<<...>>> in host code: the harness launches the kernels"},
        {"u_shfl.cu",
         "__global__ void k(int *o) {\n"
         "    o[0] = __shfl(o[1], 0);\n"
         "}\n",
         "k", "__shfl is not supported: the non-sync warp intrinsics were removed"},
        {"u_pipeline.cu",
         "#include <cuda_pipeline.h>\n"
         "__global__ void k(int *o, unsigned long long *bar) { __pipeline_arrive_on(bar); o[0] = 1; }\n",
         "k", "__pipeline_arrive_on is not supported"},
        {"u_cluster.cu",
         "#include <cooperative_groups.h>\n"
         "__global__ void k(int *o) { o[0] = (int)cooperative_groups::this_cluster(); }\n",
         "k", "this_cluster is not supported: thread block clusters"},
        {"u_cuda_std_barrier.cu", /* <cuda/std/atomic> is supported now (hn_emu_atomic.h) */
         "#include <cuda/std/barrier>\n"
         "__global__ void k(int *o) { o[0] = 1; }\n",
         "k", "<cuda/std/barrier> is not supported (the emulator maps <cuda/std/X> to the host's"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        char msg[2048];
        char *log = NULL;
        int rc = compile_text(cases[i].file, cases[i].text, cases[i].kernel, msg, sizeof msg, &log);
        CHECK_MSG(rc != 0, "%s compiled", cases[i].file);
        hn_sb both;
        hn_sb_init(&both);
        hn_sb_addf(&both, "%s\n%s", msg, log ? log : "");
        CHECK_CONTAINS(both.buf, cases[i].expect);
        CHECK_CONTAINS(msg, cases[i].file);
        hn_sb_free(&both);
        free(log);
    }
    /* asm in an inactive #if and in a comment is fine, and so is a host launcher
     * under #ifndef __CUDA_ARCH__ */
    char msg[2048];
    char *log = NULL;
    int rc = compile_text("u_asm_off.cu",
                          "#ifndef HN_EMU\n"
                          "#define LANE(x) asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(x))\n"
                          "#endif\n"
                          "/* asm(\"...\") in a comment */\n"
                          "__global__ void k(int *o) { o[0] = 1; }\n"
                          "#ifndef __CUDA_ARCH__\n" /* host code, as the message advises */
                          "void launch(int *o) { k<<<1, 1>>>(o); }\n"
                          "#endif\n",
                          "k", msg, sizeof msg, &log);
    CHECK_MSG(rc == 0, "%s\n%s", msg, log ? log : "");
    free(log);
    /* libcu++'s <cuda/std/...> headers that have a C++17 host counterpart: cuda::std
     * is the host's std (NVRTC has libcu++ itself) */
    rc = compile_text("cuda_std.cu",
                      "#include <cuda/std/cstdint>\n"
                      "#include <cuda/std/limits>\n"
                      "#include <cuda/std/type_traits>\n"
                      "#include <cuda/std/utility>\n"
                      "#include <cuda/std/array>\n"
                      "#include <cuda/std/cmath>\n"
                      "static_assert(sizeof(cuda::std::uint64_t) == 8, \"uint64_t\");\n"
                      "static_assert(cuda::std::is_same<cuda::std::int32_t, int>::value, \"int32_t\");\n"
                      "__global__ void k(float *o) {\n"
                      "    cuda::std::array<float, 2> a{cuda::std::numeric_limits<float>::max(), 2.0f};\n"
                      "    cuda::std::swap(a[0], a[1]);\n"
                      "    o[0] = cuda::std::sqrt(a[0]);\n"
                      "}\n",
                      "k", msg, sizeof msg, &log);
    CHECK_MSG(rc == 0, "%s\n%s", msg, log ? log : "");
    free(log);
}

static void test_compile_errors(void) {
    char msg[2048];
    char *log = NULL;
    int rc = compile_text("e_syntax.cu",
                          "__global__ void k(int *o) {\n"
                          "    int x = 1\n"
                          "    o[0] = x;\n"
                          "}\n",
                          "k", msg, sizeof msg, &log);
    CHECK(rc != 0);
    CHECK_CONTAINS(msg, "e_syntax.cu");
    CHECK_CONTAINS(log, "e_syntax.cu:3"); /* gcc reports the missing ';' at the next token */
    CHECK_CONTAINS(log, "error");
    free(log);
    rc = compile_text("e_name.cu", "__global__ void k(int *o) { o[0] = 1; }\n", "not_there", msg,
                      sizeof msg, &log);
    CHECK(rc != 0);
    CHECK_CONTAINS(log, "not_there");
    free(log);
    /* a variant's define that is also a name of the source (-DT=16, template <int
     * T>): GCC reports the error at "<command-line>" and the user's line only in a
     * note; the message names the line and the macro */
    char *p = write_tmp("e_define.cu", "template <int T>\n"
                                       "__global__ void k(float *o) { o[0] = T; }\n"
                                       "template __global__ void k<16>(float *);\n");
    hn_module_image img;
    hn_err err;
    const char *ks[] = {"k<T>"}, *defs[] = {"T=16"};
    log = NULL;
    rc = emu_compile_file(p, ks, 1, defs, 1, &img, &log, &err);
    CHECK(rc != 0);
    if (rc != 0) {
        CHECK_CONTAINS(err.msg, "e_define.cu:1:");
        CHECK(strstr(err.msg, "<command-line>") == NULL);
        if (strstr(log ? log : "", "in expansion of macro")) CHECK_CONTAINS(err.msg, "the macro");
    } else {
        hn_module_image_free(&img);
    }
    free(log);
    free(p);
}

/* Defines named like the shim's template parameters (T, N, F, A, ...: a
 * variant's -DT=float, -DN=1024) must not reach inside the shim, whose
 * parameters have reserved names: a kernel that uses cooperative groups, tiles,
 * shuffles, atomics, half and vector types compiles and runs with every
 * single-letter define set, plain and instrumented (harness check). */
static void test_defines_vs_shim(void) {
    char *p = write_tmp("e_define_shim.cu",
                        "#include <cooperative_groups.h>\n"
                        "#include <cooperative_groups/reduce.h>\n"
                        "#include <cuda_fp16.h>\n"
                        "namespace cg = cooperative_groups;\n"
                        "__global__ void k(float *o, int n) {\n"
                        "    cg::thread_block b = cg::this_thread_block();\n"
                        "    cg::thread_block_tile<16> t = cg::tiled_partition<16>(b);\n"
                        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                        "    float v = i < n ? (float)i : 0.0f;\n"
                        "    float s = cg::reduce(t, v, cg::plus<float>());\n"
                        "    s += __shfl_down_sync(0xffffffffu, v, 1) * 0.0f;\n"
                        "    __half h = __float2half(s);\n"
                        "    float2 f2 = make_float2(__half2float(h), 0.0f);\n"
                        "    b.sync();\n"
                        "    if (t.thread_rank() == 0) atomicAdd(&o[0], f2.x + f2.y);\n"
                        "}\n");
    const char *ks[] = {"k"};
    const char *defs[] = {"A=1", "B=2", "C=3", "D=4", "E=5", "F=6", "G=7", "H=8", "I=9", "K=10", "L=11", "M=12",
                          "N=13", "O=14", "P=15", "R=16", "S=17", "T=float", "U=19", "V=20", "W=21", "X=22", "Y=23",
                          "Z=24", "Op=1", "Fn=2", "Size=3", "Kind=4", "Dim=5", "Mode=6", "To=7", "From=8", "Ty=9",
                          "Args=10", "ParentT=11", "Compare=12"};
    char *cache = emu_cache();
    for (int instrument = 0; instrument <= 1; instrument++) {
        hn_compile_req req = {0};
        req.src_path = p;
        req.kernels = ks;
        req.n_kernels = 1;
        req.defines = defs;
        req.n_defines = (int)HN_ARRAY_LEN(defs);
        req.cache_dir = cache;
        req.instrument = instrument ? HN_INSTRUMENT_ACCESSES : HN_INSTRUMENT_NONE;
        hn_module_image img;
        hn_err err;
        char *log = NULL;
        int rc = hn_compile_emu(&req, &img, &log, &err);
        CHECK_MSG(rc == 0, "instrument %d: every single-letter define: %s", instrument, rc ? err.msg : "");
        if (rc == 0) hn_module_image_free(&img);
        free(log);
    }
    free(cache);
    free(p);
}

static void test_param_signature(void) {
    char *path = emu_kernel_path("basic.cu");
    const char *ks[] = {"params", "scale<3>"};
    hn_module_image img;
    hn_err err;
    char *log = NULL;
    CHECK_MSG(emu_compile_file(path, ks, 2, NULL, 0, &img, &log, &err) == 0, "%s", err.msg);
    hn_backend *be = emu_backend(1, 10);
    hn_kernel *k = emu_load(be, &img, 0);
    hn_param_info p[16];
    int n = 0;
    CHECK(be->ops->kernel_params(be, k, p, 16, &n, &err) == 0);
    CHECK_INT(n, 7);
    const char kinds[] = "pifufio";
    const int sizes[] = {8, 4, 4, 1, 8, 8, 8};
    for (int i = 0; i < n && i < 7; i++) {
        CHECK_INT(p[i].kind, kinds[i]);
        CHECK_INT(p[i].size, sizes[i]);
    }
    hn_kernel *k2 = emu_load(be, &img, 1);
    CHECK(be->ops->kernel_params(be, k2, p, 16, &n, &err) == 0);
    CHECK_INT(n, 2);
    CHECK_INT(p[0].kind, 'p');
    CHECK_INT(p[1].kind, 'i');
    be->ops->kernel_free(be, k);
    be->ops->kernel_free(be, k2);
    hn_backend_destroy(be);
    hn_module_image_free(&img);
    free(path);
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_rewrite_unit(void) {
    const char *src = "namespace a { namespace b {\n"
                      "extern __shared__ float fs[];\n"
                      "} }\n"
                      "extern \"C\" { extern __shared__ int top[]; }\n"
                      "template <class T> __global__ void k(T *o) {\n"
                      "    extern __shared__\n"
                      "      __align__(16) T buf[];\n"
                      "    __shared__ int st[4];\n"
                      "    extern __shared__ volatile unsigned char *ptrs[], more[];\n"
                      "    o[0] = buf[0]; // \"extern __shared__ x[]\" in a comment stays\n"
                      "}\n";
    emu_src_rewrite rw;
    hn_err err;
    CHECK_MSG(emu_src_rewrite_shared(src, "x.cu", &rw, &err) == 0, "%s", err.msg);
    CHECK_INT(count_lines(rw.text), count_lines(src));
    CHECK_INT(rw.n_rewritten, 5);
    CHECK_INT(rw.n_fs, 2);
    if (rw.n_fs == 2) {
        CHECK_STR(rw.fs_names[0], "a::b::fs");
        CHECK_STR(rw.fs_names[1], "top");
    }
    CHECK_CONTAINS(rw.text, "static thread_local float *fs;");
    CHECK_CONTAINS(rw.text, "static thread_local int *top;");
    CHECK_CONTAINS(rw.text, "T *const buf = (T *)hn_emu_dyn_shared();");
    /* a static __shared__ array becomes storage of its own, ending at a guard page */
    CHECK_CONTAINS(rw.text, "typedef int  hn_emu_sht_8_0 [ 4 ]; static thread_local hn_emu_sht_8_0 &st = "
                            "*(hn_emu_sht_8_0 *)hn_emu_static_shared(sizeof(hn_emu_sht_8_0), "
                            "alignof(hn_emu_sht_8_0), __LINE__, __FILE__, \"st\");");
    CHECK_CONTAINS(rw.text, "volatile unsigned char **const ptrs");
    CHECK_CONTAINS(rw.text, "volatile unsigned char *const more");
    CHECK_CONTAINS(rw.text, "\"extern __shared__ x[]\" in a comment stays");
    /* the line after the two-line declaration is still line 8 */
    const char *p = rw.text;
    for (int line = 1; line < 8; line++) p = strchr(p, '\n') + 1;
    CHECK(strncmp(p, "    typedef int  hn_emu_sht_8_0", 31) == 0);
    emu_src_rewrite_free(&rw);

    CHECK(emu_src_rewrite_shared("extern __shared__ int scalar;\n", "y.cu", &rw, &err) != 0);
    CHECK_CONTAINS(err.msg, "y.cu:1");
}

/* Static __shared__ declarations of every common shape: each variable gets its
 * own storage; shapes the rewrite cannot read with certainty are left to the
 * __shared__ macro (still correct, without the guard). */
static void test_rewrite_static(void) {
    const char *src = "__shared__ float g[8];\n"                                   /* 1 file scope */
                      "template <int N, class T> __global__ void k(T *o) {\n"       /* 2 */
                      "  __shared__ __align__(16) float a[N][N + 1], b;\n"          /* 3 two, aligned */
                      "  volatile __shared__ int flag;\n"                            /* 4 qualifier first */
                      "  __shared__ typename Foo<T, N>::Storage st;\n"               /* 5 template commas */
                      "  __shared__ float (*fp)[4];\n"                               /* 6 not read: left */
                      "  __shared__ int *ptrs[2];\n"                                 /* 7 array of pointers */
                      "  static __shared__ __attribute__((aligned(32))) double d[3];\n" /* 8 */
                      "}\n";
    emu_src_rewrite rw;
    hn_err err;
    CHECK_MSG(emu_src_rewrite_shared(src, "s.cu", &rw, &err) == 0, "%s", err.msg);
    CHECK_INT(count_lines(rw.text), count_lines(src));
    CHECK_INT(rw.n_rewritten, 6);
    CHECK_CONTAINS(rw.text, "typedef float  hn_emu_sht_1_0 [ 8 ]; static thread_local hn_emu_sht_1_0 &g");
    CHECK_CONTAINS(rw.text, "typedef float  hn_emu_sht_3_0 [ N ] [ N + 1 ]; static thread_local hn_emu_sht_3_0 &a");
    CHECK_CONTAINS(rw.text, "(16) > alignof(hn_emu_sht_3_0) ? (16) : alignof(hn_emu_sht_3_0)");
    CHECK_CONTAINS(rw.text, "typedef float  hn_emu_sht_3_1 ; static thread_local hn_emu_sht_3_1 &b");
    CHECK_CONTAINS(rw.text, "typedef volatile int  hn_emu_sht_4_0 ;");
    CHECK_CONTAINS(rw.text, "typedef typename Foo < T , N > :: Storage  hn_emu_sht_5_0 ;");
    CHECK_CONTAINS(rw.text, "  __shared__ float (*fp)[4];");
    CHECK_CONTAINS(rw.text, "typedef int * hn_emu_sht_7_0 [ 2 ];");
    CHECK_CONTAINS(rw.text, "(32) > alignof(hn_emu_sht_8_0)");
    emu_src_rewrite_free(&rw);
}

static void test_rewrite_end_to_end(void) {
    char *path = emu_kernel_path("shared_decls.cu");
    const char *ks[] = {"k_ns", "k_two_lines", "k_tmpl<int>", "k_line"};
    hn_module_image img;
    hn_err err;
    char *log = NULL;
    if (emu_compile_file(path, ks, 4, NULL, 0, &img, &log, &err) != 0) {
        CHECK_MSG(0, "%s\n%s", err.msg, log ? log : "");
        free(log);
        free(path);
        return;
    }
    hn_backend *be = emu_backend(2, 10);
    hn_kernel *k[4];
    for (int i = 0; i < 4; i++) k[i] = emu_load(be, &img, i);
    float of[32];
    int oi[32];
    hn_dptr d = emu_buf(be, NULL, 32 * 8);
    void *args[] = {&d};
    CHECK_MSG(emu_launch(be, k[0], 1, 1, 1, 32, 1, 1, 32 * 4, args, &err) == 0, "%s", err.msg);
    emu_get(be, of, d, sizeof of);
    int bad = 0;
    for (int t = 0; t < 32; t++) bad += of[t] != (float)(31 - t);
    CHECK_INT(bad, 0);
    CHECK_MSG(emu_launch(be, k[1], 1, 1, 1, 32, 1, 1, 32 * 4, args, &err) == 0, "%s", err.msg);
    emu_get(be, oi, d, sizeof oi);
    bad = 0;
    for (int t = 0; t < 32; t++) bad += oi[t] != (t + 1) % 32 * 2;
    CHECK_INT(bad, 0);
    CHECK_MSG(emu_launch(be, k[2], 1, 1, 1, 32, 1, 1, 32 * 4, args, &err) == 0, "%s", err.msg);
    emu_get(be, oi, d, sizeof oi);
    bad = 0;
    for (int t = 0; t < 32; t++) bad += oi[t] != t + 1;
    CHECK_INT(bad, 0);
    CHECK_MSG(emu_launch(be, k[3], 1, 1, 1, 1, 1, 1, 0, args, &err) == 0, "%s", err.msg);
    emu_get(be, oi, d, 4);
    char *src = NULL;
    CHECK(hn_read_file(path, &src, NULL, &err) == 0);
    int line = 1;
    for (const char *q = src; *q && q < strstr(src, "// @line"); q++) line += *q == '\n';
    CHECK_INT(oi[0], line);
    free(src);
    be->ops->free(be, d);
    for (int i = 0; i < 4; i++) be->ops->kernel_free(be, k[i]);
    hn_backend_destroy(be);
    hn_module_image_free(&img);
    free(path);
}

int main(void) {
    tmp = emu_tmp_dir("emu-compile");
    test_defines_vs_shim();
    test_cache_and_headers();
    test_unsupported();
    test_compile_errors();
    test_param_signature();
    test_rewrite_unit();
    test_rewrite_static();
    test_rewrite_end_to_end();
    free(tmp);
    return hn_test_exit();
}
