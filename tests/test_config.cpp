// Config validation: each bad config fails with a message naming the source, the key and
// what was expected; overrides go through the same checks; shipped configs load.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <type_traits>
#include <sstream>

#include "core/config_keys.h"
#include "core/error.h"
#include "gan/config/config.h"
#include "gan/train/trainer.h"
#include "metrics/metric.h"
#include "gan/cli/commands.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_config {

using namespace hamgan;

namespace {

struct BadCase {
  std::string yaml;
  std::vector<std::string> overrides;
  std::vector<std::string> expected;  // substrings of the message
};

std::string error_of(const BadCase& c) {
  try {
    parse_config(c.yaml, "bad.yaml", c.overrides);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Config, BadConfigsFailWithClearMessages) {
  const std::vector<BadCase> cases = {
      {"model: {resolution: 96}", {}, {"bad.yaml", "'model.resolution'", "one of 32, 64, 128", "96"}},
      {"model: {resolution: abc}", {}, {"'model.resolution'", "an integer", "'abc'"}},
      {"model: {n_classes: 0}", {}, {"'model.n_classes'", "[1, 1048576]", "got 0"}},
      {"model: {init: kaiming}", {}, {"'model.init'", "orthogonal, xavier, normal", "'kaiming'"}},
      {"model: {sn_eps: -1}", {}, {"'model.sn_eps'", "a number in [0, 1]"}},
      {"model: {colour: red}", {}, {"'model.colour'", "unknown key"}},
      {"modle: {}", {}, {"'modle'", "unknown key"}},
      {"model: 3", {}, {"'model'", "expected a mapping"}},
      {"generator: {ch: [1, 2]}", {}, {"'generator.ch'", "got a list"}},
      {"generator: {hier: yes}", {}, {"'generator.hier'", "true or false", "'yes'"}},
      {"generator: {hier: true}", {}, {"'generator.hier'", "shared_dim > 0"}},
      {"generator: {hier: true, shared_dim: 8, z_dim: 100}", {}, {"'generator.z_dim'", "multiple of 6"}},
      {"generator: {context: {type: transformer}}", {}, {"'generator.context.type'", "self_attention", "'transformer'"}},
      {"generator: {context: {type: self_attention, resolution: 48}}", {}, {"'generator.context.resolution'", "8, 16, 32, 64, 128", "48"}},
      {"generator: {context: {type: self_attention, qk_divisor: 0}}", {}, {"'generator.context.qk_divisor'", "[1, 1024]"}},
      {"generator: {context: {type: self_attention, heads: 4}}", {}, {"'generator.context.heads'", "unknown key"}},
      {"discriminator: {context: {type: self_attention, resolution: 128}}", {}, {"'discriminator.context.resolution'", "64, 32, 16, 8, 4"}},
      {"generator: {context: {type: self_attention, projections: paper}}", {}, {"'generator.context.projections'", "sagan", "'paper'"}},
      {"generator: {context: {type: kao_kv, projections: kao}}", {}, {"'generator.context.projections'", "sagan, paper", "'kao'"}},
      // STT's retired `paper: bool` key: the file, the full key and the replacement.
      {"discriminator: {context: {type: stt_dense, resolution: 16, paper: true}}", {}, {"bad.yaml", "'discriminator.context.paper'", "use projections: paper|sagan"}},
      {"{}", {"generator.context.type=stt_mixture", "generator.context.paper=false"}, {"command-line override", "'generator.context.paper'", "use projections: paper|sagan"}},
      {"train: {loss: wasserstein}", {}, {"'train.loss'", "hinge, nonsaturating"}},
      // The minibatch standard deviation: groups within the real and within the fake micro-batch.
      {"discriminator: {mbstd_group: 4}\ntrain: {batch_size: 12, accumulate: 2}", {},
       {"'train.batch_size'", "mbstd_group 4", "multiples of it", "mixes real and fake", "got 6"}},
      {"model: {resolution: 32}\ndiscriminator: {ch: 4, mbstd_group: 2, mbstd_features: 5}", {},
       {"'discriminator.mbstd_features'", "divisor of the last block's 16 input channels", "got 5"}},
      {"data: {format: tfrecord}", {}, {"'data.format'", "fmnist"}},
      {"{}", {"train.dist_backend=mpi"}, {"command-line override", "'train.dist_backend'", "auto, nccl, gloo", "'mpi'"}},
      {"model: [1, 2", {}, {"bad.yaml", "not valid YAML"}},
      {"{}", {"generator.ch=-3"}, {"command-line override", "'generator.ch'", "[1, 4096]", "-3"}},
      {"{}", {"generator.chh=3"}, {"command-line override", "'generator.chh'", "unknown key"}},
      {"{}", {"generator.ch"}, {"command-line override 'generator.ch'", "key.sub=value"}},
      {"model: {resolution: 32}", {"model.resolution.x=1"}, {"'model.resolution'", "is a value, not a mapping"}},
      // Configs that would otherwise run silently with every default.
      {"", {}, {"bad.yaml", "empty", "expected a YAML mapping"}},
      {"---\n# nothing\n", {}, {"bad.yaml", "empty"}},
      {", model", {}, {"bad.yaml", "expected a YAML mapping"}},
      {"just text", {}, {"bad.yaml", "expected a YAML mapping", "scalar 'just text'"}},
      {"- 1\n- 2\n", {}, {"bad.yaml", "expected a YAML mapping", "list"}},
      {"train: {g_lr: 1.0e-4}\ntrain: {g_lr: 2.0e-4}\n", {}, {"bad.yaml", "key 'train'", "appears twice", "line 2"}},
      {"train: {g_lr: 1.0e-4, g_lr: 2.0e-4}\n", {}, {"key 'train.g_lr'", "appears twice"}},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c);
    ASSERT_FALSE(msg.empty()) << "no error for: " << c.yaml;
    for (const auto& e : c.expected)
      EXPECT_NE(msg.find(e), std::string::npos) << "message '" << msg << "' lacks '" << e << "'";
  }
}

TEST(Config, DefaultsAndOverridesResolve) {
  const Config c = parse_config("generator: {ch: 32}", "x.yaml", {"model.resolution=64", "train.g_lr=2e-4"});
  EXPECT_EQ(c.generator.ch, 32);
  EXPECT_EQ(c.model.resolution, 64);
  EXPECT_DOUBLE_EQ(c.train.g_lr, 2e-4);
  EXPECT_EQ(c.discriminator.ch, 64);
  EXPECT_EQ(c.resolved["model"]["resolution"].as<int>(), 64);
  EXPECT_EQ(c.resolved["generator"]["context"]["type"].as<std::string>(), "none");
  // The resolved tree reads back to the same config.
  const Config again = parse_config(to_yaml(c.resolved), "resolved");
  EXPECT_EQ(to_yaml(again.resolved), to_yaml(c.resolved));
}

TEST(Config, ShippedConfigsLoad) {
  for (const char* f : {"configs/imagenet128_sagan.yaml", "configs/fmnist32_sagan.yaml"}) {
    const Config c = load_config(test::source_path(f));
    EXPECT_EQ(c.generator.context.type, "self_attention") << f;
  }
}

// Every shipped preset resolves (bases, keys, ranges, context options) to exactly the config
// recorded for it: tests/fixtures/presets_resolved/NAME.yaml is `hamgan info -c configs/NAME.yaml`
// with every key resolved, so a change to a default, a base or a preset shows up here and its
// fixture is updated on purpose (`python3 scripts/config_reference.py --fixtures build/hamgan`
// rewrites them all). Each fixture has its preset and vice versa.
TEST(Config, EveryPresetResolvesAsBefore) {
  namespace fs = std::filesystem;
  std::set<std::string> presets, fixtures;
  for (const auto& e : fs::directory_iterator(test::source_path("configs")))
    if (e.path().extension() == ".yaml") presets.insert(e.path().stem().string());
  for (const auto& e : fs::directory_iterator(test::source_path("tests/fixtures/presets_resolved")))
    fixtures.insert(e.path().stem().string());
  EXPECT_EQ(presets, fixtures);
  EXPECT_GE(presets.size(), 20u);
  for (const auto& name : presets) {
    std::ifstream in(test::source_path("tests/fixtures/presets_resolved/" + name + ".yaml"));
    std::stringstream want;
    want << in.rdbuf();
    try {
      const Config c = load_config(test::source_path("configs/" + name + ".yaml"));
      EXPECT_EQ(to_yaml(c.resolved) + "\n", want.str()) << name;
      EXPECT_FALSE(c.resolved["base"]) << name;
    } catch (const Error& err) {
      ADD_FAILURE() << err.what();
    }
  }
}

namespace {
std::filesystem::path preset_dir(const std::map<std::string, std::string>& files) {
  const auto dir = std::filesystem::temp_directory_path() / "hamgan_config_bases";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "sub");
  for (const auto& [name, text] : files) std::ofstream((dir / name).string()) << text;
  return dir;
}
}  // namespace

