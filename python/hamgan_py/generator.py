"""The class-conditional SAGAN/BigGAN generator of hamgan (gan/models/generator.h), rebuilt from
`hamgan export`'s DIR/config.json and DIR/model.safetensors."""
import os

import torch
from torch import nn

from .context import Hamburger, build_context
from .export_files import (CONFIG_FILE, MODEL_FILE, ExportError, check_binding, check_tensors, read_config,
                           read_header)
from .layers import BatchNorm, Conv, Embedding, GBlock, Linear, shapes_only
from .sampling import latent, sample_bases

_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
           torch.int64: "I64", torch.int32: "I32"}


class Generator(nn.Module):
    """forward(z, y, bases=None): z B x z_dim float, y B int64 labels -> B x C x R x R in [-1, 1].

    `bases`: the initial D of a random-init Hamburger ((B * groups) x d x r); None draws it from
    torch's default generator. sample() seeds it as `hamgan sample` does."""

    def __init__(self, config, shapes):
        super().__init__()
        self.config = config
        blocks = config["blocks"]
        self.z_dim = int(config["z_dim"])
        self.n_classes = int(config["n_classes"])
        self.hier = bool(config["hier"])
        self.chunk = int(config["z_chunk"])
        self.bottom = int(blocks[0]["in"])
        eps = float(config["bn_eps"])
        shared = int(config["shared_dim"])
        cond_kind, cond_dim, z_in = "labels", self.n_classes, self.z_dim
        self.shared = None
        if shared > 0:
            self.shared = Embedding(self.n_classes, shared)
            cond_kind, cond_dim = "vector", shared
            if self.hier:
                z_in = self.chunk
                cond_dim += self.chunk
        self.linear = Linear(z_in, self.bottom * 16, True)
        self.blocks = nn.ModuleList(
            [GBlock(b["in"], b["out"], b["upsample"], cond_kind, cond_dim, eps) for b in blocks])
        ctx = config["context"]
        self.context_after = int(ctx.get("after_block", -1))
        self.context = build_context(ctx, {k[len("context."):]: v for k, v in shapes.items() if k.startswith("context.")},
                                     cond_kind, cond_dim, eps)
        self.out_bn = BatchNorm(blocks[-1]["out"], eps, affine=True)
        self.out_conv = Conv(blocks[-1]["out"], int(config["image_channels"]), 3, 1, True)

    def random_hamburger(self):
        """The context module when it is a Hamburger drawing its initial D per image, else None."""
        c = self.context
        return c if isinstance(c, Hamburger) and c.random_bases else None

    def forward(self, z, y, bases=None):
        if z.dim() != 2 or z.shape[1] != self.z_dim:
            raise ValueError(f"generator: expected z of shape B x {self.z_dim}, got {tuple(z.shape)}")
        nb = len(self.blocks)
        conds = [y] * nb
        z0 = z
        if self.shared is not None:
            e = self.shared(y)
            if self.hier:
                zs = torch.split(z, self.chunk, 1)
                z0 = zs[0]
                conds = [torch.cat([e, zs[i + 1]], 1) for i in range(nb)]
            else:
                conds = [e] * nb
        h = self.linear(z0).view(z.shape[0], self.bottom, 4, 4)
        for i, block in enumerate(self.blocks):
            h = block(h, conds[i])
            if i == self.context_after and self.context is not None:
                if isinstance(self.context, Hamburger):
                    h = self.context(h, conds[i], bases)
                else:
                    h = self.context(h, conds[i])
        h = self.out_conv(torch.relu(self.out_bn(h)))
        return torch.tanh(h)

    def latents(self, seed, classes, ks, truncation=0.0):
        return torch.stack([latent(seed, int(c), int(k), self.z_dim, truncation) for c, k in zip(classes, ks)])

    @torch.no_grad()
    def sample(self, seed, classes, ks, truncation=0.0):
        """The images `hamgan sample --seed seed [--truncation T]` writes as <class>/<k>.png."""
        z = self.latents(seed, classes, ks, truncation)
        y = torch.as_tensor(list(classes), dtype=torch.long)
        return self(z, y, sample_bases(self, seed, classes, ks))


def load_generator(directory, map_location="cpu"):
    """The exported generator in DIR (config.json + model.safetensors) as a Generator in eval mode.

    Before anything is allocated: config.json's keys and types, the digest binding it to
    model.safetensors, and every tensor's name, dtype and shape against the file's header
    (export_files.py); any difference raises ExportError (a ValueError) naming the files."""
    from safetensors.torch import load_file

    config, config_bytes = read_config(directory)
    meta, header = read_header(directory)
    check_binding(directory, config_bytes, meta)
    shapes = {k: shape for k, (_, shape) in header.items()}
    config_path, model_path = os.path.join(directory, CONFIG_FILE), os.path.join(directory, MODEL_FILE)
    try:
        with shapes_only():
            probe = Generator(config, shapes)
    except (KeyError, StopIteration) as e:  # a context tensor the module reads is not in the file
        raise ExportError(f"{model_path}: its 'context.' tensors are not those of the context module "
                          f"{config['context']['type']!r} that {config_path} names"
                          + (f" (no 'context.{e.args[0]}')" if isinstance(e, KeyError) else "")) from None
    except (RuntimeError, TypeError, OverflowError, ValueError) as e:
        raise ExportError(f"{config_path} and {model_path} describe no buildable generator "
                          f"({type(e).__name__}: {e})") from None
    check_tensors({k: (_DTYPES.get(v.dtype, str(v.dtype)), tuple(v.shape)) for k, v in probe.state_dict().items()},
                  header, directory)
    tensors = load_file(model_path, device=str(map_location))
    g = Generator(config, shapes)
    g.load_state_dict(tensors, strict=True)
    return g.eval()
