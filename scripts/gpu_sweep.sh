#!/usr/bin/env bash
# Trains variants of one config side by side on one GPU machine and scores every checkpoint of
# each: a lease's minutes turned into many CPU runs' worth of curves. With constant rates a run's
# checkpoint at iteration N is what a run of N iterations ends with, so one long run per variant
# gives its whole curve (coverage, recall, class accuracy against iterations); the CPU cost of an
# iteration (`hamgan bench train`) turns that into what fits a CPU class's wall-clock budget.
#   scripts/gpu_sweep.sh JOBS [OUT]   (default runs/gpu_sweep)
#   JOBS        a file, one variant per line: NAME then its KEY=VALUE overrides ('#' comments)
#   CONFIG      the config every variant starts from (default configs/fmnist32_quickstart.yaml)
#   SLOTS       variants trained at once (default 7); NPROC ranks each (default 2, Gloo on the
#               one GPU, batch_size per rank as on the CPU)
#   ITERATIONS  each variant's length (default 6000); DEADLINE seconds for the whole sweep
#               (default 420), of which SCORE_S (default 75) are kept for the last scoring:
#               a variant still training then stops at its time limit with a checkpoint, and
#               every training and scoring is killed at the deadline whatever it is doing
#   DATA REAL FEATURES   training data, the scoring's real images and the domain classifier
#               (defaults: the GPU bundle's Fashion-MNIST and classifier)
#   N METRICS   samples per scoring and the metrics (default 2000; the variety page's set)
#   THREADS     CPU threads per rank (default 1: a GPU rank's host work is one stream of launches;
#               LibTorch's default of every core per process oversubscribes SLOTS x NPROC ranks)
#   SCORE_EVERY SCORE_THREADS   seconds between scorings of a run's new checkpoints while it
#               trains (default 60) and the scorer's CPU threads (default 2)
#   BIN DEVICE  the hamgan binary (default build-gpu/hamgan) and train.device (default cuda)
#   EXTRA       overrides for every variant, before its own (e.g. "train.amp=false")
#   EXPORT      a folder that gets summary.csv and sweep.tar.gz (every run's scores.csv,
#               metrics.jsonl, last grid and logs) whenever a variant ends and every
#               EXPORT_EVERY seconds (default 60)
set -uo pipefail
cd "$(dirname "$0")/.."
jobs_file=${1:?usage: scripts/gpu_sweep.sh JOBS [OUT]}
out=${2:-runs/gpu_sweep}
config=${CONFIG:-configs/fmnist32_quickstart.yaml}
slots=${SLOTS:-7}
nproc=${NPROC:-2}
iterations=${ITERATIONS:-6000}
deadline=$((SECONDS + ${DEADLINE:-420}))
score_s=${SCORE_S:-75}
data=${DATA:-.gpu_bundle/data/fashion-mnist}
real=${REAL:-$data}
features=${FEATURES:-.gpu_bundle/classifier_fmnist32_quickstart.pt}
n=${N:-2000}
metrics=${METRICS:-fid,precision,recall,density,coverage,class_acc}
bin=${BIN:-build-gpu/hamgan}
threads=${THREADS:-1}
score_threads=${SCORE_THREADS:-2}
score_every=${SCORE_EVERY:-60}
device=${DEVICE:-cuda}
export=${EXPORT:-}
read -r -a extra <<< "${EXTRA:-}"
for f in "$jobs_file" "$config" "$features" "$bin"; do
  [ -e "$f" ] || { echo "gpu_sweep: $f not found" >&2; exit 1; }
done
rm -rf "$out"; mkdir -p "$out/runs" "$out/logs"
grep -vE '^\s*(#|$)' "$jobs_file" > "$out/queue"
echo "name,status,iterations,train_s,iterations_per_s,last_score_s" > "$out/summary.csv"
echo 0 > "$out/next"

