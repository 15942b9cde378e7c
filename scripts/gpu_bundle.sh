#!/usr/bin/env bash
# Packs what a bare, offline GPU machine lacks to build and check hamgan into one ignored folder
# that travels with the working tree (scripts/gpu_check.sh --bare reads it):
#   root/   the headers, CMake configs and shared libraries of exactly the Debian packages below,
#           unpacked with `dpkg -x` (no system state is touched), absolute symlinks made relative;
#   data/fashion-mnist/   the first TRAIN_N / TEST_N images of Debian's Fashion-MNIST (IDX, gzip);
#   MANIFEST.txt          package versions and sizes.
# PyTorch, CUDA, CMake, ninja and the C/C++ toolchain are the machine's own and are not packed.
#   scripts/gpu_bundle.sh [DIR]   (default .gpu_bundle; rebuilt from scratch each time)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-.gpu_bundle}
train_n=${TRAIN_N:-10000}
test_n=${TEST_N:-2000}
fmnist=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
# The build's libraries (CMakeLists.txt: yaml-cpp, cxxopts, Eigen, JPEG, ZLIB; stb headers in
# io/) and GoogleTest for the GPU tests. Runtime packages beside their -dev for the .so files.
packages=(libyaml-cpp-dev libyaml-cpp0.7 libcxxopts-dev libeigen3-dev libstb-dev
          libjpeg62-turbo-dev libjpeg62-turbo zlib1g-dev zlib1g libgtest-dev libgloo-dev)

[ -f "$fmnist/train-images-idx3-ubyte.gz" ] ||
  { echo "gpu_bundle: no Fashion-MNIST in $fmnist (apt-get install dataset-fashion-mnist, or FMNIST_DIR)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root" "$dir/data/fashion-mnist"
dir=$(cd "$dir" && pwd)
# apt's sandbox user cannot write into root's folders: download in a world-writable temp folder.
tmp=$(mktemp -d); chmod 777 "$tmp"; trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "${packages[@]}" >/dev/null 2>&1) ||
  { (cd "$tmp" && apt-get update -qq && apt-get download "${packages[@]}") >&2 ||
    { echo "gpu_bundle: apt-get download failed for: ${packages[*]}" >&2; exit 1; }; }
echo "# hamgan GPU bundle, $(date -u +%FT%TZ)" > "$dir/MANIFEST.txt"
for deb in "$tmp"/*.deb; do
  dpkg-deb -x "$deb" "$dir/root"
  dpkg-deb -f "$deb" Package Version | paste -sd' ' >> "$dir/MANIFEST.txt"
done
root=$dir/root
# Debian 12 ships some libraries under /lib: one lib folder, and symlinks inside the bundle.
if [ -d "$root/lib" ]; then cp -a "$root/lib/." "$root/usr/lib/"; rm -rf "$root/lib"; fi
while IFS= read -r link; do
  target=$(readlink "$link")
  case "$target" in
    /*) ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$root/usr/lib/${target#/lib/}")" "$link" ;;
  esac
done < <(find "$root" -type l)
rm -rf "$root/usr/share/doc" "$root/usr/share/lintian" "$root/usr/src"
# The libraries used from their headers alone (stb: io/stb_impl.cpp compiles it; Gloo: inside
# libtorch) keep -dev symlinks into runtime packages that are not packed: drop those links.
rm -f "$root/usr/lib/x86_64-linux-gnu/libstb.so" "$root/usr/lib/libgloo.so"
rm -rf "$root/usr/share/cmake/Gloo"
broken=$(find "$root" -xtype l)
[ -z "$broken" ] || { echo "gpu_bundle: broken symlinks: $broken" >&2; exit 1; }
# A private prefix: the multiarch headers (jconfig.h) join usr/include, which the build's
# targets name, instead of a folder only the system compiler's own search path knows.
if [ -d "$root/usr/include/x86_64-linux-gnu" ]; then
  cp -a "$root/usr/include/x86_64-linux-gnu/." "$root/usr/include/"
  rm -rf "$root/usr/include/x86_64-linux-gnu"
fi

# A slice of Fashion-MNIST in its own IDX format: the header's count rewritten, the rest cut.
python3 - "$fmnist" "$dir/data/fashion-mnist" "$train_n" "$test_n" <<'PY'
import gzip, struct, sys
src, dst, counts = sys.argv[1], sys.argv[2], {"train": int(sys.argv[3]), "t10k": int(sys.argv[4])}
for split, n in counts.items():
    for kind, item in (("images-idx3-ubyte", 28 * 28), ("labels-idx1-ubyte", 1)):
        raw = gzip.open(f"{src}/{split}-{kind}.gz").read()
        head = 16 if item > 1 else 8
        total = struct.unpack(">I", raw[4:8])[0]
        if n > total:
            sys.exit(f"gpu_bundle: {split} has {total} images, asked for {n}")
        out = raw[:4] + struct.pack(">I", n) + raw[8:head] + raw[head:head + n * item]
        with gzip.open(f"{dst}/{split}-{kind}.gz", "wb", compresslevel=9) as f:
            f.write(out)
PY
echo "fashion-mnist slice: $train_n train, $test_n test images" >> "$dir/MANIFEST.txt"
rm -rf "$dir/debs"

# What travels: the working tree (tracked + untracked, not ignored) and this folder.
tree=$( (git ls-files -z; git ls-files -z --others --exclude-standard) | du -cb --files0-from=- | tail -1 | cut -f1)
bundle=$(du -sb "$dir" | cut -f1)
total=$((tree + bundle))
printf 'gpu_bundle: %s: %.1f MiB; working tree %.1f MiB; travels %.1f MiB of 64\n' \
  "$dir" "$(echo "$bundle / 1048576" | bc -l)" "$(echo "$tree / 1048576" | bc -l)" \
  "$(echo "$total / 1048576" | bc -l)" | tee -a "$dir/MANIFEST.txt"
[ "$total" -le $((64 * 1048576)) ] || { echo "gpu_bundle: over the 64 MiB that may travel" >&2; exit 1; }
