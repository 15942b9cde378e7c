#!/usr/bin/env bash
# The two LibTorch builds side by side on this CPU: `hamgan bench train` of each config with
# build/ (Debian 1.13) and build-torch2/ (pip 2.x), interleaved round by round so that both
# see the same machine load. Prints one line per run and the median per build and config.
#   scripts/bench_builds.sh [ROUNDS] [CONFIG...]   (default 3 rounds, fmnist32 hamgan + sagan)
#   THREADS (default: all cores), ITERS (default 5), WARMUP (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
[ $# -gt 0 ] && shift
configs=("$@")
((${#configs[@]})) || configs=(configs/fmnist32_hamgan.yaml configs/fmnist32_sagan.yaml)
threads=${THREADS:-$(nproc)}
builds=(build build-torch2)
for b in "${builds[@]}"; do
  [ -x "$b/hamgan" ] || { echo "bench_builds: $b/hamgan missing (scripts/setup.sh, LIBTORCH=pip scripts/setup.sh)" >&2; exit 1; }
  echo "$b: $("$b/hamgan" --version)"
done
results=$(mktemp)
for ((r = 1; r <= rounds; ++r)); do
  for c in "${configs[@]}"; do
    for b in "${builds[@]}"; do
      ms=$("$b/hamgan" bench train -c "$c" --iters "${ITERS:-5}" --warmup "${WARMUP:-1}" --threads "$threads" --json |
           python3 -c 'import json, sys; print(json.load(sys.stdin)["ms_per_iteration"])')
      echo "round $r  $b  $c  $ms ms/it" | tee -a "$results"
    done
  done
done
echo "median over $rounds rounds (ms/iteration):"
for c in "${configs[@]}"; do
  for b in "${builds[@]}"; do
    med=$(awk -v b="$b" -v c="$c" '$3 == b && $4 == c {print $5}' "$results" | sort -n |
          awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
    echo "  $c  $b  $med"
  done
done
rm -f "$results"
