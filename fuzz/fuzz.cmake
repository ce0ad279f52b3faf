# fuzz.cmake: the libFuzzer targets, included by CMakeLists.txt when HN_FUZZ is ON
# (scripts/fuzz.sh configures build-fuzz/ with clang and runs them).
#
#   fuzz_config   hn_plan_parse on any bytes, what list/run evaluate, hn_plan_make_case
#   fuzz_expr     hn_expr_parse on any bytes, names, evaluation in a fixed scope
#
# The library is compiled again with coverage instrumentation and ASan + UBSan
# (a config reaches the operators, the tune space and the workload shapes, and
# through them most of hncore). The sweep's limits on combinations
# (of the axes: 20 million; of one variant's defines: 100,000) are lowered to
# 10,000 here, so that one input (where 4 constraints of 1024 terms are evaluated
# for each combination) stays within seconds, not minutes.
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "HN_FUZZ needs clang's libFuzzer: configure a separate folder with "
                      "-DCMAKE_C_COMPILER=clang (scripts/fuzz.sh does)")
endif()

set(HN_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                       -fno-omit-frame-pointer)
# The whole library, instrumented: a config reaches the operators, the tune
# space builder and the workload shapes, and those reach most of the rest.
add_library(hnfuzzcore STATIC ${HN_LIB_SOURCES} ${HN_EMBED_C} ${HN_OP_REGISTRY_C}
            ${CMAKE_SOURCE_DIR}/fuzz/fuzz_targets.c)
target_include_directories(hnfuzzcore PUBLIC ${CMAKE_SOURCE_DIR}/fuzz
                           $<TARGET_PROPERTY:hncore,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(hnfuzzcore PUBLIC $<TARGET_PROPERTY:hncore,INTERFACE_COMPILE_DEFINITIONS>
                           PRIVATE HN_SWEEP_MAX_COMBINATIONS=10000LL
                                   HN_SWEEP_MAX_DEFINE_COMBINATIONS=10000LL)
if(OPENBLAS_LIBRARY AND CBLAS_INCLUDE_DIR)
  target_include_directories(hnfuzzcore SYSTEM PRIVATE ${CBLAS_INCLUDE_DIR})
endif()
target_compile_options(hnfuzzcore PRIVATE -fsanitize=fuzzer-no-link ${HN_FUZZ_SANITIZERS})
target_link_libraries(hnfuzzcore PUBLIC $<TARGET_PROPERTY:hncore,INTERFACE_LINK_LIBRARIES>)
target_link_options(hnfuzzcore INTERFACE $<TARGET_PROPERTY:hncore,INTERFACE_LINK_OPTIONS>)

foreach(target config expr)
  add_executable(fuzz_${target} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_${target}.c)
  target_compile_options(fuzz_${target} PRIVATE -fsanitize=fuzzer ${HN_FUZZ_SANITIZERS})
  target_link_options(fuzz_${target} PRIVATE -fsanitize=fuzzer ${HN_FUZZ_SANITIZERS})
  target_link_libraries(fuzz_${target} PRIVATE hnfuzzcore)
endforeach()
