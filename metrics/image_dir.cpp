// stb_image's implementation is compiled once, in gan/data/stb_impl.cpp.
#include "metrics/image_dir.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <memory>

#include "core/error.h"

namespace hamgan::metrics {

namespace fs = std::filesystem;

std::vector<std::string> list_images(const std::string& dir, int64_t n) {
  if (!fs::is_directory(dir)) fail(dir, ": not a directory of images");
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == ".png" || ext == ".jpg" || ext == ".jpeg") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) fail(dir, ": no .png/.jpg/.jpeg images found");
  if (n > 0) {
    if (static_cast<int64_t>(out.size()) < n) fail(dir, ": --n ", n, " but only ", out.size(), " images");
    out.resize(static_cast<size_t>(n));
  }
  return out;
}

torch::Tensor folder_labels(const std::string& dir, const std::vector<std::string>& files) {
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

torch::Tensor decode_image(const std::string& path) {
  int w = 0, h = 0, c = 0;
  if (!stbi_info(path.c_str(), &w, &h, &c)) fail(path, ": not a readable PNG/JPEG (", stbi_failure_reason(), ")");
  const int want = (c == 1 || c == 2) ? 1 : 3;
  std::unique_ptr<unsigned char, void (*)(void*)> px(stbi_load(path.c_str(), &w, &h, &c, want), stbi_image_free);
  if (!px) fail(path, ": decode failed (", stbi_failure_reason(), ")");
  return torch::from_blob(px.get(), {h, w, want}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat).div(255);
}

BatchSource image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
                          int workers) {
  if (batch < 1 || workers < 1) fail("image batches: batch and workers must be >= 1");
  struct State {
    size_t next = 0;
    std::future<torch::Tensor> pending;
  };
  auto st = std::make_shared<State>();
  auto launch = [st, &files, &net, batch, workers]() {
    const size_t begin = st->next, end = std::min(files.size(), begin + static_cast<size_t>(batch));
    st->next = end;
    if (begin == end) return std::future<torch::Tensor>();
    return std::async(std::launch::async, [&files, &net, begin, end, workers]() {
      std::vector<torch::Tensor> imgs(end - begin);
      std::vector<std::future<void>> jobs;
      const size_t per = (end - begin + workers - 1) / workers;
      for (size_t s = begin; s < end; s += per)
        jobs.push_back(std::async(std::launch::async, [&, s]() {
          torch::InferenceMode guard;
          for (size_t k = s; k < std::min(end, s + per); ++k)
            imgs[k - begin] = net.prepare(decode_image(files[k]).unsqueeze(0)).squeeze(0);
        }));
      for (auto& j : jobs) j.get();
      for (size_t k = 1; k < imgs.size(); ++k)
        if (imgs[k].sizes() != imgs[0].sizes())
          fail(files[begin + k], ": size ", imgs[k].sizes(), " differs from ", files[begin], " (", imgs[0].sizes(),
               "); TorchScript weights need equal image sizes");
      return torch::stack(imgs);
    });
  };
  st->pending = launch();
  return [st, launch]() -> torch::Tensor {
    if (!st->pending.valid()) return {};
    torch::Tensor b = st->pending.get();
    st->pending = launch();  // decode the next batch while this one runs
    return b;
  };
}

}  // namespace hamgan::metrics
