#include "gan/eval/rank_share.h"

#include <algorithm>
#include <exception>
#include <iostream>

#include "gan/sample/plan.h"
#include "gan/sample/sample_batches.h"

namespace hamgan::eval {

namespace {

constexpr char kSample[] = "sample ";

// The items of the batches `which` accepts, in order.
template <class Which>
std::vector<sample::SampleItem> batches_of(const std::vector<sample::SampleItem>& items, int64_t batch, Which which) {
  std::vector<sample::SampleItem> part;
  const int64_t n = static_cast<int64_t>(items.size());
  for (int64_t b = 0; b * batch < n; ++b)
    if (which(b)) part.insert(part.end(), items.begin() + b * batch, items.begin() + std::min(n, (b + 1) * batch));
  return part;
}

// Rows [b * batch, ...) of `all` from the consecutive rows of `part`, for each batch `which` takes.
template <class Which>
void place(torch::Tensor& all, const torch::Tensor& part, int64_t batch, Which which) {
  const int64_t n = all.size(0);
  int64_t from = 0;
  for (int64_t b = 0; b * batch < n; ++b) {
    if (!which(b)) continue;
    const int64_t rows = std::min(n, (b + 1) * batch) - b * batch;
    all.narrow(0, b * batch, rows).copy_(part.narrow(0, from, rows));
    from += rows;
  }
}

}  // namespace

std::string sample_word(const std::string& checkpoint) { return kSample + checkpoint; }

std::string sampled_checkpoint(const std::string& word) {
  return word.rfind(kSample, 0) == 0 ? word.substr(sizeof kSample - 1) : std::string();
}

metrics::Features shared_sample_features(const CheckpointData* c, int64_t n, const sample::SamplerOptions& opt,
                                         const metrics::FeatureNet& net, bool quantize, bool logits,
                                         const EvalRanks& ranks, std::ostream& warn) {
  if (ranks.lead()) ranks.tell(sample_word(c->path));
  const int64_t batch = opt.batch, batches = (n + batch - 1) / batch, world = ranks.world;
  const auto mine = [&](int64_t b) { return b % world == ranks.rank; };
  std::vector<sample::SampleItem> items;
  std::optional<sample::Sampler> s;
  metrics::Features own;
  std::exception_ptr failed;
  try {
    if (!c) throw std::runtime_error("the checkpoint was not loaded");
    items = sample::all_classes_plan(c->config.model.n_classes, n);  // score_samples's
    s.emplace(*c, opt, warn);
    const std::vector<sample::SampleItem> part = batches_of(items, batch, mine);
    if (!part.empty()) own = metrics::extract_features(net, sample::sample_batches(*s, part, net, quantize), logits, ranks.lead());
  } catch (const std::exception& e) {
    failed = std::current_exception();
    own = {};
    if (!ranks.lead())
      std::cerr << "rank " << ranks.rank << ": its share of the score's samples is left to rank 0: " << e.what() << "\n";
  }
  // Which batches came, and each rank's feature widths (a rank with no batch has none).
  torch::Tensor head = torch::zeros({batches + 2 * world}, torch::kDouble);
  const bool sent = own.pool.defined();
  if (sent) {
    for (int64_t b = 0; b < batches; ++b)
      if (mine(b)) head[b] = 1;
    head[batches + 2 * ranks.rank] = static_cast<double>(own.pool.size(1));
    head[batches + 2 * ranks.rank + 1] = logits ? static_cast<double>(own.logits.size(1)) : 0.0;
  }
  ranks.meet();  // the ranks' shares take unequal times; the sums below are timed collectives
  ranks.sum(head);
  const torch::Tensor widths = std::get<0>(head.narrow(0, batches, 2 * world).view({world, 2}).max(0));
  const int64_t dim = static_cast<int64_t>(widths[0].item<double>());
  const int64_t ldim = static_cast<int64_t>(widths[1].item<double>());
  torch::Tensor pool = torch::zeros({n, dim}, torch::kFloat), lg = torch::zeros({n, ldim}, torch::kFloat);
  if (sent) {
    place(pool, own.pool, batch, mine);
    if (logits) place(lg, own.logits, batch, mine);
  }
  if (dim > 0) ranks.sum(pool);
  if (ldim > 0) ranks.sum(lg);
  if (!ranks.lead()) return {};
  if (failed) std::rethrow_exception(failed);
  // Batches another rank could not send: sampled here, as one rank would have.
  const auto missing = [&](int64_t b) { return head[b].item<double>() == 0; };
  const std::vector<sample::SampleItem> rest = batches_of(items, batch, missing);
  if (!rest.empty()) {
    const metrics::Features f = metrics::extract_features(net, sample::sample_batches(*s, rest, net, quantize), logits);
    if (dim == 0) pool = torch::zeros({n, f.pool.size(1)}, torch::kFloat);
    if (logits && ldim == 0) lg = torch::zeros({n, f.logits.size(1)}, torch::kFloat);
    place(pool, f.pool, batch, missing);
    if (logits) place(lg, f.logits, batch, missing);
  }
  metrics::Features all;
  all.pool = pool;
  if (logits) all.logits = lg;
  std::vector<int64_t> y;
  for (const auto& it : items) y.push_back(it.cls);
  all.labels = torch::tensor(y, torch::kLong);
  return all;
}

}  // namespace hamgan::eval
