#!/usr/bin/env bash
# The GPU check: one call on a GPU machine that turns it into evidence. It builds hamgan against
# the machine's own PyTorch (scripts/gpu_build.sh; the other libraries from the bundle of
# scripts/gpu_bundle.sh, so no network is needed), then runs its steps in order of value, each
# under its own time limit and inside an overall deadline, appending to OUT/summary.md the
# moment each ends: a lease cut short still returns what ran.
#   scripts/gpu_check.sh [--dry-run | --no-device] [OUT]   (default runs/gpu_check)
#   --no-device  every step that needs no GPU (build, audit, versions, the paper estimate,
#                the speed rows' packed data, the Inception weights); the device steps are
#                listed as skipped. This is the
#                bare machine simulated here (STRICT=1 TORCH_PYTHON=<venv with torch 2.11>).
#   --dry-run    print every step's command, run none
#   DEADLINE     seconds for the whole check, build included (default 480); BUILD_LIMIT the
#                build step's own (default 330: 16 cores; a 2-core machine needs ~900)
#   EXPORT       a folder that gets summary.md and logs.tar.gz after every step (the device
#                tool's $OUT: at most 8 files come back)
#   QUICK=1      a lease's second look (about 6 minutes with the build): the speed table's rows
#                for both configs, the switches' rows for HamGAN only and one value each (the one
#                `auto` does not pick: its `auto` is the bench row), the profile and the two-rank
#                run; no fmnist training, bf16-vs-fp32 comparison, sampling or FID
#   TWO_RANKS=0  leaves out the two-rank run
#   TORCH_PYTHON, BUNDLE, STRICT   as scripts/gpu_build.sh
#   HAMGAN_INCEPTION   real FID Inception weights; without them random ones are written
#                      (scripts/random_inception.py): the feature path and its speed, no FID value
set -uo pipefail
cd "$(dirname "$0")/.."
mode=run
case "${1:-}" in --dry-run) mode=dry; shift ;; --no-device) mode=nodev; shift ;; esac
out=${1:-runs/gpu_check}
deadline=$((SECONDS + ${DEADLINE:-480}))
build=${BUILD_DIR:-build-gpu}
bin=$build/hamgan
bundle=${BUNDLE-.gpu_bundle}
py=${TORCH_PYTHON:-python3}
summary=$out/summary.md
export=${EXPORT:-}

if [ "$mode" != dry ]; then
  rm -rf "$out"; mkdir -p "$out/logs"
  echo "# gpu_check $(date -u +%FT%TZ) on $(hostname) (mode $mode)" > "$summary"
fi
export_results() {
  [ -n "$export" ] && [ "$mode" != dry ] || return 0
  mkdir -p "$export"
  cp "$summary" "$export/summary.md"
  [ ! -f "$out/speed.md" ] || cp "$out/speed.md" "$export/speed.md"
  tar -czf "$export/logs.tar.gz" -C "$out" logs 2>/dev/null || true
}
note() { [ "$mode" = dry ] || echo "$*" >> "$summary"; }
# step NAME LIMIT_S NEEDS_DEVICE CMD...: runs CMD under min(LIMIT_S, time left), its output in
# OUT/logs/NAME.txt, and one summary line with its status and seconds. With json=FILE set for
# the call, CMD's stdout (its JSON) goes to FILE and only its stderr to the log.
failed=0
step() {
  local name=$1 limit=$2 device=$3 to=${json:-}; shift 3
  echo "+ [$name] $*${to:+ > $to}"
  [ "$mode" = dry ] && return 0
  if [ "$device" = 1 ] && [ "$mode" = nodev ]; then note "- $name: skipped (needs a GPU)"; return 1; fi
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 10 ]; then note "- $name: skipped (deadline reached)"; export_results; return 1; fi
  [ "$limit" -le "$left" ] || limit=$left
  local t0=$SECONDS rc
  if [ -n "$to" ]; then
    timeout --kill-after=10 "$limit" "$@" > "$to" 2> "$out/logs/$name.txt"
  else
    timeout --kill-after=10 "$limit" "$@" > "$out/logs/$name.txt" 2>&1
  fi
  rc=$?
  local status=ok
  [ "$rc" = 0 ] || { status="FAILED (exit $rc$([ "$rc" = 124 ] && echo ", time limit $limit s"))"; failed=$((failed + 1)); }
  note "- $name: $status in $((SECONDS - t0)) s"
  echo "  [$name] $status in $((SECONDS - t0)) s"
  [ "$rc" = 0 ] || tail -5 "$out/logs/$name.txt" | sed 's/^/    /' | tee -a "$summary"
  export_results
  return "$rc"
}
# quote NAME PATTERN: the matching lines of a step's log, indented, into the summary.
quote() { [ "$mode" = dry ] || grep -aE "$2" "$out/logs/$1.txt" 2>/dev/null | tr '\r' '\n' | grep -aE "$2" | tail -${3:-4} | sed 's/^/    /' >> "$summary"; }

