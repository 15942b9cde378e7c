// gan/data against the Python oracle (gzip+numpy for Fashion-MNIST, PIL for crop/resize of
// PNG/JPEG/BMP files it wrote), the packed file's round trip/validation/resume, and the
// loader's determinism, restore and sharding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.h"
#include "gan/data/class_runs.h"
#include "gan/data/dataset.h"
#include "gan/data/packed.h"
#include "gan/data/sources.h"
#include "io/decode.h"
#include "io/image.h"
#include "io/png.h"
#include "support/errors.h"
#include "support/oracle.h"

namespace test_data {

namespace fs = std::filesystem;
using namespace hamgan;
using hamgan::test::error_of;
using hamgan::test::get;
using hamgan::test::oracle_path;

namespace {

const TensorMap& ref() {
  static const TensorMap m = hamgan::test::load_tensors(oracle_path("data.pt"));
  return m;
}

torch::Tensor image(const Dataset& d, int64_t i, int32_t& label, bool& ok) {
  auto t = torch::zeros({d.channels(), d.resolution(), d.resolution()}, torch::kUInt8);
  ok = d.get(i, t.data_ptr<uint8_t>(), label);
  return t;
}

std::string scratch(const std::string& name) {
  const fs::path p = fs::path(std::getenv("HAMGAN_BINARY_DIR")) / "scratch_data" / name;
  fs::create_directories(p.parent_path());
  fs::remove(p);
  fs::remove(p.string() + ".partial");
  return p.string();
}

// Image i is a constant plane of value i % 251 plus a marker pixel; label = i.
class IdDataset : public Dataset {
 public:
  explicit IdDataset(int64_t n) : n_(n), names_(n, "c") {}
  int64_t size() const override { return n_; }
  const std::vector<std::string>& class_names() const override { return names_; }
  int64_t resolution() const override { return 4; }
  int64_t channels() const override { return 1; }
  bool get(int64_t i, uint8_t* px, int32_t& label) const override {
    for (int k = 0; k < 16; ++k) px[k] = static_cast<uint8_t>(i % 251);
    px[0] = 255;  // top-left: shows whether the image was flipped
    label = static_cast<int32_t>(i);
    return true;
  }

 private:
  int64_t n_;
  std::vector<std::string> names_;
};

// Image i as IdDataset's (i < 251), of class i % 7, which label(i) tells without decoding.
class SevenClasses : public IdDataset {
 public:
  explicit SevenClasses(int64_t n) : IdDataset(n), names_(7, "c") {}
  const std::vector<std::string>& class_names() const override { return names_; }
  bool get(int64_t i, uint8_t* px, int32_t& label) const override {
    IdDataset::get(i, px, label);
    label = static_cast<int32_t>(i % 7);
    return true;
  }
  int32_t label(int64_t i) const override { return static_cast<int32_t>(i % 7); }

 private:
  std::vector<std::string> names_;
};

std::vector<Batch> take(std::shared_ptr<Dataset> d, LoaderOptions o, int64_t n,
                        LoaderState s = {}) {
  Loader l(d, o, s);
  std::vector<Batch> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(l.next());
  return out;
}

void expect_same(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].images, b[i].images)) << "batch " << i;
    EXPECT_TRUE(torch::equal(a[i].labels, b[i].labels)) << "batch " << i;
  }
}

}  // namespace

