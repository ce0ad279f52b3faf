/*
 * test_compare.c: `harness compare` (harness/compare.c).
 *
 * tests/fixtures/accum_dtype.csv (CPU emulator, 5 cases; hand-computed below):
 *
 *   case  float ms        double ms       ratio double/float
 *   0     1               2               2
 *   1     2 (mismatch)    5               2.5
 *   2     0.5             1               2
 *   3     4               3.2             0.8
 *   4     3               launch_error    -
 *
 *   geometric mean of double's ratio = (2 * 2.5 * 2 * 0.8)^(1/4) = 8^(1/4)
 *   fastest among ok rows: float in cases 0, 2, 4; double in 1 (float
 *   mismatched) and 3
 *   worst max_abs_err: float 2.1e-03 (case 1), double 6e-07 (case 1)
 *   conv2d_pad has only ACCUM_DTYPE=float: 5 groups not compared
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "compare.h"
#include "hn_test.h"

#define HN_TEST_SCRATCH "compare"
#include "hn_test_files.h"

static int value_index(const hn_compare *c, const char *name) {
    for (int v = 0; v < c->n_values; v++)
        if (strcmp(c->values[v].name, name) == 0) return v;
    return -1;
}

static void test_geomean(void) {
    double x[] = {2, 2.5, 2, 0.8};
    CHECK_NEAR(hn_compare_geomean(x, 4), pow(8.0, 0.25), 1e-12);
    double y[] = {4, NAN, -1, 0, 1};
    CHECK_NEAR(hn_compare_geomean(y, 5), 2.0, 1e-12); /* only the finite positive ones */
    CHECK(isnan(hn_compare_geomean(y + 1, 3)));
    CHECK(isnan(hn_compare_geomean(NULL, 0)));
}

