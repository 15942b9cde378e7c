#include "metrics/image_dir.h"

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <memory>

#include "core/error.h"
#include "io/decode.h"

namespace hamgan::metrics {

namespace {

// A class folder's name: digits only (000, 8, 123), short enough for an int32 class.
bool is_class_number(const std::string& s) {
  return !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string listed(const std::map<std::string, int64_t>& entries, const char* suffix) {
  std::string out;
  size_t k = 0;
  for (const auto& [name, n] : entries) {
    if (k++ == 5) return out + ", ... (" + std::to_string(entries.size()) + " in all)";
    out += (out.empty() ? "" : ", ") + name + suffix + (n > 1 ? " (" + std::to_string(n) + " images)" : "");
  }
  return out;
}

}  // namespace

SampleFolder sample_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) fail(dir, ": not a directory of images");
  SampleFolder f;
  std::vector<std::pair<std::string, std::string>> found;  // (path, top-level folder or "" when loose)
  std::map<std::string, int64_t> hidden, unnumbered, loose;  // entry -> images under it
  const fs::path root = fs::path(dir);
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code fe;
    if (!it->is_regular_file(fe) || !is_image_file(it->path().string())) continue;
    const fs::path rel = it->path().lexically_relative(root);
    // Under a hidden entry at any depth (003/.ipynb_checkpoints/x.png too): no sample.
    fs::path hidden_at;
    bool is_hidden = false;
    for (const auto& part : rel) {
      hidden_at /= part;
      if (part.string()[0] == '.') {
        is_hidden = true;
        break;
      }
    }
    if (is_hidden) {
      ++hidden[hidden_at.string() + (hidden_at == rel ? "" : "/")];
      continue;
    }
    const std::string top = rel.begin()->string();
    const bool at_top = std::distance(rel.begin(), rel.end()) == 1;
    if (at_top) ++loose[top];
    else if (!is_class_number(top)) ++unnumbered[top];
    found.emplace_back(it->path().string(), at_top ? std::string() : top);
  }
  if (ec) fail(dir, ": cannot list: ", ec.message());
  for (const auto& [name, n] : hidden) f.skipped.push_back(name + " (" + std::to_string(n) + (n > 1 ? " images)" : " image)"));
  if (!unnumbered.empty())
    fail(dir, ": ", listed(unnumbered, "/"), ": not a class number; expected DIR/<class number>/<image> as `hamgan sample` ",
         "writes it (000/, 008/: class 0 and 8) or a flat folder of images. Move such folders out: their images would be "
         "scored as samples (folders starting with '.' are skipped)");
  if (found.empty()) fail(dir, ": no ", kImageExtensions, " images found", hidden.empty() ? "" : " outside its hidden entries");
  if (!loose.empty() && loose.size() != found.size())
    fail(dir, ": ", listed(loose, ""), " beside the class folders; expected images only in DIR/<class number>/ (or none "
         "there: a flat folder). Move them out: they would be scored as samples of no class");
  std::sort(found.begin(), found.end());
  for (const auto& [path, top] : found) f.files.push_back(path);
  if (loose.empty()) {
    std::vector<int64_t> labels;
    for (const auto& [path, top] : found) labels.push_back(std::stoll(top));
    f.labels = torch::tensor(labels, torch::kLong);
  }
  return f;
}

PreparedBatches image_batches(const std::vector<std::string>& files, const FeatureNet& net, int64_t batch,
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
            imgs[k - begin] = net.prepare(to_tensor(decode_image(files[k])).unsqueeze(0)).squeeze(0);
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
