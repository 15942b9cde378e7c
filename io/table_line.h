// The lines of a text table (a CSV such as a run's scores.csv) as editors and spreadsheets save
// them: a UTF-8 byte-order mark before the first line (Excel's "CSV UTF-8", Notepad) and a CR
// before each LF are no part of the text. Every reader of a table takes its lines through here,
// so that a header reads the same whichever program saved it last.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace hamgan::io {

constexpr std::string_view kUtf8Bom("\xEF\xBB\xBF", 3);

// `text` without a leading byte-order mark.
inline std::string_view without_bom(std::string_view text) {
  return text.substr(0, kUtf8Bom.size()) == kUtf8Bom ? text.substr(kUtf8Bom.size()) : text;
}

// The next line of `in` into `line`, without its line end; line `number` 1 also without a
// byte-order mark. False at the end of the input.
inline bool table_line(std::istream& in, std::string& line, int64_t number) {
  if (!std::getline(in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (number == 1) line = std::string(without_bom(line));
  return true;
}

}  // namespace hamgan::io
