#!/usr/bin/env bash
# What to run the day a GPU is there (written without one: every step below has only been
# compiled, not run). Builds LibTorch 2.x + CUDA, runs the whole suite plus the GPU tests,
# then the CUDA paths end to end and the numbers the README's paper estimate predicts, and
# writes OUT/summary.md, one file a person can read and commit under docs/gpu/.
#   scripts/gpu_check.sh [--dry-run] [OUT]   (default runs/gpu_check: logs, checkpoints, samples)
#   --dry-run: print every command it would run, run none (works without a GPU)
#   HAMGAN_INCEPTION=weights.pth   FID Inception weights (default: scripts/download_inception.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
dry=0
if [ "${1:-}" = --dry-run ]; then dry=1; shift; fi
out=${1:-runs/gpu_check}
bin=build-torch2/hamgan
summary=$out/summary.md
log() { echo "=== gpu_check: $*"; [ "$dry" = 1 ] || echo "- $*" >> "$summary"; }
# Runs (or, dry, prints) one command; its output also goes to OUT/<name>.txt.
step() {
  local name=$1; shift
  echo "+ $*"
  [ "$dry" = 1 ] && return 0
  "$@" 2>&1 | tee "$out/$name.txt"
}
if [ "$dry" = 0 ]; then
  mkdir -p "$out"
  echo "# gpu_check $(date -u +%F) on $(hostname)" > "$summary"
fi

# 1. Build with 2.x and run everything: the CPU suite, and the GPU tests of tests/cuda/
#    (registered with CTest only with HAMGAN_TEST_CUDA=ON; they fail without a GPU).
log "build + whole suite + GPU tests (LibTorch 2.x, CUDA)"
step suite env LIBTORCH=pip HAMGAN_CMAKE_ARGS="-DHAMGAN_TEST_CUDA=ON" scripts/test.sh
step version "$bin" --version
if [ "$dry" = 0 ]; then
  grep "tests passed" "$out/suite.txt" >> "$summary" || true
  nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv >> "$summary" 2>&1 || true
  grep -q "CUDA compiled, [1-9][0-9]* CUDA device" "$out/version.txt" ||
    { echo "gpu_check: no CUDA device visible to LibTorch (see $out/version.txt)" >&2; exit 1; }
  ngpu=$(sed -n 's/.*CUDA compiled, \([0-9]*\) CUDA device.*/\1/p' "$out/version.txt")
else
  ngpu=2
fi

# 2. Training on CUDA: bf16 autocast, pinned loader + non_blocking copies, channels-last,
#    checkpoint with the CUDA RNG state, then resume from it.
log "train on cuda (fmnist32_hamgan, 40 + 20 iterations, resume)"
run=$out/train
[ "$dry" = 1 ] || rm -rf "$run"
common=(train.device=cuda train.channels_last=true train.checkpoint_every=20 train.sample_every=20
        train.log_every=10)
step train "$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.amp=true train.iterations=40
step resume "$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.amp=true train.iterations=60
[ "$dry" = 1 ] || grep -q "resuming from" "$out/resume.txt"

# 3. bf16 against fp32: the same 100 iterations (seed, data) in both; the mean losses of the
#    last 50 should agree to a few percent (trajectories diverge from the first rounding).
log "bf16 vs fp32 losses over 100 iterations"
for amp in true false; do
  [ "$dry" = 1 ] || rm -rf "$out/amp_$amp"
  step "amp_$amp" "$bin" train -c configs/fmnist32_hamgan.yaml --out "$out/amp_$amp" "${common[@]}" \
    train.amp=$amp train.iterations=100 train.checkpoint_every=0 train.sample_every=0
done
if [ "$dry" = 0 ]; then
  python3 - "$out" >> "$summary" <<'PY'
import json, sys
def tail_mean(path, key):
    rows = [json.loads(l) for l in open(path)]
    rows = [r for r in rows if r["iteration"] > 50]
    return sum(r[key] for r in rows) / len(rows)
