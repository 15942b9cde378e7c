#include "gan/checkpoint/checkpoint.h"

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

#include "core/error.h"
#include "core/phase_progress.h"
#include "gan/config/arch.h"
#include "gan/models/standing_stats.h"
#include "io/atomic_file.h"
#include "io/torch_file.h"
#include "io/zip_reader.h"
#include "io/regular_file.h"
#include "metrics/classifier.h"

namespace hamgan {

namespace fs = std::filesystem;

namespace {

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  c10::IValue v;
  ar.read(key, v);
  if (!v.isInt()) fail("entry '", key, "': expected an integer");
  return v.toInt();
}

// A count the checkpoint stores (iteration, loader position): never negative.
int64_t read_count(torch::serialize::InputArchive& ar, const std::string& key) {
  const int64_t v = read_int(ar, key);
  if (v < 0) fail("entry '", key, "' is ", v, ": expected >= 0");
  return v;
}

// The stored config decides how large the models built from it are, and they are built before
// any stored shape is compared (load_module): an edited config (generator.ch 2000) would
// allocate gigabytes, or fail inside LibTorch naming nothing. Every block of G and D holds two
// 3x3 convolutions (in -> out, out -> out; gan/config/arch.h), which the file holds as weights
// of at least 2 bytes (they are fp32): a config whose convolutions alone outweigh the file does
// not belong to it. This lower bound leaves out everything else (linear layers, attention, EMA
// G, Adam's moments), so it never refuses a checkpoint hamgan wrote.
void check_config_fits_file(const CheckpointData& c, uint64_t file_bytes) {
  const auto conv_weights = [](const std::vector<BlockArch>& arch) {
    double w = 0;
    for (const auto& b : arch) w += 9.0 * (static_cast<double>(b.in) * b.out + static_cast<double>(b.out) * b.out);
    return w;
  };
  const ModelConfig& m = c.config.model;
  const double g = conv_weights(generator_arch(m.resolution, c.config.generator.ch, c.config.generator.ch_mult));
  const double d = conv_weights(discriminator_arch(m.resolution, c.config.discriminator.ch, m.image_channels,
                                                      c.config.discriminator.ch_mult));
  if (2 * (g + d) > static_cast<double>(file_bytes))
    fail(c.path, ": its stored config (model.resolution ", m.resolution, ", generator.ch ", c.config.generator.ch,
         ", discriminator.ch ", c.config.discriminator.ch, ") builds G and D with ", static_cast<uint64_t>(g + d),
         " convolution weights, more than this file of ", file_bytes,
         " bytes holds even at 2 bytes a weight; the config inside the checkpoint was edited or does not belong "
         "to these weights");
}

}  // namespace

namespace {

// Checkpoints known good, by path: (size@mtime when known good, iteration inside).
std::map<std::string, std::pair<std::string, std::optional<int64_t>>>& verified_files() {
  static std::map<std::string, std::pair<std::string, std::optional<int64_t>>> seen;
  return seen;
}

std::string file_stamp(const std::string& path) {
  std::error_code ec;
  return std::to_string(fs::file_size(path, ec)) + "@" +
         std::to_string(fs::last_write_time(path, ec).time_since_epoch().count());
}

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointWrite& c) {
  if (!c.g || !c.d || !c.opt_g || !c.opt_d) fail(path, ": checkpoint needs G, D and both optimizers");
  torch::serialize::OutputArchive ar;
  ar.write("version", c10::IValue(kCheckpointVersion));
  ar.write("iteration", c10::IValue(c.iteration));
  ar.write("config", c10::IValue(c.config_yaml));
  ar.write("loader_epoch", c10::IValue(c.loader.epoch));
  ar.write("loader_batch", c10::IValue(c.loader.batch_in_epoch));
  ar.write("has_ema", c10::IValue(c.g_ema != nullptr));
  ar.write("g_ema_standing", c10::IValue(c.g_ema ? c.ema_standing : int64_t(0)));
  const auto sub = [&](const std::string& key, auto& saveable) {  // a module or an optimizer
    torch::serialize::OutputArchive s;
    saveable.save(s);
    ar.write(key, s);
  };
  sub("g", *c.g);
  sub("d", *c.d);
  if (c.g_ema) sub("g_ema", *c.g_ema);
  sub("opt_g", *c.opt_g);
  sub("opt_d", *c.opt_d);
  torch::serialize::OutputArchive rng;
  for (const auto& [name, state] : c.rng) rng.write(name, state.cpu(), /*is_buffer=*/true);
  ar.write("rng", rng);
  if (!c.train_state.empty()) {
    torch::serialize::OutputArchive st;
    for (const auto& [name, state] : c.train_state) st.write(name, state.cpu(), /*is_buffer=*/true);
    ar.write("train_state", st);
  }

  std::ostringstream bytes;
  ar.save_to(bytes);
  io::write_file_atomically(path, bytes.str());
  // Written whole and fsync'ed under a temporary name, then renamed: good as written. Pruning
  // need not read it back (a 128 px model's checkpoint is ~1 GB); a file changed
  // since has another size or mtime and is verified again.
  verified_files()[path] = {file_stamp(path), c.iteration};
}

