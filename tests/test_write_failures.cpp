// Writes that fail (io/atomic_file.h, io/mapped_file.h; io::inject_write_failure or a file-size
// limit stands in for a full disk): an error naming the file, no zero-byte or partial file under
// a final name, no temporary left, the old content kept.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <functional>

#include "gan/cli/commands.h"
#include "gan/data/packed.h"
#include "io/atomic_file.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"

using namespace hamgan;
namespace fs = std::filesystem;

namespace {

// An empty directory of this test, created.
std::string fresh(const std::string& name) { return test::created_dir("test_write_failures", name); }
// A path of this test, emptied, not created.
std::string fresh_path(const std::string& name) { return test::fresh_dir("test_write_failures", name); }

using test::expect_names;
using test::in_child;
using test::sample_error;

std::string tiny_checkpoint(const std::string& name) { return test::tiny_checkpoint_in(fresh_path(name)); }

}  // namespace

// A full disk while writing samples, a grid or statistics: an error naming the file, no
// zero-byte or partial file under a final name, no temporary left behind.
TEST(WriteFailures, FullDiskIsAnErrorAndLeavesNoPartialFiles) {
  const std::string ck = tiny_checkpoint("disk");
  const std::string out = fresh_path("disk_out");
  io::inject_write_failure(ENOSPC, 300);  // a few hundred bytes fit: one PNG or so
  const std::string m = sample_error({"--checkpoint", ck, "--out", out, "-n", "12"});
  io::inject_write_failure(0);
  expect_names(m, {out, "No space left on device"});
  for (const auto& f : fs::recursive_directory_iterator(out)) {
    if (!f.is_regular_file()) continue;
    EXPECT_FALSE(io::is_temporary_name(f.path().filename().string())) << f.path();
    EXPECT_GT(fs::file_size(f.path()), 0u) << f.path();
  }
  const std::string grid = fresh_path("disk_grid") + ".png";
  io::inject_write_failure(ENOSPC, 0);
  expect_names(sample_error({"--checkpoint", ck, "--grid", grid}), {grid, "No space left"});
  io::inject_write_failure(0);
  EXPECT_FALSE(fs::exists(grid));
  // .npz statistics and appended lines the same way.
  const std::string npz = fresh_path("disk_npz") + ".npz";
  metrics::GaussianStats st{torch::zeros({4}, torch::kDouble), torch::eye(4, torch::kDouble), 2, "", ""};
  io::inject_write_failure(ENOSPC, 10);
  expect_names(test::error_of([&] { metrics::save_stats(npz, st); }), {npz, "No space left"});
  io::inject_write_failure(0);
  EXPECT_FALSE(fs::exists(npz));
  for (const auto& f : fs::directory_iterator(fs::path(npz).parent_path()))
    EXPECT_EQ(f.path().filename().string().rfind(fs::path(npz).filename().string() + ".tmp", 0), std::string::npos)
        << f.path();
  const std::string log = fresh_path("disk_log") + ".jsonl";
  fs::remove(log);
  io::append_to_file(log, "first line\n");
  io::inject_write_failure(ENOSPC, 5);
  expect_names(test::error_of([&] { io::append_to_file(log, "second line\n"); }), {log, "No space left"});
  io::inject_write_failure(0);
  EXPECT_EQ(fs::file_size(log), 11u);  // the half line was taken back
}

// io::write_file_atomically: all or nothing, the old content survives a failed replace.
TEST(WriteFailures, AtomicReplaceKeepsTheOldFileOnFailure) {
  const std::string p = fresh_path("atomic") + ".txt";
  io::write_file_atomically(p, "old content");
  io::inject_write_failure(EIO, 3);
  expect_names(test::error_of([&] { io::write_file_atomically(p, "new content that does not fit"); }),
               {p, "Input/output error"});
  io::inject_write_failure(0);
  EXPECT_EQ(test::read_text(p), "old content");
  EXPECT_FALSE(fs::exists(io::temporary_name(p)));
  io::write_file_atomically(p, "new");
  EXPECT_EQ(test::read_text(p), "new");
}

// `prepare --out` on a disk that cannot hold the file: an error, no sparse .partial left (a
// store into a sparse mapping on a full disk would be a SIGBUS); a directory as --out is named.
// A file-size limit stands in for the full disk.
TEST(WriteFailures, APackedFileTheDiskCannotHoldIsAnErrorAndLeavesNothing) {
  const std::string dir = fresh("prepare");
  const std::string out = dir + "/train.packed";
  const int rc = in_child([&] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{1 << 16, 1 << 16};
    setrlimit(RLIMIT_FSIZE, &lim);
    PrepareOptions po;
    po.source = "/usr/share/datasets/fashion-mnist";
    po.out = out;
    po.resolution = 32;
    po.channels = 1;
    po.progress = false;
    const std::string e = test::error_of([&] { prepare_packed(po); });
    return e.find(".partial") != std::string::npos && e.find("(no error)") == std::string::npos ? 0 : 1;
  }, false);
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(fs::exists(out + ".partial"));
  EXPECT_FALSE(fs::exists(out));
  const std::string e = test::error_of([&] {
    test::run_cli(cli::prepare, "prepare", {"--data", "/usr/share/datasets/fashion-mnist", "--out", dir,
                                            "--resolution", "32", "--channels", "1"});
  });
  EXPECT_NE(e.find("is a directory; expected the path of the packed file"), std::string::npos) << e;
}
