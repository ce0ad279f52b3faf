/*
 * mma.h: the warp matrix functions (nvcuda::wmma) for the CPU emulator.
 *
 * What is provided (the shapes and types CUDA allows for floating point):
 *   fragment<matrix_a | matrix_b | accumulator, M, N, K, T, Layout>
 *     m16n16k16, m32n8k16, m8n32k16 with T = __half or __nv_bfloat16 for
 *       matrix_a/matrix_b and float or __half for the accumulator (bf16
 *       inputs need a float accumulator, as in CUDA);
 *     m16n16k8 with T = precision::tf32 (elements stored as float) and a
 *       float accumulator;
 *     m8n8k4 with T = double.
 *   num_elements, x[] (element_type, storage_element_type),
 *   fill_fragment, load_matrix_sync, store_matrix_sync, mma_sync,
 *   __float_to_tf32, layout_t (mem_row_major, mem_col_major).
 * The integer and sub-byte types (s8, u8, s4, u4, b1) are refused at compile
 * time with a message naming them.
 *
 * Element mapping (unspecified in CUDA): a fragment holds its matrix (M x K
 * for matrix_a, K x N for matrix_b, M x N for an accumulator) in logical row
 * order, whatever its memory layout; lane l holds the elements
 * l * num_elements ... (l + 1) * num_elements - 1 of that order, so
 * num_elements is rows * cols / 32 (8 for 16 x 16). load, store and mma agree.
 *
 * Warp-collective: load_matrix_sync, store_matrix_sync and mma_sync first meet
 * every lane of the warp in one collective (HN_EMU_OP_MATCH_ALL with mask
 * 0xffffffff, tagged with the function's API for messages) whose value is the
 * call site and a hash of the arguments (pointer, ldm, layout). A lane that
 * exits or never arrives is reported by the scheduler, as for any warp
 * collective; lanes at another wmma call or with other arguments are reported
 * here. Then the pointer must be 32-byte aligned and ldm a multiple of 16
 * bytes (8 elements for 16-bit types, 4 for float and tf32, 2 for double):
 * either fault fails the launch with the user's file:line. Each lane then reads
 * or writes its own elements with ordinary loads and stores, compiled in the
 * user's translation unit, so an instrumented module (harness check) checks
 * them like the kernel's own accesses (bounds, initialisation, races), and the
 * guard pages catch them in a plain one. fill_fragment is not a collective (it
 * only sets the caller's elements), as in CUDA.
 *
 * mma_sync: each lane writes its a and b elements, converted to float (double
 * for m8n8k4; tf32 elements keep their upper 19 bits, the low 13 mantissa bits
 * are ignored as the tensor cores ignore them), to a staging area of its warp
 * (the runtime's warp scratch, hn_emu_abi.h), meets the warp (the collective
 * above), computes its own elements of d, and meets the warp again before the
 * area can be reused. d[i][j] = c[i][j] + a[i][0] * b[0][j] + ... +
 * a[i][K-1] * b[K-1][j], summed in that order in float (each product of two
 * half, bf16 or tf32 values is exact in float; each addition rounds to
 * nearest even), in double with fma for m8n8k4; a __half accumulator is
 * converted to float first and rounded once to half at the end. A GPU's
 * tensor cores add in another order and with other internal rounding, so
 * results differ from a GPU's in the last bits.
 *
 * Everything private uses the hn_emu_ prefix; template parameters are
 * reserved names (_Hn...), so a user's defines cannot reach them.
 */
#ifndef HN_EMU_MMA_H
#define HN_EMU_MMA_H

