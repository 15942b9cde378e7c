"""Mode seeking (Mao et al. 2019, Eq. 3-4, with the authors' code's 1 / (ratio + 1e-5)) written
from the definition with explicit loops over pairs: the independent reference for
gan/train/mode_seeking.cpp (distance matrices and a mask). For every two fakes i < j of one
label, d_I = mean |G_i - G_j| over pixels and d_z = mean |z_i - z_j|; the ratio is the mean of d_I
over the pairs over the mean of d_z; L = 1 / (ratio + 1e-5), 0 where no label repeats. The
gradient of L with respect to the fakes comes from autograd on these loops. float64."""
import torch

from common import out_dir, save

EPS = 1e-5


def mode_seeking(fake, z, y):
    d_images, d_latents = [], []
    for i in range(fake.shape[0]):
        for j in range(i + 1, fake.shape[0]):
            if int(y[i]) == int(y[j]):
                d_images.append((fake[i] - fake[j]).abs().mean())
                d_latents.append((z[i] - z[j]).abs().mean())
    if not d_images:
        return torch.zeros((), dtype=fake.dtype) * fake.sum()  # 0, with a zero gradient
    ratio = torch.stack(d_images).mean() / torch.stack(d_latents).mean()
    return 1.0 / (ratio + EPS)


d = out_dir()
g = torch.Generator().manual_seed(51)
out = {}
cases = {
    "pairs": torch.tensor([3, 1, 3, 0, 1, 3, 2, 4]),  # three pairs of label 3, one of label 1
    "one_pair": torch.tensor([0, 1, 2, 3, 4, 5, 6, 0]),
    "no_pair": torch.tensor([0, 1, 2, 3, 4, 5, 6, 7]),
}
for name, y in cases.items():
    fake = torch.randn(8, 2, 5, 3, generator=g, dtype=torch.float64).requires_grad_(True)
    z = torch.randn(8, 6, generator=g, dtype=torch.float64)
    loss = mode_seeking(fake, z, y)
    loss.backward()
    out.update({name + ".fake": fake.detach(), name + ".z": z, name + ".y": y,
                name + ".value": loss.detach(), name + ".grad": fake.grad})
save(d, "mode_seeking.pt", out)
print("mode_seeking oracle: wrote", len(out), "tensors")