// Tolerance 0: padding is exact, and our resize reproduces Pillow's fixed-point algorithm.
TEST(Fmnist, MatchesGzipNumpyAndPadding) {
  DataConfig dc;
  auto d1 = open_dataset(dc, 32, 1);
  auto d3 = open_dataset(dc, 32, 3);
  EXPECT_EQ(d1->size(), 60000);
  EXPECT_EQ(d1->num_classes(), 10);
  const auto pad = get(ref(), "fmnist.pad32"), labels = get(ref(), "fmnist.labels");
  for (int64_t i = 0; i < 16; ++i) {
    int32_t label;
    bool ok;
    auto a = image(*d1, i, label, ok);
    ASSERT_TRUE(ok);
    EXPECT_EQ(label, labels[i].item<int64_t>());
    EXPECT_TRUE(torch::equal(a[0], pad[i])) << "image " << i;
    auto b = image(*d3, i, label, ok);
    for (int c = 0; c < 3; ++c) EXPECT_TRUE(torch::equal(b[c], pad[i])) << "image " << i;
  }
  auto d64 = open_dataset(dc, 64, 1);
  const auto r64 = get(ref(), "fmnist.r64");
  for (int64_t i = 0; i < 4; ++i) {
    int32_t label;
    bool ok;
    EXPECT_TRUE(torch::equal(image(*d64, i, label, ok), r64[i])) << "image " << i;
  }
}

// libjpeg (with DCT scaling for the 400x300 JPEG), stb for PNG/BMP: tolerance 0 against PIL,
// which decodes through the same libjpeg-turbo and whose resize we reproduce bit for bit.
TEST(Folder, MatchesPILAndSkipsBadFiles) {
  set_jpeg_decoder(JpegDecoder::libjpeg);
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = oracle_path("tree");
  const auto valid = get(ref(), "folder.valid"), labels = get(ref(), "folder.labels");
  for (int64_t C : {3, 1}) {
    auto d = open_dataset(dc, 16, C);
    ASSERT_EQ(d->size(), valid.size(0));
    EXPECT_EQ(d->class_names(), (std::vector<std::string>{"a_cats", "b_dogs", "c_birds"}));
    const auto r = get(ref(), C == 3 ? "folder.rgb" : "folder.gray");
    for (int64_t i = 0; i < d->size(); ++i) {
      int32_t label;
      bool ok;
      auto a = image(*d, i, label, ok);
      EXPECT_EQ(ok, valid[i].item<int64_t>() == 1) << "file " << i;
      if (!ok) continue;
      EXPECT_EQ(label, labels[i].item<int64_t>());
      EXPECT_TRUE(hamgan::test::close(a.to(torch::kInt), r[i].to(torch::kInt), 0, 0))
          << "file " << i << " C=" << C;
    }
  }
}

// stb_image's JPEG decoder has its own IDCT and chroma upsampling: it is not bit-identical to
// libjpeg, so JPEGs are compared with max |diff| <= 12 and mean |diff| <= 2 (of 255).
TEST(Folder, StbJpegDecoderIsClose) {
  set_jpeg_decoder(JpegDecoder::stb);
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = oracle_path("tree");
  auto d = open_dataset(dc, 16, 3);
  const auto valid = get(ref(), "folder.valid"), r = get(ref(), "folder.rgb");
  for (int64_t i : {2, 5}) {  // the two small JPEGs (no DCT scaling in PIL's reference)
    ASSERT_EQ(valid[i].item<int64_t>(), 1);
    int32_t label;
    bool ok;
    auto a = image(*d, i, label, ok).to(torch::kFloat);
    ASSERT_TRUE(ok);
    const auto diff = (a - r[i].to(torch::kFloat)).abs();
    EXPECT_LE(diff.max().item<float>(), 12.f) << "file " << i;
    EXPECT_LE(diff.mean().item<float>(), 2.f) << "file " << i;
  }
  set_jpeg_decoder(JpegDecoder::libjpeg);
}

// Training data and fid read image directories through one list_images / decode_image: .bmp
// counts for both (it once trained but fid rejected it), extensions in any case, sorted paths.
TEST(ImageFiles, OneListingForDataAndFid) {
  const std::string root = oracle_path("tree");
  std::vector<std::string> names;
  for (const auto& f : list_images(root)) names.push_back(std::filesystem::relative(f, root).generic_string());
  EXPECT_EQ(names, (std::vector<std::string>{"a_cats/01.png", "a_cats/02.bmp", "a_cats/03.jpg", "b_dogs/01.png",
                                             "b_dogs/02.jpg", "b_dogs/03.JPEG", "c_birds/01.bmp", "c_birds/02.jpg",
                                             "c_birds/03.png", "c_birds/04.png"}));
  const Image bmp = decode_image(root + "/c_birds/01.bmp");
  EXPECT_EQ(bmp.width, 16);
  EXPECT_EQ(bmp.height, 16);
  EXPECT_EQ(bmp.channels, 3);
  EXPECT_EQ(to_tensor(bmp).sizes(), (std::vector<int64_t>{3, 16, 16}));
  EXPECT_NE(error_of([&] { decode_image(root + "/c_birds/03.png"); }).find("c_birds/03.png"), std::string::npos);
  EXPECT_NE(error_of([&] { list_images(root, 11); }).find("only 10 images"), std::string::npos);
  EXPECT_NE(error_of([&] { list_images(root + "/nope"); }).find("not a directory"), std::string::npos);
}

