#include "metrics/inception.h"

#include <caffe2/serialize/inline_container.h>

#include <fstream>

#include "core/error.h"
#include "core/state_dict.h"
#include "io/torch_file.h"
#include "io/regular_file.h"

namespace hamgan::metrics {

namespace F = torch::nn::functional;

namespace {

// conv (no bias) -> BN(eps 1e-3) -> ReLU, torchvision's BasicConv2d.
struct BasicConv2dImpl : torch::nn::Module {
  torch::nn::Conv2d conv{nullptr};
  torch::nn::BatchNorm2d bn{nullptr};
  BasicConv2dImpl(int64_t in, int64_t out, torch::ExpandingArray<2> k, torch::ExpandingArray<2> stride = 1,
                  torch::ExpandingArray<2> pad = 0) {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, k).stride(stride).padding(pad).bias(false)));
    bn = register_module("bn", torch::nn::BatchNorm2d(torch::nn::BatchNorm2dOptions(out).eps(0.001)));
  }
  torch::Tensor forward(const torch::Tensor& x) { return torch::relu(bn(conv(x))); }
};
TORCH_MODULE(BasicConv2d);

BasicConv2d conv(int64_t in, int64_t out, torch::ExpandingArray<2> k, torch::ExpandingArray<2> stride = 1,
                 torch::ExpandingArray<2> pad = 0) {
  return BasicConv2d(std::make_shared<BasicConv2dImpl>(in, out, k, stride, pad));
}

torch::Tensor avg3_nopad(const torch::Tensor& x) {  // pytorch-fid: count_include_pad = False
  return F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(1).padding(1).count_include_pad(false));
}

struct BlockA : torch::nn::Module {  // FIDInceptionA
  BasicConv2d b1, b5_1, b5_2, bd_1, bd_2, bd_3, bp;
  BlockA(int64_t in, int64_t pool)
      : b1(conv(in, 64, 1)), b5_1(conv(in, 48, 1)), b5_2(conv(48, 64, 5, 1, 2)), bd_1(conv(in, 64, 1)), bd_2(conv(64, 96, 3, 1, 1)),
        bd_3(conv(96, 96, 3, 1, 1)), bp(conv(in, pool, 1)) {
    register_module("branch1x1", b1), register_module("branch5x5_1", b5_1), register_module("branch5x5_2", b5_2);
    register_module("branch3x3dbl_1", bd_1), register_module("branch3x3dbl_2", bd_2);
    register_module("branch3x3dbl_3", bd_3), register_module("branch_pool", bp);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b1(x), b5_2(b5_1(x)), bd_3(bd_2(bd_1(x))), bp(avg3_nopad(x))}, 1);
  }
};

struct BlockB : torch::nn::Module {  // InceptionB (unchanged)
  BasicConv2d b3, bd_1, bd_2, bd_3;
  explicit BlockB(int64_t in)
      : b3(conv(in, 384, 3, 2)), bd_1(conv(in, 64, 1)), bd_2(conv(64, 96, 3, 1, 1)), bd_3(conv(96, 96, 3, 2)) {
    register_module("branch3x3", b3), register_module("branch3x3dbl_1", bd_1);
    register_module("branch3x3dbl_2", bd_2), register_module("branch3x3dbl_3", bd_3);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b3(x), bd_3(bd_2(bd_1(x))), F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2))}, 1);
  }
};

struct BlockC : torch::nn::Module {  // FIDInceptionC
  BasicConv2d b1, b7_1, b7_2, b7_3, bd_1, bd_2, bd_3, bd_4, bd_5, bp;
  BlockC(int64_t in, int64_t c7)
      : b1(conv(in, 192, 1)), b7_1(conv(in, c7, 1)), b7_2(conv(c7, c7, {1, 7}, 1, {0, 3})), b7_3(conv(c7, 192, {7, 1}, 1, {3, 0})),
        bd_1(conv(in, c7, 1)), bd_2(conv(c7, c7, {7, 1}, 1, {3, 0})), bd_3(conv(c7, c7, {1, 7}, 1, {0, 3})),
        bd_4(conv(c7, c7, {7, 1}, 1, {3, 0})), bd_5(conv(c7, 192, {1, 7}, 1, {0, 3})), bp(conv(in, 192, 1)) {
    register_module("branch1x1", b1), register_module("branch7x7_1", b7_1), register_module("branch7x7_2", b7_2);
    register_module("branch7x7_3", b7_3), register_module("branch7x7dbl_1", bd_1);
    register_module("branch7x7dbl_2", bd_2), register_module("branch7x7dbl_3", bd_3);
    register_module("branch7x7dbl_4", bd_4), register_module("branch7x7dbl_5", bd_5);
    register_module("branch_pool", bp);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b1(x), b7_3(b7_2(b7_1(x))), bd_5(bd_4(bd_3(bd_2(bd_1(x))))), bp(avg3_nopad(x))}, 1);
  }
};

