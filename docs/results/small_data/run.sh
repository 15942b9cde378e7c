#!/usr/bin/env bash
# The small-data benchmark (docs/results/small_data/README.md): the quickstart's model on the first
# 1,000 and 5,000 class-balanced Fashion-MNIST training images (data.limit), four set-ups x three
# seeds, two runs at a time with one thread each; then every run's last checkpoint scored against
# the 10,000 test images in the domain classifier's features, and D's train / held-out gap over
# the run (`hamgan dgap`); writes table_ITERATIONS.md and scores_ITERATIONS.csv here. Usage: run.sh BIN OUT [ITERATIONS]   (resumable: finished runs are kept;
# SIZES="1000 5000", SETUP_NAMES="none diffaug ada r3gan_ada" and SEEDS="0 1 2" by default)
set -euo pipefail
bin=$(realpath "$1"); out=$2; iterations=${3:-600}
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../../.." && pwd)
mkdir -p "$out"
# The reference: Fashion-MNIST's test split as a data source of its own (its files under the
# training files' names), so that `fid --real` draws from the 10,000 held-out images.
src=/usr/share/datasets/fashion-mnist ref=$out/fmnist_test
mkdir -p "$ref"
ln -sf "$src/t10k-images-idx3-ubyte.gz" "$ref/train-images-idx3-ubyte.gz"
ln -sf "$src/t10k-labels-idx1-ubyte.gz" "$ref/train-labels-idx1-ubyte.gz"
ln -sf "$src/t10k-images-idx3-ubyte.gz" "$ref/t10k-images-idx3-ubyte.gz"
ln -sf "$src/t10k-labels-idx1-ubyte.gz" "$ref/t10k-labels-idx1-ubyte.gz"

# name|overrides, in the tables' order. The quickstart's batch of 32 in one process; ADA's p may
# cross 0..1 in 10k images (a few hundred iterations, not the paper's 500k: these runs see ~20k).
setup_lines=(
  "none|"
  "diffaug|train.diffaug=color,translation,cutout"
  "ada|train.ada=bgc train.ada_kimg=10"
  "r3gan_ada|train.ada=bgc train.ada_kimg=10 train.loss=rpgan train.r1_gamma=0.05 train.r2_gamma=0.05"
  # ADA at a fixed p (the heuristic off): what the pipeline buys where r_t never switches it on
  "ada_p0.2|train.ada=bgc train.ada_target=0 train.ada_p=0.2"
  "ada_p0.4|train.ada=bgc train.ada_target=0 train.ada_p=0.4"
  # the ADA paper's own loss, where r_t = E[sign(D(x))] is the sign of D's logit on the reals
  "ns|train.loss=nonsaturating"
  "ns_ada|train.loss=nonsaturating train.ada=bgc train.ada_kimg=10"
)
declare -A setups=()
setup_order=()
for line in "${setup_lines[@]}"; do
  setups[${line%%|*}]=${line#*|}
  setup_order+=("${line%%|*}")
done
setup_names=${SETUP_NAMES:-none diffaug ada r3gan_ada}
for setup in $setup_names; do
  [ -n "${setups[$setup]+set}" ] || { echo "run.sh: SETUP_NAMES: no set-up '$setup' (expected: ${setup_order[*]})" >&2; exit 2; }
done
source "$repo/scripts/lib/classifier.sh"
config=$repo/configs/fmnist32_quickstart.yaml
clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_fmnist32_quickstart.pt}
ensure_classifier "$bin" "$config" "$clf"
jobs=()
for n in ${SIZES:-1000 5000}; do
  for setup in $setup_names; do
    for seed in ${SEEDS:-0 1 2}; do
      jobs+=("$n $setup $seed")
    done
  done
done
run_one() {
  local n=$1 setup=$2 seed=$3 dir=$out/n$1_$2_s$3
  [ -f "$dir/scores.csv" ] && [ -f "$dir/d_gap.csv" ] && return 0
  # shellcheck disable=SC2086
  "$bin" train -c "$config" --out "$dir" --threads 1 data.limit="$n" train.seed="$seed" \
    train.batch_size=32 train.iterations="$iterations" train.checkpoint_every=$((iterations / 4)) \
    train.sample_every="$iterations" train.log_every=50 train.tensorboard=false ${setups[$setup]} > "$dir.log" 2>&1
  "$bin" fid --run "$dir" --real "$ref" --features "$clf" -n 2000 --threads 1 \
    --metrics fid,recall,coverage,class_acc >> "$dir.log" 2>&1
  "$bin" dgap --run "$dir" -n 1000 --threads 1 >> "$dir.log" 2>&1
  echo "done $dir"
}
export -f run_one
export bin out iterations config clf ref
for j in "${jobs[@]}"; do echo "$j"; done |
  SETUPS=$(declare -p setups) xargs -P 2 -L 1 bash -c 'eval "$SETUPS"; run_one "$@"' _
python3 "$here/summarise.py" "$out" "$iterations" "${setup_order[@]}" > "$here/table_$iterations.md"
cat "$here/table_$iterations.md"
