// Crafted checkpoints: every size a checkpoint declares is bounded by the file and by the model
// it fills. Each case below starts from a checkpoint hamgan wrote, changes one thing with valid
// zip CRCs (a storage offset, a record's length, a storage's declared size, a deflate bomb, a
// negative count, the stored config's channels) and feeds the file to every reader path: the
// checkpoint reader, resume's newest-valid search, `sample` with and without --no-ema, `dgap
// --run` and a real training resume. Each must give a hamgan::Error that names the file and what
// was expected, and no path may allocate more than the process's data segment allows while the
// cases run (DataLimit: a reader that believed a declared size would fail there instead).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "gan/checkpoint/checkpoint.h"
#include "gan/cli/commands.h"
#include "gan/eval/d_gap.h"
#include "gan/train/train_hooks.h"
#include "gan/train/trainer.h"
#include "io/zip_reader.h"
#include "support/cli.h"
#include "support/tiny_checkpoint.h"
#include "support/tiny_run.h"

namespace test_checkpoint_bounds {

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test, created.
std::string fresh(const std::string& name) { return test::created_dir("test_checkpoint_bounds", name); }

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What a reader did with a file: a hamgan::Error (clean) or anything else.
struct Outcome {
  enum Kind { NoError, Clean, Other } kind = NoError;
  std::string message;
};

Outcome outcome_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {Outcome::Clean, e.what()};
  } catch (const std::exception& e) {  // std::bad_alloc under DataLimit, c10::Error, ...
    return {Outcome::Other, e.what()};
  }
  return {};
}

// ---- zip archives, member by member ----

struct Member {
  std::string name;
  std::vector<uint8_t> data;  // the bytes stored, or the raw deflate stream when `deflated`
  bool deflated = false;
  uint64_t size = 0;  // deflated: the inflated size the directory declares
  uint32_t crc = 0;   // deflated: the CRC-32 the directory declares
};
using Archive = std::vector<Member>;

Archive read_archive(const std::string& path) {
  const auto b = read_all(path);
  Archive a;
  io::for_each_zip_member(b, path, 1 << 20, [&](const std::string& name, const uint8_t* p, size_t n) {
    a.push_back({name, std::vector<uint8_t>(p, p + n)});
  });
  return a;
}

uint32_t crc_of(const std::vector<uint8_t>& b) {
  return static_cast<uint32_t>(crc32(crc32(0L, Z_NULL, 0), b.data(), static_cast<uInt>(b.size())));
}

// A plain zip (no zip64, no data descriptors): what LibTorch's reader and hamgan's both read.
void write_archive(const std::string& path, const Archive& a) {
  std::vector<uint8_t> out, cd;
  const auto put = [](std::vector<uint8_t>& v, uint64_t x, int k) {
    for (int j = 0; j < k; ++j) v.push_back(static_cast<uint8_t>(x >> (8 * j)));
  };
  for (const Member& m : a) {
    const uint64_t off = out.size(), usize = m.deflated ? m.size : m.data.size();
    const uint32_t crc = m.deflated ? m.crc : crc_of(m.data);
    const int method = m.deflated ? 8 : 0;
    put(out, 0x04034b50, 4), put(out, 20, 2), put(out, 0, 2), put(out, method, 2), put(out, 0, 2), put(out, 0x21, 2);
    put(out, crc, 4), put(out, m.data.size(), 4), put(out, usize, 4), put(out, m.name.size(), 2), put(out, 0, 2);
    out.insert(out.end(), m.name.begin(), m.name.end());
    out.insert(out.end(), m.data.begin(), m.data.end());
    put(cd, 0x02014b50, 4), put(cd, 20, 2), put(cd, 20, 2), put(cd, 0, 2), put(cd, method, 2), put(cd, 0, 2);
    put(cd, 0x21, 2), put(cd, crc, 4), put(cd, m.data.size(), 4), put(cd, usize, 4), put(cd, m.name.size(), 2);
    put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 2), put(cd, 0, 4), put(cd, off, 4);
    cd.insert(cd.end(), m.name.begin(), m.name.end());
  }
  const uint64_t cd_off = out.size();
  out.insert(out.end(), cd.begin(), cd.end());
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2), put(out, a.size(), 2), put(out, a.size(), 2);
  put(out, cd.size(), 4), put(out, cd_off, 4), put(out, 0, 2);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(out.data()), out.size());
}

