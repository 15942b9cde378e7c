#include "io/metrics_log.h"

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "io/atomic_file.h"

namespace hamgan {

namespace {

// {"key": number, ...} (the trainer's Progress writes nothing else).
std::map<std::string, double> parse_record(const std::string& line, const std::string& where) {
  std::map<std::string, double> rec;
  size_t i = line.find('{');
  const size_t end = line.rfind('}');
  if (i == std::string::npos || end == std::string::npos || end < i) fail(where, ": not a JSON object");
  ++i;
  const auto skip = [&]() {
    while (i < end && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  };
  while (true) {
    skip();
    if (i >= end) break;
    if (line[i] != '"') fail(where, ": expected a quoted key at column ", i + 1);
    const size_t q = line.find('"', i + 1);
    if (q == std::string::npos || q > end) fail(where, ": unterminated key");
    const std::string key = line.substr(i + 1, q - i - 1);
    i = q + 1;
    skip();
    if (i >= end || line[i] != ':') fail(where, ": expected ':' after \"", key, "\"");
    ++i;
    skip();
    const char* begin = line.c_str() + i;
    char* stop = nullptr;
    const double v = std::strtod(begin, &stop);
    if (stop == begin) fail(where, ": the value of \"", key, "\" is not a number");
    rec[key] = v;
    i += static_cast<size_t>(stop - begin);
    skip();
    if (i < end && line[i] != ',') fail(where, ": expected ',' after the value of \"", key, "\"");
    ++i;
  }
  if (!rec.count("iteration")) fail(where, ": no \"iteration\"");
  return rec;
}

}  // namespace

std::vector<std::map<std::string, double>> read_train_stats_log(const std::string& path) {
  std::vector<std::map<std::string, double>> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string line;
  for (int64_t no = 1; std::getline(in, line); ++no) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto rec = parse_record(line, path + ":" + std::to_string(no));
    // A resumed run continues from its checkpoint: drop what the interrupted run logged after it.
    while (!out.empty() && out.back().at("iteration") >= rec.at("iteration")) out.pop_back();
    out.push_back(std::move(rec));
  }
  return out;
}

void cut_train_stats_log(const std::string& path, int64_t iteration) {
  std::ifstream in(path);
  if (!in) return;
  std::string kept, line;
  bool cut = false;
  for (int64_t no = 1; std::getline(in, line); ++no) {
    bool keep = true;
    try {
      keep = parse_record(line, path).at("iteration") <= static_cast<double>(iteration);
    } catch (const Error&) {
      keep = in.peek() != std::char_traits<char>::eof();  // a torn last line goes; the reader names others
    }
    if (keep) kept += line + "\n";
    else cut = true;
  }
  if (cut) io::write_file_atomically(path, kept);
}

}  // namespace hamgan
