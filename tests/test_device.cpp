// Device selection and CUDA portability, as far as a machine without a GPU can check them:
// what train.device and --device say under each LibTorch (Debian's CPU-only 1.13, the pip
// wheel's CUDA-compiled 2.x with no GPU visible), that the CUDA build really links LibTorch's
// CUDA half, and that a checkpoint of a CUDA run (its extra GPU RNG state) resumes on the CPU
// exactly as the same checkpoint without it.
#include <caffe2/serialize/inline_container.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/compat.h"
#include "core/device.h"
#include "core/state_dict.h"
#include "gan/cli/commands.h"
#include "gan/data/synthetic.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/train/trainer.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/state_dicts.h"
#include "support/tiny_checkpoint.h"

namespace test_device {

using namespace hamgan;
using test::identical;
namespace fs = std::filesystem;

namespace {

bool has_gpu() { return torch::cuda::is_available(); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Rewrites a torch::serialize archive as a GPU run writes it: every tensor storage's location
// 'cpu' becomes 'cuda:0' in the pickles (BINUNICODE strings; later uses are memo references).
// Returns how many locations were rewritten.
int64_t retag_storages_as_cuda(const std::string& in, const std::string& out) {
  caffe2::serialize::PyTorchStreamReader r(in);
  caffe2::serialize::PyTorchStreamWriter w(out);
  const std::string cpu("X\x03\0\0\0cpu", 8), cuda("X\x06\0\0\0cuda:0", 11);
  int64_t n = 0;
  for (const std::string& name : r.getAllRecords()) {
    // The writer adds its own format records.
    if (name == "version" || name == ".data/version" || name == "byteorder" ||
        name == ".data/serialization_id")
      continue;
    auto [ptr, size] = r.getRecord(name);
    std::string bytes(static_cast<const char*>(ptr.get()), size);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".pkl") == 0)
      for (size_t at = bytes.find(cpu); at != std::string::npos; at = bytes.find(cpu, at + cuda.size()), ++n)
        bytes.replace(at, cpu.size(), cuda);
    w.writeRecord(name, bytes.data(), bytes.size());
  }
  w.writeEndOfFile();
  return n;
}

// What `cuda` must say on this machine when no GPU is visible, for this build.
void expect_no_gpu_message(const std::string& e, const std::string& what) {
  EXPECT_PRED2(contains, e, what + ": cuda");
  EXPECT_PRED2(contains, e, compat::libtorch_description());
  if (compat::cuda_compiled()) {
    EXPECT_PRED2(contains, e, "sees no CUDA device");
  } else {
    EXPECT_PRED2(contains, e, "needs a CUDA build of LibTorch");
    EXPECT_PRED2(contains, e, "LIBTORCH=pip");
  }
}

// A tiny 32x32 GAN with NMF in G (random bases: the RNG state matters) and EMA from the start.
Config tiny_nmf() {
  return parse_config(
      "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8, context: {type: ham_nmf, resolution: 16}}\n"
      "discriminator: {ch: 4}\n"
      "train: {batch_size: 4, device: cpu, ema_start: 0}\n",
      "tiny config");
}

}  // namespace

TEST(Device, Names) {
  EXPECT_EQ(resolve_device("cpu"), torch::Device(torch::kCPU));
  EXPECT_EQ(resolve_device("auto"), has_gpu() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU));
  EXPECT_EQ(test::error_of([] { resolve_device("gpu"); }),
            "train.device: expected cpu, cuda or auto, got 'gpu'");
  EXPECT_EQ(test::error_of([] { resolve_device("cuda:0", "--device"); }),
            "--device: expected cpu, cuda or auto, got 'cuda:0'");
  if (has_gpu()) {
    EXPECT_EQ(resolve_device("cuda"), torch::Device(torch::kCUDA, 0));
  } else {
    expect_no_gpu_message(test::error_of([] { resolve_device("cuda"); }), "train.device");
  }
}

// CMake's view (configured against a CUDA LibTorch: HAMGAN_CUDA) and the binary's (LibTorch's
// CUDA device guard registered at load time) agree, and --version / info report it.
TEST(Device, CudaBuildLinksLibTorchCuda) {
  EXPECT_EQ(compat::cuda_compiled(), compat::cuda_build());
  const std::string d = compat::libtorch_description();
  EXPECT_PRED2(contains, d, "LibTorch " + std::to_string(TORCH_VERSION_MAJOR) + ".");
  EXPECT_PRED2(contains, d, "(" + std::to_string(TORCH_VERSION_MAJOR) + ".x), ");
  EXPECT_PRED2(contains, d, compat::cuda_build() ? "CUDA compiled" : "CPU only");
  // Peak-memory statistics exist only in the CUDA build.
  if (!compat::cuda_build()) {
    EXPECT_EQ(compat::cuda_peak_allocated(0), -1);
  } else if (has_gpu()) {
    EXPECT_GE(compat::cuda_peak_allocated(0), 0);
  }
}

