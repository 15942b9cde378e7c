// `hamgan info`: the resolved config, then per-layer tables of G and D (output shape for
// batch 1 and parameters) and the totals; `--json`: the machine facts for scripts instead, and
// with `--get KEY` that value as JSON; `--keys [--json]`: every config key's table row
// (gan/cli/key_listing.h).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/compat.h"
#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/cli/key_listing.h"
#include "gan/cli/machine_facts.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/init.h"
#include "gan/models/model_size.h"
#include "gan/train/step_cost.h"

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
  opts.add_options()("get", "print only this resolved config value (e.g. data.path) and exit",
                     cxxopts::value<std::string>())(
      "json", "print only this build's and machine's facts as one JSON object (no config read; keys in "
      "docs/user-guide.md \"Machine facts\") and exit; with --get: that value as JSON (a section an object, "
      "values strings)");
  opts.add_options()("keys", "print every config key (type, default, range, meaning, what a resume may do; each "
                             "context module's keys; the metric names) and exit; with --json as one JSON object");
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  set_threads(r);
  if (r.count("keys")) {  // the key tables (gan/cli/key_listing.h)
    if (r.count("config") || r.count("overrides") || r.count("get"))
      fail("--keys lists the keys and their defaults and reads no config: drop --config, --get and the overrides");
    std::cout << (r.count("json") ? key_listing_json() : key_listing_text());
    return 0;
  }
  if (r.count("json") && !r.count("get")) {  // for scripts: gan/cli/machine_facts.h
    if (r.count("config") || r.count("overrides"))
      fail("--json prints the machine's facts and reads no config: drop --config and the overrides, or add --get KEY");
    std::cout << machine_facts_json();
    return 0;
  }
  const Config cfg = config_from(r);
  if (r.count("get")) {
    const std::string key = r["get"].as<std::string>();
    YAML::Node n = YAML::Clone(cfg.resolved);
    std::stringstream parts(key);
    for (std::string part; std::getline(parts, part, '.');) {
      const YAML::Node& cn = n;  // const lookup: never inserts
      if (!cn.IsMap() || !cn[part]) fail("--get '", key, "': no such config key (see the resolved config of hamgan info)");
      n.reset(cn[part]);  // rebinds (operator= would overwrite the node)
    }
    if (r.count("json")) write_config_json(std::cout, n);
    else std::cout << (n.IsScalar() ? n.Scalar() : to_yaml(n));
    std::cout << "\n";
    return 0;
  }
  std::cout << "# hamgan built with " << compat::libtorch_description() << "\n";
  std::cout << "# resolved config (" << cfg.source << ")\n" << to_yaml(cfg.resolved) << "\n";

  check_models_fit_memory(cfg, 1, "hamgan info, which builds them in fp32 to count them,");
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

  const StepCost c = training_step_cost(cfg);
  std::printf("\ntraining step, FLOPs per image (matrix products and convolutions, 2 per MAC; "
              "backward = 2 x forward, D's in the G step 1 x):\n"
              "  G forward %.2f G, D forward %.2f G; D step %.2f G (x n_dis %lld), G step %.2f G;"
              " total %.2f GFLOP\n",
              c.g_forward * 1e-9, c.d_forward * 1e-9, c.d_step() * 1e-9,
              static_cast<long long>(c.n_dis), c.g_step() * 1e-9, c.total() * 1e-9);
  // H100 SXM: 989 TFLOP/s dense bf16 tensor-core peak (NVIDIA datasheet, without sparsity).
  std::printf("  one H100 at 40%% of its 989 TFLOP/s bf16 dense peak: %.0f images/s\n",
              0.4 * 989e12 / c.total());
  return 0;
}

}  // namespace hamgan::cli
