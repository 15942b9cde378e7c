// What the trainer reports: a progress line (refreshed in place on a terminal, plain lines
// otherwise) and one JSON object per report in metrics.jsonl.
#pragma once
#include <chrono>
#include <fstream>
#include <ostream>
#include <string>

namespace hamgan {

struct ProgressRecord {
  int64_t iteration = 0, total = 0;
  double wall_s = 0;         // since this process started training
  double it_s = 0, img_s = 0;
  double d_loss_real = 0, d_loss_fake = 0, g_loss = 0, d_real = 0, d_fake = 0;
  double g_lr = 0, d_lr = 0;
  double time_left_s = -1;  // until train.time_limit_minutes; negative: no limit
};

class Progress {
 public:
  // `metrics_path` empty: no log file. Appends (a resumed run continues the file).
  Progress(std::ostream& out, const std::string& metrics_path);
  void report(const ProgressRecord& r);
  // A message on its own line (ends an in-place line first).
  void message(const std::string& text);
  void finish();

 private:
  std::ostream& out_;
  std::string metrics_;  // appended through io::append_to_file: a failed write is an error
  bool tty_, open_line_ = false;
};

}  // namespace hamgan
