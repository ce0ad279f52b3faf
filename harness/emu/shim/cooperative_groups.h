/* cooperative_groups.h: not supported by the CPU emulator; including it is a compile error
 * that says so (the emulator's shim provides no cooperative groups). */
#error "harness CPU emulator: cooperative_groups.h (cooperative groups) is not supported"
