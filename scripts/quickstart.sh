#!/usr/bin/env bash
# The main job: set up, build, then train a 32x32 class-conditional GAN on the embedded
# Fashion-MNIST for a bounded time (default 10 minutes; configs/fmnist32_quickstart.yaml is
# sized for a 2-core machine).
#   scripts/quickstart.sh [CONFIG] [key=value ...]
#   MINUTES (default 10), OUT (default runs/quickstart), BUILD_DIR (default build).
# Running it again resumes from the newest checkpoint in OUT for another MINUTES.
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
"$build/hamgan" train --config "$config" --out "$out" \
  train.time_limit_minutes="$minutes" "$@"

echo
echo "quickstart: done. Look in $out/:"
echo "  samples/samples_*.png   sample grids (one row per class, fixed z; EMA generator)"
echo "  metrics.jsonl           losses, mean D outputs, learning rates, images/s per report"
echo "  checkpoints/ckpt_*.pt   the last checkpoints (run the script again to resume)"
ls -1 "$out/samples" | tail -n 3 | sed "s|^|  latest: $out/samples/|"
