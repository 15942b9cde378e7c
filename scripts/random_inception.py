"""Writes FID Inception weights in pytorch-fid's layout (torchvision's Inception3 with the four
changed blocks, 1008 classes) with random weights, for a machine that has no copy of the real
file and cannot download it (scripts/gpu_check.sh). Random weights exercise the feature path
and time it; the FID values they give measure nothing.
    python3 scripts/random_inception.py OUT.pth [--seed N]"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from fid_inception_net import fid_inception, randomize  # noqa: E402

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("out")
p.add_argument("--seed", type=int, default=0)
a = p.parse_args()
torch.manual_seed(a.seed)
torch.save(randomize(fid_inception()).state_dict(), a.out)
print(f"random_inception: {a.out} ({os.path.getsize(a.out) / 2**20:.1f} MiB, random weights)")
