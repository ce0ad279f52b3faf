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

#include "commands.h"
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
        char id[16];
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


/* ---- synthetic tables ---------------------------------------------------------- */

#define SYN_HEAD                                                                                      \
    "case,in_ch,img_size,label,variant,kernel,TILE,ACC,backend,device,arch,status,reason,match_fraction," \
    "max_abs_err,max_rel_err,time_median_ms,timing\n"

/* --by ACC over seven cases (hand-computed):
 *   case  f ms             d ms            d/f    fastest (ok rows)
 *   0     2                4 (+ a repeat)  2      f
 *   1     1 (mismatch)     1.5             1.5    d (f is wrong)
 *   2     launch_error     skipped         -      -    (no time: not shown)
 *   3     3                -               -      (single: not compared)
 *   4     (no ACC value)
 *   5     1                0.5             0.5    d
 *   6     2                2               1      f (a tie goes to the first)
 * geometric mean of d/f = (2 * 1.5 * 0.5 * 1)^(1/4) = 1.5^(1/4) */
static const char SYN_ACC[] =
    SYN_HEAD
    "0,1,8,L0,v[ACC=f],k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.0001,2,cold\n"
    "0,1,8,L0,v[ACC=d],k,16,d,cuda,H200,sm_90,ok,,1,1e-06,1e-07,4,cold\n"
    "1,1,9,L1,v[ACC=f],k,16,f,cuda,H200,sm_90,mismatch,,0.5,0.05,0.03,1,cold\n"
    "1,1,9,L1,v[ACC=d],k,16,d,cuda,H200,sm_90,ok,,1,2e-06,1e-07,1.5,cold\n"
    "2,2,8,L2,v[ACC=f],k,16,f,cuda,H200,sm_90,launch_error,boom,,,,,cold\n"
    "2,2,8,L2,v[ACC=d],k,16,d,cuda,H200,sm_90,skipped,too big,,,,,cold\n"
    "3,2,9,L3,v[ACC=f],k,16,f,cuda,H200,sm_90,ok,,1,0,0,3,cold\n"
    "0,1,8,L0,v[ACC=d],k,16,d,cuda,H200,sm_90,ok,,1,1e-06,1e-07,9,cold\n"
    "4,3,8,L4,cublas,cublas,,,cuda,H200,sm_90,ok,,1,0,0,1,cold\n"
    "5,3,9,L5,v[ACC=f],k,16,f,cuda,H200,sm_90,ok,,0.9,0.001,0.002,1,cold\n"
    "5,3,9,L5,v[ACC=d],k,16,d,cuda,H200,sm_90,ok,,1,3e-06,4e-07,0.5,cold\n"
    "6,4,8,L6,v[ACC=f],k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.0001,2,cold\n"
    "6,4,8,L6,v[ACC=d],k,16,d,cuda,H200,sm_90,ok,,1,1e-06,1e-07,2,cold\n";

