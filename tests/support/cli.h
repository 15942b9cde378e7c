// Helpers for tests that drive hamgan's commands in-process and write into temp folders.
#pragma once
#include <string>
#include <vector>

namespace hamgan::test {

// <tmp>/hamgan_<test>_<name>_<hash of the build directory>, removed first so every run starts empty.
std::string fresh_dir(const std::string& test, const std::string& name);

// fresh_dir, created: an empty directory of this test.
std::string created_dir(const std::string& test, const std::string& name);

// Runs a command function (e.g. cli::fid) as `hamgan <name> args...`, expects exit status 0
// and returns what it printed on stdout. Exceptions pass through.
std::string run_cli(int (*command)(int, char**), const std::string& name, std::vector<std::string> args);

// The message of the hamgan::Error that `hamgan sample args...` / `hamgan fid args...` throws,
// or "(no error)".
std::string sample_error(const std::vector<std::string>& args);
std::string fid_error(const std::vector<std::string>& args);

}  // namespace hamgan::test