# 1. What the machine is.
step env 30 0 bash -c "nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv,noheader 2>&1;
  $py -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"devices\", torch.cuda.device_count())';
  (command -v nvcc >/dev/null && nvcc --version | tail -1) || echo 'no nvcc on PATH';
  c++ --version | head -1; cmake --version | head -1; echo ninja \$(ninja --version); echo cores \$(nproc)"
quote env . 12
# 2. The build: hamgan and the GPU tests, against this machine's PyTorch.
step build "${BUILD_LIMIT:-330}" 0 env TORCH_PYTHON="$py" BUNDLE="$bundle" BUILD_DIR="$build" scripts/gpu_build.sh "$build" ||
  { note "- build failed: nothing else can run"; export_results; echo "gpu_check: done (build failed)"; exit 1; }
quote build "gpu_build: (built|configured|audit)|hamgan: LibTorch"
step version 30 0 "$bin" --version
quote version "CUDA|bf16|hamgan" 3
# 3. The GPU tests: CUDA against CPU in double, bf16 autocast, portable checkpoints, exact resume.
cuda_bins=$(cd tests/cuda && ls test_*.cpp | sed "s|^|$build/tests/|; s|\.cpp$||" | tr '\n' ' ')
step cuda_tests 150 1 bash -c "rc=0; for t in $cuda_bins; do echo \"== \$t\"; \$t --gtest_brief=1 || rc=1; done; exit \$rc"
quote cuda_tests "PASSED|FAILED|tests ran" 12

# 4. Speed at the mission's size, as one table (scripts/speed_table.py; OUT/speed.md, rewritten
#    after every speed step, into the summary when the section ends): ImageNet-128 SAGAN and
#    HamGAN, batch 256, bf16, channels-last, as hamgan's own training loop on a packed 128 px
#    folder, as `hamgan bench train` (then with each bench switch on and off) and as the same
#    model in eager PyTorch (scripts/bench_torch_eager.py). The rows' JSON: OUT/logs/speed/.
quick=${QUICK:-0}
speed_cfgs=(imagenet128_hamgan imagenet128_sagan)
# Bench switches: each adds a row =true and a row =false per config (QUICK: =false, HamGAN).
switches=(train.fused_cbn_relu train.bias_kernel train.upsample_add_kernel train.tf32 train.folded_convs train.cudnn_benchmark)
switch_values=(true false)
switch_cfgs=("${speed_cfgs[@]}")
# Word-valued switches: KEY:WORD,WORD, a row per word (the first is the default).
word_switches=(train.upsample_conv:subpixel,transposed)
quick_rows=(train.folded_convs=false train.fused_cbn_relu=false train.bias_kernel=false train.upsample_add_kernel=false
  train.upsample_conv=transposed)
