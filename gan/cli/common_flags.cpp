#include "gan/cli/common_flags.h"

#include <algorithm>
#include <thread>

#include "core/error.h"
#include "core/threads.h"
#include "metrics/metric.h"

namespace hamgan::cli {

void add_threads_option(cxxopts::Options& o) {
  o.add_options()("threads", "CPU threads (LibTorch's, or prepare's decoders; default: all cores)",
                  cxxopts::value<int>());
}

int threads_of(const cxxopts::ParseResult& r) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (!r.count("threads")) return cores;
  // Far more threads than cores only contend (1000 on 2 cores take minutes to start).
  const int n = r["threads"].as<int>(), most = 4 * cores;
  if (n < 1 || n > most) fail("--threads ", n, ": expected 1..", most, " (at most 4 x the ", cores, " cores here)");
  return n;
}

void set_threads(const cxxopts::ParseResult& r) { hamgan::set_threads(threads_of(r)); }

void add_workers_option(cxxopts::Options& o) {
  o.add_options()("workers", "threads that read and decode images (data loader, image directories)",
                  cxxopts::value<int64_t>()->default_value("2"));
}

int64_t workers_of(const cxxopts::ParseResult& r) {
  const int64_t n = r["workers"].as<int64_t>();
  if (n < 1 || n > 256) fail("--workers: expected 1..256, got ", n);
  return n;
}

void add_device_option(cxxopts::Options& o) {
  o.add_options()("device", "cpu, cuda or auto (cuda when available), as train.device",
                  cxxopts::value<std::string>()->default_value("auto"));
}

void add_seed_option(cxxopts::Options& o, const std::string& what) {
  o.add_options()("seed", what, cxxopts::value<uint64_t>()->default_value("0"));
}

void add_format_option(cxxopts::Options& o, const std::string& of) {
  o.add_options()("format", "format of " + of + ": fmnist, cifar10, folder, packed or auto (detected from the path)",
                  cxxopts::value<std::string>()->default_value("auto"));
}

DataFormat format_of(const cxxopts::ParseResult& r) {
  return word_from("--format", r["format"].as<std::string>(), kDataFormatWords);
}

const char* const kMissingOut = "--out: required; expected the path to write to (--help says what is written there)";

void add_out_option(cxxopts::Options& o, const std::string& what) {
  o.add_options()("o,out", "where to write: " + what, cxxopts::value<std::string>());
}

std::string out_of(const cxxopts::ParseResult& r) {
  if (!r.count("out")) fail(kMissingOut);
  const std::string out = r["out"].as<std::string>();
  // An empty path would only fail later, in the filesystem, as "Invalid argument".
  if (out.empty()) fail("--out '': empty; expected the path to write to (--help says what is written there)");
  return out;
}

void add_overwrite_option(cxxopts::Options& o, const std::string& what) {
  o.add_options()("overwrite", "--out may already hold " + what + ", which is replaced");
}

void add_standing_batches_option(cxxopts::Options& o) {
  o.add_options()("standing-batches",
                  "re-estimate the EMA generator's BN standing statistics over N batches (0: the checkpoint's; at "
                  "most " + std::to_string(kMaxStandingBatches) + ", as train.ema_standing_batches)",
                  cxxopts::value<int64_t>()->default_value("0"));
}

int64_t standing_batches_of(const cxxopts::ParseResult& r) {
  const int64_t n = r["standing-batches"].as<int64_t>();
  if (n < 0 || n > kMaxStandingBatches)
    fail("--standing-batches ", n, ": expected 0..", kMaxStandingBatches, " (as train.ema_standing_batches)");
  return n;
}

void add_batch_option(cxxopts::Options& o) {
  o.add_options()("batch",
                  "images per forward batch through the generator and the feature network (memory and speed only: "
                  "the images and scores do not depend on it)",
                  cxxopts::value<int64_t>()->default_value("50"));
}