TEST(Folder, ErrorsAtStart) {
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = oracle_path("tree_empty");
  const std::string e = error_of([&] { open_dataset(dc, 16, 3); });
  EXPECT_NE(e.find("b_empty"), std::string::npos) << e;
  EXPECT_NE(e.find("no .jpg"), std::string::npos) << e;
  dc.path = oracle_path("no_such_dir");
  EXPECT_NE(error_of([&] { open_dataset(dc, 16, 3); }).find("no such directory"),
            std::string::npos);
  dc.format = DataFormat::Fmnist;
  EXPECT_NE(error_of([&] { open_dataset(dc, 16, 3); }).find("no_such_dir"), std::string::npos);
}

TEST(Folder, LoaderCountsSkipped) {
  DataConfig dc;
  dc.format = DataFormat::Folder;
  dc.path = oracle_path("tree");
  auto d = open_dataset(dc, 16, 3);
  LoaderOptions o;
  o.batch_size = d->size();  // one batch holds every file, so both bad ones are met
  o.workers = 1;
  Loader l(d, o);
  const Batch b = l.next();
  EXPECT_GE(l.skipped(), 2);
  EXPECT_EQ(b.images.size(0), d->size());
}

TEST(Cifar10, MatchesRecords) {
  DataConfig dc;
  dc.format = DataFormat::Cifar10;
  dc.path = oracle_path("cifar");
  EXPECT_EQ(detect_format(dc.path), DataFormat::Cifar10);
  auto d32 = open_dataset(dc, 32, 3);
  auto d16 = open_dataset(dc, 16, 3);
  ASSERT_EQ(d32->size(), 30);
  const auto px = get(ref(), "cifar.images"), r16 = get(ref(), "cifar.r16"),
             labels = get(ref(), "cifar.labels");
  for (int64_t i = 0; i < 30; ++i) {
    int32_t label;
    bool ok;
    EXPECT_TRUE(torch::equal(image(*d32, i, label, ok), px[i])) << i;
    EXPECT_EQ(label, labels[i].item<int64_t>());
    EXPECT_TRUE(torch::equal(image(*d16, i, label, ok), r16[i])) << i;
  }
}

TEST(Packed, RoundTripAndRerun) {
  const std::string out = scratch("cifar16.pack");
  PrepareOptions po;
  po.source = oracle_path("cifar");
  po.out = out;
  po.resolution = 16;
  po.channels = 3;
  po.chunk = 4;
  po.threads = 3;
  po.progress = false;
  auto r = prepare_packed(po);
  EXPECT_TRUE(r.finished);
  EXPECT_FALSE(fs::exists(out + ".partial"));
  DataConfig dc;
  dc.format = DataFormat::Cifar10;
  dc.path = po.source;
  auto src = open_dataset(dc, 16, 3);
  dc.format = DataFormat::Packed;
  dc.path = out;
  auto pk = open_dataset(dc, 16, 3);
  ASSERT_EQ(pk->size(), src->size());
  EXPECT_EQ(pk->class_names(), src->class_names());
  for (int64_t i = 0; i < src->size(); ++i) {
    int32_t la, lb;
    bool oa, ob;
    EXPECT_TRUE(torch::equal(image(*pk, i, la, oa), image(*src, i, lb, ob))) << i;
    EXPECT_EQ(la, lb);
  }
  EXPECT_NE(error_of([&] { open_dataset(dc, 32, 3); }).find("config asks for"),
            std::string::npos);
  r = prepare_packed(po);
  EXPECT_TRUE(r.already_complete);
}