// `--device cuda` of sample and fid, and train.device=cuda of train, without a GPU: an error
// that names the flag, says why, and writes nothing (with a GPU: sample writes its images).
TEST(DeviceCli, CudaWithoutGpuNamesTheFlag) {
  const std::string dir = test::fresh_dir("device", "cli");
  const std::string ck = dir + "/ckpt_000000001.pt";
  test::write_tiny_checkpoint(ck, 1, true, 3, test::tiny_checkpoint_yaml());
  const std::string out = dir + "/samples";
  if (has_gpu()) {
    test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--out", out, "--count", "3", "--device", "cuda"});
    EXPECT_TRUE(fs::exists(out + "/0/0.png"));
    return;
  }
  expect_no_gpu_message(test::error_of([&] {
                          test::run_cli(cli::sample_cmd, "sample",
                                        {"--checkpoint", ck, "--out", out, "--count", "3", "--device", "cuda"});
                        }),
                        "--device");
  EXPECT_FALSE(fs::exists(out));
  fs::create_directories(dir + "/images");
  expect_no_gpu_message(test::error_of([&] {
                          test::run_cli(cli::fid, "fid",
                                        {"stats", "--images", dir + "/images", "--out", dir + "/x.npz",
                                         "--inception", dir + "/none.pth", "--device", "cuda"});
                        }),
                        "--device");
  EXPECT_FALSE(fs::exists(dir + "/x.npz"));
  std::ofstream(dir + "/tiny.yaml") << test::tiny_checkpoint_yaml();
  expect_no_gpu_message(test::error_of([&] {
                          test::run_cli(cli::train, "train",
                                        {"-c", dir + "/tiny.yaml", "--out", dir + "/run", "--synthetic",
                                         "train.device=cuda", "train.iterations=1"});
                        }),
                        "train.device");
  EXPECT_TRUE(!fs::exists(dir + "/run/checkpoints") || fs::is_empty(dir + "/run/checkpoints"));
}

// A CUDA run saves its GPU generator's state as "cuda_default" beside the CPU ones; on the CPU
// that state is not needed, and resuming from such a checkpoint continues exactly like
// resuming from the same checkpoint without it.
TEST(CheckpointPortability, CudaRunCheckpointResumesOnCpu) {
  const Config cfg = tiny_nmf();
  auto data = std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7);
  DatasetSource src(data, 4, 11);
  Trainer a(cfg, torch::kCPU);
  a.step(src);
  const std::string dir = test::fresh_dir("device", "portability");
  fs::create_directories(dir);
  const std::string plain = dir + "/plain.pt", cuda = dir + "/cuda.pt";
  CheckpointWrite w = a.checkpoint(src.state());
  ASSERT_EQ(w.rng.size(), 2u);  // a CPU run: no GPU state
  save_checkpoint(plain, w);
  // The Philox state a CUDA generator returns: seed and offset, 16 bytes.
  w.rng.emplace_back("cuda_default", torch::arange(16, torch::kUInt8));
  save_checkpoint(cuda, w);
  a.step(src);  // the step the original run takes next (NMF draws its bases from the CPU RNG)

  const CheckpointData cp = load_checkpoint(plain), cc = load_checkpoint(cuda);
  EXPECT_FALSE(cp.find_rng_state("cuda_default").has_value());
  ASSERT_TRUE(cc.find_rng_state("cuda_default").has_value());
  EXPECT_TRUE(torch::equal(*cc.find_rng_state("cuda_default"), torch::arange(16, torch::kUInt8)));
  const auto resume = [&](const CheckpointData& c) {
    Trainer t(cfg, torch::kCPU);
    t.restore(c);
    DatasetSource s(data, 4, 11, c.loader);
    t.step(s);
    return t;
  };
  Trainer b = resume(cp), c = resume(cc);
  EXPECT_TRUE(identical(state_dict(*b.g()), state_dict(*c.g())));
  EXPECT_TRUE(identical(state_dict(*b.d()), state_dict(*c.d())));
  EXPECT_TRUE(identical(state_dict(*a.g()), state_dict(*c.g())));
  EXPECT_TRUE(identical(state_dict(*a.d()), state_dict(*c.d())));
}

