#!/usr/bin/env bash
# The main job: set up, build, then train a 32x32 class-conditional GAN on the embedded
# Fashion-MNIST for a bounded time (default 10 minutes; configs/fmnist32_quickstart.yaml is
# sized for a 2-core machine).
#   scripts/quickstart.sh [CONFIG] [key=value ...]
#   MINUTES (default 10), OUT (default runs/quickstart), BUILD_DIR (default build),
#   NPROC (default 2: data-parallel ranks of one thread each, twice the images/s of one
#   two-thread process for a model this small),
#   CLASSIFIER (default ~/.cache/hamgan/classifier_<config>.pt; SCORE=0 skips scoring).
# Running it again resumes from the newest checkpoint in OUT for another MINUTES.
# Then scores every checkpoint with a domain classifier (`hamgan fid --features`: domain FID
# and class accuracy into OUT/fid.csv and OUT/fid.png); the classifier is trained once
# (about 2 minutes) and cached.
set -euo pipefail
cd "$(dirname "$0")/.."

config=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$config" ]; then
  config=configs/fmnist32_quickstart.yaml
fi
minutes=${MINUTES:-10}
out=${OUT:-runs/quickstart}
build=${BUILD_DIR:-build}

echo "quickstart: training $config for about $minutes minutes (plus setup and build) into $out/"
scripts/setup.sh
"$build/hamgan" train --config "$config" --out "$out" --nproc "${NPROC:-2}" \
  train.time_limit_minutes="$minutes" "$@"

if [ "${SCORE:-1}" != 0 ]; then
  clf=${CLASSIFIER:-$HOME/.cache/hamgan/classifier_$(basename "$config" .yaml).pt}
  if [ ! -f "$clf" ]; then
    echo "quickstart: training the domain classifier $clf (once; it only measures)"
    mkdir -p "$(dirname "$clf")"
    "$build/hamgan" classifier train --config "$config" --out "$clf"
  fi
  "$build/hamgan" fid --real "$("$build/hamgan" info --config "$config" --get data.path)" --run "$out" \
    --features "$clf" -n 1000
fi

echo
echo "quickstart: done. Look in $out/:"
echo "  samples/samples_*.png   sample grids (one row per class, fixed z; EMA generator)"
echo "  metrics.jsonl           losses, mean D outputs, learning rates, images/s per report"
echo "  checkpoints/ckpt_*.pt   the last checkpoints (run the script again to resume)"
[ "${SCORE:-1}" != 0 ] && echo "  fid.csv, fid.png        domain FID and class accuracy of every checkpoint (EMA generator)"
ls -1 "$out/samples" | tail -n 3 | sed "s|^|  latest: $out/samples/|"
