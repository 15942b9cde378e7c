#include "gan/config/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "gan/config/arch.h"
#include "gan/config/config_keys.h"

namespace hamgan {

// The order is the one messages list.
const Words<InitScheme> kInitWords = {
    {InitScheme::Orthogonal, "orthogonal"}, {InitScheme::Xavier, "xavier"}, {InitScheme::Normal, "normal"}};
const Words<GanLoss> kLossWords = {{GanLoss::Hinge, "hinge"}, {GanLoss::NonSaturating, "nonsaturating"},
                                   {GanLoss::Relativistic, "rpgan"}};
const Words<AmpMode> kAmpWords = {{AmpMode::Auto, "auto"}, {AmpMode::On, "true"}, {AmpMode::Off, "false"}};
const Words<Tf32Mode> kTf32Words = {{Tf32Mode::Auto, "auto"}, {Tf32Mode::On, "true"}, {Tf32Mode::Off, "false"}};
const Words<FoldPolicy> kFoldWords = {
    {FoldPolicy::WherePays, "auto"}, {FoldPolicy::Always, "true"}, {FoldPolicy::Never, "false"}};
const Words<UpsampleConvForm> kUpsampleConvWords = {{UpsampleConvForm::SubPixel, "subpixel"},
                                                     {UpsampleConvForm::Transposed, "transposed"}};
const Words<FusePolicy> kFuseWords = {
    {FusePolicy::WherePays, "auto"}, {FusePolicy::Always, "true"}, {FusePolicy::Never, "false"}};
const Words<DeviceChoice> kDeviceWords = {
    {DeviceChoice::Cpu, "cpu"}, {DeviceChoice::Cuda, "cuda"}, {DeviceChoice::Auto, "auto"}};
const Words<DistBackend> kDistBackendWords = {
    {DistBackend::Auto, "auto"}, {DistBackend::Nccl, "nccl"}, {DistBackend::Gloo, "gloo"},
    {DistBackend::Shm, "shm"}};
const Words<LrDecay> kLrDecayWords = {{LrDecay::None, "none"}, {LrDecay::Linear, "linear"}};
const Words<DataFormat> kDataFormatWords = {{DataFormat::Fmnist, "fmnist"}, {DataFormat::Cifar10, "cifar10"},
                                            {DataFormat::Folder, "folder"}, {DataFormat::Packed, "packed"},
                                            {DataFormat::Auto, "auto"}};

const std::vector<std::pair<std::string, std::string>>& moved_eval_keys() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"train.eval_every", "eval.every"},       {"train.eval_n", "eval.n"},
      {"train.eval_features", "eval.features"}, {"train.eval_real", "eval.real"},
      {"train.eval_metrics", "eval.metrics"},   {"train.best_metric", "eval.best_metric"},
      {"train.keep_best", "eval.keep_best"}};
  return keys;
}

