// `hamgan export` against an independent implementation: for every registered context module
// (and the option forms that change its tensors: projections paper, fixed/online bases, fixed
// STT factors, BigGAN's shared embedding with hierarchical z) a tiny G with non-trivial state
// (zero-initialised gains, gamma and sigma set, spectral-norm u/v and BN running statistics
// moved by training-mode forwards) is saved, exported, and sampled as `hamgan sample` does; the
// Python checker tests/export/check_export.py loads the export with python/hamgan_py (plain
// PyTorch written from the papers and the C++), redraws the same images from the same seed, and
// also reads model.safetensors with the safetensors package, and exports to ONNX (onnxruntime
// against the module). The checker runs under HAMGAN_ECOSYSTEM_PYTHON (tests/CMakeLists.txt);
// a missing Python or package fails the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "gan/models/init.h"
#include "gan/sample/export_generator.h"
#include "core/sha256.h"
#include "gan/sample/sampler.h"
#include "io/safetensors_writer.h"
#include "layers/context/context.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/process.h"

namespace test_export {

namespace fs = std::filesystem;
using namespace hamgan;

namespace {

struct Variant {
  std::string name;     // unique; the module's registry name for its plain form
  std::string module;   // registry name
  std::string context;  // YAML flow mapping of the context block
  std::string generator_extra;
};

// One plain variant per registered module (from the registry, so a new module joins the sweep),
// then the option forms with other tensors or another eval path.
std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (const auto& n : context_names()) v.push_back({n, n, "{type: " + n + ", resolution: 8}", ""});
  for (const char* n : {"kao_kv", "kao_qkv", "sao", "stt_dense", "stt_random", "stt_dense_factorized",
                        "stt_random_factorized", "stt_mixture"})
    v.push_back({std::string(n) + "+paper", n, "{type: " + std::string(n) + ", resolution: 8, projections: paper}", ""});
  v.push_back({"self_attention+nopool", "self_attention", "{type: self_attention, resolution: 16, pool: false}", ""});
  v.push_back({"ham_nmf+fixed", "ham_nmf", "{type: ham_nmf, resolution: 8, init: fixed, eval_steps: 3, inv_t: 2}", ""});
  v.push_back({"ham_vq+online", "ham_vq", "{type: ham_vq, resolution: 8, init: online, groups: 2, d: 8, r: 3}", ""});
  v.push_back({"ham_cd+groups", "ham_cd", "{type: ham_cd, resolution: 8, groups: 2, beta: 0.05}", ""});
  v.push_back({"ham_nmf+hier", "ham_nmf", "{type: ham_nmf, resolution: 16, normalize_bases: true}",
               ", shared_dim: 6, hier: true"});
  v.push_back({"stt_random+fixed", "stt_random", "{type: stt_random, resolution: 8, learned: false}", ""});
  v.push_back({"stt_random_factorized+fixed", "stt_random_factorized",
               "{type: stt_random_factorized, resolution: 8, learned: false, rows: [4, 16], cols: [8, 8]}", ""});
  v.push_back({"none+shared", "none", "{type: none}", ", shared_dim: 5"});
  return v;
}

std::string config_yaml(const Variant& v) {
  return "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
         "generator: {ch: 4, z_dim: 8" + v.generator_extra + ", context: " + v.context + "}\n"
         "discriminator: {ch: 4}\n"
         "train: {batch_size: 4, device: cpu, ema_standing_batches: 0}\n";
}

// G with every tensor away from its initial value: zero gains, gamma and sigma would hide
// the module under test.
void make_state_nontrivial(GeneratorImpl& g, int64_t z_dim, int64_t n_classes) {
  {
    torch::NoGradGuard ng;
    for (auto& kv : g.named_parameters()) {
      torch::Tensor p = kv.value();
      if (p.dim() == 0) p.fill_(0.7);  // gamma, sigma
      else if (p.abs().max().item<double>() == 0) p.normal_(0.0, 0.3);
    }
  }
  g.train();  // power iterations move u, v; BN running statistics; online bases
  for (int i = 0; i < 3; ++i) {
    torch::NoGradGuard ng;
    g.forward(torch::randn({6, z_dim}), torch::randint(n_classes, {6}, torch::kLong));
  }
  g.eval();
}

std::string python() {
  const char* p = std::getenv("HAMGAN_ECOSYSTEM_PYTHON");
  return p && *p ? p : "";
}

std::string source_dir() { return std::getenv("HAMGAN_SOURCE_DIR") ? std::getenv("HAMGAN_SOURCE_DIR") : "."; }

// A tiny G of variant `v` (torch seeded with `seed`, state made non-trivial) saved as the
// iteration-5 checkpoint of DIR/run, with DIR/run/classes.txt; returns the checkpoint's path.
std::string save_variant_checkpoint(const std::string& dir, const Variant& v, uint64_t seed) {
  fs::create_directories(dir + "/run/checkpoints");
  const Config cfg = parse_config(config_yaml(v), v.name);
  torch::manual_seed(seed);
  Generator g(cfg.model, cfg.generator);
  init_weights(*g, cfg.model.init);
  make_state_nontrivial(*g, cfg.generator.z_dim, cfg.model.n_classes);
  Discriminator d(cfg.model, cfg.discriminator);
  torch::optim::Adam og(g->parameters()), od(d->parameters());
  CheckpointWrite w;
  w.iteration = 5;
  w.config_yaml = to_yaml(cfg.resolved);
  w.g = g.get();
  w.g_ema = g.get();
  w.d = d.get();
  w.opt_g = &og;
  w.opt_d = &od;
  const std::string ck = checkpoint_path(dir + "/run/checkpoints", 5);
  save_checkpoint(ck, w);
  std::ofstream(dir + "/run/classes.txt") << "000 tee shirt\n001 trouser\n002 pull\"over\n";
  return ck;
}

}  // namespace

