"""Precision/recall (Kynkaanniemi et al. 2019, k = 3), density/coverage (Naeem et al. 2020, k = 5)
and intra-class FID, straight from the papers' definitions in float64 with scipy's cdist:
the independent reference for metrics/prdc.cpp and metrics/intra_class_fid.cpp."""
import numpy as np
import torch
from scipy.spatial.distance import cdist

from common import out_dir, save
from frechet_scipy import fid_scipy

# The C++ side computes in float32: every comparison here must be decided by more than this
# relative margin, so that both sides agree exactly on the counts.
MARGIN = 1e-5


def nnd(x, k):
    """Distance of each point to its k-th nearest *other* point of the same set."""
    d = cdist(x, x)
    np.fill_diagonal(d, np.inf)  # a point is not its own neighbour
    return np.sort(d, axis=1)[:, k - 1]


def check_margin(d, radius, what):
    """d[i, j] against radius[j]: no pair may sit on a ball's boundary within MARGIN."""
    gap = np.abs(d - radius[None, :]) / radius[None, :]
    if gap.min() <= MARGIN:
        raise SystemExit(f"prdc oracle: {what} has a near-tie ({gap.min():.2e}); pick another seed")


def prdc(real, fake, k_pr=3, k_dc=5):
    d_fr = cdist(fake, real)  # [M, N]: d_fr[j, i] = ||Y_j - X_i||
    r_pr, f_pr, r_dc = nnd(real, k_pr), nnd(fake, k_pr), nnd(real, k_dc)
    check_margin(d_fr, r_pr, "precision")
    check_margin(d_fr.T, f_pr, "recall")
    check_margin(d_fr, r_dc, "density/coverage")
    # Kynkaanniemi et al. Eq. 1-2: f(phi, Phi) = 1 if phi lies in some closed k-NN ball of Phi.
    precision = np.mean((d_fr < r_pr[None, :]).any(axis=1))
    recall = np.mean((d_fr.T < f_pr[None, :]).any(axis=1))
    # Naeem et al.: density counts every real ball a fake falls in, over k M; coverage is the
    # share of real balls holding at least one fake.
    density = (d_fr < r_dc[None, :]).sum() / (k_dc * len(fake))
    coverage = np.mean(d_fr.min(axis=0) < r_dc)
    return precision, recall, density, coverage


d = out_dir()
rng = np.random.default_rng(11)
out = {}
f64 = lambda v: torch.tensor(float(v), dtype=torch.float64)  # noqa: E731
cases = {  # name: (N, M, dim, shift of the fake set, scale of the fake set)
    "gauss": (200, 150, 16, 0.0, 1.0),
    "shifted": (64, 64, 3, 1.5, 0.7),
    "offset": (120, 90, 8, 0.4, 1.3),  # both sets far from the origin (+20): cancellation check
}
for name, (n, m, dim, shift, scale) in cases.items():
    real = rng.standard_normal((n, dim))
    fake = rng.standard_normal((m, dim)) * scale + shift
    if name == "offset":
        real, fake = real + 20.0, fake + 20.0
    # the C++ side reads float32: compute on exactly the float32 values
    real, fake = real.astype(np.float32).astype(np.float64), fake.astype(np.float32).astype(np.float64)
    out[f"{name}.real"], out[f"{name}.fake"] = torch.from_numpy(real).float(), torch.from_numpy(fake).float()
    for key, v in zip(("precision", "recall", "density", "coverage"), prdc(real, fake)):
        out[f"{name}.{key}"] = f64(v)

# Intra-class FID: 3 classes in 4 dimensions, each class its own Gaussian; the fakes of class 2
# are off, so its FID stands out. Labels shuffled, so a class's rows are not contiguous.
n_real, n_fake = [40, 45, 38], [42, 39, 41]
reals, fakes, rl, fl, fids = [], [], [], [], []
for c in range(3):
    mix = rng.standard_normal((4, 4)) * 0.5 + np.eye(4)
    mean = rng.standard_normal(4) * 2
    xr = rng.standard_normal((n_real[c], 4)) @ mix + mean
    xf = rng.standard_normal((n_fake[c], 4)) @ mix * (1.6 if c == 2 else 1.0) + mean + (0.8 if c == 2 else 0.1)
    fids.append(fid_scipy(xr.mean(0), np.cov(xr, rowvar=False), xf.mean(0), np.cov(xf, rowvar=False)))
    reals.append(xr)
    fakes.append(xf)
    rl += [c] * n_real[c]
    fl += [c] * n_fake[c]
pr, pf = rng.permutation(sum(n_real)), rng.permutation(sum(n_fake))
out["icfid.real"] = torch.from_numpy(np.concatenate(reals)[pr])
out["icfid.real_labels"] = torch.tensor(rl, dtype=torch.int64)[torch.from_numpy(pr)]
out["icfid.fake"] = torch.from_numpy(np.concatenate(fakes)[pf])
out["icfid.fake_labels"] = torch.tensor(fl, dtype=torch.int64)[torch.from_numpy(pf)]
out["icfid.per_class"] = torch.tensor(fids, dtype=torch.float64)
out["icfid.mean"] = f64(np.mean(fids))
save(d, "prdc.pt", out)