// `base:` is relative to the preset, chains, merges mappings key by key, lets a context of
// another type replace the base's whole, and takes command-line overrides last.
TEST(Config, PresetsInheritTheirBase) {
  const auto dir = preset_dir({
      {"root.yaml", "model: {resolution: 32, n_classes: 10}\ngenerator:\n  ch: 8\n  context: "
                    "{type: ham_nmf, resolution: 16, d: 32, r: 4}\ntrain: {batch_size: 8, seed: 3}\n"},
      {"sub/mid.yaml", "base: ../root.yaml\ntrain: {batch_size: 4}\n"},
      {"sub/top.yaml", "base: mid.yaml\ngenerator:\n  context: {type: sao, resolution: 32}\n"},
  });
  const Config c = load_config((dir / "sub/top.yaml").string(), {"train.seed=5"});
  EXPECT_EQ(c.model.n_classes, 10);
  EXPECT_EQ(c.generator.ch, 8);
  EXPECT_EQ(c.train.batch_size, 4);
  EXPECT_EQ(c.train.seed, 5);
  EXPECT_EQ(c.generator.context.type, "sao");
  EXPECT_EQ(c.generator.context.resolution, 32);
  EXPECT_FALSE(c.resolved["generator"]["context"]["d"]);  // ham_nmf's options went with it
  EXPECT_FALSE(c.resolved["base"]);
  // The same type merges: a preset may change one option of the base's module.
  std::ofstream((dir / "sub/r8.yaml").string()) << "base: ../root.yaml\ngenerator: {context: {type: ham_nmf, r: 8}}\n";
  const Config r8 = load_config((dir / "sub/r8.yaml").string());
  EXPECT_EQ(r8.resolved["generator"]["context"]["r"].as<int>(), 8);
  EXPECT_EQ(r8.resolved["generator"]["context"]["d"].as<int>(), 32);
}