if [ "$quick" = 1 ]; then
  switches=(train.folded_convs train.fused_cbn_relu train.bias_kernel train.upsample_add_kernel)
  switch_cfgs=(imagenet128_hamgan)
fi
fast=(train.device=cuda train.amp=true train.channels_last=true)
sp=$out/logs/speed
classes=10
sw=()
for key in "${switches[@]}" "${word_switches[@]}"; do sw+=(--switch "$key"); done
[ "$mode" = dry ] || mkdir -p "$sp"
speed_table() {
  [ "$mode" = dry ] || "$py" scripts/speed_table.py "$sp" "${speed_cfgs[@]}" "${sw[@]}" > "$out/speed.md" 2>&1
}
for cfg in "${speed_cfgs[@]}"; do
  step "info_$cfg" 30 0 "$bin" info -c "configs/$cfg.yaml"
  quote "info_$cfg" "GFLOP|images/s|^parameters" 3
done
for cfg in "${speed_cfgs[@]}"; do
  json=$sp/$cfg.bench.json step "bench_$cfg" 150 1 "$bin" bench train -c "configs/$cfg.yaml" --batch 256 \
    --iters 10 --warmup 3 --json "${fast[@]}"
  speed_table
done
# The training loop's data: generated JPEGs (no photos on the machine) packed at 128 px.
packed=$out/speed_data.packed
step speed_images 60 0 "$py" scripts/jpeg_folder.py "$out/speed_images" 128 "$classes" &&
  step speed_data 60 0 "$bin" prepare --data "$out/speed_images" --out "$packed" --resolution 128 --workers 8
# loop_row CFG [KEY=VALUE]: 40 iterations of the training loop on the packed folder, its
# metrics.jsonl as CFG.train[.KEY=VALUE].metrics.jsonl for the table.
loop_row() {
  local cfg=$1 row=${2:-} srun=$out/speed_train_$1${2:+_$2}
  step "train_$cfg${row:+_$row}" 150 1 "$bin" train -c "configs/$cfg.yaml" --out "$srun" "data.path=$packed" \
    data.format=packed model.n_classes=$classes "${fast[@]}" train.iterations=40 train.log_every=10 \
    train.checkpoint_every=0 train.sample_every=0 train.tensorboard=false --workers 8 ${row:+"$row"}
  [ "$mode" = dry ] || { cp "$srun/metrics.jsonl" "$sp/$cfg.train${row:+.$row}.metrics.jsonl" 2>/dev/null; rm -rf "$srun/checkpoints"; }
  speed_table
}
for cfg in "${speed_cfgs[@]}"; do loop_row "$cfg"; done
# The loop again with each switch that `auto` does not yet pick (HamGAN): the figure a user gets
# with it. None at present.
loop_rows=()
for row in "${loop_rows[@]}"; do loop_row imagenet128_hamgan "$row"; done
for cfg in "${speed_cfgs[@]}"; do
  json=$sp/$cfg.eager.json step "eager_$cfg" 150 1 "$py" scripts/bench_torch_eager.py --config "configs/$cfg.yaml" \
    --hamgan "$bin" --device cuda --batch 256 --iters 10 --warmup 3 --amp true --channels-last --threads "$(nproc)" --json
  speed_table
done
rows=()
for key in "${switches[@]}"; do for value in "${switch_values[@]}"; do rows+=("$key=$value"); done; done
for ws in "${word_switches[@]}"; do
  IFS=, read -r -a words <<< "${ws#*:}"
  for w in "${words[@]}"; do rows+=("${ws%%:*}=$w"); done
done
[ "$quick" = 1 ] && rows=("${quick_rows[@]}")
for row in "${rows[@]}"; do
  for cfg in "${switch_cfgs[@]}"; do
    json=$sp/$cfg.bench.$row.json step "bench_${cfg}_$row" 150 1 "$bin" bench train \
      -c "configs/$cfg.yaml" --batch 256 --iters 10 --warmup 3 --json "${fast[@]}" "$row"
    speed_table
  done
