// `hamgan info`: the resolved config, then per-layer tables of G and D (output shape for
// batch 1 and parameters) and the totals.
#include <cstdio>
#include <iostream>

#include "gan/cli/commands.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/init.h"

namespace hamgan::cli {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + std::to_string(s[i]);
  return out;
}

std::string thousands(int64_t n) {
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

void print_table(const std::string& title, const Trace& t, int64_t total) {
  std::printf("\n%s\n  %-22s %-18s %14s\n", title.c_str(), "layer", "output", "parameters");
  for (const auto& r : t)
    std::printf("  %-22s %-18s %14s\n", r.name.c_str(), shape_str(r.shape).c_str(),
                thousands(r.params).c_str());
  std::printf("  %-22s %-18s %14s\n", "total", "", thousands(total).c_str());
}

}  // namespace

int info(int argc, char** argv) {
  cxxopts::Options opts("hamgan info", "Print the resolved config and the model tables");
  add_config_options(opts, "configs/imagenet128_sagan.yaml");
  opts.add_options()("h,help", "show help");
  const auto r = opts.parse(argc, argv);
  if (r.count("help")) {
    std::cout << opts.help() << "\n";
    return 0;
  }
  set_threads(r);
  const Config cfg = config_from(r);
  std::cout << "# resolved config (" << cfg.source << ")\n" << to_yaml(cfg.resolved) << "\n";

  torch::NoGradGuard no_grad;
  Generator g(cfg.model, cfg.generator);
  Discriminator d(cfg.model, cfg.discriminator);
  g->eval();
  d->eval();
  Trace tg, td;
  const torch::Tensor y = torch::zeros({1}, torch::kLong);
  const torch::Tensor x = g->forward(torch::zeros({1, g->z_dim()}), y, &tg);
  d->forward(x, y, &td);
  const int64_t ng = count_params(*g), nd = count_params(*d);
  print_table("generator", tg, ng);
  print_table("discriminator", td, nd);
  std::printf("\nparameters: G %s, D %s, total %s\n", thousands(ng).c_str(),
              thousands(nd).c_str(), thousands(ng + nd).c_str());
  return 0;
}

}  // namespace hamgan::cli