// An empty section in a derived preset (every key commented out, or `~`) changes nothing: the
// base's section stays, never the program's defaults.
TEST(Config, EmptySectionsInAPresetKeepTheBase) {
  const auto dir = preset_dir({
      {"root.yaml", "model: {resolution: 32, n_classes: 10}\ngenerator:\n  ch: 8\n  context: "
                    "{type: ham_nmf, resolution: 16}\ntrain: {batch_size: 8, iterations: 300}\n"},
      {"commented.yaml", "base: root.yaml\ntrain:\n  # batch_size: 4\n  # iterations: 10\ngenerator:\n"},
      {"tilde.yaml", "base: root.yaml\ntrain: ~\ngenerator: ~\n"},
  });
  for (const char* file : {"commented.yaml", "tilde.yaml"}) {
    const Config c = load_config((dir / file).string());
    EXPECT_EQ(c.train.batch_size, 8) << file;
    EXPECT_EQ(c.train.iterations, 300) << file;
    EXPECT_EQ(c.generator.ch, 8) << file;
    EXPECT_EQ(c.generator.context.type, "ham_nmf") << file;
  }
}

// A context module's type changed by an override replaces its options as a preset's does,
// keeping where it sits (resolution).
TEST(Config, TypeOverrideReplacesTheModulesOptions) {
  const std::string cfg = test::source_path("configs/imagenet128_hamgan.yaml");
  const Config none = load_config(cfg, {"generator.context.type=none"});
  EXPECT_EQ(none.generator.context.type, "none");
  const Config sa = load_config(cfg, {"generator.context.type=self_attention", "discriminator.context.type=self_attention"});
  EXPECT_EQ(sa.generator.context.type, "self_attention");
  EXPECT_EQ(sa.generator.context.resolution, 32);
  EXPECT_FALSE(sa.resolved["generator"]["context"]["d"]);
  // The same type keeps the options: one key changes.
  const Config r8 = load_config(cfg, {"generator.context.type=ham_nmf", "generator.context.r=8"});
  EXPECT_EQ(r8.resolved["generator"]["context"]["r"].as<int>(), 8);
}

