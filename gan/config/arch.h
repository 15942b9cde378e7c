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

// BigGAN's multipliers of `ch` at `resolution` (32, 64 or 128). G, one per block boundary from
// its 4x4 input (blocks + 1): 128: 16,16,8,4,2,1; 64: 16,16,8,4,2; 32: 4,4,4,4. D, each block's
// output: 128: 1,2,4,8,16,16 (the last block keeps 4x4); 64: 1,2,4,8,16; 32: 4,4,4,4.
std::vector<int64_t> generator_ch_mult(int64_t resolution);
std::vector<int64_t> discriminator_ch_mult(int64_t resolution);

// The blocks with the multipliers `mult` (generator.ch_mult / discriminator.ch_mult), or the
// table's above when it is empty; a `mult` of another length or with an entry < 1 is an error.
std::vector<BlockArch> generator_arch(int64_t resolution, int64_t ch, const std::vector<int64_t>& mult = {});
std::vector<BlockArch> discriminator_arch(int64_t resolution, int64_t ch, int64_t image_channels,
                                          const std::vector<int64_t>& mult = {});
// Output resolutions where a context block can sit.
std::vector<int64_t> context_resolutions(const std::vector<BlockArch>& arch);

}  // namespace hamgan