Member& member_named(Archive& a, const std::string& name) {
  for (Member& m : a)
    if (m.name == name) return m;
  throw std::runtime_error("no member " + name);
}

Member& member_ending(Archive& a, const std::string& suffix) {
  for (Member& m : a)
    if (m.name.size() >= suffix.size() && m.name.compare(m.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return m;
  throw std::runtime_error("no member ending in " + suffix);
}

// Raw deflate of `b`, as a member that declares `declared` inflated bytes (its real size unless given).
Member deflated(const std::string& name, const std::vector<uint8_t>& b, int64_t declared = -1) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&z, b.size()));
  z.next_in = const_cast<uint8_t*>(b.data());
  z.avail_in = static_cast<uInt>(b.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return {name, out, true, declared < 0 ? b.size() : static_cast<uint64_t>(declared), crc_of(b)};
}

// A deflate bomb: `chunks` x 64 KiB of zeros in ~83 bytes a chunk (about 790:1, under the 1032:1
// that deflate allows, as a real one is), built from one fully flushed block repeated: such a
// block refers back only to itself, so copies of it decode one after another. Nothing is inflated.
Member zero_bomb(const std::string& name, uint64_t chunks) {
  const std::vector<uint8_t> zeros(1 << 16, 0);
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> block(1 << 17), last(64);
  z.next_in = const_cast<uint8_t*>(zeros.data());
  z.avail_in = static_cast<uInt>(zeros.size());
  z.next_out = block.data();
  z.avail_out = static_cast<uInt>(block.size());
  deflate(&z, Z_FULL_FLUSH);
  block.resize(block.size() - z.avail_out);
  z.next_out = last.data();
  z.avail_out = static_cast<uInt>(last.size());
  deflate(&z, Z_FINISH);
  last.resize(last.size() - z.avail_out);
  deflateEnd(&z);
  Member m{name, {}, true, chunks * zeros.size(), static_cast<uint32_t>(crc32(0L, Z_NULL, 0))};
  const uLong chunk_crc = crc32(crc32(0L, Z_NULL, 0), zeros.data(), static_cast<uInt>(zeros.size()));
  for (uint64_t k = 0; k < chunks; ++k) {
    m.data.insert(m.data.end(), block.begin(), block.end());
    m.crc = static_cast<uint32_t>(crc32_combine(m.crc, chunk_crc, static_cast<z_off_t>(zeros.size())));
  }
  m.data.insert(m.data.end(), last.begin(), last.end());
  return m;
}

// ---- data.pkl, opcode by opcode (the protocol-2 subset TorchScript's pickler writes) ----

struct Op {
  size_t pos = 0, len = 0;
  uint8_t code = 0;
};

uint64_t le_at(const std::vector<uint8_t>& p, size_t at, int k) {
  uint64_t u = 0;
  for (int j = 0; j < k; ++j) u |= static_cast<uint64_t>(p.at(at + j)) << (8 * j);
  return u;
}

std::vector<Op> pickle_ops(const std::vector<uint8_t>& p) {
  std::vector<Op> ops;
  for (size_t i = 0; i < p.size();) {
    const uint8_t c = p[i];
    size_t len = 1;
    switch (c) {
      case 0x80: case 'K': case 'q': case 'h': len = 2; break;
      case 'M': len = 3; break;
      case 'J': case 'r': case 'j': len = 5; break;
      case 'G': len = 9; break;
      case 0x8a: case 0x8c: case 'C': len = 2 + p.at(i + 1); break;
      case 'X': case 'B': len = 5 + le_at(p, i + 1, 4); break;
      case 'c': {
        size_t e = i + 1;
        for (int line = 0; line < 2; ++line, ++e)
          while (p.at(e) != '\n') ++e;
        len = e - i;
        break;
      }
      case '(': case ')': case ']': case '}': case 'N': case 0x88: case 0x89: case 't': case 0x85: case 0x86:
      case 0x87: case 'a': case 'e': case 's': case 'u': case 'b': case 'R': case 'Q': case 0x81: case 0x93:
      case 0x94: case '.': break;
      default: throw std::runtime_error("data.pkl: unexpected opcode " + std::to_string(c) + " at byte " + std::to_string(i));
    }
    ops.push_back({i, len, c});
    i += len;
    if (c == '.') break;
  }
  return ops;
}

