#!/usr/bin/env bash
# Installs what hamgan needs (only what is missing), then configures and builds.
# Idempotent: on a ready machine it only re-configures and builds incrementally.
#   BUILD_DIR (default build), HAMGAN_CMAKE_ARGS (extra cmake arguments).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make libtorch-dev libopenblas0-pthread libgloo-dev libstb-dev libcxxopts-dev
          libeigen3-dev libyaml-cpp-dev libgtest-dev dataset-fashion-mnist
          libjpeg62-turbo-dev zlib1g-dev python3-pil
          python3 python3-torch python3-torchvision python3-scipy python3-numpy)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=${BUILD_DIR:-build}
# Configure every time: cheap, repairs a half-configured tree (e.g. a first
# configure run before libtorch-dev was installed) and picks up new source files.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${HAMGAN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
