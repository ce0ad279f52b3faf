/* Harness CPU emulator stand-in for CUB's <cub/block/block_scan.cuh> (hn_emu_cub.h says what it provides). */
#pragma once
#include <hn_emu_cub.h>