static int load_text(hn_table *t, const char *text) {
    hn_err err;
    int rc = hn_table_parse(text, "syn.csv", t, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    return rc;
}

static char *print_of(const hn_compare *c, const char *name) {
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    hn_compare_print(c, name, f);
    fclose(f);
    return buf;
}

static char *chart_data_of(const hn_compare *c, const char *name, hn_plot_bars *b) {
    hn_compare_chart(c, name, b);
    char *dir = hn_test_scratch("chart");
    char *path = xasprintf("%s/c.dat", dir);
    hn_err err;
    char *text = NULL;
    size_t size;
    CHECK(hn_plot_bars_write_data(b, path, &err) == 0);
    CHECK(hn_read_file(path, &text, &size, &err) == 0);
    free(path);
    free(dir);
    return text;
}

static void test_synthetic_pairs(void) {
    hn_table t;
    if (load_text(&t, SYN_ACC) != 0) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_values, 2);
    CHECK_STR(c.values[0].name, "f");
    CHECK_STR(c.values[1].name, "d");
    CHECK_INT(c.baseline, 0);
    CHECK_INT(c.n_groups, 5); /* cases 0, 1, 2, 5, 6 */
    CHECK_INT(c.n_single, 1);
    CHECK_INT(c.single_example, 6);
    CHECK_INT(c.n_novalue, 1);
    CHECK_INT(c.n_duplicates, 1);
    CHECK_INT(c.n_excluded, 2);
    CHECK_STR(c.unit, "case");
    static const char *const ids[5] = {"0", "1", "2", "5", "6"};
    static const int first[5] = {0, 2, 4, 9, 11};
    for (int g = 0; g < c.n_groups && g < 5; g++) {
        CHECK_STR(c.groups[g].case_id, ids[g]);
        CHECK_INT(c.groups[g].first_row, first[g]);
        CHECK_INT(c.groups[g].n_present, 2);
        CHECK_INT(c.groups[g].rows[0], first[g]);
        CHECK_INT(c.groups[g].rows[1], first[g] + 1);
    }
    CHECK_STR(c.groups[0].title, "case 0: L0");
    CHECK_STR(c.groups[0].extra, "kernel=k TILE=16");
    CHECK_STR(c.groups[0].label, "L0");
    const double ratio[5] = {2, 1.5, NAN, 0.5, 1};
    for (int g = 0; g < 5 && g < c.n_groups; g++) {
        double r = hn_compare_ratio(&c, g, 1);
        if (isnan(ratio[g])) CHECK(isnan(r));
        else CHECK_NEAR(r, ratio[g], 1e-15);
    }
    const hn_compare_value *f = &c.values[0], *d = &c.values[1];
    CHECK_INT(d->n_ratio, 4);
    CHECK_NEAR(d->geomean_ratio, pow(1.5, 0.25), 1e-15);
    CHECK_INT(f->n_fastest, 2);
    CHECK_INT(d->n_fastest, 2);
    CHECK_INT(f->n_timed, 4);
    CHECK_INT(d->n_timed, 4);
    CHECK_INT(f->n_mismatch, 1);
    CHECK_NEAR(f->worst_abs_err, 0.05, 0);
    CHECK_NEAR(f->worst_rel_err, 0.03, 0);
    CHECK_NEAR(f->min_match, 0.5, 0);
    CHECK_NEAR(d->worst_abs_err, 3e-6, 0);
    CHECK_NEAR(d->worst_rel_err, 4e-7, 0);
    CHECK_NEAR(d->min_match, 1, 0);

    char *out = print_of(&c, "syn");
    CHECK_STR(out,
              "compare syn by ACC (baseline f): 5 cases\n"
              "H200, backend cuda, sm_90, cold L2\n"
              "ratio = median time / f's median time in the same case (> 1: slower); errors are against the "
              "fp64 reference\n"
              "\n"
              "case 0: L0  [kernel=k TILE=16]\n"
              "  ACC  status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
              "  f    ok                     2    1.000x        0.001       0.0001        1.000000\n"
              "  d    ok                     4    2.000x        1e-06        1e-07        1.000000\n"
              "\n"
              "case 1: L1  [kernel=k TILE=16]\n"
              "  ACC  status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
              "  f    mismatch               1    1.000x         0.05         0.03        0.500000\n"
              "  d    ok                   1.5    1.500x        2e-06        1e-07        1.000000\n"
              "\n"
              "case 5: L5  [kernel=k TILE=16]\n"
              "  ACC  status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
              "  f    ok                     1    1.000x        0.001        0.002        0.900000\n"
              "  d    ok                   0.5    0.500x        3e-06        4e-07        1.000000\n"
              "\n"
              "case 6: L6  [kernel=k TILE=16]\n"
              "  ACC  status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
              "  f    ok                     2    1.000x        0.001       0.0001        1.000000\n"
              "  d    ok                     2    1.000x        1e-06        1e-07        1.000000\n"
              "\n"
              "(1 case where no row has a time not shown: their rows are listed as excluded)\n"
              "\n"
              "summary over 5 cases, 4 with a time (geomean_ratio over the cases where both have a time; fastest among ok "
              "rows)\n"
              "  ACC  timed  geomean_ratio  fastest  worst_abs_err  worst_rel_err  min_match  mismatches\n"
              "  f        4         1.000x        2           0.05           0.03   0.500000           1\n"
              "  d        4         1.107x        2          3e-06          4e-07   1.000000           0\n"
              "\n"
              "excluded (status neither ok nor mismatch): 2 rows\n"
              "  case 2 (L2) [kernel=k TILE=16] f: launch_error: boom\n"
              "  case 2 (L2) [kernel=k TILE=16] d: skipped: too big\n"
              "\n"
              "not compared: 1 group with a single ACC value (e.g. case 3, variant v[ACC=f])\n"
              "not compared: 1 row with no ACC (e.g. cublas)\n"
              "ignored: 1 row repeating a (case, ACC) pair seen before\n"
              "\n"
              "verdict: d: 1.11x slower than f (geometric mean over 4 cases), max abs error 3.0e-06 vs 5.0e-02; "
              "mismatches: 0 vs 1\n");
    free(out);

    /* the chart: the cases with a time, by f's time (ties in file order) */
    hn_plot_bars b;
    char *dat = chart_data_of(&c, "syn", &b);
    CHECK_STR(b.title, "syn compared by ACC (baseline f)");
    CHECK_STR(b.subtitle, "H200, backend cuda, sm_90, cold L2");
    CHECK_STR(b.note, "cases ordered by f's median time; errors against the fp64 reference");
    CHECK_STR(b.xlabel, "Case");
    CHECK_INT(b.width, 1600);
    CHECK_INT(b.height, 1800);
    CHECK_INT(b.color[0], 0);
    CHECK_INT(b.color[1], 1);
    CHECK(b.panels[0].log_y && b.panels[1].log_y && b.panels[2].log_y);
    CHECK_NEAR(b.panels[0].hline, 1.0, 0);
    CHECK_STR(b.panels[0].hline_title, "1x = f");
    CHECK_STR(b.panels[0].ylabel, "Time / f's time (x, log scale)");
    CHECK_STR(dat,
              "# syn compared by ACC (baseline f)\n"
              "# H200, backend cuda, sm_90, cold L2\n"
              "# cases ordered by f's median time; errors against the fp64 reference\n"
              "# written by harness plot for plots/bars.gp: tab-separated; one block per panel\n"
              "# (gnuplot index 0, 1, ...); columns: pos, case, label, then for each series:\n"
              "# value, lo, hi, mark (ok | mismatch | failed | skipped | none)\n"
              "# series 1 (columns 4-7): f\n"
              "# series 2 (columns 8-11): d\n"
              "# panel 1: Time ratio: median time / f's (> 1: slower than f)\n"
              "0\t1\tL1\t1\tNaN\tNaN\tmismatch\t1.5\tNaN\tNaN\tok\n"
              "1\t5\tL5\t1\tNaN\tNaN\tok\t0.5\tNaN\tNaN\tok\n"
              "2\t0\tL0\t1\tNaN\tNaN\tok\t2\tNaN\tNaN\tok\n"
              "3\t6\tL6\t1\tNaN\tNaN\tok\t1\tNaN\tNaN\tok\n"
              "\n\n"
              "# panel 2: Largest absolute error against the fp64 reference (max_abs_err)\n"
              "0\t1\tL1\t0.05\tNaN\tNaN\tmismatch\t2e-06\tNaN\tNaN\tok\n"
              "1\t5\tL5\t0.001\tNaN\tNaN\tok\t3e-06\tNaN\tNaN\tok\n"
              "2\t0\tL0\t0.001\tNaN\tNaN\tok\t1e-06\tNaN\tNaN\tok\n"
              "3\t6\tL6\t0.001\tNaN\tNaN\tok\t1e-06\tNaN\tNaN\tok\n"
              "\n\n"
              "# panel 3: Largest relative error against the fp64 reference (max_rel_err)\n"
              "0\t1\tL1\t0.03\tNaN\tNaN\tmismatch\t1e-07\tNaN\tNaN\tok\n"
              "1\t5\tL5\t0.002\tNaN\tNaN\tok\t4e-07\tNaN\tNaN\tok\n"
              "2\t0\tL0\t0.0001\tNaN\tNaN\tok\t1e-07\tNaN\tNaN\tok\n"
              "3\t6\tL6\t0.0001\tNaN\tNaN\tok\t1e-07\tNaN\tNaN\tok\n");
    free(dat);
    hn_plot_bars_free(&b);
    hn_compare_free(&c);
    hn_table_free(&t);
}