static void test_accum_dtype(void) {
    char *path = hn_test_fixture("accum_dtype.csv");
    hn_table t;
    hn_err err;
    CHECK_MSG(hn_table_load(path, &t, &err) == 0, "%s", err.msg);
    hn_compare c;
    CHECK_MSG(hn_compare_build(&c, &t, "ACCUM_DTYPE", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_values, 2);
    int vf = value_index(&c, "float"), vd = value_index(&c, "double");
    CHECK_INT(vf, 0);
    CHECK_INT(vd, 1);
    CHECK_INT(c.baseline, vf);
    CHECK_INT(c.n_groups, 5);
    CHECK_INT(c.n_single, 5);
    CHECK_INT(c.n_novalue, 0);
    CHECK_STR(c.unit, "case");
    const double ratio[5] = {2, 2.5, 2, 0.8, NAN};
    for (int g = 0; g < c.n_groups && g < 5; g++) {
        char id[8];
        snprintf(id, sizeof id, "%d", g);
        CHECK_STR(c.groups[g].case_id, id);
        CHECK_CONTAINS(c.groups[g].extra, "kernel=conv2d_pad_z_out_shared_halo");
        double r = hn_compare_ratio(&c, g, vd);
        if (isnan(ratio[g])) CHECK(isnan(r));
        else CHECK_NEAR(r, ratio[g], 1e-12);
        if (g < 4) CHECK_NEAR(hn_compare_ratio(&c, g, vf), 1.0, 0);
    }
    CHECK_NEAR(hn_compare_time(&c, 1, vf), 2.0, 0); /* a mismatch still has a time */
    CHECK(isnan(hn_compare_time(&c, 4, vd)));       /* launch_error: none */

    const hn_compare_value *d = &c.values[vd], *f = &c.values[vf];
    CHECK_INT(d->n_ratio, 4);
    CHECK_NEAR(d->geomean_ratio, pow(8.0, 0.25), 1e-12);
    CHECK_INT(f->n_ratio, 5);
    CHECK_NEAR(f->geomean_ratio, 1.0, 1e-15);
    CHECK_INT(f->n_fastest, 3);
    CHECK_INT(d->n_fastest, 2);
    CHECK_NEAR(f->worst_abs_err, 2.1e-3, 1e-15);
    CHECK_NEAR(d->worst_abs_err, 6e-7, 1e-18);
    CHECK_NEAR(f->worst_rel_err, 4.2e-4, 1e-15);
    CHECK_NEAR(d->worst_rel_err, 1.2e-7, 1e-18);
    CHECK_NEAR(f->min_match, 0.999, 1e-12);
    CHECK_INT(f->n_mismatch, 1);
    CHECK_INT(d->n_mismatch, 0);
    CHECK_INT(f->n_timed, 5);
    CHECK_INT(d->n_timed, 4);
    CHECK_INT(c.n_excluded, 1);
    if (c.n_excluded == 1) CHECK_STR(hn_table_get(&t, c.excluded[0], "status"), "launch_error");

    hn_sb sb;
    hn_sb_init(&sb);
    hn_compare_verdict(&c, vd, &sb);
    CHECK_STR(sb.buf, "double: 1.68x slower than float (geometric mean over 4 cases), "
                      "max abs error 6.0e-07 vs 2.1e-03; mismatches: 0 vs 1");
    hn_compare_free(&c);

    /* The other way round: double as the baseline. */
    CHECK_MSG(hn_compare_build(&c, &t, "ACCUM_DTYPE", "double", &err) == 0, "%s", err.msg);
    CHECK_INT(c.baseline, 1);
    CHECK_NEAR(c.values[0].geomean_ratio, pow(8.0, -0.25), 1e-12);
    hn_sb_reset(&sb);
    hn_compare_verdict(&c, 0, &sb);
    CHECK_CONTAINS(sb.buf, "float: 1.68x faster than double (geometric mean over 4 cases)");
    hn_sb_free(&sb);

    /* The chart: ratio, abs and rel error panels, cases by float's time. */
    hn_plot_bars b;
    hn_compare_chart(&c, "accum_dtype", &b);
    CHECK_INT(b.n_panels, 3);
    CHECK_INT(b.n_series, 2);
    CHECK_INT(b.color[1], 0); /* the baseline (double) is grey */
    hn_plot_bars_free(&b);
    hn_compare_free(&c);
    hn_compare_free(NULL);
    hn_table_free(&t);
    free(path);
}

static void test_by_variant(void) {
    char *path = hn_test_fixture("conv2d_small.csv");
    hn_table t;
    hn_err err;
    CHECK_MSG(hn_table_load(path, &t, &err) == 0, "%s", err.msg);
    hn_compare c;
    CHECK_MSG(hn_compare_build(&c, &t, "variant", "conv2d_pad", &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_values, 4);
    CHECK_INT(c.n_groups, 6); /* one per case */
    CHECK_STR(c.unit, "case");
    int vz = value_index(&c, "conv2d_pad_z_out");
    /* case 0: 0.04781 / 0.09739 */
    CHECK_NEAR(hn_compare_ratio(&c, 0, vz), 0.04781 / 0.09739, 1e-12);
    CHECK(isnan(hn_compare_ratio(&c, 2, vz))); /* conv2d_pad failed in case 2 */
    CHECK_INT(c.n_excluded, 3);                /* 1 launch_error + 2 skipped */
    hn_compare_free(&c);

    /* By kernel the defines stay in the key: conv2d_pad and conv2d_pad_z_out
     * (TILE_SIZE=16) pair up; the halo kernel (TILE_SIZE=8) and cuBLAS (no
     * defines) stand alone, and drop out of the values. */
    CHECK_MSG(hn_compare_build(&c, &t, "kernel", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_groups, 6);
    CHECK_INT(c.n_single, 12);
    CHECK_INT(c.n_values, 2);
    CHECK_STR(c.values[c.baseline].name, "conv2d_pad"); /* the first value that takes part */
    CHECK_NEAR(hn_compare_ratio(&c, 3, 1), 0.06881 / 0.114, 1e-12);
    hn_compare_free(&c);
    CHECK(hn_compare_build(&c, &t, "kernel", "cublas_im2col_sgemm", &err) != 0);
    CHECK_CONTAINS(err.msg, "none of its rows has a partner");

    /* By an axis: every case differs in more than one axis, so nothing pairs. */
    CHECK_MSG(hn_compare_build(&c, &t, "img_size", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_groups, 0);
    CHECK(c.n_single > 0);
    hn_compare_free(&c);
    hn_table_free(&t);
    free(path);
}

static void test_bad_input(void) {
    char *path = hn_test_fixture("accum_dtype.csv");
    hn_table t;
    hn_err err;
    CHECK(hn_table_load(path, &t, &err) == 0);
    hn_compare c;
    CHECK(hn_compare_build(&c, &t, "NO_SUCH", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "no such column");
    CHECK_CONTAINS(err.msg, "ACCUM_DTYPE");
    CHECK(hn_compare_build(&c, &t, "time_median_ms", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "not a column that says what was run");
    CHECK(hn_compare_build(&c, &t, "case", NULL, &err) != 0);
    CHECK(hn_compare_build(&c, &t, "ACCUM_DTYPE", "half", &err) != 0);
    CHECK_CONTAINS(err.msg, "--baseline half: not a value of ACCUM_DTYPE (its values: float, double)");
    hn_table_free(&t);

    hn_table u;
    CHECK(hn_table_parse("a,b\n1,2\n", "x.csv", &u, &err) == 0);
    CHECK(hn_compare_build(&c, &u, "a", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "not a results file");
    hn_table_free(&u);
    free(path);
}

/* The binary end to end: stdout, exit codes, messages. */
static void test_command(void) {
    if (!getenv("HARNESS_BIN")) { /* CTest sets it: without it the command goes untested */
        fprintf(stderr, "HARNESS_BIN not set: the end-to-end checks cannot run\n");
        hn_test_failures++;
        return;
    }
    char *path = hn_test_fixture("accum_dtype.csv");
    char *tmp = hn_test_scratch("");
    char *chart = xasprintf("%s/accum-by-dtype.png", tmp);
    char *out, *errs;
    const char *a1[] = {"compare", path, "--by", "ACCUM_DTYPE", "--out", chart, NULL};
    int rc = hn_test_run_harness(NULL, a1, &out, &errs);
    /* gnuplot is a dependency (scripts/setup.sh installs it): without it the
     * chart goes untested, which is a failure here, not a pass. */
    int have_gnuplot = hn_plot_have_gnuplot();
    CHECK_MSG(have_gnuplot, "gnuplot not found (install gnuplot-nox)");
    CHECK_MSG(rc == 0, "rc %d, stderr: %s", rc, errs);
    CHECK_CONTAINS(out, "compare accum_dtype by ACCUM_DTYPE (baseline float): 5 cases");
    CHECK_CONTAINS(out, "CPU-emulated times");
    CHECK_CONTAINS(out, "  double       ok                     5    2.500x        6e-07      1.2e-07        1.000000");
    CHECK_CONTAINS(out, "  double           4         1.682x        2          6e-07        1.2e-07   1.000000           0");
    CHECK_CONTAINS(out, "excluded (status neither ok nor mismatch): 1 row\n"
                        "  case 4 (64x64x8 -> 32, f:9x9) double: launch_error: emulated launch stopped after 60 s");
    CHECK_CONTAINS(out, "not compared: 5 groups with a single ACCUM_DTYPE value");
    CHECK_CONTAINS(out, "verdict: double: 1.68x slower than float (geometric mean over 4 cases), "
                        "max abs error 6.0e-07 vs 2.1e-03; mismatches: 0 vs 1\n");
    if (have_gnuplot) {
        CHECK_CONTAINS(out, "chart: ");
        CHECK(hn_file_exists(chart));
        char *dat = hn_plot_dat_path(chart);
        char *text = NULL;
        size_t size;
        CHECK(hn_read_file(dat, &text, &size, NULL) == 0);
        /* Three panels; case 4's double row is marked failed, case 1's float mismatched. */
        CHECK_CONTAINS(text, "# panel 3: ");
        CHECK_CONTAINS(text, "\t4\t64x64x8 -> 32, f:9x9\t1\tNaN\tNaN\tok\tNaN\tNaN\tNaN\tfailed\n");
        CHECK_CONTAINS(text, "\t1\t64x64x3 -> 8, f:5x5\t1\tNaN\tNaN\tmismatch\t2.5\tNaN\tNaN\tok\n");
        free(text);
        free(dat);
    }
    free(out);
    free(errs);

    /* Bad input: exit 2 and a message saying what is wrong. */
    const char *a2[] = {"compare", path, "--by", "NO_SUCH", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a2, &out, &errs), 2);
    CHECK_CONTAINS(errs, "--by NO_SUCH: no such column");
    free(out);
    free(errs);
    const char *a3[] = {"compare", "/nonexistent/results.csv", "--by", "ACCUM_DTYPE", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a3, &out, &errs), 2);
    CHECK_CONTAINS(errs, "/nonexistent/results.csv: no such file");
    free(out);
    free(errs);
    const char *a4[] = {"compare", path, NULL};
    CHECK_INT(hn_test_run_harness(NULL, a4, &out, &errs), 2);
    CHECK_CONTAINS(errs, "--by COLUMN is required");
    free(out);
    free(errs);
    const char *a5[] = {"compare", path, "--by", "ACCUM_DTYPE", "--baseline", "half", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a5, &out, &errs), 2);
    CHECK_CONTAINS(errs, "not a value of ACCUM_DTYPE");
    free(out);
    free(errs);
    const char *a6[] = {"compare", path, "--by", "ACCUM_DTYPE", "--out", chart, "--format", "svg", NULL};
    CHECK_INT(hn_test_run_harness(NULL, a6, &out, &errs), 2);
    CHECK_CONTAINS(errs, "does not end in .svg");
    CHECK_STR(out, ""); /* refused before printing anything */
    free(out);
    free(errs);
    free(chart);
    free(tmp);
    free(path);
}

int main(void) {
    test_geomean();
    test_accum_dtype();
    test_by_variant();
    test_bad_input();
    test_command();
    hn_test_cleanup();
    return hn_test_exit();
}
