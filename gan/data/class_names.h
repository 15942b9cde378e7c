// Class names (a folder's class directories, a packed file's header) end up in classes.txt, one
// per line, and in an export's config.json: each must be valid UTF-8 without control characters
// (a newline would split one class into two lines). A name that cannot be is refused where the
// data is opened for `train` and `prepare`, naming it, rather than written out for no reader.
#pragma once
#include <string>
#include <vector>

namespace hamgan {

// What keeps `name` out of those texts ("is empty", "is not valid UTF-8 (byte 3)", ...), or ""
// when nothing does.
std::string class_name_problem(const std::string& name);
// Error naming `source`, the class's index and its name (bytes escaped) unless every name is
// non-empty UTF-8 without control characters.
void check_class_names(const std::vector<std::string>& names, const std::string& source);

}  // namespace hamgan
