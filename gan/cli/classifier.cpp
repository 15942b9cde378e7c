// hamgan classifier train --data SRC [--format F] --out clf.pt [--epochs N | --steps N] [--seed S]
//   [-c config] [--resolution R] [--channels C] [--batch B] [--lr LR] [--width W]
//   [--feature-dim D] [--holdout H] [--workers W] [--threads T] [--overwrite]
// The domain classifier `hamgan fid --features clf.pt` scores with (metrics/classifier.h). Only
// a classifier whose accuracy on the test or held-out split is clearly above chance
// (metrics::chance_verdict) is written: one that guesses would make every FID in its features
// and every class accuracy it gives look like a measurement.
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "core/error.h"
#include "gan/classifier/train_classifier.h"
#include "gan/cli/commands.h"
#include "gan/data/sources.h"
#include "gan/data/test_split.h"
#include "io/output_path.h"
#include "metrics/classifier.h"

namespace hamgan::cli {

namespace {

// Without --steps: --epochs passes, but at least this many optimizer steps. 240 images at batch
// 128 are one step an epoch, and 5 such steps left a 10-class classifier at chance.
constexpr int64_t kMinSteps = 200;

int classifier_train(int argc, char** argv) {
  cxxopts::Options o("hamgan classifier train",
                     "Train a small CNN on a labelled data source, for `hamgan fid --features` (FID in its features "
                     "and class accuracy); prints its accuracy on the source's test split or a held-out split");
  add_data_option(o);
  add_out_option(o, "the classifier file");
  add_overwrite_option(o, "an earlier file");
  add_resolution_option(o);
  add_channels_option(o);
  o.add_options()("c,config", "GAN config: its data.path, data.format, model.resolution and model.image_channels are the defaults",
                  cxxopts::value<std::string>())(
      "epochs", "passes over the training images, but at least 200 optimizer steps (default 3)",
      cxxopts::value<int64_t>())(
      "steps", "optimizer steps to train (instead of --epochs)", cxxopts::value<int64_t>())(
      "batch", "images per classifier training step (the classifier's own, not the GAN's train.batch_size)",
      cxxopts::value<int64_t>()->default_value("128"))(
      "lr", "Adam learning rate (cosine decay to 0)", cxxopts::value<double>()->default_value("0.002"))(
      "width", "channels of the first conv (doubled per block, at most 8x)", cxxopts::value<int64_t>()->default_value("16"))(
      "feature-dim", "penultimate features (the FID statistics' dimension)",
      cxxopts::value<int64_t>()->default_value("128"))(
      "holdout", "fraction held out for the accuracy when the source has no test split",
      cxxopts::value<double>()->default_value("0.1"));
  add_seed_option(o, "initial weights, order and flips");
  add_threads_option(o);
  add_workers_option(o);
  add_format_option(o, "--data (default: the config's)");
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  const std::string out = out_of(r);
  if (!r.count("data") && !r.count("config")) fail("classifier train: --data SRC (or -c config) is required");
  // Before any training: --out names a file in an existing folder, and what is there already is
  // an earlier classifier (a directory, a GAN checkpoint or any other file is refused, named).
  io::check_output_path(out, metrics::classifier_output(), "--out");
  if (std::error_code ec; std::filesystem::exists(std::filesystem::symlink_status(out, ec)) && !r.count("overwrite"))
    fail("--out ", out, ": exists (a classifier); pass --overwrite to replace it, or choose another --out");
  set_threads(r);
  DataConfig dc;
  int64_t res = kDefaultResolution, ch = 0;
  if (r.count("config")) {
    const Config cfg = load_config(r["config"].as<std::string>());
    dc = cfg.data, res = cfg.model.resolution, ch = cfg.model.image_channels;
  }
  if (r.count("data")) dc.path = r["data"].as<std::string>(), dc.format = DataFormat::Auto;
  if (r.count("format")) dc.format = format_of(r);
  dc.format = resolve_format(dc.format, dc.path);
  res = resolution_of(r, res);
  if (channels_of(r) != 0) ch = channels_of(r);
  if (ch == 0) ch = default_channels(dc.format);

  ClassifierTrainOptions opt;
  if (r.count("epochs") && r.count("steps")) fail("classifier train: --epochs and --steps: give one of them");
  if (r.count("epochs")) opt.epochs = r["epochs"].as<int64_t>();
  if (r.count("steps")) {
    opt.steps = r["steps"].as<int64_t>();
    if (opt.steps < 1) fail("classifier train: --steps ", opt.steps, "; expected >= 1");
  } else {
    opt.min_steps = kMinSteps;
  }
  opt.seed = r["seed"].as<uint64_t>();
  opt.batch = r["batch"].as<int64_t>();
  opt.lr = r["lr"].as<double>();
  opt.width = r["width"].as<int64_t>();
  opt.feature_dim = r["feature-dim"].as<int64_t>();
  opt.holdout = r["holdout"].as<double>();
  opt.workers = static_cast<int>(workers_of(r));
  if (!(opt.holdout > 0 && opt.holdout < 1)) fail("--holdout ", opt.holdout, ": expected a fraction in (0, 1)");

  const auto t0 = std::chrono::steady_clock::now();
  auto train = open_dataset(dc, res, ch);
  auto test = open_test_split(dc, res, ch);
  std::cerr << "training a classifier on " << dc.path << " (" << word_of(dc.format, kDataFormatWords) << ", " << train->size() << " images, "
            << train->num_classes() << " classes, " << res << "x" << res << "x" << ch << "), "
            << (opt.steps > 0 ? std::to_string(opt.steps) + " steps"
                              : std::to_string(opt.epochs) + " epochs (at least " + std::to_string(kMinSteps) + " steps)")
            << "\n";
  ClassifierTrainResult t = train_classifier(train, test, opt, std::cerr);
  const metrics::ChanceVerdict v = metrics::chance_verdict(t.test_hits, t.n_test, t.chance);
  if (!v.above)
    fail("classifier train: test accuracy ", v.text(), " on the ", t.test_split, " (", t.steps, " steps on ", t.n_train,
         " images) is not clearly above chance (a binomial test at ", metrics::kChanceAlpha, " and at least ",
         metrics::kChanceMargin, " of the way from chance to perfect); nothing written to ", out,
         ": FIDs in its features and class accuracies from it would mean nothing. Train longer (--steps), on more "
         "images per class (", train->size(), " images of ", train->num_classes(),
         " classes here), or check that the classes differ in what the images show");
  metrics::ClassifierInfo info;
  info.options = t.net->options();
  info.class_names = train->class_names();
  info.data = dc.path;
  info.test_accuracy = t.test_accuracy;
  info.test_n = t.n_test;
  info.chance = t.chance;
  metrics::save_classifier(out, t.net, info);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "test accuracy " << std::fixed << std::setprecision(4) << t.test_accuracy << " on the " << t.test_split
            << " (" << t.n_test << " images; trained on " << t.n_train << ") after " << t.steps << " steps\n"
            << "chance " << t.chance << "; clearly above it (binomial p " << std::defaultfloat << std::setprecision(2)
            << v.p_value << ")\n"
            << std::fixed << "wrote " << out << " (" << metrics::classifier_identity(t.net) << ") in " << std::setprecision(1) << s
            << " s\n";
  return 0;
}

}  // namespace

int classifier(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "train") return classifier_train(argc - 1, argv + 1);
  std::cerr << "usage: hamgan classifier train --data SRC --out clf.pt [options]   ('--help' lists them)\n";
  return argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") ? 0 : 2;
}

}  // namespace hamgan::cli
