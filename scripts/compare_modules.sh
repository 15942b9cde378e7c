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
#   CLASSIFIER (default ~/.cache/hamgan/classifier_fmnist32_quickstart.pt, trained if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
config=configs/fmnist32_quickstart.yaml
modules=(${MODULES:-none self_attention ham_nmf ham_vq ham_cd kao_kv sao stt_dense})
jobs=${JOBS:-2}
out=${OUT:-runs/modules}
build=${BUILD_DIR:-build}
clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_$(basename "$config" .yaml).pt}
real=$("$build/hamgan" info --config "$config" --get data.path)
mkdir -p "$out"
if [ ! -f "$clf" ]; then
  mkdir -p "$(dirname "$clf")"
  "$build/hamgan" classifier train --config "$config" --out "$clf"
fi

one() {  # train (or resume) and score one module; the log goes to OUT/MODULE.log
  local m=$1 dir=$out/$1
  "$build/hamgan" train --config "$config" --out "$dir" --threads 1 train.iterations="${ITERS:-6000}" \
    generator.context.type="$m" "${@:2}" >> "$dir.log" 2>&1
  "$build/hamgan" fid --real "$real" --run "$dir" --features "$clf" -n "${N:-1000}" --threads 1 >> "$dir.log" 2>&1
  echo "compare_modules: $m done ($(tail -n 1 "$dir/fid.csv" | cut -d, -f1,2,7))"
}

pids=()
for ((j = 0; j < jobs; ++j)); do
  (for ((i = j; i < ${#modules[@]}; i += jobs)); do one "${modules[i]}" "$@"; done) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
runs=()
for m in "${modules[@]}"; do runs+=(--run "$out/$m"); done
"$build/hamgan" compare "${runs[@]}" --out "$out/compare"
