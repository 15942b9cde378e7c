// The domain classifier behind `hamgan fid --features`: its network against an independent
// torch implementation (tests/oracle/classifier.py: features, logits, mu/sigma, FID, class
// accuracy), training on a tiny separable set (loss falls, it fits, same seed -> same
// weights), file validation, class accuracy on a hand-made ImageFolder, statistics that
// cannot be mixed up with Inception's, and scores.csv's class_acc column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/classifier/train_classifier.h"
#include "gan/cli/commands.h"
#include "gan/data/tensor_dataset.h"
#include "gan/eval/cas.h"
#include "gan/eval/score_table.h"
#include "gan/sample/plan.h"
#include "gan/sample/sampler.h"
#include "gan/eval/reference.h"
#include "gan/eval/train_scorer.h"
#include "gan/eval/score_run.h"
#include "io/decode.h"
#include "io/image.h"
#include "io/png.h"
#include "metrics/class_accuracy.h"
#include "metrics/classifier.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/oracle.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_classifier {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_classifier", name); }

std::string fid_cli(const std::vector<std::string>& args) { return test::run_cli(cli::fid, "fid", args); }

double number_after(const std::string& out, const std::string& key) {
  const auto at = out.find(key);
  EXPECT_NE(at, std::string::npos) << "no '" << key << "' in: " << out;
  return at == std::string::npos ? NAN : std::stod(out.substr(at + key.size()));
}

struct OracleCase {
  TensorMap t;
  metrics::ClassifierOptions o;
};

OracleCase oracle_case(const std::string& name) {
  OracleCase c;
  c.t = test::load_tensors(test::oracle_path(name + ".pt"));
  const torch::Tensor o = test::get(c.t, "options");
  c.o.resolution = o[0].item<int64_t>(), c.o.channels = o[1].item<int64_t>(), c.o.n_classes = o[2].item<int64_t>();
  c.o.width = o[3].item<int64_t>(), c.o.feature_dim = o[4].item<int64_t>();
  return c;
}

// The oracle's weights in a classifier file written by save_classifier.
std::string oracle_classifier(const std::string& name) {
  const OracleCase c = oracle_case(name);
  metrics::DomainClassifier net(c.o);
  load_state_dict(*net, test::with_prefix(c.t, "weights"), name);
  const std::string path = fresh(name) + ".pt";
  metrics::ClassifierInfo info;
  info.data = "oracle";
  metrics::save_classifier(path, net, info);
  return path;
}

// images [N, C, R, R] uint8 -> DIR/<label as 3 digits>/<i>.png (labels undefined: flat DIR).
std::string png_dir(const std::string& name, const torch::Tensor& u8, const torch::Tensor& labels) {
  const std::string dir = fresh(name);
  for (int64_t i = 0; i < u8.size(0); ++i) {
    char sub[16];
    std::snprintf(sub, sizeof sub, "%03lld", labels.defined() ? static_cast<long long>(labels[i].item<int64_t>()) : 0LL);
    const fs::path d = labels.defined() ? fs::path(dir) / sub : fs::path(dir);
    fs::create_directories(d);
    char file[32];
    std::snprintf(file, sizeof file, "%04lld.png", static_cast<long long>(i));
    write_png((d / file).string(), u8[i].permute({1, 2, 0}).contiguous());
  }
  return dir;
}

// A labelled in-memory dataset: class 0 has a bright top half, class 1 a bright bottom half,
// class 2 is uniform mid-gray; all with noise. Separable, and unchanged by horizontal flips.
class Bands : public Dataset {
 public:
  Bands(int64_t n, uint64_t seed) : n_(n) {
    auto gen = at::detail::createCPUGenerator(seed);
    px_ = torch::randint(0, 60, {n, 1, 16, 16}, gen, torch::kLong);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = i % 3;
      if (c == 0) px_[i].narrow(1, 0, 8).add_(180);
      if (c == 1) px_[i].narrow(1, 8, 8).add_(180);
      if (c == 2) px_[i].add_(90);
    }
    px_ = px_.clamp(0, 255).to(torch::kUInt8);
  }
  int64_t size() const override { return n_; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return 16; }
  int64_t channels() const override { return 1; }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override {
    std::memcpy(pixels, px_[index].data_ptr<uint8_t>(), 256);
    label = static_cast<int32_t>(index % 3);
    return true;
  }
  torch::Tensor images() const { return px_; }

 private:
  int64_t n_;
  torch::Tensor px_;
  std::vector<std::string> names_ = {"top", "bottom", "gray"};
};

ClassifierTrainOptions tiny_options(uint64_t seed) {
  ClassifierTrainOptions o;
  o.epochs = 10, o.batch = 30, o.lr = 5e-3, o.seed = seed, o.workers = 2, o.holdout = 0.2;
  o.width = 4, o.feature_dim = 8;
  return o;
}

ClassifierTrainResult train_tiny(uint64_t seed) {
  std::ostringstream log;
  return train_classifier(std::make_shared<Bands>(300, 5), nullptr, tiny_options(seed), log);
}

// The tiny classifier trained once, saved.
const std::string& tiny_classifier() {
  static const std::string path = [] {
    ClassifierTrainResult r = train_tiny(0);
    const std::string p = fresh("tiny") + ".pt";
    metrics::ClassifierInfo info;
    info.data = "bands";
    info.class_names = {"top", "bottom", "gray"};
    info.test_accuracy = r.test_accuracy;
    metrics::save_classifier(p, r.net, info);
    return p;
  }();
  return path;
}

}  // namespace

