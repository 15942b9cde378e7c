#!/usr/bin/env bash
# What to run the day a GPU is there (written without one: every step below has only been
# compiled, not run). Builds LibTorch 2.x + CUDA, runs the whole suite plus the GPU tests,
# then the CUDA paths end to end and the numbers the README's paper estimate predicts.
#   scripts/gpu_check.sh [OUT]     (default runs/gpu_check: logs, checkpoints, samples)
#   HAMGAN_INCEPTION=weights.pth   FID Inception weights (default: scripts/download_inception.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs/gpu_check}
mkdir -p "$out"
log() { echo "=== gpu_check: $*"; }

# 1. Build with 2.x and run everything: the CPU suite, and the GPU tests of tests/cuda/
#    (registered with CTest only with HAMGAN_TEST_CUDA=ON; they fail without a GPU).
log "build + whole suite + GPU tests (LibTorch 2.x, CUDA)"
LIBTORCH=pip HAMGAN_CMAKE_ARGS="-DHAMGAN_TEST_CUDA=ON" scripts/test.sh
bin=build-torch2/hamgan
"$bin" --version | tee "$out/version.txt"
grep -q "CUDA compiled, [1-9][0-9]* CUDA device" "$out/version.txt" ||
  { echo "gpu_check: no CUDA device visible to LibTorch" >&2; exit 1; }
ngpu=$(sed -n 's/.*CUDA compiled, \([0-9]*\) CUDA device.*/\1/p' "$out/version.txt")

# 2. Training on CUDA: bf16 autocast, pinned loader + non_blocking copies, channels-last,
#    checkpoint with the CUDA RNG state, then resume from it.
log "train on cuda (fmnist32_hamgan, 40 + 20 iterations, resume)"
run=$out/train
rm -rf "$run"
common=(train.device=cuda train.amp=true train.channels_last=true train.checkpoint_every=20
        train.sample_every=20 train.log_every=10)
"$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.iterations=40
"$bin" train -c configs/fmnist32_hamgan.yaml --out "$run" "${common[@]}" train.iterations=60 |
  tee "$out/resume.txt"
grep -q "resuming from" "$out/resume.txt"

# 3. Data parallel over NCCL with synchronised BN (one process per GPU).
if [ "$ngpu" -ge 2 ]; then
  log "train --nproc $ngpu over NCCL with sync BN"
  "$bin" train -c configs/fmnist32_hamgan.yaml --out "$out/train_dp" --nproc "$ngpu" \
    "${common[@]}" train.sync_bn=true train.iterations=20
else
  log "one GPU: skipping --nproc (NCCL needs 2+ GPUs)"
fi

# 4. Speed: ImageNet-128 SAGAN and HamGAN, bf16, batch 256, with peak memory; compare the
#    images/s with `hamgan info`'s estimate (README, GPU paper estimate).
for cfg in imagenet128_sagan imagenet128_hamgan; do
  for cl in true false; do
    log "bench train $cfg, batch 256, bf16, channels_last=$cl"
    "$bin" bench train -c "configs/$cfg.yaml" --batch 256 --iters 20 --warmup 5 \
      train.device=cuda train.amp=true train.channels_last=$cl | tee -a "$out/bench_train.txt"
  done
  "$bin" info -c "configs/$cfg.yaml" | sed -n '/^training step/,$p' | tee -a "$out/bench_train.txt"
done

# 5. Sampling and FID features on CUDA (images/s of both).
weights=${HAMGAN_INCEPTION:-$HOME/.cache/hamgan/pt_inception-2015-12-05-6726825d.pth}
[ -f "$weights" ] || scripts/download_inception.sh "$(dirname "$weights")"
ck=$(ls "$run"/checkpoints/ckpt_*.pt | sort | tail -1)
log "sample 5000 images and their FID features on cuda"
"$bin" sample --checkpoint "$ck" --out "$out/samples" --n 5000 --batch 500 --device cuda --overwrite
"$bin" fid stats --images "$out/samples" --out "$out/samples.npz" --inception "$weights" \
  --device cuda --batch 200 --workers 8 2>&1 | tee "$out/fid_features.txt"
"$bin" fid --real "$out/samples.npz" --checkpoint "$ck" --n 5000 --inception "$weights" --device cuda \
  2>&1 | tee -a "$out/fid_features.txt"
log "done; numbers in $out/bench_train.txt and $out/fid_features.txt"
