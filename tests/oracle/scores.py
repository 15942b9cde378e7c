"""Inception Score and KID written from their definitions in numpy (float64)."""
import numpy as np
import torch

from common import out_dir, save

d = out_dir()
rng = np.random.default_rng(3)
logits = rng.standard_normal((103, 1008)) * 3
p = np.exp(logits - logits.max(1, keepdims=True))
p /= p.sum(1, keepdims=True)
scores = []
n = len(p)
for k in range(10):
    part = p[k * n // 10:(k + 1) * n // 10]
    py = part.mean(0, keepdims=True)
    scores.append(np.exp((part * (np.log(part) - np.log(py))).sum(1).mean()))

x = rng.standard_normal((60, 32)) + 0.1
y = rng.standard_normal((50, 32)) * 1.1
m = 50  # subset = all of the smaller set: the estimate over x[perm][:50] depends on which 50
x50 = x[:50]
k = lambda a, b: (a @ b.T / a.shape[1] + 1) ** 3
kxx, kyy, kxy = k(x50, x50), k(y, y), k(x50, y)
mmd = (kxx.sum() - np.trace(kxx) + kyy.sum() - np.trace(kyy)) / (m * (m - 1)) - 2 * kxy.mean()
save(d, "scores.pt", {"logits": torch.from_numpy(logits), "is_mean": torch.tensor(np.mean(scores)),
                      "is_std": torch.tensor(np.std(scores)), "x50": torch.from_numpy(x50),
                      "y": torch.from_numpy(y), "kid": torch.tensor(mmd)})
