#include "gan/sample/image_folder.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "gan/data/class_names.h"

namespace hamgan::sample {

namespace fs = std::filesystem;

namespace {
bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
// Deletes DIR/<class>/<k>.png files of sample_path()'s layout (and class folders left empty);
// anything else stays.
void remove_samples(const std::string& dir) {
  std::error_code ec;
  for (const auto& c : fs::directory_iterator(dir, ec)) {
    if (!c.is_directory() || !all_digits(c.path().filename().string())) continue;
    for (const auto& f : fs::directory_iterator(c.path(), ec)) {
      const std::string name = f.path().filename().string();
      if (f.is_regular_file() && name.size() > 4 && name.compare(name.size() - 4, 4, ".png") == 0 &&
          all_digits(name.substr(0, name.size() - 4)))
        fs::remove(f.path(), ec);
    }
    if (fs::is_empty(c.path(), ec)) fs::remove(c.path(), ec);
  }
}
}  // namespace

void prepare_output_dir(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) fail("--out ", dir, ": exists and is not a directory");
    if (!fs::is_empty(dir, ec) && !overwrite)
      fail("--out ", dir, ": exists and is not empty; pass --overwrite to write into it, or choose another --out");
    // --overwrite replaces an earlier `sample`'s images: left in place, a smaller run's folder
    // would still hold the older images (and `fid --fake` would score them too).
    if (overwrite) remove_samples(dir);
  }
  fs::create_directories(dir, ec);
  if (ec) fail("--out ", dir, ": cannot create: ", ec.message());
}

std::string sample_path(const std::string& dir, int64_t cls, int64_t k) {
  char c[32], f[32];
  std::snprintf(c, sizeof c, "%03lld", static_cast<long long>(cls));
  std::snprintf(f, sizeof f, "%06lld.png", static_cast<long long>(k));
  return (fs::path(dir) / c / f).string();
}

std::string classes_text(const std::vector<std::string>& names) {
  std::string out;
  for (size_t c = 0; c < names.size(); ++c) {
    const std::string dir = fs::path(sample_path("", static_cast<int64_t>(c), 0)).parent_path().string();
    out += dir + " " + names[c] + "\n";
  }
  return out;
}

const io::OutputKind& classes_output() {
  static const io::OutputKind k{"a class list (lines '<directory> <name>', as `hamgan sample` writes it)",
                                [](std::string_view head) {
                                  const std::string line(head.substr(0, head.find('\n')));
                                  const size_t sp = line.find(' ');
                                  return sp != std::string::npos && sp + 1 < line.size() &&
                                         all_digits(line.substr(0, sp));
                                }};
  return k;
}

std::string run_classes_file(const std::string& checkpoint) {
  const fs::path f = fs::absolute(checkpoint).parent_path().parent_path() / "classes.txt";
  std::error_code ec;
  return fs::is_regular_file(f, ec) ? f.string() : "";
}

std::vector<std::string> run_class_names(const std::string& checkpoint, int64_t n_classes) {
  const std::string f = run_classes_file(checkpoint);
  if (f.empty()) return {};
  std::ifstream in(f);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (static_cast<int64_t>(names.size()) >= n_classes) return {};  // longer than this run's list
    const size_t sp = line.find(' ');
    if (sp == std::string::npos || !all_digits(line.substr(0, sp))) return {};
    names.push_back(line.substr(sp + 1));
    if (!class_name_problem(names.back()).empty()) return {};
  }
  if (static_cast<int64_t>(names.size()) != n_classes) return {};
  return names;
}

}  // namespace hamgan::sample
