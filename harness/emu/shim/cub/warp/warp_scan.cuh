/* Harness CPU emulator stand-in for CUB's <cub/warp/warp_scan.cuh> (hn_emu_cub.h says what it provides). */
#pragma once
#include <hn_emu_cub.h>