namespace {

CheckpointData read_checkpoint(const std::string& path, torch::Device device, uint64_t file_bytes) {
  CheckpointData c;
  c.path = path;
  c.archive = std::make_shared<torch::serialize::InputArchive>();
  // LibTorch's reader checks neither the zip CRCs (a flipped byte in a tensor record would load
  // as different weights) nor any size the file declares (a tensor at storage offset 2^28 reads
  // a gigabyte past its storage: a crash; a record shorter than its storage: garbage weights).
  // Every record, storage and tensor view is checked against the file first. LibTorch writes
  // every record uncompressed and a zip tool's repack of weights gains little, so deflated
  // members may inflate to about twice the file's size, never to a deflate bomb's gigabytes.
  io::ZipLimits limits;
  limits.max_inflated = 2 * file_bytes + (uint64_t(1) << 20);
  limits.inflated_note =
      " (twice the file's size: hamgan's checkpoints store every record uncompressed, so this file was "
      "crafted or damaged)";
  torch_file::verify_script_archive(path, limits);
  try {
    c.archive->load_from(path, device);
    c.version = read_int(*c.archive, "version");
    if (c.version != kCheckpointVersion)
      fail("format version ", c.version, ", expected ", kCheckpointVersion);
    c.iteration = read_count(*c.archive, "iteration");
    c.loader.epoch = read_count(*c.archive, "loader_epoch");
    c.loader.batch_in_epoch = read_count(*c.archive, "loader_batch");
    c10::IValue v;
    c.archive->read("config", v);
    if (!v.isString()) fail("entry 'config': expected YAML text");
    c.config_yaml = v.toStringRef();
    c.archive->read("has_ema", v);
    c.has_ema = v.isBool() && v.toBool();
    if (c.archive->try_read("g_ema_standing", v) && v.isInt()) c.ema_standing = v.toInt();
    if (c.ema_standing < 0) fail("entry 'g_ema_standing' is ", c.ema_standing, ": expected >= 0");
    // Every part must be present now, not when it is first used.
    std::vector<std::string> parts = {"g", "d", "opt_g", "opt_d", "rng"};
    if (c.has_ema) parts.push_back("g_ema");
    for (const auto& part : parts) {
      torch::serialize::InputArchive s;
      if (!c.archive->try_read(part, s)) fail("part '", part, "' is missing");
    }
  } catch (const Error& e) {
    fail(path, ": not a valid hamgan checkpoint: ", e.what());
  } catch (const c10::Error& e) {
    if (metrics::classifier_output().recognises_file(path))
      fail(path, ": a domain classifier (`hamgan classifier train`), not a training checkpoint; expected "
           "RUN/checkpoints/ckpt_<iteration>.pt");
    fail(path, ": not a valid hamgan checkpoint (damaged or truncated): ", e.what_without_backtrace());
  }
  c.config = parse_config(c.config_yaml, path + " (stored config)");
  check_config_fits_file(c, file_bytes);
  return c;
}

}  // namespace

CheckpointData load_checkpoint(const std::string& path, torch::Device device) {
  std::error_code ec;
  const uint64_t file_bytes = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
  try {
    return read_checkpoint(path, device, file_bytes);
  } catch (const std::bad_alloc&) {
    fail(path, ": out of memory while reading this checkpoint of ", file_bytes,
         " bytes (its tensors need about as much again)");
  }
}

