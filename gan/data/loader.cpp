// Loader: batch g (counted from epoch 0) depends only on (seed, epoch, batch index), never on
// which worker built it or when, so a loader restored from LoaderState continues exactly.
#include <condition_variable>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/error.h"
#include "core/splitmix.h"
#include "gan/data/class_runs.h"
#include "gan/data/dataset.h"

namespace hamgan {

namespace {

uint64_t mix(uint64_t a, uint64_t b) { return splitmix64(a ^ splitmix64(b)); }

struct Ready {
  Batch batch;
  int64_t skipped = 0;
  std::exception_ptr error;
};

}  // namespace

struct Loader::Impl {
  std::shared_ptr<Dataset> data;
  LoaderOptions opt;
  std::vector<int32_t> labels;  // with class_group > 1: every image's label (< 0: left out)
  int64_t per_epoch = 0, first = 0, image_bytes = 0;
  float lut[256];

  std::mutex mu;
  std::condition_variable cv_ready, cv_space;
  int64_t consumed = 0, claimed = 0, skipped = 0;
  bool stop = false;
  std::map<int64_t, Ready> ready;
  std::vector<std::thread> workers;

  std::mutex perm_mu;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> perms;

  // Fisher-Yates from (seed, epoch) with our own index draw: std::shuffle and
  // uniform_int_distribution differ between standard libraries.
  std::shared_ptr<const std::vector<int64_t>> permutation(int64_t epoch) {
    std::lock_guard<std::mutex> lock(perm_mu);
    auto it = perms.find(epoch);
    if (it != perms.end()) return it->second;
    const uint64_t seed = mix(opt.seed, static_cast<uint64_t>(epoch));
    std::shared_ptr<std::vector<int64_t>> p;
    if (opt.class_group > 1) {
      p = std::make_shared<std::vector<int64_t>>(class_run_order(labels, data->num_classes(), opt.class_group, seed));
    } else {
      p = std::make_shared<std::vector<int64_t>>(data->size());
      for (int64_t i = 0; i < data->size(); ++i) (*p)[i] = i;
      std::mt19937_64 rng(seed);
      for (int64_t i = data->size() - 1; i > 0; --i)
        std::swap((*p)[i], (*p)[rng() % static_cast<uint64_t>(i + 1)]);
    }
    while (!perms.empty() && perms.begin()->first < epoch - 1) perms.erase(perms.begin());
    perms[epoch] = p;
    return p;
  }

  Ready build(int64_t g) {
    Ready r;
    const int64_t epoch = g / per_epoch, b = g % per_epoch, B = opt.batch_size;
    const int64_t C = data->channels(), R = data->resolution(), N = data->size();
    const auto perm = permutation(epoch);
    const auto pinned = torch::TensorOptions().pinned_memory(opt.pin_memory);
    r.batch.images = torch::empty({B, C, R, R}, pinned.dtype(torch::kFloat32));
    r.batch.labels = torch::empty({B}, pinned.dtype(torch::kInt64));
    float* out = r.batch.images.data_ptr<float>();
    int64_t* lab = r.batch.labels.data_ptr<int64_t>();
    std::vector<uint8_t> px(image_bytes);
    for (int64_t j = 0; j < B; ++j) {
      const auto pos = static_cast<uint64_t>((b * opt.world_size + opt.rank) * B + j);
      const uint64_t key = mix(mix(opt.seed, static_cast<uint64_t>(epoch)), pos);
      int64_t idx = (*perm)[pos];
      int32_t label = 0;
      // An undecodable image is replaced by a deterministic pseudo-random other one.
      for (uint64_t attempt = 1; !data->get(idx, px.data(), label); ++attempt) {
        ++r.skipped;
        if (attempt > 1000) fail("loader: 1000 undecodable images in a row; is the data bad?");
        idx = static_cast<int64_t>(mix(key, attempt) % static_cast<uint64_t>(N));
      }
      lab[j] = label;
      const bool flip = opt.flip && (mix(key, 0xF11Full) & 1);
      float* o = out + j * image_bytes;
      for (int64_t row = 0; row < C * R; ++row) {
        const uint8_t* s = px.data() + row * R;
        float* d = o + row * R;
        if (flip)
          for (int64_t x = 0; x < R; ++x) d[x] = lut[s[R - 1 - x]];
        else
          for (int64_t x = 0; x < R; ++x) d[x] = lut[s[x]];
      }
    }
    return r;
  }

