"""Random-weight Inception weights for the FID-of-checkpoints tests: torchvision's Inception-v3
with pytorch-fid's 1008 classes and no aux head (the state-dict keys of pt_inception), He-scaled
conv weights so activations stay O(1) through the 94 layers, non-trivial BN statistics.
Only the weights matter here (the C++ pipeline is compared with itself), so the plain
torchvision blocks are fine: pytorch-fid's changed blocks have the same parameters."""
import os

import torch
import torchvision

from common import out_dir

d = out_dir()
torch.manual_seed(2016)
net = torchvision.models.inception_v3(num_classes=1008, aux_logits=False, init_weights=False)
with torch.no_grad():
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.2, 0.2)
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 2.0)
        if isinstance(m, torch.nn.Conv2d):
            m.weight.normal_(0, (2.0 / m.weight[0].numel()) ** 0.5)
        if isinstance(m, torch.nn.Linear):
            m.weight.normal_(0, 0.05)
            m.bias.uniform_(-1, 1)
torch.save(dict(net.state_dict()), os.path.join(d, "inception_random.pth"))