/* --by an axis: rows of different cases pair when the rest of the key matches
 * (in_ch and the variant here); the groups are no longer cases. */
static const char SYN_AXIS[] =
    SYN_HEAD
    "0,1,8,a,A,k,16,f,emu,,,ok,,1,0.001,0.001,1,emu-wall\n"
    "1,1,16,b,A,k,16,f,emu,,,ok,,1,0.002,0.002,4,emu-wall\n"
    "2,1,8,a,B_with_a_rather_long_variant_name_for_labels,k,16,f,emu,,,ok,,1,0.001,0.001,2,emu-wall\n"
    "3,1,16,b,B_with_a_rather_long_variant_name_for_labels,k,16,f,emu,,,ok,,1,0.001,0.001,6,emu-wall\n"
    "4,2,8,c,A,k,16,f,emu,,,ok,,1,0.001,0.001,3,emu-wall\n"
    "5,2,16,d,A,k,16,f,emu,,,ok,,1,0.001,0.001,9,emu-wall\n"
    "6,2,8,c,A,k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.001,1,cold\n"
    "7,2,16,d,A,k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.001,2,cold\n";

static void test_by_axis_groups(void) {
    hn_table t;
    if (load_text(&t, SYN_AXIS) != 0) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "img_size", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_values, 2);
    CHECK_INT(c.n_groups, 4); /* the cuda rows are a group of their own */
    CHECK_INT(c.n_duplicates, 0);
    CHECK_STR(c.unit, "group");
    CHECK_STR(c.groups[0].title, "in_ch=1");
    CHECK_STR(c.groups[0].extra, "variant=A");
    CHECK_STR(c.groups[0].case_id, "-");
    CHECK_STR(c.groups[1].extra, "variant=B_with_a_rather_long_variant_name_for_labels");
    CHECK_STR(c.groups[2].title, "in_ch=2");
    CHECK_NEAR(hn_compare_ratio(&c, 0, 1), 4, 0);
    CHECK_NEAR(hn_compare_ratio(&c, 1, 1), 3, 0);
    CHECK_NEAR(hn_compare_ratio(&c, 2, 1), 3, 0);
    CHECK_NEAR(hn_compare_ratio(&c, 3, 1), 2, 0);
    CHECK_NEAR(c.values[1].geomean_ratio, pow(72.0, 0.25), 1e-14);
    CHECK_INT(c.values[0].n_fastest, 4);
    hn_sb sb;
    hn_sb_init(&sb);
    hn_compare_verdict(&c, 1, &sb);
    CHECK_STR(sb.buf, "16: 2.91x slower than 8 (geometric mean over 4 groups), max abs error 2.0e-03 vs 1.0e-03");
    hn_sb_free(&sb);

    char *out = print_of(&c, "axis");
    CHECK_CONTAINS(out, "compare axis by img_size (baseline 8): 4 groups\n"
                        "CPU-emulated times (backend emu): not GPU performance\n"
                        "ratio = median time / 8's median time in the same group (> 1: slower)");
    CHECK_CONTAINS(out, "\nin_ch=1  [variant=A]\n"
                        "  img_size  status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
                        "  8         ok                     1    1.000x        0.001        0.001        1.000000\n"
                        "  16        ok                     4    4.000x        0.002        0.002        1.000000\n");
    CHECK_CONTAINS(out, "summary over 4 groups (geomean_ratio over the groups where both have a time;");
    free(out);

    /* several groups share the case id "-": the chart's labels add the rest of
     * the key, shortened to 44 characters (cut in the middle) */
    hn_plot_bars b;
    char *dat = chart_data_of(&c, "axis", &b);
    CHECK_STR(b.xlabel, "Group");
    CHECK_STR(b.note, "groups ordered by 8's median time; errors against the fp64 reference");
    CHECK_STR(b.subtitle, "CPU-emulated times (backend emu): not GPU performance");
    CHECK_CONTAINS(dat, "# panel 1: Time ratio: median time / 8's (> 1: slower than 8)\n"
                        "0\t-\tin_ch=1 [A]\t1\tNaN\tNaN\tok\t4\tNaN\tNaN\tok\n"
                        "1\t-\tin_ch=2 [A]\t1\tNaN\tNaN\tok\t2\tNaN\tNaN\tok\n"
                        "2\t-\tin_ch=1 [B_with_a_ra...iant_name_for_labels]\t1\tNaN\tNaN\tok\t3\tNaN\tNaN\tok\n"
                        "3\t-\tin_ch=2 [A]\t1\tNaN\tNaN\tok\t3\tNaN\tNaN\tok\n");
    free(dat);
    hn_plot_bars_free(&b);
    hn_compare_free(&c);

    /* by the variant: in_ch=1 case 0 pairs A with B; the label keeps its
     * defines out, and the baseline may be named */
    CHECK_MSG(hn_compare_build(&c, &t, "variant", "B_with_a_rather_long_variant_name_for_labels", &err) == 0, "%s",
              err.msg);
    CHECK_INT(c.n_groups, 0); /* cases differ: A and B never share a case */
    CHECK_INT(c.n_single, 8);
    CHECK_INT(c.single_example, 0);
    hn_compare_free(&c);
    hn_table_free(&t);
}


