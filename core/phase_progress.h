// Progress of a phase that may take long (standing statistics, feature extraction, sampling,
// data scanning) without noise when it is short: nothing for its first `quiet_s` seconds, then
// a line "<what>: <done>/<total> <unit> (<s> s)" at most every `every_s`, and a closing line
// if anything was printed (a 128 px run on a CPU takes minutes in such phases).
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace hamgan {

class PhaseProgress {
 public:
  using Say = std::function<void(const std::string&)>;
  // A Say that writes each line to stderr (progress stays out of stdout's results).
  static void to_stderr(const std::string& line);
  // total <= 0: unknown (lines show the count only). A null `say` prints nothing.
  PhaseProgress(Say say, std::string what, int64_t total, std::string unit, double quiet_s = 2,
                double every_s = 5);
  ~PhaseProgress();  // the closing line, if a line was printed
  void add(int64_t n = 1);  // n more done; may print
  int64_t done() const { return done_; }
  double seconds() const;

 private:
  void line(const char* suffix);
  using clock = std::chrono::steady_clock;
  Say say_;
  std::string what_, unit_;
  int64_t total_, done_ = 0;
  double quiet_s_, every_s_;
  clock::time_point t0_, last_;
  bool printed_ = false;
};

}  // namespace hamgan
