#include "core/word_list.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/error.h"

namespace hamgan {

std::string join_words(const std::vector<std::string>& words, const std::string& sep) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

std::vector<std::string> parse_word_list(const std::string& text, const std::vector<std::string>& words,
                                         const std::string& noun) {
  const std::string expected = "expected a comma list of " + join_words(words);
  // An empty list would silently mean "the default": said instead.
  if (text.find_first_not_of(" \t") == std::string::npos) fail("no ", noun, "; ", expected);
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::stringstream in(text + ",");  // the sentinel comma makes a trailing one an empty word
  std::string w;
  size_t count = 0, total = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1;
  while (count < total && std::getline(in, w, ',')) {
    ++count;
    w.erase(0, w.find_first_not_of(" \t"));
    w.erase(w.find_last_not_of(" \t") + 1);
    if (w.empty()) fail("an empty ", noun, " (two commas, or one at an end); ", expected);
    if (std::find(words.begin(), words.end(), w) == words.end()) fail("unknown ", noun, " '", w, "'; ", expected);
    if (!seen.insert(w).second) fail("'", w, "' twice; ", expected);
    out.push_back(w);
  }
  return out;
}

}  // namespace hamgan
