/*
 * test_cuda_backend.c: the CUDA backend on a real GPU (skipped, exit 77, on a
 * machine without one): device limits, memory round trips, the conv2d variants
 * against the fp64 reference on small and odd sizes, launch-limit messages,
 * dynamic shared memory above 48 KB, events, the clock probe, and every
 * baseline (cuBLAS; cuDNN's convolution, its gradients, pooling and pooling
 * backward, where cuDNN is installed) on small cases and every layout, and
 * module variables (symbol_write; two kernels of one image share a module).
 */
#include <math.h>
#include <unistd.h>

#include "hn_test.h"
#include "run.h"
#include "sweep.h"

static const char *root(void) {
    const char *r = getenv("HARNESS_ROOT");
    return r ? r : HN_SOURCE_DIR;
}

static hn_backend *be;
static hn_device_info dev;

static void test_device_and_memory(void) {
    CHECK(dev.cc_major >= 5);
    CHECK(dev.sm_count > 0);
    CHECK(dev.max_threads_per_block >= 1024);
    CHECK(dev.shared_per_block >= 48 * 1024);
    CHECK(dev.l2_bytes > 0);
    CHECK(dev.sm_clock_khz > 0);
    printf("device: %s %s, %d SMs, L2 %zu, SM clock %d kHz, memory %d kHz x %d bit\n", dev.name, dev.arch,
           dev.sm_count, dev.l2_bytes, dev.sm_clock_khz, dev.mem_clock_khz, dev.mem_bus_width);
    hn_err err;
    hn_dptr p;
    float in[1000], out[1000];
    for (int i = 0; i < 1000; i++) in[i] = (float)i * 0.25f;
    CHECK(be->ops->alloc(be, sizeof in, &p, &err) == 0);
    CHECK(be->ops->upload(be, p, in, sizeof in, &err) == 0);
    CHECK(be->ops->download(be, out, p, sizeof out, &err) == 0);
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK(be->ops->fill(be, p, 0xFF, sizeof in, &err) == 0);
    CHECK(be->ops->download(be, out, p, sizeof out, &err) == 0);
    CHECK(isnan(out[0]) && isnan(out[999]));
    be->ops->free(be, p);
    double mhz = 0;
    CHECK_MSG(be->ops->sm_clock(be, &mhz, &err) == 0, "%s", err.msg);
    printf("clock probe: %.0f MHz (default %d MHz)\n", mhz, dev.sm_clock_khz / 1000);
    CHECK(mhz > 100 && mhz < 5000);
}

/* Every baseline of p's operator on workload w, through its own interface:
 * open, prepare, issue, and the check on the outputs it declares. Where cuDNN
 * is not installed its baselines cannot open: said, not failed. With
 * may_decline, a baseline may refuse the case in prepare (a layout it does not
 * take): said, not failed. */
static void check_baselines(const hn_plan *p, hn_workload *w, const char *label, int may_decline) {
    hn_err err;
    for (int b = 0; b < p->op->n_baselines; b++) {
        const hn_op_baseline *bl = &p->op->baselines[b];
        void *state = bl->open(be, &dev, &err);
        if (!state && strcmp(bl->family, "cudnn") == 0 && strstr(err.msg, "cuDNN not found")) {
            printf("%s: %s\n", bl->name, err.msg);
            continue;
        }
        CHECK_MSG(state != NULL, "%s: %s", bl->name, err.msg);
        if (!state) continue;
        char what[256] = "";
        if (bl->prepare(state, w, what, sizeof what, &err) != 0) {
            CHECK_MSG(may_decline, "%s on %s: %s", bl->name, label, err.msg);
            printf("%s on %s: declined: %s\n", bl->name, label, err.msg);
        } else {
            CHECK(hn_poison_outputs(w, 0, &err) == 0);
            CHECK_MSG(bl->issue(state, &err) == 0 && be->ops->sync(be, &err) == 0, "%s: %s", bl->name, err.msg);
            hn_row_check rc;
            CHECK(hn_check_outputs(w, NULL, bl, &rc, &err) == 0);
            CHECK_MSG(rc.passed, "%s (%s) on %s: %.4f match, max abs err %g", bl->name, what, label,
                      rc.worst.match_fraction, rc.worst.max_abs_err);
            printf("%s on %s: %s\n", bl->name, label, what);
        }
        bl->release(state);
        bl->close(state);
    }
}

