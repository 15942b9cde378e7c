// What the training loop calls with a checkpoint it has just written at an eval point: the
// in-training scorer (gan/eval/train_scorer.h) plugs in here, so that neither gan/train nor
// gan/eval needs the other. Called on the lead rank at every eval.every iteration and at the
// end; `say` prints a line between the progress lines; `view` is the loop's TensorBoard log
// (null when the run writes none), where the scores go beside train/<key>.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "core/phase_progress.h"
#include "io/tensorboard_log.h"

namespace hamgan {

using EvalHook = std::function<void(int64_t iteration, const std::string& checkpoint, const PhaseProgress::Say& say,
                                    TensorBoardLog* view)>;

}  // namespace hamgan
