#!/usr/bin/env bash
# Convergence of the context modules side by side (docs/modules/): trains
# configs/fmnist32_quickstart.yaml once per module (generator.context.type = MODULE, all else
# equal, same seed) for ITERS iterations, JOBS runs at a time of one thread each, scores every
# checkpoint with the domain classifier (`hamgan fid --run --features`), then writes
# OUT/compare.png and OUT/compare.csv (`hamgan compare`). Resumable: a finished run is kept,
# an interrupted one resumes from its newest checkpoint, scored checkpoints are not rescored.
#   scripts/compare_modules.sh [key=value ...]      (extra overrides for every run)
#   MODULES (default: none self_attention ham_nmf ham_vq ham_cd kao_kv sao stt_dense),
#   ITERS (6000), JOBS (2), OUT (runs/modules), BUILD_DIR (build), N (samples per score, 1000),
#   CLASSIFIER (default ~/.cache/hamgan/classifier_fmnist32_quickstart.pt, trained if missing),
#   CONFIG (configs/fmnist32_quickstart.yaml, ch 12; docs/results/modules/ used ch 16;
#   configs/fmnist32_long.yaml, ch 16, is the recipe of docs/results/ranking/),
#   SEEDS (e.g. "0 1 2": runs OUT/MODULE_sSEED with train.seed=SEED, then the mean +- sd table
#   and band figure of `hamgan compare --seeds`, OUT/seed_table.md and .svg; unset: one run per
#   module, OUT/MODULE, the config's seed)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/classifier.sh
config=${CONFIG:-configs/fmnist32_quickstart.yaml}
modules=(${MODULES:-none self_attention ham_nmf ham_vq ham_cd kao_kv sao stt_dense})
jobs=${JOBS:-2}
out=${OUT:-runs/modules}
build=${BUILD_DIR:-build}
clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_fmnist32_quickstart.pt}
real=$("$build/hamgan" info --config "$config" --get data.path)
mkdir -p "$out"
ensure_classifier "$build/hamgan" "$config" "$clf"

# The runs: "MODULE" (the config's seed) or "MODULE SEED" each, seed by seed, so that an
# interrupted sweep leaves whole seeds of every module rather than all seeds of a few.
cases=()
if [ -z "${SEEDS:-}" ]; then
  cases=("${modules[@]}")
else
  for s in $SEEDS; do for m in "${modules[@]}"; do cases+=("$m $s"); done; done
fi

one() {  # train (or resume) and score one run; the log goes to OUT/NAME.log
  local m=$1 seed=${2:-} name=$1 extra=()
  if [ -n "$seed" ]; then name=${m}_s$seed; extra=(train.seed="$seed"); fi
  local dir=$out/$name
  "$build/hamgan" train --config "$config" --out "$dir" --threads 1 train.iterations="${ITERS:-6000}" \
    generator.context.type="$m" "${extra[@]}" "${OVERRIDES[@]}" >> "$dir.log" 2>&1
  "$build/hamgan" fid --real "$real" --run "$dir" --features "$clf" -n "${N:-1000}" --threads 1 >> "$dir.log" 2>&1
  echo "compare_modules: $name done ($(python3 -c 'import csv, sys
row = list(csv.DictReader(open(sys.argv[1])))[-1]  # scores.csv read by its header, the last checkpoint
print(", ".join(k + " " + row.get(k, "-") for k in ("iteration", "fid", "class_acc")))' "$dir/scores.csv"))"
}

OVERRIDES=("$@")
pids=()
for ((j = 0; j < jobs; ++j)); do
  (for ((i = j; i < ${#cases[@]}; i += jobs)); do one ${cases[i]}; done) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
runs=()
for c in "${cases[@]}"; do set -- $c; runs+=(--run "$out/$1${2:+_s$2}"); done
if [ -z "${SEEDS:-}" ]; then
  "$build/hamgan" compare "${runs[@]}" --out "$out/compare"
else
  "$build/hamgan" compare --seeds "$out" --out "$out/seed_table"
fi