/* Two kernels in one case, compared by a define: the groups share the case id,
 * so their chart labels carry the values of the rest of the key, in order,
 * without names (an empty define is left out). */
static void test_chart_labels(void) {
    static const char text[] =
        SYN_HEAD
        "0,1,8,L0,k1[ACC=f],k1,16,f,emu,,,ok,,1,0.001,0.001,2,emu-wall\n"
        "0,1,8,L0,k1[ACC=d],k1,16,d,emu,,,ok,,1,0.001,0.001,3,emu-wall\n"
        "0,1,8,L0,k2[ACC=f],k2,,f,emu,,,ok,,1,0.001,0.001,1,emu-wall\n"
        "0,1,8,L0,k2[ACC=d],k2,,d,emu,,,ok,,1,0.001,0.001,1,emu-wall\n"
        "1,1,9,,k1[ACC=f],k1,16,f,emu,,,ok,,1,0.001,0.001,5,emu-wall\n"
        "1,1,9,,k1[ACC=d],k1,16,d,emu,,,ok,,1,0.001,0.001,5,emu-wall\n";
    hn_table t;
    if (load_text(&t, text) != 0) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_groups, 3);
    CHECK_STR(c.unit, "group"); /* case 0 holds two groups */
    CHECK_STR(c.groups[0].extra, "kernel=k1 TILE=16");
    CHECK_STR(c.groups[1].extra, "kernel=k2");
    CHECK_STR(c.groups[2].title, "case 1: ");
    CHECK_STR(c.groups[2].label, "1"); /* no label: the case id */
    hn_plot_bars b;
    char *dat = chart_data_of(&c, "labels", &b);
    CHECK_CONTAINS(dat, "# panel 1: Time ratio: median time / f's (> 1: slower than f)\n"
                        "0\t0\tL0 [k2]\t1\tNaN\tNaN\tok\t1\tNaN\tNaN\tok\n"
                        "1\t0\tL0 [k1 16]\t1\tNaN\tNaN\tok\t1.5\tNaN\tNaN\tok\n"
                        "2\t1\t1\t1\tNaN\tNaN\tok\t1\tNaN\tNaN\tok\n");
    free(dat);
    hn_plot_bars_free(&b);
    char *out = print_of(&c, "labels");
    CHECK_CONTAINS(out, "\ncase 0: L0  [kernel=k2]\n");
    CHECK_CONTAINS(out, "\ncase 1:   [kernel=k1 TILE=16]\n");
    CHECK_CONTAINS(out, "summary over 3 groups");
    free(out);
    hn_compare_free(&c);
    hn_table_free(&t);
}

/* --by backend: backend, device and arch leave the key together */
static void test_by_place(void) {
    static const char text[] =
        SYN_HEAD
        "0,1,8,a,A,k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.001,2,cold\n"
        "0,1,8,a,A,k,16,f,emu,CPU,,ok,,1,0.001,0.001,20,emu-wall\n"
        "1,1,16,b,A,k,16,f,cuda,H200,sm_90,ok,,1,0.001,0.001,5,cold\n"
        "1,1,16,b,A,k,16,f,emu,CPU,,timeout,slow,,,,,emu-wall\n";
    hn_table t;
    if (load_text(&t, text) != 0) return;
    static const char *const by[3] = {"backend", "device", "arch"};
    for (int i = 0; i < 3; i++) {
        hn_compare c;
        hn_err err;
        CHECK_MSG(hn_compare_build(&c, &t, by[i], NULL, &err) == 0, "%s", err.msg);
        CHECK_INT(c.n_groups, i == 2 ? 0 : 2); /* arch is empty on emu: no partner */
        if (i < 2 && c.n_groups == 2) {
            CHECK_NEAR(hn_compare_ratio(&c, 0, 1), 10, 0);
            CHECK(isnan(hn_compare_ratio(&c, 1, 1)));
            CHECK_INT(c.n_excluded, 1);
            CHECK_STR(c.groups[0].extra, "variant=A"); /* the variant names its kernel and defines */
            CHECK_STR(c.unit, "case");
        }
        if (i == 2) CHECK_INT(c.n_novalue, 2);
        if (i == 0) {
            /* the context line is the first row's (the second row is another backend) */
            char *out = print_of(&c, "place");
            CHECK_CONTAINS(out, "compare place by backend (baseline cuda): 2 cases\n"
                                "H200, backend cuda, sm_90, cold L2\n");
            free(out);
            hn_plot_bars b;
            hn_compare_chart(&c, "place", &b);
            CHECK_STR(b.subtitle, "H200, backend cuda, sm_90, cold L2");
            CHECK_INT(b.panels[0].n_cases, 2);
            hn_plot_bars_free(&b);
        }
        hn_compare_free(&c);
    }
    hn_table_free(&t);
}

/* The verdict's wording at its edges: within 0.5 % (|log ratio| < 0.005) is
 * "as fast as"; faster prints the inverse; no common time says so. */