  void work() {
    for (;;) {
      int64_t k;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv_space.wait(lock, [&] { return stop || claimed < consumed + opt.prefetch; });
        if (stop) return;
        k = claimed++;
      }
      Ready r;
      try {
        r = build(first + k);
      } catch (...) {
        r.error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ready.emplace(k, std::move(r));
      cv_ready.notify_all();
    }
  }
};

Loader::Loader(std::shared_ptr<Dataset> data, LoaderOptions opt, LoaderState start)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (!data) fail("loader: no dataset");
  if (opt.batch_size <= 0) fail("loader: batch_size ", opt.batch_size, ": expected > 0");
  if (opt.world_size <= 0 || opt.rank < 0 || opt.rank >= opt.world_size)
    fail("loader: rank ", opt.rank, " of world_size ", opt.world_size,
         ": expected 0 <= rank < world_size");
  if (opt.workers < 0 || opt.prefetch <= 0)
    fail("loader: workers ", opt.workers, " / prefetch ", opt.prefetch,
         ": expected workers >= 0, prefetch > 0");
  m.data = std::move(data);
  m.opt = opt;
  int64_t per_epoch_images = m.data->size();
  if (opt.class_group > 1) {
    if (opt.batch_size % opt.class_group != 0)
      fail("loader: class_group ", opt.class_group, ": expected a divisor of the batch size ", opt.batch_size);
    // Every epoch has the same length: each class keeps its images that fill whole runs.
    std::vector<int64_t> count(static_cast<size_t>(m.data->num_classes()), 0);
    m.labels.resize(static_cast<size_t>(m.data->size()));
    for (int64_t i = 0; i < m.data->size(); ++i) {
      const int32_t l = m.data->label(i);
      if (l == Dataset::kLabelUnknown)
        fail("loader: class_group ", opt.class_group, " needs every image's label before decoding it; this data "
             "source cannot tell image ", i, "'s (expected fmnist, cifar10, folder or packed data)");
      m.labels[static_cast<size_t>(i)] = l < 0 ? -1 : l;
      if (l >= m.data->num_classes())
        fail("loader: image ", i, " has label ", l, ", expected < ", m.data->num_classes(), " classes");
      if (l >= 0) ++count[static_cast<size_t>(l)];
    }
    per_epoch_images = 0;
    for (const int64_t c : count) per_epoch_images += c - c % opt.class_group;
  }
  m.per_epoch = per_epoch_images / (opt.batch_size * opt.world_size);
  if (m.per_epoch == 0)
    fail("loader: the dataset's ", per_epoch_images, " images", opt.class_group > 1 ? " in runs of one class" : "",
         " do not fill one batch of ", opt.batch_size, " on each of ", opt.world_size, " ranks");
  if (start.epoch < 0 || start.batch_in_epoch < 0 || start.batch_in_epoch >= m.per_epoch)
    fail("loader: the checkpoint stopped at batch ", start.batch_in_epoch, " of epoch ", start.epoch,
         ", but this data set has ", m.per_epoch, " batches per epoch (", m.data->size(), " images, batch ",
         opt.batch_size, " x ", opt.world_size, " ranks): data.path, train.batch_size or the rank count differ "
         "from the run's; resume with the settings of the run's config.yaml");
  m.first = start.epoch * m.per_epoch + start.batch_in_epoch;
  m.image_bytes = m.data->channels() * m.data->resolution() * m.data->resolution();
  for (int v = 0; v < 256; ++v) m.lut[v] = static_cast<float>(v) / 127.5f - 1.0f;
  for (int64_t t = 0; t < opt.workers; ++t) m.workers.emplace_back([&m] { m.work(); });
}

Loader::~Loader() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv_space.notify_all();
  for (auto& t : impl_->workers) t.join();
  if (impl_->skipped > 0)
    std::cerr << "loader: skipped " << impl_->skipped << " undecodable images in total\n";
}

Batch Loader::next() {
  Impl& m = *impl_;
  Ready r;
  if (m.workers.empty()) {
    r = m.build(m.first + m.consumed);
    ++m.consumed;
  } else {
    std::unique_lock<std::mutex> lock(m.mu);
    m.cv_ready.wait(lock, [&] { return m.ready.count(m.consumed) > 0; });
    auto it = m.ready.find(m.consumed);
    r = std::move(it->second);
    m.ready.erase(it);
    ++m.consumed;
    m.cv_space.notify_all();
  }
  if (r.error) std::rethrow_exception(r.error);
  std::lock_guard<std::mutex> lock(m.mu);
  m.skipped += r.skipped;
  // Mostly undecodable data would train on the few images left, with only warnings.
  const int64_t good = m.consumed * m.opt.batch_size, tried = good + m.skipped;
  if (tried >= 64 && m.skipped * 2 > tried)
    fail("loader: ", m.skipped, " of the first ", tried, " images read could not be decoded (",
         m.data->size(), " in the data set); is the data bad? Expected most images to decode");
  return std::move(r.batch);
}

LoaderState Loader::state() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const int64_t g = impl_->first + impl_->consumed;
  return {g / impl_->per_epoch, g % impl_->per_epoch};
}

int64_t Loader::skipped() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->skipped;
}

}  // namespace hamgan