#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace nvcuda {
namespace wmma {

struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
namespace precision {
struct tf32;
}
namespace experimental {
namespace precision {
struct u4;
struct s4;
struct b1;
} // namespace precision
} // namespace experimental

enum layout_t { mem_row_major, mem_col_major };

/* cvt.rna.tf32.f32: round to the nearest tf32 value (10 mantissa bits), ties
 * away from zero, the low 13 bits cleared; NaN and infinity stay as they are. */
static __inline__ float __float_to_tf32(float in) {
    unsigned u;
    memcpy(&u, &in, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x1000u; /* half of the dropped bits' unit: ties go away from zero */
        u &= 0xffffe000u;
    }
    float r;
    memcpy(&r, &u, 4);
    return r;
}

/* ------------------------------------------------------------------------- */
/* types, shapes */

template <class _HnT>
struct hn_emu_wmma_type {
    static constexpr bool input = false, accum = false;
};
template <>
struct hn_emu_wmma_type<__half> {
    typedef __half storage;
    static constexpr bool input = true, accum = true;
};
template <>
struct hn_emu_wmma_type<__nv_bfloat16> {
    typedef __nv_bfloat16 storage;
    static constexpr bool input = true, accum = false;
};
template <>
struct hn_emu_wmma_type<float> {
    typedef float storage;
    static constexpr bool input = false, accum = true;
};
template <>
struct hn_emu_wmma_type<precision::tf32> {
    typedef float storage;
    static constexpr bool input = true, accum = false;
};
template <>
struct hn_emu_wmma_type<double> {
    typedef double storage;
    static constexpr bool input = true, accum = true;
};

template <class _HnT>
struct hn_emu_wmma_storage {
    static_assert(hn_emu_wmma_type<_HnT>::input || hn_emu_wmma_type<_HnT>::accum,
                  "harness CPU emulator: nvcuda::wmma supports __half, __nv_bfloat16, "
                  "precision::tf32 and double inputs with float, __half or double accumulators; "
                  "the integer and sub-byte types (signed/unsigned char, s4, u4, b1) are not supported");
    typedef typename hn_emu_wmma_type<_HnT>::storage type;
};

/* the shape is valid for the element type T */
template <int _HnM, int _HnN, int _HnK, class _HnT>
struct hn_emu_wmma_shape {
    static constexpr bool half_shape =
        _HnK == 16 && ((_HnM == 16 && _HnN == 16) || (_HnM == 32 && _HnN == 8) || (_HnM == 8 && _HnN == 32));
    static constexpr bool value =
        std::is_same<_HnT, precision::tf32>::value ? (_HnM == 16 && _HnN == 16 && _HnK == 8)
        : std::is_same<_HnT, double>::value        ? (_HnM == 8 && _HnN == 8 && _HnK == 4)
        : std::is_same<_HnT, float>::value         ? (half_shape || (_HnM == 16 && _HnN == 16 && _HnK == 8))
                                                   : half_shape;
};

/* rows and columns of a fragment's matrix */
template <class _HnUse, int _HnM, int _HnN, int _HnK>
struct hn_emu_wmma_dims;
template <int _HnM, int _HnN, int _HnK>
struct hn_emu_wmma_dims<matrix_a, _HnM, _HnN, _HnK> {
    static constexpr int rows = _HnM, cols = _HnK;
};
template <int _HnM, int _HnN, int _HnK>
struct hn_emu_wmma_dims<matrix_b, _HnM, _HnN, _HnK> {
    static constexpr int rows = _HnK, cols = _HnN;
};
template <int _HnM, int _HnN, int _HnK>
struct hn_emu_wmma_dims<accumulator, _HnM, _HnN, _HnK> {
    static constexpr int rows = _HnM, cols = _HnN;
};

template <class _HnUse, int _HnM, int _HnN, int _HnK, class _HnT, class _HnLayout = void>
class __align__(8) fragment {
    static_assert(std::is_same<_HnUse, matrix_a>::value || std::is_same<_HnUse, matrix_b>::value ||
                      std::is_same<_HnUse, accumulator>::value,
                  "nvcuda::wmma::fragment: the use is matrix_a, matrix_b or accumulator");
    static_assert(std::is_same<_HnUse, accumulator>::value
                      ? std::is_void<_HnLayout>::value
                      : (std::is_same<_HnLayout, row_major>::value || std::is_same<_HnLayout, col_major>::value),
                  "nvcuda::wmma::fragment: matrix_a and matrix_b take row_major or col_major, an "
                  "accumulator no layout");
    static_assert(std::is_same<_HnUse, accumulator>::value ? hn_emu_wmma_type<_HnT>::accum
                                                           : hn_emu_wmma_type<_HnT>::input,
                  "harness CPU emulator: nvcuda::wmma supports __half, __nv_bfloat16, precision::tf32 "
                  "and double for matrix_a/matrix_b, float, __half and double for the accumulator "
                  "(the integer and sub-byte types are not supported)");
    static_assert(hn_emu_wmma_shape<_HnM, _HnN, _HnK, _HnT>::value,
                  "nvcuda::wmma::fragment: unsupported shape for this type (m16n16k16, m32n8k16, "
                  "m8n32k16 for __half and __nv_bfloat16; m16n16k8 for precision::tf32; m8n8k4 "
                  "for double)");