void CheckpointData::load_module(const std::string& part, torch::nn::Module& m) const {
  torch::serialize::InputArchive s;
  if (!archive->try_read(part, s)) fail(path, ": part '", part, "' is missing");
  // InputArchive::read replaces a tensor (set_) whatever its shape, so a stored config that no
  // longer matches the stored weights would load silently; compare every shape afterwards.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  for (const auto& kv : m.named_parameters()) shapes.push_back({kv.key(), kv.value().sizes().vec()});
  for (const auto& kv : m.named_buffers()) shapes.push_back({kv.key(), kv.value().sizes().vec()});
  try {
    m.load(s);
  } catch (const c10::Error& e) {
    fail(path, ": part '", part, "' does not fit the model built from its stored config: ",
         e.what_without_backtrace());
  }
  // InputArchive::read also makes the module's tensors share storage with the archive, so two
  // modules loaded from one CheckpointData would share weights and BN statistics (and standing
  // statistics computed for one would change the other): each module gets its own copy.
  {
    torch::NoGradGuard no_grad;
    for (auto& t : m.parameters()) t.set_data(t.data().clone());
    for (auto& t : m.buffers()) t.set_data(t.clone());
  }
  auto now = m.named_parameters();
  auto bufs = m.named_buffers();
  for (const auto& [name, want] : shapes) {
    const torch::Tensor* t = now.find(name);
    if (!t) t = bufs.find(name);
    if (t && t->sizes().vec() != want)
      fail(path, ": part '", part, "': '", name, "' is stored with shape ", t->sizes(),
           " but the stored config builds ", c10::IntArrayRef(want),
           "; the config inside the checkpoint was edited or does not belong to these weights");
  }
}

void CheckpointData::load_optimizer(const std::string& part, torch::optim::Optimizer& opt) const {
  torch::serialize::InputArchive s;
  if (!archive->try_read(part, s)) fail(path, ": part '", part, "' is missing");
  try {
    opt.load(s);
  } catch (const c10::Error& e) {
    fail(path, ": part '", part, "' does not fit the optimizer: ", e.what_without_backtrace());
  }
}

std::optional<torch::Tensor> CheckpointData::find_rng_state(const std::string& name) const {
  torch::serialize::InputArchive s;
  torch::Tensor t;
  if (!archive->try_read("rng", s) || !s.try_read(name, t, /*is_buffer=*/true)) return std::nullopt;
  return t.cpu();
}

std::optional<torch::Tensor> CheckpointData::find_train_state(const std::string& name) const {
  torch::serialize::InputArchive s;
  torch::Tensor t;
  if (!archive->try_read("train_state", s) || !s.try_read(name, t, /*is_buffer=*/true)) return std::nullopt;
  return t.cpu();
}

torch::Tensor CheckpointData::rng_state(const std::string& name) const {
  auto t = find_rng_state(name);
  if (!t) fail(path, ": RNG state '", name, "' is missing");
  return *t;
}

Generator load_generator(const CheckpointData& c, bool ema, torch::Device device, int64_t standing_batches) {
  Generator g{nullptr};
  try {
    g = Generator(c.config.model, c.config.generator);
  } catch (const c10::Error& e) {  // LibTorch's allocation failure names neither file nor config
    fail(c.path, ": cannot build G from its stored config (generator.ch ", c.config.generator.ch, "): ",
         e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    fail(c.path, ": out of memory building G from its stored config (generator.ch ", c.config.generator.ch, ")");
  }
  c.load_module(ema && c.has_ema ? "g_ema" : "g", *g);
  g->to(device);
  // Checkpoints written before standing statistics hold the live G's BN statistics.
  const bool missing = c.ema_standing == 0 && c.config.train.ema_standing_batches > 0;
  if (ema && c.has_ema && (missing || standing_batches > 0)) {
    StandingStatsOptions o = standing_stats_options(c.config);
    if (standing_batches > 0) o.batches = standing_batches;
    o.say = PhaseProgress::to_stderr;
    accumulate_standing_stats(*g, o);
  }
  g->eval();
  return g;
}

std::string checkpoint_path(const std::string& dir, int64_t iteration) {
  char name[64];
  std::snprintf(name, sizeof name, "ckpt_%09lld.pt", static_cast<long long>(iteration));
  return (fs::path(dir) / name).string();
}

// Names hamgan did not write (an iteration beyond int64) are reported on `warn` and skipped.
std::vector<CheckpointFile> checkpoint_files(const std::string& dir, std::ostream* warn) {
  static const std::regex re(R"(ckpt_(\d+)\.pt)");
  std::vector<CheckpointFile> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = f.path().filename().string();
    if (!f.is_regular_file() || !std::regex_match(name, m, re)) continue;
    int64_t it = 0;
    const std::string digits = m[1].str();
    const auto [end, ec2] = std::from_chars(digits.data(), digits.data() + digits.size(), it);
    if (ec2 != std::errc() || end != digits.data() + digits.size()) {
      if (warn) *warn << "warning: ignoring " << f.path().string() << ": iteration " << digits
                      << " is out of range (expected ckpt_<iteration>.pt with iteration < 2^63)\n";
      continue;
    }
    out.push_back({it, f.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const CheckpointFile& a, const CheckpointFile& b) {
    return a.iteration > b.iteration;
  });
  return out;
}

std::vector<std::string> list_checkpoints(const std::string& dir, std::ostream* warn) {
  std::vector<std::string> out;
  for (const auto& e : checkpoint_files(dir, warn)) out.push_back(e.path);
  return out;
}

namespace {

// A file that cannot be opened (permissions, I/O) is not a damaged file: skipping it would let
// an older checkpoint resume and the next save overwrite it. False: the file is gone since the
// directory was listed (the lead rank of this run set it aside as damaged).
bool check_readable(const std::string& path) {
  io::require_regular_file(path, "a checkpoint");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f && errno == ENOENT) return false;
  if (!f)
    fail(path, ": cannot read this checkpoint (", std::strerror(errno),
         "); fix its permissions or move it away. Only a checkpoint that was read and found damaged "
         "is skipped");
  std::fclose(f);
  return true;
}

// What a checkpoint verifiably holds: it loads (every zip record's CRC, every part) and the
// iteration stored inside equals its name's. nullopt: damaged. Remembered per (path, size,
// mtime), since pruning asks at every checkpoint.
std::optional<int64_t> verified_iteration(const CheckpointFile& f) {
  auto& seen = verified_files();
  const std::string stamp = file_stamp(f.path);
  if (auto it = seen.find(f.path); it != seen.end() && it->second.first == stamp)
    return it->second.second == f.iteration ? it->second.second : std::nullopt;
  if (!check_readable(f.path)) return std::nullopt;
  std::optional<int64_t> iteration;
  try {
    const CheckpointData c = load_checkpoint(f.path);
    if (c.iteration == f.iteration) iteration = c.iteration;
  } catch (const Error&) {
  }
  seen[f.path] = {stamp, iteration};
  return iteration;
}

}  // namespace

