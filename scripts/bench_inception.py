#!/usr/bin/python3
"""Python side of the feature-extraction speed comparison, on the same images and weights as
`hamgan fid stats --images DIR --inception W --out cpp.npz` (or `--features W` for DINOv2):
  --net inception: pytorch-fid's pipeline (PIL decoding in DataLoader workers, ToTensor,
    bilinear resize to 299, 2x - 1, the FID Inception under no_grad);
  --net dinov2: dgm-eval's (PIL decoding, torchvision Resize((224, 224), BICUBIC), ToTensor,
    ImageNet Normalize, the ViT of scripts/dinov2_torch.py under no_grad).
Built from the running Python's torch/torchvision. Prints images/s and, with --compare cpp.npz,
how far the C++ statistics are from these (the Frechet distance between the two).

  /usr/bin/python3 scripts/bench_inception.py --images DIR --weights W.pth [--net inception|dinov2]
      [--arch vits14|vitb14|vitl14|vitg14] [--batch 50] [--workers 4] [--threads N] [--compare cpp.npz]

A --weights path that does not exist receives random weights (speed does not depend on them):
the real files cannot be downloaded here."""
import argparse
import os
import sys
import time

import numpy as np
import torch
import torchvision.transforms as TF
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oracle"))
from fid_inception_net import Features, fid_inception, randomize, torch_input  # noqa: E402
from frechet_scipy import fid_scipy  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dinov2_torch  # noqa: E402

DGM_EVAL = TF.Compose([TF.Resize((224, 224), TF.InterpolationMode.BICUBIC), TF.ToTensor(),
                       TF.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])


class Images(torch.utils.data.Dataset):
    def __init__(self, files, dinov2):
        self.files, self.dinov2 = files, dinov2

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        img = Image.open(self.files[i]).convert("RGB")
        if self.dinov2:
            return DGM_EVAL(img)
        return torch.from_numpy(np.asarray(img, dtype=np.float32) / 255).permute(2, 0, 1)


def list_images(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.join(root, n) for n in names if n.lower().endswith((".png", ".jpg", ".jpeg"))]
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--net", choices=["inception", "dinov2"], default="inception")
    ap.add_argument("--arch", choices=sorted(dinov2_torch.ARCHS), default="vits14")
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--compare")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    dinov2 = a.net == "dinov2"
    net = dinov2_torch.DinoV2(a.arch) if dinov2 else fid_inception()
    if not os.path.exists(a.weights):
        torch.manual_seed(2015)
        torch.save(dict((dinov2_torch.randomize if dinov2 else randomize)(net).state_dict()), a.weights)
        print(f"wrote random weights to {a.weights}")
    sd = torch.load(a.weights, map_location="cpu")
    if dinov2:
        net.load_state_dict(sd)
        f = net.eval()
    else:
        net.load_state_dict({k: v for k, v in sd.items() if not k.startswith("AuxLogits")})
        f = Features(net.eval())

    files = list_images(a.images)
    if not files:
        sys.exit(f"{a.images}: no .png/.jpg images")
    loader = torch.utils.data.DataLoader(Images(files, dinov2), batch_size=a.batch, num_workers=a.workers)
    pools = []
    t0 = time.perf_counter()
    with torch.no_grad():
        for x in loader:
            pools.append(f(x).double() if dinov2 else f(torch_input(x))[0].double())
    s = time.perf_counter() - t0
    pool = torch.cat(pools).numpy()
    print(f"python {a.net}{' ' + a.arch if dinov2 else ''} (torch {torch.__version__}, {a.threads} threads, {a.workers} workers, batch {a.batch}): "
          f"{len(files)} images in {s:.2f} s ({len(files) / s:.1f} images/s)")
    if a.compare:
        ref = np.load(a.compare)
        mu, sigma = pool.mean(0), np.cov(pool, rowvar=False)
        rel = np.abs(ref["mu"] - mu).max() / np.abs(mu).max()
        print(f"vs {a.compare}: max |mu diff| / max |mu| = {rel:.2e}, "
              f"FID(python, C++) = {fid_scipy(mu, sigma, ref['mu'], ref['sigma']):.3e}")


if __name__ == "__main__":
    main()
