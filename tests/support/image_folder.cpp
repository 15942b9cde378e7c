#include "support/image_folder.h"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "io/png.h"

namespace hamgan::test {

std::string image_folder(const std::string& dir, int good, int junk) {
  for (const char* cls : {"a", "b"}) {
    const std::string d = dir + "/" + cls;
    std::filesystem::create_directories(d);
    for (int k = 0; k < good; ++k)
      write_png(d + "/" + std::to_string(k) + ".png", torch::full({32, 32, 3}, 255, torch::kUInt8));
    for (int k = 0; k < junk; ++k) std::ofstream(d + "/junk" + std::to_string(k) + ".png") << "not a png";
  }
  return dir;
}

}  // namespace hamgan::test
