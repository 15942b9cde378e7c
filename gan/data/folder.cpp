#include <algorithm>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <unordered_set>

#include "core/error.h"
#include "core/phase_progress.h"
#include "gan/data/sources.h"
#include "io/decode.h"

namespace fs = std::filesystem;

namespace hamgan {

namespace {

class Folder : public Dataset {
 public:
  Folder(const std::string& root, int64_t resolution, int64_t channels)
      : res_(resolution), ch_(channels) {
    std::vector<fs::path> classes;
    for (const auto& e : fs::directory_iterator(root))
      if (e.is_directory()) classes.push_back(e.path());
    std::sort(classes.begin(), classes.end());
    if (classes.empty())
      fail("data.path '", root, "': no class directories (expected an ImageFolder tree)");
    // ImageNet's 1000 directories take a while on a cold disk: progress once it is slow.
    PhaseProgress progress(PhaseProgress::to_stderr, "scanning " + root,
                           static_cast<int64_t>(classes.size()), "class directories");
    for (const auto& cdir : classes) {
      std::vector<std::string> files = list_images(cdir.string());  // fails when it holds none
      const auto label = static_cast<int32_t>(names_.size());
      names_.push_back(cdir.filename().string());
      for (auto& f : files) {
        files_.push_back(std::move(f));
        labels_.push_back(label);
      }
      progress.add();
    }
  }
  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  std::vector<std::string> source_files() const override { return files_; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return res_; }
  int64_t channels() const override { return ch_; }
  int32_t label(int64_t index) const override { return labels_[static_cast<size_t>(index)]; }
  bool get(int64_t index, uint8_t* pixels, int32_t& label) const override {
    label = labels_[index];
    Image im;
    std::string why;
    if (!decode_image(files_[index], static_cast<int>(res_), ch_ == 1, im, why)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (warned_.insert(index).second)
        std::cerr << "warning: skipping undecodable image " << files_[index] << ": " << why
                  << "\n";
      return false;
    }
    fit_to(im, static_cast<int>(res_), static_cast<int>(ch_), pixels);
    return true;
  }

 private:
  int64_t res_, ch_;
  std::vector<std::string> names_, files_;
  std::vector<int32_t> labels_;
  mutable std::mutex mu_;
  mutable std::unordered_set<int64_t> warned_;
};

}  // namespace

std::shared_ptr<Dataset> open_folder(const std::string& dir, int64_t resolution,
                                     int64_t channels) {
  if (!fs::is_directory(dir))
    fail("data.path '", dir, "': no such directory (expected an ImageFolder tree)");
  return std::make_shared<Folder>(dir, resolution, channels);
}

}  // namespace hamgan
