#!/usr/bin/env bash
# Installs, builds, and runs the whole test suite (oracles included) with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${BUILD_DIR:-build}
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