// A config or base that never ends (/dev/zero) or is huge is refused after a bounded read.
TEST(Config, UnboundedConfigFilesAreRefused) {
  const auto dir = preset_dir({{"zero.yaml", "base: /dev/zero\n"}});
  for (const std::string& path : {std::string("/dev/zero"), (dir / "zero.yaml").string()}) {
    try {
      load_config(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("/dev/zero"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("larger than"), std::string::npos) << e.what();
    }
  }
}

TEST(Config, BadBasesAreClearErrors) {
  const auto dir = preset_dir({
      {"a.yaml", "base: b.yaml\n"},
      {"b.yaml", "base: a.yaml\n"},
      {"self.yaml", "base: ./self.yaml\n"},
      {"missing.yaml", "base: nowhere.yaml\n"},
      {"list.yaml", "base: [a.yaml]\n"},
      {"badkey.yaml", "base: bad_base.yaml\n"},
      {"bad_base.yaml", "train: {batch_size: 0}\n"},
  });
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"a.yaml", {"a.yaml", "cycle", "b.yaml"}},
      {"self.yaml", {"self.yaml", "cycle"}},
      {"missing.yaml", {"missing.yaml", "key 'base'", "nowhere.yaml", "does not exist"}},
      {"list.yaml", {"list.yaml", "key 'base'", "expected the path"}},
      {"badkey.yaml", {"badkey.yaml", "bad_base.yaml", "'train.batch_size'"}},
  };
  for (const auto& [file, parts] : cases) {
    std::string msg;
    try {
      load_config((dir / file).string());
    } catch (const Error& e) {
      msg = e.what();
    }
    ASSERT_FALSE(msg.empty()) << file << " loaded";
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << file << ": " << msg;
  }
}

TEST(Config, MissingFileIsNamed) {
  try {
    load_config("/nonexistent/x.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/x.yaml"), std::string::npos);
  }
}

TEST(Config, HamburgerConfigsLoad) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"configs/imagenet128_hamgan.yaml", "ham_nmf"}, {"configs/imagenet128_ham_vq.yaml", "ham_vq"},
      {"configs/imagenet128_ham_cd.yaml", "ham_cd"},  {"configs/fmnist32_hamgan.yaml", "ham_nmf"},
      {"configs/fmnist32_ham_vq.yaml", "ham_vq"},     {"configs/fmnist32_ham_cd.yaml", "ham_cd"}};
  for (const auto& [f, type] : files) {
    const Config c = load_config(test::source_path(f));
    EXPECT_EQ(c.generator.context.type, type) << f;
    EXPECT_EQ(c.discriminator.context.type, type) << f;
  }
  const Config h = load_config(test::source_path("configs/imagenet128_hamgan.yaml"));
  EXPECT_EQ(h.resolved["generator"]["context"]["r"].as<int>(), 32);
  EXPECT_EQ(h.resolved["discriminator"]["context"]["d"].as<int>(), 128);
  EXPECT_DOUBLE_EQ(h.train.d_lr, 4e-4);
}

