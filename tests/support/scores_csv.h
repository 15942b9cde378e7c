// A run's score table written as text, DIR/scores.csv with a subset of its columns
// (`iteration,n,seconds,features,fid`: gan/eval/score_table.h reads a table by its header), so
// that tests hold the format itself rather than the code that writes it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace hamgan::test {

// One line per {iteration, fid as written}: Inception features, n 10, 1 second.
inline std::string scores_csv_text(const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::string text = "iteration,n,seconds,features,fid\n";
  for (const auto& [it, fid] : rows) text += std::to_string(it) + ",10,1,inception," + fid + "\n";
  return text;
}

// Writes DIR/scores.csv (creating DIR); returns DIR.
inline std::string write_scores_csv(const std::string& dir, const std::vector<std::pair<int64_t, std::string>>& rows) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/scores.csv") << scores_csv_text(rows);
  return dir;
}

}  // namespace hamgan::test
