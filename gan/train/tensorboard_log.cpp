#include "gan/train/tensorboard_log.h"

#include <cmath>

#include "io/png.h"

namespace hamgan {

namespace {
thread_local TensorBoardLog* active = nullptr;
}  // namespace

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

void TensorBoardLog::train_stats(const TrainStats& m) {
  if (!writer_) return;
  // The keys and values of progress.cpp's metrics.jsonl row, but its iteration (the step).
  std::vector<std::pair<std::string, double>> v = {{"train/wall_s", m.wall_s}, {"train/d_loss", m.d_loss()}};
  const std::vector<StatName>& names = stat_names();
  for (size_t j = 0; j < names.size(); ++j) v.emplace_back(std::string("train/") + names[j].key, m.stat[j]);
  v.insert(v.end(), {{"train/g_lr", m.g_lr}, {"train/d_lr", m.d_lr}, {"train/it_s", m.it_s}, {"train/img_s", m.img_s}});
  scalars(m.iteration, v);
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

TensorBoardLog* active_tensorboard_log() { return active; }

ActiveTensorBoardLog::ActiveTensorBoardLog(TensorBoardLog& log) : previous_(active) {
  active = log.enabled() ? &log : nullptr;
}
ActiveTensorBoardLog::~ActiveTensorBoardLog() { active = previous_; }

}  // namespace hamgan
