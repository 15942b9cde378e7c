#include "io/decode.h"

#include <jpeglib.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace hamgan {

namespace {

std::atomic<JpegDecoder> g_jpeg{JpegDecoder::libjpeg};

bool read_file(const std::string& path, std::vector<unsigned char>& buf, std::string& why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = "cannot open";
    return false;
  }
  in.seekg(0, std::ios::end);
  const auto n = in.tellg();
  in.seekg(0);
  buf.resize(static_cast<size_t>(n));
  if (n > 0 && !in.read(reinterpret_cast<char*>(buf.data()), n)) {
    why = "cannot read";
    return false;
  }
  if (buf.empty()) {
    why = "empty file";
    return false;
  }
  return true;
}

bool is_jpeg(const std::vector<unsigned char>& b) {
  return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF;
}

struct JpegErr {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegErr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->msg);
  longjmp(e->jump, 1);
}

void jpeg_warning(j_common_ptr cinfo, int level) {
  // A warning (level -1) means corrupt data, e.g. a truncated file: treat as an error so
  // a half-grey image never reaches training.
  if (level < 0) jpeg_error_exit(cinfo);
}

// The header's size, checked before any pixel memory is allocated: an 875 KB PNG can declare
// 30000 x 30000 (3.7 GB decoded).
bool pixels_ok(uint64_t w, uint64_t h, std::string& why) {
  if (w * h <= static_cast<uint64_t>(kMaxImagePixels)) return true;
  why = "declares " + std::to_string(w) + " x " + std::to_string(h) + " pixels; at most " +
        std::to_string(kMaxImagePixels) + " (8192 x 8192) are decoded";
  return false;
}

// PIL's CMYK -> RGB (Pillow's cmyk2rgb): R = (255 - K) - C (255 - K) / 255, rounded as its
// MULDIV255. Adobe's CMYK JPEGs store the inks inverted (PIL reads them as "CMYK;I").
void cmyk_to_rgb(const unsigned char* in, unsigned char* out, int width, bool inverted) {
  const auto muldiv255 = [](int a, int b) {
    const int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
  };
  for (int x = 0; x < width; ++x, in += 4, out += 3) {
    const int k = inverted ? 255 - in[3] : in[3], nk = 255 - k;
    for (int c = 0; c < 3; ++c) {
      const int ink = inverted ? 255 - in[c] : in[c];
      out[c] = static_cast<unsigned char>(std::clamp(nk - muldiv255(ink, nk), 0, 255));
    }
  }
}

