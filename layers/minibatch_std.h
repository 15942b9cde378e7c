// Minibatch standard deviation (Karras et al. 2018, ProGAN Sec. 3; StyleGAN2's grouped form):
// D sees, as F extra feature maps, how much the images of its group differ. For a group of g
// images and the channels split into F parts, feature f is
//   s_f = mean over the part's channels c and pixels (i, j) of sqrt(Var_group[x_{c,i,j}] + 1e-8)
// (the variance over the group's images, biased), repeated over the pixels and appended to
// every image of the group. A generator whose samples within a batch look alike gives a small
// s, which D can learn to call fake: a direct gradient against within-class collapse.
//
// Groups are runs of consecutive images (StyleGAN2 strides them): the trainer puts real and
// fake images into one D batch, first the real then the fake, and with micro-batches a
// multiple of g (gan/config/config.cpp checks it) no group mixes them, so one pass still equals
// two. A batch that is not a multiple of g (evaluation) ends with a smaller group of the rest;
// a group of one image has s = sqrt(1e-8). The statistics of bf16 and fp16 inputs are
// computed in fp32.
#pragma once
#include <torch/torch.h>

namespace hamgan {

// x: N x C x H x W with C a multiple of `features`; group >= 1 (min(group, N) images per group).
// Returns N x (C + features) x H x W: x followed by the group's s_f.
torch::Tensor minibatch_std(const torch::Tensor& x, int64_t group, int64_t features);

}  // namespace hamgan