static void test_verdicts(void) {
    static const struct {
        const char *d_ms;
        const char *want;
    } cases[] = {
        {"1.005", "d: as fast as f (geometric mean over 1 case), max abs error n/a vs n/a"},
        {"1.0051", "d: 1.01x slower than f (geometric mean over 1 case), max abs error n/a vs n/a"},
        {"0.99502", "d: as fast as f (geometric mean over 1 case), max abs error n/a vs n/a"},
        {"0.9949", "d: 1.01x faster than f (geometric mean over 1 case), max abs error n/a vs n/a"},
        {"0.25", "d: 4.00x faster than f (geometric mean over 1 case), max abs error n/a vs n/a"},
        {"", "d: no case where both d and f have a time"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        /* the fewest columns a results file has: no errors, no reason, no device */
        char *text = xasprintf("time_median_ms,case,label,variant,kernel,ACC,backend,status\n"
                               "1,0,x,v,k,f,emu,ok\n"
                               "%s,0,x,v,k,d,emu,ok\n",
                               cases[i].d_ms);
        hn_table t;
        if (load_text(&t, text) == 0) {
            hn_compare c;
            hn_err err;
            CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
            hn_sb sb;
            hn_sb_init(&sb);
            hn_compare_verdict(&c, 1, &sb);
            CHECK_STR(sb.buf, cases[i].want);
            hn_sb_free(&sb);
            CHECK(isnan(c.values[1].worst_abs_err) && isnan(c.values[1].min_match));
            CHECK_INT(c.values[0].n_timed, 1);
            hn_compare_free(&c);
            hn_table_free(&t);
        }
        free(text);
    }
}

/* Many groups widen and heighten the chart; more than ten excluded rows are
 * listed ten, then counted per status. */
static void test_many_groups(void) {
    for (int n = 40; n <= 101; n += n == 41 ? 59 : 1) { /* 40, 41, 100, 101 */
        hn_sb sb;
        hn_sb_init(&sb);
        hn_sb_adds(&sb, "case,label,variant,kernel,ACC,backend,status,reason,time_median_ms\n");
        for (int i = 0; i < n; i++) {
            hn_sb_addf(&sb, "%d,c%d,v,k,f,emu,ok,,%d\n", i, i, n - i);
            if (i < 13)
                hn_sb_addf(&sb, "%d,c%d,v,k,d,emu,%s,r%d,\n", i, i,
                           i < 10 ? "launch_error" : i == 11 ? "skipped" : "compile_error", i);
            else
                hn_sb_addf(&sb, "%d,c%d,v,k,d,emu,ok,,1\n", i, i);
        }
        hn_table t;
        int rc = load_text(&t, sb.buf);
        hn_sb_free(&sb);
        if (rc) continue;
        hn_compare c;
        hn_err err;
        CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
        CHECK_INT(c.n_groups, n);
        CHECK_INT(c.n_excluded, 13);
        hn_plot_bars b;
        hn_compare_chart(&c, "many", &b);
        CHECK_INT(b.height, n > 40 ? 2600 : 1800);
        CHECK_INT(b.width, n > 100 ? 200 + 14 * n : 1600);
        CHECK_INT(b.panels[0].n_cases, n);
        char last[16];
        snprintf(last, sizeof last, "%d", n - 1);
        CHECK_STR(b.panels[0].case_ids[0], last); /* the fastest baseline first */
        hn_plot_bars_free(&b);
        if (n == 40) {
            char *out = print_of(&c, "many");
            CHECK_CONTAINS(out, "excluded (status neither ok nor mismatch): 13 rows\n"
                                "  case 0 (c0) [kernel=k] d: launch_error: r0\n");
            CHECK_CONTAINS(out, "  case 9 (c9) [kernel=k] d: launch_error: r9\n"
                                "  ... and 3 more: 2 compile_error 1 skipped (the CSV's reason column)\n");
            CHECK(!strstr(out, "case 10 (c10)"));
            CHECK(!strstr(out, "not compared"));
            CHECK(!strstr(out, "ignored"));
            CHECK(!strstr(out, "where no row has a time"));
            CHECK_CONTAINS(out, "verdict: d: ");
            free(out);
        }
        hn_compare_free(&c);
        hn_table_free(&t);
    }
}

static void test_build_errors(void) {
    static const struct {
        const char *text, *by, *want;
    } cases[] = {
        {"label,variant,kernel,backend,status,time_median_ms\nx,v,k,emu,ok,1\n", "variant",
         "not a results file: it has no 'case' column"},
        {"case,label,variant,kernel,backend,status\n0,x,v,k,emu,ok\n", "variant",
         "not a results file: it has no 'time_median_ms' column"},
        {"case,label,variant,kernel,ACC,backend,status,time_median_ms\n0,x,v,k,,emu,ok,1\n", "ACC",
         "--by ACC: the column is empty in every row"},
        {"case,label,variant,kernel,ACC,backend,status,time_median_ms\n0,x,v,k,f,emu,ok,1\n", "label",
         "--by label: not a column that says what was run (compare by one of: variant, kernel, ACC, backend)"},
        {"case,label,variant,kernel,ACC,backend,status,time_median_ms\n0,x,v,k,f,emu,ok,1\n", "status",
         "--by status: not a column that says what was run (compare by one of: variant, kernel, ACC, backend)"},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        hn_table t;
        if (load_text(&t, cases[i].text) != 0) continue;
        hn_compare c;
        hn_err err;
        err.msg[0] = '\0';
        CHECK(hn_compare_build(&c, &t, cases[i].by, NULL, &err) != 0);
        CHECK_STR(err.msg, cases[i].want);
        hn_table_free(&t);
    }
}


/* A repeat of the file's first row is counted and ignored (the first row stays);
 * a group whose baseline has no time sorts last in the chart. */
static void test_repeat_and_order(void) {
    static const char text[] =
        "case,label,variant,kernel,ACC,backend,status,reason,max_abs_err,time_median_ms\n"
        "0,a,v,k,f,emu,ok,,0.1,2\n"
        "0,a,v,k,f,emu,ok,,0.1,7\n"
        "0,a,v,k,d,emu,ok,,0.1,4\n"
        "1,b,v,k,f,emu,launch_error,boom,0.5,\n"
        "1,b,v,k,d,emu,ok,,0.2,1\n"
        "2,c,v,k,f,emu,ok,,0.1,3\n"
        "2,c,v,k,d,emu,ok,,0.1,3\n"
        "3,e,v,k,f,emu,compile_error,,,\n"
        "3,e,v,k,d,emu,ok,,0.1,6\n";
    hn_table t;
    if (load_text(&t, text) != 0) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_duplicates, 1);
    CHECK_INT(c.groups[0].rows[0], 0);
    CHECK_NEAR(hn_compare_ratio(&c, 0, 1), 2, 0);
    /* the failed row's max_abs_err takes no part, in the summary or the chart */
    CHECK_NEAR(c.values[0].worst_abs_err, 0.1, 0);
    hn_plot_bars b;
    char *dat = chart_data_of(&c, "order", &b);
    CHECK_CONTAINS(dat, "# panel 1: Time ratio: median time / f's (> 1: slower than f)\n"
                        "0\t0\ta\t1\tNaN\tNaN\tok\t2\tNaN\tNaN\tok\n"
                        "1\t2\tc\t1\tNaN\tNaN\tok\t1\tNaN\tNaN\tok\n"
                        "2\t1\tb\tNaN\tNaN\tNaN\tfailed\tNaN\tNaN\tNaN\tok\n"
                        "3\t3\te\tNaN\tNaN\tNaN\tfailed\tNaN\tNaN\tNaN\tok\n");
    CHECK_CONTAINS(dat, "# panel 2: Largest absolute error against the fp64 reference (max_abs_err)\n"
                        "0\t0\ta\t0.1\tNaN\tNaN\tok\t0.1\tNaN\tNaN\tok\n"
                        "1\t2\tc\t0.1\tNaN\tNaN\tok\t0.1\tNaN\tNaN\tok\n"
                        "2\t1\tb\tNaN\tNaN\tNaN\tfailed\t0.2\tNaN\tNaN\tok\n");
    free(dat);
    hn_plot_bars_free(&b);
    char *out = print_of(&c, "order");
    CHECK_CONTAINS(out, "  f    launch_error           -         -            -            -               -\n");
    free(out);
    hn_compare_free(&c);
    CHECK(hn_compare_build(&c, &t, "case", NULL, &err) != 0);
    CHECK_CONTAINS(err.msg, "--by case: not a column that says what was run");
    hn_table_free(&t);
}


