/*
 * test_plot.c: `harness plot` (harness/plot.c): the table as cases x variants,
 * the sort and the faster/slower split, the marks, the data files handed to
 * gnuplot, and (when gnuplot is installed) the charts themselves: PNG and SVG
 * files of the expected size, --all, bad input.
 *
 * tests/fixtures/conv2d_small.csv: 6 cases x 3 kernels + the cuBLAS baseline on
 * an H200. conv2d_pad's median times, by case: 0.09739, 2.557, launch_error,
 * 0.114, 3.981, 0.1253 ms; so sorted by conv2d_pad the cases go 0 3 5 | 1 4 2
 * (no time last). conv2d_pad_z_out mismatches in case 4; the halo kernel
 * (TILE_SIZE=8) is skipped in cases 2 and 5 (filter 9).
 * tests/fixtures/accum_dtype.csv: the CPU emulator, no peaks: no roofline.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <unistd.h>

#include "hn_test.h"
#include "plot.h"

#define HN_TEST_SCRATCH "plot"
#include "hn_test_files.h"

static int load(const char *name, hn_table *t) {
    char *path = hn_test_fixture(name);
    hn_err err;
    int rc = hn_table_load(path, t, &err);
    if (rc != 0) fprintf(stderr, "%s\n", err.msg);
    free(path);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* data, without gnuplot */

static void test_marks(void) {
    CHECK_INT(hn_plot_mark_of("ok", 1), HN_MARK_OK);
    CHECK_INT(hn_plot_mark_of("ok", 0), HN_MARK_FAILED);
    CHECK_INT(hn_plot_mark_of("mismatch", 1), HN_MARK_MISMATCH);
    CHECK_INT(hn_plot_mark_of("compile_error", 0), HN_MARK_FAILED);
    CHECK_INT(hn_plot_mark_of("launch_error", 0), HN_MARK_FAILED);
    CHECK_INT(hn_plot_mark_of("skipped", 0), HN_MARK_SKIPPED);
    CHECK_INT(hn_plot_mark_of("something_new", 1), HN_MARK_FAILED);
    CHECK_STR(hn_plot_mark_name(HN_MARK_MISMATCH), "mismatch");
    CHECK_STR(hn_plot_mark_name(HN_MARK_NONE), "none");
    CHECK(isnan(hn_plot_num("")));
    CHECK(isnan(hn_plot_num("abc")));
    CHECK(isnan(hn_plot_num("1.5x")));
    CHECK_NEAR(hn_plot_num("1.5e-3"), 1.5e-3, 0);
}

static const char *const LABELS[6] = {
    "256x256x3 -> 32, f:3x3", "128x128x32 -> 128, f:5x5", "64x64x128 -> 512, f:9x9",
    "1024x1024x8 -> 8, f:1x1", "128x128x512 -> 32, f:3x3", "512x512x1 -> 4, f:9x9"};

