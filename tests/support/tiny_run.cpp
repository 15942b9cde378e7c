#include "support/tiny_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/data/synthetic.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"

namespace hamgan::test {

namespace fs = std::filesystem;

Config tiny(const std::string& extra) {
  const std::string y =
      "model: {resolution: 32, n_classes: 3, image_channels: 1}\n"
      "generator: {ch: 4, z_dim: 8, context: {type: self_attention, resolution: 16}}\n"
      "discriminator: {ch: 4, context: {type: self_attention, resolution: 16}}\n"
      "train: {batch_size: 4, accumulate: 2, n_dis: 2, iterations: 6, ema_start: 2,\n"
      "        ema_decay: 0.9, log_every: 1, sample_every: 3, checkpoint_every: 3,\n"
      "        keep_checkpoints: 5, device: cpu}\n";
  std::vector<std::string> ov;
  std::istringstream is(extra);
  for (std::string o; is >> o;) ov.push_back(o);
  return parse_config(y, "tiny config", ov);
}

SourceFactory synthetic(const Config& cfg) {
  return [cfg](int64_t batch, LoaderState start) -> std::unique_ptr<BatchSource> {
    // 10 images with batch 2: five batches an epoch, so runs cross epoch boundaries.
    auto data = std::make_shared<SyntheticDataset>(10, cfg.model.resolution,
                                                   cfg.model.image_channels, cfg.model.n_classes, 7);
    return std::make_unique<DatasetSource>(data, batch, 11, start);
  };
}

std::string fresh_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("hamgan_test_train_" + name);
  fs::remove_all(p);
  return p.string();
}

Ran run(const Config& cfg, const std::string& dir, TrainHooks hooks) {
  std::ostringstream sink;
  TrainOptions opt;
  opt.out_dir = dir;
  opt.out = &sink;
  Ran r;
  hooks.history = &r.history;
  static_cast<TrainResult&>(r) = train(cfg, opt, synthetic(cfg), hooks);
  r.log = sink.str();
  return r;
}

void expect_resumed_past_damaged(const Ran& r, const std::string& damaged, const std::string& resumed,
                                 size_t iterations) {
  EXPECT_NE(r.log.find("warning: skipping damaged checkpoint"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find(damaged), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("resuming from " + resumed), std::string::npos) << r.log;
  EXPECT_EQ(r.history.size(), iterations);
  for (const auto& st : r.history)
    for (float v : st) EXPECT_TRUE(std::isfinite(v));
}

Loaded load_models(const std::string& path) {
  const CheckpointData c = load_checkpoint(path);
  Generator g(c.config.model, c.config.generator), ge(c.config.model, c.config.generator);
  Discriminator d(c.config.model, c.config.discriminator);
  c.load_module("g", *g);
  c.load_module("d", *d);
  c.load_module("g_ema", *ge);
  return {state_dict(*g), state_dict(*d), state_dict(*ge)};
}


}  // namespace hamgan::test
