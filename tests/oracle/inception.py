"""pytorch-fid's FID Inception built from Debian's torchvision (Inception3 with 1008 classes and
the four changed blocks), random weights with non-trivial BN statistics, saved in every format
the C++ loader reads, with float64 reference features and logits."""
import collections
import os

import torch
import torch.nn.functional as F

from common import out_dir, save
from fid_inception_net import Features, fid_inception, randomize, torch_input


def tf1_resize(x, out):  # TF 1.x bilinear: output i samples input i * in / out, clamped
    def axis(x, dim):
        n = x.shape[dim]
        src = torch.arange(out, dtype=torch.float64) * (n / out)
        i0 = src.floor().long().clamp(max=n - 1)
        i1 = (i0 + 1).clamp(max=n - 1)
        w = (src - i0).to(x.dtype)
        shape = [1] * x.dim()
        shape[dim] = out
        a, b = x.index_select(dim, i0), x.index_select(dim, i1)
        return a * (1 - w.view(shape)) + b * w.view(shape)
    return axis(axis(x, 2), 3)


def tf_input(img):  # torch-fidelity
    if img.shape[1] == 1:
        img = img.repeat(1, 3, 1, 1)
    return (tf1_resize(img * 255, 299) - 128) / 128


class Scripted(torch.nn.Module):
    """NVIDIA's call signature: uint8 0..255 images, forward(x, return_features)."""

    def __init__(self, traced, fc_w, fc_b):
        super().__init__()
        self.traced = traced
        self.register_buffer("fc_w", fc_w)
        self.register_buffer("fc_b", fc_b)

    def forward(self, x, return_features: bool = False):
        x = x.to(torch.float32) / 255
        x = 2 * F.interpolate(x, size=(299, 299), mode="bilinear", align_corners=False) - 1
        pool = self.traced(x)
        if return_features:
            return pool
        return F.softmax(pool @ self.fc_w.t() + self.fc_b, dim=1)


class PoolOnly(torch.nn.Module):
    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, x):
        return self.f(x)[0]


d = out_dir()
torch.manual_seed(2015)
net = randomize(fid_inception())
net.eval()
sd = net.state_dict()
torch.save(sd, os.path.join(d, "legacy.pth"), _use_new_zipfile_serialization=False)
torch.save({k: v for k, v in sd.items()}, os.path.join(d, "zip_dict.pth"))
torch.save(collections.OrderedDict(sd), os.path.join(d, "zip_odict.pth"))
bad = dict(sd)
bad["fc.weight"] = torch.zeros(1000, 2048)
torch.save(bad, os.path.join(d, "wrong_shape.pth"))
del bad["Mixed_6c.branch7x7_2.conv.weight"]
bad["fc.weight"] = sd["fc.weight"]
torch.save(bad, os.path.join(d, "missing_key.pth"))

g = torch.Generator().manual_seed(1)
rgb = torch.randint(0, 256, (3, 3, 64, 80), generator=g).float() / 255  # exact in uint8 too
gray = torch.randint(0, 256, (2, 1, 50, 41), generator=g).float() / 255
f64 = Features(net).double()
out = {"rgb": rgb, "gray": gray}
with torch.no_grad():
    for name, img in (("rgb", rgb), ("gray", gray)):
        for mode, prep in (("torch", torch_input), ("tf", tf_input)):
            pool, logits = f64(prep(img.double()))
            out[f"{name}.{mode}.pool"] = pool
            out[f"{name}.{mode}.logits"] = logits
            out[f"{name}.{mode}.logits_unbiased"] = logits - net.fc.bias.double()
    net_f = Features(net).float()
    traced = torch.jit.trace(PoolOnly(net_f), torch_input(rgb))
    scripted = torch.jit.script(Scripted(traced, net.fc.weight.detach().clone(), net.fc.bias.detach().clone()))
    scripted.save(os.path.join(d, "inception_jit.pt"))
    out["rgb.jit.pool"] = scripted((rgb * 255).round().to(torch.uint8), True).double()
save(d, "expected.pt", out)
print("pool mean |x|", out["rgb.torch.pool"].abs().mean().item(), "logits std", out["rgb.torch.logits"].std().item())
