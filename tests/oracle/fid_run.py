"""Random-weight Inception weights for the FID-of-checkpoints tests: torchvision's Inception-v3
with pytorch-fid's 1008 classes and no aux head (the state-dict keys of pt_inception), randomized
as the Inception oracle does.
Only the weights matter here (the C++ pipeline is compared with itself), so the plain
torchvision blocks are fine: pytorch-fid's changed blocks have the same parameters."""
import os

import torch
import torchvision

from common import out_dir
from fid_inception_net import randomize

d = out_dir()
torch.manual_seed(2016)
net = randomize(torchvision.models.inception_v3(num_classes=1008, aux_logits=False, init_weights=False))
torch.save(dict(net.state_dict()), os.path.join(d, "inception_random.pth"))
