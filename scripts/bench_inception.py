#!/usr/bin/python3
"""Python side of the Inception speed comparison: pytorch-fid's pipeline (PIL decoding in
DataLoader workers, ToTensor, bilinear resize to 299, 2x - 1, the FID Inception under no_grad)
built from Debian's torch/torchvision, on the same images and weights as
`hamgan fid stats --images DIR --inception W --out cpp.npz`. Prints images/s and, with
--compare cpp.npz, how far the C++ statistics are from these (FID between the two).

  /usr/bin/python3 scripts/bench_inception.py --images DIR --weights W.pth [--batch 50]
      [--workers 4] [--threads N] [--compare cpp.npz]

A --weights path that does not exist receives random weights (speed does not depend on them):
pytorch-fid's real file cannot be downloaded here."""
import argparse
import os
import sys
import time

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from fid_inception_net import Features, fid_inception, randomize, torch_input  # noqa: E402
from frechet_scipy import fid_scipy  # noqa: E402


class Images(torch.utils.data.Dataset):
    def __init__(self, files):
        self.files = files

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = np.asarray(Image.open(self.files[i]).convert("RGB"), dtype=np.float32) / 255
        return torch.from_numpy(img).permute(2, 0, 1)


def list_images(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.join(root, n) for n in names if n.lower().endswith((".png", ".jpg", ".jpeg"))]
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--compare")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    net = fid_inception()
    if not os.path.exists(a.weights):
        torch.manual_seed(2015)
        torch.save(dict(randomize(net).state_dict()), a.weights)
        print(f"wrote random weights to {a.weights}")
    sd = torch.load(a.weights, map_location="cpu")
    net.load_state_dict({k: v for k, v in sd.items() if not k.startswith("AuxLogits")})
    f = Features(net.eval())

    files = list_images(a.images)
    if not files:
        sys.exit(f"{a.images}: no .png/.jpg images")
    loader = torch.utils.data.DataLoader(Images(files), batch_size=a.batch, num_workers=a.workers)
    pools = []
    t0 = time.perf_counter()
    with torch.no_grad():
        for x in loader:
            pools.append(f(torch_input(x))[0].double())
    s = time.perf_counter() - t0
    pool = torch.cat(pools).numpy()
    print(f"python (torch {torch.__version__}, {a.threads} threads, {a.workers} workers, batch {a.batch}): "
          f"{len(files)} images in {s:.2f} s ({len(files) / s:.1f} images/s)")
    if a.compare:
        ref = np.load(a.compare)
        mu, sigma = pool.mean(0), np.cov(pool, rowvar=False)
        rel = np.abs(ref["mu"] - mu).max() / np.abs(mu).max()
        print(f"vs {a.compare}: max |mu diff| / max |mu| = {rel:.2e}, "
              f"FID(python, C++) = {fid_scipy(mu, sigma, ref['mu'], ref['sigma']):.3e}")


if __name__ == "__main__":
    main()
