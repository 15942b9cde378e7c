"""Moments of the standard normal truncated to [-T, T] (scipy.stats.truncnorm), for the
truncation-trick test: variance and fourth central moment (the standard error of a sample
variance of N draws is sqrt((mu4 - var^2) / N))."""
import numpy as np
import torch
from scipy.stats import truncnorm

from common import out_dir, save

d = out_dir()
ts = [0.5, 1.0, 2.0]
var, mu4 = [], []
for t in ts:
    dist = truncnorm(-t, t)
    var.append(dist.var())
    mu4.append(dist.moment(4))  # mean is 0, so the raw 4th moment is the central one
save(d, "truncnorm.pt", {
    "t": torch.tensor(ts, dtype=torch.float64),
    "var": torch.tensor(np.array(var), dtype=torch.float64),
    "mu4": torch.tensor(np.array(mu4), dtype=torch.float64),
})
