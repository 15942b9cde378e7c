#include "gan/classifier/train_classifier.h"

#include <chrono>
#include <cmath>
#include <future>
#include <iomanip>

#include "core/error.h"

namespace hamgan {

namespace {

// Images `idx[0..n)` of `data` as [n, C, R, R] floats in [-1, 1] (the loader's u / 127.5 - 1)
// and their labels, read by `workers` threads.
// Images that cannot be decoded are left out (get() reports each): never a black image with a
// label, in training or in the accuracy. Raw pointers only in the decoding threads, which are
// outside the caller's InferenceMode.
std::pair<torch::Tensor, torch::Tensor> read_batch(const Dataset& data, const int64_t* idx, int64_t n, int workers) {
  const int64_t c = data.channels(), r = data.resolution();
  torch::Tensor px = torch::zeros({n, c, r, r}, torch::kUInt8);
  uint8_t* base = px.data_ptr<uint8_t>();
  std::vector<int32_t> labels(static_cast<size_t>(n), 0);
  std::vector<char> ok(static_cast<size_t>(n), 0);
  std::vector<std::future<void>> jobs;
  const int64_t per = (n + workers - 1) / workers;
  for (int64_t s = 0; s < n; s += per)
    jobs.push_back(std::async(std::launch::async, [&, s]() {
      for (int64_t i = s; i < std::min(n, s + per); ++i)
        ok[static_cast<size_t>(i)] = data.get(idx[i], base + i * c * r * r, labels[static_cast<size_t>(i)]);
    }));
  for (auto& j : jobs) j.get();
  const int64_t k = data.num_classes();
  std::vector<int64_t> keep, y;
  for (int64_t i = 0; i < n; ++i) {
    if (!ok[static_cast<size_t>(i)]) continue;
    const int32_t l = labels[static_cast<size_t>(i)];
    if (l < 0 || l >= k) fail("image ", idx[i], ": label ", l, " outside the ", k, " classes of the source");
    keep.push_back(i);
    y.push_back(l);
  }
  if (static_cast<int64_t>(keep.size()) < n) px = px.index_select(0, torch::tensor(keep, torch::kLong));
  return {px.to(torch::kFloat).div_(127.5).sub_(1), torch::tensor(y, torch::kLong)};
}

// The default CPU generator seeded for the weight initialisation, restored afterwards.
metrics::DomainClassifier seeded_net(const metrics::ClassifierOptions& o, uint64_t seed) {
  at::Generator global = at::detail::getDefaultCPUGenerator();
  const torch::Tensor saved = global.get_state();
  torch::manual_seed(seed);
  metrics::DomainClassifier net(o);
  global.set_state(saved);
  return net;
}

}  // namespace

double ClassifierScore::chance() const {
  const int64_t k = static_cast<int64_t>(per_class.size());
  double c = k > 0 ? 1.0 / static_cast<double>(k) : 1.0;
  if (n > 0)
    for (const int64_t m : per_class) c = std::max(c, static_cast<double>(m) / static_cast<double>(n));
  return c;
}

ClassifierScore classifier_score(metrics::DomainClassifier& net, const Dataset& data, const std::vector<int64_t>& index,
                                 int64_t batch, int workers) {
  std::vector<int64_t> all;
  const std::vector<int64_t>* idx = &index;
  if (index.empty()) {
    for (int64_t i = 0; i < data.size(); ++i) all.push_back(i);
    idx = &all;
  }
  if (idx->empty()) fail("classifier accuracy: no images");
  net->eval();
  torch::InferenceMode guard;
  ClassifierScore s;
  s.per_class.assign(static_cast<size_t>(data.num_classes()), 0);
  for (size_t b = 0; b < idx->size(); b += static_cast<size_t>(batch)) {
    const int64_t n = std::min<int64_t>(batch, static_cast<int64_t>(idx->size() - b));
    const auto [x, y] = read_batch(data, idx->data() + b, n, workers);
    if (y.size(0) == 0) continue;
    s.hits += net->forward(x).second.argmax(1).eq(y).sum().item<int64_t>();
    s.n += y.size(0);
    const auto counts = torch::bincount(y, {}, data.num_classes());
    for (int64_t c = 0; c < data.num_classes(); ++c) s.per_class[static_cast<size_t>(c)] += counts[c].item<int64_t>();
  }
  if (s.n == 0) fail("classifier accuracy: none of the ", idx->size(), " images could be decoded");
  return s;
}

double classifier_accuracy(metrics::DomainClassifier& net, const Dataset& data, const std::vector<int64_t>& index,
                           int64_t batch, int workers) {
  const ClassifierScore s = classifier_score(net, data, index, batch, workers);
  return static_cast<double>(s.hits) / static_cast<double>(s.n);
}

ClassifierTrainResult train_classifier(std::shared_ptr<Dataset> train, std::shared_ptr<Dataset> test,
                                       const ClassifierTrainOptions& opt, std::ostream& log) {
  // Each named on its own: "epochs, batch and workers must be >= 1" left the user to guess.
  if (opt.steps < 0) fail("classifier train: --steps ", opt.steps, "; expected >= 1 (0: sized by --epochs)");
  if (opt.steps == 0 && opt.epochs < 1) fail("classifier train: --epochs ", opt.epochs, "; expected >= 1");
  if (opt.min_steps < 0) fail("classifier train: min_steps ", opt.min_steps, "; expected >= 0");
  if (opt.batch < 1) fail("classifier train: --batch ", opt.batch, "; expected >= 1");
  if (opt.workers < 1) fail("classifier train: --workers ", opt.workers, "; expected >= 1");
  if (!(opt.lr > 0) || !std::isfinite(opt.lr)) fail("classifier train: --lr ", opt.lr, "; expected a finite number > 0");
  if (test && (test->resolution() != train->resolution() || test->channels() != train->channels() ||
               test->num_classes() != train->num_classes()))
    fail("classifier train: the test split differs from the training source in size, channels or classes");
  metrics::ClassifierOptions o;
  o.resolution = train->resolution(), o.channels = train->channels(), o.n_classes = train->num_classes();
  o.width = opt.width, o.feature_dim = opt.feature_dim;
  ClassifierTrainResult res;
  res.net = seeded_net(o, opt.seed);

  // The tested images must be able to show that the classifier beats chance.
  const int64_t k = train->num_classes(), min_test = metrics::min_images_to_beat_chance(k);
  if (test && test->size() < min_test)
    fail("classifier train: the test split has ", test->size(), " images; telling a classifier of ", k,
         " classes from chance takes at least ", min_test, " (one mistake allowed at a binomial p < ",
         metrics::kChanceAlpha, ")");
  // Held-out split: image i is held out when floor((i + 1) h) > floor(i h), spread evenly.
  double h = opt.holdout;
  if (!test) {
    if (!(h > 0 && h < 1)) fail("classifier train: holdout ", h, "; expected a fraction in (0, 1)");
    const int64_t n = train->size();
    if (n < min_test + 2)
      fail("classifier train: ", n, " images of ", k, " classes; a held-out split that can tell a classifier from "
           "chance needs ", min_test, " of them (one mistake allowed at a binomial p < ", metrics::kChanceAlpha,
           ") and training at least 2 more: give at least ", min_test + 2, " images, or a source with a test split");
    const auto held_by = [n](double f) { return static_cast<int64_t>(std::floor(static_cast<double>(n) * f)); };
    if (held_by(h) < min_test) {
      const double wider = (static_cast<double>(min_test) + 0.5) / static_cast<double>(n);
      log << "note: --holdout " << h << " holds out " << held_by(h) << " of " << n << " images, too few to tell a "
          << "classifier of " << k << " classes from chance; holding out " << held_by(wider) << " instead\n";
      h = wider;
    }
  }
  std::vector<int64_t> fit, held;
  for (int64_t i = 0; i < train->size(); ++i) {
    const bool out = !test && std::floor((i + 1) * h) > std::floor(i * h);
    (out ? held : fit).push_back(i);
  }
  if (!test && held.empty())
    fail("classifier train: holdout ", h, " of ", train->size(), " images leaves no held-out images");
  // A small folder (a first try of one's data) trains in one batch of all its images; BN
  // needs two.
  if (fit.size() < 2) fail("classifier train: ", fit.size(), " training images; expected at least 2");
  const int64_t batch = std::min<int64_t>(opt.batch, static_cast<int64_t>(fit.size()));
  if (batch < opt.batch) log << "note: " << fit.size() << " training images: batch " << batch << " instead of " << opt.batch << "\n";
  res.n_train = static_cast<int64_t>(fit.size());
  res.test_split = test ? "test split" : "held-out split";

  torch::optim::Adam adam(res.net->parameters(), torch::optim::AdamOptions(opt.lr));
  const int64_t steps_per_epoch = res.n_train / batch;
  const int64_t total = opt.steps > 0 ? opt.steps : std::max(steps_per_epoch * opt.epochs, opt.min_steps);
  const int64_t epochs = (total + steps_per_epoch - 1) / steps_per_epoch;
  if (opt.steps == 0 && total > steps_per_epoch * opt.epochs)
    log << "note: " << opt.epochs << " epochs of " << res.n_train << " images are " << steps_per_epoch * opt.epochs
        << " steps of batch " << batch << "; training " << total << " steps (" << epochs << " epochs) instead\n";
  auto gen = at::detail::createCPUGenerator(opt.seed ^ 0x636c6173736966ull);  // "classif"
  const torch::Tensor fit_t = torch::tensor(fit, torch::kLong);
  const auto t0 = std::chrono::steady_clock::now();
  int64_t step = 0;
  for (int64_t e = 0; step < total; ++e) {
    res.net->train();
    const torch::Tensor order = fit_t.index_select(0, torch::randperm(res.n_train, gen));
    double loss_sum = 0;
    int64_t losses = 0;
    for (int64_t b = 0; b < steps_per_epoch && step < total; ++b, ++step) {
      auto [x, y] = read_batch(*train, order.data_ptr<int64_t>() + b * batch, batch, opt.workers);
      if (opt.flip) {  // drawn for the whole batch, so the stream does not depend on skipped images
        const torch::Tensor flip = (torch::rand({batch}, gen) < 0.5).view({-1, 1, 1, 1});
        x = torch::where(flip.narrow(0, 0, x.size(0)), x.flip({3}), x);
      }
      if (x.size(0) == 0) continue;  // every image of this batch was undecodable
      const double lr = opt.lr * 0.5 * (1 + std::cos(M_PI * static_cast<double>(step) / static_cast<double>(total)));
      for (auto& g : adam.param_groups()) static_cast<torch::optim::AdamOptions&>(g.options()).lr(lr);
      const torch::Tensor loss = torch::nn::functional::cross_entropy(res.net->forward(x).second, y);
      adam.zero_grad();
      loss.backward();
      adam.step();
      loss_sum += loss.item<double>();
      ++losses;
      // A diverged classifier would be written and then score every run as NaN.
      if (!std::isfinite(loss_sum))
        fail("classifier train: the loss became ", loss_sum, " in epoch ", e + 1, " (step ", step + 1,
             "); nothing written. Lower --lr (now ", opt.lr, ")");
    }
    res.epoch_loss.push_back(loss_sum / static_cast<double>(std::max<int64_t>(1, losses)));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    log << "epoch " << e + 1 << "/" << epochs << " (step " << step << "/" << total << "): loss " << std::setprecision(4)
        << res.epoch_loss.back() << " (" << std::fixed << std::setprecision(1) << s << " s)\n" << std::defaultfloat
        << std::flush;
  }
  res.steps = step;
  const ClassifierScore sc = test ? classifier_score(res.net, *test, {}, 256, opt.workers)
                                  : classifier_score(res.net, *train, held, 256, opt.workers);
  res.test_hits = sc.hits, res.n_test = sc.n, res.chance = sc.chance();
  res.test_accuracy = static_cast<double>(sc.hits) / static_cast<double>(sc.n);
  return res;
}

}  // namespace hamgan