std::string op_text(const std::vector<uint8_t>& p, const Op& o) {
  if (o.code != 'X' && o.code != 0x8c) throw std::runtime_error("data.pkl: expected a string at byte " + std::to_string(o.pos));
  const size_t head = o.code == 'X' ? 5 : 2;
  return std::string(p.begin() + static_cast<std::ptrdiff_t>(o.pos + head), p.begin() + static_cast<std::ptrdiff_t>(o.pos + o.len));
}

int64_t op_int(const std::vector<uint8_t>& p, const Op& o) {
  switch (o.code) {
    case 'K': return p.at(o.pos + 1);
    case 'M': return static_cast<int64_t>(le_at(p, o.pos + 1, 2));
    case 'J': return static_cast<int32_t>(le_at(p, o.pos + 1, 4));
    default: throw std::runtime_error("data.pkl: expected a small int at byte " + std::to_string(o.pos));
  }
}

std::vector<uint8_t> int_op(int64_t v) {
  std::vector<uint8_t> b;
  if (v >= 0 && v < 256) return {'K', static_cast<uint8_t>(v)};
  if (v >= INT32_MIN && v <= INT32_MAX) {
    b = {'J'};
    for (int j = 0; j < 4; ++j) b.push_back(static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * j)));
    return b;
  }
  b = {0x8a, 8};  // LONG1, 8 bytes two's complement
  for (int j = 0; j < 8; ++j) b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * j)));
  return b;
}

std::vector<uint8_t> str_op(const std::string& s) {
  std::vector<uint8_t> b = {'X'};
  for (int j = 0; j < 4; ++j) b.push_back(static_cast<uint8_t>(s.size() >> (8 * j)));
  b.insert(b.end(), s.begin(), s.end());
  return b;
}

// The next op after i that is not a memo put (the pickler memoizes strings, globals, storages).
size_t next_value(const std::vector<Op>& ops, size_t i) {
  do ++i;
  while (i < ops.size() && (ops[i].code == 'q' || ops[i].code == 'r' || ops[i].code == 0x94));
  if (i >= ops.size()) throw std::runtime_error("data.pkl ends early");
  return i;
}

// Op index of the value of the checkpoint's attribute `name` (the root object's: written first).
size_t attribute(const std::vector<uint8_t>& p, const std::string& name) {
  const auto ops = pickle_ops(p);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].code == 'X' && op_text(p, ops[i]) == name) return next_value(ops, i);
  throw std::runtime_error("data.pkl: no attribute " + name);
}

// The first tensor in data.pkl: G's (part "g" is written first). Op indices of its persistent
// id's key and numel, and of its storage offset, first size and first stride.
struct FirstTensor {
  size_t numel = 0, offset = 0, size0 = 0, stride0 = 0;
  std::string key;
  int64_t numel_value = 0;
};

FirstTensor first_tensor(const std::vector<uint8_t>& p) {
  const auto ops = pickle_ops(p);
  size_t s = 0;
  while (s < ops.size() && !(ops[s].code == 'X' && op_text(p, ops[s]) == "storage")) ++s;
  if (s == ops.size()) throw std::runtime_error("data.pkl: no persistent storage id");
  FirstTensor t;
  const size_t type = next_value(ops, s), key = next_value(ops, type), location = next_value(ops, key);
  t.key = op_text(p, ops.at(key));
  t.numel = next_value(ops, location);
  t.numel_value = op_int(p, ops[t.numel]);
  const size_t tuple = next_value(ops, t.numel), q = next_value(ops, tuple);
  if (ops[tuple].code != 't' || ops[q].code != 'Q') throw std::runtime_error("data.pkl: unexpected persistent id");
  t.offset = next_value(ops, q);
  const size_t mark = next_value(ops, t.offset);
  if (ops[mark].code != '(') throw std::runtime_error("data.pkl: sizes are not a MARK ... TUPLE");
  t.size0 = mark + 1;
  size_t end = t.size0;
  while (ops.at(end).code != 't') ++end;
  if (ops.at(end + 1).code != '(') throw std::runtime_error("data.pkl: strides are not a MARK ... TUPLE");
  t.stride0 = end + 2;
  (void)op_int(p, ops.at(t.size0));  // both ints, or this throws
  (void)op_int(p, ops.at(t.stride0));
  return t;
}

