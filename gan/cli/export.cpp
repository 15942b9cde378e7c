// hamgan export --checkpoint CK --out DIR [--no-ema] [--standing-batches N]
// DIR/model.safetensors + DIR/config.json (gan/sample/export_generator.h); DIR must be new,
// empty or an earlier export.
#include <iostream>

#include "core/error.h"
#include "gan/cli/commands.h"
#include "gan/sample/export_generator.h"

namespace hamgan::cli {

int export_cmd(int argc, char** argv) {
  cxxopts::Options o("hamgan export",
                     "A checkpoint's generator (EMA G by default) as DIR/model.safetensors (spectral norm folded "
                     "into plain weights) and DIR/config.json, for python/hamgan_py and ONNX");
  add_generator_options(o);
  add_out_option(o, "the export directory (new, empty, or an earlier export)");
  add_threads_option(o);
  const auto parsed = parse_or_help(o, argc, argv);
  if (!parsed) return 0;
  const cxxopts::ParseResult& r = *parsed;
  if (!r.count("checkpoint")) fail("export: --checkpoint FILE is required");
  const int64_t standing = standing_batches_of(r);
  const std::string out = out_of(r);
  sample::check_export_dir(out, "--out");  // before the checkpoint is read
  set_threads(r);
  const CheckpointData ck = load_checkpoint(r["checkpoint"].as<std::string>(), torch::kCPU);
  const auto res = sample::export_generator(ck, r.count("no-ema") == 0, standing, out, std::cerr);
  std::cout << "wrote " << out << "/" << sample::kExportModelFile << " (" << res.tensors << " tensors, "
            << res.bytes << " bytes) and " << out << "/" << sample::kExportConfigFile << " ("
            << (res.ema ? "EMA G" : "G") << ", iteration " << ck.iteration << ")\n";
  return 0;
}

}  // namespace hamgan::cli
