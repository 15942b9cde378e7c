// prepare_packed(): any source -> one packed file, multi-threaded, resumable.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "core/error.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"
#include "io/mapped_file.h"
#include "gan/data/class_names.h"

namespace fs = std::filesystem;

namespace hamgan {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The source as it is now: every file's path, size and modification time, hashed. The packed
// file and its .partial record it after the source's path ("folder:/data#<hash>"), so a source
// that gained, lost or replaced images since is not taken for the same one.
std::string source_fingerprint(const Dataset& d) {
  std::string all;
  for (const auto& f : d.source_files()) {
    std::error_code ec;
    const auto size = fs::file_size(f, ec);
    const auto mtime = fs::last_write_time(f, ec).time_since_epoch().count();
    all += f + '\0' + std::to_string(size) + '\0' + std::to_string(mtime) + '\n';
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash64(all.data(), all.size())));
  return hex;
}

// The .partial can be resumed when its header is byte-identical to the one we would write
// (same source, shape, count, classes, chunk) and its size is right.
bool resumable(const std::string& partial, const std::vector<uint8_t>& header, size_t total) {
  std::error_code ec;
  if (!fs::is_regular_file(partial, ec) || fs::file_size(partial, ec) != total) return false;
  MappedFile m(partial, false);
  return m.size() >= header.size() && std::memcmp(m.data(), header.data(), header.size()) == 0;
}

}  // namespace