// Replaces op `index` of the archive's data.pkl with one op's bytes (op indices stay valid).
void replace_op(Archive& a, size_t index, const std::vector<uint8_t>& with) {
  std::vector<uint8_t>& p = member_ending(a, "/data.pkl").data;
  const Op o = pickle_ops(p).at(index);
  p.erase(p.begin() + static_cast<std::ptrdiff_t>(o.pos), p.begin() + static_cast<std::ptrdiff_t>(o.pos + o.len));
  p.insert(p.begin() + static_cast<std::ptrdiff_t>(o.pos), with.begin(), with.end());
}

// ---- bounded memory ----

// Caps this process's data segment (the heap and every private writable mapping: where any
// reader's buffer lands) at what it uses now plus `headroom`, until destroyed. A reader that
// allocated what a crafted size declares gets std::bad_alloc (or LibTorch's allocation error)
// here, a failure of this test, instead of taking gigabytes of the machine.
class DataLimit {
 public:
  explicit DataLimit(uint64_t headroom) {
    getrlimit(RLIMIT_DATA, &old_);
    rlimit lim = old_;
    const rlim_t want = static_cast<rlim_t>(vm_data() + headroom);
    if (old_.rlim_cur == RLIM_INFINITY || old_.rlim_cur > want) lim.rlim_cur = want;
    active_ = setrlimit(RLIMIT_DATA, &lim) == 0;
  }
  ~DataLimit() { setrlimit(RLIMIT_DATA, &old_); }
  DataLimit(const DataLimit&) = delete;
  DataLimit& operator=(const DataLimit&) = delete;
  bool active() const { return active_; }

 private:
  static uint64_t vm_data() {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("VmData:", 0) == 0) return std::stoull(line.substr(7)) * 1024;  // "VmData:  123 kB"
    return 0;
  }
  rlimit old_{};
  bool active_ = false;
};

constexpr uint64_t kHeadroom = uint64_t(1) << 30;  // 1 GiB: the tiny model needs a few MB

void expect_names(const Outcome& o, const std::string& path, const std::vector<std::string>& parts,
                  const std::string& where) {
  EXPECT_EQ(o.kind, Outcome::Clean) << where << ": " << (o.kind == Outcome::NoError ? "(no error)" : o.message);
  EXPECT_NE(o.message.find(path), std::string::npos) << where << ": '" << o.message << "' does not name " << path;
  for (const auto& p : parts)
    EXPECT_NE(o.message.find(p), std::string::npos) << where << ": '" << o.message << "' lacks '" << p << "'";
}

struct Case {
  std::string name;
  std::function<void(Archive&)> craft;
  std::vector<std::string> expect;  // in the error, besides the file's path
};

}  // namespace

