// The packed dataset file written by `hamgan prepare` and read through mmap by training
// (the role of BigGAN-PyTorch's ILSVRC128.hdf5): no decoding at training time.
//
// Layout, little-endian:
//   [0, H)  header: "HGANPACK", u32 version, u32 H (multiple of 4096), i64 count,
//           i32 channels, i32 resolution, i32 classes, i32 chunk, u64 data checksum
//           (0 while .partial), u64 header checksum (of the header with this field 0),
//           then u32-length-prefixed strings: the source, then each class name.
//   pixels: count x channels x resolution x resolution uint8 (CHW), padded to 8 bytes
//   labels: count x int32 (-1: the source image was undecodable), padded to 8 bytes
//   table:  one u64 checksum per chunk of `chunk` images (never 0 once written)
// The data checksum is the hash of the table, so a complete file is verified chunk by chunk
// (in parallel) and an interrupted .partial resumes from the chunks whose data match.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gan/config/config.h"

namespace hamgan {

constexpr char kPackedMagic[8] = {'H', 'G', 'A', 'N', 'P', 'A', 'C', 'K'};
constexpr uint32_t kPackedVersion = 1;

uint64_t hash64(const void* data, size_t n, uint64_t seed = 0);

struct PackedHeader {
  int64_t count = 0, channels = 0, resolution = 0, chunk = 256;
  std::string source;
  std::vector<std::string> class_names;
  uint64_t data_checksum = 0;
};

struct PackedLayout {
  size_t header_bytes = 0, image_bytes = 0;
  size_t pixel_off = 0, label_off = 0, table_off = 0, total = 0;
  int64_t count = 0, chunk = 0, chunks = 0;
};

std::vector<uint8_t> encode_packed_header(const PackedHeader& h);
// Parses and checks magic, version, header checksum; `file` names it in errors.
PackedHeader decode_packed_header(const uint8_t* p, size_t file_size, const std::string& file,
                                  size_t& header_bytes);
PackedLayout packed_layout(const PackedHeader& h, size_t header_bytes);
// Checksum of chunk `c` (pixels and labels) of a mapped file: never 0.
uint64_t packed_chunk_checksum(const uint8_t* base, const PackedLayout& l, int64_t c);

struct PrepareOptions {
  std::string source;
  DataFormat format = DataFormat::Auto;  // Auto: detected from the path
  std::string out;
  int64_t resolution = 32, channels = 3, chunk = 256;
  int threads = 0;              // 0: hardware concurrency
  bool progress = true;         // progress line on stderr
  int64_t stop_after_chunks = -1;  // tests: simulate an interruption after this many chunks
};

struct PrepareResult {
  bool already_complete = false, finished = false;
  int64_t count = 0, skipped = 0, chunks_reused = 0, chunks_written = 0;
  double seconds = 0;
};

// Converts any source into `out`: writes out.partial, resumes a matching .partial, renames
// at the end; does nothing when `out` is already a complete valid file of the same source.
PrepareResult prepare_packed(const PrepareOptions& opt);

}  // namespace hamgan