// Features and logits in float32 against the float64 torch network: rtol 1e-4, atol 1e-5 (BN
// folding and accumulation order differ); mu and sigma of those features likewise.
TEST(ClassifierOracle, FeaturesLogitsAndStatisticsMatchTorch) {
  for (const std::string name : {"gray32", "rgb128"}) {
    SCOPED_TRACE(name);
    const OracleCase c = oracle_case(name);
    const metrics::ClassifierExtractor net(oracle_classifier(name), torch::kCPU);
    EXPECT_EQ(net.n_classes(), c.o.n_classes);
    const torch::Tensor images = test::get(c.t, "a.images").to(torch::kFloat).div(255);
    const metrics::FeatureOutput o = net.features(net.prepare(images), true);
    EXPECT_TRUE(test::close(o.pool, test::get(c.t, "a.features").to(torch::kFloat), 1e-4, 1e-5));
    EXPECT_TRUE(test::close(o.logits, test::get(c.t, "a.logits").to(torch::kFloat), 1e-4, 1e-5));
    const metrics::GaussianStats s = metrics::compute_stats(o.pool);
    EXPECT_TRUE(test::close(s.mu, test::get(c.t, "a.mu"), 1e-4, 1e-5));
    EXPECT_TRUE(test::close(s.sigma, test::get(c.t, "a.sigma"), 1e-4, 1e-5));
  }
}

// The whole `fid --features` path on PNG folders: FID against scipy's (relative 1e-3: float32
// features), class accuracy exactly (the oracle asserts no near-ties), `fid stats` the same.
TEST(ClassifierOracle, FidAndClassAccuracyThroughTheCli) {
  const OracleCase c = oracle_case("gray32");
  const std::string clf = oracle_classifier("gray32");
  const std::string real = png_dir("real", test::get(c.t, "a.images"), {});
  const std::string fake = png_dir("fake", test::get(c.t, "b.images"), test::get(c.t, "b.labels"));
  const double want_fid = test::get(c.t, "fid").item<double>();
  const double want_acc = test::get(c.t, "b.class_acc").item<double>();
  std::string out = fid_cli({"--real", real, "--fake", fake, "--features", clf, "--threads", "1"});
  EXPECT_NEAR(number_after(out, "fid "), want_fid, 1e-3 * want_fid) << out;
  EXPECT_NEAR(number_after(out, "class_acc "), want_acc, 5e-5) << out;  // printed to 4 decimals

  const std::string npz = fresh("real_stats") + ".npz";
  test::run_cli(cli::fid, "fid", {"stats", "--images", real, "--out", npz, "--features", clf, "--threads", "1"});
  const metrics::GaussianStats s = metrics::load_stats(npz);
  EXPECT_EQ(s.net, metrics::ClassifierExtractor(clf, torch::kCPU).identity());
  EXPECT_EQ(s.net.rfind("classifier-8d-", 0), 0u) << s.net;
  EXPECT_TRUE(test::close(s.mu, test::get(c.t, "a.mu"), 1e-4, 1e-5));
  out = fid_cli({"--real", npz, "--fake", fake, "--features", clf, "--threads", "1"});
  EXPECT_NEAR(number_after(out, "fid "), want_fid, 1e-3 * want_fid) << out;
  // A flat fake directory has no classes: said, not guessed.
  out = fid_cli({"--real", npz, "--fake", real, "--features", clf, "--threads", "1"});
  EXPECT_NE(out.find("class_acc: none"), std::string::npos) << out;
}

// Statistics of one network are never compared with features of another.
TEST(ClassifierStats, OtherNetworksStatisticsAreRefused) {
  const std::string clf = oracle_classifier("gray32");
  const OracleCase c = oracle_case("gray32");
  const std::string real = png_dir("real2", test::get(c.t, "a.images"), {});
  const std::string npz = fresh("tiny_stats") + ".npz";
  test::run_cli(cli::fid, "fid", {"stats", "--images", real, "--out", npz, "--features", tiny_classifier(), "--threads", "1"});
  std::string e = test::error_of([&] { fid_cli({"--real", npz, "--fake", real, "--features", clf, "--threads", "1"}); });
  EXPECT_NE(e.find(npz), std::string::npos) << e;
  EXPECT_NE(e.find("cannot be compared"), std::string::npos) << e;
  // pytorch-fid statistics (no feature_net) are Inception's when they are 2048-d; of another
  // width they are an unnamed network's, and called so (not "Inception-v3 pool3 (2048-d)").
  const std::string incep = fresh("inception_stats") + ".npz";
  metrics::save_stats(incep, {torch::zeros({2048}, torch::kDouble), torch::eye(2048, torch::kDouble), 0, "", ""});
  EXPECT_TRUE(metrics::load_stats(incep).net.empty());
  e = test::error_of([&] { fid_cli({"--real", incep, "--fake", real, "--features", clf, "--threads", "1"}); });
  EXPECT_NE(e.find("Inception-v3"), std::string::npos) << e;
  const std::string narrow = fresh("unnamed_stats") + ".npz";
  metrics::save_stats(narrow, {torch::zeros({8}, torch::kDouble), torch::eye(8, torch::kDouble), 0, "", ""});
  e = test::error_of([&] { fid_cli({"--real", narrow, "--fake", real, "--features", clf, "--threads", "1"}); });
  EXPECT_NE(e.find("an unnamed network (8-d"), std::string::npos) << e;
  EXPECT_EQ(e.find("Inception-v3"), std::string::npos) << e;
}

