// Writes that fail (io/atomic_file.h, io/mapped_file.h; io::inject_write_failure or a file-size
// limit stands in for a full disk): an error naming the file, no zero-byte or partial file under
// a final name, no temporary left, the old content kept. `hamgan export` and `train` run under
// `ulimit -f` fail with that error too, and a folder that is not writable is named as such.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gan/cli/commands.h"
#include "gan/data/packed.h"
#include "io/atomic_file.h"
#include "metrics/statistics.h"
#include "support/cli.h"
#include "support/errors.h"
#include "support/process.h"
#include "support/tiny_checkpoint.h"

namespace test_write_failures {

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

// `prepare` of Debian's Fashion-MNIST at 32 px, one channel, into `out`, quietly.
PrepareOptions fmnist32_prepare(const std::string& out) {
  PrepareOptions po;
  po.source = "/usr/share/datasets/fashion-mnist";
  po.out = out;
  po.resolution = 32;
  po.channels = 1;
  po.progress = false;
  return po;
}

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
    const std::string e = test::error_of([&] { prepare_packed(fmnist32_prepare(out)); });
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

namespace {

std::string binary_dir() {
  const char* v = std::getenv("HAMGAN_BINARY_DIR");
  if (!v) throw std::runtime_error("HAMGAN_BINARY_DIR is not set: run through ctest");
  return v;
}

// `hamgan args...` under `ulimit -f kib` (bash's 1024-byte blocks), its output in `log`:
// the wait status (-1: timed out).
int hamgan_under_file_limit(int kib, const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {"/bin/bash", "-c", "ulimit -f " + std::to_string(kib) + " && exec \"$@\"", "bash",
                                   binary_dir() + "/hamgan"};
  argv.insert(argv.end(), args.begin(), args.end());
  test::ChildGuard child(test::spawn(argv, {}, log));
  const int status = test::wait_for(child.pid(), 300);
  child.release();
  return status;
}

// Every temporary (<name>.tmp.<pid>) under `dir`, recursively.
std::vector<std::string> temporaries_under(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& f : fs::recursive_directory_iterator(dir))
    if (io::is_temporary_name(f.path().filename().string())) found.push_back(f.path().string());
  return found;
}

// `hamgan COMMAND` run under the file-size limit (status and output in `log`): exit status 1, not
// death by SIGXFSZ; its error names `file` and the limit; no temporary left under `out`.
void expect_file_size_error(int status, const std::string& log, const std::string& command, const std::string& file,
                            const std::string& out) {
  const std::string said = test::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << "wait status " << status << " (killed by SIGXFSZ?)\n" << said;
  EXPECT_EQ(WEXITSTATUS(status), 1) << said;
  expect_names(said, {"hamgan " + command + ": error: ", file, "File too large: the file-size limit (ulimit -f) is reached"});
  ASSERT_TRUE(fs::is_directory(out)) << said;
  EXPECT_EQ(temporaries_under(out), std::vector<std::string>{}) << said;
}
}  // namespace

// `export` past the file-size limit: hamgan's own error naming the file and the limit (not a
// silent SIGXFSZ), exit status 1, no temporary left; a killed export's leftover temporary does
// not block the next export, which succeeds.
TEST(WriteFailures, ExportPastTheFileSizeLimitIsAnErrorAndTheNextExportSucceeds) {
  const std::string ck = tiny_checkpoint("fsize_ck");
  const std::string out = fresh_path("fsize_export");
  const std::string log = fresh_path("fsize_export_log") + ".log";
  const int status = hamgan_under_file_limit(4, {"export", "--checkpoint", ck, "--out", out, "--threads", "1"}, log);
  expect_file_size_error(status, log, "export", out + "/model.safetensors", out);
  EXPECT_FALSE(fs::exists(out + "/model.safetensors"));

  // What a killed export leaves: a temporary of a process that is gone.
  const pid_t gone = test::spawn({"/bin/true"}, {});
  ASSERT_TRUE(WIFEXITED(test::wait_for(gone, 30)));
  const std::string leftover = out + "/model.safetensors.tmp." + std::to_string(gone);
  std::ofstream(leftover, std::ios::binary) << std::string(100, 'x');
  const std::string printed =
      test::run_cli(cli::export_cmd, "export", {"--checkpoint", ck, "--out", out, "--threads", "1"});
  EXPECT_NE(printed.find("wrote " + out + "/model.safetensors"), std::string::npos) << printed;
  EXPECT_TRUE(fs::is_regular_file(out + "/model.safetensors"));
  EXPECT_TRUE(fs::is_regular_file(out + "/config.json"));
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_EQ(temporaries_under(out), std::vector<std::string>{});
}

// `train` past the file-size limit: the same, for the run's files (the checkpoint is the
// largest).
TEST(WriteFailures, TrainPastTheFileSizeLimitIsAnErrorAndLeavesNoTemporary) {
  const std::string out = fresh_path("fsize_train");
  const std::string log = fresh_path("fsize_train_log") + ".log";
  const std::string source = std::getenv("HAMGAN_SOURCE_DIR") ? std::getenv("HAMGAN_SOURCE_DIR") : ".";
  const int status = hamgan_under_file_limit(
      64,
      {"train", "--synthetic", "--threads", "1", "-c", source + "/configs/fmnist32_sagan.yaml", "--out", out,
       "generator.ch=4", "discriminator.ch=4", "train.batch_size=4", "train.log_every=1", "train.sample_every=0",
       "train.checkpoint_every=0", "train.device=cpu", "train.iterations=2"},
      log);
  expect_file_size_error(status, log, "train", out + "/checkpoints/ckpt_000000002.pt", out);
}

// `prepare` into a folder it cannot write to says so (not a failed removal of a .partial that
// never existed), before the source is read, and leaves nothing.
TEST(WriteFailures, PrepareIntoAReadOnlyFolderSaysTheFolderIsNotWritable) {
  const std::string dir = fresh("prepare_read_only");
  const std::string out = dir + "/train.packed";
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                           fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const int rc = in_child([&] {
    const std::string e = test::error_of([&] { prepare_packed(fmnist32_prepare(out)); });
    std::fprintf(stderr, "prepare said: %s\n", e.c_str());
    const bool names_folder = e.find("--out " + out + ": its folder " + dir + " is not writable") != std::string::npos;
    return names_folder && e.find("remove") == std::string::npos ? 0 : 1;
  }, /*drop_root=*/true);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add);
  EXPECT_EQ(rc, 0) << "the message (on stderr above) does not say the folder is not writable";
  EXPECT_TRUE(fs::is_empty(dir));
}

// A line appended past the file-size limit: the error names the file and the limit (the short
// write is followed by one that says why), and the part that fit is taken back.
TEST(WriteFailures, AppendPastTheFileSizeLimitNamesTheLimitAndTakesTheLineBack) {
  const std::string log = fresh_path("fsize_append") + ".jsonl";
  fs::remove(log);
  io::append_to_file(log, std::string(1000, 'a') + "\n");
  const int rc = in_child([&] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{1024, 1024};
    setrlimit(RLIMIT_FSIZE, &lim);
    const std::string e = test::error_of([&] { io::append_to_file(log, std::string(100, 'b') + "\n"); });
    std::fprintf(stderr, "append said: %s\n", e.c_str());
    return e.find(log + ": cannot append 101 bytes: File too large: the file-size limit (ulimit -f) is reached") !=
                   std::string::npos
               ? 0
               : 1;
  }, false);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(fs::file_size(log), 1001u);
}

}  // namespace test_write_failures
