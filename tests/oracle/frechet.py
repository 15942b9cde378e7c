"""Frechet distances from scipy.linalg.sqrtm (pytorch-fid's formula) and .npz files from numpy."""
import os

import numpy as np
import torch

from common import out_dir, save
from frechet_scipy import fid_scipy

d = out_dir()
rng = np.random.default_rng(7)
out = {}
cases = {"full": (64, 500, 400), "rankdef": (64, 40, 500)}  # (dim, n1, n2): n1 < dim is singular
for name, (dim, n1, n2) in cases.items():
    a = rng.standard_normal((n1, dim)) @ rng.standard_normal((dim, dim)) * 0.3 + 1.0
    b = rng.standard_normal((n2, dim)) @ rng.standard_normal((dim, dim)) * 0.3 + 1.2
    mu1, s1 = a.mean(0), np.cov(a, rowvar=False)
    mu2, s2 = b.mean(0), np.cov(b, rowvar=False)
    out[f"{name}.feat1"] = torch.from_numpy(a)
    out[f"{name}.feat2"] = torch.from_numpy(b)
    out[f"{name}.mu1"], out[f"{name}.s1"] = torch.from_numpy(mu1), torch.from_numpy(s1)
    out[f"{name}.mu2"], out[f"{name}.s2"] = torch.from_numpy(mu2), torch.from_numpy(s2)
    out[f"{name}.fid"] = torch.tensor(fid_scipy(mu1, s1, mu2, s2), dtype=torch.float64)
save(d, "frechet.pt", out)

# npz as numpy writes them (stored and deflate), float64 and float32, one Fortran-ordered
# (load_stats accepts only a symmetric PSD sigma; the Fortran case needs an asymmetric array to
# show the transpose back, so it is read with npz::read).
mu = rng.standard_normal(5)
sigma = np.cov(rng.standard_normal((20, 5)), rowvar=False)
raw = rng.standard_normal((5, 5))
np.savez(os.path.join(d, "stored.npz"), mu=mu, sigma=sigma)
np.savez_compressed(os.path.join(d, "compressed.npz"), mu=mu, sigma=sigma)
np.savez(os.path.join(d, "f32_fortran.npz"), mu=mu.astype(np.float32), sigma=np.asfortranarray(raw))
np.savez(os.path.join(d, "nosigma.npz"), mu=mu)
save(d, "npz_expected.pt", {"mu": torch.from_numpy(mu), "sigma": torch.from_numpy(sigma), "raw": torch.from_numpy(raw)})
