// Image files (JPEG, PNG, BMP): listing them and decoding them into an Image, for training
// data and FID alike. JPEG goes through libjpeg-turbo with DCT-domain downscaling when the
// image is much larger than the target; the rest (and JPEG when asked, for comparison)
// through stb_image.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "io/image.h"

namespace hamgan {

enum class JpegDecoder { libjpeg, stb };
// Process-wide choice (default libjpeg); `hamgan prepare --jpeg-decoder` sets it.
void set_jpeg_decoder(JpegDecoder d);
JpegDecoder jpeg_decoder();

// The largest power-of-two denominator d <= 8 with min(w, h) / d >= 2 * target: libjpeg's
// scaled IDCT is a good low-pass filter, and keeping at least 2x for the antialiased resize
// keeps the result close to a full-resolution decode.
int jpeg_scale_denom(int width, int height, int target);

// Larger images (width x height) are refused before decoding, as undecodable ones are.
constexpr int64_t kMaxImagePixels = int64_t(1) << 26;

// Decodes `path` as RGB (3 channels) or grayscale when the file is grayscale and `gray_ok`.
// `target` is the final square size (0: never downscale in the DCT domain). Returns false
// and sets `why` when the file cannot be read or decoded.
bool decode_image(const std::string& path, int target, bool gray_ok, Image& out,
                  std::string& why);
// The same, full size, gray kept gray; throws an error naming the file instead.
Image decode_image(const std::string& path);

// The extensions decode_image accepts (lower case; matched case-insensitively).
extern const char* const kImageExtensions;  // ".jpg/.jpeg/.png/.bmp", for messages
bool is_image_file(const std::string& path);

// Sorted paths of the image files under `dir` (recursive). Fails when `dir` is not a
// directory or holds no image; with n > 0, keeps the first n and fails when there are fewer.
std::vector<std::string> list_images(const std::string& dir, int64_t n = 0);
// ImageFolder classes of `files` (from list_images(dir)), [N] int64: a file's class is its
// top-level subdirectory's number when every subdirectory is named by a non-negative integer
// (as `hamgan sample` writes them: 000, 003, ...), else that subdirectory's index among the
// sorted subdirectories (torchvision's ImageFolder). Undefined when some file lies directly
// in dir (a flat directory has no classes).
torch::Tensor folder_labels(const std::string& dir, const std::vector<std::string>& files);

}  // namespace hamgan
