"""Run by test_frechet after C++ wrote an .npz: numpy must read it and find the values in
the reference .npz that numpy itself wrote. Exit status 0 only if all agree."""
import sys

import numpy as np

path, ref = sys.argv[1], sys.argv[2]
with np.load(path) as z:
    got = {k: z[k] for k in z.files}
want = np.load(ref)
assert sorted(got) == ["mu", "sigma"], sorted(got)
assert got["mu"].dtype == np.float64 and got["mu"].shape == want["mu"].shape, got["mu"].shape
assert np.array_equal(got["mu"], want["mu"]), "mu differs"
assert np.array_equal(got["sigma"], want["sigma"]), "sigma differs"
print("numpy agrees:", path)
