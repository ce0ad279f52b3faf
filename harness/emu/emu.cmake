# emu.cmake: build settings of the CPU emulator (included at the end of the
# top-level CMakeLists.txt).

# The fiber context switch is an assembly file (harness/emu/emu_switch.S,
# globbed into hncore), which needs the ASM language.
enable_language(ASM)