// Training on a tiny separable set: the loss falls, held-out accuracy >= 0.95, and the seed
// alone decides the weights.
TEST(ClassifierTrain, FitsATinySeparableSetDeterministically) {
  ClassifierTrainResult a = train_tiny(3);
  ASSERT_EQ(a.epoch_loss.size(), 10u);
  EXPECT_LT(a.epoch_loss.back(), 0.5 * a.epoch_loss.front());
  EXPECT_GE(a.test_accuracy, 0.95);
  EXPECT_EQ(a.n_test, 60);
  EXPECT_EQ(a.n_train, 240);
  EXPECT_EQ(a.test_split, "held-out split");
  ClassifierTrainResult b = train_tiny(3), other = train_tiny(4);
  const TensorMap wa = state_dict(*a.net), wb = state_dict(*b.net), wo = state_dict(*other.net);
  bool all_equal = true, any_differs = false;
  for (const auto& [k, t] : wa) {
    all_equal = all_equal && torch::equal(t, wb.at(k));
    any_differs = any_differs || !torch::equal(t, wo.at(k));
  }
  EXPECT_TRUE(all_equal) << "same seed, different weights";
  EXPECT_TRUE(any_differs) << "another seed gave the same weights";
  // The source's own test split, when given, is what the accuracy is measured on.
  std::ostringstream log;
  const auto t = train_classifier(std::make_shared<Bands>(90, 5), std::make_shared<Bands>(33, 9), tiny_options(0), log);
  EXPECT_EQ(t.n_test, 33);
  EXPECT_EQ(t.n_train, 90);
  EXPECT_EQ(t.test_split, "test split");
}

// A hand-made ImageFolder (numbered class directories as `hamgan sample` writes them), some
// images deliberately in the wrong class: class accuracy counts exactly the right ones.
TEST(ClassAccuracy, HandMadeImageFolder) {
  const metrics::ClassifierExtractor net(tiny_classifier(), torch::kCPU);
  const Bands clean(30, 77);  // fresh images the classifier gets all right (checked below)
  const torch::Tensor u8 = clean.images();
  const metrics::FeatureOutput o = net.features(net.prepare(u8.to(torch::kFloat).div(255)), true);
  const torch::Tensor truth = torch::arange(30) % 3;
  ASSERT_TRUE(torch::equal(o.logits.argmax(1), truth)) << "the tiny classifier should be perfect on clean bands";
  torch::Tensor folder = truth.clone();
  for (int64_t i : {0, 4, 8, 13, 20}) folder[i] = (folder[i] + 1) % 3;  // 5 of 30 misfiled
  const std::string dir = png_dir("handmade", u8, folder);
  const std::string out = fid_cli({"--real", dir, "--fake", dir, "--features", tiny_classifier(), "--threads", "1"});
  EXPECT_NEAR(number_after(out, "class_acc "), 25.0 / 30.0, 1e-4) << out;
  EXPECT_NEAR(number_after(out, "fid "), 0.0, 1e-6) << out;
  // Per class: class 0 holds images 0..27 step 3 (10) plus misfiled 8 (class 2 -> 0) and 20 (2 -> 0) ...
  const auto files = list_images(dir);
  const torch::Tensor labels = folder_labels(dir, files);
  ASSERT_TRUE(labels.defined());
  const torch::Tensor logits = net.features(net.prepare(u8.to(torch::kFloat).div(255)), true).logits;
  // list_images sorts by path: class directory first, then file index.
  torch::Tensor file_index = torch::empty({30}, torch::kLong);
  for (int64_t i = 0; i < 30; ++i) file_index[i] = static_cast<int64_t>(std::stoll(fs::path(files[i]).stem().string()));
  const auto acc = metrics::class_accuracy(logits.index_select(0, file_index), labels, dir);
  for (int64_t c = 0; c < 3; ++c) {
    const torch::Tensor in_c = folder.eq(c);
    const double right = (in_c & truth.eq(c)).sum().item<double>();
    EXPECT_DOUBLE_EQ(acc.per_class[c], right / in_c.sum().item<double>()) << "class " << c;
    EXPECT_EQ(acc.count[c], in_c.sum().item<int64_t>());
  }
  EXPECT_NEAR(acc.overall, 25.0 / 30.0, 1e-12);
}

TEST(ClassAccuracy, ByHandAndErrors) {
  const torch::Tensor logits = torch::tensor({{3.0, 1.0, 0.0}, {0.0, 2.0, 1.0}, {0.0, 0.0, 5.0}, {9.0, 0.0, 0.0}});
  const auto a = metrics::class_accuracy(logits, torch::tensor({0, 1, 1, 0}, torch::kLong), "x");
  EXPECT_DOUBLE_EQ(a.overall, 0.75);
  EXPECT_DOUBLE_EQ(a.per_class[0], 1.0);
  EXPECT_DOUBLE_EQ(a.per_class[1], 0.5);
  EXPECT_TRUE(std::isnan(a.per_class[2]));
  EXPECT_EQ(a.count, (std::vector<int64_t>{2, 2, 0}));
  EXPECT_EQ(metrics::format_class_accuracy(a), "0.7500 (per class: 0 1.000, 1 0.500)");
  const std::string e = test::error_of([&] { metrics::class_accuracy(logits, torch::tensor({0, 1, 3, 0}, torch::kLong), "fakes/"); });
  EXPECT_NE(e.find("fakes/: class 3"), std::string::npos) << e;
  EXPECT_NE(e.find("0..2"), std::string::npos) << e;
}

