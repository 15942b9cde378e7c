// A comma list of words from a fixed set ("fid,kid,precision"), the one parser every such list
// goes through (a flag's value, a config key's): each word trimmed of spaces, at most once, none
// empty. The message of a refusal says what was wrong; callers prefix the flag or key.
#pragma once
#include <string>
#include <vector>

namespace hamgan {

// The words of `text` in the order given. Error (hamgan::Error, without the key's name): an
// unknown word (the known ones listed), a repeated one, an empty one, or no word at all.
// `noun` names a word in messages ("unknown metric 'x'").
std::vector<std::string> parse_word_list(const std::string& text, const std::vector<std::string>& words,
                                         const std::string& noun = "word");

// "a, b, c" of `words`, for messages.
std::string join_words(const std::vector<std::string>& words, const std::string& sep = ", ");

}  // namespace hamgan