done
if [ "$mode" != dry ]; then
  speed_table
  note "- speed (OUT/speed.md): images/s of the timed steps; TFLOP/s by hamgan info's FLOP count"
  note ""
  cat "$out/speed.md" >> "$summary"
  note ""
  export_results
fi

# The device-side profile of the HamGAN step: device time per phase and Kineto's operators by
# kernel time (bench train --profile), its Chrome trace compressed into EXPORT; with the loop
# rows' switches on, so it shows what is left after them.
step profile_imagenet128_hamgan 120 1 "$bin" bench train -c configs/imagenet128_hamgan.yaml --batch 256 --iters 5 \
  --warmup 3 --profile --trace "$out/trace_imagenet128_hamgan.json" "${fast[@]}" "${loop_rows[@]}"
quote profile_imagenet128_hamgan "images/s|per step:|host waits|device busy" 4
[ "$mode" = dry ] || [ -z "$export" ] || [ ! -f "$out/trace_imagenet128_hamgan.json" ] ||
  gzip -c "$out/trace_imagenet128_hamgan.json" > "$export/trace_imagenet128_hamgan.json.gz"

# 5. Training on CUDA: bf16 autocast, channels-last, pinned loader; checkpoint, then resume.
data=$bundle/data/fashion-mnist
[ -d "$data" ] || data=/usr/share/datasets/fashion-mnist
common=(train.device=cuda train.channels_last=true train.checkpoint_every=20 train.sample_every=20
        train.log_every=10 "data.path=$data" --workers 4)
run=$out/train
if [ "$quick" != 1 ]; then
step train 120 1 "$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.amp=true train.iterations=40
quote train "it/s|speed after" 2
# Resumed, by the run's metrics.jsonl (appended by each session): the second session's reports
# continue the first's (50, 60 after 40); a fresh start would report 10, 20, ... again.
step resume 90 1 "$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.amp=true train.iterations=60 && [ "$mode" = run ] &&
  { "$py" -c 'import json, sys
its = [r["iteration"] for r in (json.loads(l) for l in open(sys.argv[1]) if l.strip()) if "iteration" in r]
sys.exit(0 if 40 in its and its[-1] == 60 and its == sorted(set(its)) else 1)' "$run/metrics.jsonl" &&
    note "    resumed from the iteration-40 checkpoint" || note "    FAILED: the second run did not resume"; }
fi
# Data parallel on one GPU: two ranks over Gloo (train.dist_backend=gloo lets local ranks share
# a GPU; NCCL refuses that), each with half the batch, against one rank with the whole batch.
# The loader hands rank r rows [(2b + r)B, (2b + r + 1)B) of each epoch's order, so both runs
# train on the same real images, and train.sync_bn=true gives G's BN the global batch's
# statistics; but each rank draws its own fakes, and rank 0 logs the losses of its own half, so
# the losses agree within the fakes' noise, not to rounding (tests/test_train_data_parallel.cpp
# scripts the latents and checks the step itself to rounding, on the CPU).
dp=(-c configs/fmnist32_hamgan.yaml "${common[@]}" train.amp=false train.iterations=20 train.sync_bn=true)
[ "${TWO_RANKS:-1}" = 0 ] || step two_ranks 60 1 "$bin" train --out "$out/two_ranks" "${dp[@]}" train.batch_size=32 train.dist_backend=gloo --nproc 2
quote two_ranks "share its|ranks met|finished at" 3
[ "${TWO_RANKS:-1}" = 0 ] || step one_rank 60 1 "$bin" train --out "$out/one_rank" "${dp[@]}" train.batch_size=64
if [ "$mode" = run ] && [ -f "$out/two_ranks/metrics.jsonl" ] && [ -f "$out/one_rank/metrics.jsonl" ]; then
  "$py" - "$out" >> "$summary" <<'PY'
