// Typed, validated reading of YAML configs. Every getter records the resolved value
// (default or given), so the resolved config can be printed and stored in checkpoints.
// Unknown keys, wrong types and out-of-range values fail with the source (file or
// command-line override), the full key path and what was expected.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace hamgan {

struct KeyInfo;  // core/config_keys.h

struct ConfigSource {
  std::string file;                    // the YAML file the tree came from
  std::set<std::string> overridden;    // key paths set on the command line
  YAML::Node resolved = YAML::Node(YAML::NodeType::Map);
  // When set, each key a table row reads (core/config_keys.h) is appended here with its value:
  // reading an empty config lists every key with its default.
  std::vector<KeyInfo>* listing = nullptr;
};

// A key whose value is one word of a fixed set, read as an enum: one table lists each value's
// word, so parsing, printing and messages share it, and a field of enum type accepts no bool or
// text by accident (`cfg.train.amp = true` does not compile).
template <class E>
using Words = std::vector<std::pair<E, std::string>>;

template <class E>
const std::string& word_of(E value, const Words<E>& words) {
  for (const auto& w : words)
    if (w.first == value) return w.second;
  throw std::logic_error("config word table misses a value");
}

// `text` (a command-line flag's value) as one of `words`; the error names `what` and the words.
template <class E>
E word_from(const std::string& what, const std::string& text, const Words<E>& words) {
  std::string names;
  for (const auto& w : words) {
    if (w.second == text) return w.first;
    names += (names.empty() ? "" : ", ") + w.second;
  }
  fail(what, " '", text, "': expected one of {", names, "}");
}

class ConfigNode {
 public:
  ConfigNode(YAML::Node node, std::string path, std::shared_ptr<ConfigSource> source);

  int64_t integer(const std::string& key, int64_t def,
                  int64_t lo = std::numeric_limits<int64_t>::min(),
                  int64_t hi = std::numeric_limits<int64_t>::max());
  double real(const std::string& key, double def,
              double lo = -std::numeric_limits<double>::infinity(),
              double hi = std::numeric_limits<double>::infinity());
  bool boolean(const std::string& key, bool def);
  std::string choice(const std::string& key, const std::string& def,
                     const std::vector<std::string>& allowed);
  std::string string(const std::string& key, const std::string& def);
  template <class E>
  E word(const std::string& key, E def, const Words<E>& words) {
    std::vector<std::string> names;
    for (const auto& w : words) names.push_back(w.second);
    const std::string got = choice(key, word_of(def, words), names);
    for (const auto& w : words)
      if (w.second == got) return w.first;
    throw std::logic_error("config word table misses a word");
  }
  std::vector<int64_t> integers(const std::string& key, const std::vector<int64_t>& def,
                                int64_t lo = std::numeric_limits<int64_t>::min(),
                                int64_t hi = std::numeric_limits<int64_t>::max());
  // A nested mapping; absent means empty (all defaults).
  ConfigNode child(const std::string& key);
  bool has(const std::string& key) const;

  // Fails on any key of this mapping that no getter asked for.
  void finish() const;

  // An error about `key` of this node: "<source>: key 'a.b': <what>".
  [[noreturn]] void fail_key(const std::string& key, const std::string& what) const;
  const std::string& path() const { return path_; }
  // The value recorded for `key` of this node (null when none was).
  YAML::Node recorded(const std::string& key) const;
  std::vector<KeyInfo>* listing() const { return source_->listing; }

 private:
  std::string full(const std::string& key) const;
  // The key's scalar text, or nullopt when absent; fails on a list or mapping.
  std::optional<std::string> scalar(const std::string& key, const char* expected);
  void record(const std::string& key, const YAML::Node& value);

  YAML::Node node_;
  std::string path_;
  std::shared_ptr<ConfigSource> source_;
  std::set<std::string> used_;
};

// Parses "a.b.c=value" and sets it in `root` (the value parsed as YAML, so 3 is an
// integer and [1,2] a list). Returns the key path.
std::string apply_override(YAML::Node& root, const std::string& assignment);

}  // namespace hamgan
