"""pytorch-fid's FID Inception built from Debian's torchvision: Inception3 with 1008 classes and
the four changed blocks, a (pool, logits) head, pytorch-fid's input scaling, and a random
initialisation that keeps activations O(1). Shared by the oracle and the speed comparison."""
import torch
import torch.nn.functional as F
from torchvision.models import inception as tvi


class FIDInceptionA(tvi.InceptionA):
    def forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        bd = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(F.avg_pool2d(x, 3, 1, 1, count_include_pad=False))
        return torch.cat([b1, b5, bd, bp], 1)


class FIDInceptionC(tvi.InceptionC):
    def forward(self, x):
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = self.branch7x7dbl_1(x)
        for m in (self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4, self.branch7x7dbl_5):
            bd = m(bd)
        bp = self.branch_pool(F.avg_pool2d(x, 3, 1, 1, count_include_pad=False))
        return torch.cat([b1, b7, bd, bp], 1)


class FIDInceptionE(tvi.InceptionE):
    def __init__(self, c, max_pool):
        super().__init__(c)
        self.max_pool = max_pool

    def forward(self, x):
        b1 = self.branch1x1(x)
        t = self.branch3x3_1(x)
        b3 = torch.cat([self.branch3x3_2a(t), self.branch3x3_2b(t)], 1)
        d = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = torch.cat([self.branch3x3dbl_3a(d), self.branch3x3dbl_3b(d)], 1)
        p = F.max_pool2d(x, 3, 1, 1) if self.max_pool else F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)
        return torch.cat([b1, b3, bd, self.branch_pool(p)], 1)


def fid_inception():
    net = tvi.Inception3(num_classes=1008, aux_logits=False, transform_input=False, init_weights=False)
    net.Mixed_5b, net.Mixed_5c, net.Mixed_5d = FIDInceptionA(192, 32), FIDInceptionA(256, 64), FIDInceptionA(288, 64)
    net.Mixed_6b, net.Mixed_6c = FIDInceptionC(768, 128), FIDInceptionC(768, 160)
    net.Mixed_6d, net.Mixed_6e = FIDInceptionC(768, 160), FIDInceptionC(768, 192)
    net.Mixed_7b, net.Mixed_7c = FIDInceptionE(1280, False), FIDInceptionE(2048, True)
    return net


class Features(torch.nn.Module):
    """Network input -> (pool, logits), as pytorch-fid's and torch-fidelity's heads."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        n = self.net
        for m in (n.Conv2d_1a_3x3, n.Conv2d_2a_3x3, n.Conv2d_2b_3x3):
            x = m(x)
        x = F.max_pool2d(x, 3, 2)
        x = n.Conv2d_4a_3x3(n.Conv2d_3b_1x1(x))
        x = F.max_pool2d(x, 3, 2)
        for m in (n.Mixed_5b, n.Mixed_5c, n.Mixed_5d, n.Mixed_6a, n.Mixed_6b, n.Mixed_6c, n.Mixed_6d,
                  n.Mixed_6e, n.Mixed_7a, n.Mixed_7b, n.Mixed_7c):
            x = m(x)
        pool = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return pool, n.fc(pool)


def torch_input(img):  # pytorch-fid
    if img.shape[1] == 1:
        img = img.repeat(1, 3, 1, 1)
    return 2 * F.interpolate(img, size=(299, 299), mode="bilinear", align_corners=False) - 1


def randomize(net):
    """Random weights with non-trivial BN statistics; He-scaled convs keep activations O(1)
    through the 94 layers."""
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(7)
            if isinstance(m, torch.nn.Conv2d):
                m.weight.normal_(0, (2.0 / m.weight[0].numel()) ** 0.5)
            if isinstance(m, torch.nn.Linear):
                m.weight.normal_(0, 0.05)
                m.bias.uniform_(-1, 1)
    return net