namespace {

// `ch_mult` as the key's error: as many multipliers as BigGAN's table at this resolution, or none.
void check_ch_mult(ConfigNode& section, const std::vector<int64_t>& given, const std::vector<int64_t>& table,
                   int64_t resolution, const std::string& per) {
  if (!given.empty() && given.size() != table.size())
    section.fail_key("ch_mult", "expected " + std::to_string(table.size()) + " multipliers at model.resolution " +
                                    std::to_string(resolution) + " (" + per + "), got " + std::to_string(given.size()));
}

void check_context_resolution(ConfigNode& parent, const std::string& key,
                              const ContextConfig& c, const std::vector<BlockArch>& arch) {
  if (c.type == "none") return;
  const auto allowed = context_resolutions(arch);
  for (auto r : allowed)
    if (r == c.resolution) return;
  std::string list;
  for (auto r : allowed) list += (list.empty() ? "" : ", ") + std::to_string(r);
  parent.fail_key(key + ".resolution", "expected a feature resolution of this network (" +
                                           list + "), got " + std::to_string(c.resolution));
}

// A key of a pre-release build's config (moved_eval_keys), in a file or an override: an error
// naming it and its key now.
void refuse_moved(const std::string& where, const std::string& from, const std::string& to) {
  fail(where, ": key '", from, "' is a pre-release hamgan's; it is '", to, "' now (rename it)");
}

std::string checked_override(const std::string& assignment) {
  for (const auto& [from, to] : moved_eval_keys())
    if (assignment.rfind(from + "=", 0) == 0) refuse_moved("override '" + assignment + "'", from, to);
  return assignment;
}

void refuse_moved_keys(const YAML::Node& root, const std::string& name) {
  if (!root.IsMap() || !root["train"] || !root["train"].IsMap()) return;
  for (const auto& [from, to] : moved_eval_keys())
    if (root["train"][from.substr(from.find('.') + 1)]) refuse_moved(name, from, to);
}

// Each section's table (gan/config/config_keys.cpp), then the checks across keys. `listing`:
// every key read, with its value (config_keys()).
Config parse_tree(YAML::Node root, const std::string& name, const std::vector<std::string>& overrides,
                  std::vector<KeyInfo>* listing = nullptr) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  source->listing = listing;
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) source->overridden.insert(apply_override(root, checked_override(o)));

  Config cfg;
  cfg.source = name;
  ConfigNode top(root, "", source);

  ConfigNode m = top.child("model");
  model_keys().read(m, cfg.model);
  m.finish();

  ConfigNode g = top.child("generator");
  generator_keys().read(g, cfg.generator);
  check_ch_mult(g, cfg.generator.ch_mult, generator_ch_mult(cfg.model.resolution), cfg.model.resolution,
                "one per block boundary");
  const auto g_arch = generator_arch(cfg.model.resolution, cfg.generator.ch, cfg.generator.ch_mult);
  check_context_resolution(g, "context", cfg.generator.context, g_arch);
  if (cfg.generator.hier) {
    if (cfg.generator.shared_dim == 0)
      g.fail_key("hier", "hierarchical z needs a shared class embedding (shared_dim > 0)");
    const int64_t slots = static_cast<int64_t>(g_arch.size()) + 1;
    if (cfg.generator.z_dim % slots != 0)
      g.fail_key("z_dim", "with hier, expected a multiple of " + std::to_string(slots) +
                              " (one chunk per block plus one for the input), got " +
                              std::to_string(cfg.generator.z_dim));
  }
  g.finish();

  ConfigNode d = top.child("discriminator");
  discriminator_keys().read(d, cfg.discriminator);
  check_ch_mult(d, cfg.discriminator.ch_mult, discriminator_ch_mult(cfg.model.resolution), cfg.model.resolution,
                "one per block");
  const auto d_arch = discriminator_arch(cfg.model.resolution, cfg.discriminator.ch, cfg.model.image_channels,
                                         cfg.discriminator.ch_mult);
  check_context_resolution(d, "context", cfg.discriminator.context, d_arch);
  if (const int64_t c = d_arch.back().in; cfg.discriminator.mbstd_group > 0 && c % cfg.discriminator.mbstd_features)
    d.fail_key("mbstd_features", "expected a divisor of the last block's " + std::to_string(c) +
                                     " input channels, got " + std::to_string(cfg.discriminator.mbstd_features));
  d.finish();

  ConfigNode t = top.child("train");
  train_keys().read(t, cfg.train);
  if (cfg.train.batch_size % cfg.train.accumulate != 0)
    t.fail_key("accumulate", "expected a divisor of batch_size (" +
                                 std::to_string(cfg.train.batch_size) + "), got " +
                                 std::to_string(cfg.train.accumulate));
  // D's batch is the real micro-batch then the fake one: groups that straddle them would mix the two.
  if (const int64_t g = cfg.discriminator.mbstd_group, mb = cfg.train.batch_size / cfg.train.accumulate;
      g > 0 && mb % g != 0)
    t.fail_key("batch_size", "with discriminator.mbstd_group " + std::to_string(g) +
                                 ", expected micro-batches (batch_size / accumulate) that are multiples of it, so that "
                                 "no group mixes real and fake images; got " + std::to_string(mb));
  if (const int64_t c = cfg.train.class_group, mb = cfg.train.batch_size / cfg.train.accumulate; mb % c != 0)
    t.fail_key("class_group", "expected a divisor of the micro-batch (batch_size / accumulate = " + std::to_string(mb) +
                                  "), so that no run of one class straddles two, got " + std::to_string(c));
  if (const int64_t c = cfg.train.class_group, g = cfg.discriminator.mbstd_group; c > 1 && g > 1 && c % g != 0)
    t.fail_key("class_group", "with discriminator.mbstd_group " + std::to_string(g) +
                                  ", expected a multiple of it, so that each group of the minibatch standard deviation "
                                  "holds one class, got " + std::to_string(c));
  if (cfg.train.reuse_fake && cfg.train.n_dis != 1)
    t.fail_key("reuse_fake", "expected false with n_dis " + std::to_string(cfg.train.n_dis) +
                                 " (G reuses the fakes of a single D step; set n_dis: 1)");
  if (const auto blocks = static_cast<int64_t>(d_arch.size()); cfg.train.freeze_d > blocks)
    t.fail_key("freeze_d", "expected 0.." + std::to_string(blocks) + " (the discriminator's blocks at model.resolution " +
                               std::to_string(cfg.model.resolution) + "), got " + std::to_string(cfg.train.freeze_d));
  t.finish();

  ConfigNode dt = top.child("data");
  data_keys().read(dt, cfg.data);
  dt.finish();

  ConfigNode ev = top.child("eval");  // absent in older checkpoints' configs: defaults
  eval_keys().read(ev, cfg.eval);
  ev.finish();

  top.finish();
  cfg.resolved = source->resolved;
  return cfg;
}

}  // namespace

