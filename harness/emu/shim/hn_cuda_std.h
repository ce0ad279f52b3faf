/* hn_cuda_std.h: libcu++'s cuda::std in the CPU emulator. Kernels compiled by the
 * host compiler run on the host, so the host's C++17 library is what cuda::std
 * means there: the stand-ins in cuda/std/ include the host header of the same name
 * and this alias, so cuda::std::uint64_t is std::uint64_t and
 * cuda::std::numeric_limits<float> is std::numeric_limits<float>. libcu++ itself
 * cannot be used: under __CUDA_ARCH__ (which the shim defines) it takes its device
 * paths, PTX included. Headers with no C++17 host counterpart, or whose device
 * meaning the host's differs from (atomic, barrier ...), are #error stubs. */
#pragma once
namespace cuda {
namespace std = ::std;
}