export_results() {
  [ -n "$export" ] || return 0
  mkdir -p "$export"
  (
    flock 9
    cp "$out/summary.csv" "$export/summary.csv"
    (cd "$out" && tar -czf "$export/sweep.tar.gz.tmp" summary.csv logs \
      $(ls -d runs/*/scores.csv runs/*/metrics.jsonl runs/*/last_grid.png 2>/dev/null))
    mv "$export/sweep.tar.gz.tmp" "$export/sweep.tar.gz"
  ) 9> "$out/export.lock"
}
# next_job: the queue's next line, or nothing; one slot at a time.
next_job() {
  (
    flock 9
    local i; i=$(cat "$out/next")
    echo $((i + 1)) > "$out/next"
    sed -n "$((i + 1))p" "$out/queue"
  ) 9> "$out/queue.lock"
}
# score SECONDS: hamgan fid --run on the checkpoints not yet in the run's scores.csv, within SECONDS.
score() {
  local limit=$1
  [ "$limit" -ge 5 ] || return 1
  timeout --kill-after=5 "$limit" "$bin" fid --real "$real" --run "$run" --features "$features" -n "$n" \
    --metrics "$metrics" --device "$device" --batch 500 --threads "$score_threads" >> "$log.fid.txt" 2>&1
}
# run_job NAME [KEY=VALUE...]: trains the variant until ITERATIONS or its time limit (the deadline
# less SCORE_S), scoring its new checkpoints every SCORE_EVERY seconds meanwhile, then the rest.
run_job() {
  local name=$1; shift
  run=$out/runs/$name log=$out/logs/$name
  local left=$((deadline - SECONDS - score_s))
  [ "$left" -ge 30 ] || { echo "$name,skipped (deadline),,,," >> "$out/summary.csv"; return; }
  local t0=$SECONDS
  timeout --kill-after=10 $((left + 30)) "$bin" train -c "$config" --out "$run" --nproc "$nproc" \
    --threads "$threads" --workers 1 "data.path=$data" "train.device=$device" train.dist_backend=gloo \
    "train.iterations=$iterations" "train.time_limit_minutes=$(awk "BEGIN{print $left / 60}")" \
    train.tensorboard=false "${extra[@]}" "$@" > "$log.train.txt" 2>&1 &
  local tpid=$!
  local next_score=$((SECONDS + score_every))
  while kill -0 "$tpid" 2>/dev/null; do
    sleep 2
    if [ "$SECONDS" -ge "$next_score" ] && kill -0 "$tpid" 2>/dev/null; then
      score $((deadline - SECONDS))
      next_score=$((SECONDS + score_every))
    fi
  done
  wait "$tpid"
  local rc=$? train_s=$((SECONDS - t0))
  local reached; reached=$(ls "$run/checkpoints" 2>/dev/null | sed -n 's/^ckpt_0*\([0-9]*\)\.pt$/\1/p' | sort -n | tail -1)
  local t1=$SECONDS
  score $((deadline - SECONDS))
  local frc=$?
  local grid; grid=$(ls "$run/samples"/samples_*.png 2>/dev/null | tail -1)
  [ -z "$grid" ] || cp "$grid" "$run/last_grid.png"
  local status=ok
  [ "$rc" = 0 ] || status="train exit $rc"
  [ "$frc" = 0 ] || status="$status; fid exit $frc"
  echo "$name,$status,${reached:-0},$train_s,$(awk "BEGIN{printf \"%.2f\", ${reached:-0} / ($train_s + 0.001)}"),$((SECONDS - t1))" >> "$out/summary.csv"
  export_results
}
slot() {
  local line
  while line=$(next_job) && [ -n "$line" ]; do
    # shellcheck disable=SC2086  # a job line is NAME then its overrides, split on spaces
    run_job $line
  done
}
# What has run comes back even when the call is cut short: the export every EXPORT_EVERY seconds.
( while sleep "${EXPORT_EVERY:-60}"; do export_results; done ) &
exporter=$!
slot_pids=()
for _ in $(seq "$slots"); do slot & slot_pids+=($!); sleep 2; done
wait "${slot_pids[@]}"
kill "$exporter" 2>/dev/null
export_results
cat "$out/summary.csv"