/* A row has a time only when its status is ok or mismatch and the time is a
 * number: an ok row without one, or a failed row with one, is not timed. The
 * value column is as wide as its longest name (the baseline's here). */
static void test_what_has_a_time(void) {
    static const char text[] =
        "case,label,variant,kernel,ACC,backend,status,reason,max_abs_err,time_median_ms\n"
        "0,a,v,k,float32,emu,ok,,0.1,2\n"
        "0,a,v,k,d,emu,ok,,0.3,\n"
        "1,b,v,k,float32,emu,ok,,0.1,2\n"
        "1,b,v,k,d,emu,timeout,slow,0.2,5\n";
    hn_table t;
    if (load_text(&t, text) != 0) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.values[1].n_timed, 0);
    CHECK(isnan(c.values[1].worst_abs_err));
    CHECK_INT(c.values[1].n_ratio, 0);
    CHECK_INT(c.n_excluded, 1);
    CHECK_INT(c.values[0].n_fastest, 2);
    char *out = print_of(&c, "timed");
    CHECK_CONTAINS(out, "\n  ACC      status         median_ms     ratio  max_abs_err  max_rel_err  match_fraction\n"
                        "  float32  ok                     2    1.000x          0.1            -               -\n"
                        "  d        ok                     -         -            -            -               -\n");
    CHECK_CONTAINS(out, "  d        timeout                -         -            -            -               -\n");
    CHECK_CONTAINS(out, "verdict: d: no case where both d and float32 have a time\n");
    free(out);
    hn_compare_free(&c);
    hn_table_free(&t);
}


/* Three values, one missing from a group; a value name longer than the 60
 * columns the table gives it; a failed build leaves the comparison empty. */
