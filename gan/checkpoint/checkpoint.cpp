#include "gan/checkpoint/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <sstream>

#include "core/error.h"

namespace hamgan {

namespace fs = std::filesystem;

namespace {

void write_all_synced(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, ": cannot create: ", std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      fail(path, ": write failed: ", std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    fail(path, ": fsync failed: ", std::strerror(e));
  }
  if (::close(fd) != 0) fail(path, ": close failed: ", std::strerror(errno));
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself is already atomic
  ::fsync(fd);
  ::close(fd);
}

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  c10::IValue v;
  ar.read(key, v);
  if (!v.isInt()) fail("entry '", key, "': expected an integer");
  return v.toInt();
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
  const auto sub_module = [&](const std::string& key, torch::nn::Module& m) {
    torch::serialize::OutputArchive s;
    m.save(s);
    ar.write(key, s);
  };
  sub_module("g", *c.g);
  sub_module("d", *c.d);
  if (c.g_ema) sub_module("g_ema", *c.g_ema);
  const auto sub_opt = [&](const std::string& key, torch::optim::Optimizer& o) {
    torch::serialize::OutputArchive s;
    o.save(s);
    ar.write(key, s);
  };
  sub_opt("opt_g", *c.opt_g);
  sub_opt("opt_d", *c.opt_d);
  torch::serialize::OutputArchive rng;
  for (const auto& [name, state] : c.rng) rng.write(name, state.cpu(), /*is_buffer=*/true);
  ar.write("rng", rng);

  std::ostringstream bytes;
  ar.save_to(bytes);
  const fs::path p(path);
  const std::string tmp = path + ".tmp";
  write_all_synced(tmp, bytes.str());
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) fail(path, ": cannot rename ", tmp, " into place: ", ec.message());
  fsync_dir(p.has_parent_path() ? p.parent_path().string() : ".");
}

CheckpointData load_checkpoint(const std::string& path, torch::Device device) {
  CheckpointData c;
  c.path = path;
  c.archive = std::make_shared<torch::serialize::InputArchive>();
  try {
    c.archive->load_from(path, device);
    c.version = read_int(*c.archive, "version");
    if (c.version != kCheckpointVersion)
      fail("format version ", c.version, ", expected ", kCheckpointVersion);
    c.iteration = read_int(*c.archive, "iteration");
    c.loader.epoch = read_int(*c.archive, "loader_epoch");
    c.loader.batch_in_epoch = read_int(*c.archive, "loader_batch");
    c10::IValue v;
    c.archive->read("config", v);
    if (!v.isString()) fail("entry 'config': expected YAML text");
    c.config_yaml = v.toStringRef();
    c.archive->read("has_ema", v);
    c.has_ema = v.isBool() && v.toBool();
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
    fail(path, ": not a valid hamgan checkpoint (damaged or truncated): ",
         e.what_without_backtrace());
  }
  c.config = parse_config(c.config_yaml, path + " (stored config)");
  return c;
}

void CheckpointData::load_module(const std::string& part, torch::nn::Module& m) const {
  torch::serialize::InputArchive s;
  if (!archive->try_read(part, s)) fail(path, ": part '", part, "' is missing");
  try {
    m.load(s);
  } catch (const c10::Error& e) {
    fail(path, ": part '", part, "' does not fit the model: ", e.what_without_backtrace());
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

torch::Tensor CheckpointData::rng_state(const std::string& name) const {
  auto t = find_rng_state(name);
  if (!t) fail(path, ": RNG state '", name, "' is missing");
  return *t;
}

Generator load_generator(const CheckpointData& c, bool ema, torch::Device device) {
  Generator g(c.config.model, c.config.generator);
  c.load_module(ema && c.has_ema ? "g_ema" : "g", *g);
  g->to(device);
  g->eval();
  return g;
}

std::string checkpoint_path(const std::string& dir, int64_t iteration, bool best) {
  char name[64];
  std::snprintf(name, sizeof name, "ckpt_%09lld%s.pt", static_cast<long long>(iteration),
                best ? ".best" : "");
  return (fs::path(dir) / name).string();
}

namespace {
struct Entry {
  int64_t iteration;
  bool best;
  std::string path;
};
std::vector<Entry> entries(const std::string& dir) {
  static const std::regex re(R"(ckpt_(\d+)(\.best)?\.pt)");
  std::vector<Entry> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& f : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = f.path().filename().string();
    if (f.is_regular_file() && std::regex_match(name, m, re))
      out.push_back({std::stoll(m[1].str()), m[2].matched, f.path().string()});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.iteration != b.iteration ? a.iteration > b.iteration : a.best > b.best;
  });
  return out;
}
}  // namespace

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : entries(dir)) out.push_back(e.path);
  return out;
}

std::string mark_best(const std::string& path) {
  const std::string suffix = ".pt";
  if (path.size() < suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0 ||
      path.find(".best.pt") != std::string::npos)
    fail(path, ": expected a checkpoint named ckpt_<iteration>.pt to mark as best");
  const std::string best = path.substr(0, path.size() - suffix.size()) + ".best.pt";
  std::error_code ec;
  fs::rename(path, best, ec);
  if (ec) fail(path, ": cannot rename to ", best, ": ", ec.message());
  return best;
}

void prune_checkpoints(const std::string& dir, int64_t keep) {
  int64_t kept = 0;
  for (const auto& e : entries(dir)) {
    if (e.best) continue;
    if (kept++ < keep) continue;
    std::error_code ec;
    fs::remove(e.path, ec);
  }
}

std::optional<CheckpointData> load_latest_checkpoint(const std::string& dir, std::ostream& warn,
                                                     torch::Device device) {
  for (const auto& path : list_checkpoints(dir)) {
    try {
      return load_checkpoint(path, device);
    } catch (const Error& e) {
      warn << "warning: skipping checkpoint: " << e.what() << "\n";
    }
  }
  return std::nullopt;
}

}  // namespace hamgan
