// What the training loop calls with a checkpoint it has just written at an eval point: the
// in-training scorer (gan/eval/train_scorer.h) plugs in here, so that neither gan/train nor
// gan/eval needs the other. Called on every rank at every eval.every iteration and at the end;
// `say` prints a line between the progress lines; `view` is the loop's TensorBoard log (null
// when the run writes none), where the scores go beside train/<key>; `ranks` are the run's
// data-parallel ranks, which sample a score's images together (gan/eval/rank_share.h).
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <string>

#include "core/phase_progress.h"
#include "io/tensorboard_log.h"

namespace hamgan {

// The ranks of a run as a score sees them (gan/train/distributed.h provides them): rank 0
// decides what is scored and writes every output; the others stand by for its word, for as long
// as it takes (not the collectives' timeout), and sample their share.
struct EvalRanks {
  int rank = 0;
  int world = 1;
  std::function<void(torch::Tensor&)> sum;       // in place over the ranks; a collective
  std::function<void(const std::string&)> tell;  // rank 0: its next word to the others
  std::function<std::string()> hear;             // the others: rank 0's next word
  std::function<void()> meet;                    // every rank: returns once all have come
  bool lead() const { return rank == 0; }
};

using EvalHook = std::function<void(int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say,
                                    TensorBoardLog* view, const EvalRanks& ranks)>;

}  // namespace hamgan