TEST(Packed, FolderWithBadFiles) {
  PrepareOptions po;
  po.source = oracle_path("tree");
  po.out = scratch("tree.pack");
  po.resolution = 16;
  po.channels = 1;
  po.progress = false;
  auto r = prepare_packed(po);
  EXPECT_EQ(r.skipped, 2);
  auto pk = open_packed(po.out, 16, 1);
  const auto valid = get(ref(), "folder.valid"), gray = get(ref(), "folder.gray");
  for (int64_t i = 0; i < pk->size(); ++i) {
    int32_t label;
    bool ok;
    auto a = image(*pk, i, label, ok);
    EXPECT_EQ(ok, valid[i].item<int64_t>() == 1);
    if (ok) {
      EXPECT_TRUE(torch::equal(a, gray[i])) << i;
    }
  }
}

TEST(Packed, CorruptionIsNamed) {
  PrepareOptions po;
  po.source = oracle_path("cifar");
  po.out = scratch("good.pack");
  po.resolution = 8;
  po.chunk = 4;
  po.progress = false;
  prepare_packed(po);
  auto corrupt = [&](const std::string& name, const std::function<void(std::fstream&)>& f) {
    const std::string bad = scratch(name);
    fs::copy_file(po.out, bad);
    {
      std::fstream s(bad, std::ios::in | std::ios::out | std::ios::binary);
      f(s);
    }
    return error_of([&] { open_packed(bad, 8, 3); });
  };
  auto poke = [](size_t off, char v) {
    return [=](std::fstream& s) {
      s.seekp(static_cast<std::streamoff>(off));
      s.put(v);
    };
  };
  std::string e = corrupt("magic.pack", poke(0, 'X'));
  EXPECT_NE(e.find("magic.pack"), std::string::npos) << e;
  EXPECT_NE(e.find("wrong magic"), std::string::npos) << e;
  e = corrupt("version.pack", poke(8, 7));
  EXPECT_NE(e.find("version 7"), std::string::npos) << e;
  e = corrupt("header.pack", poke(60, 'Z'));  // inside the source string
  EXPECT_NE(e.find("header checksum"), std::string::npos) << e;
  e = corrupt("pixel.pack", poke(4096 + 5 * 192 + 3, 0x5a));  // image 5 of chunk 1
  EXPECT_NE(e.find("pixel.pack"), std::string::npos) << e;
  EXPECT_NE(e.find("checksum mismatch in images 4..7"), std::string::npos) << e;
  const std::string trunc = scratch("size.pack");
  fs::copy_file(po.out, trunc);
  fs::resize_file(trunc, fs::file_size(trunc) - 1);
  e = error_of([&] { open_packed(trunc, 8, 3); });
  EXPECT_NE(e.find("size.pack"), std::string::npos) << e;
  EXPECT_NE(e.find("wrong size"), std::string::npos) << e;
}