// Fuzz-style, by hand: crafted offsets, lengths, deflate bombs and negative counts, each fed to
// every reader path, EMA and not, within bounded memory.
TEST(CheckpointBounds, CraftedCheckpointsGiveCleanErrorsOnEveryReaderPath) {
  const std::string yaml = test::tiny_checkpoint_yaml();
  const std::string base_dir = fresh("base");
  const std::string pristine = base_dir + "/ckpt_000000010.pt";
  test::write_tiny_checkpoint(pristine, 10, /*ema=*/true, 2, yaml);
  const Archive base = read_archive(pristine);
  Archive probe = base;
  const Member& pkl = member_ending(probe, "/data.pkl");
  const FirstTensor ft = first_tensor(pkl.data);
  // LibTorch: storage k of <root>/data.pkl is the record <root>/data/k.
  const std::string rec = pkl.name.substr(0, pkl.name.size() - 4) + "/" + ft.key;  // G's first tensor
  const uint64_t rec_size = member_named(probe, rec).data.size();
  ASSERT_EQ(rec_size, static_cast<uint64_t>(ft.numel_value) * 4) << rec << ": G's weights are fp32";

  // The harness itself changes nothing: the archive written back member by member loads.
  {
    const std::string dir = fresh("rezipped");
    const std::string path = dir + "/ckpt_000000010.pt";
    write_archive(path, base);
    const CheckpointData c = load_checkpoint(path);
    EXPECT_EQ(c.iteration, 10);
    EXPECT_NO_THROW(load_generator(c, /*ema=*/false));
    EXPECT_NO_THROW(load_generator(c, /*ema=*/true));
  }

  const auto set_int = [](const std::string& attr, int64_t v) {
    return [attr, v](Archive& a) { replace_op(a, attribute(member_ending(a, "/data.pkl").data, attr), int_op(v)); };
  };
  const auto record = [rec](Archive& a) -> Member& { return member_named(a, rec); };
  std::string config_2000 = yaml;
  config_2000.replace(config_2000.find("ch: 4, z_dim"), 5, "ch: 2000");
  const std::vector<Case> cases = {
      {"storage_offset_2^28", [&](Archive& a) { replace_op(a, ft.offset, int_op(int64_t(1) << 28)); },
       {"at offset 268435456", "reaches past the end of a storage of " + std::to_string(ft.numel_value)}},
      {"negative_storage_offset", [&](Archive& a) { replace_op(a, ft.offset, int_op(-1)); },
       {"negative storage offset -1"}},
      {"expanded_view", [&](Archive& a) {  // stride 0 keeps it inside the storage, but 2^30 rows
         replace_op(a, ft.stride0, int_op(0));
         replace_op(a, ft.size0, int_op(int64_t(1) << 30));
       }, {"has more elements than its storage of " + std::to_string(ft.numel_value)}},
      {"record_shorter_than_its_storage", [&](Archive& a) { record(a).data.resize(rec_size - 4); },
       {"record '" + rec + "' holds " + std::to_string(rec_size - 4) + " bytes"}},
      {"record_longer_than_its_storage", [&](Archive& a) { record(a).data.resize(rec_size + 4); },
       {"record '" + rec + "' holds " + std::to_string(rec_size + 4) + " bytes"}},
      {"storage_declares_one_element_more", [&](Archive& a) { replace_op(a, ft.numel, int_op(ft.numel_value + 1)); },
       {"declares " + std::to_string(ft.numel_value + 1) + " elements", "holds " + std::to_string(rec_size) + " bytes"}},
      {"storage_declares_2^40_elements", [&](Archive& a) { replace_op(a, ft.numel, int_op(int64_t(1) << 40)); },
       {"declares 1099511627776 elements"}},
      {"record_missing", [&](Archive& a) { a.erase(a.begin() + (&record(a) - a.data())); },
       {"has no record '" + rec + "'"}},
      {"record_twice", [&](Archive& a) {
         Member copy = record(a);
         copy.data.assign(copy.data.size(), 0);
         a.push_back(copy);
       }, {"member '" + rec + "' appears twice"}},
      // 3 GiB of zeros in ~4 MB: believed, it is 3 GiB on the heap and an all-black G.
      {"deflate_bomb_3GiB", [&](Archive& a) { record(a) = zero_bomb(rec, 3 * (uint64_t(1) << 14)); },
       {"declares 3221225472 bytes once inflated"}},
      {"deflated_record_of_another_length", [&](Archive& a) {
         std::vector<uint8_t> b = record(a).data;
         b.resize(b.size() + 64, 0);
         record(a) = deflated(rec, b);
       }, {"record '" + rec + "' holds " + std::to_string(rec_size + 64) + " bytes"}},
      {"deflate_stream_longer_than_declared", [&](Archive& a) {
         std::vector<uint8_t> b = record(a).data;
         b.resize(b.size() + 4096, 0);
         record(a) = deflated(rec, b, static_cast<int64_t>(rec_size));
       }, {rec, "does not give the declared " + std::to_string(rec_size) + " bytes"}},
      {"iteration_-1", set_int("iteration", -1), {"entry 'iteration' is -1: expected >= 0"}},
      {"loader_epoch_-3", set_int("loader_epoch", -3), {"entry 'loader_epoch' is -3: expected >= 0"}},
      {"loader_batch_-1", set_int("loader_batch", -1), {"entry 'loader_batch' is -1: expected >= 0"}},
      {"ema_standing_-1", set_int("g_ema_standing", -1), {"entry 'g_ema_standing' is -1: expected >= 0"}},
      // 32 px at ch 2000: 3.5e9 convolution weights in G alone, in a file of ~100 KB.
      {"stored_config_ch_2000", [&](Archive& a) {
         replace_op(a, attribute(member_ending(a, "/data.pkl").data, "config"), str_op(config_2000));
       }, {"generator.ch", "2000"}},
  };

  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    const std::string dir = fresh(k.name);
    const std::string ckdir = dir + "/run/checkpoints";
    fs::create_directories(ckdir);
    const std::string good = checkpoint_path(ckdir, 5), crafted = checkpoint_path(ckdir, 10);
    test::write_tiny_checkpoint(good, 5, /*ema=*/true, 1, yaml);
    Archive a = base;
    k.craft(a);
    write_archive(crafted, a);
    // dgap reads a run's oldest checkpoint first: a run holding only the crafted one.
    const std::string dgap_run = dir + "/dgap_run";
    fs::create_directories(dgap_run + "/checkpoints");
    fs::copy_file(crafted, checkpoint_path(dgap_run + "/checkpoints", 10));

    const DataLimit limit(kHeadroom);
    ASSERT_TRUE(limit.active());
    const Outcome direct = outcome_of([&] { load_checkpoint(crafted); });
    expect_names(direct, crafted, k.expect, "load_checkpoint");
    if (direct.kind != Outcome::Clean) continue;  // the paths below would act on what it accepted

    // Resume (train, fid --run): the crafted newest is reported and skipped for the valid one.
    std::ostringstream warn;
    std::optional<CheckpointData> latest;
    const Outcome resume = outcome_of([&] { latest = load_latest_checkpoint(ckdir, warn); });
    EXPECT_EQ(resume.kind, Outcome::NoError) << resume.message;
    EXPECT_TRUE(latest && latest->iteration == 5);
    EXPECT_NE(warn.str().find(crafted), std::string::npos) << warn.str();
    for (const bool ema : {false, true}) {
      std::vector<std::string> args = {"--checkpoint", crafted, "--out", dir + "/samples", "-n", "3"};
      if (!ema) args.push_back("--no-ema");
      expect_names(outcome_of([&] { test::run_cli(cli::sample_cmd, "sample", args); }), crafted, k.expect,
                   ema ? "sample" : "sample --no-ema");
      EXPECT_FALSE(fs::exists(dir + "/samples"));
    }
    const std::string dgap_file = checkpoint_path(dgap_run + "/checkpoints", 10);
    expect_names(outcome_of([&] { eval::d_gap_run(dgap_run, 2, torch::kCPU); }), dgap_file, k.expect, "dgap --run");
  }
}

