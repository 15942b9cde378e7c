// `hamgan train --config FILE --out DIR [key=value ...]`: trains, or resumes from the newest
// valid checkpoint in DIR/checkpoints. --synthetic trains on SyntheticDataset (smoke runs).
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/data/synthetic.h"
#include "gan/train/trainer.h"

namespace hamgan::cli {

int train(int argc, char** argv) {
  cxxopts::Options opts("hamgan train", "Train a class-conditional GAN (resumes from --out)");
  add_config_options(opts, "configs/fmnist32_sagan.yaml");
  opts.add_options()("o,out", "output directory (checkpoints/, samples/, metrics.jsonl)",
                     cxxopts::value<std::string>())(
      "workers", "data loader threads", cxxopts::value<int64_t>()->default_value("2"))(
      "synthetic", "train on a synthetic dataset instead of data.*")("h,help", "show help");
  const auto r = opts.parse(argc, argv);
  if (r.count("help")) {
    std::cout << opts.help() << "\n";
    return 0;
  }
  if (!r.count("out")) fail("--out: expected an output directory");
  set_threads(r);
  const Config cfg = config_from(r);
  const bool synthetic = r.count("synthetic") > 0;
  const int64_t workers = r["workers"].as<int64_t>();

  SourceFactory make_source = [&](int64_t batch, LoaderState start) -> std::unique_ptr<BatchSource> {
    const int64_t res = cfg.model.resolution, ch = cfg.model.image_channels;
    if (synthetic) {
      auto data = std::make_shared<SyntheticDataset>(std::max<int64_t>(4096, batch), res, ch,
                                                     cfg.model.n_classes, cfg.train.seed);
      return std::make_unique<DatasetSource>(data, batch, cfg.train.seed, start);
    }
    std::shared_ptr<Dataset> data = open_dataset(cfg.data, res, ch);
    if (data->num_classes() != cfg.model.n_classes)
      fail(cfg.source, ": model.n_classes is ", cfg.model.n_classes, " but the dataset has ",
           data->num_classes(), " classes");
    LoaderOptions lo;
    lo.batch_size = batch;
    lo.seed = static_cast<uint64_t>(cfg.train.seed);
    lo.workers = workers;
    return std::make_unique<LoaderSource>(data, lo, start);
  };
  TrainOptions to;
  to.out_dir = r["out"].as<std::string>();
  hamgan::train(cfg, to, make_source);  // a signal or the time limit also ends with 0
  return 0;
}

}  // namespace hamgan::cli