  public:
    static constexpr int hn_rows = hn_emu_wmma_dims<_HnUse, _HnM, _HnN, _HnK>::rows;
    static constexpr int hn_cols = hn_emu_wmma_dims<_HnUse, _HnM, _HnN, _HnK>::cols;
    enum { num_elements = hn_rows * hn_cols / 32, num_storage_elements = num_elements };
    typedef _HnT element_type;
    typedef typename hn_emu_wmma_storage<_HnT>::type storage_element_type;
    storage_element_type x[num_elements];
};

/* ------------------------------------------------------------------------- */
/* the warp collective */

/* "0-15", "3,7" ... for a lane mask */
static __inline__ void hn_emu_wmma_lanes(unsigned m, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int l = 0; l < 32 && n + 8 < size;) {
        if (!(m >> l & 1u)) {
            l++;
            continue;
        }
        int e = l;
        while (e + 1 < 32 && (m >> (e + 1) & 1u)) e++;
        n += (size_t)snprintf(buf + n, size - n, n ? ",%d" : "%d", l);
        if (e > l) n += (size_t)snprintf(buf + n, size - n, "-%d", e);
        l = e + 1;
    }
}

static __inline__ unsigned hn_emu_wmma_lane() {
    return HN_EMU_PEEK(hn_emu_self()->linear) % 32u;
}

/* Meets every lane of the warp at this call with the same arguments (their
 * hash); fails the launch otherwise. */
static __attribute__((noinline)) void hn_emu_wmma_meet(int api, const char *name, unsigned args,
                                                       const hn_emu_site &at) {
    unsigned long long v = ((unsigned long long)(unsigned)at.id << 32) | args;
    unsigned long long r = hn_emu_coll_at(HN_EMU_OP_MATCH_ALL, api, 0xffffffffu, v, 0, 32, at);
    if (r >> 32) return;
    unsigned same = (unsigned)hn_emu_coll_at(HN_EMU_OP_MATCH_ANY, api, 0xffffffffu,
                                             (unsigned long long)(unsigned)at.id, 0, 32, at);
    unsigned same_args = (unsigned)hn_emu_coll_at(HN_EMU_OP_MATCH_ANY, api, 0xffffffffu, v, 0, 32, at);
    char here[96], other[96], msg[512];
    unsigned w = HN_EMU_PEEK(hn_emu_self()->linear) / 32u;
    if (same != 0xffffffffu) {
        /* where the first lane of another call is */
        int src = __builtin_ctz(~same);
        int oline = (int)hn_emu_coll_at(HN_EMU_OP_SHFL, api, 0xffffffffu, (unsigned long long)at.line, src, 32, at);
        const char *ofile = (const char *)hn_emu_coll_at(HN_EMU_OP_SHFL, api, 0xffffffffu,
                                                         (unsigned long long)at.file, src, 32, at);
        const char *slash = ofile ? strrchr(ofile, '/') : NULL;
        hn_emu_wmma_lanes(same, here, sizeof here);
        hn_emu_wmma_lanes(~same, other, sizeof other);
        snprintf(msg, sizeof msg,
                 "divergent %s: lanes %s of warp %u call it here while lanes %s are at another "
                 "wmma call at %s:%d (a warp-collective: all 32 lanes must call it together)",
                 name, here, w, other, slash ? slash + 1 : ofile ? ofile : "?", oline);
    } else {
        hn_emu_wmma_lanes(same_args, here, sizeof here);
        hn_emu_wmma_lanes(~same_args, other, sizeof other);
        snprintf(msg, sizeof msg,
                 "%s called with different arguments by the lanes of warp %u (pointer, ldm or "
                 "layout): lanes %s pass this lane's, lanes %s others (all 32 lanes must pass the "
                 "same)",
                 name, w, here, other);
    }
    hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
}