// A training run resumed over a checkpoint whose G tensor declares storage offset 2^28: the
// file is reported and training goes on from the previous checkpoint, with finite losses.
TEST(CheckpointBounds, TrainingResumesPastACheckpointWhoseTensorLiesOutsideItsStorage) {
  const Config cfg = test::tiny();
  const std::string dir = fresh("resume");
  test::run(cfg, dir);  // checkpoints at 3 and 6
  const std::string ckdir = dir + "/checkpoints", newest = checkpoint_path(ckdir, 6);
  Archive a = read_archive(newest);
  replace_op(a, first_tensor(member_ending(a, "/data.pkl").data).offset, int_op(int64_t(1) << 28));
  write_archive(newest, a);
  Outcome o;
  {
    const DataLimit limit(kHeadroom);
    o = outcome_of([&] { load_checkpoint(newest); });
  }
  // Accepted, its G would be read a gigabyte past its storage when the resume copies it.
  ASSERT_EQ(o.kind, Outcome::Clean) << o.message;
  ASSERT_NE(o.message.find(newest), std::string::npos) << o.message;
  ASSERT_NE(o.message.find("at offset 268435456"), std::string::npos) << o.message;

  // Iterations 4..8.
  test::expect_resumed_past_damaged(test::run(test::tiny("train.iterations=8"), dir), newest,
                                    checkpoint_path(ckdir, 3), 5);
}

}  // namespace test_checkpoint_bounds
