#include "gan/sample/export_generator.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/sha256.h"
#include "gan/config/arch.h"
#include "gan/sample/image_folder.h"
#include "io/atomic_file.h"
#include "layers/context/hamburger.h"
#include "layers/spectral_norm.h"

namespace hamgan::sample {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFirstLine = "{\"format\": \"hamgan-generator\",";

// W / sigma as the eval forward computes it; undefined for a module without spectral norm.
torch::Tensor folded_weight(torch::nn::Module& m) {
  if (auto* c = m.as<SNConv2dImpl>()) return c->weight();
  if (auto* l = m.as<SNLinearImpl>()) return l->weight();
  if (auto* e = m.as<SNEmbeddingImpl>()) return e->weight();
  return {};
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A resolved YAML scalar as JSON: the config reader stored it as text, so the type is read
// back from the text (bool, integer, real, else string).
std::string json_scalar(const std::string& s) {
  if (s == "true" || s == "false") return s;
  if (!s.empty()) {
    char* end = nullptr;
    std::strtoll(s.c_str(), &end, 10);
    if (*end == '\0') return s;
    const double d = std::strtod(s.c_str(), &end);
    if (*end == '\0' && std::isfinite(d)) {
      std::ostringstream o;
      o.precision(17);
      o << d;
      return o.str();
    }
  }
  return io::json_string(s);
}

std::string yaml_to_json(const YAML::Node& n) {
  if (n.IsMap()) {
    std::string out = "{";
    for (const auto& kv : n)
      out += (out.size() > 1 ? ", " : "") + io::json_string(kv.first.as<std::string>()) + ": " + yaml_to_json(kv.second);
    return out + "}";
  }
  if (n.IsSequence()) {
    std::string out = "[";
    for (const auto& v : n) out += (out.size() > 1 ? ", " : "") + yaml_to_json(v);
    return out + "]";
  }
  if (n.IsScalar()) return json_scalar(n.as<std::string>());
  return "null";
}

std::string json_real(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}


}  // namespace

const io::OutputKind& export_config_output() {
  static const io::OutputKind k = io::text_output("a hamgan export's config.json", {kFirstLine});
  return k;
}

io::NamedTensors exported_tensors(GeneratorImpl& g) {
  torch::NoGradGuard no_grad;
  const bool was_training = g.is_training();
  g.eval();  // no power iteration: sigma from the stored u, v
  std::map<std::string, torch::Tensor> folded;
  for (const auto& kv : g.named_modules("", /*include_self=*/false)) {
    const torch::Tensor w = folded_weight(*kv.value());
    if (w.defined()) folded[kv.key()] = w;
  }
  g.train(was_training);
  io::NamedTensors out;
  auto add = [&](const std::string& name, const torch::Tensor& t) {
    out.emplace_back(name, t.detach().to(torch::kCPU).contiguous());
  };
  for (const auto& kv : g.named_parameters()) {
    const std::string& name = kv.key();
    if (ends_with(name, "weight_orig")) {
      const std::string owner = name.substr(0, name.size() - std::string(".weight_orig").size());
      const auto it = folded.find(owner);
      if (it == folded.end()) fail("export: ", name, " belongs to no spectral-norm module");
      add(owner + ".weight", it->second);
    } else {
      add(name, kv.value());
    }
  }
  for (const auto& kv : g.named_buffers()) {
    const std::string& name = kv.key();
    if (ends_with(name, ".weight_u") || ends_with(name, ".weight_v") || ends_with(name, "num_batches_tracked"))
      continue;
    add(name, kv.value());
  }
  return out;
}

std::string export_config_json(const CheckpointData& ck, GeneratorImpl& g, bool ema,
                               const std::vector<std::string>& class_names) {
  const Config& cfg = ck.config;
  const auto arch = generator_arch(cfg.model.resolution, cfg.generator.ch, cfg.generator.ch_mult);
  std::ostringstream j;
  j << kFirstLine << "\n \"format_version\": " << kExportFormatVersion << ",\n";
  j << " \"source\": {\"checkpoint\": " << io::json_string(ck.path) << ", \"iteration\": " << ck.iteration
    << ", \"generator\": \"" << (ema ? "ema" : "g") << "\"},\n";
  j << " \"resolution\": " << cfg.model.resolution << ",\n \"ch\": " << cfg.generator.ch << ",\n";
  j << " \"channel_multipliers\": [";
  for (size_t i = 0; i < arch.size(); ++i) j << (i ? ", " : "") << arch[i].in / cfg.generator.ch;
  j << ", " << arch.back().out / cfg.generator.ch << "],\n";
  j << " \"blocks\": [";
  for (size_t i = 0; i < arch.size(); ++i)
    j << (i ? ", " : "") << "{\"in\": " << arch[i].in << ", \"out\": " << arch[i].out
      << ", \"upsample\": " << (arch[i].resample ? "true" : "false") << ", \"resolution\": " << arch[i].resolution << "}";
  j << "],\n";
  const int64_t chunk = cfg.generator.shared_dim > 0 && cfg.generator.hier
                            ? cfg.generator.z_dim / static_cast<int64_t>(arch.size() + 1) : 0;
  j << " \"z_dim\": " << cfg.generator.z_dim << ",\n \"shared_dim\": " << cfg.generator.shared_dim
    << ",\n \"hier\": " << (cfg.generator.hier ? "true" : "false") << ",\n \"z_chunk\": " << chunk << ",\n";
  j << " \"n_classes\": " << cfg.model.n_classes << ",\n \"image_channels\": " << cfg.model.image_channels << ",\n";
  j << " \"bn_eps\": " << json_real(cfg.model.bn_eps) << ",\n \"sn_eps\": " << json_real(cfg.model.sn_eps) << ",\n";
  j << " \"class_names\": ";
  if (class_names.empty()) {
    j << "null";
  } else {
    j << "[";
    for (size_t i = 0; i < class_names.size(); ++i) j << (i ? ", " : "") << io::json_string(class_names[i]);
    j << "]";
  }
  j << ",\n";
  // The context block: the resolved config's keys, plus where it sits and what it resolved to.
  const YAML::Node root = YAML::Load(ck.config_yaml);
  const YAML::Node ctx = root["generator"]["context"];
  const ContextConfig& cc = cfg.generator.context;
  int64_t after = -1, channels = 0;
  for (size_t i = 0; i < arch.size() && cc.type != "none"; ++i)
    if (arch[i].resolution == cc.resolution) {
      after = static_cast<int64_t>(i), channels = arch[i].out;
      break;
    }
  j << " \"context\": {\"type\": " << io::json_string(cc.type) << ", \"resolution\": " << cc.resolution
    << ", \"after_block\": " << after << ", \"channels\": " << channels
    << ", \"options\": " << (ctx ? yaml_to_json(ctx) : std::string("{}"));
  for (const auto& m : g.modules(/*include_self=*/false)) {
    auto* ham = m->as<HamburgerImpl>();
    if (!ham) continue;
    const int64_t steps = ctx["steps"] ? ctx["steps"].as<int64_t>() : 6;
    const int64_t eval_steps = ctx["eval_steps"] ? ctx["eval_steps"].as<int64_t>() : 0;
    j << ", \"resolved\": {\"d\": " << ham->d() << ", \"r\": " << ham->r() << ", \"groups\": " << ham->groups()
      << ", \"eval_steps\": " << (eval_steps > 0 ? eval_steps : steps)
      << ", \"random_bases\": " << (ham->draws_bases() ? "true" : "false") << "}";
  }
  j << "},\n";
  j << " \"sampling\": {\"latent\": \"z = N(0, 1) of z_dim from torch's CPU generator seeded with "
       "splitmix64(splitmix64(splitmix64(seed) ^ class) ^ k), entries with |z| > truncation redrawn\", "
       "\"bases\": \"a random-init Hamburger's D per image from torch's CPU generator seeded with "
       "splitmix64(splitmix64(splitmix64(seed ^ 0x6a6d) ^ class) ^ (k << 8) ^ 1)\"},\n";
  j << " \"tensor_naming\": \"G's state-dict names; spectral-norm modules export '<module>.weight' = "
       "weight_orig / (u^T weight_orig v) (eval: stored u, v) instead of weight_orig, weight_u, weight_v; "
       "BatchNorm running_mean, running_var as stored; num_batches_tracked left out\"\n}\n";
  return j.str();
}

void check_export_dir(const std::string& dir, const std::string& option) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return;
  if (!fs::is_directory(dir, ec))
    fail(option, " ", dir, ": expected a new directory or an earlier export, found ", io::describe_existing(dir));
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == kExportModelFile) {
      io::check_output_path(e.path().string(), io::safetensors_output(), option);
    } else if (name == kExportConfigFile) {
      io::check_output_path(e.path().string(), export_config_output(), option);
    } else if (e.is_regular_file(ec) && (io::is_stale_temporary_of(name, kExportModelFile) ||
                                         io::is_stale_temporary_of(name, kExportConfigFile))) {
      stale.push_back(e.path());  // a killed export's temporary: nothing will rename it into place
    } else {
      fail(option, " ", dir, ": holds ", name, ", so it is not an earlier export (expected only ",
           kExportModelFile, " and ", kExportConfigFile, "); choose a new directory");
    }
  }
  for (const auto& p : stale) fs::remove(p, ec);
}

