// A run's score table as runs scored before DIR/scores.csv wrote it: DIR/fid.csv with the
// header `iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,
// ifid` (gan/eval/score_table.h reads it by its header). Written as text so that tests hold
// the old format itself rather than any code that once wrote it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace hamgan::test {

inline const char* const kLegacyFidCsvHeader =
    "iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,ifid";

// One line per {iteration, fid as written}: Inception features, n 10, 1 second, the other
// metrics empty (not computed).
inline std::string legacy_fid_csv_text(const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::string text = std::string(kLegacyFidCsvHeader) + "\n";
  for (const auto& [it, fid] : rows) text += std::to_string(it) + "," + fid + ",,,10,1,,inception,,,,,\n";
  return text;
}

// Writes DIR/fid.csv (creating DIR); returns DIR.
inline std::string write_legacy_fid_csv(const std::string& dir, const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/fid.csv") << legacy_fid_csv_text(rows);
  return dir;
}

}  // namespace hamgan::test
