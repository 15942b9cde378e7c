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

void Progress::report(const ProgressRecord& r) {
  char line[320];
  double eta = r.it_s > 0 ? (r.total - r.iteration) / r.it_s : -1;
  // A time-limited run stops at its limit, whichever comes first.
  if (r.time_left_s >= 0 && (eta < 0 || r.time_left_s < eta)) eta = r.time_left_s;
  std::snprintf(line, sizeof line,
                "it %lld/%lld  %.2f it/s  %.1f img/s  ETA %s  D %.4f (real %.4f fake %.4f)  "
                "G %.4f  D(x) %.3f  D(G(z)) %.3f",
                static_cast<long long>(r.iteration), static_cast<long long>(r.total), r.it_s,
                r.img_s, eta_str(eta).c_str(), r.d_loss_real + r.d_loss_fake, r.d_loss_real,
                r.d_loss_fake, r.g_loss, r.d_real, r.d_fake);
  if (tty_) {
    out_ << "\r" << line << "\x1b[K" << std::flush;
    open_line_ = true;
  } else {
    out_ << line << "\n" << std::flush;
  }
  if (!metrics_.empty()) {
    char json[512];
    std::snprintf(json, sizeof json,
                  "{\"iteration\": %lld, \"wall_s\": %.3f, \"d_loss\": %.9g, \"d_loss_real\": %.9g, "
                  "\"d_loss_fake\": %.9g, \"g_loss\": %.9g, \"d_real\": %.9g, \"d_fake\": %.9g, "
                  "\"g_lr\": %.9g, \"d_lr\": %.9g, \"it_s\": %.4f, \"img_s\": %.3f}",
                  static_cast<long long>(r.iteration), r.wall_s, r.d_loss_real + r.d_loss_fake,
                  r.d_loss_real, r.d_loss_fake, r.g_loss, r.d_real, r.d_fake, r.g_lr, r.d_lr,
                  r.it_s, r.img_s);
    io::append_to_file(metrics_, std::string(json) + "\n", /*sync=*/false);
  }
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
