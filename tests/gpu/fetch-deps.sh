#!/usr/bin/env bash
# fetch-deps.sh: on a machine with Debian's package access, downloads the .deb
# files that tests/gpu/check.sh unpacks on a GPU machine without package access
# (cJSON; Fashion-MNIST for harness train's comparison with PyTorch; the rest of
# what harness needs comes with the CUDA toolkit). They land
# in .deps/, which git ignores; carry that folder with the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps
cd .deps
apt-get download libcjson1 libcjson-dev dataset-fashion-mnist
ls -la
