// What the trainer reports: a progress line (refreshed in place on a terminal, plain lines
// otherwise) and one JSON object per report in metrics.jsonl.
#pragma once
#include <chrono>
#include <fstream>
#include <ostream>
#include <string>

#include "gan/train/train_stats.h"

namespace hamgan {

class Progress {
 public:
  // `metrics_path` empty: no log file. Appends (a resumed run continues the file).
  Progress(std::ostream& out, const std::string& metrics_path);
  void report(const TrainStats& m);
  // A message on its own line (ends an in-place line first).
  void message(const std::string& text);
  void finish();

 private:
  std::ostream& out_;
  std::string metrics_;  // appended through io::append_to_file: a failed write is an error
  bool tty_, open_line_ = false;
};

}  // namespace hamgan