PrepareResult prepare_packed(const PrepareOptions& opt) {
  PrepareResult res;
  const double t0 = now_s();
  if (opt.channels != 1 && opt.channels != 3)
    fail("--channels ", opt.channels, ": expected 1 or 3");
  if (opt.chunk <= 0) fail("chunk ", opt.chunk, ": expected > 0");
  DataConfig dc;
  dc.format = resolve_format(opt.format, opt.source);
  dc.path = opt.source;
  const std::string source_path =
      word_of(dc.format, kDataFormatWords) + ":" + fs::absolute(opt.source).lexically_normal().string();

  if (fs::is_directory(opt.out))
    fail("--out ", opt.out, ": is a directory; expected the path of the packed file to write (e.g. ",
         (fs::path(opt.out) / "train.packed").string(), ")");
  if (std::error_code ec; !fs::exists(fs::symlink_status(opt.out, ec))) {
    // The file and its .partial are created beside it: a folder that takes no new file is
    // named before the source is read, in its own words rather than a failed create's.
    const fs::path dir = fs::path(opt.out).has_parent_path() ? fs::path(opt.out).parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec))
      fail("--out ", opt.out, ": its folder ", dir.string(), " does not exist (create it first)");
    if (::access(dir.c_str(), W_OK) != 0)
      fail("--out ", opt.out, ": its folder ", dir.string(), " is not writable (", std::strerror(errno),
           "); nothing was written: make it writable or choose another --out");
  }
  const auto data = open_dataset(dc, opt.resolution, opt.channels);
  check_class_names(data->class_names(), opt.source);  // the packed file's header carries them
  const std::string source = source_path + "#" + source_fingerprint(*data);
  if (fs::exists(opt.out)) {
    std::shared_ptr<Dataset> done;
    try {
      done = open_packed(opt.out, opt.resolution, opt.channels);
    } catch (const Error& e) {
      fail(opt.out, " already exists and is not a valid packed file for this request (",
           e.what(), "); remove it or choose another --out");
    }
    MappedFile m(opt.out, false);
    size_t hb = 0;
    const std::string was = decode_packed_header(m.data(), m.size(), opt.out, hb).source;
    const size_t hash_at = was.rfind('#');
    if (was.substr(0, hash_at) != source_path)
      fail(opt.out, " already exists, prepared from another source; remove it or choose "
           "another --out");
    // Same place, but is it the same source? A file written before fingerprints were recorded
    // is compared by its image count and classes alone.
    const bool changed = (hash_at != std::string::npos && was != source) || done->size() != data->size() ||
                         done->class_names() != data->class_names();
    if (changed)
      fail(opt.out, " was prepared from ", opt.source, " as it was then (", done->size(), " images in ",
           done->num_classes(), " classes); the source has changed since (now ", data->size(), " images in ",
           data->num_classes(), " classes, or files added, removed or modified): remove ", opt.out,
           " to prepare it again, or choose another --out");
    res.already_complete = res.finished = true;
    res.count = done->size();
    return res;
  }

  PackedHeader h;
  h.count = data->size();
  h.channels = opt.channels;
  h.resolution = opt.resolution;
  h.chunk = opt.chunk;
  h.source = source;
  h.class_names = data->class_names();
  const std::vector<uint8_t> header = encode_packed_header(h);
  const PackedLayout l = packed_layout(h, header.size());
  res.count = h.count;

  const std::string partial = opt.out + ".partial";
  const bool resume = resumable(partial, header, l.total);
  if (!resume && fs::exists(partial)) {
    // Written for another request or an earlier state of the source: its chunks may hold
    // images that are no longer there.
    if (opt.progress)
      std::cerr << "prepare: " << partial << " is from another request or an earlier state of the source: starting over\n";
    fs::remove(partial);
  }
  std::unique_ptr<MappedFile> mapped;
  try {
    mapped = std::make_unique<MappedFile>(partial, true, l.total);
  } catch (const Error&) {
    std::error_code ec;  // the failure to create or reserve is the error to report, not this cleanup's
    if (!resume) fs::remove(partial, ec);  // nothing of ours in it: no sparse file left behind
    throw;
  }
  MappedFile& m = *mapped;
  uint8_t* base = m.data();
  if (!resume) std::memcpy(base, header.data(), header.size());
  auto* table = reinterpret_cast<uint64_t*>(base + l.table_off);

  // Chunks already written and intact (checked against their data, so a torn write is redone).
  std::vector<char> todo(l.chunks, 1);
  if (resume) {
    for (int64_t c = 0; c < l.chunks; ++c)
      if (table[c] != 0 && table[c] == packed_chunk_checksum(base, l, c)) {
        todo[c] = 0;
        ++res.chunks_reused;
      }
    if (opt.progress)
      std::cerr << "prepare: resuming " << partial << " (" << res.chunks_reused << "/"
                << l.chunks << " chunks already done)\n";
  }

  const int threads = opt.threads > 0 ? opt.threads
                                      : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int64_t> next{0}, started{0}, written{0}, images{0};
  std::atomic<int> finished{0};
  const int64_t limit = opt.stop_after_chunks;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (int64_t c; (c = next++) < l.chunks;) {
        if (!todo[c]) continue;
        if (limit >= 0 && started++ >= limit) break;
        const int64_t first = c * l.chunk, n = std::min(l.chunk, l.count - first);
        for (int64_t i = first; i < first + n; ++i) {
          uint8_t* px = base + l.pixel_off + i * l.image_bytes;
          int32_t label = -1;
          if (!data->get(i, px, label)) {
            std::memset(px, 0, l.image_bytes);
            label = -1;
          }
          std::memcpy(base + l.label_off + 4 * i, &label, 4);
          ++images;
        }
        table[c] = packed_chunk_checksum(base, l, c);
        ++written;
      }
      ++finished;
    });
  if (opt.progress) {
    const int64_t total = l.count - res.chunks_reused * l.chunk;
    while (true) {
      const bool done = finished.load() == threads;
      const int64_t k = images.load();
      const double dt = now_s() - t0;
      std::fprintf(stderr, "\rprepare: %lld/%lld images, %.0f img/s, %.0f s left   ",
                   static_cast<long long>(k), static_cast<long long>(std::max<int64_t>(total, 0)),
                   dt > 0 ? k / dt : 0.0, k > 0 ? dt / k * std::max<int64_t>(0, total - k) : 0.0);
      if (done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::fprintf(stderr, "\n");
  }
  for (auto& t : pool) t.join();
  res.chunks_written = written.load();
  res.seconds = now_s() - t0;
  if (res.chunks_reused + res.chunks_written < l.chunks) {
    m.sync();  // a simulated interruption: leave the .partial behind
    return res;
  }

  for (int64_t i = 0; i < l.count; ++i) {
    int32_t label;
    std::memcpy(&label, base + l.label_off + 4 * i, 4);
    res.skipped += label < 0;
  }
  h.data_checksum = hash64(table, 8 * l.chunks);
  const std::vector<uint8_t> final_header = encode_packed_header(h);
  std::memcpy(base, final_header.data(), final_header.size());
  m.sync();
  fs::rename(partial, opt.out);
  res.finished = true;
  res.seconds = now_s() - t0;
  return res;
}

}  // namespace hamgan
