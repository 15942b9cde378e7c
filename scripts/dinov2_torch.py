"""DINOv2's backbone as a plain torch.nn module, laid out as facebookresearch/dinov2's
DinoVisionTransformer (so that the released dinov2_vit*14_pretrain.pth load with strict=True),
for the Python side of the feature-extraction speed comparison (scripts/bench_inception.py
--net dinov2): what dgm-eval runs, without torch.hub. Attention is the official module's
fallback without xFormers: softmax(q k^T / sqrt(d)) v as three matmuls."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ARCHS = {"vits14": (384, 12, 6, False), "vitb14": (768, 12, 12, False),
         "vitl14": (1024, 24, 16, False), "vitg14": (1536, 40, 24, True)}


class LayerScale(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * self.gamma


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * (c // self.heads) ** -0.5, qkv[1], qkv[2]
        return self.proj(((q @ k.transpose(-2, -1)).softmax(-1) @ v).transpose(1, 2).reshape(b, n, c))


class Mlp(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class SwiGLU(nn.Module):
    def __init__(self, dim):
        super().__init__()
        h = (int(4 * dim * 2 / 3) + 7) // 8 * 8
        self.w12, self.w3 = nn.Linear(dim, 2 * h), nn.Linear(h, dim)

    def forward(self, x):
        a, b = self.w12(x).chunk(2, -1)
        return self.w3(F.silu(a) * b)


class Block(nn.Module):
    def __init__(self, dim, heads, swiglu):
        super().__init__()
        self.norm1, self.attn, self.ls1 = nn.LayerNorm(dim, eps=1e-6), Attention(dim, heads), LayerScale(dim)
        self.norm2, self.mlp, self.ls2 = nn.LayerNorm(dim, eps=1e-6), (SwiGLU if swiglu else Mlp)(dim), LayerScale(dim)

    def forward(self, x):
        x = x + self.ls1(self.attn(self.norm1(x)))
        return x + self.ls2(self.mlp(self.norm2(x)))


class PatchEmbed(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Conv2d(3, dim, 14, 14)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class DinoV2(nn.Module):
    def __init__(self, arch):
        super().__init__()
        dim, depth, heads, swiglu = ARCHS[arch]
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, 37 * 37 + 1, dim))
        self.mask_token = nn.Parameter(torch.zeros(1, dim))
        self.patch_embed = PatchEmbed(dim)
        self.blocks = nn.ModuleList(Block(dim, heads, swiglu) for _ in range(depth))
        self.norm = nn.LayerNorm(dim, eps=1e-6)

    def pos(self, h, w):
        n = self.pos_embed.shape[1] - 1
        if h * w == n and h == w:
            return self.pos_embed
        m, dim = int(math.sqrt(n)), self.pos_embed.shape[-1]
        grid = self.pos_embed[:, 1:].float().reshape(1, m, m, dim).permute(0, 3, 1, 2)
        grid = F.interpolate(grid, scale_factor=((h + 0.1) / m, (w + 0.1) / m), mode="bicubic", align_corners=False)
        return torch.cat([self.pos_embed[:, :1], grid.permute(0, 2, 3, 1).reshape(1, h * w, dim)], 1)

    def forward(self, x):
        t = self.patch_embed(x)
        t = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), t], 1) + self.pos(x.shape[2] // 14, x.shape[3] // 14)
        for b in self.blocks:
            t = b(t)
        return self.norm(t)[:, 0]


def randomize(net, seed=2023):
    """Weights that keep activations O(1) (the released files cannot be downloaded here; speed
    does not depend on the values)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in net.named_parameters():
            if p.dim() >= 2 and "token" not in name and "pos_embed" not in name:
                p.normal_(0, math.prod(p.shape[1:]) ** -0.5, generator=g)
            elif name.endswith("gamma"):
                p.uniform_(0.1, 0.5, generator=g)
            elif "token" in name or "pos_embed" in name:
                p.normal_(0, 0.5, generator=g)
    return net
