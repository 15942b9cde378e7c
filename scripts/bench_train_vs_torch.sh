#!/usr/bin/env bash
# `hamgan bench train` side by side with the same model as a plain PyTorch eager fp32 script
# (scripts/bench_torch_eager.py): SAGAN-32, ch 32, batch 64, n_dis 1, hinge, Adam, with the
# context module none / self_attention / ham_nmf in G (32x32) and D (16x16). For each module
# the four runs (PyTorch fp32 as a plain script runs, PyTorch fp32 with OpenBLAS's own pool at
# 1 thread as hamgan sets it (core/threads.h), hamgan fp32, hamgan with train.amp's default)
# follow each other, so a shared machine's load hits them alike; REPEAT rounds (default 1)
# repeat the whole set.
#   scripts/bench_train_vs_torch.sh            THREADS (default 2), ITERS (default 10),
#                                              MODULES (default none,self_attention,ham_nmf)
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${THREADS:-2}
iters=${ITERS:-10}
modules=${MODULES:-none,self_attention,ham_nmf}
build=${BUILD_DIR:-build}
for round in $(seq "${REPEAT:-1}"); do
  for m in ${modules//,/ }; do
    for blas in default 1; do
      (if [ "$blas" = 1 ]; then export OPENBLAS_NUM_THREADS=1; fi
       /usr/bin/python3 scripts/bench_torch_eager.py --context "$m" --threads "$threads" \
         --iters "$iters" --warmup 2 | sed "s/^/[OpenBLAS threads: $blas] /")
    done
    for amp in false auto; do
      "$build/hamgan" bench train --config configs/fmnist32_sagan.yaml --threads "$threads" \
        --iters "$iters" --warmup 2 generator.context.type="$m" \
        discriminator.context.type="$m" train.amp=$amp | sed "s/^/hamgan $m amp=$amp: /"
    done
  done
done