// Keeps the newest `keep` checkpoints that verify; deletes only verified ones older than those.
// A damaged file is never counted as kept (it would push out good ones) and never deleted here.
void prune_checkpoints(const std::string& dir, int64_t keep) {
  int64_t kept = 0;
  for (const auto& e : checkpoint_files(dir)) {
    if (!verified_iteration(e)) continue;
    if (kept++ < keep) continue;
    std::error_code ec;
    fs::remove(e.path, ec);
  }
}

void remove_temporaries(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    const bool old_tmp = name.size() > 7 && name.compare(name.size() - 7, 7, ".pt.tmp") == 0;
    if (f.is_regular_file() && (old_tmp || io::is_temporary_name(name))) fs::remove(f.path(), ec);
  }
}

namespace {

// <path>.damaged, or <path>.damaged.N for the first N >= 2 not taken: a free name beside it.
std::string damaged_name(const std::string& path) {
  std::error_code ec;
  std::string to = path + ".damaged";
  for (int n = 2; fs::exists(fs::symlink_status(to, ec)); ++n) to = path + ".damaged." + std::to_string(n);
  return to;
}

}  // namespace

std::optional<CheckpointData> load_latest_checkpoint(const std::string& dir, std::ostream& warn,
                                                     torch::Device device, bool set_aside) {
  std::vector<std::pair<std::string, std::string>> damaged;  // (path, what is wrong)
  std::optional<CheckpointData> found;
  for (const auto& f : checkpoint_files(dir, &warn)) {
    if (!check_readable(f.path)) continue;
    try {
      CheckpointData c = load_checkpoint(f.path, device);
      if (c.iteration != f.iteration)
        fail(f.path, ": holds iteration ", c.iteration, ", not the ", f.iteration, " its name says");
      found = std::move(c);
      break;
    } catch (const Error& e) {
      damaged.emplace_back(f.path, e.what());
    }
  }
  for (const auto& [path, what] : damaged) {
    warn << "warning: skipping damaged checkpoint ("
         << (found ? "falling back to the previous one"
                   : "no valid checkpoint before it: the run starts from iteration 0")
         << "): " << what << "\n";
    if (!set_aside) continue;
    // Under its own name it would be replaced when the run reaches its iteration again.
    const std::string to = damaged_name(path);
    std::error_code ec;
    fs::rename(path, to, ec);
    if (ec)
      fail(path, ": damaged, and cannot be moved aside to ", to, " (", ec.message(),
           "); move it out of ", dir, " yourself (a damaged checkpoint is kept, never replaced), then run again");
    warn << "  moved it to " << to << " (kept for inspection; a damaged checkpoint is never deleted or replaced)\n";
  }
  return found;
}

}  // namespace hamgan
