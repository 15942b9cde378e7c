#include "gan/sample/image_folder.h"

#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace hamgan::sample {

namespace fs = std::filesystem;

void prepare_output_dir(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail("--out ", dir, ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      fail("--out ", dir, ": exists and is not empty; pass --overwrite to write into it, or choose another --out");
  }
  fs::create_directories(dir, ec);
  if (ec) fail("--out ", dir, ": cannot create: ", ec.message());
}

std::string sample_path(const std::string& dir, int64_t cls, int64_t k) {
  char c[32], f[32];
  std::snprintf(c, sizeof c, "%03lld", static_cast<long long>(cls));
  std::snprintf(f, sizeof f, "%06lld.png", static_cast<long long>(k));
  return (fs::path(dir) / c / f).string();
}

}  // namespace hamgan::sample