TEST(ClassAccuracy, FolderLabels) {
  const std::string dir = fresh("labels");
  const torch::Tensor px = torch::zeros({4, 4, 1}, torch::kUInt8);
  for (const char* f : {"cat/a.png", "dog/b.png", "dog/c.png", "emu/d.png"}) {
    fs::create_directories(fs::path(dir + "/" + f).parent_path());
    write_png(dir + "/" + f, px);
  }
  fs::create_directories(dir + "/bird");  // torchvision counts empty class directories too
  EXPECT_TRUE(torch::equal(folder_labels(dir, list_images(dir)), torch::tensor({1, 2, 2, 3}, torch::kLong)));
  const std::string num = fresh("numbered");
  for (const char* f : {"003/a.png", "007/b.png"}) {
    fs::create_directories(fs::path(num + "/" + f).parent_path());
    write_png(num + "/" + f, px);
  }
  EXPECT_TRUE(torch::equal(folder_labels(num, list_images(num)), torch::tensor({3, 7}, torch::kLong)));
  write_png(num + "/loose.png", px);
  EXPECT_FALSE(folder_labels(num, list_images(num)).defined()) << "a file directly in DIR: flat";
}

TEST(ClassifierFile, RoundTripAndValidation) {
  ClassifierTrainResult r = train_tiny(0);
  metrics::ClassifierInfo info;
  info.class_names = {"top", "bottom", "gray"};
  info.data = "bands";
  info.test_accuracy = 0.875;
  const std::string p = fresh("roundtrip") + ".pt";
  metrics::save_classifier(p, r.net, info);
  EXPECT_FALSE(fs::exists(p + ".tmp"));
  metrics::ClassifierInfo back;
  metrics::DomainClassifier net = metrics::load_classifier(p, &back);
  EXPECT_EQ(back.class_names, info.class_names);
  EXPECT_EQ(back.data, "bands");
  EXPECT_DOUBLE_EQ(back.test_accuracy, 0.875);
  EXPECT_EQ(back.options.resolution, 16);
  EXPECT_EQ(back.options.channels, 1);
  EXPECT_EQ(back.options.n_classes, 3);
  EXPECT_EQ(back.options.width, 4);
  EXPECT_EQ(back.options.feature_dim, 8);
  EXPECT_EQ(metrics::classifier_identity(net), metrics::classifier_identity(r.net));
  metrics::DomainClassifier other = train_tiny(1).net;
  EXPECT_NE(metrics::classifier_identity(net), metrics::classifier_identity(other));

  const std::string dir = fresh("bad");
  fs::create_directories(dir);
  const auto error_for = [&](const std::string& path) { return test::error_of([&] { metrics::load_classifier(path); }); };
  std::string e = error_for(dir + "/missing.pt");
  EXPECT_NE(e.find("missing.pt: cannot open"), std::string::npos) << e;
  std::ofstream(dir + "/garbage.pt") << "not a zip file at all";
  e = error_for(dir + "/garbage.pt");
  EXPECT_NE(e.find("garbage.pt: not a classifier file"), std::string::npos) << e;
  e = error_for(test::oracle_path("gray32.pt"));  // a torch.save dict, but not a classifier
  EXPECT_NE(e.find("gray32.pt: no entry 'format'"), std::string::npos) << e;
  // Edit one entry of a valid file at a time.
  const auto edited = [&](const std::string& name, const std::function<void(c10::impl::GenericDict&)>& edit) {
    std::ifstream in(p, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    c10::impl::GenericDict d = torch::pickle_load(bytes).toGenericDict();
    edit(d);
    const std::vector<char> out = torch::pickle_save(d);
    const std::string path = dir + "/" + name + ".pt";
    std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
    return path;
  };
  e = error_for(edited("version", [](auto& d) { d.insert_or_assign("version", int64_t{99}); }));
  EXPECT_NE(e.find("version.pt: classifier format version 99"), std::string::npos) << e;
  e = error_for(edited("channels", [](auto& d) { d.insert_or_assign("channels", int64_t{2}); }));
  EXPECT_NE(e.find("channels.pt: channels 2; expected 1 or 3"), std::string::npos) << e;
  e = error_for(edited("width", [](auto& d) { d.insert_or_assign("width", int64_t{5}); }));
  EXPECT_NE(e.find("width.pt"), std::string::npos) << e;  // weights of width 4 do not fit
  EXPECT_NE(e.find("shape"), std::string::npos) << e;
  e = error_for(edited("names", [](auto& d) {
    c10::List<std::string> two({"a", "b"});
    d.insert_or_assign("class_names", two);
  }));
  EXPECT_NE(e.find("names.pt: 2 class names for 3 classes"), std::string::npos) << e;
}

// fid --run --features: scores.csv gets class_acc and the network's identity, scores.png a panel
// per metric with a value (fid, kid, class_acc);
// another network's scores are refused rather than mixed into the table.
TEST(DomainFidRun, ClassAccuracyColumnAndNoMixing) {
  const std::string run = fresh("run");
  const std::string yaml = test::tiny_checkpoint_yaml();  // 32x32, 1 channel, 3 classes
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, yaml);
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 20), 20, true, 2, yaml);
  const OracleCase c = oracle_case("gray32");
  const std::string clf = oracle_classifier("gray32");
  const std::string real = png_dir("run_real", test::get(c.t, "a.images"), {});
  std::string out = fid_cli({"--real", real, "--run", run, "-n", "6", "--features", clf, "--threads", "1"});
  EXPECT_NE(out.find("scored 2 checkpoints"), std::string::npos) << out;
  const auto rows = eval::read_run_scores(run);
  ASSERT_EQ(rows.size(), 2u);
  const std::string id = metrics::ClassifierExtractor(clf, torch::kCPU).identity();
  for (const auto& r : rows) {
    EXPECT_TRUE(std::isfinite(r.value("fid")) && r.value("fid") > 0);
    EXPECT_TRUE(r.value("class_acc") >= 0 && r.value("class_acc") <= 1) << r.value("class_acc");
    EXPECT_TRUE(std::isnan(r.value("is"))) << "no Inception Score from a domain classifier";
    EXPECT_EQ(r.net, id);
  }
  EXPECT_EQ(to_tensor(decode_image(eval::scores_png(run))).sizes(), (std::vector<int64_t>{3, 3 * 400, 640}))
      << "fid, kid and class_acc panels";
  // --checkpoint prints the same class accuracy as the run's row.
  out = fid_cli({"--real", real, "--checkpoint", checkpoint_path(run + "/checkpoints", 20), "-n", "6", "--features", clf, "--threads", "1"});
  EXPECT_NEAR(number_after(out, "class_acc "), rows[1].value("class_acc"), 1e-4) << out;
  EXPECT_NEAR(number_after(out, "fid "), rows[1].value("fid"), 1e-4 * rows[1].value("fid")) << out;
  // Another classifier (same classes and size, other weights) must not add rows to this table.
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 30), 30, true, 3, yaml);
  const OracleCase c2 = oracle_case("gray32");
  metrics::DomainClassifier other(c2.o);
  load_state_dict(*other, test::with_prefix(c2.t, "weights"), "other");
  {
    torch::NoGradGuard g;
    other->parameters()[0].mul_(1.5);
  }
  const std::string clf2 = fresh("other") + ".pt";
  metrics::save_classifier(clf2, other, {});
  const std::string e = test::error_of([&] { fid_cli({"--real", real, "--run", run, "-n", "6", "--features", clf2, "--threads", "1"}); });
  EXPECT_NE(e.find("do not mix"), std::string::npos) << e;
  EXPECT_EQ(eval::read_run_scores(run).size(), 2u);
}