// A label outside the file's class count (7 in a 10-class file is fine; 10, 2^31-1 and -5 are
// not), in a file whose checksums agree (made by hand, or by another program): refused where
// the file is opened, naming the image, not "index out of range in self" after a step.
TEST(Packed, ALabelOutsideTheClassCountIsRefusedAtOpen) {
  PrepareOptions po;
  po.source = oracle_path("cifar");
  po.out = scratch("labels.pack");
  po.resolution = 8;
  po.chunk = 4;
  po.progress = false;
  prepare_packed(po);
  const auto with_label = [&](const std::string& name, int32_t y) {
    std::ifstream in(po.out, std::ios::binary);
    std::vector<uint8_t> f((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t hb = 0;
    PackedHeader h = decode_packed_header(f.data(), f.size(), po.out, hb);
    const PackedLayout l = packed_layout(h, hb);
    std::memcpy(f.data() + l.label_off + 4 * 5, &y, 4);  // image 5, chunk 1
    std::vector<uint64_t> table(static_cast<size_t>(l.chunks));
    std::memcpy(table.data(), f.data() + l.table_off, 8 * table.size());
    table[1] = packed_chunk_checksum(f.data(), l, 1);
    std::memcpy(f.data() + l.table_off, table.data(), 8 * table.size());
    h.data_checksum = hash64(table.data(), 8 * table.size());
    const std::vector<uint8_t> head = encode_packed_header(h);
    std::copy(head.begin(), head.end(), f.begin());
    const std::string path = scratch(name);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
    return path;
  };
  EXPECT_EQ(open_packed(with_label("label9.pack", 9), 8, 3)->label(5), 9);
  for (const int32_t y : {10, 2147483647, -5}) {
    SCOPED_TRACE(y);
    const std::string path = with_label("label_bad.pack", y);
    const std::string e = error_of([&] { open_packed(path, 8, 3); });
    EXPECT_NE(e.find(path + ": image 5 has label " + std::to_string(y) + ", and the file has 10 classes"),
              std::string::npos) << e;
    fs::remove(path);
  }
}

TEST(Packed, ResumesPartial) {
  PrepareOptions po;
  po.source = oracle_path("cifar");
  po.out = scratch("resume.pack");
  po.resolution = 16;
  po.chunk = 4;  // 30 images: 8 chunks
  po.threads = 1;
  po.progress = false;
  po.stop_after_chunks = 3;
  auto r = prepare_packed(po);
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.chunks_written, 3);
  EXPECT_TRUE(fs::exists(po.out + ".partial"));
  EXPECT_FALSE(fs::exists(po.out));
  {  // a torn write: chunk 1's data no longer matches its table entry, so it is redone
    std::fstream s(po.out + ".partial", std::ios::in | std::ios::out | std::ios::binary);
    s.seekp(4096 + 4 * 768 + 10);
    s.put(0x11);
  }
  po.stop_after_chunks = -1;
  r = prepare_packed(po);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.chunks_reused, 2);
  EXPECT_EQ(r.chunks_written, 6);
  PrepareOptions full = po;
  full.out = scratch("noresume.pack");
  prepare_packed(full);
  std::ifstream a(po.out, std::ios::binary), b(full.out, std::ios::binary);
  std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_TRUE(sa == sb) << "a resumed file differs from one written in one go";
}

// A packed file remembers the source as it was: a class or image added since is an error
// naming both states, and a .partial resumed after an image was replaced holds the new pixels.
TEST(Packed, NoticesASourceThatChanged) {
  const fs::path src = fs::path(std::getenv("HAMGAN_BINARY_DIR")) / "scratch_data" / "changing_tree";
  fs::remove_all(src);
  auto put = [&](const std::string& cls, int k, int value) {
    fs::create_directories(src / cls);
    write_png((src / cls / (std::to_string(k) + ".png")).string(),
              torch::full({8, 8, 1}, value, torch::kUInt8));
  };
  for (int k = 0; k < 4; ++k) put("a", k, 10 + k), put("b", k, 50 + k);
  PrepareOptions po;
  po.source = src.string();
  po.out = scratch("changing.pack");
  po.resolution = 8;
  po.channels = 1;
  po.chunk = 2;
  po.threads = 1;
  po.progress = false;
  EXPECT_TRUE(prepare_packed(po).finished);
  EXPECT_TRUE(prepare_packed(po).already_complete);  // unchanged: nothing to do
  for (int k = 0; k < 4; ++k) put("c", k, 90 + k);
  const std::string e = error_of([&] { prepare_packed(po); });
  EXPECT_NE(e.find("has changed since"), std::string::npos) << e;
  EXPECT_NE(e.find("8 images in 2 classes"), std::string::npos) << e;
  EXPECT_NE(e.find("now 12 images in 3 classes"), std::string::npos) << e;

  // Interrupted after the first chunk (images 0 and 1 of class a), then image a/0 replaced.
  po.out = scratch("changing_resume.pack");
  po.stop_after_chunks = 1;
  EXPECT_FALSE(prepare_packed(po).finished);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later modification time
  put("a", 0, 200);
  po.stop_after_chunks = -1;
  const PrepareResult r = prepare_packed(po);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.chunks_reused, 0);
  DataConfig dc;
  dc.format = DataFormat::Packed;
  dc.path = po.out;
  const auto pk = open_dataset(dc, 8, 1);
  int32_t label;
  bool ok;
  EXPECT_EQ(image(*pk, 0, label, ok)[0][0][0].item<int>(), 200);
}

