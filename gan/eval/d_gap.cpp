#include "gan/eval/d_gap.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include <ATen/CPUGeneratorImpl.h>

#include "core/error.h"
#include "gan/data/test_split.h"
#include "gan/models/discriminator.h"
#include "gan/models/generator.h"
#include "io/atomic_file.h"
#include "io/output_path.h"

namespace fs = std::filesystem;

namespace hamgan::eval {

namespace {
constexpr int64_t kBatch = 100;
constexpr const char* kDGapHeader = "iteration,d_train,d_test,d_fake,gap,n";

// DIR/d_gap.csv may replace only an earlier d_gap.csv (io/output_path.h): a file of that name
// that is anything else (a hand-kept table, a score table copied there) stays.
const io::OutputKind& d_gap_table() {
  static const io::OutputKind k = io::text_output("the table of an earlier `hamgan dgap`", {kDGapHeader});
  return k;
}

// Mean D output over the first n images of a seed-0 shuffle of `data`, pixels as the loader
// gives them ([-1, 1]); undecodable images are skipped.
double mean_d_real(DiscriminatorImpl& d, const Dataset& data, int64_t n, torch::Device device) {
  at::Generator shuffle = at::detail::createCPUGenerator(0);
  const torch::Tensor order = torch::randperm(data.size(), shuffle, torch::kLong);
  const int64_t* idx = order.data_ptr<int64_t>();
  const int64_t c = data.channels(), r = data.resolution();
  double sum = 0;
  int64_t seen = 0;
  for (int64_t next = 0; seen < n && next < data.size();) {
    const int64_t want = std::min(kBatch, n - seen);
    torch::Tensor px = torch::empty({want, c, r, r}, torch::kUInt8);
    std::vector<int64_t> labels;
    while (static_cast<int64_t>(labels.size()) < want && next < data.size()) {
      int32_t y = 0;
      if (data.get(idx[next++], px[static_cast<int64_t>(labels.size())].data_ptr<uint8_t>(), y))
        labels.push_back(y);
    }
    const int64_t k = static_cast<int64_t>(labels.size());
    if (k == 0) break;
    const torch::Tensor x = px.narrow(0, 0, k).to(torch::kFloat).div(127.5).sub(1).to(device);
    sum += d.forward(x, torch::tensor(labels, torch::kLong).to(device)).sum().item<double>();
    seen += k;
  }
  if (seen < n) fail("dgap: ", data.size(), " images give only ", seen, " decodable ones, expected ", n);
  return sum / static_cast<double>(n);
}

double mean_d_fake(DiscriminatorImpl& d, GeneratorImpl& g, int64_t n_classes, int64_t n, torch::Device device) {
  at::Generator rng = at::detail::createCPUGenerator(0);
  double sum = 0;
  for (int64_t done = 0; done < n; done += kBatch) {
    const int64_t b = std::min(kBatch, n - done);
    const torch::Tensor z = torch::randn({b, g.z_dim()}, rng).to(device);
    const torch::Tensor y = torch::randint(n_classes, {b}, rng, torch::kLong).to(device);
    sum += d.forward(g.forward(z, y), y).sum().item<double>();
  }
  return sum / static_cast<double>(n);
}
}  // namespace

DGapRow d_gap(const CheckpointData& c, const Dataset& train, const Dataset& test, int64_t n, torch::Device device) {
  if (n < 1) fail("dgap: -n must be >= 1, got ", n);
  torch::NoGradGuard no_grad;
  Discriminator d(c.config.model, c.config.discriminator);
  c.load_module("d", *d);
  d->to(device);
  d->eval();
  Generator g(c.config.model, c.config.generator);
  c.load_module("g", *g);
  g->to(device);
  g->train();  // batch statistics, as in D's step; nothing is written back
  DGapRow row;
  row.iteration = c.iteration;
  row.n = n;
  row.d_train = mean_d_real(*d, train, n, device);
  row.d_test = mean_d_real(*d, test, n, device);
  // Context modules with random initial bases (Hamburger) draw them from the global generator
  // in training mode: seeded, so that a row does not depend on what ran before.
  torch::manual_seed(0);
  row.d_fake = mean_d_fake(*d, *g, c.config.model.n_classes, n, device);
  return row;
}

std::vector<DGapRow> d_gap_run(const std::string& run_dir, int64_t n, torch::Device device) {
  const std::string out = (fs::path(run_dir) / "d_gap.csv").string();
  if (fs::is_directory(run_dir)) io::check_output_path(out, d_gap_table());  // before minutes of scoring
  auto files = checkpoint_files((fs::path(run_dir) / "checkpoints").string());
  if (files.empty()) fail("dgap: no checkpoints in ", run_dir, "/checkpoints");
  std::reverse(files.begin(), files.end());  // oldest first
  std::optional<CheckpointData> first = load_checkpoint(files.front().path);  // scored first, loaded once
  const Config cfg = first->config;
  const int64_t res = cfg.model.resolution, ch = cfg.model.image_channels;
  const auto train = open_dataset(cfg.data, res, ch);
  const auto test = open_test_split(cfg.data, res, ch);
  if (!test)
    fail("dgap: the run's data (", cfg.data.path, ") has no test split to hold out; expected Fashion-MNIST's "
         "t10k files or CIFAR-10's test_batch.bin");
  // D's projection has one embedding row per class: a label past them would index out of it.
  const int64_t data_classes = static_cast<int64_t>(train->class_names().size());
  if (data_classes > cfg.model.n_classes)
    fail("dgap: the run's data (", cfg.data.path, ") has ", data_classes, " classes but its model was trained with "
         "model.n_classes=", cfg.model.n_classes, "; expected the data the run trained on (data.path in ", run_dir,
         "/config.yaml)");
  std::vector<DGapRow> rows;
  std::ostringstream csv;
  csv << kDGapHeader << "\n";
  for (const auto& f : files) {
    rows.push_back(d_gap(first ? *first : load_checkpoint(f.path), *train, *test, n, device));
    first.reset();
    const DGapRow& r = rows.back();
    csv << r.iteration << "," << r.d_train << "," << r.d_test << "," << r.d_fake << "," << r.gap() << "," << r.n << "\n";
  }
  io::check_output_path(out, d_gap_table());  // again: it may have appeared meanwhile
  io::write_file_atomically(out, csv.str());
  return rows;
}

}  // namespace hamgan::eval
