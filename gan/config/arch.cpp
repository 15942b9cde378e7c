#include "gan/config/arch.h"

#include <string>

#include "core/error.h"

namespace hamgan {

namespace {

std::string join_ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// `given` where set (checked against the table's length), else the table's.
std::vector<int64_t> chosen(const char* who, int64_t resolution, std::vector<int64_t> table,
                            const std::vector<int64_t>& given) {
  if (given.empty()) return table;
  if (given.size() != table.size())
    fail(who, ".ch_mult: expected ", table.size(), " multipliers at resolution ", resolution, " (BigGAN's ",
         join_ints(table), "), got ", given.size());
  for (const int64_t m : given)
    if (m < 1) fail(who, ".ch_mult: expected multipliers >= 1, got ", m);
  return given;
}

}  // namespace

std::vector<int64_t> generator_ch_mult(int64_t resolution) {
  if (resolution == 128) return {16, 16, 8, 4, 2, 1};
  if (resolution == 64) return {16, 16, 8, 4, 2};
  if (resolution == 32) return {4, 4, 4, 4};
  fail("generator: resolution ", resolution, " is not one of 32, 64, 128");
}

std::vector<int64_t> discriminator_ch_mult(int64_t resolution) {
  if (resolution == 128) return {1, 2, 4, 8, 16, 16};
  if (resolution == 64) return {1, 2, 4, 8, 16};
  if (resolution == 32) return {4, 4, 4, 4};
  fail("discriminator: resolution ", resolution, " is not one of 32, 64, 128");
}

std::vector<BlockArch> generator_arch(int64_t resolution, int64_t ch, const std::vector<int64_t>& given) {
  const std::vector<int64_t> mult = chosen("generator", resolution, generator_ch_mult(resolution), given);
  std::vector<BlockArch> arch;
  int64_t res = 4;
  for (size_t i = 0; i + 1 < mult.size(); ++i) {
    res *= 2;
    arch.push_back({mult[i] * ch, mult[i + 1] * ch, true, res});
  }
  return arch;
}

std::vector<BlockArch> discriminator_arch(int64_t resolution, int64_t ch, int64_t image_channels,
                                          const std::vector<int64_t>& given) {
  const std::vector<int64_t> mult = chosen("discriminator", resolution, discriminator_ch_mult(resolution), given);
  // Every block pools but the last (128, 64); at 32 the first two pool, so D attends at 16 and 8.
  std::vector<bool> down(mult.size(), true);
  if (resolution == 32) down = {1, 1, 0, 0};
  else down.back() = false;
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
