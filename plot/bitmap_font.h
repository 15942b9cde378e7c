// A 5x7 bitmap font for plot and grid labels: digits, the capitals A-Z and . - + ( ) / : , _ =
// and space (numbers in %g form, axis names, legends). Lower case is drawn as upper case;
// other characters are drawn as a hollow box.
#pragma once
#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <string>

namespace hamgan::plot {

constexpr int kGlyphW = 5, kGlyphH = 7, kGlyphAdvance = 6;

std::array<uint8_t, 7> glyph(char c);  // row bits, MSB (bit 4) = leftmost pixel
// Draws `text` into an H x W x 3 uint8 image with its top-left corner at (x, y); clipped.
void draw_text(torch::Tensor& image, int64_t x, int64_t y, const std::string& text, std::array<uint8_t, 3> rgb);
int64_t text_width(const std::string& text);

}  // namespace hamgan::plot
