/* hn_emu.h: placeholder for the emulator's shim header. */
