/* cuda_runtime.h: stand-in for the CUDA header of that name in the CPU emulator. The
 * emulator's shim (hn_emu.h, force-included in front of every kernel) already
 * provides what device code needs from it. */
#pragma once
#include "hn_emu.h"
