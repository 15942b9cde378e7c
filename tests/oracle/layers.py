"""Oracle for conditional BN, G/D residual blocks and SAGAN self-attention, in training
mode (batch statistics, one power iteration) then eval mode, with input and weight
gradients. H != W everywhere."""
import torch

from common import out_dir, save, prefixed
from sagan_ref import CondBN, GBlock, DBlock, Attention, randomize_

out = out_dir()


def run(name, module, inputs, seed):
    randomize_(module, seed)
    d = prefixed("init", module.state_dict())
    module.train()
    xs = [t.clone().requires_grad_(t.is_floating_point()) for t in inputs]
    y = module(*xs)
    r = torch.randn(y.shape, generator=torch.Generator().manual_seed(seed + 1))
    (y * r).sum().backward()
    d["train.y"], d["r"] = y, r
    for i, t in enumerate(xs):
        d[f"in{i}"] = t.detach()
        if t.is_floating_point():
            d[f"train.grad_in{i}"] = t.grad
    for k, p in module.named_parameters():
        d["train.grad." + k] = p.grad if p.grad is not None else torch.zeros_like(p)
    d.update(prefixed("after", module.state_dict()))
    module.eval()
    d["eval.y"] = module(*[t.detach() for t in xs])
    save(out, name + ".pt", d)


torch.manual_seed(0)
lab = torch.tensor([0, 3, 1])
run("cbn_labels", CondBN(6, "labels", 4), [torch.randn(3, 6, 5, 4), lab], 10)
run("cbn_vector", CondBN(6, "vector", 7), [torch.randn(3, 6, 5, 4), torch.randn(3, 7)], 11)
run("gblock", GBlock(6, 4, "labels", 5), [torch.randn(2, 6, 3, 5), torch.tensor([4, 1])], 12)
run("dblock_optimized", DBlock(3, 8, False, True), [torch.randn(2, 3, 8, 6)], 13)
run("dblock", DBlock(8, 12, True, True), [torch.randn(2, 8, 6, 4)], 14)
run("dblock_keep", DBlock(8, 8, True, False), [torch.randn(2, 8, 4, 6)], 15)
run("attention", Attention(16), [torch.randn(2, 16, 6, 4)], 16)
