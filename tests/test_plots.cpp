// What a person looks at: sample grids with 64 px cells and class labels (training grids and
// `hamgan sample --grid`), the several-series line plot, and metrics.png from metrics.jsonl.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/train/train_stats_plot.h"
#include "io/decode.h"
#include "io/image.h"
#include "plot/bitmap_font.h"
#include "plot/labeled_grid.h"
#include "plot/line_plot.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/tiny_checkpoint.h"

namespace test_plots {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

std::string fresh(const std::string& name) { return test::fresh_dir("test_plots", name); }

// The 0/255 mask a label is drawn with: glyphs at text_scale, white on black.
torch::Tensor glyph_mask(const std::string& text, int64_t scale) {
  torch::Tensor m = torch::zeros({plot::kGlyphH, plot::text_width(text), 3}, torch::kUInt8);
  plot::draw_text(m, 0, 0, text, {255, 255, 255});
  return m.repeat_interleave(scale, 0).repeat_interleave(scale, 1);
}

}  // namespace

// 2 rows x 3 columns of 16 px gray images with labels 3 and 10: cells become 64 px (nearest,
// each source pixel a 4x4 block), a label column in front carries "3" and "10" centred on
// their rows, and the border stays black.
TEST(LabeledGrid, LayoutCellsAndLabels) {
  torch::Tensor u = torch::randint(0, 256, {6, 1, 16, 16}).to(torch::kFloat);
  const torch::Tensor images = u / 127.5 - 1;
  const torch::Tensor labels = torch::tensor({3, 3, 3, 10, 10, 10}, torch::kLong);
  const torch::Tensor g = labeled_grid(images, labels, 3);
  const LabeledGridLayout l = labeled_grid_layout(16, 10);
  EXPECT_EQ(l.scale, 4);
  EXPECT_EQ(l.cell, 64);
  EXPECT_EQ(l.text_scale, 2);
  EXPECT_EQ(l.margin, plot::text_width("10") * 2 + 8);
  ASSERT_EQ(g.sizes(), (std::vector<int64_t>{2 * 66 + 2, l.margin + 3 * 66 + 2, 3}));
  // Every cell pixel equals its source pixel (quantised as PNGs are: round((x + 1) 127.5)).
  for (int64_t i = 0; i < 6; ++i) {
    const int64_t y0 = 2 + (i / 3) * 66, x0 = l.margin + 2 + (i % 3) * 66;
    const torch::Tensor cell = g.narrow(0, y0, 64).narrow(1, x0, 64).select(2, 0);
    const torch::Tensor want = u[i][0].to(torch::kUInt8).repeat_interleave(4, 0).repeat_interleave(4, 1);
    EXPECT_TRUE(torch::equal(cell, want)) << "cell " << i;
    EXPECT_TRUE(torch::equal(g.narrow(0, y0, 64).narrow(1, x0, 64).select(2, 2), want)) << "gray to RGB";
  }
  EXPECT_EQ(g.select(0, 1).narrow(0, l.margin, 3 * 66).sum().item<int64_t>(), 0) << "top border";
  // The labels: exactly the glyphs, at (4, row centre), nothing else in the label column.
  torch::Tensor expect = torch::zeros({g.size(0), l.margin, 3}, torch::kUInt8);
  for (const auto& [row, text] : std::vector<std::pair<int64_t, std::string>>{{0, "3"}, {1, "10"}}) {
    const torch::Tensor m = glyph_mask(text, 2);
    expect.narrow(0, 2 + row * 66 + (64 - m.size(0)) / 2, m.size(0)).narrow(1, 4, m.size(1)).copy_(m);
  }
  EXPECT_TRUE(torch::equal(g.narrow(1, 0, l.margin), expect));
  EXPECT_GT(expect.gt(0).sum().item<int64_t>(), 100) << "label pixels present";
  EXPECT_NE(test::error_of([&] { labeled_grid(images, labels.narrow(0, 0, 5), 3); }).find("5 labels for 6 images"),
            std::string::npos);
}

// Cells already >= 64 px stay as they are (scale 1).
TEST(LabeledGrid, LargeCellsAreNotScaled) {
  const LabeledGridLayout l = labeled_grid_layout(128, 0);
  EXPECT_EQ(l.scale, 1);
  EXPECT_EQ(l.cell, 128);
  EXPECT_EQ(l.text_scale, 4);
  const torch::Tensor g = labeled_grid(torch::zeros({2, 3, 128, 128}), torch::tensor({0, 0}, torch::kLong), 2);
  EXPECT_EQ(g.sizes(), (std::vector<int64_t>{132, l.margin + 2 * 130 + 2, 3}));
}

