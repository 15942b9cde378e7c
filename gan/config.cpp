#include "gan/config.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "gan/models/arch.h"

namespace hamgan {

namespace {

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

Config parse_tree(YAML::Node root, const std::string& name,
                  const std::vector<std::string>& overrides) {
  auto source = std::make_shared<ConfigSource>();
  source->file = name;
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  for (const auto& o : overrides) source->overridden.insert(apply_override(root, o));

  Config cfg;
  cfg.source = name;
  ConfigNode top(root, "", source);

  ConfigNode m = top.child("model");
  cfg.model.resolution = m.integer("resolution", 128, 32, 128);
  if (cfg.model.resolution != 32 && cfg.model.resolution != 64 && cfg.model.resolution != 128)
    m.fail_key("resolution", "expected one of 32, 64, 128, got " +
                                 std::to_string(cfg.model.resolution));
  cfg.model.n_classes = m.integer("n_classes", 1000, 1, 1 << 20);
  cfg.model.image_channels = m.integer("image_channels", 3, 1, 4);
  cfg.model.init = m.choice("init", "orthogonal", {"orthogonal", "xavier", "normal"});
  cfg.model.sn_eps = m.real("sn_eps", 1e-6, 0.0, 1.0);
  cfg.model.bn_eps = m.real("bn_eps", 1e-5, 0.0, 1.0);
  m.finish();

  ConfigNode g = top.child("generator");
  cfg.generator.ch = g.integer("ch", 64, 1, 4096);
  cfg.generator.z_dim = g.integer("z_dim", 128, 1, 65536);
  cfg.generator.shared_dim = g.integer("shared_dim", 0, 0, 65536);
  cfg.generator.hier = g.boolean("hier", false);
  cfg.generator.context = parse_context_config(g.child("context"), "none");
  const auto g_arch = generator_arch(cfg.model.resolution, cfg.generator.ch);
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
  cfg.discriminator.ch = d.integer("ch", 64, 1, 4096);
  cfg.discriminator.context = parse_context_config(d.child("context"), "none");
  check_context_resolution(
      d, "context", cfg.discriminator.context,
      discriminator_arch(cfg.model.resolution, cfg.discriminator.ch, cfg.model.image_channels));
  d.finish();

  ConfigNode t = top.child("train");
  cfg.train.batch_size = t.integer("batch_size", 64, 1, 1 << 20);
  cfg.train.iterations = t.integer("iterations", 100000, 0, int64_t(1) << 40);
  cfg.train.g_lr = t.real("g_lr", 1e-4, 0.0, 1.0);
  cfg.train.d_lr = t.real("d_lr", 4e-4, 0.0, 1.0);
  cfg.train.beta1 = t.real("beta1", 0.0, 0.0, 1.0);
  cfg.train.beta2 = t.real("beta2", 0.999, 0.0, 1.0);
  cfg.train.n_dis = t.integer("n_dis", 1, 1, 100);
  cfg.train.loss = t.choice("loss", "hinge", {"hinge", "nonsaturating"});
  cfg.train.seed = t.integer("seed", 0, 0);
  cfg.train.adam_eps = t.real("adam_eps", 1e-8, 0.0, 1.0);
  cfg.train.accumulate = t.integer("accumulate", 1, 1, 1 << 20);
  if (cfg.train.batch_size % cfg.train.accumulate != 0)
    t.fail_key("accumulate", "expected a divisor of batch_size (" +
                                 std::to_string(cfg.train.batch_size) + "), got " +
                                 std::to_string(cfg.train.accumulate));
  cfg.train.ema = t.boolean("ema", true);
  cfg.train.ema_decay = t.real("ema_decay", 0.9999, 0.0, 1.0);
  cfg.train.ema_start = t.integer("ema_start", 1000, 0);
  cfg.train.ema_rampup = t.real("ema_rampup", 0.05, 0.0, 1.0);
  cfg.train.ema_standing_batches = t.integer("ema_standing_batches", 200, 0, 100000);
  cfg.train.amp = t.choice("amp", "auto", {"auto", "true", "false"});
  cfg.train.channels_last = t.boolean("channels_last", true);
  cfg.train.device = t.choice("device", "auto", {"cpu", "cuda", "auto"});
  cfg.train.log_every = t.integer("log_every", 50, 1);
  cfg.train.sample_every = t.integer("sample_every", 1000, 0);
  cfg.train.checkpoint_every = t.integer("checkpoint_every", 1000, 0);
  cfg.train.keep_checkpoints = t.integer("keep_checkpoints", 3, 1);
  cfg.train.time_limit_minutes = t.real("time_limit_minutes", 0.0, 0.0);
  cfg.train.lr_decay = t.choice("lr_decay", "none", {"none", "linear"});
  cfg.train.lr_decay_from = t.real("lr_decay_from", 0.5, 0.0, 0.999);
  cfg.train.sync_bn = t.boolean("sync_bn", false);
  t.finish();

  ConfigNode dt = top.child("data");
  cfg.data.format = dt.choice("format", "fmnist", {"fmnist", "cifar10", "folder", "packed"});
  cfg.data.path = dt.string("path", "/usr/share/datasets/fashion-mnist");
  dt.finish();

  ConfigNode ev = top.child("eval");  // absent in older checkpoints' configs: defaults
  cfg.eval.inception = ev.string("inception", "");
  cfg.eval.fid_n = ev.integer("fid_n", 10000, 2, int64_t(1) << 32);
  ev.finish();

  top.finish();
  cfg.resolved = source->resolved;
  return cfg;
}

}  // namespace

namespace {

// yaml-cpp keeps both entries of a repeated key and returns the first: a silent surprise.
void check_unique_keys(const YAML::Node& node, const std::string& name, const std::string& path) {
  if (node.IsSequence())
    for (size_t i = 0; i < node.size(); ++i)
      check_unique_keys(node[i], name, path + "[" + std::to_string(i) + "]");
  if (!node.IsMap()) return;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar(), full = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second)
      fail(name, ": key '", full, "' appears twice (line ", kv.first.Mark().line + 1,
           "); expected each key once");
    check_unique_keys(kv.second, name, full);
  }
}

}  // namespace

Config parse_config(const std::string& yaml_text, const std::string& name,
                    const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    fail(name, ": not valid YAML: ", e.what());
  }
  // An empty file, a lone directive or a scalar would otherwise run with every default.
  if (!root.IsDefined() || root.IsNull())
    fail(name, ": no settings found (the file is empty or not YAML); expected a YAML mapping with "
               "sections such as model:, generator:, train:, data:");
  if (!root.IsMap())
    fail(name, ": expected a YAML mapping with sections such as model:, generator:, train:, "
               "data:, got a ", root.IsSequence() ? "list" : "scalar '" + root.Scalar() + "'");
  check_unique_keys(root, name, "");
  return parse_tree(root, name, overrides);
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    fail(path, ": is a directory; expected a YAML config file (e.g. configs/fmnist32_hamgan.yaml)");
  std::ifstream in(path);
  if (!in) fail(path, ": cannot open config file");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail(path, ": cannot read config file");
  return parse_config(ss.str(), path, overrides);
}

std::string to_yaml(const YAML::Node& node) {
  YAML::Emitter out;
  out << node;
  return out.c_str();
}

}  // namespace hamgan
