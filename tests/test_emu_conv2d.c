/*
 * test_emu_conv2d.c: the four kernels/conv2d variants on the CPU emulator,
 * against a double-precision CPU reference on a size that is not a multiple of
 * the tile; again with SINGLE_BLOCK (blocks spin on a global counter, here on
 * two workers, so the linear hand-out order is what keeps them going); and with
 * DEBUG + SINGLE_BLOCK, whose printf output must come out block by block in
 * linear order. Fails when kernels/conv2d is not there.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>

#include "test_emu_common.h"

static const char *const variants[] = {"conv2d_pad", "conv2d_pad_z_out", "conv2d_pad_z_out_shared",
                                       "conv2d_pad_z_out_shared_halo"};

enum { IN_CH = 3, OUT_CH = 2, H = 19, W = 23, T = 8 };

static void reference(double *out, const float *in, const float *f, int fs, float pad) {
    int r = (fs - 1) / 2;
    for (int o = 0; o < OUT_CH; o++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double acc = 0;
                for (int c = 0; c < IN_CH; c++)
                    for (int p = 0; p < fs; p++)
                        for (int q = 0; q < fs; q++) {
                            int yy = y + p - r, xx = x + q - r;
                            double v = yy >= 0 && yy < H && xx >= 0 && xx < W
                                           ? in[(c * H + yy) * W + xx]
                                           : pad;
                            acc += v * f[((o * IN_CH + c) * fs + p) * fs + q];
                        }
                out[(o * H + y) * W + x] = acc;
            }
}

static hn_launch_dims geometry(int v, int fs) {
    int tile = v == 3 ? T - fs + 1 : T;
    hn_launch_dims d = {{(unsigned)((W + tile - 1) / tile), (unsigned)((H + tile - 1) / tile),
                         v == 0 ? 1u : (unsigned)OUT_CH},
                        {T, T, 1},
                        v >= 2 ? (size_t)T * T * 4 : 0};
    return d;
}

/* Runs variant v with the given extra defines; checks the output. With
 * `single`, passes a zeroed debug counter and checks it counted every block. */
