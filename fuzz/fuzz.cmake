# fuzz.cmake: the libFuzzer targets, included by CMakeLists.txt when HN_FUZZ is ON
# (scripts/fuzz.sh configures build-fuzz/ with clang and runs them).
#
#   fuzz_config   hn_plan_parse on any bytes, what list/run evaluate, hn_plan_make_case
#   fuzz_expr     hn_expr_parse on any bytes, names, evaluation in a fixed scope
#
# Only the code a config reaches (expr, config, sweep, util, the operators) is
# compiled again, with coverage instrumentation and ASan + UBSan, not all of
# hncore: the build stays short enough for CI. The sweep's limits on combinations
# (of the axes: 20 million; of one variant's defines: 100,000) are lowered to
# 10,000 here, so that one input (where 4 constraints of 1024 terms are evaluated
# for each combination) stays within seconds, not minutes.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "HN_FUZZ needs clang's libFuzzer: configure a separate folder with "
                      "-DCMAKE_C_COMPILER=clang (scripts/fuzz.sh does)")
endif()

set(HN_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                       -fno-omit-frame-pointer)
file(GLOB HN_FUZZ_OPS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/harness/ops/*.c)
add_library(hnfuzzcore STATIC
  ${CMAKE_SOURCE_DIR}/harness/expr.c
  ${CMAKE_SOURCE_DIR}/harness/config.c
  ${CMAKE_SOURCE_DIR}/harness/sweep.c
  ${CMAKE_SOURCE_DIR}/harness/util.c
  ${HN_FUZZ_OPS}
  ${CMAKE_SOURCE_DIR}/fuzz/fuzz_targets.c)
target_include_directories(hnfuzzcore PUBLIC ${CMAKE_SOURCE_DIR}/harness ${CMAKE_SOURCE_DIR}/fuzz
                           ${CJSON_INCLUDE_DIR})
target_compile_definitions(hnfuzzcore PUBLIC HN_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
                           PRIVATE HN_SWEEP_MAX_COMBINATIONS=10000LL
                                   HN_SWEEP_MAX_DEFINE_COMBINATIONS=10000LL)
target_compile_options(hnfuzzcore PRIVATE -fsanitize=fuzzer-no-link ${HN_FUZZ_SANITIZERS})
target_link_libraries(hnfuzzcore PUBLIC ${CJSON_LIBRARY} Threads::Threads m)

foreach(target config expr)
  add_executable(fuzz_${target} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_${target}.c)
  target_compile_options(fuzz_${target} PRIVATE -fsanitize=fuzzer ${HN_FUZZ_SANITIZERS})
  target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer ${HN_FUZZ_SANITIZERS})
  target_link_libraries(fuzz_${target} PRIVATE hnfuzzcore)
endforeach()
