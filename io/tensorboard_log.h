// TensorBoard's view of a training run (train.tensorboard): <run>/tensorboard/ holds one events
// file per session of the run, on one step axis, the iteration: every metrics.jsonl scalar as
// train/<key> (flushed with each report, gan/train/reporter.h), the sample grids as the image
// `samples`, and the scores of the run's checkpoints as eval/<metric>, which the loop's scorer
// writes into the log the loop hands it (the real test images' line beside them goes to
// tensorboard/real_test, gan/eval/score_events.h). Only the lead rank writes.
// `tensorboard --logdir runs/` shows every run under runs/.
//
// A resumed session starts at the iteration after its checkpoint; what a killed session wrote
// past that checkpoint is written again by this one. Its file therefore begins with a SessionLog
// START at that step, on which TensorBoard discards the earlier files' events at that step and
// later (io/tfevents_writer.h): no step shown twice, none lost.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/tfevents_writer.h"

namespace hamgan {

class TensorBoardLog {
 public:
  // Writes nothing (every call returns at once) unless `enabled`. Events go to run_dir/tensorboard,
  // or with `sub` to its folder of that name, which TensorBoard shows as a run of its own.
  TensorBoardLog(std::string run_dir, bool enabled, std::string sub = "");
  // The session's new events file, from `first_step` on (the iteration after the resumed one).
  void start(int64_t first_step);
  // A new events file without the restart marker: its steps add to the earlier files'.
  void open();
  // Scalars under their own tags at `step`; non-finite values are left out. Flushed.
  void scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values);
  // An H x W x C uint8 image (io/png.h) at `step`; flushed.
  void image(int64_t step, const std::string& tag, const torch::Tensor& hwc);
  bool enabled() const { return writer_ != nullptr; }
  const std::string& dir() const { return dir_; }  // the events folder

 private:
  const std::string dir_;
  const bool on_;
  std::unique_ptr<io::TfEventsWriter> writer_;
};

}  // namespace hamgan
