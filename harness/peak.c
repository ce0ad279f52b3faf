/*
 * peak.c: theoretical compute and memory peaks (see peak.h).
 *
 * The table holds FMA results per clock per SM on the CUDA cores (the CUDA C++
 * Programming Guide, "Throughput of Native Arithmetic Instructions", and the
 * architecture whitepapers); FLOP per clock is twice that. Only capabilities
 * whose figures we could confirm are listed: a missing row yields 0, never a
 * guess. Cross-checks at the default boost clock:
 *   A100 SXM  sm_80 108 SMs 1410 MHz: FP32 19.5 TFLOP/s, FP64  9.7 (datasheet 19.5 / 9.7)
 *   H100 SXM  sm_90 132 SMs 1980 MHz: FP32 66.9 TFLOP/s, FP64 33.5 (datasheet 67 / 34)
 *   H200      sm_90 132 SMs 1980 MHz: as H100 (the attributes of a real H200)
 *   RTX 4090  sm_89 128 SMs 2520 MHz: FP32 82.6 TFLOP/s             (datasheet 82.6)
 */
#include "peak.h"

#include <math.h>

#include "util.h"

typedef struct {
    int major, minor;
    int fp32_fma;   /* FP32 FMA per clock per SM */
    int fp64_fma;   /* FP64 FMA per clock per SM */
} arch_row;

static const arch_row arch_table[] = {
    {5, 0, 128, 4},   /* Maxwell GM10x */
    {5, 2, 128, 4},   /* Maxwell GM20x */
    {5, 3, 128, 4},   /* Jetson TX1 */
    {6, 0, 64, 32},   /* P100 */
    {6, 1, 128, 4},   /* GP10x (GTX 10xx, P40, P4) */
    {6, 2, 128, 4},   /* Jetson TX2 */
    {7, 0, 64, 32},   /* V100 */
    {7, 5, 64, 2},    /* Turing (T4, RTX 20xx) */
    {8, 0, 64, 32},   /* A100, A30 */
    {8, 6, 128, 2},   /* GA10x (A10, A40, RTX 30xx) */
    {8, 7, 128, 2},   /* Jetson Orin */
    {8, 9, 128, 2},   /* Ada (L4, L40S, RTX 40xx) */
    {9, 0, 128, 64},  /* H100, H200 */
    {10, 0, 128, 64}, /* B200, GB200 */
    {12, 0, 128, 2},  /* Blackwell consumer (RTX 50xx, RTX PRO 6000) */
};

static const arch_row *find_arch(int major, int minor)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(arch_table); i++)
        if (arch_table[i].major == major && arch_table[i].minor == minor)
            return &arch_table[i];
    return NULL;
}

int hn_peak_known(int cc_major, int cc_minor)
{
    return find_arch(cc_major, cc_minor) != NULL;
}

int hn_peak_flop_per_clock(int cc_major, int cc_minor, int fp64)
{
    const arch_row *r = find_arch(cc_major, cc_minor);
    if (!r)
        return 0;
    return 2 * (fp64 ? r->fp64_fma : r->fp32_fma);
}

double hn_peak_gflops(int cc_major, int cc_minor, int sm_count, int sm_clock_khz,
                      int fp64)
{
    if (sm_count <= 0 || sm_clock_khz <= 0)
        return 0;
    double per_clock = hn_peak_flop_per_clock(cc_major, cc_minor, fp64);
    return per_clock * sm_count * (sm_clock_khz * 1e3) / 1e9;
}

double hn_peak_gbps(int mem_clock_khz, int bus_width_bits)
{
    if (mem_clock_khz <= 0 || bus_width_bits <= 0)
        return 0;
    return 2.0 * (mem_clock_khz * 1e3) * bus_width_bits / 8.0 / 1e9;
}

double hn_arith_intensity(double flop, double bytes)
{
    if (isnan(flop) || isnan(bytes) || flop < 0 || bytes < 0 || flop == 0)
        return 0;
    if (bytes == 0)
        return INFINITY;
    return flop / bytes;
}

double hn_roofline_gflops(double peak_gflops, double peak_gbps, double intensity)
{
    if (isnan(intensity) || intensity < 0)
        return 0;
    int have_compute = isfinite(peak_gflops) && peak_gflops > 0;
    int have_memory = isfinite(peak_gbps) && peak_gbps > 0;
    double bound = INFINITY;
    if (have_compute)
        bound = peak_gflops;
    if (have_memory) {
        double mem = peak_gbps * intensity; /* +inf when intensity is +inf */
        if (mem < bound)
            bound = mem;
    }
    return isfinite(bound) ? bound : 0;
}