namespace {

// yaml-cpp keeps both entries of a repeated key and returns the first: a silent surprise.
// Aliases are followed, so a recursive one (`x: &a [*a]`) or an exponential chain (a "billion
// laughs") would never end: `budget` bounds the nodes visited, and the depth is bounded too.
void check_unique_keys(const YAML::Node& node, const std::string& name, const std::string& path, int depth,
                       int64_t& budget) {
  if (depth > 64 || --budget < 0)
    fail(name, ": the YAML nests deeper than 64 levels or expands to more than 100000 nodes (near '",
         path.size() > 60 ? path.substr(0, 60) + "..." : path,
         "'; a recursive or exponential alias such as `x: &a [*a]`); expected a plain config");
  if (node.IsSequence())
    for (size_t i = 0; i < node.size(); ++i)
      check_unique_keys(node[i], name, path + "[" + std::to_string(i) + "]", depth + 1, budget);
  if (!node.IsMap()) return;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar())
      fail(name, ": a key under '", path, "' (line ", kv.first.Mark().line + 1,
           ") is a list or mapping; expected a plain name");
    const std::string key = kv.first.Scalar(), full = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second)
      fail(name, ": key '", full, "' appears twice (line ", kv.first.Mark().line + 1,
           "); expected each key once");
    check_unique_keys(kv.second, name, full, depth + 1, budget);
  }
}

// YAML text -> a checked mapping (valid YAML, a mapping, each key once).
YAML::Node read_tree(const std::string& yaml_text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    fail(name, ": not valid YAML: ", e.what());
  }
  // YAML::Load reads the first document only; a `---` after content starts a second one, which
  // would be ignored. (yaml-cpp's LoadAll loops forever on some malformed text, e.g. ", model".)
  {
    std::istringstream lines(yaml_text);
    bool content = false;
    int n = 0;
    for (std::string line; std::getline(lines, line);) {
      ++n;
      const bool marker = line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
      if (marker && content)
        fail(name, ": a second YAML document starts at line ", n, " (---); expected one document, the "
                   "others would be ignored");
      const auto first = line.find_first_not_of(" \t\r");
      if (!marker && first != std::string::npos && line[first] != '#') content = true;
    }
  }
  // An empty file, a lone directive or a scalar would otherwise run with every default.
  if (!root.IsDefined() || root.IsNull())
    fail(name, ": no settings found (the file is empty or not YAML); expected a YAML mapping with "
               "sections such as model:, generator:, train:, data:");
  if (!root.IsMap())
    fail(name, ": expected a YAML mapping with sections such as model:, generator:, train:, "
               "data:, got a ", root.IsSequence() ? "list" : "scalar '" + root.Scalar() + "'");
  int64_t budget = 100000;
  check_unique_keys(root, name, "", 0, budget);
  return root;
}

