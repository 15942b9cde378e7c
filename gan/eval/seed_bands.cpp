#include "gan/eval/seed_bands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "io/atomic_file.h"

namespace hamgan::eval {

namespace {

// The first line of every figure: what recognises an earlier one (io/output_path.h).
const char* const kFirstLine = "<!-- hamgan compare: mean and sd over seeds -->";
const char* const kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double W = 460, H = 300, kPadL = 56, kPadR = 12, kPadT = 28, kPadB = 40;

std::string num(const char* spec, double x) {
  char b[64];
  std::snprintf(b, sizeof b, spec, x);
  return b;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : std::string(1, c);
  return out;
}

std::string text(double x, double y, const std::string& anchor, const std::string& body, bool bold = false) {
  return "<text x=\"" + num("%.1f", x) + "\" y=\"" + num("%.1f", y) + "\" text-anchor=\"" + anchor + "\"" +
         (bold ? " font-weight=\"bold\"" : "") + ">" + escaped(body) + "</text>\n";
}

// One panel at x offset x0: axes, ticks, and per group its band and mean line.
std::string panel(double x0, const std::string& title, const std::vector<std::vector<BandPoint>>& curves) {
  double xa = INFINITY, xb = -INFINITY, ya = INFINITY, yb = -INFINITY;
  for (const auto& c : curves)
    for (const BandPoint& p : c) {
      const double sd = std::isnan(p.value.sd) ? 0 : p.value.sd;
      xa = std::min(xa, static_cast<double>(p.iteration)), xb = std::max(xb, static_cast<double>(p.iteration));
      ya = std::min(ya, p.value.mean - sd), yb = std::max(yb, p.value.mean + sd);
    }
  if (xa > xb) return text(x0 + W / 2, H / 2, "middle", title + ": no data");
  if (xb == xa) xb = xa + 1;
  if (yb == ya) yb = ya + 1;
  const auto sx = [&](double x) { return x0 + kPadL + (x - xa) / (xb - xa) * (W - kPadL - kPadR); };
  const auto sy = [&](double y) { return kPadT + (yb - y) / (yb - ya) * (H - kPadT - kPadB); };
  std::string g = text(x0 + W / 2, 16, "middle", title, true);
  g += "<rect x=\"" + num("%.1f", x0 + kPadL) + "\" y=\"" + num("%.1f", kPadT) + "\" width=\"" +
       num("%.1f", W - kPadL - kPadR) + "\" height=\"" + num("%.1f", H - kPadT - kPadB) +
       "\" fill=\"none\" stroke=\"#444\"/>\n";
  for (int i = 0; i < 5; ++i) {  // axis ticks
    const double y = ya + (yb - ya) * i / 4, x = xa + (xb - xa) * i / 4;
    g += text(x0 + kPadL - 4, sy(y) + 4, "end", num("%.3g", y));
    g += text(sx(x), H - kPadB + 14, "middle", num("%.0f", x));
  }
  g += text(x0 + W / 2, H - 8, "middle", "iteration");
  for (size_t k = 0; k < curves.size(); ++k) {
    const auto& pts = curves[k];
    if (pts.empty()) continue;
    const std::string colour = kColours[k % 10];
    std::string band;
    for (const BandPoint& p : pts)
      if (!std::isnan(p.value.sd)) band += num("%.1f", sx(p.iteration)) + "," + num("%.1f", sy(p.value.mean + p.value.sd)) + " ";
    for (auto p = pts.rbegin(); p != pts.rend(); ++p)
      if (!std::isnan(p->value.sd)) band += num("%.1f", sx(p->iteration)) + "," + num("%.1f", sy(p->value.mean - p->value.sd)) + " ";
    if (!band.empty()) {
      band.pop_back();
      g += "<polygon fill=\"" + colour + "\" fill-opacity=\"0.18\" stroke=\"none\" points=\"" + band + "\"/>\n";
    }
    std::string line;
    for (const BandPoint& p : pts) line += num("%.1f", sx(p.iteration)) + "," + num("%.1f", sy(p.value.mean)) + " ";
    line.pop_back();
    g += "<polyline fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.8\" points=\"" + line + "\"/>\n";
  }
  return g;
}

}  // namespace

std::vector<std::vector<BandPoint>> seed_curves(const std::vector<SeedGroup>& groups, const std::string& metric,
                                                int64_t from) {
  std::vector<std::vector<BandPoint>> out;
  for (const SeedGroup& g : groups) {
    std::map<int64_t, std::vector<double>> at;  // iteration -> one value per seed that has it
    for (const auto& [seed, rows] : g.seeds)
      for (const ScoreRow& r : rows)
        if (r.iteration >= from) at[r.iteration].push_back(r.value(metric));
    std::vector<BandPoint> pts;
    for (const auto& [it, values] : at) {
      if (values.size() != g.seeds.size()) continue;  // not every seed scored it
      const MeanSd m = mean_sd(values);
      if (!std::isnan(m.mean)) pts.push_back({it, m});
    }
    out.push_back(std::move(pts));
  }
  return out;
}

const io::OutputKind& seed_bands_output() {
  static const io::OutputKind kind = io::text_output("the figure of an earlier `hamgan compare --seeds`", {kFirstLine});
  return kind;
}

void write_seed_bands(const std::vector<SeedGroup>& groups, const std::string& svg_path, int64_t from) {
  io::check_output_path(svg_path, seed_bands_output());
  std::string body = panel(0, "class accuracy (mean ± sd over seeds)", seed_curves(groups, "class_acc", from));
  body += panel(W, "FID (mean ± sd over seeds)", seed_curves(groups, "fid", from));
  for (size_t i = 0; i < groups.size(); ++i) {  // legend under the panels
    const double x = 10 + static_cast<double>(i % 5) * 180, y = H + 14 + static_cast<double>(i / 5) * 18;
    body += "<rect x=\"" + num("%.0f", x) + "\" y=\"" + num("%.0f", y - 9) + "\" width=\"14\" height=\"10\" fill=\"" +
            kColours[i % 10] + "\"/>\n";
    body += text(x + 20, y, "start", groups[i].name + " (n = " + std::to_string(groups[i].seeds.size()) + ")");
  }
  const double height = H + 24 + static_cast<double>((groups.size() + 4) / 5) * 18;
  io::write_file_atomically(svg_path, std::string(kFirstLine) + "\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                                           num("%.0f", 2 * W) + "\" height=\"" + num("%.0f", height) +
                                           "\" font-family=\"sans-serif\" font-size=\"11\">\n"
                                           "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" +
                                           body + "</svg>\n");
}

}  // namespace hamgan::eval