// A GPU run's checkpoint stores its tensors with location cuda:0; sample, fid and resume on a
// machine without one map them to the CPU, and get the same values.
TEST(CheckpointPortability, CudaTensorsLoadOnCpu) {
  const std::string dir = test::fresh_dir("device", "cuda_tensors");
  const std::string cpu = dir + "/ckpt_000000002.pt", gpu = dir + "/gpu/ckpt_000000002.pt";
  fs::create_directories(dir + "/gpu");
  const Config cfg = tiny_nmf();
  Trainer trained(cfg, torch::kCPU);
  DatasetSource src(std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7), 4, 11);
  trained.step(src), trained.step(src);
  trained.save(cpu, src.state());
  EXPECT_GT(retag_storages_as_cuda(cpu, gpu), 0);
  const CheckpointData a = load_checkpoint(cpu), b = load_checkpoint(gpu);
  EXPECT_EQ(b.iteration, 2);
  for (bool ema : {false, true}) {
    const Generator ga = load_generator(a, ema), gb = load_generator(b, ema);
    for (const auto& p : gb->parameters()) EXPECT_TRUE(p.device().is_cpu());
    EXPECT_TRUE(identical(state_dict(*ga), state_dict(*gb)));
  }
  // Resume: the trainer restores D and both Adam states from it too.
  Trainer t(cfg, torch::kCPU), u(cfg, torch::kCPU);
  t.restore(a);
  DatasetSource st(std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7), 4, 11, a.loader);
  t.step(st);
  u.restore(b);
  DatasetSource su(std::make_shared<SyntheticDataset>(16, 32, 1, 3, 7), 4, 11, b.loader);
  u.step(su);
  EXPECT_TRUE(identical(state_dict(*t.g()), state_dict(*u.g())));
  EXPECT_TRUE(identical(state_dict(*t.d()), state_dict(*u.d())));
}

// The fused Adam step (one ATen kernel per group; on CUDA in training) is torch::optim::Adam's
// step on Adam's own state, lazily created, with weight decay and a parameter that misses a
// gradient (its step count falls behind), also at a negative beta1 (train.d_beta1), set on the
// groups as the trainer sets it. Checked on CPU doubles where LibTorch has the kernel.
class FusedAdam : public ::testing::TestWithParam<double> {};
INSTANTIATE_TEST_SUITE_P(Beta1, FusedAdam, ::testing::Values(0.5, -0.5));
TEST_P(FusedAdam, MatchesAdamStep) {
  torch::manual_seed(0);
  std::vector<torch::Tensor> a = {torch::randn({3, 4}, torch::kDouble), torch::randn({5}, torch::kDouble)};
  std::vector<torch::Tensor> b;
  for (auto& t : a) t.requires_grad_(), b.push_back(t.detach().clone().requires_grad_());
  const auto opts = torch::optim::AdamOptions(1e-2).betas(std::make_tuple(0.5, 0.999)).eps(1e-8).weight_decay(0.1);
  torch::optim::Adam oa(a, opts), ob(b, opts);
  for (auto* o : {&oa, &ob})
    static_cast<torch::optim::AdamOptions&>(o->param_groups().at(0).options()).betas(std::make_tuple(GetParam(), 0.999));
  for (int s = 0; s < 4; ++s) {
    for (size_t i = 0; i < a.size(); ++i) {
      const bool skip = i == 1 && s == 2;  // no gradient for the second parameter once
      const torch::Tensor g = torch::randn(a[i].sizes(), torch::kDouble);
      a[i].mutable_grad() = skip ? torch::Tensor() : g;
      b[i].mutable_grad() = skip ? torch::Tensor() : g.clone();
    }
    oa.step();
    const bool fused = compat::fused_adam_step(ob, /*cpu_too=*/true);
    EXPECT_EQ(fused, compat::kHasFusedAdam);
    if (!fused) ob.step();
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-12, 1e-14)) << "step " << s << " parameter " << i;
      const auto *sa = compat::adam_state(oa, a[i]), *sb = compat::adam_state(ob, b[i]);
      ASSERT_TRUE(sa && sb);
      EXPECT_EQ(sa->step(), sb->step());
      EXPECT_EQ(sb->step(), s < 2 || i == 0 ? s + 1 : s);
      EXPECT_TRUE(torch::allclose(sa->exp_avg_sq(), sb->exp_avg_sq(), 1e-12, 1e-14));
    }
  }
  EXPECT_FALSE(compat::fused_adam_step(ob));  // CPU parameters: training keeps opt.step()
}

}  // namespace test_device
