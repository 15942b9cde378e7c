#include "gan/train/train_stats_plot.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/metrics_log.h"
#include "io/png.h"
#include "plot/line_plot.h"

namespace hamgan {

namespace fs = std::filesystem;

void plot_train_stats(const std::string& run_dir) {
  const auto recs = read_train_stats_log((fs::path(run_dir) / "metrics.jsonl").string());
  if (recs.empty()) return;
  std::vector<double> xs;
  const auto column = [&](const char* key) {
    std::vector<double> v;
    for (const auto& r : recs) {
      const auto it = r.find(key);
      v.push_back(it == r.end() ? std::nan("") : it->second);
    }
    return v;
  };
  xs = column("iteration");
  plot::PlotStyle st;
  st.y_label = "LOSS";
  const torch::Tensor losses =
      plot::line_plot(xs, {{"D REAL", column("d_loss_real")}, {"D FAKE", column("d_loss_fake")}, {"G", column("g_loss")}}, st);
  st.y_label = "MEAN D OUTPUT";
  const torch::Tensor outputs = plot::line_plot(xs, {{"D(X)", column("d_real")}, {"D(G(Z))", column("d_fake")}}, st);
  write_png((fs::path(run_dir) / "metrics.png").string(), plot::stack_panels({losses, outputs}));
}

void redraw_train_stats_plot(const std::string& run_dir, const std::function<void(const std::string&)>& warn) {
  static bool warned = false;
  try {
    plot_train_stats(run_dir);
  } catch (const std::exception& e) {
    if (!warned) warn(std::string("warning: metrics.png not drawn: ") + e.what());
    warned = true;
  }
}

}  // namespace hamgan