static void run_variant(hn_backend *be, int v, int fs, int single, int debug, const char *capture) {
    char *path = xasprintf("%s/kernels/conv2d/%s.cu", emu_root(), variants[v]);
    char tile[32];
    snprintf(tile, sizeof tile, "TILE_SIZE=%d", T);
    const char *defs[4] = {tile, "ACCUM_DTYPE=float"};
    int nd = 2;
    if (single) defs[nd++] = "SINGLE_BLOCK";
    if (debug) defs[nd++] = "DEBUG";
    hn_module_image img;
    hn_err err;
    char *log = NULL;
    if (emu_compile_file(path, &variants[v], 1, defs, nd, &img, &log, &err) != 0) {
        CHECK_MSG(0, "%s: %s\n%s", variants[v], err.msg, log ? log : "");
        free(log);
        free(path);
        return;
    }
    hn_kernel *k = emu_load(be, &img, 0);
    size_t n_in = IN_CH * H * W, n_f = (size_t)OUT_CH * IN_CH * fs * fs, n_out = OUT_CH * H * W;
    float *in = xmalloc(n_in * 4), *f = xmalloc(n_f * 4), *out = xmalloc(n_out * 4);
    double *ref = xmalloc(n_out * 8);
    uint64_t seed = (uint64_t)(v * 100 + fs);
    for (size_t i = 0; i < n_in; i++) in[i] = (float)(hn_rand_unit(&seed) * 2 - 1);
    for (size_t i = 0; i < n_f; i++) f[i] = (float)(hn_rand_unit(&seed) * 2 - 1);
    float pad = 0.25f;
    reference(ref, in, f, fs, pad);
    hn_dptr d_in = emu_buf(be, in, n_in * 4), d_f = emu_buf(be, f, n_f * 4),
            d_out = emu_buf(be, NULL, n_out * 4), d_cnt = emu_buf(be, NULL, 4);
    int h = H, w = W, ic = IN_CH, oc = OUT_CH, fsz = fs;
    void *args[] = {&d_in, &d_out, &d_f, &h, &w, &ic, &oc, &fsz, &pad, &d_cnt};
    hn_launch_dims d = geometry(v, fs);
    int saved = -1;
    if (capture) {
        fflush(stdout);
        saved = dup(1);
        int fd = open(capture, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        dup2(fd, 1);
        close(fd);
    }
    int rc = be->ops->launch(be, k, &d, args, &err);
    if (capture) {
        fflush(stdout);
        dup2(saved, 1);
        close(saved);
    }
    CHECK_MSG(rc == 0, "%s fs=%d single=%d: %s", variants[v], fs, single, err.msg);
    emu_get(be, out, d_out, n_out * 4);
    int bad = 0;
    for (size_t i = 0; i < n_out; i++)
        if (fabs(out[i] - ref[i]) > 1e-4 + 1e-4 * fabs(ref[i])) bad++;
    CHECK_MSG(bad == 0, "%s fs=%d single=%d: %d of %zu outputs wrong", variants[v], fs, single, bad,
              n_out);
    if (single) {
        int cnt = 0;
        emu_get(be, &cnt, d_cnt, 4);
        CHECK_INT(cnt, (int)(d.grid[0] * d.grid[1] * d.grid[2]));
    }
    be->ops->free(be, d_in);
    be->ops->free(be, d_f);
    be->ops->free(be, d_out);
    be->ops->free(be, d_cnt);
    be->ops->kernel_free(be, k);
    hn_module_image_free(&img);
    free(in);
    free(f);
    free(out);
    free(ref);
    free(path);
}

/* The DEBUG output of every block starts with "block (x,y,z) of (gx,gy,gz)";
 * under SINGLE_BLOCK those lines must appear in increasing linear order. */
static void check_block_order(const char *path, const hn_launch_dims *d) {
    char *text = NULL;
    hn_err err;
    if (hn_read_file(path, &text, NULL, &err) != 0) {
        CHECK_MSG(0, "%s", err.msg);
        return;
    }
    long last = -1, seen = 0;
    int ordered = 1;
    for (const char *p = text; (p = strstr(p, "block (")) != NULL; p++) {
        unsigned x, y, z, gx, gy, gz;
        if (sscanf(p, "block (%u,%u,%u) of (%u,%u,%u)", &x, &y, &z, &gx, &gy, &gz) != 6) continue;
        long id = ((long)z * gy + y) * gx + x;
        if (id <= last) ordered = 0;
        last = id;
        seen++;
    }
    CHECK_MSG(ordered, "DEBUG output not in linear block order");
    CHECK_INT(seen, (long)d->grid[0] * d->grid[1] * d->grid[2]);
    free(text);
}

int main(void) {
    char *probe = xasprintf("%s/kernels/conv2d/conv2d_pad.cu", emu_root());
    if (!hn_file_exists(probe)) {
        fprintf(stderr, "FAIL: %s not found (HARNESS_ROOT must be the source tree)\n", probe);
        free(probe);
        return 1;
    }
    free(probe);
    hn_backend *be = emu_backend(2, 60.0);
    for (int v = 0; v < 4; v++)
        for (int fs = 3; fs <= 5; fs += 2) {
            run_variant(be, v, fs, 0, 0, NULL);
            run_variant(be, v, fs, 1, 0, NULL);
        }
    char *dir = emu_tmp_dir("emu-conv2d");
    char *cap = xasprintf("%s/debug.txt", dir);
    for (int v = 0; v < 4; v++) {
        run_variant(be, v, 3, 1, 1, cap);
        hn_launch_dims d = geometry(v, 3);
        check_block_order(cap, &d);
    }
    free(cap);
    free(dir);
    hn_backend_destroy(be);
    return hn_test_exit();
}
