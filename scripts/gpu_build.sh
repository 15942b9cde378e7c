#!/usr/bin/env bash
# Builds what the GPU check runs (the `hamgan` binary and the GPU tests of tests/cuda/) against
# the PyTorch of a Python on the machine, with no package manager: the other libraries come
# from the bundle of scripts/gpu_bundle.sh (a user's own machine with them installed may pass
# BUNDLE= to use the system's). Ninja on every core.
#   scripts/gpu_build.sh [--configure-only] [BUILD_DIR]   (default build-gpu)
#   TORCH_PYTHON   the Python whose torch to build against (default python3)
#   BUNDLE         the bundle folder (default .gpu_bundle); empty: the system's libraries
#   STRICT=1       audit that the build used nothing outside the bundle, that PyTorch, the CUDA
#                  toolkit and the C/C++ runtime: CMake fails on a resolved library or include
#                  folder elsewhere (HAMGAN_DEPS_ROOTS), and after the build every header the
#                  compiler read and every library the binary loads is checked the same way
#                  (what a bare machine without Debian's -dev packages would be missing).
set -euo pipefail
cd "$(dirname "$0")/.."
configure_only=0
if [ "${1:-}" = --configure-only ]; then configure_only=1; shift; fi
build=${1:-build-gpu}
py=${TORCH_PYTHON:-python3}
bundle=${BUNDLE-.gpu_bundle}
strict=${STRICT:-0}

