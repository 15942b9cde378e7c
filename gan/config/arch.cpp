#include "gan/config/arch.h"

#include "core/error.h"

namespace hamgan {

std::vector<BlockArch> generator_arch(int64_t resolution, int64_t ch) {
  std::vector<int64_t> mult;
  if (resolution == 128) mult = {16, 16, 8, 4, 2, 1};
  else if (resolution == 64) mult = {16, 16, 8, 4, 2};
  else if (resolution == 32) mult = {4, 4, 4, 4};
  else fail("generator: resolution ", resolution, " is not one of 32, 64, 128");
  std::vector<BlockArch> arch;
  int64_t res = 4;
  for (size_t i = 0; i + 1 < mult.size(); ++i) {
    res *= 2;
    arch.push_back({mult[i] * ch, mult[i + 1] * ch, true, res});
  }
  return arch;
}

std::vector<BlockArch> discriminator_arch(int64_t resolution, int64_t ch,
                                          int64_t image_channels) {
  std::vector<int64_t> mult;
  std::vector<bool> down;
  if (resolution == 128) mult = {1, 2, 4, 8, 16, 16}, down = {1, 1, 1, 1, 1, 0};
  else if (resolution == 64) mult = {1, 2, 4, 8, 16}, down = {1, 1, 1, 1, 0};
  else if (resolution == 32) mult = {4, 4, 4, 4}, down = {1, 1, 0, 0};
  else fail("discriminator: resolution ", resolution, " is not one of 32, 64, 128");
  std::vector<BlockArch> arch;
  int64_t res = resolution, in = image_channels;
  for (size_t i = 0; i < mult.size(); ++i) {
    if (down[i]) res /= 2;
    arch.push_back({in, mult[i] * ch, static_cast<bool>(down[i]), res});
    in = mult[i] * ch;
  }
  return arch;
}

std::vector<int64_t> context_resolutions(const std::vector<BlockArch>& arch) {
  std::vector<int64_t> r;
  for (const auto& b : arch)
    if (r.empty() || r.back() != b.resolution) r.push_back(b.resolution);
  return r;
}

}  // namespace hamgan
