// What a score is made with, from the evaluation's settings and (for a checkpoint's samples)
// the GAN's config: the feature network, the sample count and the reference the samples are
// scored against. Every form of gan/eval/evaluate.h and the run scorer (gan/eval/run_scorer.h)
// make theirs here, so that a run's scores and a checkpoint's compare.
#pragma once
#include <memory>

#include "gan/config/config.h"
#include "gan/eval/eval_spec.h"
#include "gan/eval/reference.h"
#include "metrics/feature_net.h"

namespace hamgan::eval {

// The feature network of `s` (--features, recognised from the file: metrics/feature_nets.h), else
// Inception, whose weights may come from `stored`, a checkpoint's or the run's config.
std::unique_ptr<metrics::FeatureNet> make_feature_net(const EvalSettings& s, const Config* stored = nullptr);
// How to read the reference of `s` with n images, at the resolution of the classifier, else of
// `cfg`, else 32.
ReferenceOptions reference_options(const EvalSettings& s, int64_t n, const Config* cfg, const metrics::FeatureNet& net);
// -n of a form that draws samples, before anything is read: at most kMaxFidSamples.
void check_sample_count(const EvalSettings& s);
// The samples drawn: -n, else eval.fid_n of the checkpoint's config.
int64_t sample_count(const EvalSettings& s, const Config& stored);
// The reference that `n` samples are scored against: --real-n real images, else as many as the
// samples (or all, if fewer), read as the checkpoint's GAN reads them (its resolution and channels).
// `used`: the options it was read with.
Reference samples_reference(const EvalSettings& s, int64_t n, const Config& stored, const metrics::FeatureNet& net,
                            ReferenceOptions* used = nullptr);

}  // namespace hamgan::eval
