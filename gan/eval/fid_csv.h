// A run's score table DIR/fid.csv: `iteration,fid,is,kid,n,seconds,class_acc,features,
// precision,recall,density,coverage,ifid`, one row per scored checkpoint. Rows are appended one at a time (one write + flush + fsync each),
// so a crash loses at most the row being computed. An empty is/kid/class_acc field (or "nan")
// means not computed; `features` names the feature network ("inception" or a domain
// classifier's identity). Files of the earlier formats (`iteration,fid,is,kid,n,seconds` and
// the same with `class_acc,features`) still read (the missing columns not computed) and are
// upgraded when a row is appended.
#pragma once
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace hamgan::eval {

struct FidRow {
  int64_t iteration = 0;
  double fid = 0, is = 0, kid = 0;  // NaN when not computed
  int64_t n = 0;
  double seconds = 0;
  double class_acc = std::numeric_limits<double>::quiet_NaN();  // not computed (Inception)
  std::string net;       // FeatureNet::identity ("" = Inception, written "inception")
  // Precision/recall (k 3) and density/coverage (k 5) in the same features, mean intra-class
  // FID (metrics/prdc.h, metrics/intra_class_fid.h); NaN when not computed.
  double precision = std::numeric_limits<double>::quiet_NaN(), recall = precision, density = precision,
         coverage = precision, ifid = precision;
};

extern const char* const kFidCsvHeader;    // the current format (13 columns)
extern const char* const kFidCsvHeaderV2;  // "iteration,fid,is,kid,n,seconds,class_acc,features"
extern const char* const kFidCsvHeaderV1;  // "iteration,fid,is,kid,n,seconds"

// All rows; a missing file gives none. A wrong header or malformed line: hamgan::Error
// naming the file and the line number.
std::vector<FidRow> read_fid_csv(const std::string& path);
std::set<int64_t> scored_iterations(const std::vector<FidRow>& rows);
// Appends one row, writing the header first when the file is missing or empty (an
// earlier-format file is first rewritten, atomically, in the current format).
void append_fid_row(const std::string& path, const FidRow& row);
// Rewrites the file (atomically, in the current format) without its rows of `iteration`, as
// before a row of a newer checkpoint of that iteration replaces them; returns how many went.
int64_t remove_fid_rows(const std::string& path, int64_t iteration);

}  // namespace hamgan::eval