/* The baselines of an operator on the cases `assign` of a config's plan (every
 * layout, for those that take them). */
static void test_baselines_of(const char *config, const char *const *assign, int n, int may_decline) {
    char *path = xasprintf("%s/configs/%s", root(), config);
    hn_plan *p;
    hn_err err;
    CHECK_MSG(hn_plan_load(path, -1, &p, &err) == 0, "%s", err.msg);
    free(path);
    if (!p) return;
    for (int i = 0; i < n; i++) {
        hn_case c;
        CHECK_MSG(hn_plan_make_case(p, assign[i], &c, &err) == 0, "%s: %s", assign[i], err.msg);
        hn_workload w;
        if (hn_workload_create(&w, p, &c, be, 1e9, &err) != 0) {
            CHECK_MSG(0, "%s: %s", assign[i], err.msg);
        } else {
            check_baselines(p, &w, assign[i], may_decline);
            hn_workload_free(&w);
        }
        hn_case_release(&c);
    }
    hn_plan_free(p);
}

/* The cuDNN baselines beyond conv2d_sweep's cases: convolution in NHWC (CHWN
 * and, for cuBLAS, NHWC declined), with a batch and a bias; pooling forward in
 * every layout (checked on `out` alone: cuDNN gives no argmax) and backward;
 * conv2d's gradients. */
static void test_more_baselines(void) {
    const char *conv[] = {"layout=NCHW,n=8,in_ch=3,out_ch=32,filter_size=3,img_size=32",
                          "layout=NHWC,n=8,in_ch=32,out_ch=32,filter_size=3,img_size=33",
                          "layout=CHWN,n=1,in_ch=3,out_ch=32,filter_size=3,img_size=32"};
    test_baselines_of("conv2d_layouts.json", conv, (int)HN_ARRAY_LEN(conv), 1);
    const char *pool[] = {"layout=NCHW,n=2,channels=16,img_size=31,k=2,mode=max",
                          "layout=NHWC,n=2,channels=16,img_size=31,k=3,mode=avg",
                          "layout=CHWN,n=4,channels=16,img_size=64,k=2,mode=max",
                          "layout=CHWN,n=1,channels=16,img_size=31,k=3,mode=avg"};
    test_baselines_of("pool2d_layouts.json", pool, (int)HN_ARRAY_LEN(pool), 0);
    const char *bwd[] = {"n=2,channels=3,h=7,w=9,k=2,mode=max", "n=3,channels=16,h=65,w=64,k=3,mode=avg",
                         "n=1,channels=1,h=1,w=1,k=1,mode=max", "n=2,channels=16,h=32,w=31,k=5,mode=max"};
    test_baselines_of("pool2d_backward_sweep.json", bwd, (int)HN_ARRAY_LEN(bwd), 0);

    /* conv2d's gradients, float and double: cases cuDNN poses (odd sizes, 1-sized
     * dimensions, "same" with odd filters, explicit padding; for the filter a pad
     * value other than 0, with and without padded pixels), then "same" with even
     * filters, which data and filter decline (asymmetric padding) and bias takes. */
    const char *data[] = {"n=2,in_ch=3,out_ch=5,filter_size=3,h=7,w=16,padding=-1",
                          "n=3,in_ch=8,out_ch=16,filter_size=5,h=19,w=33,padding=1",
                          "n=1,in_ch=1,out_ch=1,filter_size=1,h=1,w=3,padding=0",
                          "n=2,in_ch=32,out_ch=64,filter_size=3,h=40,w=128,padding=3"};
    test_baselines_of("conv2d_backward_data_sweep.json", data, (int)HN_ARRAY_LEN(data), 0);
    const char *filter[] = {"n=2,in_ch=3,out_ch=5,filter_size=3,h=7,w=16,padding=-1,pad=0",
                            "n=3,in_ch=8,out_ch=16,filter_size=5,h=19,w=33,padding=1,pad=-0.75",
                            "n=2,in_ch=3,out_ch=5,filter_size=3,h=7,w=16,padding=-1,pad=-0.75",
                            "n=1,in_ch=1,out_ch=1,filter_size=1,h=1,w=3,padding=0,pad=-0.75",
                            "n=2,in_ch=24,out_ch=32,filter_size=3,h=40,w=128,padding=3,pad=0"};
    test_baselines_of("conv2d_backward_filter_sweep.json", filter, (int)HN_ARRAY_LEN(filter), 0);
    const char *bias[] = {"n=2,out_ch=5,filter_size=3,h=7,w=16,padding=-1",
                          "n=5,out_ch=64,filter_size=2,h=64,w=100,padding=-1",
                          "n=1,out_ch=1,filter_size=5,h=7,w=3,padding=2"};
    test_baselines_of("conv2d_backward_bias_sweep.json", bias, (int)HN_ARRAY_LEN(bias), 0);
    const char *even_data[] = {"n=2,in_ch=3,out_ch=5,filter_size=2,h=7,w=16,padding=-1"};
    test_baselines_of("conv2d_backward_data_sweep.json", even_data, 1, 1);
    const char *even_filter[] = {"n=2,in_ch=3,out_ch=5,filter_size=4,h=7,w=16,padding=-1,pad=0"};
    test_baselines_of("conv2d_backward_filter_sweep.json", even_filter, 1, 1);
}