struct BlockD : torch::nn::Module {  // InceptionD (unchanged)
  BasicConv2d b3_1, b3_2, b7_1, b7_2, b7_3, b7_4;
  explicit BlockD(int64_t in)
      : b3_1(conv(in, 192, 1)), b3_2(conv(192, 320, 3, 2)), b7_1(conv(in, 192, 1)), b7_2(conv(192, 192, {1, 7}, 1, {0, 3})),
        b7_3(conv(192, 192, {7, 1}, 1, {3, 0})), b7_4(conv(192, 192, 3, 2)) {
    register_module("branch3x3_1", b3_1), register_module("branch3x3_2", b3_2);
    register_module("branch7x7x3_1", b7_1), register_module("branch7x7x3_2", b7_2);
    register_module("branch7x7x3_3", b7_3), register_module("branch7x7x3_4", b7_4);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::cat({b3_2(b3_1(x)), b7_4(b7_3(b7_2(b7_1(x)))), F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2))}, 1);
  }
};

struct BlockE : torch::nn::Module {  // FIDInceptionE_1 (avg pool, no pad count) / E_2 (max pool)
  BasicConv2d b1, b3_1, b3_2a, b3_2b, bd_1, bd_2, bd_3a, bd_3b, bp;
  bool max_pool;
  BlockE(int64_t in, bool max_pool)
      : b1(conv(in, 320, 1)), b3_1(conv(in, 384, 1)), b3_2a(conv(384, 384, {1, 3}, 1, {0, 1})), b3_2b(conv(384, 384, {3, 1}, 1, {1, 0})),
        bd_1(conv(in, 448, 1)), bd_2(conv(448, 384, 3, 1, 1)), bd_3a(conv(384, 384, {1, 3}, 1, {0, 1})),
        bd_3b(conv(384, 384, {3, 1}, 1, {1, 0})), bp(conv(in, 192, 1)), max_pool(max_pool) {
    register_module("branch1x1", b1), register_module("branch3x3_1", b3_1);
    register_module("branch3x3_2a", b3_2a), register_module("branch3x3_2b", b3_2b);
    register_module("branch3x3dbl_1", bd_1), register_module("branch3x3dbl_2", bd_2);
    register_module("branch3x3dbl_3a", bd_3a), register_module("branch3x3dbl_3b", bd_3b);
    register_module("branch_pool", bp);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const torch::Tensor t3 = b3_1(x), td = bd_2(bd_1(x));
    const torch::Tensor pooled =
        max_pool ? F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(1).padding(1)) : avg3_nopad(x);
    return torch::cat({b1(x), torch::cat({b3_2a(t3), b3_2b(t3)}, 1), torch::cat({bd_3a(td), bd_3b(td)}, 1), bp(pooled)}, 1);
  }
};

// TensorFlow 1.x bilinear resize (align_corners = false, no half-pixel centres): output i samples
// input i * in/out; torch-fidelity's interpolate_bilinear_2d_like_tensorflow1x.
torch::Tensor tf_resize_axis(const torch::Tensor& x, int64_t dim, int64_t out) {
  const int64_t in = x.size(dim);
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(x.device());
  const torch::Tensor src = torch::arange(out, opts) * (static_cast<float>(in) / static_cast<float>(out));
  const torch::Tensor i0 = src.floor().to(torch::kLong).clamp_max(in - 1);
  const torch::Tensor i1 = (i0 + 1).clamp_max(in - 1);
  std::vector<int64_t> shape(x.dim(), 1);
  shape[dim] = out;
  const torch::Tensor w = (src - i0.to(torch::kFloat)).view(shape).to(x.dtype());
  const torch::Tensor a = x.index_select(dim, i0), b = x.index_select(dim, i1);
  return a + (b - a) * w;
}

}  // namespace