static __inline__ unsigned hn_emu_wmma_hash(const void *p, unsigned ldm, int layout) {
    unsigned long long x = (unsigned long long)p;
    unsigned h = (unsigned)(x ^ (x >> 32)) * 0x9e3779b1u;
    h ^= (ldm + 0x7f4a7c15u) * 0x85ebca6bu;
    h ^= (unsigned)(layout + 1) * 0xc2b2ae35u;
    return h ^ (h >> 15);
}

/* The pointer and ldm rules of load_matrix_sync and store_matrix_sync. */
static __attribute__((noinline)) void hn_emu_wmma_check(const char *name, const void *p, unsigned ldm,
                                                        unsigned elem_bytes, const char *elem,
                                                        const hn_emu_site &at) {
    char msg[384];
    if ((unsigned long long)p % 32u) {
        snprintf(msg, sizeof msg,
                 "%s: pointer %p is not 256-bit (32-byte) aligned (it is %llu bytes past a "
                 "32-byte boundary; a GPU reads wrong data or faults)",
                 name, p, (unsigned long long)p % 32u);
        hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
    }
    unsigned mult = 16u / elem_bytes;
    if (ldm % mult) {
        snprintf(msg, sizeof msg,
                 "%s: ldm %u is not a multiple of %u elements (16 bytes) for %s (a GPU reads "
                 "wrong data silently)",
                 name, ldm, mult, elem);
        hn_emu_rt_->trap(hn_emu_self(), msg, at.line, at.file);
    }
}

template <class _HnT>
struct hn_emu_wmma_name {
    static const char *get() {
        return std::is_same<_HnT, __half>::value          ? "__half"
               : std::is_same<_HnT, __nv_bfloat16>::value ? "__nv_bfloat16"
               : std::is_same<_HnT, precision::tf32>::value ? "precision::tf32"
               : std::is_same<_HnT, double>::value        ? "double"
                                                          : "float";
    }
};

/* ------------------------------------------------------------------------- */
/* fill, load, store */

template <class _HnUse, int _HnM, int _HnN, int _HnK, class _HnT, class _HnL>
static __inline__ void
fill_fragment(fragment<_HnUse, _HnM, _HnN, _HnK, _HnT, _HnL> &f,
              const typename fragment<_HnUse, _HnM, _HnN, _HnK, _HnT, _HnL>::storage_element_type &v) {
    for (int i = 0; i < f.num_elements; i++) f.x[i] = v;
}

/* The offset in memory of the caller's element i of a fragment with `cols`
 * columns and ne elements a lane (leading dimension ldm, row-major when row). */
static __inline__ __attribute__((always_inline)) size_t hn_emu_wmma_at(int i, int ne, int cols, unsigned ldm,
                                                                       bool row) {
    int e = (int)hn_emu_wmma_lane() * ne + i, r = e / cols, c = e % cols;
    return row ? (size_t)r * ldm + (size_t)c : (size_t)c * ldm + (size_t)r;
}

template <class _HnUse, int _HnM, int _HnN, int _HnK, class _HnT, class _HnL>
static __inline__ __attribute__((always_inline)) void
load_matrix_sync(fragment<_HnUse, _HnM, _HnN, _HnK, _HnT, _HnL> &f,
                 const typename fragment<_HnUse, _HnM, _HnN, _HnK, _HnT, _HnL>::storage_element_type *p,
                 unsigned ldm, hn_emu_site at = HN_EMU_HERE) {
    static_assert(!std::is_same<_HnUse, accumulator>::value,
                  "nvcuda::wmma::load_matrix_sync of an accumulator takes a layout_t "
                  "(mem_row_major or mem_col_major) after ldm");
    const bool row = std::is_same<_HnL, row_major>::value;
    const char *name = "nvcuda::wmma::load_matrix_sync";
    hn_emu_wmma_meet(HN_EMU_API_WMMA_LOAD, name, hn_emu_wmma_hash(p, ldm, row), at);
    hn_emu_wmma_check(name, p, ldm, (unsigned)sizeof *p, hn_emu_wmma_name<_HnT>::get(), at);
    for (int i = 0; i < f.num_elements; i++) f.x[i] = p[hn_emu_wmma_at(i, f.num_elements, f.hn_cols, ldm, row)];
}

