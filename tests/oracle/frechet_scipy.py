"""pytorch-fid's Frechet distance through scipy.linalg.sqrtm: the independent reference for the
C++ Eigen implementation, shared by the oracle and the Inception speed comparison."""
import numpy as np
import scipy.linalg


def fid_scipy(mu1, s1, mu2, s2):
    covmean, _ = scipy.linalg.sqrtm(s1.dot(s2), disp=False)
    covmean = covmean.real
    diff = mu1 - mu2
    return diff.dot(diff) + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean)