static void test_data(void) {
    hn_table t;
    if (load("conv2d_small.csv", &t) != 0) {
        CHECK(0);
        return;
    }
    hn_plot_data d;
    hn_err err;
    CHECK_MSG(hn_plot_data_build(&d, &t, NULL, NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(d.n_cases, 6);
    CHECK_INT(d.n_shown, 6);
    CHECK_INT(d.n_variants, 4);
    CHECK_STR(d.variants[0], "conv2d_pad");
    CHECK_STR(d.variants[1], "conv2d_pad_z_out");
    CHECK_STR(d.variants[2], "conv2d_pad_z_out_shared_halo");
    CHECK_STR(d.variants[3], "cublas_im2col_sgemm"); /* first in the file, moved last */
    CHECK_STR(d.sort_name, "conv2d_pad");            /* not the baseline */
    CHECK(d.sort_is_variant);
    CHECK_INT(d.baseline, 3);
    for (int c = 0; c < 6; c++) CHECK_STR(d.labels[c], LABELS[c]);
    const int order[6] = {0, 3, 5, 1, 4, 2};
    for (int i = 0; i < 6; i++) CHECK_INT(d.order[i], order[i]);
    CHECK_INT(d.split, 3);
    CHECK_INT(hn_plot_cell_at(&d, 4, 1)->mark, HN_MARK_MISMATCH);
    CHECK_NEAR(hn_plot_cell_at(&d, 4, 1)->ms, 1.708, 0);
    CHECK_INT(hn_plot_cell_at(&d, 2, 0)->mark, HN_MARK_FAILED);
    CHECK(isnan(hn_plot_cell_at(&d, 2, 0)->ms));
    CHECK_INT(hn_plot_cell_at(&d, 2, 2)->mark, HN_MARK_SKIPPED);
    CHECK_INT(hn_plot_cell_at(&d, 5, 2)->mark, HN_MARK_SKIPPED);
    CHECK_NEAR(hn_plot_cell_at(&d, 0, 0)->q1, 0.09681, 1e-12);
    CHECK_INT(d.n_marks[HN_MARK_OK], 20);
    CHECK_INT(d.n_marks[HN_MARK_MISMATCH], 1);
    CHECK_INT(d.n_marks[HN_MARK_FAILED], 1);
    CHECK_INT(d.n_marks[HN_MARK_SKIPPED], 2);
    CHECK_STR(d.device, "NVIDIA H200");
    CHECK_STR(d.backend, "cuda");

    /* The main chart: two halves, the cases in sorted order, marks kept. */
    hn_plot_bars b;
    CHECK(hn_plot_times_chart(&d, "conv2d_small", 0, &b, &err) == 0);
    CHECK_INT(b.n_panels, 2);
    CHECK_INT(b.n_series, 4);
    CHECK_INT(b.color[3], 0); /* cuBLAS in grey */
    CHECK_CONTAINS(b.panels[0].title, "Faster half");
    CHECK_CONTAINS(b.panels[1].title, "Slower half");
    CHECK_CONTAINS(b.subtitle, "NVIDIA H200, backend cuda, sm_90");
    CHECK_INT(b.panels[0].n_cases, 3);
    CHECK_STR(b.panels[0].labels[1], LABELS[3]);
    CHECK_STR(b.panels[1].labels[2], LABELS[2]);
    CHECK_INT(b.panels[1].mark[1 * 4 + 1], HN_MARK_MISMATCH); /* case 4, conv2d_pad_z_out */
    CHECK_INT(b.panels[1].mark[2 * 4 + 0], HN_MARK_FAILED);   /* case 2, conv2d_pad */
    hn_plot_bars_free(&b);

    /* Speed-up over cuBLAS: 3 series, value = cuBLAS time / variant time. */
    CHECK(hn_plot_speedup_chart(&d, "conv2d_small", &b, &err) == 0);
    CHECK_INT(b.n_series, 3);
    CHECK_STR(b.series[0], "conv2d_pad");
    CHECK_NEAR(b.panels[0].value[0], 0.01082 / 0.09739, 1e-12); /* case 0 */
    CHECK_NEAR(b.panels[0].hline, 1.0, 0);
    CHECK(b.panels[0].log_y);
    hn_plot_bars_free(&b);
    hn_plot_data_free(&d);
    hn_plot_data_free(&d); /* twice: still fine */

    /* --sort by a numeric column; ties keep the file order. */
    CHECK_MSG(hn_plot_data_build(&d, &t, "img_size", NULL, &err) == 0, "%s", err.msg);
    const int by_img[6] = {2, 1, 4, 0, 5, 3};
    for (int i = 0; i < 6; i++) CHECK_INT(d.order[i], by_img[i]);
    CHECK(!d.sort_is_variant);
    hn_plot_data_free(&d);

    /* --sort by a variant, --baseline another. */
    CHECK(hn_plot_data_build(&d, &t, "conv2d_pad_z_out", "conv2d_pad", &err) == 0);
    CHECK_INT(d.order[0], 0); /* 0.04781 ms */
    CHECK_INT(d.order[1], 5); /* 0.05288 ms */
    CHECK_INT(d.order[5], 2); /* 12.41 ms */
    CHECK_INT(d.baseline, 0);
    hn_plot_data_free(&d);

    CHECK(hn_plot_data_build(&d, &t, "no_such", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "--sort no_such: neither a variant nor a column");
    CHECK(hn_plot_data_build(&d, &t, "device", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "holds no numbers");
    CHECK(hn_plot_data_build(&d, &t, NULL, "nope", &err) != 0);
    CHECK_CONTAINS(err.msg, "--baseline nope: no such variant");
    hn_table_free(&t);

    hn_table u;
    CHECK(hn_table_parse("a,b\n1,2\n", "x.csv", &u, &err) == 0);
    CHECK(hn_plot_data_build(&d, &u, NULL, NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "not a results file");
    hn_table_free(&u);
}

/* Cases every variant skipped are counted, not drawn; a failure keeps a case. */
static void test_all_skipped(void) {
    hn_table t;
    hn_err err;
    CHECK(hn_table_parse("case,label,variant,status,time_median_ms\n"
                         "0,a,v1,skipped,\n0,a,v2,skipped,\n"
                         "1,b,v1,ok,2\n1,b,v2,ok,1\n"
                         "2,c,v1,skipped,\n2,c,v2,launch_error,\n"
                         "3,d,v1,ok,1\n",
                         "x", &t, &err) == 0);
    hn_plot_data d;
    CHECK(hn_plot_data_build(&d, &t, NULL, NULL, &err) == 0);
    CHECK_INT(d.n_cases, 4);
    CHECK_INT(d.n_shown, 3);
    CHECK_INT(d.n_all_skipped, 1);
    CHECK_INT(d.order[0], 3); /* v1: 1 ms */
    CHECK_INT(d.order[1], 1); /* v1: 2 ms */
    CHECK_INT(d.order[2], 2); /* no time: last */
    CHECK_INT(d.split, 1);
    CHECK_INT(d.n_marks[HN_MARK_SKIPPED], 1);
    CHECK_INT(d.n_marks[HN_MARK_NONE], 1); /* case 3 has no v2 row */
    CHECK_INT(d.n_marks[HN_MARK_FAILED], 1);
    hn_plot_bars b;
    hn_plot_times_chart(&d, "x", 0, &b, &err);
    CHECK_CONTAINS(b.note, "1 case skipped by every variant not drawn");
    CHECK_INT(b.panels[0].n_cases + b.panels[1].n_cases, 3);
    hn_plot_bars_free(&b);
    hn_plot_data_free(&d);
    hn_table_free(&t);
}

static void test_one_case(void) {
    hn_table t;
    hn_err err;
    CHECK(hn_table_parse("case,label,variant,status,time_median_ms\n0,a,v1,ok,1\n0,a,v2,ok,2\n", "x", &t, &err) == 0);
    hn_plot_data d;
    CHECK(hn_plot_data_build(&d, &t, NULL, NULL, &err) == 0);
    hn_plot_bars b;
    hn_plot_times_chart(&d, "x", 1, &b, &err);
    CHECK_INT(b.n_panels, 1); /* no halves of one case */
    CHECK_INT(b.panels[0].n_cases, 1);
    hn_plot_bars_free(&b);
    hn_plot_data_free(&d);
    hn_table_free(&t);
}

static void test_quote(void) {
    hn_sb sb;
    hn_sb_init(&sb);
    hn_plot_quote(&sb, "it's `rm -rf` @x\n$1");
    CHECK_STR(sb.buf, "'it''s `rm -rf` @x $1'");
    hn_sb_free(&sb);
    hn_plot_vars v;
    hn_plot_vars_init(&v);
    hn_plot_var_num(&v, "a", 1.5);
    hn_plot_var_num(&v, "b", NAN);
    const char *names[] = {"x", "y'z"};
    hn_plot_var_strs(&v, "n", names, 2);
    hn_plot_var_nums(&v, "e", NULL, 0);
    CHECK_STR(v.code.buf, "a = 1.5; b = NaN; array n[2] = ['x','y''z']; array e[1] = [0]; ");
    hn_plot_vars_free(&v);

    char *p = hn_plot_dat_path("plots/h200/x.y/conv2d.png");
    CHECK_STR(p, "plots/h200/x.y/conv2d.dat");
    free(p);
    p = hn_plot_dat_path("plots/x.y/chart");
    CHECK_STR(p, "plots/x.y/chart.dat");
    free(p);
    p = hn_plot_sibling("plots/conv2d.png", "-speedup", HN_FMT_SVG);
    CHECK_STR(p, "plots/conv2d-speedup.svg");
    free(p);
    hn_plot_format f;
    CHECK(hn_plot_format_parse("SVG", &f) == 0 && f == HN_FMT_SVG);
    CHECK(hn_plot_format_parse("jpg", &f) != 0);
}

/* ---------------------------------------------------------------------- */
/* charts, with gnuplot */

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks path is a PNG of w x h pixels. */
static void check_png(const char *path, unsigned w, unsigned h) {
    char *data = NULL;
    size_t size = 0;
    CHECK_MSG(hn_read_file(path, &data, &size, NULL) == 0, "%s missing", path);
    if (!data) return;
    const unsigned char *p = (const unsigned char *)data;
    CHECK_MSG(size > 33 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(p + 12, "IHDR", 4) == 0,
              "%s is not a PNG", path);
    if (size > 33) {
        CHECK_MSG(be32(p + 16) == w && be32(p + 20) == h, "%s is %ux%u, not %ux%u", path, be32(p + 16),
                  be32(p + 20), w, h);
    }
    free(data);
}

/* Checks path is an SVG document whose root has width and height w x h. */
static void check_svg(const char *path, unsigned w, unsigned h) {
    char *data = NULL;
    size_t size = 0;
    CHECK_MSG(hn_read_file(path, &data, &size, NULL) == 0, "%s missing", path);
    if (!data) return;
    const char *root = strstr(data, "<svg");
    CHECK_MSG(root != NULL, "%s has no <svg> root", path);
    if (root) {
        const char *end = strchr(root, '>');
        char want_w[32], want_h[32];
        snprintf(want_w, sizeof want_w, "width=\"%u\"", w);
        snprintf(want_h, sizeof want_h, "height=\"%u\"", h);
        char *head = xstrndup(root, end ? (size_t)(end - root) : strlen(root));
        CHECK_CONTAINS(head, want_w);
        CHECK_CONTAINS(head, want_h);
        free(head);
    }
    CHECK_CONTAINS(data, "</svg>");
    free(data);
}

/* The data lines of a bars data file: labels[block][i] and the whole lines. */
typedef struct {
    int n_blocks;
    int n[3];
    char *line[3][16];
} dat_file;

static void dat_load(const char *path, dat_file *df) {
    memset(df, 0, sizeof *df);
    char *text = NULL;
    size_t size;
    CHECK_MSG(hn_read_file(path, &text, &size, NULL) == 0, "%s missing", path);
    if (!text) return;
    int block = -1;
    for (char *save = NULL, *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        if (strncmp(ln, "# panel ", 8) == 0) block++;
        if (ln[0] == '#' || block < 0 || block > 2) continue;
        if (df->n[block] < 16) df->line[block][df->n[block]++] = xstrdup(ln);
        if (block + 1 > df->n_blocks) df->n_blocks = block + 1;
    }
    free(text);
}

static void dat_free(dat_file *df) {
    for (int b = 0; b < 3; b++)
        for (int i = 0; i < df->n[b]; i++) free(df->line[b][i]);
}

/* Field k (0-based, tab-separated) of line; caller frees. */
static char *field(const char *line, int k) {
    const char *p = line;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, '\t');
        if (p) p++;
    }
    if (!p) return xstrdup("");
    const char *e = strchr(p, '\t');
    return xstrndup(p, e ? (size_t)(e - p) : strlen(p));
}

static void check_field(const char *line, int k, const char *want) {
    char *f = field(line ? line : "", k);
    CHECK_MSG(strcmp(f, want) == 0, "field %d of '%s' is '%s', not '%s'", k, line ? line : "", f, want);
    free(f);
}

static void test_charts_png(void) {
    char *csv = hn_test_fixture("conv2d_small.csv");
    char *dir = hn_test_scratch("png");
    char *chart = xasprintf("%s/conv2d_small.png", dir);
    char *out, *errs;
    const char *args[] = {"plot", csv, "--out", chart, NULL};
    int rc = hn_test_run_harness(NULL, args, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    char *speed = xasprintf("%s/conv2d_small-speedup.png", dir);
    char *roof = xasprintf("%s/conv2d_small-roofline.png", dir);
    CHECK_CONTAINS(out, chart);
    CHECK_CONTAINS(out, speed);
    CHECK_CONTAINS(out, roof);
    CHECK_CONTAINS(out, "1 mismatch");
    CHECK_CONTAINS(out, "case 2 conv2d_pad: launch_error: cuLaunchKernel");
    check_png(chart, 1600, 1800);
    check_png(speed, 1600, 1800);
    check_png(roof, 1400, 1000);

    /* The data handed to gnuplot: the split, the labels in order, the marks. */
    dat_file df;
    char *dat = xasprintf("%s/conv2d_small.dat", dir);
    dat_load(dat, &df);
    CHECK_INT(df.n_blocks, 2);
    CHECK_INT(df.n[0], 3);
    CHECK_INT(df.n[1], 3);
    const int order[6] = {0, 3, 5, 1, 4, 2};
    for (int i = 0; i < 6; i++) {
        const char *ln = df.line[i / 3][i % 3];
        char pos[8], id[8];
        snprintf(pos, sizeof pos, "%d", i % 3);
        snprintf(id, sizeof id, "%d", order[i]);
        check_field(ln, 0, pos);
        check_field(ln, 1, id);
        check_field(ln, 2, LABELS[order[i]]);
    }
    /* Series s (0-based): value, lo, hi, mark at 3 + 4s .. 6 + 4s. */
    check_field(df.line[1][1], 7, "1.708");    /* case 4, conv2d_pad_z_out: its time ... */
    check_field(df.line[1][1], 10, "mismatch"); /* ... marked */
    check_field(df.line[1][2], 3, "NaN");       /* case 2, conv2d_pad: no time */
    check_field(df.line[1][2], 6, "failed");
    check_field(df.line[1][2], 14, "skipped"); /* the halo kernel */
    check_field(df.line[0][0], 6, "ok");
    dat_free(&df);
    free(dat);

    /* The roofline data: intensity = flop / bytes, the mismatch kept. */
    char *rdat = xasprintf("%s/conv2d_small-roofline.dat", dir);
    char *text = NULL;
    size_t size;
    CHECK(hn_read_file(rdat, &text, &size, NULL) == 0);
    CHECK_CONTAINS(text, "\tmismatch\t4\t128x128x512 -> 32, f:3x3\n");
    free(text);
    free(rdat);
    free(out);
    free(errs);

    /* --log and --sort on a column. */
    const char *args2[] = {"plot", csv, "--out", chart, "--log", "--sort", "flop", "--quiet", NULL};
    rc = hn_test_run_harness(NULL, args2, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    CHECK_CONTAINS(out, chart); /* --quiet: the paths only */
    CHECK(strstr(out, "marked") == NULL);
    check_png(chart, 1600, 1800);
    free(out);
    free(errs);
    free(speed);
    free(roof);
    free(chart);
    free(dir);
    free(csv);
}

static void test_charts_svg(void) {
    char *csv = hn_test_fixture("conv2d_small.csv");
    char *dir = hn_test_scratch("svg");
    char *chart = xasprintf("%s/small.svg", dir);
    char *out, *errs;
    const char *args[] = {"plot", csv, "--out", chart, "--format", "svg", NULL};
    int rc = hn_test_run_harness(NULL, args, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    check_svg(chart, 1600, 1800);
    char *speed = xasprintf("%s/small-speedup.svg", dir);
    char *roof = xasprintf("%s/small-roofline.svg", dir);
    check_svg(speed, 1600, 1800);
    check_svg(roof, 1400, 1000);
    free(out);
    free(errs);
    free(speed);
    free(roof);

    /* --out's extension against --format: a clear refusal. */
    const char *bad[] = {"plot", csv, "--out", chart, "--format", "png", NULL};
    CHECK_INT(hn_test_run_harness(NULL, bad, &out, &errs), 2);
    CHECK_CONTAINS(errs, "does not end in .png");
    free(out);
    free(errs);

    /* The emulator's file: titled as emulated, no roofline (no peaks). */
    char *emu = hn_test_fixture("accum_dtype.csv");
    char *echart = xasprintf("%s/accum.svg", dir);
    const char *args2[] = {"plot", emu, "--out", echart, NULL};
    rc = hn_test_run_harness(NULL, args2, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    check_svg(echart, 1600, 1800);
    CHECK_CONTAINS(out, "no roofline");
    char *eroof = xasprintf("%s/accum-roofline.svg", dir);
    CHECK(!hn_file_exists(eroof));
    char *edat = xasprintf("%s/accum.dat", dir);
    char *text = NULL;
    size_t size;
    CHECK(hn_read_file(edat, &text, &size, NULL) == 0);
    CHECK_CONTAINS(text, "CPU-emulated times");
    free(text);
    /* The emulator's title reaches the chart. */
    CHECK(hn_read_file(echart, &text, &size, NULL) == 0);
    CHECK_CONTAINS(text, "CPU-emulated times");
    free(text);
    free(edat);
    free(eroof);
    free(echart);
    free(emu);
    free(out);
    free(errs);
    free(chart);
    free(dir);
    free(csv);
}

/* Variant names and labels reach gnuplot as data or quoted literals only: a
 * name built to break out of a string runs nothing. */
static void test_hostile_names(void) {
    char *dir = hn_test_scratch("hostile");
    char *csv = xasprintf("%s/evil.csv", dir);
    char *flag = xasprintf("%s/pwned", dir);
    char *text = xasprintf("case,label,variant,status,time_median_ms\n"
                           "0,\"a'; system('touch %s'); '\",\"v'`touch %s`\",ok,1\n"
                           "0,\"a'; system('touch %s'); '\",\"w\"\"x\t@y\",mismatch,2\n"
                           "1,b,\"v'`touch %s`\",ok,3\n",
                           flag, flag, flag, flag);
    CHECK(hn_write_file(csv, text, strlen(text), NULL) == 0);
    char *chart = xasprintf("%s/evil.png", dir);
    char *out, *errs;
    const char *args[] = {"plot", csv, "--out", chart, NULL};
    int rc = hn_test_run_harness(NULL, args, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    check_png(chart, 1600, 1800);
    CHECK(!hn_file_exists(flag));
    free(out);
    free(errs);
    free(chart);
    free(text);
    free(flag);
    free(csv);
    free(dir);
}

static void test_all(void) {
    char *root = hn_test_scratch("all");
    char *sub = xasprintf("%s/results/h200/2026-11-29", root);
    hn_mkdirs(sub, NULL);
    char *src = hn_test_fixture("conv2d_small.csv");
    char *data = NULL;
    size_t size;
    CHECK(hn_read_file(src, &data, &size, NULL) == 0);
    char *a = xasprintf("%s/conv2d_sweep.csv", sub);
    char *b = xasprintf("%s/results/top.csv", root);
    char *s = xasprintf("%s/conv2d_sweep.csv.samples.csv", sub);
    CHECK(hn_write_file(a, data, size, NULL) == 0);
    CHECK(hn_write_file(b, data, size, NULL) == 0);
    CHECK(hn_write_file(s, "time_ms\n1.0\n", 12, NULL) == 0);
    char *out, *errs;
    const char *args[] = {"plot", "--all", NULL};
    int rc = hn_test_run_harness(root, args, &out, &errs);
    CHECK_MSG(rc == 0, "rc %d: %s", rc, errs);
    CHECK_CONTAINS(out, "plots/h200/2026-11-29/conv2d_sweep.png");
    CHECK_CONTAINS(out, "plots/top.png");
    CHECK(strstr(out, "samples") == NULL);
    char *pa = xasprintf("%s/plots/h200/2026-11-29/conv2d_sweep.png", root);
    char *pr = xasprintf("%s/plots/h200/2026-11-29/conv2d_sweep-roofline.png", root);
    char *pb = xasprintf("%s/plots/top-speedup.png", root);
    check_png(pa, 1600, 1800);
    check_png(pr, 1400, 1000);
    check_png(pb, 1600, 1800);
    free(out);
    free(errs);

    const char *args2[] = {"plot", "--all", "--out", "x.png", NULL};
    CHECK_INT(hn_test_run_harness(root, args2, &out, &errs), 2);
    CHECK_CONTAINS(errs, "--all");
    free(out);
    free(errs);
    free(pa);
    free(pr);
    free(pb);
    free(a);
    free(b);
    free(s);
    free(data);
    free(src);
    free(sub);
    free(root);
}

static void test_bad_input(void) {
    char *out, *errs;
    const char *a1[] = {"plot", "/nonexistent/results.csv", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a1, &out, &errs), 2);
    CHECK_CONTAINS(errs, "/nonexistent/results.csv: no such file");
    free(out);
    free(errs);

    char *dir = hn_test_scratch("bad");
    char *csv = xasprintf("%s/notresults.csv", dir);
    CHECK(hn_write_file(csv, "a,b\n1,2\n", 8, NULL) == 0);
    const char *a2[] = {"plot", csv, NULL};
    CHECK_INT(hn_test_run_harness(NULL, a2, &out, &errs), 2);
    CHECK_CONTAINS(errs, "not a results file: it has no 'variant' column");
    free(out);
    free(errs);

    char *fx = hn_test_fixture("conv2d_small.csv");
    const char *a3[] = {"plot", fx, "--sort", "nope", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a3, &out, &errs), 2);
    CHECK_CONTAINS(errs, "--sort nope: neither a variant nor a column");
    free(out);
    free(errs);
    const char *a4[] = {"plot", fx, "--format", "jpg", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a4, &out, &errs), 2);
    CHECK_CONTAINS(errs, "--format jpg: expected png, svg or pdf");
    free(out);
    free(errs);
    const char *a5[] = {"plot", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a5, &out, &errs), 2);
    CHECK_CONTAINS(errs, "missing the results file");
    free(out);
    free(errs);
    free(fx);
    free(csv);
    free(dir);
}

int main(void) {
    test_marks();
    test_data();
    test_one_case();
    test_all_skipped();
    test_quote();
    if (!getenv("HARNESS_BIN")) { /* CTest sets it */
        fprintf(stderr, "HARNESS_BIN not set: the chart checks need the harness binary\n");
        return 1;
    }
    test_bad_input();
    if (!hn_plot_have_gnuplot()) { /* a dependency: scripts/setup.sh installs it */
        fprintf(stderr, "gnuplot not found (install gnuplot-nox): the charts cannot be checked\n");
        return 1;
    }
    test_charts_png();
    test_charts_svg();
    test_hostile_names();
    test_all();
    hn_test_cleanup();
    return hn_test_exit();
}
