"""`hamgan sample`'s seeding (gan/sample/truncated_normal.cpp, gan/sample/sampler.cpp): image k of
class c gets its latent, and a random-init Hamburger its initial D, from torch's CPU generator
(mt19937) seeded by a splitmix64 hash of (seed, c, k), so images depend on neither batch nor device."""
import torch

_MASK = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _generator(key):
    return torch.Generator().manual_seed(key)


def latent(seed, cls, k, z_dim, truncation=0.0):
    """z of image k of class cls: N(0, 1), entries with |z| > truncation redrawn (0: none)."""
    key = splitmix64(splitmix64(splitmix64(seed & _MASK) ^ cls) ^ k)
    gen = _generator(key)
    z = torch.normal(0.0, 1.0, (z_dim,), generator=gen)
    if truncation:
        bad = z.abs() > truncation
        while bool(bad.any()):
            z.masked_scatter_(bad, torch.normal(0.0, 1.0, (int(bad.sum()),), generator=gen))
            bad = z.abs() > truncation
    return z


def sample_bases(generator, seed, classes, ks):
    """The initial D `hamgan sample --seed seed` hands a random-init Hamburger for images
    (classes[i], ks[i]): (B * groups) x d x r; None when G has no such module."""
    ham = generator.random_hamburger()
    if ham is None:
        return None
    module = 1  # the first (only) random-init Hamburger of G, counted from 1
    out = []
    for c, k in zip(classes, ks):
        key = splitmix64(splitmix64(splitmix64((seed ^ 0x6A6D) & _MASK) ^ int(c)) ^ ((int(k) << 8) & _MASK) ^ module)
        gen = _generator(key)
        shape = (ham.groups, ham.d, ham.r)
        if ham.kind == "ham_nmf":
            b = torch.rand(shape, generator=gen)
            if ham.normalize_bases:
                b = torch.nn.functional.normalize(b, p=2.0, dim=1, eps=1e-6)
        else:
            b = torch.nn.functional.normalize(torch.randn(shape, generator=gen), p=2.0, dim=1, eps=1e-6)
        out.append(b)
    return torch.cat(out)


def to_uint8(images):
    """[-1, 1] images -> uint8 pixels as `hamgan sample` writes them: round((x + 1) * 127.5)."""
    return images.float().add(1.0).mul(127.5).round().clamp(0, 255).to(torch.uint8)
