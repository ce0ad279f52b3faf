#!/usr/bin/env bash
# test.sh: builds and runs the whole test suite, twice: a normal build (./build)
# and an AddressSanitizer + UndefinedBehaviorSanitizer build (./build-asan); then
# fuzzes the config loader and the expression language for 30 s each
# (scripts/fuzz.sh, ./build-fuzz).
#
#   scripts/test.sh           all three
#   scripts/test.sh --fast    the normal build only
#
# Installs missing packages first (as root), like setup.sh. GPU-only tests skip
# with a message on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps
if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda /usr/local/cuda-13.0; do
    [ -x "$d/bin/nvcc" ] && export PATH="$d/bin:$PATH" && break
  done
fi
jobs=$(nproc)

echo "== build and test (./build) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHN_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${1:-}" != "--fast" ]; then
  echo "== build and test under ASan + UBSan (./build-asan) =="
  # -O1, ASan's recommended level: at -O0 the emulator-heavy tests ran about twice
  # as long for no more findings. The tests share ./build's compile cache: the
  # kernels compile alike in both builds (the emulator's modules are not built
  # with ASan), and the cache's own tests keep caches of their own.
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DHN_SANITIZE=ON -DHN_WERROR=ON \
        -DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
        -DHN_TEST_CACHE_DIR="$PWD/build/test-cache" >/dev/null
  cmake --build build-asan -j "$jobs"
  (cd build-asan && ctest --output-on-failure -j "$jobs")

  echo "== fuzz the config loader and the expressions, 30 s each (./build-fuzz) =="
  scripts/fuzz.sh 30
fi
echo "== all tests passed =="
