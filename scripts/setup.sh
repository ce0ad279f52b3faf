#!/usr/bin/env bash
# setup.sh: installs what harness needs on a Debian machine (as root), then builds.
#
#   scripts/setup.sh            install missing packages, configure and build ./build
#   scripts/setup.sh --deps     only install packages
#
# The CUDA toolkit (nvcc, NVRTC, cuBLAS, headers) must already be installed (e.g.
# /usr/local/cuda); a GPU and its driver are optional: without them harness runs
# kernels on its CPU emulator.
set -euo pipefail
cd "$(dirname "$0")/.."

# clang and libclang-rt-dev (libFuzzer, the sanitizers' runtimes): scripts/fuzz.sh only.
# zlib1g-dev: gzipped IDX files; dataset-fashion-mnist: the data harness train's tests learn from
# (/usr/share/datasets/fashion-mnist).
# munge, slurmctld, slurmd, slurm-client: tests/test_slurm.sh starts a one-node Slurm
# cluster of its own in a temporary folder; the packages' services stay down (they
# start only once /etc/slurm/slurm.conf exists, which nothing here writes).
packages=(build-essential cmake pkg-config libcjson-dev libopenblas-dev gnuplot-nox python3-numpy binutils
          clang libclang-rt-dev zlib1g-dev dataset-fashion-mnist munge slurmctld slurmd slurm-client)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: run as root (or install these packages yourself): ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-}" = "--deps" ] && exit 0

# Find the CUDA toolkit where it usually lives if nvcc is not on PATH.
if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda /usr/local/cuda-13.0 /usr/local/cuda-12; do
    [ -x "$d/bin/nvcc" ] && export PATH="$d/bin:$PATH" && break
  done
fi
if ! command -v nvcc >/dev/null 2>&1; then
  echo "setup: the CUDA toolkit was not found (looked for nvcc on PATH and in /usr/local/cuda)." >&2
  echo "       Install it from NVIDIA (https://developer.nvidia.com/cuda-downloads); no GPU is needed." >&2
  exit 1
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