// scores.csv: the class_acc and features columns round-trip; a table of a subset of the
// columns reads by its header.
TEST(ClassifierScoreTable, ClassAccuracyColumnAndColumnSubsets) {
  const std::string dir = fresh("csv");
  fs::create_directories(dir);
  eval::ScoreRow r{100, 10, 1.5, "classifier-128d-00112233aabbccdd", {{"fid", 12.5}, {"kid", 0.25}, {"class_acc", 0.8125}}};
  eval::append_run_score(dir, r);
  std::stringstream ss;
  ss << std::ifstream(eval::scores_csv(dir)).rdbuf();
  EXPECT_EQ(ss.str(), "iteration,n,seconds,features,fid,is,kid,class_acc,precision,recall,density,coverage,ifid\n"
                      "100,10,1.5,classifier-128d-00112233aabbccdd,12.5,,0.25,0.8125,,,,,\n");
  auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].value("class_acc"), 0.8125);
  EXPECT_EQ(rows[0].net, r.net);
  EXPECT_TRUE(std::isnan(rows[0].value("is")));

  // A table of a subset of the columns (hand-made, or another tool's) reads by its header, and
  // the first row appended rewrites it in the full header; the metric columns round-trip.
  const std::string v2 = fresh("csv_v2");
  fs::create_directories(v2);
  std::ofstream(eval::scores_csv(v2)) << "iteration,fid,n,seconds,class_acc,features\n100,12.5,10,1.5,0.75,inception\n";
  eval::append_run_score(v2, {200, 10, 1.0, "", {{"fid", 10.0}, {"class_acc", 0.5}, {"precision", 0.75}, {"recall", 0.5},
                                                 {"density", 1.25}, {"coverage", 0.625}, {"ifid", 30.5}}});
  std::stringstream s3;
  s3 << std::ifstream(eval::scores_csv(v2)).rdbuf();
  EXPECT_EQ(s3.str(), "iteration,n,seconds,features,fid,is,kid,class_acc,precision,recall,density,coverage,ifid\n"
                      "100,10,1.5,inception,12.5,,,0.75,,,,,\n200,10,1,inception,10,,,0.5,0.75,0.5,1.25,0.625,30.5\n");
  const auto back = eval::read_run_scores(v2);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(std::isnan(back[0].value("precision")));
  EXPECT_DOUBLE_EQ(back[1].value("precision"), 0.75);
  EXPECT_DOUBLE_EQ(back[1].value("recall"), 0.5);
  EXPECT_DOUBLE_EQ(back[1].value("density"), 1.25);
  EXPECT_DOUBLE_EQ(back[1].value("coverage"), 0.625);
  EXPECT_DOUBLE_EQ(back[1].value("ifid"), 30.5);
  std::ofstream(dir + "/noname.csv") << "iteration,fid,is,kid,n,seconds,class_acc,features\n1,2,,,3,4,0.5,\n";
  const std::string e = test::error_of([&] { eval::read_score_table(dir + "/noname.csv"); });
  EXPECT_NE(e.find("noname.csv:2: column 'features'"), std::string::npos) << e;
}

