/* test_peak.c: theoretical peaks and the roofline (harness/peak.c), against
 * published datasheet figures.
 *
 * Tolerances: the formulas are checked exactly (1e-9 relative) against the
 * arithmetic written out here, and within 2 % against the datasheets, which
 * round to two or three significant digits (H100's "34 TFLOP/s" FP64 is 33.5
 * by the formula, 1.6 % off). */
#include "hn_test.h"
#include "peak.h"

#define CHECK_REL(a, b, rel) CHECK_NEAR((a), (b), (rel) * fabs((double)(b)))

static void test_a100(void)
{
    /* A100 SXM4: 108 SMs, boost 1410 MHz, HBM2e 1215 MHz x 5120 bit. */
    double fp32 = hn_peak_gflops(8, 0, 108, 1410000, 0);
    double fp64 = hn_peak_gflops(8, 0, 108, 1410000, 1);
    CHECK_REL(fp32, 128.0 * 108 * 1.41e9 / 1e9, 1e-9); /* 19491.84 */
    CHECK_REL(fp64, 64.0 * 108 * 1.41e9 / 1e9, 1e-9);  /*  9745.92 */
    CHECK_REL(fp32, 19500, 0.02);                      /* datasheet 19.5 TFLOP/s */
    CHECK_REL(fp64, 9700, 0.02);                       /* datasheet 9.7 (non-tensor) */
    double bw = hn_peak_gbps(1215000, 5120);
    CHECK_REL(bw, 1555.2, 1e-9);
    CHECK_REL(bw, 1555, 0.02); /* datasheet 1555 GB/s (40 GB part) */
}

static void test_h100(void)
{
    /* H100 SXM5: 132 SMs, boost 1980 MHz, HBM3 2619 MHz x 5120 bit. */
    double fp32 = hn_peak_gflops(9, 0, 132, 1980000, 0);
    double fp64 = hn_peak_gflops(9, 0, 132, 1980000, 1);
    CHECK_REL(fp32, 256.0 * 132 * 1.98e9 / 1e9, 1e-9); /* 66908.16 */
    CHECK_REL(fp64, 128.0 * 132 * 1.98e9 / 1e9, 1e-9); /* 33454.08 */
    CHECK_REL(fp32, 67000, 0.02); /* datasheet 67 TFLOP/s */
    CHECK_REL(fp64, 34000, 0.02); /* datasheet 34 (non-tensor) */
    double bw = hn_peak_gbps(2619000, 5120);
    CHECK_REL(bw, 3352.32, 1e-9);
    CHECK_REL(bw, 3350, 0.02); /* datasheet 3.35 TB/s */
}

static void test_h200(void)
{
    /* What a real H200 reported through cuDeviceGetAttribute (driver API,
     * checked once on the device): cc 9.0, 132 SMs, clock 1980000 kHz, memory
     * clock 3201000 kHz, bus width 6016 bits (not the nominal 6144). The
     * datasheet says FP32 67, FP64 34 TFLOP/s and 4.8 TB/s. */
    CHECK_REL(hn_peak_gflops(9, 0, 132, 1980000, 0), 67000, 0.02);
    CHECK_REL(hn_peak_gflops(9, 0, 132, 1980000, 1), 34000, 0.02);
    double bw = hn_peak_gbps(3201000, 6016);
    CHECK_REL(bw, 4814.304, 1e-9); /* 2 x 3.201e9 x 6016 / 8 */
    CHECK_REL(bw, 4800, 0.02);
}

