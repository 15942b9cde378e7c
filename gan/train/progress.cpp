#include "gan/train/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "io/atomic_file.h"

namespace hamgan {

namespace {
std::string eta_str(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "?";
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  return buf;
}
}  // namespace

Progress::Progress(std::ostream& out, const std::string& metrics_path)
    : out_(out), tty_(&out == &std::cout && ::isatty(STDOUT_FILENO)) {
  if (!metrics_path.empty()) {
    io::append_to_file(metrics_path, "", /*sync=*/false);  // fails now if it cannot be written
    metrics_ = metrics_path;
  }
}

void Progress::report(const TrainStats& m) {
  const auto& st = m.stat;
  const auto& n = kStepStatNames;
  char line[320];
  double eta = m.it_s > 0 ? (m.total - m.iteration) / m.it_s : -1;
  // A time-limited run stops at its limit, whichever comes first.
  if (m.time_left_s >= 0 && (eta < 0 || m.time_left_s < eta)) eta = m.time_left_s;
  std::snprintf(line, sizeof line,
                "it %lld/%lld  %.2f it/s  %.1f img/s  ETA %s  D %.4f (%s %.4f %s %.4f)  %s %.4f  %s %.3f  %s %.3f",
                static_cast<long long>(m.iteration), static_cast<long long>(m.total), m.it_s, m.img_s,
                eta_str(eta).c_str(), m.d_loss(), n[kDLossReal].label, st[kDLossReal], n[kDLossFake].label,
                st[kDLossFake], n[kGLoss].label, st[kGLoss], n[kDReal].label, st[kDReal], n[kDFake].label,
                st[kDFake]);
  if (tty_) {
    out_ << "\r" << line << "\x1b[K" << std::flush;
    open_line_ = true;
  } else {
    out_ << line << "\n" << std::flush;
  }
  if (metrics_.empty()) return;
  std::string json;
  const auto add = [&json](const char* key, const char* fmt, double v) {
    char buf[96];
    std::snprintf(buf, sizeof buf, fmt, key, v);
    json += json.empty() ? "{" : ", ";
    json += buf;
  };
  add("iteration", "\"%s\": %.0f", static_cast<double>(m.iteration));
  add("wall_s", "\"%s\": %.3f", m.wall_s);
  add("d_loss", "\"%s\": %.9g", m.d_loss());
  const std::vector<StatName>& names = stat_names();
  for (size_t j = 0; j < names.size(); ++j) add(names[j].key, "\"%s\": %.9g", st[j]);
  add("g_lr", "\"%s\": %.9g", m.g_lr);
  add("d_lr", "\"%s\": %.9g", m.d_lr);
  add("it_s", "\"%s\": %.4f", m.it_s);
  add("img_s", "\"%s\": %.3f", m.img_s);
  io::append_to_file(metrics_, json + "}\n", /*sync=*/false);
}

void Progress::message(const std::string& text) {
  if (open_line_) out_ << "\n";
  open_line_ = false;
  out_ << text << "\n" << std::flush;
}

void Progress::finish() {
  if (open_line_) out_ << "\n" << std::flush;
  open_line_ = false;
}

}  // namespace hamgan
