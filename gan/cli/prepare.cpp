// `hamgan prepare`: convert any source (fmnist, cifar10, folder) into one packed file that
// training reads through mmap; `--bench N` instead times N loader batches from --data.
#include <chrono>
#include <cstdio>
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"
#include "io/decode.h"

namespace hamgan::cli {

namespace {

int bench(const cxxopts::ParseResult& r, const std::string& src, DataFormat format,
          int64_t res, int64_t ch) {
  DataConfig dc;
  dc.format = resolve_format(format, src);
  dc.path = src;
  const auto t_open = std::chrono::steady_clock::now();
  auto data = open_dataset(dc, res, ch);
  const double open_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_open).count();
  LoaderOptions lo;
  lo.batch_size = train_batch_of(r, TrainConfig{}.batch_size);
  lo.workers = workers_of(r);
  Loader loader(data, lo);
  const int64_t n = r["bench"].as<int64_t>();
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) loader.next();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("bench: %s (%s, %lld images) open %.2f s; %lld batches of %lld at %lldx%lldx%lld "
              "with %lld workers: %.2f s, %.0f images/s\n",
              src.c_str(), word_of(dc.format, kDataFormatWords).c_str(), static_cast<long long>(data->size()), open_s,
              static_cast<long long>(n), static_cast<long long>(lo.batch_size),
              static_cast<long long>(ch), static_cast<long long>(res),
              static_cast<long long>(res), static_cast<long long>(lo.workers), s,
              n * lo.batch_size / s);
  return 0;
}

}  // namespace

int prepare(int argc, char** argv) {
  cxxopts::Options opts("hamgan prepare",
                        "Convert a dataset (fmnist, cifar10, ImageFolder) into one packed file");
  add_data_option(opts);
  add_out_option(opts, "the packed file (not needed with --bench)");
  add_resolution_option(opts);
  add_channels_option(opts);
  add_train_batch_option(opts);  // the loader batch --bench times
  opts.add_options()("jpeg-decoder", "libjpeg | stb", cxxopts::value<std::string>()->default_value("libjpeg"))(
      "bench", "instead of writing: time N loader batches from --data",
      cxxopts::value<int64_t>()->default_value("0"));
  add_workers_option(opts);
  add_format_option(opts, "--data");
  add_threads_option(opts);
  const auto parsed = parse_or_help(opts, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("data")) fail("--data: required (the source dataset path)");
  const bool bench_only = r["bench"].as<int64_t>() > 0;
  const std::string out = bench_only ? std::string() : out_of(r);  // before the source is read
  const std::string dec = r["jpeg-decoder"].as<std::string>();
  if (dec != "libjpeg" && dec != "stb") fail("--jpeg-decoder '", dec, "': expected libjpeg or stb");
  set_jpeg_decoder(dec == "stb" ? JpegDecoder::stb : JpegDecoder::libjpeg);
  const std::string src = r["data"].as<std::string>();
  const DataFormat format = format_of(r);
  const int64_t res = resolution_of(r, kDefaultResolution);
  const int64_t ch = channels_of(r) != 0 ? channels_of(r) : default_channels(resolve_format(format, src));
  if (bench_only) return bench(r, src, format, res, ch);

  PrepareOptions po;
  po.source = src;
  po.format = format;
  po.out = out;
  po.resolution = res;
  po.channels = ch;
  po.threads = threads_of(r);
  const PrepareResult pr = prepare_packed(po);
  if (pr.already_complete) {
    std::cout << po.out << " is already complete and valid (" << pr.count
              << " images); nothing to do\n";
    return 0;
  }
  std::cout << "wrote " << po.out << ": " << pr.count << " images of " << ch << "x" << res << "x"
            << res << " in " << pr.seconds << " s (" << pr.chunks_reused
            << " chunks resumed from .partial), " << pr.skipped << " undecodable images skipped\n";
  return 0;
}

}  // namespace hamgan::cli
