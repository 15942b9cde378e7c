#include "io/tensorboard_log.h"

#include <cmath>

#include "io/png.h"

namespace hamgan {

TensorBoardLog::TensorBoardLog(std::string run_dir, bool enabled, std::string sub)
    : dir_(run_dir + "/tensorboard" + (sub.empty() ? "" : "/" + sub)), on_(enabled) {}

void TensorBoardLog::start(int64_t first_step) {
  open();
  if (!writer_) return;
  writer_->session_start(first_step);
  writer_->flush();
}

void TensorBoardLog::open() {
  if (on_) writer_ = std::make_unique<io::TfEventsWriter>(dir_);
}

void TensorBoardLog::scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values) {
  if (!writer_) return;
  std::vector<std::pair<std::string, double>> finite;
  for (const auto& v : values)
    if (std::isfinite(v.second)) finite.push_back(v);
  writer_->scalars(step, finite);
  writer_->flush();
}

void TensorBoardLog::image(int64_t step, const std::string& tag, const torch::Tensor& hwc) {
  if (!writer_ || !hwc.defined()) return;
  io::tfevents::Image im;
  im.height = hwc.size(0), im.width = hwc.size(1), im.channels = hwc.size(2);
  im.png = encode_png(hwc, writer_->path() + " (image " + tag + ")");
  writer_->image(step, tag, im);
  writer_->flush();
}

}  // namespace hamgan
