// A checkpoint's generator as a self-contained export for other runtimes (PyTorch without
// hamgan, ONNX through python/hamgan_py): DIR/model.safetensors holds every tensor G's eval
// forward reads, and DIR/config.json the architecture and context-module options to rebuild it.
//   - Spectral norm is folded: "<module>.weight" = weight_orig / sigma with sigma = u^T W v from
//     the stored u, v and no power iteration, exactly what the eval forward uses
//     (layers/spectral_norm.h); weight_orig, weight_u and weight_v are not exported.
//   - BatchNorm keeps running_mean / running_var (eval normalises with them; an EMA G's are its
//     standing statistics when the checkpoint has or gets them, as in `hamgan sample`).
//   - Every other parameter and buffer under its state-dict name (a fixed or online Hamburger's
//     `bases`, STT's fixed R factors); num_batches_tracked is not needed and left out.
// A random-init Hamburger draws its initial D per image: config.json's "sampling" says how
// `hamgan sample` seeds it, so an importer reproduces the same images.
#pragma once
#include <string>

#include "gan/checkpoint/checkpoint.h"
#include "io/output_path.h"
#include "io/safetensors_writer.h"

namespace hamgan::sample {

constexpr const char* kExportModelFile = "model.safetensors";
constexpr const char* kExportConfigFile = "config.json";
constexpr int64_t kExportFormatVersion = 1;
// model.safetensors' __metadata__ key holding the SHA-256 (hex) of config.json's exact bytes:
// what binds the two files (python/hamgan_py refuses a pair whose digest differs).
constexpr const char* kExportConfigDigestKey = "config_sha256";

// config.json's first line: how an earlier export is recognised (io/output_path.h's rule).
const io::OutputKind& export_config_output();

// The exported tensors of G (eval mode), CPU, contiguous, in state-dict order.
io::NamedTensors exported_tensors(GeneratorImpl& g);

// config.json for G built from `ck`'s config; `ema` whether it is the EMA G, `class_names`
// one per class or empty.
std::string export_config_json(const CheckpointData& ck, GeneratorImpl& g, bool ema,
                               const std::vector<std::string>& class_names);

// Refuses (before any work) a `dir` that is neither absent, empty, nor an earlier export:
// only model.safetensors and config.json, each recognised by its content. `option` names it.
void check_export_dir(const std::string& dir, const std::string& option);

// Writes both files into `dir` (created if absent); G loaded as load_generator does.
struct ExportResult {
  bool ema = false;
  int64_t tensors = 0, bytes = 0;
};
ExportResult export_generator(const CheckpointData& ck, bool ema, int64_t standing_batches,
                              const std::string& dir, std::ostream& warn);

}  // namespace hamgan::sample