template <int _HnM, int _HnN, int _HnK, class _HnT>
static __inline__ __attribute__((always_inline)) void
load_matrix_sync(fragment<accumulator, _HnM, _HnN, _HnK, _HnT> &f,
                 const typename fragment<accumulator, _HnM, _HnN, _HnK, _HnT>::storage_element_type *p,
                 unsigned ldm, layout_t layout, hn_emu_site at = HN_EMU_HERE) {
    const char *name = "nvcuda::wmma::load_matrix_sync";
    hn_emu_wmma_meet(HN_EMU_API_WMMA_LOAD, name, hn_emu_wmma_hash(p, ldm, (int)layout), at);
    hn_emu_wmma_check(name, p, ldm, (unsigned)sizeof *p, hn_emu_wmma_name<_HnT>::get(), at);
    const bool row = layout == mem_row_major;
    for (int i = 0; i < f.num_elements; i++) f.x[i] = p[hn_emu_wmma_at(i, f.num_elements, f.hn_cols, ldm, row)];
}

template <int _HnM, int _HnN, int _HnK, class _HnT>
static __inline__ __attribute__((always_inline)) void
store_matrix_sync(typename fragment<accumulator, _HnM, _HnN, _HnK, _HnT>::storage_element_type *p,
                  const fragment<accumulator, _HnM, _HnN, _HnK, _HnT> &f, unsigned ldm, layout_t layout,
                  hn_emu_site at = HN_EMU_HERE) {
    const char *name = "nvcuda::wmma::store_matrix_sync";
    hn_emu_wmma_meet(HN_EMU_API_WMMA_STORE, name, hn_emu_wmma_hash(p, ldm, (int)layout), at);
    hn_emu_wmma_check(name, p, ldm, (unsigned)sizeof *p, hn_emu_wmma_name<_HnT>::get(), at);
    const bool row = layout == mem_row_major;
    for (int i = 0; i < f.num_elements; i++) p[hn_emu_wmma_at(i, f.num_elements, f.hn_cols, ldm, row)] = f.x[i];
}

/* ------------------------------------------------------------------------- */
/* mma */