// `hamgan classifier train` on an ImageFolder (no test split: 10% held out), then refusing to
// overwrite its output.
TEST(ClassifierCli, TrainsOnAFolderAndKeepsExistingOutput) {
  const Bands bands(150, 11);
  const torch::Tensor y = torch::arange(150) % 3;
  const std::string data = png_dir("cli_data", bands.images(), y);
  const std::string out_dir = fresh("cli_clf");
  fs::create_directories(out_dir);
  const std::string out = out_dir + "/clf.pt";
  const std::vector<std::string> args = {"train", "--data", data, "--out", out, "--resolution", "16", "--channels", "1",
                                         "--epochs", "6", "--batch", "15", "--lr", "0.005", "--width", "4",
                                         "--feature-dim", "8", "--threads", "1"};
  const std::string printed = test::run_cli(cli::classifier, "classifier", args);
  EXPECT_NE(printed.find("on the held-out split (15 images; trained on 135)"), std::string::npos) << printed;
  EXPECT_GE(number_after(printed, "test accuracy "), 0.9) << printed;
  metrics::ClassifierInfo info;
  metrics::load_classifier(out, &info);
  EXPECT_EQ(info.class_names, (std::vector<std::string>{"000", "001", "002"}));
  EXPECT_EQ(info.options.resolution, 16);
  EXPECT_EQ(info.data, data);
  const auto before = fs::last_write_time(out);
  const std::string e = test::error_of([&] { test::run_cli(cli::classifier, "classifier", args); });
  EXPECT_NE(e.find(out + ": exists"), std::string::npos) << e;
  EXPECT_EQ(fs::last_write_time(out), before);
  // --overwrite replaces an earlier classifier, through a temporary that does not stay.
  std::vector<std::string> again = args;
  again.push_back("--overwrite");
  test::run_cli(cli::classifier, "classifier", again);
  metrics::load_classifier(out);
  EXPECT_EQ(std::distance(fs::directory_iterator(out_dir), fs::directory_iterator()), 1);
}

// `classifier train --out RUN/checkpoints/ckpt_X.pt --overwrite` replaced the GAN checkpoint, and
// `--out DIR --overwrite` failed after training and left DIR.tmp. --overwrite replaces only a
// classifier: anything else is refused before any training (the data named here does not
// exist), naming the file and what it is, and stays as it was.
TEST(ClassifierCli, OverwriteReplacesOnlyAClassifier) {
  const std::string dir = fresh("clf_overwrite");
  fs::create_directories(dir + "/run/checkpoints");
  const std::string ckpt = dir + "/run/checkpoints/ckpt_000000010.pt";
  test::write_tiny_checkpoint(ckpt, 10, true, 1, test::tiny_checkpoint_yaml());
  const std::string ckpt_bytes = test::read_text(ckpt);
  const std::string folder = dir + "/folder";
  fs::create_directories(folder);
  const auto train_error = [&](const std::string& out) {
    return test::error_of([&] {
      test::run_cli(cli::classifier, "classifier",
                    {"train", "--data", dir + "/no_such_data", "--out", out, "--overwrite", "--steps", "1",
                     "--threads", "1"});
    });
  };
  test::expect_names(train_error(ckpt), {"--out " + ckpt + " exists and is not a classifier file",
                                         "as in a checkpoint", "nothing was written"});
  EXPECT_EQ(test::read_text(ckpt), ckpt_bytes);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "/run/checkpoints"), fs::directory_iterator()), 1);
  test::expect_names(train_error(folder), {"--out " + folder + " exists and is not a classifier file",
                                           "(it is a directory)"});
  EXPECT_TRUE(fs::is_empty(folder));
  EXPECT_FALSE(fs::exists(folder + ".tmp"));
  test::expect_names(train_error(dir + "/missing/clf.pt"), {"its folder " + dir + "/missing does not exist"});
  // A classifier file is recognised by its content (the pickle in torch::pickle_save's archive),
  // not its name: both archives start with a tensor's data.
  EXPECT_EQ(test::error_of([&] { io::check_output_path(tiny_classifier(), metrics::classifier_output()); }),
            "(no error)");
  EXPECT_TRUE(metrics::classifier_output().recognises_file(tiny_classifier()));
  EXPECT_FALSE(metrics::classifier_output().recognises_file(ckpt));
}

// `-n` over an ImageNet-style folder (synset-named class directories, files sorted
// class by class) draws from every class, for `--images` and `--data` alike, and `fid stats`
// stores which images it used; the first n by path held 2 of the 10 classes.
TEST(ReferenceSubset, DashNOverATenClassFolderDrawsFromEveryClass) {
  const Bands bands(60, 3);
  const torch::Tensor u8 = bands.images();
  const std::string dir = fresh("synsets");
  for (int64_t i = 0; i < 60; ++i) {
    const fs::path d = fs::path(dir) / ("n0144" + std::to_string(1000 + i / 6));  // 10 classes, 6 images each
    fs::create_directories(d);
    write_png((d / (std::to_string(1000 + i) + ".png")).string(), u8[i].permute({1, 2, 0}).contiguous());
  }
  std::string described;
  const auto files = eval::chosen_images(dir, 20, /*at_most=*/false, /*seed=*/0, &described);
  ASSERT_EQ(files.size(), 20u);
  std::map<std::string, int> per_class;
  for (const auto& f : files) ++per_class[fs::path(f).parent_path().filename().string()];
  EXPECT_EQ(per_class.size(), 10u) << described;
  for (const auto& kv : per_class) EXPECT_EQ(kv.second, 2) << kv.first;
  EXPECT_NE(described.find("class-balanced (2 per class, 10 classes)"), std::string::npos) << described;
  EXPECT_EQ(eval::chosen_images(dir, 20, false, 0), files) << "the same seed draws the same subset";
  EXPECT_NE(eval::chosen_images(dir, 20, false, 1), files) << "another seed draws another";

  // The folder as a data source: the labels of the images whose features come back.
  const metrics::ClassifierExtractor net(tiny_classifier(), torch::kCPU);
  eval::ReferenceOptions o;
  o.format = DataFormat::Folder;
  o.n = 20;
  o.resolution = net.info().options.resolution, o.channels = net.info().options.channels;
  const metrics::Features f = eval::data_features(dir, o, net, false, &described);
  ASSERT_EQ(f.pool.size(0), 20);
  EXPECT_TRUE(torch::equal(torch::bincount(f.labels, {}, 10), torch::full({10}, 2, torch::kLong))) << f.labels;
  EXPECT_NE(described.find("class-balanced (2 per class, 10 classes)"), std::string::npos) << described;

  // fid stats stores the choice with the statistics.
  const std::string npz = fresh("synsets_stats") + ".npz";
  test::run_cli(cli::fid, "fid", {"stats", "--images", dir, "-n", "20", "--out", npz, "--features", tiny_classifier(),
                                  "--threads", "1"});
  EXPECT_NE(metrics::load_stats(npz).images.find("class-balanced (2 per class, 10 classes)"), std::string::npos);
}

