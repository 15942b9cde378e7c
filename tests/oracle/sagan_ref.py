"""Independent Python reference of hamgan's SAGAN/BigGAN layers and models.

Written from BigGAN-PyTorch's layers.py / BigGAN.py and the SAGAN paper, with
torch.nn.utils.spectral_norm for spectral normalization. Module names mirror hamgan's
C++ modules so state dicts map one to one.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import spectral_norm


def sn_conv(cin, cout, k, bias=True, eps=1e-6):
    return spectral_norm(nn.Conv2d(cin, cout, k, padding=k // 2, bias=bias), eps=eps)


def sn_linear(cin, cout, bias=True, eps=1e-6):
    return spectral_norm(nn.Linear(cin, cout, bias=bias), eps=eps)


def sn_embedding(n, d, eps=1e-6):
    return spectral_norm(nn.Embedding(n, d), eps=eps)


class CondBN(nn.Module):
    """bn(x) * (1 + gain(c)) + bias(c); c = labels (Embedding) or a vector (SN linear)."""

    def __init__(self, ch, cond_kind, cond_dim, bn_eps=1e-5, sn_eps=1e-6):
        super().__init__()
        self.bn = nn.BatchNorm2d(ch, affine=False, eps=bn_eps)
        if cond_kind == "labels":
            self.gain = nn.Embedding(cond_dim, ch)
            self.bias = nn.Embedding(cond_dim, ch)
        else:
            self.gain = sn_linear(cond_dim, ch, bias=False, eps=sn_eps)
            self.bias = sn_linear(cond_dim, ch, bias=False, eps=sn_eps)

    def forward(self, x, c):
        g = (1 + self.gain(c)).view(x.size(0), -1, 1, 1)
        b = self.bias(c).view(x.size(0), -1, 1, 1)
        return self.bn(x) * g + b


class GBlock(nn.Module):
    def __init__(self, cin, cout, cond_kind, cond_dim, bn_eps=1e-5, sn_eps=1e-6):
        super().__init__()
        self.bn1 = CondBN(cin, cond_kind, cond_dim, bn_eps, sn_eps)
        self.conv1 = sn_conv(cin, cout, 3, eps=sn_eps)
        self.bn2 = CondBN(cout, cond_kind, cond_dim, bn_eps, sn_eps)
        self.conv2 = sn_conv(cout, cout, 3, eps=sn_eps)
        self.conv_sc = sn_conv(cin, cout, 1, eps=sn_eps)  # always upsamples here

    def forward(self, x, c):
        h = F.interpolate(F.relu(self.bn1(x, c)), scale_factor=2)
        h = self.conv2(F.relu(self.bn2(self.conv1(h), c)))
        return h + self.conv_sc(F.interpolate(x, scale_factor=2))


class DBlock(nn.Module):
    """BigGAN order: pre-activation blocks convolve the shortcut, then pool. sc_pool_first:
    pool first in every block (hamgan's order; the two commute, pooling first is cheaper)."""

    def __init__(self, cin, cout, preactivation, downsample, sn_eps=1e-6, sc_pool_first=False):
        super().__init__()
        self.pre, self.down, self.sc_pool_first = preactivation, downsample, sc_pool_first
        self.conv1 = sn_conv(cin, cout, 3, eps=sn_eps)
        self.conv2 = sn_conv(cout, cout, 3, eps=sn_eps)
        self.learnable_sc = cin != cout or downsample
        if self.learnable_sc:
            self.conv_sc = sn_conv(cin, cout, 1, eps=sn_eps)

    def shortcut(self, x):
        if self.pre and not self.sc_pool_first:
            if self.learnable_sc:
                x = self.conv_sc(x)
            if self.down:
                x = F.avg_pool2d(x, 2)
        else:
            if self.down:
                x = F.avg_pool2d(x, 2)
            if self.learnable_sc:
                x = self.conv_sc(x)
        return x

    def forward(self, x):
        h = F.relu(x) if self.pre else x
        h = self.conv2(F.relu(self.conv1(h)))
        if self.down:
            h = F.avg_pool2d(h, 2)
        return h + self.shortcut(x)


class Attention(nn.Module):
    """SAGAN self-attention as BigGAN-PyTorch's layers.Attention."""

    def __init__(self, ch, sn_eps=1e-6):
        super().__init__()
        self.theta = sn_conv(ch, ch // 8, 1, bias=False, eps=sn_eps)
        self.phi = sn_conv(ch, ch // 8, 1, bias=False, eps=sn_eps)
        self.g = sn_conv(ch, ch // 2, 1, bias=False, eps=sn_eps)
        self.o = sn_conv(ch // 2, ch, 1, bias=False, eps=sn_eps)
        self.gamma = nn.Parameter(torch.tensor(0.0))

    def forward(self, x, c=None):
        b, ch, h, w = x.shape
        theta = self.theta(x).view(b, ch // 8, h * w)
        phi = F.max_pool2d(self.phi(x), 2).view(b, ch // 8, h * w // 4)
        g = F.max_pool2d(self.g(x), 2).view(b, ch // 2, h * w // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(b, ch // 2, h, w))
        return x + self.gamma * o


G_MULT = {128: [16, 16, 8, 4, 2, 1], 64: [16, 16, 8, 4, 2], 32: [4, 4, 4, 4]}
D_MULT = {128: ([1, 2, 4, 8, 16, 16], [1, 1, 1, 1, 1, 0]),
          64: ([1, 2, 4, 8, 16], [1, 1, 1, 1, 0]),
          32: ([4, 4, 4, 4], [1, 1, 0, 0])}


class Generator(nn.Module):
    def __init__(self, resolution, ch, n_classes, z_dim, image_channels, shared_dim=0,
                 hier=False, context=None, context_res=32, bn_eps=1e-5, sn_eps=1e-6,
                 make_context=None, mult=None):
        super().__init__()
        mult = mult or G_MULT[resolution]
        self.nb = len(mult) - 1
        self.bottom = mult[0] * ch
        self.hier = hier
        self.z_dim = z_dim
        cond_kind, cond_dim = "labels", n_classes
        z_in = z_dim
        if shared_dim > 0:
            self.shared = nn.Embedding(n_classes, shared_dim)
            cond_kind, cond_dim = "vector", shared_dim
            if hier:
                self.chunk = z_dim // (self.nb + 1)
                z_in = self.chunk
                cond_dim += self.chunk
        else:
            self.shared = None
        self.linear = sn_linear(z_in, self.bottom * 16, eps=sn_eps)
        self.blocks = nn.ModuleList()
        self.context_after = -1
        res = 4
        for i in range(self.nb):
            res *= 2
            self.blocks.append(GBlock(mult[i] * ch, mult[i + 1] * ch, cond_kind, cond_dim,
                                      bn_eps, sn_eps))
            if context and self.context_after < 0 and res == context_res:
                self.context = make_context(context, mult[i + 1] * ch, res, res,
                                            cond_kind, cond_dim)
                self.context_after = i
        self.out_bn = nn.BatchNorm2d(mult[-1] * ch, eps=bn_eps)
        self.out_conv = sn_conv(mult[-1] * ch, image_channels, 3, eps=sn_eps)

    def forward(self, z, y):
        conds = [y] * self.nb
        z0 = z
        if self.shared is not None:
            e = self.shared(y)
            if self.hier:
                zs = torch.split(z, self.chunk, 1)
                z0 = zs[0]
                conds = [torch.cat([e, zs[i + 1]], 1) for i in range(self.nb)]
            else:
                conds = [e] * self.nb
        h = self.linear(z0).view(z.size(0), self.bottom, 4, 4)
        for i, block in enumerate(self.blocks):
            h = block(h, conds[i])
            if i == self.context_after:
                h = self.context(h, conds[i])
        return torch.tanh(self.out_conv(F.relu(self.out_bn(h))))


def minibatch_std(x, group, features):
    """ProGAN's minibatch standard deviation (Karras et al. 2018, Sec. 3) over groups of `group`
    consecutive images (the last group takes the rest): per group and channel part f, the mean
    over channels and pixels of sqrt(biased variance over the group + 1e-8), appended as a map."""
    n, c, h, w = x.shape
    g = min(group, n)
    maps = []
    for start in range(0, n, g):
        part = x[start:start + g]
        k = part.shape[0]
        s = torch.stack([(part[:, f * c // features:(f + 1) * c // features].var(0, unbiased=False) + 1e-8)
                         .sqrt().mean() for f in range(features)])
        maps.append(s.view(1, features, 1, 1).expand(k, features, h, w))
    return torch.cat([x, torch.cat(maps)], 1)


class Discriminator(nn.Module):
    def __init__(self, resolution, ch, n_classes, image_channels, context=None, context_res=32,
                 sn_eps=1e-6, make_context=None, sc_pool_first=False, mbstd_group=0, mbstd_features=1,
                 mult=None):
        super().__init__()
        mult, down = mult or D_MULT[resolution][0], D_MULT[resolution][1]
        self.blocks = nn.ModuleList()
        self.context_after = -1
        self.mbstd = (mbstd_group, mbstd_features)
        res, cin = resolution, image_channels
        for i, (m, dn) in enumerate(zip(mult, down)):
            if dn:
                res //= 2
            extra = mbstd_features if mbstd_group and i == len(mult) - 1 else 0
            self.blocks.append(DBlock(cin + extra, m * ch, i > 0, bool(dn), sn_eps, sc_pool_first))
            cin = m * ch
            if context and self.context_after < 0 and res == context_res:
                self.context = make_context(context, cin, res, res, "none", 0)
                self.context_after = i
        self.linear = sn_linear(cin, 1, eps=sn_eps)
        self.embed = sn_embedding(n_classes, cin, eps=sn_eps)

    def forward(self, x, y):
        h = x
        for i, block in enumerate(self.blocks):
            if self.mbstd[0] and i == len(self.blocks) - 1:
                h = minibatch_std(h, *self.mbstd)
            h = block(h)
            if i == self.context_after:
                h = self.context(h, None)
        h = torch.sum(F.relu(h), [2, 3])
        return self.linear(h).squeeze(1) + torch.sum(self.embed(y) * h, 1)


def make_sagan_context(name, ch, h, w, cond_kind, cond_dim):
    assert name == "self_attention", name
    return Attention(ch)


def randomize_(module, seed):
    """Non-trivial values everywhere (BN stats, CBN gains, gamma) so tests see every path."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("gamma"):
                p.fill_(0.5)
            elif p.dim() >= 2:
                p.normal_(0, 0.3, generator=g)
            else:
                p.uniform_(-0.2, 0.2, generator=g)
        for name, b in module.named_buffers():
            if name.endswith("running_var"):
                b.uniform_(0.5, 1.5, generator=g)
            elif name.endswith("running_mean"):
                b.normal_(0, 0.1, generator=g)
            elif name.endswith("_u") or name.endswith("_v"):
                b.copy_(F.normalize(torch.randn(b.shape, generator=g), dim=0))
