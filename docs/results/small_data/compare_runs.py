"""Compares two hamgan run directories bit for bit: every tensor of every checkpoint (loaded with
PyTorch's TorchScript reader) and every metrics.jsonl value but the timings. Keys only one side
has (statistics of step features added since) must be 0 throughout.
Usage: /usr/bin/python3 compare_runs.py RUN_A RUN_B"""
import glob
import json
import os
import sys

import torch

TIMING = {"wall_s", "it_s", "img_s"}


def tensors(path):
    m = torch.jit.load(path, map_location="cpu")
    out = {}
    for k, v in m.state_dict().items():
        out[k] = v
    return out


def main(a, b):
    bad = 0
    ca = sorted(glob.glob(os.path.join(a, "checkpoints", "ckpt_*.pt")))
    cb = sorted(glob.glob(os.path.join(b, "checkpoints", "ckpt_*.pt")))
    assert [os.path.basename(p) for p in ca] == [os.path.basename(p) for p in cb], (ca, cb)
    count = 0
    for pa, pb in zip(ca, cb):
        ta, tb = tensors(pa), tensors(pb)
        if ta.keys() != tb.keys():
            print("tensor names differ:", sorted(set(ta) ^ set(tb)))
            bad += 1
        for k in ta.keys() & tb.keys():
            count += 1
            if ta[k].dtype != tb[k].dtype or ta[k].shape != tb[k].shape or not torch.equal(ta[k], tb[k]):
                print("differs:", os.path.basename(pa), k)
                bad += 1
    ra = [json.loads(l) for l in open(os.path.join(a, "metrics.jsonl"))]
    rb = [json.loads(l) for l in open(os.path.join(b, "metrics.jsonl"))]
    assert len(ra) == len(rb), (len(ra), len(rb))
    values = 0
    for x, y in zip(ra, rb):
        for k in (x.keys() | y.keys()) - TIMING:
            if k in x and k in y:
                values += 1
                if x[k] != y[k]:
                    print("metrics.jsonl differs: iteration", x.get("iteration"), k, x[k], y[k])
                    bad += 1
            elif (x.get(k) or y.get(k)) != 0:
                print("a key on one side only is not 0:", k)
                bad += 1
    only = sorted((set(rb[0]) ^ set(ra[0])) - TIMING)
    print(f"{len(ca)} checkpoints, {count} tensors, {len(ra)} records, {values} values compared; "
          f"keys on one side only (all 0): {only}; differences: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
