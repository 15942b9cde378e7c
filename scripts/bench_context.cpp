// Times one forward (and forward + backward) of a context module at B x C x H x W,
// e.g. Hamburger NMF against SAGAN self-attention. Not built by CMake; after building
// hamgan_core:
//   g++ -std=c++17 -O2 -I. -I/usr/include/torch/csrc/api/include scripts/bench_context.cpp \
//       build/libhamgan_core.a -ltorch -ltorch_cpu -lc10 -lyaml-cpp -o build/bench_context
//   build/bench_context ham_nmf 64 256 32 32 [repeats]
#include <chrono>
#include <iostream>

#include "layers/context/context.h"

int main(int argc, char** argv) {
  using namespace hamgan;
  if (argc < 6) {
    std::cerr << "usage: bench_context <type> B C H W [repeats]\n";
    return 2;
  }
  const std::string type = argv[1];
  const int64_t b = std::stoll(argv[2]), c = std::stoll(argv[3]), h = std::stoll(argv[4]),
                w = std::stoll(argv[5]);
  const int repeats = argc > 6 ? std::stoi(argv[6]) : 5;
  torch::Device dev = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  ConfigNode node(YAML::Load("{type: " + type + "}"), "context", std::make_shared<ConfigSource>());
  ContextSpec spec;
  spec.channels = c;
  spec.height = h;
  spec.width = w;
  spec.options = parse_context_config(node, "none").options;
  ContextModule m = context_entry(type).create(spec);
  m->to(dev);
  m->train();
  const torch::Tensor x = torch::randn({b, c, h, w}, dev).requires_grad_(true);
  auto sync = [&] { if (dev.is_cuda()) torch::cuda::synchronize(); };
  auto time = [&](bool backward) {
    m->forward(x, {}).sum().backward();  // warm-up
    sync();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < repeats; ++i) {
      torch::Tensor y = m->forward(x, {});
      if (backward) y.sum().backward();
    }
    sync();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / repeats;
  };
  const double fwd = time(false), both = time(true);
  std::cout << type << " B=" << b << " C=" << c << " " << h << "x" << w << " on " << dev
            << ": forward " << fwd << " ms, forward+backward " << both << " ms (mean of " << repeats
            << ")\n";
}