// An empty file, a directory, or a file of junk given to -c is an error that names
// it, never a run with the built-in defaults.
TEST(Config, UnusableConfigFilesAreNamed) {
  const auto dir = std::filesystem::temp_directory_path() / "hamgan_config_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "adir");
  const std::vector<std::pair<std::string, std::string>> files = {
      {"empty.yaml", ""}, {"comma.yaml", ",\n"}, {"percent.yaml", "%\n"}};
  std::vector<std::pair<std::string, std::string>> cases = {{(dir / "adir").string(), "is a directory"}};
  for (const auto& [name, text] : files) {
    std::ofstream((dir / name).string()) << text;
    cases.push_back({(dir / name).string(), ""});
  }
  for (const auto& [path, what] : cases) {
    std::string msg;
    try {
      load_config(path);
    } catch (const Error& e) {
      msg = e.what();
    }
    ASSERT_FALSE(msg.empty()) << path << " loaded";
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

// `hamgan info --get KEY` prints one resolved value (scripts read the data path with it) and
// names an unknown key.
TEST(Config, InfoGetPrintsOneResolvedValue) {
  const std::string cfg = test::source_path("configs/fmnist32_quickstart.yaml");
  EXPECT_EQ(test::run_cli(cli::info, "info", {"-c", cfg, "--get", "data.path"}), "/usr/share/datasets/fashion-mnist\n");
  EXPECT_EQ(test::run_cli(cli::info, "info", {"-c", cfg, "--get", "generator.context.type", "train.batch_size=8"}),
            "ham_nmf\n");
  // An override holding commas is one override (cxxopts would split it into "eval.metrics=fid"
  // and "kid", an error).
  EXPECT_EQ(test::run_cli(cli::info, "info", {"-c", cfg, "--get", "eval.metrics", "eval.metrics=fid,kid,recall"}),
            "fid,kid,recall\n");
  const std::string e = test::error_of([&] { test::run_cli(cli::info, "info", {"-c", cfg, "--get", "train.nope"}); });
  EXPECT_NE(e.find("--get 'train.nope': no such config key"), std::string::npos) << e;
}

// Every word-valued key is an enum read through its word table, so a bool or a text does not
// assign to it (`cfg.train.amp = true;` would compile and become "\x01" in a string), and each
// word reads back as itself.
static_assert(!std::is_assignable_v<AmpMode&, bool> && !std::is_assignable_v<AmpMode&, const char*>);
static_assert(!std::is_assignable_v<DeviceChoice&, const char*> && !std::is_assignable_v<DataFormat&, const char*>);
static_assert(!std::is_assignable_v<GanLoss&, bool>);
TEST(Config, WordKeysReadEveryWordOfTheirTable) {
  const auto check = [](const std::string& section, const std::string& key, const auto& words, const auto& field) {
    for (const auto& [value, word] : words) {
      const Config c = parse_config("model: {resolution: 32, n_classes: 3, image_channels: 1}\n", "words",
                                    {section + "." + key + "=" + word});
      EXPECT_EQ(field(c), value) << section << "." << key << "=" << word;
      EXPECT_EQ(c.resolved[section][key].template as<std::string>(), word);
    }
  };
  check("train", "amp", kAmpWords, [](const Config& c) { return c.train.amp; });
  check("train", "folded_convs", kFoldWords, [](const Config& c) { return c.train.folded_convs; });
  check("train", "device", kDeviceWords, [](const Config& c) { return c.train.device; });
  check("train", "dist_backend", kDistBackendWords, [](const Config& c) { return c.train.dist_backend; });
  check("train", "loss", kLossWords, [](const Config& c) { return c.train.loss; });
  check("train", "lr_decay", kLrDecayWords, [](const Config& c) { return c.train.lr_decay; });
  // eval.best_metric: a name of the metric registry's table columns (metrics/registry.cpp).
  Words<std::string> metric_words;
  for (const auto& name : metrics::table_metric_names()) metric_words.push_back({name, name});
  check("eval", "best_metric", metric_words, [](const Config& c) { return c.eval.best_metric; });
  check("data", "format", kDataFormatWords, [](const Config& c) { return c.data.format; });
  check("model", "init", kInitWords, [](const Config& c) { return c.model.init; });
}

// The evaluation keys that pre-release builds read under train: (moved_eval_keys) are refused,
// in a file (an old run's config.yaml) and in an override, naming the key and its name now.
TEST(Config, PreReleaseEvaluationKeysAreRefusedNamingTheirKeyNow) {
  const std::string model = "model: {resolution: 32, n_classes: 3, image_channels: 1}\n";
  for (const auto& [from, to] : moved_eval_keys()) {
    const std::string key = from.substr(from.find('.') + 1);
    std::string e = test::error_of([&] { parse_config(model + "train: {" + key + ": 2}\n", "old.yaml"); });
    for (const std::string& w : {std::string("old.yaml"), from, to, std::string("pre-release")})
      EXPECT_NE(e.find(w), std::string::npos) << e;
    e = test::error_of([&] { parse_config(model, "o.yaml", {from + "=2"}); });
    EXPECT_NE(e.find("override '" + from + "=2': key '" + from + "'"), std::string::npos) << e;
    EXPECT_NE(e.find("'" + to + "' now"), std::string::npos) << e;
  }
}

// Every key the config resolves is read through a row of its table (core/config_keys.h): the
// sections' keys and each context type's, each row with a range and a meaning, so that
// `hamgan info --keys` and docs/configuration.md miss none.
TEST(ConfigKeys, EveryResolvedKeyIsATableRow) {
  const auto leaves = [](const YAML::Node& node) {
    std::set<std::string> out;
    std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n, const std::string& p) {
      if (n.IsMap())
        for (const auto& kv : n) walk(kv.second, p.empty() ? kv.first.Scalar() : p + "." + kv.first.Scalar());
      else
        out.insert(p);
    };
    walk(node, "");
    return out;
  };
  std::set<std::string> listed;
  for (const KeyInfo& k : config_keys()) {
    EXPECT_FALSE(k.range.empty()) << k.path;
    EXPECT_FALSE(k.meaning.empty()) << k.path;
    EXPECT_TRUE(k.value.IsDefined() && !k.value.IsNull()) << k.path;
    if (k.type != "mapping") listed.insert(k.path);
  }
  EXPECT_EQ(listed, leaves(parse_config("model: {}\n", "d.yaml").resolved));
  for (const auto& type : context_names()) {
    const Config c = parse_config("model: {}\n", "d.yaml", {"generator.context.type=" + type});
    std::set<std::string> rows;
    for (const KeyInfo& k : context_keys(type)) {
      EXPECT_FALSE(k.meaning.empty()) << type << " " << k.path;
      EXPECT_EQ(k.resume, OnResume::Model) << type << " " << k.path;
      rows.insert(k.path);
    }
    EXPECT_EQ(rows, leaves(c.resolved["generator"]["context"])) << type;
  }
}

// A key is a struct field plus a row: the default is the field's initializer, the error names the
// key as ConfigNode does, an open end of an interval is its own error.
TEST(ConfigKeys, ATableReadsItsRowsOverTheStructsDefaults) {
  struct S {
    int64_t steps = 6;
    double rate = 0.5;
  };
  const KeyTable<S> table(OnResume::Change, {
      keys::integer("steps", &S::steps, 1, 100, "iterations"),
      keys::real("rate", &S::rate, closed_open(0, 1), "a rate").on_resume(OnResume::Keep),
  });
  const auto read = [&](const std::string& yaml) {
    auto source = std::make_shared<ConfigSource>();
    source->file = "t.yaml";
    ConfigNode node(YAML::Load(yaml), "sec", source);
    S s;
    table.read(node, s);
    node.finish();
    return s;
  };
  EXPECT_EQ(read("{}").steps, 6);
  EXPECT_EQ(read("{}").rate, 0.5);
  EXPECT_EQ(read("{steps: 9}").steps, 9);
  EXPECT_EQ(test::error_of([&] { read("{steps: 0}"); }), "t.yaml: key 'sec.steps': expected an integer in [1, 100], got 0");
  EXPECT_EQ(test::error_of([&] { read("{rate: 1}"); }), "t.yaml: key 'sec.rate': expected a value in [0, 1), got 1");
  EXPECT_NE(test::error_of([&] { read("{rat: 1}"); }).find("unknown key"), std::string::npos);
  EXPECT_EQ(table.rows()[0].info.range, "[1, 100]");
  EXPECT_EQ(table.rows()[1].info.range, "[0, 1)");
  EXPECT_EQ(table.rows()[0].info.resume, OnResume::Change);
  EXPECT_EQ(table.rows()[1].info.resume, OnResume::Keep);
}

// `hamgan info --keys --json`: the sections' keys, the context types' keys and the metric names,
// from their tables and registries; docs/configuration.md is rendered from it.
TEST(ConfigKeys, InfoKeysJsonListsTheTablesAndRegistries) {
  const std::string json = test::run_cli(cli::info, "info", {"--keys", "--json"});
  for (const std::string want :
       {"\"key\": \"train.batch_size\", \"type\": \"integer\", \"default\": 64, \"range\": \"[1, 1048576]\"",
        "\"key\": \"train.freeze_d\"", "\"resume\": \"keep\"", "\"key\": \"eval.best_metric\"", "\"name\": \"ham_nmf\"",
        "\"key\": \"inv_t\"", "\"name\": \"stt_mixture\"", "\"metrics\": [", "\"name\": \"fid\", \"better\": \"lower\""})
    EXPECT_NE(json.find(want), std::string::npos) << want;
  for (const auto& type : context_names()) EXPECT_NE(json.find("\"name\": \"" + type + "\""), std::string::npos) << type;
  const std::string text = test::run_cli(cli::info, "info", {"--keys"});
  EXPECT_NE(text.find("model.resolution (integer) = 128; 32, 64, 128; resume: model"), std::string::npos) << text;
  const std::string e = test::error_of(
      [&] { test::run_cli(cli::info, "info", {"--keys", "-c", test::source_path("configs/fmnist32_sagan.yaml")}); });
  EXPECT_NE(e.find("--keys lists the keys"), std::string::npos) << e;
}

// A resume keeps the keys whose rows say so: the model's (model, generator, discriminator, each
// listed) and train.freeze_d (D's optimizer holds the unfrozen parameters only); the rest may change.
TEST(ConfigKeys, ResumeChecksFollowTheRows) {
  const std::string base = "model: {resolution: 32, n_classes: 10, image_channels: 1}\n";
  const Config stored = parse_config(base, "run.yaml", {"train.freeze_d=1"});
  EXPECT_TRUE(model_differences(stored, parse_config(base, "c.yaml", {"train.freeze_d=1", "train.g_lr=0.001",
                                                                      "eval.every=5", "data.format=auto"}))
                  .empty());
  const auto diff = model_differences(stored, parse_config(base, "c.yaml", {"generator.ch=8", "model.init=xavier"}));
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0], "  model.init: checkpoint orthogonal, now xavier");
  EXPECT_EQ(diff[1], "  generator.ch: checkpoint 64, now 8");
  const std::string e = test::error_of(
      [&] { check_resume_compatible(stored, parse_config(base, "c.yaml", {"train.freeze_d=2"}), "ckpt.pt"); });
  EXPECT_EQ(e, "ckpt.pt: train.freeze_d is 2 but the run was trained with 1; resume with train.freeze_d=1 or "
               "fine-tune into a new --out with train.init_from");
}

}  // namespace test_config