int64_t batch_of(const cxxopts::ParseResult& r) {
  const int64_t b = r["batch"].as<int64_t>();
  if (b < 1) fail("--batch ", b, ": expected >= 1");
  return b;
}

void add_train_batch_option(cxxopts::Options& o) {
  o.add_options()("batch",
                  "images per GAN training batch, as train.batch_size (default: the config's, else " +
                      std::to_string(TrainConfig{}.batch_size) + ")",
                  cxxopts::value<int64_t>());
}

int64_t train_batch_of(const cxxopts::ParseResult& r, int64_t config_batch) {
  if (!r.count("batch")) return config_batch;
  const int64_t b = r["batch"].as<int64_t>();
  if (b < 1) fail("--batch ", b, ": expected >= 1");
  return b;
}

void add_count_option(cxxopts::Options& o, const std::string& what, const std::string& default_value) {
  o.add_options()("n,count", "number of images: " + what, cxxopts::value<int64_t>()->default_value(default_value));
}

int64_t count_of(const cxxopts::ParseResult& r) {
  const int64_t n = r["count"].as<int64_t>();
  if (n < 0) fail("-n/--count ", n, ": expected >= 0");
  return n;
}

void add_data_option(cxxopts::Options& o) {
  o.add_options()("data", "data source (fmnist/cifar10 directory, ImageFolder, packed file), as data.path",
                  cxxopts::value<std::string>());
}

void add_resolution_option(cxxopts::Options& o) {
  o.add_options()("resolution",
                  "image side in pixels, as model.resolution (default: the config's, classifier's or checkpoint's "
                  "where the command reads one, else " + std::to_string(kDefaultResolution) + ")",
                  cxxopts::value<int64_t>());
}

int64_t resolution_of(const cxxopts::ParseResult& r, int64_t fallback) {
  if (!r.count("resolution")) return fallback;
  const int64_t v = r["resolution"].as<int64_t>();
  if (v < 1) fail("--resolution ", v, ": expected >= 1");
  return v;
}

void add_channels_option(cxxopts::Options& o) {
  o.add_options()("channels",
                  "image channels, 1 or 3, as model.image_channels (0: the config's, classifier's or checkpoint's "
                  "where the command reads one, else 1 for fmnist and 3 otherwise)",
                  cxxopts::value<int64_t>()->default_value("0"));
}

int64_t channels_of(const cxxopts::ParseResult& r) {
  const int64_t c = r["channels"].as<int64_t>();
  if (c != 0 && c != 1 && c != 3) fail("--channels ", c, ": expected 1 or 3 (or 0: the default)");
  return c;
}

void add_features_option(cxxopts::Options& o) {
  o.add_options()("features",
                  "the feature network's weight file, as eval.features, recognised from its contents: a domain "
                  "classifier (`hamgan classifier train --out`: FID in its features plus class accuracy), a DINOv2 "
                  "backbone (dinov2_vit*14_pretrain.pth, scripts/download_dinov2.sh: fd_dinov2) or Inception weights",
                  cxxopts::value<std::string>());
}

void add_real_option(cxxopts::Options& o) {
  o.add_options()("real", "reference, as eval.real: statistics (.npz, pytorch-fid format), an image directory or a data source",
                  cxxopts::value<std::string>());
}

void add_metrics_option(cxxopts::Options& o) {
  std::string h = "comma list of metric names, as eval.metrics (fid always):";
  for (const auto& e : metrics::metric_registry()) h += " " + e.name + " (" + e.help + ");";
  std::string real;
  for (const auto& e : metrics::metric_registry())
    if (e.needs & metrics::kRealFeatures) real += (real.empty() ? "" : ", ") + e.name;
  o.add_options()("metrics", h + " " + real + " need --real to be images or a data source (not an .npz)",
                  cxxopts::value<std::string>()->default_value("fid"));
}

}  // namespace hamgan::cli
