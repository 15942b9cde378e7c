#include "core/config_reader.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/parse_number.h"

namespace hamgan {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

std::string show(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

}  // namespace

ConfigNode::ConfigNode(YAML::Node node, std::string path, std::shared_ptr<ConfigSource> source)
    : node_(node), path_(std::move(path)), source_(std::move(source)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    std::ostringstream os;
    os << (path_.empty() ? "the top level" : "key '" + path_ + "'")
       << ": expected a mapping of keys, got " << show(node_);
    throw Error(source_->file + ": " + os.str());
  }
}

std::string ConfigNode::full(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

void ConfigNode::fail_key(const std::string& key, const std::string& what) const {
  const std::string k = full(key);
  const std::string where = source_->overridden.count(k)
                                ? std::string("command-line override")
                                : source_->file;
  fail(where, ": key '", k, "': ", what);
}

bool ConfigNode::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

std::optional<std::string> ConfigNode::scalar(const std::string& key, const char* expected) {
  used_.insert(key);
  if (!has(key)) return std::nullopt;
  const YAML::Node v = node_[key];
  if (!v.IsScalar()) fail_key(key, std::string("expected ") + expected + ", got " + show(v));
  return v.Scalar();
}

void ConfigNode::record(const std::string& key, const YAML::Node& value) {
  // Walk/create the mapping for this node's path in the resolved tree.
  YAML::Node cur = source_->resolved;
  std::stringstream ss(path_);
  std::string part;
  while (!path_.empty() && std::getline(ss, part, '.')) {
    YAML::Node next = cur[part];
    if (!next.IsMap()) {
      cur[part] = YAML::Node(YAML::NodeType::Map);
      next = cur[part];
    }
    cur.reset(next);
  }
  cur[key] = value;
}

YAML::Node ConfigNode::recorded(const std::string& key) const {
  YAML::Node cur = source_->resolved;  // a handle; the lookups below are const
  std::stringstream ss(path_);
  std::string part;
  while (!path_.empty() && std::getline(ss, part, '.')) {
    const YAML::Node& c = cur;  // const lookup: never inserts
    if (!c.IsMap() || !c[part]) return YAML::Node();
    cur.reset(c[part]);
  }
  const YAML::Node& c = cur;
  return c.IsMap() && c[key] ? YAML::Clone(c[key]) : YAML::Node();
}

int64_t ConfigNode::integer(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
  std::ostringstream expect;
  expect << "an integer in [" << lo << ", " << hi << "]";
  if (lo == std::numeric_limits<int64_t>::min()) expect.str("an integer");
  const auto v = scalar(key, expect.str().c_str());
  int64_t out = def;
  if (v && !parse_int(*v, out)) fail_key(key, "expected " + expect.str() + ", got '" + *v + "'");
  if (out < lo || out > hi)
    fail_key(key, "expected " + expect.str() + ", got " + std::to_string(out));
  record(key, YAML::Node(out));
  return out;
}

double ConfigNode::real(const std::string& key, double def, double lo, double hi) {
  const std::string expect = std::isinf(hi) ? "a finite number >= " + number_text(lo)
                                            : "a number in [" + number_text(lo) + ", " + number_text(hi) + "]";
  const auto v = scalar(key, expect.c_str());
  double out = def;
  std::string why;
  if (v && !parse_real(*v, out, &why)) fail_key(key, "expected " + expect + ", got '" + *v + "'" + why);
  if (!(out >= lo && out <= hi)) fail_key(key, "expected " + expect + ", got " + number_text(out));
  record(key, YAML::Node(out));
  return out;
}

bool ConfigNode::boolean(const std::string& key, bool def) {
  const auto v = scalar(key, "true or false");
  bool out = def;
  if (v) {
    if (*v == "true" || *v == "True") out = true;
    else if (*v == "false" || *v == "False") out = false;
    else fail_key(key, "expected true or false, got '" + *v + "'");
  }
  record(key, YAML::Node(out));
  return out;
}

std::string ConfigNode::choice(const std::string& key, const std::string& def,
                               const std::vector<std::string>& allowed) {
  const std::string expect = "one of {" + join(allowed) + "}";
  const std::string out = scalar(key, expect.c_str()).value_or(def);
  bool ok = false;
  for (const auto& a : allowed) ok = ok || a == out;
  if (!ok) fail_key(key, "expected " + expect + ", got '" + out + "'");
  record(key, YAML::Node(out));
  return out;
}

std::string ConfigNode::string(const std::string& key, const std::string& def) {
  const std::string out = scalar(key, "a string").value_or(def);
  record(key, YAML::Node(out));
  return out;
}

std::vector<int64_t> ConfigNode::integers(const std::string& key,
                                          const std::vector<int64_t>& def, int64_t lo,
                                          int64_t hi) {
  used_.insert(key);
  std::vector<int64_t> out = def;
  if (has(key)) {
    YAML::Node v = node_[key];
    if (!v.IsSequence()) fail_key(key, "expected a list of integers, got " + show(v));
    out.clear();
    for (const auto& item : v) {
      int64_t x = 0;
      if (!item.IsScalar() || !parse_int(item.Scalar(), x))
        fail_key(key, "expected a list of integers, got an element " + show(item));
      if (x < lo || x > hi)
        fail_key(key, "expected integers in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "], got " + std::to_string(x));
      out.push_back(x);
    }
  }
  YAML::Node seq(YAML::NodeType::Sequence);
  for (auto x : out) seq.push_back(x);
  seq.SetStyle(YAML::EmitterStyle::Flow);
  record(key, seq);
  return out;
}

ConfigNode ConfigNode::child(const std::string& key) {
  used_.insert(key);
  YAML::Node v = has(key) ? node_[key] : YAML::Node(YAML::NodeType::Map);
  if (!v.IsMap()) fail_key(key, "expected a mapping of keys, got " + show(v));
  return ConfigNode(v, full(key), source_);
}

void ConfigNode::finish() const {
  if (!node_.IsMap()) return;
  std::vector<std::string> known(used_.begin(), used_.end());
  for (const auto& kv : node_) {
    const std::string k = kv.first.as<std::string>();
    if (!used_.count(k))
      fail_key(k, "unknown key (known here: " + join(known) + ")");
  }
}

std::string apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    fail("command-line override '", assignment, "': expected key.sub=value");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    fail("command-line override '", assignment, "': value is not valid YAML: ", e.what());
  }
  // An empty value, ~ or null would read as absent: the built-in default, not the file's value.
  if (!value.IsDefined() || value.IsNull())
    fail("command-line override '", assignment, "': expected a value after '=' (write \"\" for an empty text)");
  std::vector<std::string> parts;
  if (path.front() == '.' || path.back() == '.')  // getline drops a trailing empty part
    fail("command-line override '", assignment, "': empty key part (expected key.sub=value)");
  std::stringstream ss(path);
  for (std::string p; std::getline(ss, p, '.');) {
    if (p.empty()) fail("command-line override '", assignment, "': empty key part");
    parts.push_back(p);
  }
  YAML::Node cur = root;
  std::string walked;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    walked += (i ? "." : "") + parts[i];
    YAML::Node next = cur[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[parts[i]];
    } else if (!next.IsMap()) {
      fail("command-line override '", assignment, "': key '", walked,
           "' is a value, not a mapping");
    }
    cur.reset(next);
  }
  // A context module's `type` changed on the command line replaces its mapping, as a preset's
  // does (gan/config/config.cpp merge_over): the old type's options would be unknown keys for the
  // new one. `resolution` stays: it says where the block sits, not how it works.
  if (parts.back() == "type" && value.IsScalar() && cur["type"] && cur["type"].IsScalar() &&
      cur["type"].Scalar() != value.Scalar()) {
    std::vector<std::string> keys;
    for (const auto& kv : cur) keys.push_back(kv.first.Scalar());
    for (const auto& key : keys)
      if (key != "resolution") cur.remove(key);
  }
  cur[parts.back()] = value;
  return path;
}

}  // namespace hamgan
