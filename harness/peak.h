/*
 * peak.h: theoretical peaks of a GPU, for "% of peak" columns and rooflines.
 *
 * Pure arithmetic over numbers the backend reports (hn_device_info): nothing
 * here queries a device. Units: GFLOP/s = 1e9 FLOP/s, GB/s = 1e9 bytes/s (not
 * GiB), clocks in kHz as the driver reports them.
 *
 *   compute  FLOP/s = FLOP per clock per SM (CUDA cores only, no tensor cores,
 *            an FMA counted as 2 FLOP) x SM count x SM clock. The table follows
 *            the CUDA C++ Programming Guide's throughput table and the
 *            architecture whitepapers; see peak.c.
 *   memory   bytes/s = 2 (double data rate) x memory clock x bus width / 8.
 *            The driver reports the memory clock so that this formula gives the
 *            datasheet figure for HBM2/2e/3/3e and GDDR6/6X alike (checked in
 *            tests/test_peak.c against the A100 and H100 SXM datasheets and
 *            the attributes a real H200 reports).
 *
 * Invariants: an unknown compute capability yields 0 FLOP per clock (and so a
 * 0 peak), never a guess; hn_peak_known tells the two apart. Any non-positive
 * count, clock or width yields 0.
 */
#ifndef HN_PEAK_H
#define HN_PEAK_H

/* 1 if the table has compute capability major.minor, else 0. */
int hn_peak_known(int cc_major, int cc_minor);

/* FP32 (fp64 == 0) or FP64 (fp64 != 0) FLOP per clock per SM, an FMA counted
 * as 2 FLOP, on the CUDA cores; 0 for an unknown compute capability. */
int hn_peak_flop_per_clock(int cc_major, int cc_minor, int fp64);

/* Peak GFLOP/s: hn_peak_flop_per_clock x sm_count x sm_clock_khz x 1e3 / 1e9.
 * Pass the clock the peak should be quoted at (the default/boost clock the
 * driver reports as CU_DEVICE_ATTRIBUTE_CLOCK_RATE). 0 if the capability is
 * unknown or a count or clock is not positive. */
double hn_peak_gflops(int cc_major, int cc_minor, int sm_count, int sm_clock_khz,
                      int fp64);

/* Peak memory bandwidth in GB/s: 2 x mem_clock_khz x 1e3 x bus_width_bits / 8
 * / 1e9, with mem_clock_khz as CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE reports it
 * and bus_width_bits as CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH. 0 if either
 * is not positive. A theoretical pin rate: copies reach roughly 80-93 % of it. */
double hn_peak_gbps(int mem_clock_khz, int bus_width_bits);

/* FLOP per byte moved: flop / bytes. +INFINITY when bytes == 0 and flop > 0
 * (nothing moved: compute bound); 0 when flop == 0, or when either is negative
 * or NaN. */
double hn_arith_intensity(double flop, double bytes);

/* The roofline bound in GFLOP/s: min(peak_gflops, peak_gbps x intensity).
 * A peak that is not positive and finite is unknown and bounds nothing; the
 * result is 0 when neither bound is known and finite, or the intensity is
 * negative or NaN. */
double hn_roofline_gflops(double peak_gflops, double peak_gbps, double intensity);

#endif