read -r torch_version torch_cuda torch_prefix torch_cmake < <("$py" -W ignore -c '
import os, torch
print(torch.__version__, torch.version.cuda, os.path.dirname(torch.__file__), torch.utils.cmake_prefix_path)') ||
  { echo "gpu_build: $py cannot import torch" >&2; exit 1; }
echo "gpu_build: PyTorch $torch_version (CUDA $torch_cuda) at $torch_prefix"
# Unity batches of 4: on 16 cores more batches build side by side than the 2-core default of 12.
args=(-DCMAKE_BUILD_TYPE=Release -DHAMGAN_PCH=ON -DHAMGAN_UNITY_BATCH=4)
command -v ninja > /dev/null && args+=(-G Ninja) || echo "gpu_build: no ninja on PATH: Makefiles"
prefixes="$torch_prefix"
roots=("$torch_prefix" "$(dirname "$torch_prefix")/nvidia")
if [ -n "$bundle" ]; then
  [ -f "$bundle/MANIFEST.txt" ] || { echo "gpu_build: no bundle at '$bundle' (run scripts/gpu_bundle.sh, or BUNDLE= for the system's libraries)" >&2; exit 1; }
  bundle=$(cd "$bundle" && pwd)
  prefixes="$bundle/root/usr;$prefixes"
  roots+=("$bundle/root")
fi
if [ "$torch_cuda" != None ]; then
  nvcc=${CUDACXX:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
  [ -x "$nvcc" ] || { echo "gpu_build: torch is built with CUDA $torch_cuda but no nvcc is found (CUDACXX or CUDA_HOME)" >&2; exit 1; }
  cuda_root=$(dirname "$(dirname "$(realpath "$nvcc")")")
  # Hopper (H100, H200) and Ampere (A100): the kinds a user's cluster or the lent machine has.
  export TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-8.0;9.0}
  args+=(-DCUDAToolkit_ROOT="$cuda_root" -DCUDA_TOOLKIT_ROOT_DIR="$cuda_root" -DCMAKE_CUDA_COMPILER="$nvcc")
  roots+=("$cuda_root")
fi
args+=(-DCMAKE_PREFIX_PATH="$prefixes")
if [ "$strict" = 1 ]; then
  # Search only the prefixes given: nothing from the system's /usr or the environment's paths
  # (PATH's /usr/bin would make /usr a prefix); so the programs are named here.
  args+=(-DCMAKE_MAKE_PROGRAM="$(command -v ninja)" -DCMAKE_CXX_COMPILER="$(command -v "${CXX:-c++}")"
         -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF -DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF
         -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF
         "-DHAMGAN_DEPS_ROOTS=$(IFS=';'; echo "${roots[*]}")")
fi
mkdir -p "$build"
# A build folder configured from another checkout (a moved or copied tree) cannot be reused:
# CMake refuses the cache, and its objects belong to the other sources. Start it afresh.
if [ -f "$build/CMakeCache.txt" ]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  if [ -n "$home" ] && [ "$home" != "$(pwd)" ]; then
    echo "gpu_build: $build was configured for $home, not $(pwd): configuring it afresh"
    rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles" "$build/build.ninja" "$build/.ninja_deps" "$build/.ninja_log"
  fi
fi
t0=$SECONDS
cmake -S . -B "$build" "${args[@]}" ${HAMGAN_CMAKE_ARGS:-} > "$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; echo "gpu_build: configure failed (log: $build/configure.log)" >&2; exit 1; }
grep -E "^-- hamgan" "$build/configure.log" || true
echo "gpu_build: configured in $((SECONDS - t0)) s"
[ "$configure_only" = 1 ] && exit 0

t0=$SECONDS
targets=(hamgan $(cd tests/cuda && ls test_*.cpp | sed 's/\.cpp$//'))
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
echo "gpu_build: built ${targets[*]} in $((SECONDS - t0)) s on $(nproc) cores"

[ "$strict" = 1 ] || exit 0
# Everything the compiler read and the binaries load, outside the allowed roots, must be the
# C/C++ runtime (glibc, libstdc++, libgcc, the kernel headers): those a bare machine has too.
allowed='^(libc6|libc6-dev|libstdc\+\+[0-9-]*(dev)?|libgcc-s1|libgcc-[0-9]+-dev|linux-libc-dev|libcrypt-dev|libcrypt1|libgomp1)$'
outside() {
  local path
  while IFS= read -r path; do
    path=$(realpath -m "$path")
    local ok=0 r
    for r in "${roots[@]}"; do case "$path" in "$(realpath -m "$r")"/*) ok=1 ;; esac; done
    case "$path" in "$PWD"/*|/tmp/*) ok=1 ;; esac
    [ "$ok" = 1 ] || echo "$path"
  done
}
[ -f "$build/build.ninja" ] || { echo "gpu_build: STRICT=1 reads ninja's dependency log: install ninja" >&2; exit 1; }
headers=$(ninja -C "$build" -t deps | sed -n 's/^    \(\/.*\)/\1/p' | sort -u | outside)
libs=$(for t in "${targets[@]}"; do ldd "$(find "$build" -maxdepth 2 -name "$t" -type f -perm -u+x | head -1)" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p'; done | sort -u | outside)
missing=$(for t in "${targets[@]}"; do ldd "$(find "$build" -maxdepth 2 -name "$t" -type f -perm -u+x | head -1)" | grep "not found" | grep -v 'libcuda\.so' || true; done | sort -u)
bad=""
for f in $headers $libs; do
  pkg=$(dpkg -S "$f" 2>/dev/null | head -1 | cut -d: -f1 || true)
  # Debian's merged /usr: dpkg may know a library by its /lib path.
  [ -z "$pkg" ] && pkg=$(dpkg -S "${f/#\/usr\/lib\//\/lib\/}" 2>/dev/null | head -1 | cut -d: -f1 || true)
  echo "$pkg" | grep -qE "$allowed" || bad+="  $f (package ${pkg:-none})"$'\n'
done
echo "gpu_build: audit: $(echo "$headers" | grep -c . || true) headers and $(echo "$libs" | grep -c . || true) libraries from the C/C++ runtime, the rest inside: ${roots[*]}"
[ -z "$missing" ] || { echo "gpu_build: unresolved libraries:"$'\n'"$missing" >&2; exit 1; }
[ -z "$bad" ] || { echo "gpu_build: used from outside the bundle, PyTorch and the C/C++ runtime:"$'\n'"$bad" >&2; exit 1; }
echo "gpu_build: audit passed"