import json, os, sys
out = sys.argv[1]
def by_iteration(run):
    rows = (json.loads(l) for l in open(f"{out}/{run}/metrics.jsonl") if l.strip())
    return {int(r["iteration"]): r for r in rows if "iteration" in r}
print("    two ranks x 32 (Gloo, one GPU) against one rank x 64: same real images; rank 0 logs its own half, "
      "and the fakes differ per rank, so within noise, not to rounding")
try:
    two, one = by_iteration("two_ranks"), by_iteration("one_rank")
    for it in (10, 20):
        for key in ("d_loss", "g_loss"):
            a, b = two[it][key], one[it][key]
            print(f"    iteration {it} {key}: 2 ranks {a:.4f}, 1 rank {b:.4f}, "
                  f"rel. diff {abs(a - b) / max(abs(b), 1e-9):.3f}")
except Exception as e:
    print(f"    two_ranks against one_rank: could not compare ({e!r})")
ck = "two_ranks/checkpoints/ckpt_000000020.pt"
print(f"    rank 0's checkpoint {ck}: {'written' if os.path.exists(f'{out}/{ck}') else 'MISSING'}")
PY
fi

if [ "$quick" != 1 ]; then
# 6. bf16 against fp32: the same 100 iterations (seed, data); the mean losses of the last 50
#    should agree to a few percent (the trajectories part at the first rounding difference).
for amp in true false; do
  step "amp_$amp" 120 1 "$bin" train -c configs/fmnist32_hamgan.yaml --out "$out/amp_$amp" "${common[@]}" \
    train.amp=$amp train.iterations=100 train.checkpoint_every=0 train.sample_every=0
  quote "amp_$amp" "speed after" 1
done
if [ "$mode" = run ] && [ -f "$out/amp_true/metrics.jsonl" ] && [ -f "$out/amp_false/metrics.jsonl" ]; then
  "$py" - "$out" >> "$summary" <<'PY'
import json, sys
def tail_mean(path, key):
    rows = [json.loads(l) for l in open(path)]
    rows = [r for r in rows if r.get("iteration", 0) > 50 and key in r]
    return sum(r[key] for r in rows) / len(rows)
out = sys.argv[1]
for key in ("d_loss", "g_loss"):
    try:
        b, f = (tail_mean(f"{out}/amp_{a}/metrics.jsonl", key) for a in ("true", "false"))
        print(f"    {key} mean over iterations 51-100: bf16 {b:.4f}, fp32 {f:.4f}, rel. diff {abs(b - f) / max(abs(f), 1e-9):.3f}")
    except Exception as e:
        print(f"    {key}: could not compare ({e})")
PY
fi

# 7. Sampling and FID features on CUDA, with their images/s.
weights=${HAMGAN_INCEPTION:-}
if [ -z "$weights" ]; then
  weights=$out/random_inception.pth
  step inception 90 0 "$py" scripts/random_inception.py "$weights"
  note "    random Inception weights: the FID values below time the path and measure nothing"
fi
ck=$run/checkpoints/ckpt_000000060.pt
step sample 120 1 "$bin" sample --checkpoint "$ck" --out "$out/samples" --count 5000 --batch 500 --device cuda \
  --grid "$out/grid.png"
quote sample "img/s" 1
step fid_stats 150 1 "$bin" fid stats --images "$out/samples" --out "$out/samples.npz" --inception "$weights" \
  --device cuda --batch 250 --workers 8
quote fid_stats "images/s" 2
step fid 150 1 "$bin" fid --real "$out/samples.npz" --checkpoint "$ck" --count 5000 --inception "$weights" --device cuda \
  --batch 250
quote fid "images/s|FID" 3
[ -n "$export" ] && [ -f "$out/grid.png" ] && cp "$out/grid.png" "$export/grid.png"

fi

note "- $failed step(s) failed; $((SECONDS)) s in all"
export_results
echo "gpu_check: done ($failed failed)"
[ "$mode" = dry ] || cat "$summary"
