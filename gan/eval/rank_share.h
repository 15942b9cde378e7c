// A checkpoint's samples featurised by every rank of a data-parallel run, as StyleGAN2-ADA's
// metrics are: the sample plan's batches (gan/sample/plan.h, in the sampler's batch size) are
// dealt round-robin, batch b to rank b % world; each rank samples and featurises its own, and a
// sum over the ranks of rows that are zero but for each rank's own gives rank 0 every feature
// in plan order. The batches are those of a one-rank score and an image depends on neither its
// batch nor its device (gan/sample/sampler.h), so the features, and so the scores, are one
// rank's. A rank that cannot take part (its checkpoint unreadable, an error while sampling)
// sends none of its batches and says why; rank 0 samples them itself.
#pragma once
#include <ostream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/sample/sampler.h"
#include "metrics/extract.h"

namespace hamgan::eval {

// Called by every rank of `ranks` together. Rank 0 first tells the others "sample <c->path>"
// (what they hear before they call it), and gets the features of the n samples, with their
// classes as labels; the other ranks get nothing. `c`: null on a rank that could not load the
// checkpoint (rank 0 must have it). An error of rank 0's is thrown once the others are released.
metrics::Features shared_sample_features(const CheckpointData* c, int64_t n, const sample::SamplerOptions& opt,
                                         const metrics::FeatureNet& net, bool quantize, bool logits,
                                         const EvalRanks& ranks, std::ostream& warn);

// What rank 0 tells the others when it has no more scores for them at this eval point.
constexpr char kScoresDone[] = "done";
// The word rank 0 tells before a shared score, and the checkpoint it names ("" : another word).
std::string sample_word(const std::string& checkpoint);
std::string sampled_checkpoint(const std::string& word);

}  // namespace hamgan::eval
