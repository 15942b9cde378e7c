// BigGAN/SAGAN architecture tables (BigGAN-PyTorch G_arch / D_arch): per block the input
// and output channel multipliers of `ch`, whether it resamples, and its output resolution.
#pragma once
#include <cstdint>
#include <vector>

namespace hamgan {

struct BlockArch {
  int64_t in, out;  // channels (image channels for D's first input)
  bool resample;    // G: upsample x2; D: 2x2 average pool
  int64_t resolution;  // output feature size
};

// G: 4x4 -> resolution. 128: 16,16,8,4,2,1 x ch; 64: 16,16,8,4,2; 32: 4,4,4,4.
std::vector<BlockArch> generator_arch(int64_t resolution, int64_t ch);
// D: 128: 1,2,4,8,16,16 x ch (last block keeps 4x4); 64: 1,2,4,8,16; 32: 4,4,4,4.
std::vector<BlockArch> discriminator_arch(int64_t resolution, int64_t ch, int64_t image_channels);
// Output resolutions where a context block can sit.
std::vector<int64_t> context_resolutions(const std::vector<BlockArch>& arch);

}  // namespace hamgan
