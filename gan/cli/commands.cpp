#include "gan/cli/commands.h"

#include <torch/torch.h>

#include "core/error.h"

namespace hamgan::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> all = {
      {"info", "print the resolved config and the G/D layer tables", info},
      {"prepare", "convert a dataset into one packed file for fast training", prepare},
      {"train", "train (or resume) a GAN into --out DIR", train},
      {"bench", "benchmarks: bench train | bench context", bench},
      {"sample", "PNG samples of a checkpoint (ImageFolder layout), class grid, interpolations", sample_cmd},
      {"export", "a checkpoint's generator as safetensors + config.json (python/hamgan_py loads it; ONNX)", export_cmd},
      {"fid", "FID/IS/KID of image directories; `fid stats` writes reference .npz", fid},
      {"classifier", "classifier train: a domain classifier for `fid --features` (FID + class accuracy)", classifier},
      {"compare", "scored runs side by side: FID / class accuracy against iteration, one line per run", compare},
      {"dgap", "D(x) on training vs held-out images and D(G(z)) per checkpoint: is D overfitting?", dgap},
  };
  return all;
}

void add_config_options(cxxopts::Options& opts, const std::string& default_config) {
  opts.add_options()("c,config", "YAML config file",
                     cxxopts::value<std::string>()->default_value(default_config))(
      "overrides", "key.sub=value overrides", cxxopts::value<std::vector<std::string>>());
  add_threads_option(opts);
  opts.parse_positional({"overrides"});
  opts.positional_help("[key.sub=value ...]");
}

Config config_from(const cxxopts::ParseResult& r) {
  std::vector<std::string> ov;
  if (r.count("overrides")) ov = r["overrides"].as<std::vector<std::string>>();
  return load_config(r["config"].as<std::string>(), ov);
}

namespace {
// cxxopts names the value it could not parse but not the option it was given to: find the
// option in argv ("--opt value", "--opt=value", "-o value") so the error names both.
std::string option_of_value(int argc, char** argv, const std::string& message) {
  auto quoted = [&](const std::string& v) {
    return message.find("\u2018" + v + "\u2019") != std::string::npos ||
           message.find("'" + v + "'") != std::string::npos;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.size() < 2 || a[0] != '-') continue;
    const auto eq = a.find('=');
    if (eq != std::string::npos && quoted(a.substr(eq + 1))) return a.substr(0, eq) + " " + a.substr(eq + 1);
    if (eq == std::string::npos && i + 1 < argc && quoted(argv[i + 1])) return a + " " + argv[i + 1];
  }
  return "";
}
}  // namespace

std::optional<cxxopts::ParseResult> parse_or_help(cxxopts::Options& o, int argc, char** argv) {
  o.add_options()("h,help", "show this help");
  cxxopts::ParseResult r;
  try {
    r = o.parse(argc, argv);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    const std::string given = option_of_value(argc, argv, e.what());
    if (given.empty()) throw;
    throw Error(given + ": not a value of the type that option takes (" + e.what() + "; see --help)");
  }
  if (!r.count("help")) return r;
  std::cout << o.help() << "\n";
  return std::nullopt;
}

}  // namespace hamgan::cli