static void test_three_values(void) {
    char longname[71];
    memset(longname, 'x', 70);
    longname[70] = '\0';
    char *text = xasprintf("case,label,variant,kernel,ACC,backend,status,time_median_ms\n"
                           "0,a,v,k,f,emu,ok,2\n0,a,v,k,d,emu,ok,4\n0,a,v,k,%s,emu,ok,8\n"
                           "1,b,v,k,f,emu,ok,2\n1,b,v,k,d,emu,ok,1\n2,c,v,k,z,emu,ok,3\n",
                           longname);
    hn_table t;
    int rc = load_text(&t, text);
    free(text);
    if (rc) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(c.n_values, 3);
    CHECK_INT(c.n_groups, 2);
    CHECK_INT(c.groups[1].rows[2], -1);
    CHECK_INT(c.values[2].n_timed, 1);
    CHECK_INT(c.values[2].n_ratio, 1);
    CHECK_NEAR(c.values[2].geomean_ratio, 4, 0);
    CHECK_INT(c.values[1].n_fastest, 1);
    char *out = print_of(&c, "three");
    char *head = xasprintf("\n  %-60s  %-13s %10s", "ACC", "status", "median_ms");
    CHECK_CONTAINS(out, head);
    free(head);
    char *row = xasprintf("\n  %s  ok ", longname); /* the long name itself is not cut */
    CHECK_CONTAINS(out, row);
    free(row);
    /* one verdict line per value but the baseline, each on its own */
    char *verdicts = xasprintf("\nverdict: d: as fast as f (geometric mean over 2 cases), max abs error n/a vs n/a\n"
                               "verdict: %s: 4.00x slower than f (geometric mean over 1 case), max abs error n/a vs "
                               "n/a\n",
                               longname);
    CHECK_CONTAINS(out, verdicts);
    free(verdicts);
    free(out);
    hn_compare_free(&c);
    /* a baseline with no partner: the build fails and leaves c empty */
    CHECK(hn_compare_build(&c, &t, "ACC", "z", &err) != 0);
    CHECK_CONTAINS(err.msg, "none of its rows has a partner");
    CHECK(c.values == NULL && c.n_values == 0 && c.groups == NULL && c.n_groups == 0 && c.by == NULL);
    hn_compare_free(&c); /* and freeing it again is harmless */
    hn_table_free(&t);
}


/* Chart labels of exactly 44 characters stay whole; 45 are cut in the middle
 * to 20, "..." and the last 21 (the end tells the groups of a case apart). */
static void test_label_edge(void) {
    char k44[40], k45[41];
    memset(k44, 'a', 39);
    k44[39] = '\0';
    memset(k45, 'b', 40);
    k45[40] = '\0';
    char *text = xasprintf("case,label,variant,kernel,ACC,backend,status,time_median_ms\n"
                           "0,L0,v1,%s,f,emu,ok,1\n0,L0,v1,%s,d,emu,ok,2\n"
                           "0,L0,v2,%s,f,emu,ok,3\n0,L0,v2,%s,d,emu,ok,4\n",
                           k44, k44, k45, k45);
    hn_table t;
    int rc = load_text(&t, text);
    free(text);
    if (rc) return;
    hn_compare c;
    hn_err err;
    CHECK_MSG(hn_compare_build(&c, &t, "ACC", NULL, &err) == 0, "%s", err.msg);
    hn_plot_bars b;
    hn_compare_chart(&c, "edge", &b);
    CHECK_INT(b.panels[0].n_cases, 2);
    if (b.panels[0].n_cases == 2) {
        char *want44 = xasprintf("L0 [%s]", k44), *want45 = xasprintf("L0 [%.16s...%.20s]", k45, k45);
        CHECK_INT((int)strlen(want44), 44);
        CHECK_INT((int)strlen(want45), 44);
        CHECK_STR(b.panels[0].labels[0], want44);
        CHECK_STR(b.panels[0].labels[1], want45);
        free(want44);
        free(want45);
    }
    hn_plot_bars_free(&b);
    hn_compare_free(&c);
    hn_table_free(&t);
}

/* `harness compare` on files written here: the default chart path (the column
 * name made safe for a file name), formats, nothing to compare, no time. */