TEST(Export, SafetensorsBytesFollowTheFormat) {
  io::NamedTensors t = {{"a", torch::arange(6, torch::kFloat).view({2, 3})}, {"b\"q", torch::tensor({7}, torch::kLong)}};
  const std::string s = io::safetensors_bytes(t, {{"k", "v"}});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(s[i]);
  ASSERT_EQ(n % 8, 0u);
  ASSERT_EQ(s.size(), 8 + n + 6 * 4 + 8);
  const std::string header = s.substr(8, n);
  EXPECT_NE(header.find("\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}"), std::string::npos) << header;
  EXPECT_NE(header.find("\"b\\\"q\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[24,32]}"), std::string::npos) << header;
  EXPECT_NE(header.find("\"__metadata__\":{\"k\":\"v\"}"), std::string::npos) << header;
  float f[6];
  std::memcpy(f, s.data() + 8 + n, sizeof f);
  EXPECT_EQ(f[5], 5.0f);
  EXPECT_THROW(io::safetensors_bytes({{"a", t[0].second}, {"a", t[0].second}}), Error);
}

TEST(Export, RefusesAnOutDirThatIsNotAnEarlierExport) {
  const std::string dir = test::fresh_dir("export", "refuse");
  fs::create_directories(dir);
  std::ofstream(dir + "/notes.txt") << "mine\n";
  EXPECT_THROW(sample::check_export_dir(dir, "--out"), Error);
  fs::remove(dir + "/notes.txt");
  std::ofstream(dir + "/config.json") << "{\"other\": 1}\n";
  EXPECT_THROW(sample::check_export_dir(dir, "--out"), Error);
  EXPECT_EQ(fs::file_size(dir + "/config.json"), 13u);  // nothing overwritten
}

