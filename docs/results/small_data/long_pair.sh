#!/usr/bin/env bash
# The longer pair of the small-data page: 1,000 images, seed 0, 1,500 iterations (48 passes over
# them), no augmentation beside ADA as the small-data preset sets it, two runs at once with one
# thread each, scored as run.sh scores (run.sh first: it makes OUT/fmnist_test).
#   docs/results/small_data/long_pair.sh BIN RUN_SH_OUT OUT
set -euo pipefail
bin=$(realpath "$1"); ref=$2/fmnist_test; out=$3
repo=$(cd "$(dirname "$0")/../../.." && pwd)
clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_fmnist32_quickstart.pt}
mkdir -p "$out"
one() {
  local name=$1; shift
  "$bin" train -c "$repo/configs/fmnist32_quickstart.yaml" --out "$out/$name" --threads 1 data.limit=1000 \
    train.seed=0 train.batch_size=32 train.iterations=1500 train.checkpoint_every=250 train.sample_every=1500 \
    train.log_every=50 train.tensorboard=false "$@" > "$out/$name.log" 2>&1
  "$bin" fid --run "$out/$name" --real "$ref" --features "$clf" -n 2000 --threads 1 \
    --metrics fid,recall,coverage,class_acc >> "$out/$name.log" 2>&1
  "$bin" dgap --run "$out/$name" -n 1000 --threads 1 >> "$out/$name.log" 2>&1
}
one none &
one ada train.ada=bgc train.ada_kimg=10 &
wait
