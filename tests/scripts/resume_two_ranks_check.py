"""A resumed two-rank run trains as an unbroken one: `hamgan train --nproc 2` for 6 iterations
straight, and for 3 then resumed to 6, on the synthetic source with the quickstart's model (NMF
Hamburger, whose random bases come from each rank's default generator, and rank 1's own z
stream), must log the same losses bit for bit at every iteration and draw the same last grid.
Rank 1's streams reach the resumed run through rank 0's checkpoint (Trainer::share_rank_rng);
without them rank 1 would draw other latents from the resume on and the two runs would part.

  resume_two_ranks_check.py SOURCE_DIR HAMGAN WORK_DIR

Exits non-zero with the first failed check."""
import json
import os
import shutil
import subprocess
import sys

root, binary, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
config = os.path.join(root, "configs/fmnist32_quickstart.yaml")
keys = ["train.log_every=1", "train.sample_every=3", "train.checkpoint_every=3", "train.ema_start=0",
        "generator.ch=4", "discriminator.ch=4", "train.batch_size=4"]


def train(out, iterations):
    r = subprocess.run([binary, "train", "--config", config, "--out", out, "--nproc", "2", "--synthetic",
                        f"train.iterations={iterations}", *keys], capture_output=True, text=True)
    assert r.returncode == 0, (out, iterations, r.stdout[-2000:], r.stderr[-2000:])


def losses(out):
    with open(os.path.join(out, "metrics.jsonl")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {r["iteration"]: (r["d_loss"], r["d_loss_real"], r["d_loss_fake"], r["g_loss"], r["d_real"], r["d_fake"])
            for r in rows}


shutil.rmtree(work, ignore_errors=True)
straight, resumed = os.path.join(work, "straight"), os.path.join(work, "resumed")
train(straight, 6)
train(resumed, 3)
train(resumed, 6)
a, b = losses(straight), losses(resumed)
assert sorted(a) == sorted(b) == list(range(1, 7)), (sorted(a), sorted(b))
for it in range(1, 7):
    assert a[it] == b[it], f"iteration {it}: straight {a[it]} != resumed {b[it]}"
# Iterations 4-6 differ from 1-3 (the check would pass on a run that repeats itself).
assert a[4] != a[1] and a[6] != a[3], a
with open(os.path.join(straight, "samples", "samples_000000006.png"), "rb") as x, \
        open(os.path.join(resumed, "samples", "samples_000000006.png"), "rb") as y:
    assert x.read() == y.read(), "the grids at iteration 6 differ"
print("resume_two_ranks: ok")