TEST(Loader, DeterministicAcrossRunsAndWorkers) {
  auto d = std::make_shared<IdDataset>(103);
  LoaderOptions o;
  o.batch_size = 8;
  o.seed = 42;
  o.workers = 0;
  const auto ref_run = take(d, o, 30);  // 12 batches per epoch: crosses two epoch ends
  for (int64_t w : {1, 3}) {
    o.workers = w;
    o.prefetch = w == 3 ? 2 : 5;
    expect_same(take(d, o, 30), ref_run);
  }
  o.seed = 43;
  EXPECT_FALSE(torch::equal(take(d, o, 1)[0].labels, ref_run[0].labels));
}

TEST(Loader, RestoreContinuesExactly) {
  auto d = std::make_shared<IdDataset>(103);
  LoaderOptions o;
  o.batch_size = 8;
  o.seed = 7;
  o.workers = 2;
  const auto all = take(d, o, 40);
  Loader l(d, o);
  for (int i = 0; i < 17; ++i) l.next();
  const LoaderState s = l.state();
  EXPECT_EQ(s.epoch, 1);
  EXPECT_EQ(s.batch_in_epoch, 5);
  const auto rest = take(d, o, 23, s);
  expect_same(rest, std::vector<Batch>(all.begin() + 17, all.end()));
}

TEST(Loader, ShardsAreDisjointAndCover) {
  auto d = std::make_shared<IdDataset>(103);
  LoaderOptions o;
  o.batch_size = 5;
  o.world_size = 2;
  o.seed = 3;
  std::set<int64_t> seen;
  int64_t total = 0;
  for (int64_t rank : {0, 1}) {
    o.rank = rank;
    Loader l(d, o);
    for (int b = 0; b < 10; ++b) {  // 103 / (5 * 2) = 10 batches per epoch per rank
      const Batch x = l.next();
      for (int64_t j = 0; j < 5; ++j) seen.insert(x.labels[j].item<int64_t>());
      total += 5;
    }
    EXPECT_EQ(l.state().epoch, 1);
    EXPECT_EQ(l.state().batch_in_epoch, 0);
  }
  EXPECT_EQ(total, 100);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), 100);  // disjoint: no index twice
}

TEST(Loader, ValuesFlipsAndDropLast) {
  auto d = std::make_shared<IdDataset>(50);
  LoaderOptions o;
  o.batch_size = 16;  // 50 = 3 x 16 + 2 dropped
  o.workers = 2;
  Loader l(d, o);
  int64_t flipped = 0, n = 0;
  for (int b = 0; b < 6; ++b) {
    const Batch x = l.next();
    ASSERT_EQ(x.images.sizes(), (std::vector<int64_t>{16, 1, 4, 4}));
    EXPECT_EQ(x.labels.dtype(), torch::kInt64);
    EXPECT_GE(x.images.min().item<float>(), -1.f);
    EXPECT_LE(x.images.max().item<float>(), 1.f);
    for (int64_t j = 0; j < 16; ++j) {
      const int64_t i = x.labels[j].item<int64_t>();
      const float v = static_cast<float>(i % 251) / 127.5f - 1.f;
      EXPECT_FLOAT_EQ(x.images[j][0][1][1].item<float>(), v);
      const bool left = x.images[j][0][0][0].item<float>() == 1.f;
      const bool right = x.images[j][0][0][3].item<float>() == 1.f;
      EXPECT_NE(left, right);
      flipped += right;
      ++n;
    }
  }
  EXPECT_EQ(l.state().epoch, 2);
  EXPECT_GT(flipped, n / 4);
  EXPECT_LT(flipped, 3 * n / 4);
}

