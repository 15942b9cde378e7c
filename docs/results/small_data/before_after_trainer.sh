#!/usr/bin/env bash
# Before/after the trainer's split and its per-Trainer kernel choice: the quickstart's run as the
# quickstart trains it (two ranks), 60 iterations with checkpoints at 30 and 60, from the hamgan
# binary $1 into $2; run it with two builds, then compare_runs.py A B.
#   docs/results/small_data/before_after_trainer.sh BUILD/hamgan OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$1; out=$2
rm -rf "$out"
"$bin" train -c "$root/configs/fmnist32_quickstart.yaml" --out "$out" --nproc 2 train.iterations=60 \
  train.checkpoint_every=30 train.log_every=10 > "$out.log" 2>&1
