"""The generator's building blocks in eval mode (hamgan's layers/*.h), spectral norm folded by the
exporter: every convolution, linear and embedding reads a plain `weight`."""
import contextlib

import torch
import torch.nn.functional as F
from torch import nn

# Where _buffer puts new buffers: None (torch's default, the CPU), or meta inside shapes_only().
_BUILD = {"device": None}


@contextlib.contextmanager
def shapes_only():
    """Modules built inside hold their buffers on torch's meta device: shapes and dtypes without
    memory, so load_generator compares them with the file before allocating anything."""
    before = _BUILD["device"]
    _BUILD["device"] = torch.device("meta")
    try:
        yield
    finally:
        _BUILD["device"] = before


def _buffer(shape):
    return torch.zeros(shape, dtype=torch.float32, device=_BUILD["device"])


class Conv(nn.Module):
    """A 2-D convolution, stride 1 (hamgan's SNConv2d with W / sigma folded)."""

    def __init__(self, cin, cout, kernel, padding, bias):
        super().__init__()
        self.padding = padding
        self.register_buffer("weight", _buffer((cout, cin, kernel, kernel)))
        if bias:
            self.register_buffer("bias", _buffer((cout,)))
        else:
            self.bias = None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, padding=self.padding)


class Linear(nn.Module):
    def __init__(self, cin, cout, bias):
        super().__init__()
        self.register_buffer("weight", _buffer((cout, cin)))
        if bias:
            self.register_buffer("bias", _buffer((cout,)))
        else:
            self.bias = None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class Embedding(nn.Module):
    def __init__(self, num, dim):
        super().__init__()
        self.register_buffer("weight", _buffer((num, dim)))

    def forward(self, y):
        return F.embedding(y, self.weight)


class BatchNorm(nn.Module):
    """BatchNorm2d in eval mode: running statistics (the checkpoint's, or standing statistics)."""

    def __init__(self, channels, eps, affine):
        super().__init__()
        self.eps = eps
        self.register_buffer("running_mean", _buffer((channels,)))
        self.register_buffer("running_var", _buffer((channels,)))
        if affine:
            self.register_buffer("weight", _buffer((channels,)))
            self.register_buffer("bias", _buffer((channels,)))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        # ATen's eval batch norm as one affine map per channel, x * alpha + beta with
        # alpha = weight / sqrt(var + eps), beta = bias - mean * alpha; written out so that ONNX
        # export needs no static channel count (a BatchNormalization node does).
        alpha = torch.rsqrt(self.running_var + self.eps)
        if self.weight is not None:
            alpha = alpha * self.weight
        beta = -self.running_mean * alpha
        if self.bias is not None:
            beta = beta + self.bias
        return x * alpha.view(1, -1, 1, 1) + beta.view(1, -1, 1, 1)


class CondBatchNorm(nn.Module):
    """y = bn(x) * (1 + gain(c)) + bias(c): per-class embeddings (c = labels) or linear maps of
    BigGAN's [shared embedding, z chunk] vector (de Vries et al. 2017; BigGAN)."""

    def __init__(self, channels, cond_kind, cond_dim, eps):
        super().__init__()
        self.bn = BatchNorm(channels, eps, affine=False)
        if cond_kind == "labels":
            self.gain = Embedding(cond_dim, channels)
            self.bias = Embedding(cond_dim, channels)
        else:
            self.gain = Linear(cond_dim, channels, bias=False)
            self.bias = Linear(cond_dim, channels, bias=False)

    def forward(self, x, cond):
        b, c = x.shape[0], x.shape[1]
        gain = self.gain(cond).view(b, c, 1, 1)
        bias = self.bias(cond).view(b, c, 1, 1)
        return self.bn(x) * (1 + gain) + bias


def upsample2(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


class GBlock(nn.Module):
    """h = conv2(relu(bn2(conv1(up(relu(bn1(x, c)))), c))); out = h + up(conv_sc(x))."""

    def __init__(self, cin, cout, upsample, cond_kind, cond_dim, eps):
        super().__init__()
        self.upsample = upsample
        self.bn1 = CondBatchNorm(cin, cond_kind, cond_dim, eps)
        self.conv1 = Conv(cin, cout, 3, 1, True)
        self.bn2 = CondBatchNorm(cout, cond_kind, cond_dim, eps)
        self.conv2 = Conv(cout, cout, 3, 1, True)
        self.conv_sc = Conv(cin, cout, 1, 0, True) if (cin != cout or upsample) else None

    def forward(self, x, cond):
        h = torch.relu(self.bn1(x, cond))
        h = self.conv1(upsample2(h) if self.upsample else h)
        h = self.conv2(torch.relu(self.bn2(h, cond)))
        s = self.conv_sc(x) if self.conv_sc is not None else x
        return h + (upsample2(s) if self.upsample else s)
