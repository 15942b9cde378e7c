// hamgan sample --checkpoint CK --out DIR [-n N | --per-class K] [--classes all|LIST] [--seed S]
//   [--truncation T] [--no-ema] [--batch B] [--device auto|cpu|cuda] [--overwrite]
//   [--grid FILE.png] [--interpolate FILE.png [--steps S]]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/device.h"
#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/sample/classes.h"
#include "gan/sample/grid.h"
#include "gan/sample/image_folder.h"
#include "gan/sample/sampler.h"
#include "gan/sample/truncated_normal.h"
#include "io/atomic_file.h"
#include "io/output_path.h"
#include "io/png.h"

namespace hamgan::cli {

namespace fs = std::filesystem;

void add_generator_options(cxxopts::Options& o) {
  o.add_options()("checkpoint", "checkpoint file (ckpt_*.pt)", cxxopts::value<std::string>())(
      "no-ema", "use G instead of the EMA generator");
  add_standing_batches_option(o);
}

void add_sample_options(cxxopts::Options& o) {
  add_seed_option(o, "latent seed: image k of class c always gets the same z");
  add_generator_options(o);
  o.add_options()("truncation", "redraw latent entries with |z| > T (0 = none, else >= 0.01)",
                  cxxopts::value<double>()->default_value("0"));
}

sample::SamplerOptions sampler_options(const cxxopts::ParseResult& r) {
  sample::SamplerOptions s;
  s.seed = r["seed"].as<uint64_t>();
  s.truncation = r["truncation"].as<double>();
  sample::check_truncation(s.truncation);  // before any checkpoint is read
  s.ema = r.count("no-ema") == 0;
  s.standing_batches = standing_batches_of(r);
  s.batch = batch_of(r);
  s.device = resolve_device(r["device"].as<std::string>(), "--device");
  return s;
}

namespace {

// --grid and --interpolate: each a PNG path under io/output_path.h's rule, two different files,
// and outside --out, whose files `hamgan fid --fake` reads as samples.
void check_picture_paths(const cxxopts::ParseResult& r, const std::string& out) {
  std::vector<std::pair<std::string, fs::path>> seen;
  for (const char* flag : {"grid", "interpolate"}) {
    if (!r.count(flag)) continue;
    const std::string path = r[flag].as<std::string>(), option = std::string("--") + flag;
    const fs::path abs = fs::absolute(path).lexically_normal();
    if (!out.empty()) {
      const fs::path rel = abs.lexically_relative(fs::absolute(out).lexically_normal());
      if (!rel.empty() && *rel.begin() != "..")
        fail(option, " ", path, ": lies inside --out ", out,
             ", whose images are the samples (`hamgan fid --fake` would score it as one); expected a path outside it");
    }
    for (const auto& [other, p] : seen)
      if (p == abs) fail(option, " ", path, " and ", other, " name the same file; expected two files");
    seen.emplace_back(option + " " + path, abs);
    io::check_output_path(path, io::png_output(), option);
  }
}

// A training run's folder belongs to train: sample writes none of its files (its classes.txt
// among them) and puts no class folders beside them, with --overwrite or without.
void check_not_a_run_dir(const std::string& out) {
  std::error_code ec;
  for (const char* name : {"config.yaml", "checkpoints", "metrics.jsonl"})
    if (fs::exists(fs::symlink_status(fs::path(out) / name, ec)))
      fail("--out ", out, ": is a training run's folder (it holds ", name,
           "); sample writes none of a run's files: choose a folder of its own (e.g. ",
           (fs::path(out) / "sampled").string(), ")");
}

}  // namespace

int sample_cmd(int argc, char** argv) {
  cxxopts::Options o("hamgan sample", "Samples of a checkpoint as PNGs in an ImageFolder layout DIR/<class>/<k>.png");
  add_sample_options(o);
  add_batch_option(o);
  add_count_option(o, "in all, split evenly over the classes (or --per-class)", "0");
  add_out_option(o, "the image directory DIR/<class>/<k>.png (not needed with --grid / --interpolate alone)");
  add_overwrite_option(o, "files (a non-empty directory)");
  o.add_options()("classes", "all or a comma list of class indices", cxxopts::value<std::string>()->default_value("all"))(
      "per-class", "images per class (instead of -n)", cxxopts::value<int64_t>()->default_value("0"))(
      "grid", "also a class grid PNG (one row per class; replaces an earlier PNG only)", cxxopts::value<std::string>())(
      "cols", "grid columns", cxxopts::value<int64_t>()->default_value("8"))(
      "interpolate", "also latent interpolation rows PNG (one row per class; replaces an earlier PNG only)",
      cxxopts::value<std::string>())(
      "steps", "interpolation steps per row", cxxopts::value<int64_t>()->default_value("8"));
  add_threads_option(o);
  add_device_option(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("checkpoint")) fail("sample: --checkpoint FILE is required");
  const bool images = r.count("out") > 0;
  if (!images && !r.count("grid") && !r.count("interpolate")) out_of(r);  // the missing --out error
  set_threads(r);
  const int64_t count = count_of(r);
  if (r["per-class"].as<int64_t>() < 0) fail("--per-class ", r["per-class"].as<int64_t>(), ": expected >= 0");
  for (const char* k : {"cols", "steps"})  // a picture row, not a data set: bounded before any work
    if (r[k].as<int64_t>() > sample::kMaxGridColumns)
      fail("--", k, " ", r[k].as<int64_t>(), ": expected at most ", sample::kMaxGridColumns, " images per row");
  // Everything that can refuse the grids refuses before the first sample is written.
  sample::check_grid_columns(r["cols"].as<int64_t>());
  sample::check_interpolation_steps(r["steps"].as<int64_t>());
  const std::string checkpoint = r["checkpoint"].as<std::string>();
  const std::string out = images ? r["out"].as<std::string>() : std::string();
  check_picture_paths(r, out);
  if (images) check_not_a_run_dir(out);
  const std::string names = images ? sample::run_classes_file(checkpoint) : std::string();
  if (std::error_code ec; !names.empty() && fs::is_directory(out, ec))  // else prepare_output_dir creates it
    io::check_output_path((fs::path(out) / "classes.txt").string(), sample::classes_output(), "--out");
  const auto opt = sampler_options(r);
  const CheckpointData ck = load_checkpoint(checkpoint, opt.device);
  const sample::Sampler s(ck, opt, std::cerr);
  const auto classes = sample::parse_classes(r["classes"].as<std::string>(), s.n_classes());
  if (images) {
    const auto items = sample::make_plan(classes, count, r["per-class"].as<int64_t>());
    sample::prepare_output_dir(out, r.count("overwrite") > 0);
    for (int64_t c : classes) fs::create_directories(fs::path(sample::sample_path(out, c, 0)).parent_path());
    const auto t0 = std::chrono::steady_clock::now();
    size_t done = 0;
    s.for_each_batch(items, [&](size_t first, const torch::Tensor& x) {
      const torch::Tensor px = sample::to_uint8(x).permute({0, 2, 3, 1}).contiguous();
      for (int64_t i = 0; i < px.size(0); ++i) {
        const auto& it = items[first + static_cast<size_t>(i)];
        write_png(sample::sample_path(out, it.cls, it.k), px[i]);
      }
      done += static_cast<size_t>(px.size(0));
      const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "\rsample: %zu/%zu images, %.1f img/s   ", done, items.size(), dt > 0 ? done / dt : 0.0);
    });
    std::fprintf(stderr, "\n");
    std::cout << "wrote " << items.size() << " images of " << classes.size() << " classes to " << out << " ("
              << (s.uses_ema() ? "EMA G" : "G") << ", iteration " << ck.iteration << ")\n";
    // The run's class names (synsets) beside the numbered class directories: written anew from
    // its list when that is this model's (one UTF-8 name per class), else not at all.
    const std::vector<std::string> class_names = names.empty() ? std::vector<std::string>{}
                                                                : sample::run_class_names(checkpoint, s.n_classes());
    if (!names.empty() && class_names.empty())
      std::cerr << "warning: " << names << ": not " << s.n_classes() << " lines '<dir> <name>' of UTF-8 names (this "
                << "model's classes); no classes.txt written beside the samples\n";
    if (!class_names.empty()) {
      io::write_file_atomically((fs::path(out) / "classes.txt").string(), sample::classes_text(class_names));
      std::cout << "class names: " << (fs::path(out) / "classes.txt").string() << " (directory name, class name)\n";
    }
  }
  if (r.count("grid")) {
    write_png(r["grid"].as<std::string>(), sample::class_grid(s, classes, r["cols"].as<int64_t>()));
    std::cout << "wrote " << r["grid"].as<std::string>() << "\n";
  }
  if (r.count("interpolate")) {
    write_png(r["interpolate"].as<std::string>(), sample::interpolation_grid(s, classes, r["steps"].as<int64_t>()));
    std::cout << "wrote " << r["interpolate"].as<std::string>() << "\n";
  }
  return 0;
}

}  // namespace hamgan::cli