bool decode_libjpeg(const std::vector<unsigned char>& buf, int target, bool gray_ok, Image& out,
                    std::string& why) {
  jpeg_decompress_struct cinfo;
  JpegErr err;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.emit_message = jpeg_warning;
  if (setjmp(err.jump)) {
    why = std::string("libjpeg: ") + err.msg;
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, buf.data(), static_cast<unsigned long>(buf.size()));
  jpeg_read_header(&cinfo, TRUE);
  if (!pixels_ok(cinfo.image_width, cinfo.image_height, why)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  const bool gray = gray_ok && cinfo.jpeg_color_space == JCS_GRAYSCALE;
  // CMYK and YCCK JPEGs (ImageNet has some): libjpeg gives CMYK, converted below as PIL does.
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  cinfo.out_color_space = gray ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
  cinfo.scale_num = 1;
  cinfo.scale_denom = target > 0 ? static_cast<unsigned>(jpeg_scale_denom(
                                       static_cast<int>(cinfo.image_width),
                                       static_cast<int>(cinfo.image_height), target))
                                 : 1u;
  jpeg_start_decompress(&cinfo);
  out.width = static_cast<int>(cinfo.output_width);
  out.height = static_cast<int>(cinfo.output_height);
  out.channels = cmyk ? 3 : cinfo.output_components;
  out.pixels.resize(static_cast<size_t>(out.width) * out.height * out.channels);
  std::vector<unsigned char> cmyk_row(cmyk ? static_cast<size_t>(out.width) * 4 : 0);
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out.pixels.data() +
                   static_cast<size_t>(cinfo.output_scanline) * out.width * out.channels;
    if (!cmyk) {
      jpeg_read_scanlines(&cinfo, &row, 1);
      continue;
    }
    JSAMPROW in = cmyk_row.data();
    jpeg_read_scanlines(&cinfo, &in, 1);
    cmyk_to_rgb(cmyk_row.data(), row, out.width, cinfo.saw_Adobe_marker);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

bool decode_stb(const std::vector<unsigned char>& buf, bool gray_ok, Image& out,
                std::string& why) {
  int w = 0, h = 0, n = 0;
  // A PNG's size from its IHDR first: stb refuses huge ones but then reports "unknown image type".
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (buf.size() >= 24 && std::memcmp(buf.data(), kPng, 8) == 0) {
    const auto be32 = [&](size_t at) {
      return (uint64_t(buf[at]) << 24) | (uint64_t(buf[at + 1]) << 16) | (uint64_t(buf[at + 2]) << 8) | buf[at + 3];
    };
    if (!pixels_ok(be32(16), be32(20), why)) return false;
  }
  if (!stbi_info_from_memory(buf.data(), static_cast<int>(buf.size()), &w, &h, &n)) {
    why = std::string("stb_image: ") + stbi_failure_reason();
    return false;
  }
  if (!pixels_ok(static_cast<uint64_t>(w), static_cast<uint64_t>(h), why)) return false;
  const int want = (gray_ok && (n == 1 || n == 2)) ? 1 : 3;
  unsigned char* p =
      stbi_load_from_memory(buf.data(), static_cast<int>(buf.size()), &w, &h, &n, want);
  if (!p) {
    why = std::string("stb_image: ") + stbi_failure_reason();
    return false;
  }
  out.width = w;
  out.height = h;
  out.channels = want;
  out.pixels.assign(p, p + static_cast<size_t>(w) * h * want);
  stbi_image_free(p);
  return true;
}

}  // namespace

void set_jpeg_decoder(JpegDecoder d) { g_jpeg = d; }
JpegDecoder jpeg_decoder() { return g_jpeg; }

int jpeg_scale_denom(int width, int height, int target) {
  const int side = std::min(width, height);
  int d = 1;
  while (d < 8 && side / (2 * d) >= 2 * target) d *= 2;
  return d;
}

bool decode_image(const std::string& path, int target, bool gray_ok, Image& out,
                  std::string& why) {
  std::vector<unsigned char> buf;
  if (!read_file(path, buf, why)) return false;
  if (is_jpeg(buf) && g_jpeg == JpegDecoder::libjpeg)
    return decode_libjpeg(buf, target, gray_ok, out, why);
  return decode_stb(buf, gray_ok, out, why);
}

Image decode_image(const std::string& path) {
  Image im;
  std::string why;
  if (!decode_image(path, 0, true, im, why))
    fail(path, ": not a readable image (", kImageExtensions, "): ", why);
  return im;
}

const char* const kImageExtensions = ".jpg/.jpeg/.png/.bmp";

bool is_image_file(const std::string& path) {
  std::string e = std::filesystem::path(path).extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  return e == ".bmp" || e == ".jpeg" || e == ".jpg" || e == ".png";
}

std::vector<std::string> list_images(const std::string& dir, int64_t n) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) fail(dir, ": not a directory of images");
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && is_image_file(e.path().string())) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  if (out.empty()) fail(dir, ": no ", kImageExtensions, " images found");
  if (n > 0) {
    if (static_cast<int64_t>(out.size()) < n) fail(dir, ": -n ", n, " but only ", out.size(), " images");
    out.resize(static_cast<size_t>(n));
  }
  return out;
}

torch::Tensor folder_labels(const std::string& dir, const std::vector<std::string>& files) {
  namespace fs = std::filesystem;
  std::vector<std::string> subdirs;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) subdirs.push_back(e.path().filename().string());
  std::sort(subdirs.begin(), subdirs.end());
  const bool numbered = !subdirs.empty() && std::all_of(subdirs.begin(), subdirs.end(), [](const std::string& s) {
    return s.size() <= 9 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
  });
  torch::Tensor labels = torch::empty({static_cast<int64_t>(files.size())}, torch::kLong);
  const fs::path root = fs::path(dir).lexically_normal();
  for (size_t i = 0; i < files.size(); ++i) {
    const fs::path rel = fs::path(files[i]).lexically_normal().lexically_relative(root);
    if (rel.empty() || std::distance(rel.begin(), rel.end()) < 2) return {};  // a file directly in dir
    const std::string top = rel.begin()->string();
    const auto it = std::lower_bound(subdirs.begin(), subdirs.end(), top);
    if (it == subdirs.end() || *it != top) fail(files[i], ": not under a class subdirectory of ", dir);
    labels[static_cast<int64_t>(i)] = numbered ? static_cast<int64_t>(std::stoll(top)) : static_cast<int64_t>(it - subdirs.begin());
  }
  return labels;
}

}  // namespace hamgan