static void test_table(void)
{
    static const int archs[][2] = {{6, 0}, {6, 1}, {7, 0}, {7, 5}, {8, 0}, {8, 6},
                                   {8, 7}, {8, 9}, {9, 0}, {10, 0}, {12, 0}};
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++) {
        int ma = archs[i][0], mi = archs[i][1];
        CHECK_MSG(hn_peak_known(ma, mi), "sm_%d%d", ma, mi);
        int f32 = hn_peak_flop_per_clock(ma, mi, 0), f64 = hn_peak_flop_per_clock(ma, mi, 1);
        /* FP32 is 64 or 128 FMA per SM per clock on every part since Maxwell;
         * FP64 is at most half of FP32 and never zero */
        CHECK_MSG(f32 == 128 || f32 == 256, "sm_%d%d fp32 %d", ma, mi, f32);
        CHECK_MSG(f64 > 0 && 2 * f64 <= f32, "sm_%d%d fp64 %d", ma, mi, f64);
    }
    /* the ratios datasheets quote */
    CHECK_INT(hn_peak_flop_per_clock(6, 0, 0) / hn_peak_flop_per_clock(6, 0, 1), 2);
    CHECK_INT(hn_peak_flop_per_clock(6, 1, 0) / hn_peak_flop_per_clock(6, 1, 1), 32);
    CHECK_INT(hn_peak_flop_per_clock(7, 5, 0) / hn_peak_flop_per_clock(7, 5, 1), 32);
    CHECK_INT(hn_peak_flop_per_clock(8, 6, 0) / hn_peak_flop_per_clock(8, 6, 1), 64);
    CHECK_INT(hn_peak_flop_per_clock(8, 9, 0) / hn_peak_flop_per_clock(8, 9, 1), 64);
    CHECK_INT(hn_peak_flop_per_clock(9, 0, 0) / hn_peak_flop_per_clock(9, 0, 1), 2);
    /* RTX 4090: 128 SMs at 2520 MHz, datasheet 82.6 TFLOP/s FP32 */
    CHECK_REL(hn_peak_gflops(8, 9, 128, 2520000, 0), 82600, 0.02);
    /* V100 SXM2: 80 SMs at 1530 MHz, datasheet 15.7 / 7.8 TFLOP/s */
    CHECK_REL(hn_peak_gflops(7, 0, 80, 1530000, 0), 15700, 0.02);
    CHECK_REL(hn_peak_gflops(7, 0, 80, 1530000, 1), 7800, 0.02);
    /* RTX 3090 GDDR6X: the driver reports 9751 MHz x 384 bit; datasheet 936 GB/s */
    CHECK_REL(hn_peak_gbps(9751000, 384), 936, 0.02);
}

static void test_unknown(void)
{
    CHECK(!hn_peak_known(3, 5));
    CHECK(!hn_peak_known(9, 9));
    CHECK(!hn_peak_known(0, 0)); /* the emulator reports 0.0 */
    CHECK_INT(hn_peak_flop_per_clock(3, 5, 0), 0);
    CHECK(hn_peak_gflops(3, 5, 15, 875000, 0) == 0);
    CHECK(hn_peak_gflops(0, 0, 2, 0, 1) == 0);
    /* unknown counts and clocks read as 0, as hn_device_info reports them */
    CHECK(hn_peak_gflops(9, 0, 0, 1980000, 0) == 0);
    CHECK(hn_peak_gflops(9, 0, 132, 0, 0) == 0);
    CHECK(hn_peak_gbps(0, 5120) == 0);
    CHECK(hn_peak_gbps(1215000, 0) == 0);
    CHECK(hn_peak_gbps(-1, -1) == 0);
}

static void test_roofline(void)
{
    double peak = hn_peak_gflops(8, 0, 108, 1410000, 0), bw = hn_peak_gbps(1215000, 5120);
    /* SAXPY in fp32: 2 FLOP per 12 bytes (two loads, one store) */
    double ai = hn_arith_intensity(2, 12);
    CHECK_NEAR(ai, 1.0 / 6, 1e-15);
    CHECK_REL(hn_roofline_gflops(peak, bw, ai), 1555.2 / 6, 1e-12); /* memory bound */
    /* the ridge point: intensity at which the two bounds meet */
    double ridge = peak / bw;
    CHECK_REL(hn_roofline_gflops(peak, bw, ridge), peak, 1e-12);
    CHECK_REL(hn_roofline_gflops(peak, bw, 100), peak, 0); /* compute bound */

    CHECK(isinf(hn_arith_intensity(1e9, 0)));
    CHECK(hn_arith_intensity(0, 0) == 0);
    CHECK(hn_arith_intensity(0, 100) == 0);
    CHECK(hn_arith_intensity(-1, 100) == 0);
    CHECK(hn_arith_intensity(NAN, 100) == 0);
    CHECK(hn_arith_intensity(100, NAN) == 0);
    CHECK(hn_roofline_gflops(peak, bw, INFINITY) == peak);

    /* unknown peaks bound nothing */
    CHECK(hn_roofline_gflops(0, bw, 2) == 2 * bw);
    CHECK(hn_roofline_gflops(peak, 0, 2) == peak);
    CHECK(hn_roofline_gflops(0, 0, 2) == 0);
    CHECK(hn_roofline_gflops(0, bw, INFINITY) == 0);
    CHECK(hn_roofline_gflops(peak, bw, -1) == 0);
    CHECK(hn_roofline_gflops(peak, bw, NAN) == 0);
    CHECK(hn_roofline_gflops(NAN, bw, 2) == 2 * bw);
}

int main(void)
{
    test_a100();
    test_h100();
    test_h200();
    test_table();
    test_unknown();
    test_roofline();
    return hn_test_exit();
}