static void test_command_files(void) {
    if (!getenv("HARNESS_BIN")) return;
    char *dir = hn_test_scratch("cmd");
    char *path = xasprintf("%s/syn.csv", dir);
    static const char head[] = "case,label,variant,kernel,acc:T,backend,status,reason,time_median_ms\n";
    char *text = xasprintf("%s0,a,v,k,f,emu,ok,,2\n0,a,v,k,d,emu,ok,,4\n", head);
    hn_err err;
    CHECK(hn_write_file(path, text, strlen(text), &err) == 0);
    free(text);
    char *out, *errs;
    const char *a1[] = {"compare", path, "--by", "acc:T", NULL};
    int rc = hn_test_run_harness(dir, a1, &out, &errs);
    CHECK_MSG(rc == 0 || rc == 1, "rc %d: %s", rc, errs);
    CHECK_CONTAINS(out, "compare syn by acc:T (baseline f): 1 case\n");
    char *dat = xasprintf("%s/plots/syn-by-acc_T.dat", dir);
    CHECK_MSG(hn_file_exists(dat), "%s missing", dat);
    if (rc == 0) CHECK_CONTAINS(out, "chart: plots/syn-by-acc_T.png\n");
    free(dat);
    free(out);
    free(errs);
    const char *a2[] = {"compare", path, "--by", "acc:T", "--format", "SVG", NULL};
    rc = hn_test_run_harness(dir, a2, &out, &errs);
    if (rc == 0) CHECK_CONTAINS(out, "chart: plots/syn-by-acc_T.svg\n");
    free(out);
    free(errs);
    char *pdf = xasprintf("%s/sub/c.pdf", dir);
    const char *a3[] = {"compare", path, "--by", "acc:T", "--out", pdf, NULL};
    rc = hn_test_run_harness(dir, a3, &out, &errs);
    char *pdf_dat = xasprintf("%s/sub/c.dat", dir);
    CHECK(hn_file_exists(pdf_dat));
    if (rc == 0) CHECK(hn_file_exists(pdf));
    free(pdf_dat);
    free(pdf);
    free(out);
    free(errs);
    /* --out without an extension: png, the name as given */
    char *plain = xasprintf("%s/plainchart", dir);
    const char *a6[] = {"compare", path, "--by", "acc:T", "--out", "plainchart", NULL}; /* no '.' at all */
    rc = hn_test_run_harness(dir, a6, &out, &errs);
    CHECK_MSG(rc == 0 || rc == 1, "rc %d: %s", rc, errs);
    if (rc == 0) CHECK(hn_file_exists(plain));
    free(plain);
    free(out);
    free(errs);
    /* a chart gnuplot cannot draw: exit 1 and why */
    const char *gp = getenv("HARNESS_GNUPLOT");
    char *saved_gp = gp ? xstrdup(gp) : NULL;
    setenv("HARNESS_GNUPLOT", "/nonexistent/gnuplot", 1);
    CHECK_INT(hn_test_run_harness(dir, a1, &out, &errs), 1);
    CHECK_CONTAINS(errs, "harness compare: chart not drawn: ");
    CHECK_CONTAINS(out, "verdict: d: ");
    free(out);
    free(errs);
    if (saved_gp) setenv("HARNESS_GNUPLOT", saved_gp, 1);
    else unsetenv("HARNESS_GNUPLOT");
    free(saved_gp);
    const char *a4[] = {"compare", path, "--by", "acc:T", "--format", "gif", NULL};
    CHECK_INT(hn_test_run_harness(dir, a4, &out, &errs), 2);
    CHECK_CONTAINS(errs, "harness compare: --format gif: expected png, svg or pdf\n");
    free(out);
    free(errs);

    /* nothing pairs: one single, then two */
    for (int n = 1; n <= 2; n++) {
        text = xasprintf("%s0,a,v,k,f,emu,ok,,2\n%s", head, n == 2 ? "1,b,v,k,d,emu,ok,,2\n" : "");
        CHECK(hn_write_file(path, text, strlen(text), &err) == 0);
        free(text);
        CHECK_INT(hn_test_run_harness(dir, a1, &out, &errs), 2);
        char *want = xasprintf("harness compare: %s: nothing to compare: no group of rows has two acc:T values "
                               "(%d group%s with a single value)\n",
                               path, n, n == 1 ? "" : "s");
        CHECK_STR(errs, want);
        free(want);
        free(out);
        free(errs);
    }
    /* compared, but no row has a time: no chart */
    text = xasprintf("%s0,a,v,k,f,emu,launch_error,x,\n0,a,v,k,d,emu,skipped,y,\n", head);
    CHECK(hn_write_file(path, text, strlen(text), &err) == 0);
    free(text);
    CHECK_INT(hn_test_run_harness(dir, a1, &out, &errs), 0);
    CHECK_CONTAINS(out, "\nchart: none (no row has a time)\n");
    CHECK_CONTAINS(out, "(1 case where no row has a time not shown");
    free(out);
    free(errs);
    /* not a CSV it can read */
    text = xstrdup("case,label\n\"unterminated\n");
    CHECK(hn_write_file(path, text, strlen(text), &err) == 0);
    free(text);
    CHECK_INT(hn_test_run_harness(dir, a1, &out, &errs), 2);
    CHECK_CONTAINS(errs, "harness compare: ");
    CHECK_CONTAINS(errs, "syn.csv");
    free(out);
    free(errs);
    free(path);
    free(dir);
}

/* hn_cmd_compare's own checks (a missing file, a config given for results, no --by):
 * exit 2 and a message on stderr. */
static void test_cmd_direct(void) {
    char *dir = hn_test_scratch("direct");
    char *log = xasprintf("%s/stderr", dir);
    static const struct {
        const char *config, *by, *want;
    } cases[] = {
        {NULL, "ACC", "harness compare: missing the results file (harness compare RESULTS.csv --by COLUMN)\n"},
        {"x.csv", NULL, "harness compare: x.csv: no such file\n"},
        {"", NULL, "harness compare: --by COLUMN is required (e.g. --by ACCUM_DTYPE, --by variant)\n"},
        {"{}", "variant", NULL}, /* a config: its path is in the message */
    };
    char *csv = xasprintf("%s/r.csv", dir), *json = xasprintf("%s/c.json", dir);
    hn_err werr;
    CHECK(hn_write_file(csv, "case,variant\n", 13, &werr) == 0);
    CHECK(hn_write_file(json, "{\"op\": \"relu\"}\n", 16, &werr) == 0);
    char *want_json = xasprintf("harness compare: %s is a config, not a results CSV: harness run %s writes its results "
                                "(results/<name>.csv), which compare reads\n", json, json);
    for (size_t i = 0; i < HN_ARRAY_LEN(cases); i++) {
        hn_cli cli;
        memset(&cli, 0, sizeof cli);
        cli.config = !cases[i].config || strcmp(cases[i].config, "{}") != 0 ? cases[i].config : json;
        if (cli.config && !*cli.config) cli.config = csv;
        cli.by = cases[i].by;
        fflush(stderr);
        int saved = dup(2), fd = open(log, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        dup2(fd, 2);
        close(fd);
        int rc = hn_cmd_compare(&cli);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        CHECK_INT(rc, 2);
        char *text = NULL;
        hn_err err;
        CHECK(hn_read_file(log, &text, NULL, &err) == 0);
        CHECK_STR(text, cases[i].want ? cases[i].want : want_json);
        free(text);
    }
    free(want_json);
    free(csv);
    free(json);
    free(log);
    free(dir);
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
                        "  case 4 (64x64x8 -> 32, f:9x9) [kernel=conv2d_pad_z_out_shared_halo TILE_SIZE=16] double: launch_error: emulated launch stopped after 60 s");
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
    test_synthetic_pairs();
    test_by_axis_groups();
    test_chart_labels();
    test_by_place();
    test_verdicts();
    test_many_groups();
    test_build_errors();
    test_repeat_and_order();
    test_what_has_a_time();
    test_three_values();
    test_label_edge();
    test_command_files();
    test_cmd_direct();
    test_command();
    hn_test_cleanup();
    return hn_test_exit();
}
