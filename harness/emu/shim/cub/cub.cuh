/* Harness CPU emulator stand-in for <cub/cub.cuh>: only the block and warp reductions and
 * scans (hn_emu_cub.h); the device-wide algorithms (cub::DeviceReduce ...) are host
 * code, which neither NVRTC nor the emulator compiles. */
#pragma once
#include <hn_emu_cub.h>