// `classifier train -c CONFIG` of a 128 px RGB GAN trains the classifier at 128x128x3,
// the size the GAN's samples have (not the 32 px default), and scoring images of another size
// with it says so.
TEST(ClassifierCli, ConfigOfA128PxGanSetsTheClassifiersResolution) {
  const torch::Tensor small = Bands(12, 5).images();  // 1 x 16 x 16
  const torch::Tensor u8 = torch::nn::functional::interpolate(
                               small.to(torch::kFloat), torch::nn::functional::InterpolateFuncOptions()
                                                            .size(std::vector<int64_t>{128, 128})
                                                            .mode(torch::kNearest))
                               .expand({-1, 3, -1, -1})
                               .to(torch::kUInt8);
  const std::string data = png_dir("cli_data128", u8, torch::arange(12) % 3);
  const std::string dir = fresh("cli_cfg128");
  fs::create_directories(dir);
  const std::string cfg = dir + "/gan.yaml";
  std::ofstream(cfg) << "base: " << std::getenv("HAMGAN_SOURCE_DIR") << "/configs/imagenet128_hamgan.yaml\n"
                     << "model: {n_classes: 3}\ndata: {format: folder, path: " << data << "}\n";
  const std::string out = dir + "/clf.pt";
  const std::string printed = test::run_cli(
      cli::classifier, "classifier",
      {"train", "-c", cfg, "--out", out, "--epochs", "1", "--batch", "6", "--width", "4", "--feature-dim", "8",
       "--threads", "1"});
  metrics::ClassifierInfo info;
  metrics::load_classifier(out, &info);
  EXPECT_EQ(info.options.resolution, 128) << printed;
  EXPECT_EQ(info.options.channels, 3);
  EXPECT_EQ(info.options.n_classes, 3);
  // 32 px images through it: resized, with one warning.
  const metrics::ClassifierExtractor net(out, torch::kCPU);
  testing::internal::CaptureStderr();
  (void)net.prepare(torch::rand({2, 3, 32, 32}));
  (void)net.prepare(torch::rand({2, 3, 32, 32}));
  const std::string warned = testing::internal::GetCapturedStderr();
  EXPECT_NE(warned.find("sees 128x128 images; these are 32x32"), std::string::npos) << warned;
  EXPECT_EQ(warned.find("warning", warned.find("warning") + 1), std::string::npos) << "warned twice: " << warned;
}

// Every metric of `--metrics` on a checkpoint, printed; `--run` writes them as
// scores.csv columns and scores.png gets their panels. The real side is a class folder (its classes
// for intra-class FID); --real as an .npz says what it cannot compute.
TEST(EvaluationSuite, EveryMetricOnACheckpointAndAsRunColumns) {
  const std::string run = fresh("suite_run");
  const std::string yaml = test::tiny_checkpoint_yaml();  // 32x32, 1 channel, 3 classes
  test::write_tiny_checkpoint(checkpoint_path(run + "/checkpoints", 10), 10, true, 1, yaml);
  const Bands bands(60, 21);
  const std::string real = png_dir("suite_real", bands.images(), torch::arange(60) % 3);
  const std::string clf = tiny_classifier();
  const std::string ck = checkpoint_path(run + "/checkpoints", 10);
  std::string out = fid_cli({"--real", real, "--checkpoint", ck, "-n", "30", "--metrics", "fid,kid,precision,recall,density,coverage,ifid",
                             "--features", clf, "--threads", "1"});
  for (const std::string key : {"fid ", "kid ", "precision ", "recall ", "density ", "coverage ", "ifid ",
                                "class_acc "}) {
    const double v = number_after(out, key);
    EXPECT_TRUE(std::isfinite(v)) << key << " in " << out;
  }
  EXPECT_GE(number_after(out, "precision "), 0.0);
  EXPECT_LE(number_after(out, "precision "), 1.0);
  out = fid_cli({"--real", real, "--run", run, "-n", "30", "--all", "--features", clf, "--threads", "1"});
  const auto rows = eval::read_run_scores(run);
  ASSERT_EQ(rows.size(), 1u);
  for (const char* m : {"precision", "recall", "density", "coverage", "ifid", "kid"})
    EXPECT_TRUE(std::isfinite(rows[0].value(m))) << m << " " << out;
  EXPECT_EQ(to_tensor(decode_image(eval::scores_png(run))).sizes(), (std::vector<int64_t>{3, 8 * 400, 640}))
      << "a panel each: fid, kid, class_acc, precision, recall, density, coverage, ifid";
  // Statistics alone cannot give the metrics that compare feature sets: asking for them is an
  // error before any work, naming the flag and the file, never a run that skips them.
  const std::string npz = fresh("suite_ref") + ".npz";
  test::run_cli(cli::fid, "fid", {"stats", "--images", real, "--out", npz, "--features", clf, "--threads", "1"});
  const std::string stats_only = test::error_of([&] {
    fid_cli({"--real", npz, "--checkpoint", ck, "-n", "30", "--metrics", "fid,precision,recall", "--features", clf, "--threads", "1"});
  });
  EXPECT_NE(stats_only.find("--metrics"), std::string::npos) << stats_only;
  EXPECT_NE(stats_only.find(npz), std::string::npos) << stats_only;
  EXPECT_NE(stats_only.find("holds only statistics"), std::string::npos) << stats_only;
  const std::string e = test::error_of([&] { fid_cli({"--real", real, "--checkpoint", ck, "--metrics", "fid,prc"}); });
  EXPECT_NE(e.find("unknown metric 'prc'"), std::string::npos) << e;
}