Resize parse_resize(const std::string& s) {
  if (s == "torch") return Resize::Torch;
  if (s == "tf") return Resize::TF;
  fail("--resize '", s, "': expected 'torch' (pytorch-fid) or 'tf' (torch-fidelity, TF 1.x bilinear)");
}

FidInception3Impl::FidInception3Impl() {
  auto reg = [&](const std::string& n, BasicConv2d m) { stem_.emplace_back(n, register_module(n, m)); };
  reg("Conv2d_1a_3x3", conv(3, 32, 3, 2));
  reg("Conv2d_2a_3x3", conv(32, 32, 3));
  reg("Conv2d_2b_3x3", conv(32, 64, 3, 1, 1));
  reg("Conv2d_3b_1x1", conv(64, 80, 1));
  reg("Conv2d_4a_3x3", conv(80, 192, 3));
  b5b_ = torch::nn::AnyModule(register_module("Mixed_5b", std::make_shared<BlockA>(192, 32)));
  b5c_ = torch::nn::AnyModule(register_module("Mixed_5c", std::make_shared<BlockA>(256, 64)));
  b5d_ = torch::nn::AnyModule(register_module("Mixed_5d", std::make_shared<BlockA>(288, 64)));
  b6a_ = torch::nn::AnyModule(register_module("Mixed_6a", std::make_shared<BlockB>(288)));
  b6b_ = torch::nn::AnyModule(register_module("Mixed_6b", std::make_shared<BlockC>(768, 128)));
  b6c_ = torch::nn::AnyModule(register_module("Mixed_6c", std::make_shared<BlockC>(768, 160)));
  b6d_ = torch::nn::AnyModule(register_module("Mixed_6d", std::make_shared<BlockC>(768, 160)));
  b6e_ = torch::nn::AnyModule(register_module("Mixed_6e", std::make_shared<BlockC>(768, 192)));
  b7a_ = torch::nn::AnyModule(register_module("Mixed_7a", std::make_shared<BlockD>(768)));
  b7b_ = torch::nn::AnyModule(register_module("Mixed_7b", std::make_shared<BlockE>(1280, false)));
  b7c_ = torch::nn::AnyModule(register_module("Mixed_7c", std::make_shared<BlockE>(2048, true)));
  fc_ = register_module("fc", torch::nn::Linear(2048, 1008));
}

InceptionOutput FidInception3Impl::forward(torch::Tensor x) {
  auto conv = [&](size_t k) { x = std::static_pointer_cast<BasicConv2dImpl>(stem_[k].second)->forward(x); };
  const auto pool = F::MaxPool2dFuncOptions(3).stride(2);
  conv(0), conv(1), conv(2);
  x = F::max_pool2d(x, pool);
  conv(3), conv(4);
  x = F::max_pool2d(x, pool);
  for (auto* b : {&b5b_, &b5c_, &b5d_, &b6a_, &b6b_, &b6c_, &b6d_, &b6e_, &b7a_, &b7b_, &b7c_})
    x = b->forward<torch::Tensor>(x);
  InceptionOutput out;
  out.pool = x.mean({2, 3});  // adaptive average pool to 1x1
  out.logits_unbiased = out.pool.matmul(fc_->weight.t());
  out.logits = out.logits_unbiased + fc_->bias;
  return out;
}

torch::Tensor inception_input(const torch::Tensor& images, Resize mode) {
  if (images.dim() != 4 || (images.size(1) != 1 && images.size(1) != 3))
    fail("inception input: images of shape ", images.sizes(), ", expected [B, 1 or 3, H, W]");
  torch::Tensor x = images.to(torch::kFloat);
  if (x.size(1) == 1) x = x.expand({-1, 3, -1, -1});
  if (mode == Resize::Torch) {
    x = F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{299, 299})
                              .mode(torch::kBilinear).align_corners(false));
    return 2 * x - 1;
  }
  x = tf_resize_axis(tf_resize_axis(x * 255, 2, 299), 3, 299);
  return (x - 128) / 128;
}

