// an empty stand-in, as users write for NVRTC: it must not hide the host C library on the emulator
