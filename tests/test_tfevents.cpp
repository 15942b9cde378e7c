// TensorBoard event files (io/tfevents_writer.h): CRC-32C against RFC 3720's vectors, and whole
// framed records byte for byte against what TensorBoard's own protobuf classes serialize and its
// own masked_crc32c frames (the expected strings below were printed by the oracle venv's
// tensorboard 2.17: event_pb2.Event(...).SerializeToString(), pywrap_tensorflow.masked_crc32c).
// That TensorBoard reads a real, killed and resumed run back: tests/tensorboard_reader.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "core/crc32c.h"
#include "io/tfevents_reader.h"
#include "io/tfevents_writer.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/tiny_run.h"

namespace test_tfevents {

using namespace hamgan;
namespace fs = std::filesystem;
namespace tfe = hamgan::io::tfevents;

namespace {

std::string bytes(const char* p, size_t n) { return std::string(p, n); }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) out.push_back(f.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// TensorBoard's bytes for Event(wall_time=1700000000.25, step=300) with g_loss -1.5 and d_loss 0.0
// (a oneof member: a zero is still written, else the value would be no scalar).
const char kScalarRecord[] =
    "\x38\x00\x00\x00\x00\x00\x00\x00\xa3\x79\x7d\x57\x09\x00\x00\x10\x40\xfc\x54\xd9\x41\x10\xac\x02\x2a\x2a"
    "\x0a\x13\x0a\x0c\x74\x72\x61\x69\x6e\x2f\x67\x5f\x6c\x6f\x73\x73\x15\x00\x00\xc0\xbf\x0a\x13\x0a\x0c\x74"
    "\x72\x61\x69\x6e\x2f\x64\x5f\x6c\x6f\x73\x73\x15\x00\x00\x00\x00\xb7\x3e\xb5\x27";
// SessionLog START at step 7, wall_time 2.5.
const char kStartRecord[] =
    "\x0f\x00\x00\x00\x00\x00\x00\x00\x6d\x53\x2b\x09\x09\x00\x00\x00\x00\x00\x00\x04\x40\x10\x07\x3a\x02\x08\x01"
    "\x9a\xaf\x83\xce";
// The image `samples` (2 x 3 x 1, "PNG!") at step 129, wall_time 3.0.
const char kImageRecord[] =
    "\x27\x00\x00\x00\x00\x00\x00\x00\xbb\xe1\xb1\x46\x09\x00\x00\x00\x00\x00\x00\x08\x40\x10\x81\x01\x2a\x19\x0a"
    "\x17\x0a\x07\x73\x61\x6d\x70\x6c\x65\x73\x22\x0c\x08\x02\x10\x03\x18\x01\x22\x04\x50\x4e\x47\x21\xd6\x4f\xc7"
    "\xda";

}  // namespace

TEST(Crc32c, Rfc3720Vectors) {
  const std::string zeros(32, '\0'), ones(32, '\xff');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  std::string inc(32, '\0');
  for (int i = 0; i < 32; ++i) inc[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c(inc.data(), inc.size()), 0x46DD794Eu);
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c("", 0), 0u);
}

TEST(TfEvents, ScalarRecordMatchesTensorBoardsBytes) {
  const std::string got =
      tfe::record(tfe::scalars_event(1700000000.25, 300, {{"train/g_loss", -1.5}, {"train/d_loss", 0.0}}));
  EXPECT_EQ(got, bytes(kScalarRecord, sizeof kScalarRecord - 1));
}

TEST(TfEvents, SessionStartImageAndVersionRecordsMatchTensorBoardsBytes) {
  EXPECT_EQ(tfe::record(tfe::session_start_event(2.5, 7)), bytes(kStartRecord, sizeof kStartRecord - 1));
  tfe::Image im;
  im.height = 2, im.width = 3, im.channels = 1, im.png = "PNG!";
  EXPECT_EQ(tfe::record(tfe::image_event(3.0, 129, "samples", im)), bytes(kImageRecord, sizeof kImageRecord - 1));

  const char version[] =
      "\x18\x00\x00\x00\x00\x00\x00\x00\xa3\x7f\x4b\x22\x09\x00\x00\x00\x00\x00\x00\x10\x40\x1a\x0d\x62\x72\x61\x69"
      "\x6e\x2e\x45\x76\x65\x6e\x74\x3a\x32\xdf\x86\x59\x37";
  EXPECT_EQ(tfe::record(tfe::file_version_event(4.0)), bytes(version, sizeof version - 1));
}