// `hamgan sample --grid`: one labelled row per class of the tiny 32x32, 3-class checkpoint.
TEST(LabeledGrid, SampleGridCommand) {
  const std::string dir = fresh("sample");
  fs::create_directories(dir);
  const std::string ck = checkpoint_path(dir, 5);
  test::write_tiny_checkpoint(ck, 5, true, 1, test::tiny_checkpoint_yaml());
  test::run_cli(cli::sample_cmd, "sample", {"--checkpoint", ck, "--grid", dir + "/grid.png", "--cols", "4", "--threads", "1"});
  const LabeledGridLayout l = labeled_grid_layout(32, 2);
  const torch::Tensor g = to_tensor(decode_image(dir + "/grid.png"));
  ASSERT_EQ(g.sizes(), (std::vector<int64_t>{3, 3 * 66 + 2, l.margin + 4 * 66 + 2}));
  for (int64_t row = 0; row < 3; ++row) {  // each row's label column holds its class's glyph
    const torch::Tensor m = glyph_mask(std::to_string(row), l.text_scale);
    const torch::Tensor got = g.select(0, 0).narrow(0, 2 + row * 66 + (64 - m.size(0)) / 2, m.size(0)).narrow(1, 4, m.size(1));
    EXPECT_TRUE(torch::equal(got.mul(255).round().to(torch::kUInt8), m.select(2, 0))) << "row " << row;
  }
}

// Two series with a legend: each line in its palette colour, the legend names in colour.
TEST(LinePlot, SeveralSeriesInPaletteColours) {
  plot::PlotFrame f;
  const std::vector<double> xs = {0, 10, 20, 30};
  const torch::Tensor img = plot::line_plot(xs, {{"A", {1, 2, 3, 4}}, {"B", {4, 3, 2, 1}}}, plot::PlotStyle{}, &f);
  auto rgb = [&](int64_t x, int64_t y) {
    return std::array<uint8_t, 3>{img[y][x][0].item<uint8_t>(), img[y][x][1].item<uint8_t>(), img[y][x][2].item<uint8_t>()};
  };
  EXPECT_EQ(rgb(f.px(0), f.py(1)), plot::plot_palette()[0]);
  EXPECT_EQ(rgb(f.px(30), f.py(4)), plot::plot_palette()[0]);
  EXPECT_EQ(rgb(f.px(0), f.py(4)), plot::plot_palette()[1]);
  int64_t legend = 0;  // pixels of series B's colour in the top margin
  const auto c = plot::plot_palette()[1];
  for (int64_t y = 0; y < f.top; ++y)
    for (int64_t x = 0; x < img.size(1); ++x) legend += rgb(x, y) == c;
  EXPECT_GT(legend, 10);
  EXPECT_EQ(plot::stack_panels({img, img}).sizes(), (std::vector<int64_t>{800, 640, 3}));
}

// metrics.jsonl -> metrics.png (losses, D outputs); a resumed run's log (iterations that go
// back) reads as the resumed history; a malformed line names the file and the line.
TEST(TrainStatsPlot, FromJsonlWithResumeAndErrors) {
  const std::string dir = fresh("metrics");
  fs::create_directories(dir);
  {
    std::ofstream j(dir + "/metrics.jsonl");
    for (int it : {2, 4, 6, 8})  // interrupted after 8, resumed from the checkpoint at 4
      j << "{\"iteration\": " << it << ", \"d_loss_real\": 0.9, \"d_loss_fake\": 0.8, \"g_loss\": 1.5, \"d_real\": 0.3, "
        << "\"d_fake\": -0.2, \"img_s\": 12.5}\n";
    for (int it : {6, 8, 10})
      j << "{\"iteration\": " << it << ", \"d_loss_real\": 0.5, \"d_loss_fake\": 0.4, \"g_loss\": 1.0, \"d_real\": 0.6, "
        << "\"d_fake\": -0.5, \"img_s\": 12.5}\n";
  }
  const auto recs = read_train_stats_log(dir + "/metrics.jsonl");
  ASSERT_EQ(recs.size(), 5u);
  std::vector<double> its;
  for (const auto& r : recs) its.push_back(r.at("iteration"));
  EXPECT_EQ(its, (std::vector<double>{2, 4, 6, 8, 10}));
  EXPECT_DOUBLE_EQ(recs[2].at("g_loss"), 1.0) << "the resumed run's record replaces the interrupted one";
  plot_train_stats(dir);
  EXPECT_EQ(to_tensor(decode_image(dir + "/metrics.png")).sizes(), (std::vector<int64_t>{3, 800, 640}));
  EXPECT_FALSE(fs::exists(dir + "/metrics.png.tmp"));
  std::ofstream(dir + "/metrics.jsonl", std::ios::app) << "{\"iteration\": 12, \"g_loss\": oops}\n";
  const std::string e = test::error_of([&] { plot_train_stats(dir); });
  EXPECT_NE(e.find("metrics.jsonl:8"), std::string::npos) << e;
  EXPECT_NE(e.find("g_loss"), std::string::npos) << e;
  // The trainer's call reports the failure once and does not throw.
  std::vector<std::string> warnings;
  redraw_train_stats_plot(dir, [&](const std::string& m) { warnings.push_back(m); });
  redraw_train_stats_plot(dir, [&](const std::string& m) { warnings.push_back(m); });
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("metrics.png not drawn"), std::string::npos);
}

}  // namespace test_plots
