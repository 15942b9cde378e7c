#include "gan/eval/score_run.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <optional>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "metrics/line_plot.h"

namespace hamgan::eval {

namespace fs = std::filesystem;

std::vector<std::pair<int64_t, std::string>> run_checkpoints(const std::string& run_dir) {
  const std::string dir = (fs::path(run_dir) / "checkpoints").string();
  if (!fs::is_directory(dir)) fail("--run ", run_dir, ": no checkpoints/ directory (expected a `hamgan train --out` directory)");
  static const std::regex re(R"(ckpt_(\d+)\.pt)");
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& p : list_checkpoints(dir)) {
    std::smatch m;
    const std::string name = fs::path(p).filename().string();
    if (std::regex_match(name, m, re)) out.push_back({std::stoll(m[1].str()), p});
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<int64_t, std::string>> unscored_checkpoints(const std::string& run_dir) {
  const auto done = eval::scored_iterations(eval::read_fid_csv((fs::path(run_dir) / "fid.csv").string()));
  std::vector<std::pair<int64_t, std::string>> out;
  for (const auto& c : run_checkpoints(run_dir))
    if (!done.count(c.first)) out.push_back(c);
  return out;
}

void plot_run(const std::string& run_dir) {
  const auto rows = eval::read_fid_csv((fs::path(run_dir) / "fid.csv").string());
  if (rows.empty()) return;
  std::vector<double> xs, ys;
  for (const auto& r : rows) xs.push_back(static_cast<double>(r.iteration)), ys.push_back(r.fid);
  metrics::write_line_plot((fs::path(run_dir) / "fid.png").string(), xs, ys);
}

std::vector<eval::FidRow> score_run(const RunScoreOptions& opt, const Reference& ref,
                                    const metrics::InceptionExtractor& net, std::ostream& log,
                                    std::vector<std::string>* damaged) {
  const std::string csv = (fs::path(opt.run_dir) / "fid.csv").string();
  std::vector<eval::FidRow> added;
  bool said_kid = false;
  for (const auto& [iteration, path] : unscored_checkpoints(opt.run_dir)) {
    if (!ref.pool.defined() && !said_kid) log << "note: " << ref.no_kid_why << "; the kid column stays empty\n";
    said_kid = true;
    log << "scoring " << path << " (" << opt.n << " samples)\n" << std::flush;
    std::optional<CheckpointData> c;
    try {
      c = load_checkpoint(path, opt.sampler.device);
    } catch (const Error& e) {  // one damaged checkpoint must not hide the scores of the rest
      log << "warning: skipping " << path << ": " << e.what() << "\n" << std::flush;
      if (damaged) damaged->push_back(path);
      continue;
    }
    const sample::Sampler s(*c, opt.sampler, log);
    const Score sc = score_samples(s, opt.n, net, ref, true, opt.quantize);
    eval::FidRow row;
    row.iteration = iteration;
    row.fid = sc.fid, row.is = sc.is, row.kid = sc.kid, row.n = sc.n, row.seconds = sc.seconds;
    eval::append_fid_row(csv, row);
    added.push_back(row);
    plot_run(opt.run_dir);
    log << "iteration " << iteration << ": FID " << std::setprecision(6) << sc.fid << ", IS " << sc.is << ", KID "
        << sc.kid << " (" << std::fixed << std::setprecision(1) << sc.seconds << " s)\n"
        << std::defaultfloat << std::flush;
  }
  if (added.empty() && (!damaged || damaged->empty())) log << "every checkpoint already has a row in " << csv << "\n";
  plot_run(opt.run_dir);
  return added;
}

}  // namespace hamgan::eval
