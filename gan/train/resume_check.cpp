#include "gan/train/resume_check.h"

#include <set>
#include <sstream>

#include "core/error.h"

namespace hamgan {

namespace {

// "key.path: checkpoint A, now B" for every leaf where a and b differ.
void differences(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::vector<std::string>& out) {
  if (a.IsMap() && b.IsMap()) {
    std::set<std::string> keys;
    for (const auto& kv : a) keys.insert(kv.first.as<std::string>());
    for (const auto& kv : b) keys.insert(kv.first.as<std::string>());
    // A key on one side only (another context type's options) reads as null, never as
    // yaml-cpp's invalid node, which throws when asked anything.
    const auto at = [](const YAML::Node& m, const std::string& k) { return m[k] ? YAML::Node(m[k]) : YAML::Node(); };
    for (const auto& k : keys) differences(at(a, k), at(b, k), path + "." + k, out);
    return;
  }
  const std::string x = a.IsDefined() && !a.IsNull() ? to_yaml(a) : "(unset)";
  const std::string y = b.IsDefined() && !b.IsNull() ? to_yaml(b) : "(unset)";
  if (x != y) out.push_back("  " + path.substr(1) + ": checkpoint " + x + ", now " + y);
}

// The resolved value at a dotted key path as YAML text, "(unset)" where there is none.
std::string value_text(const YAML::Node& resolved, const std::string& path) {
  YAML::Node n = resolved;  // a handle; the lookups below are const
  std::stringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    const YAML::Node& c = n;
    if (!c.IsMap() || !c[part]) return "(unset)";
    n.reset(c[part]);
  }
  return to_yaml(n);
}

}  // namespace

// The keys whose rows say OnResume::Model, section by section; a context block is compared as
// a whole mapping (another type has other keys).
std::vector<std::string> model_differences(const Config& stored, const Config& now) {
  std::vector<std::pair<std::string, std::vector<std::string>>> sections;
  for (const KeyInfo& k : config_keys()) {
    const auto dot = k.path.find('.');
    if (k.resume != OnResume::Model || k.path.find('.', dot + 1) != std::string::npos) continue;
    if (sections.empty() || sections.back().first != k.path.substr(0, dot)) sections.push_back({k.path.substr(0, dot), {}});
    sections.back().second.push_back(k.path.substr(dot + 1));
  }
  std::vector<std::string> diff;
  for (const auto& [section, names] : sections) {
    const YAML::Node sa = stored.resolved[section], sb = now.resolved[section];
    YAML::Node a(YAML::NodeType::Map), b(YAML::NodeType::Map);
    for (const auto& n : names) {
      if (sa.IsMap() && sa[n]) a[n] = sa[n];
      if (sb.IsMap() && sb[n]) b[n] = sb[n];
    }
    differences(a, b, "." + section, diff);
  }
  return diff;
}

void check_resume_compatible(const Config& stored, const Config& now, const std::string& what,
                             const std::string& run_config) {
  const std::vector<std::string> diff = model_differences(stored, now);
  if (!diff.empty()) {
    std::string lines;
    for (const auto& d : diff) lines += "\n" + d;
    fail(what, ": the model this config builds differs from the checkpoint's in ", diff.size(),
         diff.size() == 1 ? " key:" : " keys:", lines, "\nResume with the settings the run started with (",
         run_config.empty() ? std::string("the run's config.yaml") : "-c " + run_config,
         " and the same overrides) or train into a new --out.");
  }
  // The keys the optimizers' state depends on (rows: OnResume::Keep; train.freeze_d).
  for (const KeyInfo& k : config_keys()) {
    if (k.resume != OnResume::Keep) continue;
    const std::string was = value_text(stored.resolved, k.path), is = value_text(now.resolved, k.path);
    if (was != is)
      fail(what, ": ", k.path, " is ", is, " but the run was trained with ", was, "; resume with ", k.path, "=", was,
           " or fine-tune into a new --out with train.init_from");
  }
}

}  // namespace hamgan
