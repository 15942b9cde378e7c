#include "gan/sample/classes.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"

namespace hamgan::sample {

std::vector<int64_t> parse_classes(const std::string& spec, int64_t n_classes) {
  if (n_classes < 1) fail("--classes: the model has ", n_classes, " classes; expected >= 1");
  std::vector<int64_t> out;
  if (spec == "all") {
    for (int64_t c = 0; c < n_classes; ++c) out.push_back(c);
    return out;
  }
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');) {
    int64_t c = -1;
    if (!parse_int(item, c))
      fail("--classes '", spec, "': '", item, "' is not a class index; expected 'all' or a comma list like 0,3,7");
    if (c < 0 || c >= n_classes)
      fail("--classes '", spec, "': class ", c, " is out of range; the model has ", n_classes,
           " classes (0..", n_classes - 1, ")");
    if (std::find(out.begin(), out.end(), c) != out.end())
      fail("--classes '", spec, "': class ", c, " is listed twice");
    out.push_back(c);
  }
  if (out.empty()) fail("--classes '", spec, "': no classes; expected 'all' or a comma list like 0,3,7");
  return out;
}

}  // namespace hamgan::sample