out = sys.argv[1]
for key in ("d_loss", "g_loss"):
    b, f = (tail_mean(f"{out}/amp_{a}/metrics.jsonl", key) for a in ("true", "false"))
    print(f"  - {key} mean over iterations 51-100: bf16 {b:.4f}, fp32 {f:.4f}, rel. diff {abs(b - f) / max(abs(f), 1e-9):.3f}")
PY
fi

# 4. Data parallel over NCCL with synchronised BN, one rank per GPU; and more ranks than GPUs
#    must be a clear error (train_device), not NCCL's "Duplicate GPU detected".
if [ "$ngpu" -ge 2 ]; then
  log "train --nproc $ngpu over NCCL with sync BN"
  step nccl "$bin" train -c configs/fmnist32_hamgan.yaml --out "$out/train_dp" --nproc "$ngpu" \
    "${common[@]}" train.sync_bn=true train.iterations=20
fi
log "train --nproc $((ngpu + 1)) on $ngpu GPU(s): expected to fail naming the GPU count"
if [ "$dry" = 1 ]; then
  echo "+ $bin train ... --nproc $((ngpu + 1))   (must fail: more ranks than GPUs)"
elif "$bin" train -c configs/fmnist32_hamgan.yaml --out "$out/too_many" --nproc $((ngpu + 1)) \
     "${common[@]}" train.iterations=2 > "$out/too_many.txt" 2>&1; then
  echo "  - FAILED: --nproc $((ngpu + 1)) on $ngpu GPU(s) ran" >> "$summary"
else
  grep -m1 "gives each rank" "$out/too_many.txt" | sed 's/^/  - /' >> "$summary" || true
fi

# 5. Speed: ImageNet-128 SAGAN and HamGAN, bf16, batch 256, with peak memory; compare the
#    images/s with `hamgan info`'s estimate (README, GPU paper estimate).
for cfg in imagenet128_sagan imagenet128_hamgan; do
  for cl in true false; do
    log "bench train $cfg, batch 256, bf16, channels_last=$cl"
    step "bench_${cfg}_cl_$cl" "$bin" bench train -c "configs/$cfg.yaml" --batch 256 --iters 20 --warmup 5 \
      train.device=cuda train.amp=true train.channels_last=$cl
    [ "$dry" = 1 ] || grep -E "median|peak CUDA" "$out/bench_${cfg}_cl_$cl.txt" | sed 's/^/  - /' >> "$summary"
  done
  step "info_$cfg" "$bin" info -c "configs/$cfg.yaml"
  [ "$dry" = 1 ] || sed -n '/^training step/,$p' "$out/info_$cfg.txt" | sed 's/^/  - /' >> "$summary"
done

# 6. Sampling and FID features on CUDA (images/s of both).
weights=${HAMGAN_INCEPTION:-$HOME/.cache/hamgan/pt_inception-2015-12-05-6726825d.pth}
if [ "$dry" = 0 ] && [ ! -f "$weights" ]; then scripts/download_inception.sh "$(dirname "$weights")"; fi
ck=$( [ "$dry" = 1 ] && echo "$run/checkpoints/ckpt_000000060.pt" || ls "$run"/checkpoints/ckpt_*.pt | sort | tail -1)
log "sample 5000 images and their FID features on cuda"
step sample "$bin" sample --checkpoint "$ck" --out "$out/samples" --count 5000 --batch 500 --device cuda --overwrite
step fid_stats "$bin" fid stats --images "$out/samples" --out "$out/samples.npz" --inception "$weights" \
  --device cuda --batch 200 --workers 8
step fid "$bin" fid --real "$out/samples.npz" --checkpoint "$ck" --count 5000 --inception "$weights" --device cuda
[ "$dry" = 1 ] || grep -hE "images/s|^FID" "$out/sample.txt" "$out/fid_stats.txt" "$out/fid.txt" | sed 's/^/  - /' >> "$summary"
log "done; commit $summary under docs/gpu/"
