// A class-per-folder image dataset for data and CLI tests, with undecodable files among the
// images where a test needs them.
#pragma once
#include <string>

namespace hamgan::test {

// DIR/<a|b>/<k>.png: `good` white 32x32 RGB images per class, plus `junk` undecodable .png
// files (DIR/<a|b>/junk<k>.png). DIR is created; returns it.
std::string image_folder(const std::string& dir, int good, int junk);

}  // namespace hamgan::test