static __inline__ float hn_emu_wmma_in(__half v) { return __half2float(v); }
static __inline__ float hn_emu_wmma_in(__nv_bfloat16 v) { return __bfloat162float(v); }
static __inline__ float hn_emu_wmma_in(float v) { /* tf32: the upper 19 bits */
    unsigned u;
    memcpy(&u, &v, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return v; /* inf, NaN: as they are */
    u &= 0xffffe000u;
    float r;
    memcpy(&r, &u, 4);
    return r;
}
static __inline__ double hn_emu_wmma_in(double v) { return v; }

static __inline__ float hn_emu_wmma_acc(__half v) { return __half2float(v); }
static __inline__ float hn_emu_wmma_acc(float v) { return v; }
static __inline__ double hn_emu_wmma_acc(double v) { return v; }
static __inline__ void hn_emu_wmma_out(__half &d, float v) { d = __float2half(v); }
static __inline__ void hn_emu_wmma_out(float &d, float v) { d = v; }
static __inline__ void hn_emu_wmma_out(double &d, double v) { d = v; }

/* A warp's staging area (the runtime's warp scratch): matrix_a and matrix_b of
 * one mma_sync, in logical row order (at most 32 x 16 elements each). */
struct hn_emu_wmma_stage {
    double a[512], b[512];
};
static_assert(sizeof(hn_emu_wmma_stage) <= HN_EMU_WARP_SCRATCH, "the staging area fits the warp scratch");

/* The staging area is not the kernel's memory: never instrumented. */
#if defined(__clang__)
#define HN_EMU_WMMA_PRIVATE __attribute__((noinline, no_sanitize("thread")))
#else
#define HN_EMU_WMMA_PRIVATE __attribute__((noinline, no_sanitize_thread))
#endif

template <class _HnW, class _HnS>
static HN_EMU_WMMA_PRIVATE void hn_emu_wmma_put(double *dst, const _HnS *x, int ne) {
    for (int i = 0; i < ne; i++) dst[i] = (double)(_HnW)hn_emu_wmma_in(x[i]);
}

/* d (own elements) = c + a b, from the staged a (M x K) and b (K x N). */
template <class _HnW, int _HnM, int _HnN, int _HnK, class _HnC>
static HN_EMU_WMMA_PRIVATE void hn_emu_wmma_compute(_HnC *d, const _HnC *c, const hn_emu_wmma_stage *s,
                                                    int lane) {
    const int ne = _HnM * _HnN / 32;
    _HnW out[_HnM * _HnN / 32];
    for (int i = 0; i < ne; i++) {
        int e = lane * ne + i, r = e / _HnN, col = e % _HnN;
        _HnW acc = hn_emu_wmma_acc(c[i]);
        for (int k = 0; k < _HnK; k++) {
            _HnW a = (_HnW)s->a[r * _HnK + k], b = (_HnW)s->b[k * _HnN + col];
            if (std::is_same<_HnW, double>::value) acc = (_HnW)fma((double)a, (double)b, (double)acc);
            else acc = acc + a * b; /* the product is exact in float */
        }
        out[i] = acc;
    }
    for (int i = 0; i < ne; i++) hn_emu_wmma_out(d[i], out[i]);
}

template <int _HnM, int _HnN, int _HnK, class _HnTC, class _HnTI, class _HnLA, class _HnLB>
static __inline__ __attribute__((always_inline)) void
mma_sync(fragment<accumulator, _HnM, _HnN, _HnK, _HnTC> &d,
         const fragment<matrix_a, _HnM, _HnN, _HnK, _HnTI, _HnLA> &a,
         const fragment<matrix_b, _HnM, _HnN, _HnK, _HnTI, _HnLB> &b,
         const fragment<accumulator, _HnM, _HnN, _HnK, _HnTC> &c, hn_emu_site at = HN_EMU_HERE) {
    static_assert(std::is_same<_HnTI, double>::value == std::is_same<_HnTC, double>::value,
                  "nvcuda::wmma::mma_sync: double inputs go with a double accumulator");
    static_assert(!std::is_same<_HnTI, __nv_bfloat16>::value || std::is_same<_HnTC, float>::value,
                  "nvcuda::wmma::mma_sync: __nv_bfloat16 inputs need a float accumulator");
    static_assert(!std::is_same<_HnTI, precision::tf32>::value || std::is_same<_HnTC, float>::value,
                  "nvcuda::wmma::mma_sync: precision::tf32 inputs need a float accumulator");
    typedef typename std::conditional<std::is_same<_HnTC, double>::value, double, float>::type _HnW;
    const int lane = (int)hn_emu_wmma_lane();
    hn_emu_wmma_stage *s = (hn_emu_wmma_stage *)HN_EMU_PEEK(hn_emu_rt_)->warp_scratch(hn_emu_self());
    const int na = _HnM * _HnK / 32, nb = _HnK * _HnN / 32;
    hn_emu_wmma_put<_HnW>(s->a + lane * na, a.x, na);
    hn_emu_wmma_put<_HnW>(s->b + lane * nb, b.x, nb);
    hn_emu_wmma_meet(HN_EMU_API_WMMA_MMA, "nvcuda::wmma::mma_sync", 0u, at);
    hn_emu_wmma_compute<_HnW, _HnM, _HnN, _HnK>(d.x, c.x, s, lane);
    /* every lane has read the staging area before any may write it again */
    (void)hn_emu_coll_at(HN_EMU_OP_SYNCWARP, HN_EMU_API_WMMA_MMA, 0xffffffffu, 0, 0, 32, at);
}

} // namespace wmma
} // namespace nvcuda

#endif
