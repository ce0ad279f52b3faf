# emu.cmake: build settings of the CPU emulator (included at the end of the
# top-level CMakeLists.txt).

# The fiber context switch is an assembly file (harness/emu/emu_switch.S,
# globbed into hncore), which needs the ASM language.
enable_language(ASM)

# Sanitizer builds: Debian's gcc links with --as-needed only when no
# -fsanitize option is given, so under HN_SANITIZE every program records the
# CUDA driver stub (pulled in by CUDA::cublas) as needed and cannot start on a
# machine without a driver. Restore --as-needed for everything that links
# hncore. (Belongs in the top-level CMakeLists.txt; here until it moves.)
if(HN_SANITIZE)
  target_link_options(hncore INTERFACE "LINKER:--as-needed")
endif()
