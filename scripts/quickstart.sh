#!/usr/bin/env bash
# The main job: set up, build, then train a 32x32 class-conditional GAN on the embedded
# Fashion-MNIST (configs/fmnist32_quickstart.yaml, sized for a 2-core machine) and score it.
#   scripts/quickstart.sh [CONFIG] [key=value ...]
# The budget is iterations by CPU class, at constant learning rates: the preset's own 5,000
# where the CPU has native bf16 (bf16 autocast; about 8 min on the slower of two 2-core AVX-512
# BF16 EPYCs measured), 3,300 in fp32 elsewhere (about 20 min on its AVX2 machines, estimated).
# Where they take less than the class's minutes (8 in bf16, 20 in fp32), the preset resumes
# and trains on at the same rates for the rest of those minutes, up to 8,000 iterations: a
# resumed run trains as an unbroken one, so the result is bit for bit what ITERATIONS=N gives for
# the N reached. After a short warm-up the trainer prints its speed and when it will finish.
#   ITERATIONS (default by CPU, as above, for the preset; another CONFIG's own
#   train.iterations; exactly these, no top-up), MINUTES (optional cap: the run stops by then
#   if that comes first; no top-up), FILL_MINUTES (the minutes topped up to; 0: none; default by
#   CPU, as above, for the preset, else 0), OUT (default runs/quickstart), BUILD_DIR (default
#   build), NPROC (default 2: data-parallel ranks of one thread each, twice the images/s of one
#   two-thread process for a model this small),
#   CLASSIFIER (default ~/.cache/hamgan/classifier_<config>.pt; SCORE=0 skips scoring).
# Running it again resumes an unfinished run from the newest checkpoint in OUT (a larger
# ITERATIONS trains a finished one further). A preset run that ends short of 8,000 iterations,
# where every seed measured varied within a class as the results page asks, says so and what
# training on costs.
# Then scores every checkpoint with a domain classifier (`hamgan fid --features`, 2,000 samples:
# domain FID, class accuracy, and precision/recall and density/coverage in its features, so
# variety shows beside fidelity, into OUT/scores.csv and OUT/scores.png); the classifier is trained once
# (about 2 minutes) and cached.
set -euo pipefail
cd "$(dirname "$0")/.."

config=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$config" ]; then
  config=configs/fmnist32_quickstart.yaml
fi
out=${OUT:-runs/quickstart}
build=${BUILD_DIR:-build}

source scripts/lib/machine_facts.sh
source scripts/lib/classifier.sh
source scripts/lib/run_progress.sh

scripts/setup.sh
"$build/hamgan" --version  # for the reader; the decisions below read `hamgan info --json`
# The iterations by CPU class (the preset's own in bf16, fewer in fp32; another CONFIG's own) and
# the ranks by GPU count: scripts/lib/machine_facts.sh.
facts=$(machine_facts "$build/hamgan")
nproc=$(quickstart_ranks "$facts")
iterations=$(quickstart_iterations "$facts" "$build/hamgan" "$config")
class=(train.iterations="$iterations")
fill=$(quickstart_fill_minutes "$facts" "$build/hamgan" "$config" "$@")  # checked before training
echo "quickstart: training $config with ${class[*]}${MINUTES:+ (at most $MINUTES min)} into $out/ ($nproc rank(s))"
"$build/hamgan" train --config "$config" --out "$out" --nproc "$nproc" \
  "${class[@]}" train.time_limit_minutes="${MINUTES:-0}" "$@"

# The top-up: the rest of the class's minutes, at the same constant rates, up to
# quickstart_fill_iterations (scripts/lib/machine_facts.sh says when there is none), only after
# the class's iterations are done (a run stopped sooner, by Ctrl-C or MINUTES, stays stopped).
if [ "$fill" != 0 ]; then
  read -r spent reached < <(run_progress "$out")
  left=$(python3 -c "print(round(max(0.0, $fill - $spent / 60), 2))")
  if [ "$reached" -ge "$iterations" ] && [ "$reached" -lt "$quickstart_fill_iterations" ] &&
    python3 -c "import sys; sys.exit($left < 0.5)"; then
    echo "quickstart: $reached iterations in $(python3 -c "print(round($spent / 60, 1))") of the class's $fill min;" \
      "training on for $left min more, up to $quickstart_fill_iterations iterations (FILL_MINUTES=0: none)"
    "$build/hamgan" train --config "$config" --out "$out" --nproc "$nproc" \
      train.iterations="$quickstart_fill_iterations" train.time_limit_minutes="$left" "$@"
  fi
fi

if [ "${SCORE:-1}" != 0 ]; then
  clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_$(basename "$config" .yaml).pt}
  ensure_classifier "$build/hamgan" "$config" "$clf"
  "$build/hamgan" fid --real "$("$build/hamgan" info --config "$config" --get data.path)" --run "$out" \
    --features "$clf" -n 2000 --metrics fid,precision,recall,density,coverage,class_acc
fi

# A run short of the iterations where the preset's variety was measured says so, and what
# training on costs here (scripts/lib/machine_facts.sh).
read -r spent reached < <(run_progress "$out")
more=$(quickstart_variety_iterations "$config" "$reached")
if [ -n "$more" ]; then
  echo "quickstart: $reached iterations; at $more iterations every seed measured printed recall >= 0.5 and coverage >= 0.8" \
    "(docs/results/quickstart/variety/README.md). The same command with ITERATIONS=$more trains this run on:" \
    "about $(python3 -c "print(round(($more - $reached) * $spent / $reached / 60))") min more here."
fi

echo
echo "quickstart: done. Look in $out/:"
echo "  samples/samples_*.png   sample grids (one row per class, fixed z; EMA generator)"
echo "  metrics.jsonl           losses, mean D outputs, learning rates, images/s per report"
echo "  checkpoints/ckpt_*.pt   the last checkpoints (run the script again to resume)"
[ "${SCORE:-1}" != 0 ] && echo "  scores.csv, scores.png  domain FID, class accuracy, precision/recall, density/coverage of every checkpoint (EMA generator)"
[ -f "$out/real_scores.csv" ] && echo "  real_scores.csv         the same scores of 2,000 real test images: the line beside the samples' in scores.png"
[ -d "$out/tensorboard" ] && echo "  tensorboard/            the losses, scores, real test images' line and grids for \`tensorboard --logdir $out\`"
ls -1 "$out/samples" | tail -n 3 | sed "s|^|  latest: $out/samples/|"
