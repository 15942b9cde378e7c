// `hamgan compare --seeds DIR`: runs that differ only in their seed, summarised per name. Every
// DIR/<name>_s<seed> with a score table (gan/eval/score_table.h: scores.csv, as SEEDS=...
// scripts/compare_modules.sh writes them) joins the group <name>; a
// folder without the _s<seed> suffix is not part of any group. Per group: the last
// checkpoint's class accuracy, FID, precision and recall, and the mean of the last four
// checkpoints' class accuracy and FID (one 1000-sample score moves by about +-8 FID), each as
// mean +- sd over the seeds (gan/eval/seed_stats.h); rows ranked by the last-four FID, and
// Welch's t (with its two-sided p) of each row's last-four FID and class accuracy against the
// first row's.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "gan/eval/score_table.h"

namespace hamgan::eval {

struct SeedGroup {
  std::string name;
  std::map<int64_t, std::vector<ScoreRow>> seeds;  // seed -> its score table's rows, by iteration
};

// The groups of DIR, by name. Error (hamgan::Error) naming DIR when it holds no
// <name>_s<seed> whose score table has rows; naming the file for a malformed table or one with
// two rows for one iteration (as `compare --run`); naming both folders when two of one name
// give one seed number (a_s0 and a_s00).
std::vector<SeedGroup> load_seed_groups(const std::string& dir);

// The Markdown table described above (header, rule, one line per group).
std::string seed_table(const std::vector<SeedGroup>& groups);

// `compare --seeds DIR [--out PREFIX] [--from IT]`: prints the table; with a prefix also
// writes PREFIX.md (the table) and PREFIX.svg (gan/eval/seed_bands.h, iterations >= from),
// both checked against io/output_path.h's rule before anything is read.
void compare_seeds(const std::string& dir, const std::string& prefix, int64_t from, std::ostream& out);

}  // namespace hamgan::eval
