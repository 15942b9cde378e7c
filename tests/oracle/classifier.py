"""The domain classifier of metrics/classifier.h written independently in torch (from its
documented architecture: [conv3x3 (no bias) -> BN -> ReLU -> maxpool 2] per block with width,
2 width, ... capped at 8 width, until the map is < 8 px; flatten; fc -> ReLU = features;
fc = logits), random weights and BN statistics, and what it gives on fixed 8-bit images:
features, logits, mu/sigma (np.cov), the Frechet distance between two image sets (scipy
sqrtm) and the class accuracy of labelled images."""
import numpy as np
import torch
from torch import nn

from common import out_dir, save
from frechet_scipy import fid_scipy


def build(res, ch, n_classes, width, feature_dim):
    layers, c_in, s, c = [], ch, res, width
    while s >= 8:
        layers += [nn.Conv2d(c_in, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2)]
        c_in, s, c = c, s // 2, min(2 * c, 8 * width)
    net = nn.Module()
    net.body = nn.Sequential(*layers)
    net.fc = nn.Linear(c_in * s * s, feature_dim)
    net.head = nn.Linear(feature_dim, n_classes)
    return net


def forward(net, x):
    f = torch.relu(net.fc(torch.flatten(net.body(x), 1)))
    return f, net.head(f)


d = out_dir()
cases = {  # name: (res, channels, classes, width, feature_dim, images per set)
    "gray32": (32, 1, 3, 4, 8, 60),
    "rgb128": (128, 3, 4, 2, 6, 40),  # 5 blocks: the width cap (8 x 2 = 16) is reached
}
for i, (name, (res, ch, k, width, fdim, n)) in enumerate(cases.items()):
    torch.manual_seed(100 + i)
    net = build(res, ch, k, width, fdim).double()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(7)
    net = net.float().double()  # weights exactly representable in float32, as C++ gets them
    net.eval()
    out = {"weights." + kk: v.float() if v.is_floating_point() else v for kk, v in net.state_dict().items()}
    for part in ("a", "b"):
        u8 = torch.randint(0, 256, (n, ch, res, res), dtype=torch.uint8)
        if part == "b":  # a different distribution: brighter, smoother
            u8 = (u8.float() * 0.5 + 100).round().to(torch.uint8)
        labels = torch.arange(n) % k
        with torch.no_grad():
            f, logits = forward(net, u8.double() / 255 * 2 - 1)
        top2 = logits.topk(2, 1).values
        assert (top2[:, 0] - top2[:, 1]).min() > 1e-4, "an argmax tie would make the class accuracy fragile"
        feats = f.numpy()
        out[f"{part}.images"] = u8
        out[f"{part}.labels"] = labels
        out[f"{part}.features"] = f
        out[f"{part}.logits"] = logits
        out[f"{part}.mu"] = torch.from_numpy(feats.mean(0))
        out[f"{part}.sigma"] = torch.from_numpy(np.cov(feats, rowvar=False))
        out[f"{part}.class_acc"] = (logits.argmax(1) == labels).double().mean()
    out["fid"] = torch.tensor(fid_scipy(out["a.mu"].numpy(), out["a.sigma"].numpy(), out["b.mu"].numpy(),
                                        out["b.sigma"].numpy()), dtype=torch.float64)
    out["options"] = torch.tensor([res, ch, k, width, fdim])
    save(d, name + ".pt", out)
