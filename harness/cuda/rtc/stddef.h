/* Harness stand-in for NVRTC <stddef.h>: offsetof, max_align_t, nullptr_t (size_t, ptrdiff_t, NULL are built in). */
/* Through libcu++'s <cuda/std/cstddef>. */
#pragma once
#include <cuda/std/cstddef>

/* libcu++'s offsetof under NVRTC is not a constant expression; EDG's
 * __INTADDR__ is (as in EDG's own <stddef.h>), so static_assert(offsetof(...)) works. */
#undef offsetof
#define offsetof(type, member) ((size_t)__INTADDR__(&(((type *)0)->member)))

using max_align_t = ::cuda::std::max_align_t;
using nullptr_t = decltype(nullptr);
