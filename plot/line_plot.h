// A small line plot written as PNG (a run's scores against iteration in scores.png, the
// training losses in metrics.png): white background, axes with "nice" ticks
// (1, 2, 5 x 10^k) labelled in a 5x7 bitmap font, each series as a line with a point (5x5
// square) at every sample (no points when a series has more than 200), a legend when there
// are several (in the top margin, or in a column at the right when one row does not fit). NaN
// values are skipped, so series with samples at different x share one xs with NaN gaps. Panels stack into one image.
#pragma once
#include <torch/torch.h>

#include <array>
#include <string>
#include <vector>

namespace hamgan::plot {

struct PlotStyle {
  int64_t width = 640, height = 400;
  std::string x_label = "ITERATION", y_label = "FID";
};

constexpr std::array<uint8_t, 3> kPlotLine = {31, 119, 180};  // line and points
constexpr std::array<uint8_t, 3> kPlotAxis = {0, 0, 0};

// Where data lands in the image (the plotting area and its data ranges).
struct PlotFrame {
  int64_t left = 0, right = 0, top = 0, bottom = 0;  // pixel bounds of the plotting area
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;             // data range shown
  int64_t px(double x) const;
  int64_t py(double y) const;
};

// Line colours of series 0, 1, ... (matplotlib's "tab10"): at most 10 series per plot.
const std::array<std::array<uint8_t, 3>, 10>& plot_palette();

struct Series {
  std::string name;  // legend text
  std::vector<double> ys;
};

// H x W x 3 uint8. xs and ys have equal length (at least 1 finite point).
torch::Tensor line_plot(const std::vector<double>& xs, const std::vector<double>& ys, const PlotStyle& style,
                        PlotFrame* frame = nullptr);
// Several series over the same xs, coloured by plot_palette() (at least 1 finite point in all).
torch::Tensor line_plot(const std::vector<double>& xs, const std::vector<Series>& series, const PlotStyle& style,
                        PlotFrame* frame = nullptr);
// Images of equal width one below the other.
torch::Tensor stack_panels(const std::vector<torch::Tensor>& panels);
// The "nice" tick values covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// line_plot written to <path>.tmp then renamed to path.
void write_line_plot(const std::string& path, const std::vector<double>& xs, const std::vector<double>& ys,
                     const PlotStyle& style = {});

}  // namespace hamgan::plot