/* Every variant of conv2d_sweep.json on small and odd sizes. */
static void test_conv2d_variants(void) {
    char *path = xasprintf("%s/configs/conv2d_sweep.json", root());
    hn_plan *p;
    hn_err err;
    CHECK_MSG(hn_plan_load(path, -1, &p, &err) == 0, "%s", err.msg);
    free(path);
    if (!p) return;
    const char *cases[] = {"in_ch=1,out_ch=1,filter_size=1,img_size=1", "in_ch=3,out_ch=2,filter_size=3,img_size=17",
                           "in_ch=5,out_ch=7,filter_size=5,img_size=33", "in_ch=2,out_ch=3,filter_size=9,img_size=40",
                           "in_ch=37,out_ch=19,filter_size=3,img_size=31"};
    for (size_t ci = 0; ci < HN_ARRAY_LEN(cases); ci++) {
        hn_case c;
        CHECK(hn_plan_make_case(p, cases[ci], &c, &err) == 0);
        hn_workload w;
        CHECK_MSG(hn_workload_create(&w, p, &c, be, 1e9, &err) == 0, "%s", err.msg);
        for (int v = 0; v < p->n_variants; v++) {
            const char *failed;
            double params[HN_MAX_PARAMS];
            hn_plan_case_params(p, &c, params, &err);
            if (hn_sweep_variant_applies(p, &p->variants[v], &c, params, &failed, &err) != 1) continue;
            hn_build b;
            hn_build_init(&b, p, &p->variants[v], NULL, 0, dev.arch, NULL);
            hn_module_image img;
            CHECK_MSG(hn_compile_cuda(&b.req, &img, NULL, &err) == 0, "%s", err.msg);
            hn_kernel *k;
            CHECK_MSG(be->ops->kernel_load(be, &img, 0, &k, &err) == 0, "%s", err.msg);
            CHECK_MSG(hn_check_signature(p, &p->variants[v], 0, be, k, 0, &err) == 0, "%s", err.msg);
            hn_launch_dims d;
            CHECK(hn_eval_geometry(p, &p->variants[v], 0, &w, &d, &err) == 0);
            hn_argval vals[16];
            void *args[16];
            int n;
            CHECK(hn_pack_args(p, &p->variants[v], 0, &w, 0, 0, vals, args, &n, &err) == 0);
            CHECK(hn_poison_outputs(&w, 0, &err) == 0);
            CHECK_MSG(be->ops->launch(be, k, &d, args, &err) == 0 && be->ops->sync(be, &err) == 0, "%s", err.msg);
            hn_row_check rc;
            CHECK(hn_check_outputs(&w, &p->variants[v], NULL, &rc, &err) == 0);
            CHECK_MSG(rc.passed && rc.worst.match_fraction == 1.0, "%s on %s: %.4f match, max abs err %g",
                      p->variants[v].label, cases[ci], rc.worst.match_fraction, rc.worst.max_abs_err);
            be->ops->kernel_free(be, k);
            hn_module_image_free(&img);
            hn_build_free(&b);
        }
        check_baselines(p, &w, cases[ci], 0);
        hn_workload_free(&w);
        hn_case_release(&c);
    }
    hn_plan_free(p);
}

