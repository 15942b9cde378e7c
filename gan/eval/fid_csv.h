// A run's score table DIR/fid.csv: `iteration,fid,is,kid,n,seconds`, one row per scored
// checkpoint. Rows are appended one at a time (one write + flush + fsync each), so a crash
// loses at most the row being computed. An empty kid field (or "nan") means not computed.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace hamgan::eval {

struct FidRow {
  int64_t iteration = 0;
  double fid = 0, is = 0, kid = 0;  // NaN when not computed
  int64_t n = 0;
  double seconds = 0;
};

extern const char* const kFidCsvHeader;  // "iteration,fid,is,kid,n,seconds"

// All rows; a missing file gives none. A wrong header or malformed line: hamgan::Error
// naming the file and the line number.
std::vector<FidRow> read_fid_csv(const std::string& path);
std::set<int64_t> scored_iterations(const std::vector<FidRow>& rows);
// Appends one row, writing the header first when the file is missing or empty.
void append_fid_row(const std::string& path, const FidRow& row);

}  // namespace hamgan::eval
