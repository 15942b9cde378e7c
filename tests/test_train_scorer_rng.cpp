// Scoring while training must not move training: a score draws from the default generators
// (the generator it builds to load the checkpoint initialises its weights from them), and a
// Hamburger G draws its random initial bases from them every forward. A run with
// eval.every must therefore train exactly as one without, and a score must leave the
// generators' state as it found them, on the CPU and on the scoring GPU.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <sstream>

#include "gan/eval/score_table.h"
#include "gan/eval/train_scorer.h"
#include "gan/train/train_hooks.h"
#include "io/png.h"
#include "metrics/classifier.h"
#include "support/cli.h"
#include "support/random_classifier.h"
#include "support/tiny_run.h"

namespace test_train_scorer_rng {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_train_scorer_rng", name); }

// A 3-class gray 32 px classifier (random weights) whose file records a held-out accuracy
// clearly above chance, so it is used without a word.
std::string classifier_file() {
  static const std::string path = test::write_random_classifier(fresh("clf") + ".pt", 3);
  return path;
}

// Three class directories of two gray noise images each, the tiny GAN's kind of image.
std::string real_folder() {
  static const std::string dir = [] {
    const std::string d = fresh("real");
    auto gen = at::detail::createCPUGenerator(17);
    for (int c = 0; c < 3; ++c) {
      fs::create_directories(d + "/00" + std::to_string(c));
      for (int k = 0; k < 2; ++k)
        write_png(d + "/00" + std::to_string(c) + "/" + std::to_string(k) + ".png",
                  torch::randint(0, 256, {32, 32, 1}, gen, torch::kLong).to(torch::kUInt8));
    }
    return d;
  }();
  return dir;
}

// The tiny run with a Hamburger (NMF, random initial bases each forward) as G's context module.
Config ham_config(const std::string& device, bool eval) {
  return test::tiny("generator.context.type=ham_nmf train.iterations=4 train.checkpoint_every=2 "
                    "train.sample_every=0 train.device=" + device + " eval.n=6 eval.features=" +
                    classifier_file() + " eval.real=" + real_folder() + (eval ? " eval.every=2" : ""));
}

struct Trained {
  std::vector<IterStats> history;
  test::Loaded last;
  int scores = 0;
};

// Trains `cfg` into a fresh directory; with `scorer`, every score is checked to leave the CPU
// generator (and `cuda`'s, when given) exactly as it found it.
Trained train_run(const Config& cfg, const std::string& name, bool scorer, std::optional<torch::Device> cuda = {}) {
  const std::string dir = fresh(name);
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  Trained r;
  if (scorer) {
    const EvalHook hook = eval::make_train_scorer(cfg, dir);
    opt.eval = [&r, hook, cuda](int64_t it, const std::string& ck, const PhaseProgress::Say& say, TensorBoardLog* view,
                                     const EvalRanks& ranks) {
      const torch::Tensor cpu = at::detail::getDefaultCPUGenerator().get_state();
      torch::Tensor gpu;
      if (cuda) gpu = at::globalContext().defaultGenerator(*cuda).get_state();
      hook(it, ck, say, view, ranks);
      ++r.scores;
      EXPECT_TRUE(torch::equal(cpu, at::detail::getDefaultCPUGenerator().get_state()))
          << "the score at iteration " << it << " moved the CPU generator";
      if (cuda) {
        EXPECT_TRUE(torch::equal(gpu, at::globalContext().defaultGenerator(*cuda).get_state()))
            << "the score at iteration " << it << " moved the GPU generator";
      }
    };
  }
  TrainHooks hooks;
  hooks.history = &r.history;
  EXPECT_EQ(train(cfg, opt, test::synthetic(cfg), hooks).iteration, 4) << sink.str();
  if (scorer) {
    EXPECT_EQ(eval::read_run_scores(dir).size(), 2u) << sink.str();
  }
  r.last = test::load_models(dir + "/checkpoints/ckpt_000000004.pt");
  return r;
}

void expect_same_training(const Trained& a, const Trained& b) {
  ASSERT_EQ(a.history.size(), b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i)
    for (size_t s = 0; s < stat_names().size(); ++s)
      EXPECT_EQ(a.history[i][s], b.history[i][s]) << stat_names()[s].words << " at iteration " << i + 1;
  for (const auto& [x, y] : {std::pair{&a.last.g, &b.last.g}, {&a.last.d, &b.last.d}, {&a.last.g_ema, &b.last.g_ema}})
    for (const auto& [k, t] : *x) EXPECT_TRUE(torch::equal(t, y->at(k))) << k;
}

}  // namespace

// The same run with and without eval.every: the same losses at every iteration and the
// same final weights. The score at iteration 2 loads a checkpoint between the iterations that
// draw NMF bases; building its generator must not take initial weights from training's stream.
TEST(TrainScorerRng, ScoringWhileTrainingDoesNotChangeTraining) {
  const Trained plain = train_run(ham_config("cpu", false), "plain", false);
  const Trained scored = train_run(ham_config("cpu", true), "scored", true);
  EXPECT_EQ(scored.scores, 2);
  expect_same_training(plain, scored);
}

// On a GPU the Hamburger's bases come from the device's generator: a score leaves it alone too.
TEST(TrainScorerRng, ScoringWhileTrainingOnAGpuDoesNotChangeTraining) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const torch::Device gpu(torch::kCUDA, 0);
  const Trained plain = train_run(ham_config("cuda", false), "plain_cuda", false);
  const Trained scored = train_run(ham_config("cuda", true), "scored_cuda", true, gpu);
  EXPECT_EQ(scored.scores, 2);
  expect_same_training(plain, scored);
}

}  // namespace test_train_scorer_rng