static void test_limits_and_shared(void) {
    const char *src = "extern \"C\" __global__ void big(float *x, int n) {\n"
                      "    extern __shared__ float s[];\n"
                      "    for (int i = threadIdx.x; i < n; i += blockDim.x) s[i] = i;\n"
                      "    __syncthreads();\n"
                      "    if (threadIdx.x == 0) x[0] = s[n - 1];\n"
                      "}\n";
    const char *names[] = {"big"};
    hn_compile_req req = {.src_path = "big.cu", .source = src, .kernels = names, .n_kernels = 1, .arch = dev.arch};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &img, NULL, &err) == 0, "%s", err.msg);
    hn_kernel *k;
    CHECK(be->ops->kernel_load(be, &img, 0, &k, &err) == 0);
    hn_dptr x;
    be->ops->alloc(be, 4, &x, &err);
    int n = 0;
    void *args[] = {&x, &n};
    hn_launch_dims d = {{1, 1, 1}, {32, 32, 2}, 0};
    CHECK(be->ops->launch(be, k, &d, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "2048 threads exceeds");
    d = (hn_launch_dims){{1, 1, 1}, {2048, 1, 1}, 0};
    CHECK(be->ops->launch(be, k, &d, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "block x = 2048 exceeds the device's limit");
    d = (hn_launch_dims){{1, 1, 70000}, {32, 1, 1}, 0};
    CHECK(be->ops->launch(be, k, &d, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "grid z = 70000 exceeds");
    d = (hn_launch_dims){{1, 1, 1}, {128, 1, 1}, dev.shared_per_block_optin + 1};
    CHECK(be->ops->launch(be, k, &d, args, &err) != 0);
    CHECK_CONTAINS(err.msg, "shared memory");
    /* Above 48 KB needs the opt-in, which the backend does. */
    if (dev.shared_per_block_optin >= 100 * 1024) {
        n = 100 * 1024 / 4;
        d = (hn_launch_dims){{1, 1, 1}, {256, 1, 1}, 100 * 1024};
        CHECK_MSG(be->ops->launch(be, k, &d, args, &err) == 0 && be->ops->sync(be, &err) == 0, "%s", err.msg);
        float v = 0;
        be->ops->download(be, &v, x, 4, &err);
        CHECK_NEAR(v, n - 1, 0);
    }
    /* Events measure something. */
    hn_event *e0, *e1;
    be->ops->event_create(be, &e0, &err);
    be->ops->event_create(be, &e1, &err);
    n = 1024;
    d = (hn_launch_dims){{1, 1, 1}, {32, 1, 1}, 4096};
    be->ops->event_record(be, e0, &err);
    be->ops->launch(be, k, &d, args, &err);
    be->ops->event_record(be, e1, &err);
    float ms = -1;
    CHECK(be->ops->event_elapsed(be, e0, e1, &ms, &err) == 0);
    CHECK(ms >= 0 && ms < 1000);
    be->ops->event_destroy(be, e0);
    be->ops->event_destroy(be, e1);
    be->ops->free(be, x);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
}

/* Module variables: symbol_write into a __constant__ array (the rest zeroed, a
 * larger write refused) and a namespaced __device__ scalar, and two kernels of
 * one image sharing one module (what the first writes the second reads). */
static void test_module_variables(void) {
    const char *src = "__constant__ float c_f[4];\n"
                      "namespace ns { __device__ int g_n; }\n"
                      "__global__ void publish(int n) { ns::g_n = n + (int)c_f[1] + (int)c_f[3]; }\n"
                      "__global__ void read_back(int *out) { out[0] = ns::g_n; }\n";
    const char *names[] = {"publish", "read_back"}, *syms[] = {"c_f", "ns::g_n"};
    hn_compile_req req = {.src_path = "vars.cu", .source = src, .kernels = names, .n_kernels = 2, .arch = dev.arch,
                          .symbols = syms, .n_symbols = 2};
    hn_module_image img;
    hn_err err;
    CHECK_MSG(hn_compile_cuda(&req, &img, NULL, &err) == 0, "%s", err.msg);
    CHECK(img.n_symbols == 2);
    hn_kernel *k[2] = {NULL, NULL};
    CHECK_MSG(be->ops->kernel_load(be, &img, 0, &k[0], &err) == 0 && be->ops->kernel_load(be, &img, 1, &k[1], &err) == 0,
              "%s", err.msg);
    const float four[4] = {1, 2, 3, 4}, two[2] = {10, 20};
    size_t size = 0;
    CHECK_MSG(be->ops->symbol_write(be, k[0], img.sym_lowered[0], four, sizeof four, &size, &err) == 0, "%s", err.msg);
    CHECK(size == 16);
    /* a shorter write leaves zeros past it: c_f = {10, 20, 0, 0} */
    CHECK_MSG(be->ops->symbol_write(be, k[0], img.sym_lowered[0], two, sizeof two, &size, &err) == 0, "%s", err.msg);
    const float five[5] = {0};
    CHECK(be->ops->symbol_write(be, k[0], img.sym_lowered[0], five, sizeof five, &size, &err) != 0);
    CHECK_CONTAINS(err.msg, "20 bytes given for a variable of 16 bytes");
    hn_dptr out;
    CHECK(be->ops->alloc(be, 4, &out, &err) == 0);
    int n = 100;
    void *a0[] = {&n}, *a1[] = {&out};
    hn_launch_dims d = {{1, 1, 1}, {1, 1, 1}, 0};
    CHECK_MSG(be->ops->launch(be, k[0], &d, a0, &err) == 0 && be->ops->launch(be, k[1], &d, a1, &err) == 0 &&
                  be->ops->sync(be, &err) == 0,
              "%s", err.msg);
    int got = -1;
    be->ops->download(be, &got, out, 4, &err);
    CHECK_MSG(got == 120, "read_back saw %d (expected 100 + 20 + 0: one module for both kernels)", got);
    be->ops->free(be, out);
    be->ops->kernel_free(be, k[0]);
    be->ops->kernel_free(be, k[1]);
    hn_module_image_free(&img);
}

int main(void) {
    char why[512];
    if (!hn_cuda_available(why, sizeof why)) {
        printf("skipped: no GPU (%s)\n", why);
        return 77;
    }
    hn_err err;
    if (hn_backend_cuda_create(NULL, &be, &err) != 0) {
        fprintf(stderr, "cuda backend: %s\n", err.msg);
        return 1;
    }
    be->ops->device_info(be, &dev);
    test_device_and_memory();
    test_conv2d_variants();
    test_more_baselines();
    test_limits_and_shared();
    test_module_variables();
    hn_backend_destroy(be);
    return hn_test_exit();
}
