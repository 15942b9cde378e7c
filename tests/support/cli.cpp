#include "support/cli.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>

#include "gan/cli/commands.h"
#include "support/errors.h"

namespace hamgan::test {

std::string fresh_dir(const std::string& test, const std::string& name) {
  // Keyed by the build directory too, so the suites of two builds (1.13 and 2.x) can run at once.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  char build[17];
  std::snprintf(build, sizeof build, "%08zx", std::hash<std::string>{}(exe.parent_path().string()) & 0xffffffffu);
  const auto p = std::filesystem::temp_directory_path() / ("hamgan_" + test + "_" + name + "_" + build);
  std::filesystem::remove_all(p);
  return p.string();
}

std::string created_dir(const std::string& test, const std::string& name) {
  const std::string d = fresh_dir(test, name);
  std::filesystem::create_directories(d);
  return d;
}

std::string run_cli(int (*command)(int, char**), const std::string& name, std::vector<std::string> args) {
  args.insert(args.begin(), name);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  int rc = -1;
  try {
    rc = command(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    testing::internal::GetCapturedStdout();
    throw;
  }
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << out;
  return out;
}

std::string sample_error(const std::vector<std::string>& args) {
  return error_of([&] { run_cli(cli::sample_cmd, "sample", args); });
}

std::string fid_error(const std::vector<std::string>& args) {
  return error_of([&] { run_cli(cli::fid, "fid", args); });
}

}  // namespace hamgan::test