ExportResult export_generator(const CheckpointData& ck, bool ema, int64_t standing_batches,
                              const std::string& dir, std::ostream& warn) {
  check_export_dir(dir, "--out");
  if (ema && !ck.has_ema) warn << ck.path << ": no EMA generator stored (train.ema was off); exporting G\n";
  ExportResult res;
  res.ema = ema && ck.has_ema;
  Generator g = load_generator(ck, res.ema, torch::kCPU, standing_batches);
  g->eval();
  const io::NamedTensors tensors = exported_tensors(*g);
  // A diverged generator is refused, not written out for a reader to sample black images from.
  std::vector<std::string> bad;
  for (const auto& [name, t] : tensors)
    if (t.is_floating_point() && !torch::isfinite(t).all().item<bool>()) bad.push_back(name);
  if (!bad.empty())
    fail(ck.path, ": ", bad.size(), " of the ", res.ema ? "EMA generator" : "generator", "'s ", tensors.size(),
         " tensors are not finite (NaN or Inf), the first ", bad.front(), ": its weights have diverged; export an "
         "earlier checkpoint");
  const auto names = run_class_names(ck.path, ck.config.model.n_classes);
  if (names.empty() && !run_classes_file(ck.path).empty())
    warn << run_classes_file(ck.path) << ": not " << ck.config.model.n_classes << " lines '<dir> <name>' of UTF-8 "
         << "names (this model's classes); " << kExportConfigFile << " gets no class names\n";
  const std::string json = export_config_json(ck, *g, res.ema, names);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("--out ", dir, ": cannot create: ", ec.message());
  // The config's digest binds the pair: a hand-edited config.json, or another export's
  // model.safetensors next to it, no longer matches, and readers refuse it.
  const std::map<std::string, std::string> meta = {{"format", "hamgan-generator"},
                                                   {"format_version", std::to_string(kExportFormatVersion)},
                                                   {kExportConfigDigestKey, sha256_hex(json)}};
  const std::string bytes = io::safetensors_bytes(tensors, meta);
  io::write_file_atomically((fs::path(dir) / kExportModelFile).string(), bytes);
  io::write_file_atomically((fs::path(dir) / kExportConfigFile).string(), json);
  res.tensors = static_cast<int64_t>(tensors.size());
  res.bytes = static_cast<int64_t>(bytes.size());
  return res;
}

}  // namespace hamgan::sample
