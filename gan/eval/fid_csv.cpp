#include "gan/eval/fid_csv.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"
#include "io/atomic_file.h"

namespace hamgan::eval {

const char* const kFidCsvHeader =
    "iteration,fid,is,kid,n,seconds,class_acc,features,precision,recall,density,coverage,ifid";
const char* const kFidCsvHeaderV2 = "iteration,fid,is,kid,n,seconds,class_acc,features";
const char* const kFidCsvHeaderV1 = "iteration,fid,is,kid,n,seconds";

namespace {

// A CSV cell: "" (where allowed) and "nan" are "not computed".
double real_cell(const std::string& s, bool empty_ok, const std::string& where, const char* col) {
  if (s == "nan" || (s.empty() && empty_ok)) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  if (!parse_real(s, v)) fail(where, ": column '", col, "' is '", s, "'; expected a number");
  return v;
}

int64_t count_cell(const std::string& s, const std::string& where, const char* col) {
  int64_t v = 0;
  if (!parse_int(s, v) || v < 0) fail(where, ": column '", col, "' is '", s, "'; expected a non-negative integer");
  return v;
}

}  // namespace

std::vector<FidRow> read_fid_csv(const std::string& path) {
  std::vector<FidRow> rows;
  std::ifstream in(path);
  if (!in) return rows;
  std::string line;
  int64_t no = 0;
  size_t columns = 13;
  while (std::getline(in, line)) {
    ++no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = path + ":" + std::to_string(no);
    if (no == 1) {
      if (line == kFidCsvHeaderV1) columns = 6;
      else if (line == kFidCsvHeaderV2) columns = 8;
      else if (line != kFidCsvHeader) fail(where, ": header is '", line, "'; expected '", kFidCsvHeader, "'");
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (!line.empty() && line.back() == ',') f.push_back("");
    if (f.size() != columns)
      fail(where, ": ", f.size(), " columns in '", line, "'; expected ", columns, " (",
           columns == 6 ? kFidCsvHeaderV1 : columns == 8 ? kFidCsvHeaderV2 : kFidCsvHeader, ")");
    FidRow r;
    r.iteration = count_cell(f[0], where, "iteration");
    r.fid = real_cell(f[1], false, where, "fid");
    r.is = real_cell(f[2], true, where, "is");
    r.kid = real_cell(f[3], true, where, "kid");
    r.n = count_cell(f[4], where, "n");
    r.seconds = real_cell(f[5], false, where, "seconds");
    r.class_acc = columns >= 8 ? real_cell(f[6], true, where, "class_acc") : std::numeric_limits<double>::quiet_NaN();
    if (columns >= 8) {
      if (f[7].empty()) fail(where, ": column 'features' is empty; expected inception or a classifier identity");
      r.net = f[7] == "inception" ? "" : f[7];
    }
    if (columns == 13) {
      r.precision = real_cell(f[8], true, where, "precision");
      r.recall = real_cell(f[9], true, where, "recall");
      r.density = real_cell(f[10], true, where, "density");
      r.coverage = real_cell(f[11], true, where, "coverage");
      r.ifid = real_cell(f[12], true, where, "ifid");
    }
    rows.push_back(r);
  }
  return rows;
}

std::set<int64_t> scored_iterations(const std::vector<FidRow>& rows) {
  std::set<int64_t> s;
  for (const auto& r : rows) s.insert(r.iteration);
  return s;
}

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.10g", v);
  return b;
}

std::string row_text(const FidRow& r) {
  if (r.net.find_first_of(",\n\r") != std::string::npos) fail("fid.csv: feature network name '", r.net, "' has a comma or newline");
  return std::to_string(r.iteration) + "," + num(r.fid) + "," + num(r.is) + "," + num(r.kid) + "," +
         std::to_string(r.n) + "," + num(r.seconds) + "," + num(r.class_acc) + "," +
         (r.net.empty() ? "inception" : r.net) + "," + num(r.precision) + "," + num(r.recall) + "," +
         num(r.density) + "," + num(r.coverage) + "," + num(r.ifid) + "\n";
}

bool earlier_format(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line == kFidCsvHeaderV1 || line == kFidCsvHeaderV2;
}

// Rewrites an earlier-format file in the current format (atomically: temporary, fsync, rename).
void upgrade(const std::string& path) {
  std::string text = std::string(kFidCsvHeader) + "\n";
  for (const FidRow& r : read_fid_csv(path)) text += row_text(r);
  io::write_file_atomically(path, text);
}

}  // namespace

void append_fid_row(const std::string& path, const FidRow& r) {
  if (earlier_format(path)) upgrade(path);
  std::error_code ec;
  std::string text;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0)
    text = std::string(kFidCsvHeader) + "\n";
  text += row_text(r);
  // One write of the whole line (O_APPEND: it lands at the end in one piece), checked.
  io::append_to_file(path, text);
}

int64_t remove_fid_rows(const std::string& path, int64_t iteration) {
  std::string text = std::string(kFidCsvHeader) + "\n";
  int64_t removed = 0;
  for (const FidRow& r : read_fid_csv(path)) {
    if (r.iteration == iteration) ++removed;
    else text += row_text(r);
  }
  if (removed > 0) io::write_file_atomically(path, text);
  return removed;
}

}  // namespace hamgan::eval
