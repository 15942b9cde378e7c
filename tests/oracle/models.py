"""Oracle for the full generator and discriminator at 32, 64 and 128 (small ch), with
self-attention, BigGAN's shared embedding + hierarchical z, D with the minibatch standard
deviation, D gradients with respect to
input and every weight, and the parameter counts of configs/imagenet128_sagan.yaml."""
import torch

from common import out_dir, save, prefixed
from sagan_ref import Generator, Discriminator, make_sagan_context, randomize_

out = out_dir()
torch.manual_seed(0)


def run_g(name, g, batch, n_classes, seed):
    randomize_(g, seed)
    gen = torch.Generator().manual_seed(seed)
    d = prefixed("init", g.state_dict())
    z = torch.randn(batch, g.z_dim, generator=gen)
    y = torch.randint(0, n_classes, (batch,), generator=gen)
    g.train()
    d["z"], d["y"], d["train.x"] = z, y, g(z, y)
    d.update(prefixed("after", g.state_dict()))
    g.eval()
    d["eval.x"] = g(z, y)
    save(out, name + ".pt", d)


def run_d(name, dmod, batch, res, chans, n_classes, seed):
    randomize_(dmod, seed)
    gen = torch.Generator().manual_seed(seed)
    d = prefixed("init", dmod.state_dict())
    x = torch.randn(batch, chans, res, res, generator=gen).requires_grad_(True)
    y = torch.randint(0, n_classes, (batch,), generator=gen)
    dmod.train()
    o = dmod(x, y)
    o.sum().backward()
    d["x"], d["y"], d["train.out"], d["train.grad_x"] = x.detach(), y, o, x.grad
    for k, p in dmod.named_parameters():
        d["train.grad." + k] = p.grad
    dmod.eval()
    d["eval.out"] = dmod(x.detach(), y)
    save(out, name + ".pt", d)


sa = dict(context="self_attention", make_context=make_sagan_context)
run_g("g32", Generator(32, 4, 5, 16, 1, context_res=32, **sa), 3, 5, 1)
run_g("g64_hier", Generator(64, 2, 5, 20, 3, shared_dim=6, hier=True, context_res=16, **sa), 2, 5, 2)
run_g("g128", Generator(128, 2, 3, 12, 3, context_res=32, **sa), 2, 3, 3)
run_d("d32", Discriminator(32, 4, 5, 1, context_res=16, **sa), 3, 32, 1, 5, 4)
run_d("d64", Discriminator(64, 8, 5, 3, context_res=32, **sa), 2, 64, 3, 5, 5)
# the minibatch standard deviation before the last block; 5 images in groups of 2: the last group is one
run_d("d32_mbstd", Discriminator(32, 4, 5, 1, context_res=16, mbstd_group=2, mbstd_features=2, **sa), 5, 32, 1, 5, 7)
# channel multipliers other than BigGAN's (generator.ch_mult, discriminator.ch_mult)
run_g("g32_mult", Generator(32, 4, 5, 16, 1, context_res=32, mult=[4, 4, 4, 2], **sa), 3, 5, 8)
run_d("d32_mult", Discriminator(32, 4, 5, 1, context_res=16, mult=[2, 4, 4, 4], **sa), 3, 32, 1, 5, 9)
run_d("d128", Discriminator(128, 8, 3, 3, context_res=32, **sa), 2, 128, 3, 3, 6)

# configs/imagenet128_sagan.yaml
g = Generator(128, 64, 1000, 128, 3, context_res=32, **sa)
dm = Discriminator(128, 64, 1000, 3, context_res=32, **sa)
save(out, "counts.pt", {
    "imagenet128_sagan.G": torch.tensor(sum(p.numel() for p in g.parameters())),
    "imagenet128_sagan.D": torch.tensor(sum(p.numel() for p in dm.parameters())),
})
