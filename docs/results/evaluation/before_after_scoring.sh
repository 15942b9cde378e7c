#!/usr/bin/env bash
# Before/after: the same short quickstart run (two ranks, scored while training), `fid --run`
# over copies of its checkpoints and `fid --test-split`, from the hamgan binary $1 into $2; run it
# with two builds and compare the outputs (every column of scores.csv but `seconds`).
#   docs/results/evaluation/before_after_scoring.sh BUILD/hamgan OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
bin=$1; out=$2
clf=$HOME/.cache/hamgan/classifier_fmnist32_quickstart.pt
cfg=$root/configs/fmnist32_quickstart.yaml
data=$("$bin" info -c $cfg --get data.path)
m=fid,precision,recall,density,coverage,class_acc
rm -rf $out; mkdir -p $out
# scoring while training, 2 ranks
$bin train -c $cfg --out $out/train --nproc 2 train.iterations=60 train.checkpoint_every=30 eval.every=30 \
  eval.n=500 eval.features=$clf eval.metrics=$m > $out/train.log 2>&1
# fid --run over copies of the checkpoints
mkdir -p $out/run/checkpoints && cp $out/train/checkpoints/ckpt_*.pt $out/run/checkpoints/
$bin fid --real $data --run $out/run --features $clf -n 500 --metrics $m --threads 2 > $out/run.log 2>&1
# fid --test-split
$bin fid --real $data --test-split --features $clf -n 500 --metrics $m > $out/test_split.log 2>&1