// Runs of one class: every image at most once per epoch, each class's leftover under one run,
// negative labels (undecodable images) never; the same seed gives the same order, others differ,
// and over epochs the leftovers rotate, so every image is seen.
TEST(ClassRuns, RunsOfOneClassEachImageOnce) {
  std::vector<int32_t> labels;
  for (int i = 0; i < 10; ++i) labels.push_back(0);
  for (int i = 0; i < 7; ++i) labels.push_back(1);
  for (int i = 0; i < 3; ++i) labels.push_back(2);
  labels.push_back(-1);
  labels.push_back(0);  // class 0: 11 images, 2 runs of 4 and 3 left out
  std::set<int64_t> ever;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const std::vector<int64_t> order = class_run_order(labels, 3, 4, seed);
    ASSERT_EQ(order.size(), 12u);  // 8 of class 0, 4 of class 1, none of class 2
    EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), 12u);
    for (size_t k = 0; k < order.size(); ++k) {
      ASSERT_GE(labels[static_cast<size_t>(order[k])], 0);
      EXPECT_EQ(labels[static_cast<size_t>(order[k])], labels[static_cast<size_t>(order[k - k % 4])]) << k;
      ever.insert(order[k]);
    }
    EXPECT_EQ(order, class_run_order(labels, 3, 4, seed));
  }
  EXPECT_NE(class_run_order(labels, 3, 4, 1), class_run_order(labels, 3, 4, 2));
  EXPECT_EQ(ever.size(), 18u);  // all of classes 0 and 1 over the epochs; class 2 never fills a run
  EXPECT_NE(error_of([&] { class_run_order({0, 5}, 3, 2, 0); }).find("label 5"), std::string::npos);
}

// The loader with class_group: every batch of each rank is runs of one class, shards stay
// disjoint, the epoch length counts whole runs only, and a restored loader continues exactly.
TEST(Loader, ClassGroupBatchesAreRunsOfOneClass) {
  auto d = std::make_shared<SevenClasses>(200);  // classes of 29 (0-4) and 28 (5, 6) images: 28 each in runs of 4
  LoaderOptions o;
  o.batch_size = 8;
  o.class_group = 4;
  o.world_size = 2;
  o.seed = 5;
  o.flip = false;
  std::set<int64_t> seen;
  for (int64_t rank : {0, 1}) {
    o.rank = rank;
    const auto batches = take(d, o, 12);  // 196 / (8 x 2) = 12 per epoch per rank
    for (const Batch& b : batches) {
      for (int64_t j = 0; j < 8; ++j) {
        const auto i = static_cast<int64_t>(std::lround((b.images[j][0][1][1].item<float>() + 1.f) * 127.5f));
        EXPECT_EQ(b.labels[j].item<int64_t>(), i % 7);
        EXPECT_EQ(b.labels[j].item<int64_t>(), b.labels[j - j % 4].item<int64_t>()) << j;
        EXPECT_TRUE(seen.insert(i).second) << "image " << i << " twice in one epoch";
      }
    }
    Loader l(d, o);
    for (int k = 0; k < 12; ++k) l.next();
    EXPECT_EQ(l.state().epoch, 1);
    EXPECT_EQ(l.state().batch_in_epoch, 0);
    Loader a(d, o);
    for (int k = 0; k < 5; ++k) a.next();
    expect_same(take(d, o, 7, a.state()), std::vector<Batch>(batches.begin() + 5, batches.end()));
  }
  EXPECT_EQ(seen.size(), 192u);
  o.class_group = 3;
  EXPECT_NE(error_of([&] { Loader l(d, o); }).find("class_group 3: expected a divisor of the batch size 8"),
            std::string::npos);
  o.class_group = 4;
  EXPECT_NE(error_of([&] { Loader l(std::make_shared<IdDataset>(64), o); }).find("needs every image's label"),
            std::string::npos);
}

}  // namespace test_data