// Each writer makes a file of its own whose name sorts after the directory's earlier ones (the
// order TensorBoard reads them in), holding the version record and then exactly what was flushed.
TEST(TfEvents, EachWriterAppendsToANewFileThatSortsLast) {
  const std::string dir = test::fresh_dir("test_tfevents", "writer") + "/tb";
  std::string first;
  {
    io::TfEventsWriter w(dir);
    first = fs::path(w.path()).filename().string();
    EXPECT_EQ(first.rfind("events.out.tfevents.", 0), 0u) << first;
    w.scalars(5, {{"a", 1.0}});
    w.flush();
    const std::string data = read_file(w.path());
    const std::string tail = tfe::record(tfe::scalars_event(0, 5, {{"a", 1.0}}));
    ASSERT_GT(data.size(), tail.size());
    // The version record comes first; the wall times differ, the lengths do not.
    EXPECT_EQ(data.size(), tfe::record(tfe::file_version_event(0)).size() + tail.size());
    EXPECT_EQ(data.substr(data.size() - tail.size(), 8), tail.substr(0, 8));  // the scalar record's length field
  }
  // A file named one day ahead (a clock set back since): the next writer still sorts after it.
  const long long ahead = std::stoll(first.substr(20, 10)) + 86400;
  const std::string future = "events.out.tfevents." + std::to_string(ahead) + ".elsewhere";
  std::ofstream(dir + "/" + future).put('\0');
  io::TfEventsWriter w2(dir);
  const std::vector<std::string> files = event_files(dir);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0], first);
  EXPECT_EQ(files[1], future);
  EXPECT_EQ(files[2], fs::path(w2.path()).filename().string());
}

// train.tensorboard: on by default, one file per session; off writes nothing.
TEST(TfEvents, TrainingWritesEventsUnlessTurnedOff) {
  const std::string on = test::fresh_dir("tfevents_on");
  test::run(test::tiny("train.iterations=2"), on);
  test::run(test::tiny("train.iterations=4"), on);  // resumes
  ASSERT_TRUE(fs::is_directory(on + "/tensorboard"));
  EXPECT_EQ(event_files(on + "/tensorboard").size(), 2u);
  const std::string off = test::fresh_dir("tfevents_off");
  test::run(test::tiny("train.iterations=2 train.tensorboard=false"), off);
  EXPECT_TRUE(fs::exists(off + "/metrics.jsonl"));
  EXPECT_FALSE(fs::exists(off + "/tensorboard"));
}

// io/tfevents_reader.h on records that TensorBoard's own protobuf classes serialized (above): the
// steps of the events whose summary holds a tag of the prefix, whatever else a file holds.
TEST(TfEventsReader, StepsOfTaggedEventsInTensorBoardsOwnRecords) {
  const std::string dir = test::created_dir("test_tfevents", "reader");
  std::ofstream(dir + "/events.out.tfevents.1.a", std::ios::binary)
      << bytes(kStartRecord, sizeof kStartRecord - 1) << bytes(kScalarRecord, sizeof kScalarRecord - 1)
      << bytes(kImageRecord, sizeof kImageRecord - 1);
  std::ofstream(dir + "/not.an.events.file") << "ignored";
  EXPECT_EQ(io::tagged_steps(dir, "train/"), (std::set<int64_t>{300}));
  EXPECT_EQ(io::tagged_steps(dir, "train/d_"), (std::set<int64_t>{300}));
  EXPECT_EQ(io::tagged_steps(dir, "samples"), (std::set<int64_t>{129}));
  EXPECT_TRUE(io::tagged_steps(dir, "eval/").empty());
  EXPECT_TRUE(io::tagged_steps(dir + "/missing", "train/").empty());
  // The steps of every file of the folder; a subfolder's files are another run's.
  {
    io::TfEventsWriter w(dir);
    w.scalars(5, {{"eval/fid", 40.0}});
    w.scalars(9, {{"train/d_loss", 1.0}, {"eval/recall", 0.5}});
    w.flush();
    io::TfEventsWriter other(dir + "/real_test");
    other.scalars(11, {{"eval/fid", 2.0}});
    other.flush();
  }
  EXPECT_EQ(io::tagged_steps(dir, "eval/"), (std::set<int64_t>{5, 9}));
  EXPECT_EQ(io::tagged_steps(dir, "train/"), (std::set<int64_t>{9, 300}));
  EXPECT_EQ(io::tagged_steps(dir + "/real_test", "eval/"), (std::set<int64_t>{11}));
}

// A torn last record (its writer killed inside the write) ends the file, as it ends
// TensorBoard's reading; a record whose checksum does not match is an error naming the file.
TEST(TfEventsReader, TornLastRecordEndsAFileAndABadChecksumIsAnError) {
  const std::string dir = test::created_dir("test_tfevents", "reader_torn");
  const std::string scalar = bytes(kScalarRecord, sizeof kScalarRecord - 1);
  const std::string image = bytes(kImageRecord, sizeof kImageRecord - 1);
  for (size_t cut : {size_t{5}, size_t{12}, image.size() - 1}) {
    std::ofstream(dir + "/events.out.tfevents.1.a", std::ios::binary) << scalar << image.substr(0, cut);
    EXPECT_EQ(io::tagged_steps(dir, "samples"), std::set<int64_t>{}) << "cut at " << cut;
    EXPECT_EQ(io::tagged_steps(dir, "train/"), (std::set<int64_t>{300})) << "cut at " << cut;
  }
  std::string bad = scalar;
  bad[30] ^= 1;  // a byte of the data: its checksum no longer matches
  std::ofstream(dir + "/events.out.tfevents.1.a", std::ios::binary) << image << bad;
  const std::string e = test::error_of([&] { io::tagged_steps(dir, "train/"); });
  EXPECT_NE(e.find("events.out.tfevents.1.a"), std::string::npos) << e;
  EXPECT_NE(e.find("at byte " + std::to_string(image.size())), std::string::npos) << e;
  EXPECT_NE(e.find("checksum"), std::string::npos) << e;
}

}  // namespace test_tfevents
