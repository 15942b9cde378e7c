#include "plot/line_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "io/png.h"
#include "plot/bitmap_font.h"

namespace hamgan::plot {

int64_t PlotFrame::px(double x) const {
  return left + static_cast<int64_t>(std::lround((x - x0) / (x1 - x0) * static_cast<double>(right - left)));
}
int64_t PlotFrame::py(double y) const {
  return bottom - static_cast<int64_t>(std::lround((y - y0) / (y1 - y0) * static_cast<double>(bottom - top)));
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  const double span = hi - lo, raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

namespace {

using Rgb = std::array<uint8_t, 3>;

void put(torch::TensorAccessor<uint8_t, 3>& a, int64_t h, int64_t w, int64_t x, int64_t y, Rgb c) {
  if (x < 0 || y < 0 || x >= w || y >= h) return;
  for (int k = 0; k < 3; ++k) a[y][x][k] = c[k];
}

// Bresenham's line algorithm.
void line(torch::TensorAccessor<uint8_t, 3>& a, int64_t h, int64_t w, int64_t x0, int64_t y0, int64_t x1,
          int64_t y1, Rgb c) {
  const int64_t dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
  int64_t err = dx + dy;
  while (true) {
    put(a, h, w, x0, y0, c);
    if (x0 == x1 && y0 == y1) break;
    const int64_t e2 = 2 * err;
    if (e2 >= dy) err += dy, x0 += sx;
    if (e2 <= dx) err += dx, y0 += sy;
  }
}

std::string label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// A degenerate range (one value) is widened so the point sits in the middle.
void range(double& lo, double& hi, double pad) {
  if (hi - lo <= 1e-12 * std::max(1.0, std::abs(hi))) {
    const double d = std::max(1.0, std::abs(lo) * 0.1);
    lo -= d, hi += d;
  } else {
    const double p = (hi - lo) * pad;
    lo -= p, hi += p;
  }
}

}  // namespace

const std::array<std::array<uint8_t, 3>, 10>& plot_palette() {
  static const std::array<std::array<uint8_t, 3>, 10> p = {
      kPlotLine,         Rgb{255, 127, 14}, Rgb{44, 160, 44},  Rgb{214, 39, 40},  Rgb{148, 103, 189},
      Rgb{140, 86, 75},  Rgb{227, 119, 194}, Rgb{127, 127, 127}, Rgb{188, 189, 34}, Rgb{23, 190, 207}};
  return p;
}

torch::Tensor line_plot(const std::vector<double>& xs, const std::vector<double>& ys, const PlotStyle& st,
                        PlotFrame* frame_out) {
  return line_plot(xs, std::vector<Series>{{"", ys}}, st, frame_out);
}

torch::Tensor line_plot(const std::vector<double>& xs, const std::vector<Series>& series, const PlotStyle& st,
                        PlotFrame* frame_out) {
  if (series.empty() || series.size() > plot_palette().size())
    fail("line plot: ", series.size(), " series; expected 1..", plot_palette().size());
  if (st.width < 160 || st.height < 120) fail("line plot: ", st.width, "x", st.height, " is too small; expected >= 160x120");
  std::vector<std::vector<std::pair<double, double>>> all;
  for (const Series& sr : series) {
    if (xs.size() != sr.ys.size()) fail("line plot: ", xs.size(), " x values but ", sr.ys.size(), " y values");
    std::vector<std::pair<double, double>> pts;
    for (size_t i = 0; i < xs.size(); ++i)
      if (std::isfinite(xs[i]) && std::isfinite(sr.ys[i])) pts.push_back({xs[i], sr.ys[i]});
    if (pts.empty()) fail("line plot: no finite points to draw", sr.name.empty() ? "" : " in ", sr.name);
    std::sort(pts.begin(), pts.end());
    all.push_back(std::move(pts));
  }
  // The legend (several series) goes in the top margin, one row; when that row would not fit
  // over the plotting area, in a column at the right instead.
  int64_t row_width = 0, column_width = 0;
  for (const Series& sr : series)
    row_width += text_width(sr.name) + 28, column_width = std::max(column_width, text_width(sr.name) + 28);
  PlotFrame f;
  f.left = 64, f.right = st.width - 20, f.top = 24, f.bottom = st.height - 40;
  const bool legend_column = series.size() > 1 && row_width > f.right - f.left;
  if (legend_column) f.right -= column_width;
  if (f.right - f.left < 80) fail("line plot: ", st.width, " px is too narrow for the legend of ", series.size(), " series");
  f.x0 = f.x1 = all[0][0].first;
  f.y0 = f.y1 = all[0][0].second;
  for (const auto& pts : all)
    for (const auto& p : pts) {
      f.x0 = std::min(f.x0, p.first), f.x1 = std::max(f.x1, p.first);
      f.y0 = std::min(f.y0, p.second), f.y1 = std::max(f.y1, p.second);
    }
  range(f.x0, f.x1, 0.03);
  range(f.y0, f.y1, 0.08);

  torch::Tensor img = torch::full({st.height, st.width, 3}, 255, torch::kUInt8);
  auto a = img.accessor<uint8_t, 3>();
  const int64_t h = st.height, w = st.width;
  const Rgb grid = {225, 225, 225};
  for (double t : nice_ticks(f.x0, f.x1)) {
    const int64_t x = f.px(t);
    line(a, h, w, x, f.top, x, f.bottom, grid);
    line(a, h, w, x, f.bottom, x, f.bottom + 4, kPlotAxis);
    const std::string s = label(t);
    draw_text(img, x - text_width(s) / 2, f.bottom + 8, s, kPlotAxis);
  }
  for (double t : nice_ticks(f.y0, f.y1)) {
    const int64_t y = f.py(t);
    line(a, h, w, f.left, y, f.right, y, grid);
    line(a, h, w, f.left - 4, y, f.left, y, kPlotAxis);
    const std::string s = label(t);
    draw_text(img, f.left - 7 - text_width(s), y - kGlyphH / 2, s, kPlotAxis);
  }
  line(a, h, w, f.left, f.top, f.left, f.bottom, kPlotAxis);
  line(a, h, w, f.left, f.bottom, f.right, f.bottom, kPlotAxis);
  draw_text(img, (f.left + f.right - text_width(st.x_label)) / 2, h - 14, st.x_label, kPlotAxis);
  draw_text(img, 8, 8, st.y_label, kPlotAxis);
  for (size_t k = 0; k < all.size(); ++k) {
    const auto& pts = all[k];
    const Rgb c = plot_palette()[k];
    for (size_t i = 1; i < pts.size(); ++i)
      line(a, h, w, f.px(pts[i - 1].first), f.py(pts[i - 1].second), f.px(pts[i].first), f.py(pts[i].second), c);
    if (pts.size() <= 200)
      for (const auto& p : pts)
        for (int64_t dy = -2; dy <= 2; ++dy)
          for (int64_t dx = -2; dx <= 2; ++dx) put(a, h, w, f.px(p.first) + dx, f.py(p.second) + dy, c);
  }
  auto legend_entry = [&](int64_t x, int64_t y, size_t k) {  // a short thick line, then the name
    draw_text(img, x + 16, y, series[k].name, plot_palette()[k]);
    line(a, h, w, x, y + 3, x + 12, y + 3, plot_palette()[k]);
    line(a, h, w, x, y + 4, x + 12, y + 4, plot_palette()[k]);
  };
  if (legend_column) {
    for (size_t k = 0; k < series.size(); ++k) legend_entry(f.right + 12, f.top + 4 + static_cast<int64_t>(k) * 14, k);
  } else if (series.size() > 1) {  // top margin, right-aligned
    int64_t x = f.right;
    for (size_t k = series.size(); k-- > 0;) {
      x -= text_width(series[k].name) + 16;
      legend_entry(x, 8, k);
      x -= 12;
    }
  }
  if (frame_out) *frame_out = f;
  return img;
}

torch::Tensor stack_panels(const std::vector<torch::Tensor>& panels) {
  if (panels.empty()) fail("stack panels: no panels");
  for (const auto& p : panels)
    if (p.dim() != 3 || p.size(1) != panels[0].size(1) || p.size(2) != panels[0].size(2))
      fail("stack panels: panel of shape ", p.sizes(), " does not match ", panels[0].sizes());
  return torch::cat(panels, 0);
}

void write_line_plot(const std::string& path, const std::vector<double>& xs, const std::vector<double>& ys,
                     const PlotStyle& style) {
  write_png(path, line_plot(xs, ys, style));  // write_png replaces the file atomically
}

}  // namespace hamgan::plot