// eval.every scores the run while it trains, into scores.csv (the rows `fid --run`
// would write), and keeps the best checkpoint by eval.best_metric as best_ckpt_<it>.pt, which
// pruning (keep_checkpoints 1) leaves alone.
TEST(EvaluationSuite, ScoringWhileTrainingKeepsTheBestCheckpoint) {
  const std::string real = png_dir("train_eval_real", Bands(30, 4).images(), torch::arange(30) % 3);
  const Config cfg = test::tiny(
      "train.iterations=6 train.checkpoint_every=100 train.sample_every=0 train.keep_checkpoints=1 "
      "eval.every=2 eval.n=12 eval.features=" + tiny_classifier() + " eval.real=" + real +
      " eval.metrics=fid,precision,recall eval.best_metric=fid eval.keep_best=1");
  const std::string dir = test::fresh_dir("train_eval");
  std::ostringstream log;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &log;
  opt.eval = eval::make_train_scorer(cfg, dir);
  EXPECT_EQ(train(cfg, opt, test::synthetic(cfg)).iteration, 6);
  const auto rows = eval::read_run_scores(dir);
  ASSERT_EQ(rows.size(), 3u) << log.str();
  int64_t best = -1;
  double best_fid = INFINITY;
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].iteration, 2 * static_cast<int64_t>(i + 1));
    EXPECT_TRUE(std::isfinite(rows[i].value("precision"))) << log.str();
    if (rows[i].value("fid") < best_fid) best_fid = rows[i].value("fid"), best = rows[i].iteration;
  }
  EXPECT_NE(log.str().find("eval iteration 2: fid "), std::string::npos) << log.str();
  std::vector<std::string> files;
  for (const auto& f : fs::directory_iterator(dir + "/checkpoints")) files.push_back(f.path().filename().string());
  std::sort(files.begin(), files.end());
  char name[64];
  std::snprintf(name, sizeof name, "best_ckpt_%09lld.pt", static_cast<long long>(best));
  EXPECT_EQ(files, (std::vector<std::string>{name, "ckpt_000000006.pt"}));
  EXPECT_EQ(load_checkpoint(eval::best_checkpoint_path(dir, best)).iteration, best);
  // A best_metric the scores do not compute is an error before training starts.
  const Config bad = test::tiny("eval.every=2 eval.real=" + real + " eval.features=" +
                                tiny_classifier() + " eval.best_metric=recall");
  const std::string e = test::error_of([&] { eval::make_train_scorer(bad, test::fresh_dir("train_eval_bad")); });
  EXPECT_NE(e.find("eval.best_metric recall: not computed"), std::string::npos) << e;
}

// The classification accuracy score on a tiny deterministic case. The "real" test
// images are the same checkpoint's samples under other latents, so a classifier trained on its
// samples must find the classes there (far above chance, 1/3) if the classes shape the samples
// at all; the score repeats exactly for a seed; classes that do not match are an error.
TEST(EvaluationSuite, ClassificationAccuracyScoreIsDeterministicAndFindsTheClasses) {
  const std::string yaml = test::tiny_checkpoint_yaml();  // 32x32, 1 channel, 3 classes
  const std::string ck = fresh("cas_ck") + ".pt";
  test::write_tiny_checkpoint(ck, 10, true, 5, yaml);
  const CheckpointData c = load_checkpoint(ck);
  sample::SamplerOptions so;
  const sample::Sampler s(c, so, std::cerr);
  so.seed = 99;
  const sample::Sampler other(c, so, std::cerr);
  const auto items = sample::make_plan({0, 1, 2}, 90, 0);
  std::vector<int64_t> y;
  for (const auto& it : items) y.push_back(it.cls);
  auto real = std::make_shared<TensorDataset>(sample::to_uint8(other.generate(items)), torch::tensor(y, torch::kLong));
  ClassifierTrainOptions opt;
  opt.epochs = 4, opt.batch = 30, opt.width = 4, opt.feature_dim = 8, opt.workers = 1;
  std::ostringstream log;
  const eval::CasResult a = eval::classification_accuracy_score(s, 180, real, opt, log);
  const eval::CasResult b = eval::classification_accuracy_score(s, 180, real, opt, log);
  EXPECT_EQ(a.n_train, 180);
  EXPECT_EQ(a.n_test, 90);
  EXPECT_EQ(a.accuracy, b.accuracy) << "the same seed trains the same classifier";
  EXPECT_GT(a.accuracy, 0.6) << log.str();
  auto two = std::make_shared<TensorDataset>(torch::zeros({4, 1, 32, 32}, torch::kUInt8), torch::tensor({0, 1, 0, 1}));
  const std::string e = test::error_of([&] { eval::classification_accuracy_score(s, 30, two, opt, log); });
  EXPECT_NE(e.find("2 classes, the model 3"), std::string::npos) << e;
}

}  // namespace test_classifier