TEST(Export, EveryContextModuleMatchesThePythonGenerator) {
  const std::string py = python();
  ASSERT_FALSE(py.empty()) << "HAMGAN_ECOSYSTEM_PYTHON is not set (tests/CMakeLists.txt sets it for CTest)";
  ASSERT_TRUE(fs::exists(py)) << "HAMGAN_ECOSYSTEM_PYTHON=" << py
                              << " does not exist: create it with scripts/setup.sh (a venv with torch, safetensors, "
                                 "onnx, onnxruntime), or configure -DHAMGAN_ECOSYSTEM_PYTHON=/path/to/python";
  const std::string root = test::fresh_dir("export", "sweep");
  const std::vector<sample::SampleItem> items = {{0, 0}, {1, 3}, {2, 1}, {0, 5}, {2, 2}};
  const uint64_t seed = 7;
  fs::create_directories(root);
  std::ofstream manifest(root + "/manifest.txt");
  ASSERT_TRUE(manifest) << root << "/manifest.txt";
  const auto all = variants();
  for (size_t i = 0; i < all.size(); ++i) {
    const Variant& v = all[i];
    SCOPED_TRACE(v.name);
    const std::string dir = root + "/" + std::to_string(i);
    const std::string ck = save_variant_checkpoint(dir, v, 100 + i);

    test::run_cli(cli::export_cmd, "export", {"--checkpoint", ck, "--out", dir + "/export"});
    // An earlier export is replaced.
    test::run_cli(cli::export_cmd, "export", {"--checkpoint", ck, "--out", dir + "/export"});

    sample::SamplerOptions so;
    so.seed = seed;
    so.batch = 3;  // the images must not depend on the batch
    const CheckpointData data = load_checkpoint(ck);
    const sample::Sampler s(data, so, std::cerr);
    std::vector<torch::Tensor> zs;
    std::vector<int64_t> cls, ks;
    for (const auto& it : items) {
      zs.push_back(s.latent(it.cls, it.k));
      cls.push_back(it.cls);
      ks.push_back(it.k);
    }
    const torch::Tensor images = s.generate(items);
    io::write_safetensors(dir + "/oracle.safetensors",
                          {{"z", torch::stack(zs)}, {"classes", torch::tensor(cls, torch::kLong)},
                           {"ks", torch::tensor(ks, torch::kLong)}, {"images", images}},
                          {{"seed", std::to_string(seed)}, {"variant", v.name}, {"module", v.module}});
    manifest << v.name << " " << v.module << " " << dir << "\n";
  }
  manifest.close();

  const std::string src = source_dir();
  const std::string results = root + "/results.txt";
  const std::string cmd = "PYTHONPATH='" + src + "/python' '" + py + "' '" + src +
                          "/tests/export/check_export.py' --manifest '" + root + "/manifest.txt' --results '" +
                          results + "' > '" + root + "/check.log' 2>&1";
  const int rc = std::system(cmd.c_str());
  const std::string log = test::read_text(root + "/check.log");
  std::cout << log;
  ASSERT_EQ(rc, 0) << cmd << "\n" << log;

  // Every registered module was compared (plain form at least) and matched.
  std::map<std::string, std::string> seen;  // module -> its lines
  std::istringstream in(test::read_text(results));
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string variant, module, verdict;
    ls >> variant >> module >> verdict;
    EXPECT_EQ(verdict, "equal") << line;
    seen[module] += line + "\n";
  }
  for (const auto& n : context_names()) EXPECT_TRUE(seen.count(n)) << "context module " << n << " was not checked";
  EXPECT_EQ(seen.size(), context_names().size());
}

TEST(Export, Sha256MatchesTheFips180Examples) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first padded block.
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Nothing but the exporter may pair a config.json with a model.safetensors: the tensors' file
// carries the SHA-256 of the config's exact bytes, and hamgan_py refuses hand edits (another
// Hamburger type, another export's tensors, a missing key, a huge channel count) naming the files,
// before it allocates (tests/export/check_export_edits.py).
TEST(Export, PythonLoaderRefusesHandEditedExports) {
  const std::string py = python();
  ASSERT_FALSE(py.empty()) << "HAMGAN_ECOSYSTEM_PYTHON is not set (tests/CMakeLists.txt sets it for CTest)";
  ASSERT_TRUE(fs::exists(py)) << "HAMGAN_ECOSYSTEM_PYTHON=" << py << " does not exist: create it with scripts/setup.sh";
  const std::string root = test::fresh_dir("export", "edits");
  const Variant v{"ham_nmf", "ham_nmf", "{type: ham_nmf, resolution: 8}", ""};
  std::string exports[2];
  for (int i = 0; i < 2; ++i) {
    const std::string dir = root + "/" + std::to_string(i);
    const std::string ck = save_variant_checkpoint(dir, v, 1 + i);
    exports[i] = dir + "/export";
    test::run_cli(cli::export_cmd, "export", {"--checkpoint", ck, "--out", exports[i]});
  }
  // The binding as written: the digest of config.json's bytes in model.safetensors' metadata.
  const std::string model = test::read_text(exports[0] + "/" + sample::kExportModelFile);
  const std::string digest = sha256_hex(test::read_text(exports[0] + "/" + sample::kExportConfigFile));
  EXPECT_NE(model.find("\"config_sha256\":\"" + digest + "\""), std::string::npos);

  const std::string cmd = "PYTHONPATH='" + source_dir() + "/python' '" + py + "' '" + source_dir() +
                          "/tests/export/check_export_edits.py' '" + exports[0] + "' '" + exports[1] + "' '" + root +
                          "/scratch' > '" + root + "/check.log' 2>&1";
  fs::create_directories(root + "/scratch");
  const int rc = std::system(cmd.c_str());
  const std::string log = test::read_text(root + "/check.log");
  std::cout << log;
  EXPECT_EQ(rc, 0) << cmd << "\n" << log;
  EXPECT_NE(log.find("check_export_edits: every edited export refused"), std::string::npos) << log;
}

TEST(Export, EmptyOutIsAnErrorNamingOut) {
  const std::string msg = test::error_of(
      [] { test::run_cli(cli::export_cmd, "export", {"--checkpoint", "/nonexistent/ck.pt", "--out", ""}); });
  test::expect_names(msg, {"--out", "empty", "expected"});
  EXPECT_EQ(msg.find("Invalid argument"), std::string::npos) << msg;
}

}  // namespace test_export