bool is_torchscript_file(const std::string& path) {
  io::require_regular_file(path, "Inception weights");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, ": cannot open");
  char m[2] = {0, 0};
  in.read(m, 2);
  if (m[0] != 'P' || m[1] != 'K') return false;
  // TorchScript archives carry constants.pkl (and code/); torch.save archives do not.
  try {
    in.seekg(0);
    caffe2::serialize::PyTorchStreamReader r(&in);
    return r.hasRecord("constants.pkl");
  } catch (const std::exception&) {
    return false;
  }
}

InceptionExtractor::InceptionExtractor(const std::string& weights, Resize mode, torch::Device device,
                                       bool channels_last)
    : path_(weights), mode_(mode), device_(device), channels_last_(channels_last) {
  if (is_torchscript_file(weights)) {
    try {
      jit_ = std::make_shared<torch::jit::Module>(torch::jit::load(weights, device));
    } catch (const c10::Error& e) {
      fail(weights, ": TorchScript load failed: ", e.what_without_backtrace());
    }
    // A TorchScript archive that is not a network (a hamgan checkpoint is one too) has no forward.
    if (!jit_->find_method("forward"))
      fail(weights, ": a TorchScript archive without a forward method (a hamgan checkpoint?); expected Inception "
           "weights: pytorch-fid's pt_inception-2015-12-05-6726825d.pth or NVIDIA's TorchScript "
           "inception-2015-12-05.pt (scripts/download_inception.sh)");
    jit_->eval();
    return;
  }
  TensorMap sd = torch_file::load(weights);
  for (auto it = sd.begin(); it != sd.end();)  // BN counters are not used in eval mode
    it = it->first.size() >= 19 && it->first.compare(it->first.size() - 19, 19, "num_batches_tracked") == 0
             ? sd.erase(it) : std::next(it);
  net_ = FidInception3();
  for (const auto& [k, t] : state_dict(*net_))  // ... so the module's own counters stand in
    if (k.size() >= 19 && k.compare(k.size() - 19, 19, "num_batches_tracked") == 0) sd[k] = t;
  load_state_dict(*net_, sd, weights);
  net_->eval();
  net_->to(device);
  if (channels_last_)
    for (auto& p : net_->parameters())
      if (p.dim() == 4) p.set_data(p.data().contiguous(torch::MemoryFormat::ChannelsLast));
}

torch::Tensor InceptionExtractor::prepare(const torch::Tensor& images) const {
  torch::InferenceMode guard;
  // On a GPU the 299 x 299 resize runs there (forward): a 32 px image crosses the bus as 12 KB,
  // not 1 MB, and the host's decoding threads do not resize. On the CPU the host resizes (inception_input).
  if (!jit_) return device_.is_cuda() ? images.to(torch::kFloat) : inception_input(images, mode_);
  // NVIDIA's module takes uint8 0..255 at any size and resizes itself.
  torch::Tensor u = (images.to(torch::kFloat) * 255).round().clamp(0, 255).to(torch::kByte);
  return u.size(1) == 1 ? u.expand({-1, 3, -1, -1}).contiguous() : u;
}

InceptionOutput InceptionExtractor::forward(const torch::Tensor& prepared, bool want_logits) const {
  torch::InferenceMode guard;
  torch::Tensor x = prepared.to(device_);
  if (!jit_ && device_.is_cuda()) x = inception_input(x, mode_);
  if (jit_) {
    if (want_logits) fail(path_, ": TorchScript Inception gives features only (no logits for IS)");
    InceptionOutput out;
    out.pool = jit_->forward({x, true}).toTensor().to(torch::kFloat);
    return out;
  }
  if (channels_last_) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
  return net_->forward(x);
}

FeatureOutput InceptionExtractor::features(const torch::Tensor& prepared, bool want_logits) const {
  InceptionOutput o = forward(prepared, want_logits);
  return {o.pool, o.logits_unbiased};
}

InceptionOutput InceptionExtractor::run(const torch::Tensor& images, bool want_logits) const {
  return forward(prepare(images.to(device_)), want_logits);
}

}  // namespace hamgan::metrics
