// Fine-tuning (train.init_from, gan/train/init_from.h) and FreezeD (train.freeze_d): a run of
// the tiny model on the synthetic source (5 classes) is fine-tuned on 3; the frozen blocks of D
// keep their exact weights while later ones train; class-conditional tensors are re-initialised
// where the class count differs (the oracle: the tensors whose shapes differ between a 5- and a
// 3-class model built from the same config) and copied where it does not; a fine-tuned run
// resumes exactly; bad files and shapes are named.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/compat.h"
#include "core/state_dict.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/train/init_from.h"
#include "gan/train/trainer.h"
#include "support/errors.h"
#include "support/tiny_run.h"

namespace test_finetune {

using namespace hamgan;
using namespace hamgan::test;

namespace {

// The source run: 5 classes, 3 iterations (its checkpoint at 3).
const std::string& source_checkpoint() {
  static const std::string path = [] {
    const std::string dir = fresh_dir("finetune_source");
    run(tiny("model.n_classes=5 train.iterations=3"), dir);
    return dir + "/checkpoints/ckpt_000000003.pt";
  }();
  return path;
}

// train() into dir with its log.
Ran run_logged(const Config& cfg, const std::string& dir, std::string& log) {
  std::ostringstream out;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &out;
  Ran r;
  TrainHooks hooks;
  hooks.history = &r.history;
  static_cast<TrainResult&>(r) = train(cfg, opt, synthetic(cfg), hooks);
  log = out.str();
  return r;
}

// Into `into`: prefix + each name of m whose shape in `other` differs.
void prefixed(const std::string& prefix, const TensorMap& m, std::set<std::string>& into, const TensorMap& other) {
  for (const auto& [k, v] : m)
    if (other.at(k).sizes() != v.sizes()) into.insert(prefix + k);
}

bool same(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && torch::equal(a.contiguous(), b.contiguous());
}

}  // namespace

TEST(Finetune, ClassTensorsReinitialisedWhenTheCountDiffersAndCopiedWhenEqual) {
  const CheckpointData c = load_checkpoint(source_checkpoint());
  const Loaded src = load_models(source_checkpoint());
  // The oracle: which tensors depend on the class count.
  std::set<std::string> want;
  {
    Trainer five(tiny("model.n_classes=5"), torch::kCPU), three(tiny(), torch::kCPU);
    prefixed("g.", state_dict(*three.g()), want, state_dict(*five.g()));
    prefixed("d.", state_dict(*three.d()), want, state_dict(*five.d()));
    prefixed("g_ema.", state_dict(**three.g_ema()), want, state_dict(**five.g_ema()));
  }
  ASSERT_TRUE(want.count("d.embed.weight_orig"));
  ASSERT_GT(want.size(), 2u);

  Trainer fresh(tiny(), torch::kCPU), t(tiny(), torch::kCPU);
  const std::vector<std::string> re = init_from_checkpoint(t, c, false);
  EXPECT_EQ(std::set<std::string>(re.begin(), re.end()), want);
  EXPECT_EQ(t.iteration(), 0);
  const auto check = [&](const std::string& part, const TensorMap& now, const TensorMap& from, const TensorMap& init) {
    for (const auto& [k, v] : now) {
      if (want.count(part + k))
        EXPECT_TRUE(same(v, init.at(k))) << part << k << " should keep this run's initialisation";
      else
        EXPECT_TRUE(same(v, from.at(k))) << part << k << " should be the checkpoint's";
    }
  };
  check("g.", state_dict(*t.g()), src.g, state_dict(*fresh.g()));
  check("d.", state_dict(*t.d()), src.d, state_dict(*fresh.d()));
  check("g_ema.", state_dict(**t.g_ema()), src.g_ema, state_dict(**fresh.g_ema()));

  // The same class count: everything copied, Adam's moments too when asked.
  Trainer five(tiny("model.n_classes=5"), torch::kCPU);
  EXPECT_TRUE(init_from_checkpoint(five, c, true).empty());
  for (const auto& [k, v] : state_dict(*five.g())) EXPECT_TRUE(same(v, src.g.at(k))) << k;
  for (const auto& [k, v] : state_dict(*five.d())) EXPECT_TRUE(same(v, src.d.at(k))) << k;
  for (const auto& [k, v] : state_dict(**five.g_ema())) EXPECT_TRUE(same(v, src.g_ema.at(k))) << k;
  // The moments: those of the checkpoint's optimizer over a G built from its config.
  Generator g(c.config.model, c.config.generator);
  c.load_module("g", *g);
  torch::optim::Adam og(g->parameters(), torch::optim::AdamOptions(1e-4));
  c.load_optimizer("opt_g", og);
  const auto src_params = g->parameters(), dst_params = five.g()->parameters();
  ASSERT_EQ(src_params.size(), dst_params.size());
  int64_t with_state = 0;
  for (size_t i = 0; i < src_params.size(); ++i) {
    const auto* a = compat::adam_state(og, src_params[i]);
    const auto* b = compat::adam_state(five.opt_g(), dst_params[i]);
    ASSERT_EQ(a == nullptr, b == nullptr) << i;
    if (!a) continue;
    ++with_state;
    EXPECT_EQ(a->step(), b->step());
    EXPECT_TRUE(same(a->exp_avg(), b->exp_avg()));
    EXPECT_TRUE(same(a->exp_avg_sq(), b->exp_avg_sq()));
  }
  EXPECT_GT(with_state, 0);
}

TEST(Finetune, FreezeDKeepsTheFirstBlocksAndTrainsTheRest) {
  const std::string dir = fresh_dir("finetune_freeze");
  std::string log;
  const Config cfg = tiny("train.init_from=" + source_checkpoint() + " train.freeze_d=2 train.iterations=3");
  const Ran r = run_logged(cfg, dir, log);
  ASSERT_EQ(r.iteration, 3);
  EXPECT_NE(log.find("fine-tuning from " + source_checkpoint()), std::string::npos) << log;
  EXPECT_NE(log.find("re-initialised for model.n_classes 3 (checkpoint: 5): d.embed.weight_orig\n"), std::string::npos) << log;
  const Loaded src = load_models(source_checkpoint());
  const Loaded now = load_models(dir + "/checkpoints/ckpt_000000003.pt");
  int64_t frozen = 0, changed = 0;
  for (const auto& [k, v] : now.d) {
    // Blocks 0 and 1, and the context module after block 0 (between them): exactly as loaded,
    // SN's power-iteration vectors included.
    const bool is_frozen = k.rfind("blocks.0.", 0) == 0 || k.rfind("blocks.1.", 0) == 0 || k.rfind("context.", 0) == 0;
    if (is_frozen) {
      ++frozen;
      EXPECT_TRUE(same(v, src.d.at(k))) << k << " is frozen";
    } else if (k.rfind("blocks.", 0) == 0 && k.find("weight_orig") != std::string::npos) {
      ++changed;
      EXPECT_FALSE(same(v, src.d.at(k))) << k << " should have trained";
    }
  }
  EXPECT_GT(frozen, 4);
  EXPECT_GT(changed, 1);
}

TEST(Finetune, FineTunedRunResumesExactly) {
  const std::string base = "train.init_from=" + source_checkpoint() + " train.freeze_d=1";
  std::string log;
  const Ran whole = run_logged(tiny(base + " train.iterations=6"), fresh_dir("finetune_whole"), log);
  ASSERT_EQ(whole.history.size(), 6u);
  const std::string dir = fresh_dir("finetune_parts");
  run_logged(tiny(base + " train.iterations=3"), dir, log);
  const Ran rest = run_logged(tiny(base + " train.iterations=6"), dir, log);
  EXPECT_NE(log.find("train.init_from " + source_checkpoint() + " is not used: this run resumes from its own "
                     "checkpoint"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("fine-tuning from"), std::string::npos) << log;
  ASSERT_EQ(rest.history.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    for (size_t s = 0; s < stat_names().size(); ++s)
      EXPECT_EQ(rest.history[i][s], whole.history[i + 3][s]) << "iteration " << i + 4 << " " << stat_names()[s].key;
}

TEST(Finetune, BadFilesShapesAndKeysAreNamed) {
  const std::string dir = fresh_dir("finetune_bad");
  std::string log;
  const std::string missing = dir + "_no_such.pt";
  std::string e = error_of([&] { run_logged(tiny("train.init_from=" + missing), dir, log); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_FALSE(std::filesystem::exists(dir + "/config.yaml")) << "a bad init_from leaves nothing behind";

  // Another D width: not a class count, an error naming the checkpoint and a tensor.
  const Config wide = tiny("discriminator.ch=8 train.init_from=" + source_checkpoint());
  e = error_of([&] { run_logged(wide, dir, log); });
  EXPECT_NE(e.find(source_checkpoint()), std::string::npos) << e;
  EXPECT_NE(e.find("d.blocks.0."), std::string::npos) << e;
  EXPECT_NE(e.find("checkpoint [16, 1, 3, 3], this model [32, 1, 3, 3]"), std::string::npos) << e;

  e = error_of([] { tiny("train.freeze_d=9"); });
  EXPECT_NE(e.find("train.freeze_d"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 0..4"), std::string::npos) << e;
  e = error_of([] { tiny("train.freeze_d=-1"); });
  EXPECT_NE(e.find("train.freeze_d"), std::string::npos) << e;
}

// FreezeD from scratch (no init_from): the frozen blocks' weights never trained and their SN
// vectors are random, so their power iteration keeps running; frozen in eval mode instead,
// sigma stayed a random u^T W v and each frozen block multiplied D's scale (first D losses of
// 53 at K=0, 4e5 at K=2 in the quickstart model). Tolerance: at iteration 1 both runs start
// from the same weights and u/v and every SN layer runs the same one power iteration, so only
// the frozen modules' other eval-mode layers may differ (the tiny D's self-attention computes
// the same in both modes); a factor 2 either way is "the same order" and still far from the
// orders of magnitude a stalled sigma gives.
TEST(Finetune, FreezeDFromScratchKeepsDsScale) {
  std::string log;
  const Ran k0 = run_logged(tiny("train.iterations=1"), fresh_dir("freeze_scratch_0"), log);
  const Ran k2 = run_logged(tiny("train.freeze_d=2 train.iterations=1"), fresh_dir("freeze_scratch_2"), log);
  ASSERT_EQ(k0.history.size(), 1u);
  ASSERT_EQ(k2.history.size(), 1u);
  const double d0 = k0.history[0][kDLossReal] + k0.history[0][kDLossFake];
  const double d2 = k2.history[0][kDLossReal] + k2.history[0][kDLossFake];
  ASSERT_TRUE(std::isfinite(d0) && std::isfinite(d2)) << d0 << " " << d2;
  EXPECT_GT(d2, 0.5 * d0) << "K=2 " << d2 << ", K=0 " << d0;
  EXPECT_LT(d2, 2.0 * d0) << "K=2 " << d2 << ", K=0 " << d0;
  // The frozen weights themselves stay as initialised; their u/v follow the power iteration.
  const std::string dir = fresh_dir("freeze_scratch_3");
  run_logged(tiny("train.freeze_d=2 train.iterations=3"), dir, log);
  Trainer fresh(tiny("train.freeze_d=2"), torch::kCPU);
  const TensorMap init = state_dict(*fresh.d());
  const Loaded now = load_models(dir + "/checkpoints/ckpt_000000003.pt");
  EXPECT_TRUE(same(now.d.at("blocks.0.conv1.weight_orig"), init.at("blocks.0.conv1.weight_orig")));
  EXPECT_FALSE(same(now.d.at("blocks.0.conv1.weight_u"), init.at("blocks.0.conv1.weight_u")));
}

// init_from into another context type: every tensor may match by name and shape (NMF and VQ
// Hamburgers share theirs; so can self-attention and KAO), yet the models differ. Refused,
// naming the key and both values, before a step is trained.
TEST(Finetune, AnotherContextTypeIsRefusedNamingTheKey) {
  const std::string src_dir = fresh_dir("finetune_nmf_source");
  const std::string nmf = "generator.context.type=ham_nmf";
  run(tiny(nmf + " train.iterations=3"), src_dir);
  const std::string src = src_dir + "/checkpoints/ckpt_000000003.pt";
  std::string log;
  const std::string dir = fresh_dir("finetune_vq");
  std::string e = error_of([&] { run_logged(tiny("generator.context.type=ham_vq train.init_from=" + src), dir, log); });
  expect_names(e, {src, "train.init_from", "only model.n_classes may differ",
                   "generator.context.type: checkpoint ham_nmf, now ham_vq"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoints/ckpt_000000001.pt"));

  e = error_of([&] {
    run_logged(tiny("discriminator.context.type=kao_kv train.init_from=" + source_checkpoint()),
               fresh_dir("finetune_kao"), log);
  });
  expect_names(e, {source_checkpoint(), "discriminator.context.type: checkpoint self_attention, now kao_kv"});
  // model.n_classes alone still differs freely (the source has 5 classes, tiny() 3).
  EXPECT_EQ(run_logged(tiny("train.iterations=1 train.init_from=" + source_checkpoint()),
                       fresh_dir("finetune_classes_only"), log).iteration, 1);
}

// train.init_optimizer=true without train.init_from has nothing to take Adam's states from: a
// start-up error naming both keys, with nothing written.
TEST(Finetune, InitOptimizerWithoutInitFromIsAnError) {
  const std::string dir = fresh_dir("finetune_optimizer_alone");
  std::string log;
  const std::string e = error_of([&] { run_logged(tiny("train.init_optimizer=true"), dir, log); });
  expect_names(e, {"train.init_optimizer", "train.init_from"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/config.yaml"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoints"));
}

}  // namespace test_finetune