std::string read_text(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory; expected a YAML ", what, " (e.g. configs/fmnist32_hamgan.yaml)");
  // O_NONBLOCK: a FIFO that no program writes opens at once and reads as empty, instead of
  // waiting for a writer that may never come; one with a writer (`-c <(...)`) reads as usual
  // once the flag is cleared.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(path, ": cannot open ", what, ": ", std::strerror(errno));
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // Read at most one byte past the bound: a device (/dev/zero), a pipe that never ends or a
  // huge file is an error, not a read that fills memory.
  constexpr size_t kMaxConfigBytes = 1 << 20;
  std::string text(kMaxConfigBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      ::close(fd);
      fail(path, ": cannot read ", what, ": ", std::strerror(e));
    }
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  text.resize(got);
  if (got > kMaxConfigBytes)
    fail(path, ": larger than ", kMaxConfigBytes, " bytes; expected a YAML ", what, " (a config is a few KB)");
  return text;
}

// `top` over `base`: mappings merge key by key, anything else (scalar, list) replaces. An
// empty value (`train:` with every key commented out, `train: ~`) changes nothing: it reads as
// "no settings here", never as "back to the program's defaults". A mapping whose `type`
// differs from the base's (a context module) replaces it whole: its other keys are options of
// that type, and the base's options would be unknown keys for it.
YAML::Node merge_over(YAML::Node base, const YAML::Node& top) {
  if (top.IsNull() && base.IsDefined() && !base.IsNull()) return base;
  if (!base.IsMap() || !top.IsMap()) return YAML::Clone(top);
  if (top["type"] && base["type"] && top["type"].Scalar() != base["type"].Scalar())
    return YAML::Clone(top);
  for (const auto& kv : top) {
    const std::string key = kv.first.Scalar();
    base[key] = merge_over(base[key] ? YAML::Node(base[key]) : YAML::Node(), kv.second);
  }
  return base;
}

// A preset's `base: FILE` (relative to the preset): the base's keys (and its own base's),
// overridden by the preset's. `chain` holds the files read so far, for cycles and messages.
YAML::Node resolve_base(YAML::Node root, const std::string& name, std::vector<std::string>& chain) {
  refuse_moved_keys(root, name);
  if (!root["base"]) return root;
  const YAML::Node b = root["base"];
  if (!b.IsScalar() || b.Scalar().empty())
    fail(name, ": key 'base': expected the path of a base config (relative to this file)");
  const std::filesystem::path path =
      (std::filesystem::path(name).parent_path() / b.Scalar()).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    fail(name, ": key 'base': ", path.string(), " does not exist; expected a config file (relative to ", name, ")");
  const auto same = [&](const std::string& f) { return std::filesystem::equivalent(f, path, ec); };
  if (std::any_of(chain.begin(), chain.end(), same)) {
    std::string loop;
    for (const auto& f : chain) loop += f + " -> ";
    fail(name, ": key 'base': the bases form a cycle (", loop, path.string(), "); expected a chain that ends");
  }
  // A preset sits on a base or two; a deeper chain is a mistake (or a generated trap), and each
  // link is checked against every earlier one.
  constexpr size_t kMaxBases = 32;
  if (chain.size() > kMaxBases)
    fail(chain.front(), ": key 'base': a chain of more than ", kMaxBases, " bases (", chain[1], " -> ... -> ",
         path.string(), "); expected a preset on a short chain of bases");
  chain.push_back(path.string());
  YAML::Node base = resolve_base(read_tree(read_text(path.string(), "base config"), path.string()),
                                 path.string(), chain);
  root.remove("base");
  return merge_over(base, root);
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& name,
                    const std::vector<std::string>& overrides) {
  std::vector<std::string> chain = {name};
  YAML::Node root = resolve_base(read_tree(yaml_text, name), name, chain);
  std::string source = name;  // messages name every file a key may come from
  if (chain.size() > 1) {
    source += " (over ";
    for (size_t i = 1; i < chain.size(); ++i) source += (i > 1 ? ", " : "") + chain[i];
    source += ")";
  }
  Config cfg = parse_tree(root, source, overrides);
  cfg.source = name;
  return cfg;
}

std::vector<KeyInfo> config_keys() {
  std::vector<KeyInfo> listing;
  parse_tree(YAML::Node(YAML::NodeType::Map), "defaults", {}, &listing);
  return listing;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_config(read_text(path, "config file"), path, overrides);
}

std::string to_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

}  // namespace hamgan
