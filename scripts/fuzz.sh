#!/usr/bin/env bash
# Builds the libFuzzer targets with clang + ASan/UBSan and runs each for SECONDS (default 180).
#   scripts/fuzz.sh [SECONDS]   -> build-fuzz/, corpora in build-fuzz/corpus/<target>
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-180}
build=build-fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAMGAN_BUILD_TESTS=OFF \
    -DHAMGAN_BUILD_FUZZ=ON >/dev/null
fi
cmake --build "$build" --target fuzz_torch_file fuzz_npz -j"$(nproc)"
# Seeds: small valid files written by Debian's python (if present) and the real weight-file head.
mkdir -p "$build/corpus/torch_file" "$build/corpus/npz"
/usr/bin/python3 - "$build/corpus" <<'PY' || true
import collections, sys, numpy as np, torch
d = sys.argv[1]
t = {"a": torch.randn(2, 3), "b": torch.arange(4), "c": torch.randn(4, 4).t()}
torch.save(t, f"{d}/torch_file/dict.pt", _use_new_zipfile_serialization=False)
torch.save(collections.OrderedDict(t), f"{d}/torch_file/odict.pt", _use_new_zipfile_serialization=False)
torch.save(torch.nn.Conv2d(1, 2, 3).state_dict(), f"{d}/torch_file/module.pt", _use_new_zipfile_serialization=False)
np.savez(f"{d}/npz/stored.npz", mu=np.zeros(3), sigma=np.eye(3))
np.savez_compressed(f"{d}/npz/compressed.npz", mu=np.zeros(3), sigma=np.eye(3))
PY
head -c 4096 tests/fixtures/pt_inception-2015-12-05-6726825d.head-818371.pth \
  > "$build/corpus/torch_file/pt_inception_head.pth" 2>/dev/null || true
for t in torch_file npz; do
  echo "== fuzz_$t for ${secs}s"
  ASAN_OPTIONS=detect_leaks=1 "$build/tests/fuzz/fuzz_$t" "$build/corpus/$t" -max_total_time="$secs" -max_len=65536 \
    -rss_limit_mb=4096 -print_final_stats=1 2>&1 | grep -E 'stat::number_of_executed_units|stat::peak_rss|ERROR|SUMMARY|Done' || true
done
