#!/usr/bin/env bash
# Installs, builds, and runs the whole test suite (oracles included) with CTest.
#   LIBTORCH=debian (default): Debian's LibTorch 1.13 in build/.
#   LIBTORCH=pip: the pinned PyTorch 2.x CUDA wheel in build-torch2/ (scripts/setup.sh); the
#     tests execute on the CPU when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ "${LIBTORCH:-debian}" = pip ]; then build=${BUILD_DIR:-build-torch2}; else build=${BUILD_DIR:-build}; fi
"$build/hamgan" --version
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
