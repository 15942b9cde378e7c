// A config mapping's keys declared once, as a table of rows: each row binds a struct member to
// its YAML key, type, range or words, one line of meaning and what a resume may do with it. The
// default is the member's initializer in the struct. Reading (through ConfigNode, so errors keep
// the form "<file>: key 'train.x': expected ..."), `hamgan info --keys` and the generated
// docs/configuration.md all come from the rows. Checks across keys run as code after the table
// is read; the row still says what a reader sees (`also`).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/config_reader.h"

namespace hamgan {

// What a resume (the run continued from its own checkpoint) may do with a key.
enum class OnResume {
  Change,  // may change it (rates, logging, the budget)
  Model,   // keeps it: G's and D's tensors are built from it (a fine-tune may change it)
  Keep,    // keeps it: the optimizer's state or the data's order depends on it (a fine-tune may change it)
};
const char* on_resume_word(OnResume r);  // "change", "model", "keep"

// One key as the listing shows it.
struct KeyInfo {
  std::string path;     // "train.batch_size" (a row holds its name in its mapping)
  std::string type;     // integer, number, boolean, word, text, integers, mapping
  std::string range;    // what the reader accepts, as a reader sees it
  std::string meaning;  // one line
  OnResume resume = OnResume::Change;
  YAML::Node value;     // listed: the default
};

// A closed or half-open interval of numbers (Adam's beta must stay below 1, its eps above 0).
struct Interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  std::string text() const;  // "[0, 1]", "[0, 1)", "(0, 1]", ">= 0"
};
inline Interval closed(double lo, double hi) { return {lo, hi, false, false}; }
inline Interval closed_open(double lo, double hi) { return {lo, hi, false, true}; }
inline Interval open_closed(double lo, double hi) { return {lo, hi, true, false}; }
inline Interval open_open(double lo, double hi) { return {lo, hi, true, true}; }
inline Interval at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, false}; }

std::string integer_range_text(int64_t lo, int64_t hi);  // "[1, 4096]", ">= 0"

// Appends the row just read to the node's listing (ConfigSource::listing), with its value.
void list_key(const ConfigNode& node, const KeyInfo& row);

template <class S>
struct Key {
  KeyInfo info;
  bool resume_set = false;
  std::function<void(ConfigNode&, S&)> read;

  // A constraint a check after the table enforces, as the reader sees it ("a divisor of ...").
  Key also(const std::string& constraint) const {
    Key k = *this;
    k.info.range += "; " + constraint;
    return k;
  }
  Key on_resume(OnResume r) const {
    Key k = *this;
    k.info.resume = r, k.resume_set = true;
    return k;
  }
};

template <class S>
class KeyTable {
 public:
  // `resume`: each row's unless the row says otherwise.
  KeyTable(OnResume resume, std::vector<Key<S>> rows) : rows_(std::move(rows)) {
    for (auto& k : rows_)
      if (!k.resume_set) k.info.resume = resume;
  }
  // The rows of a base struct's table (keys several modules share) first, then `rows`.
  template <class Base>
  KeyTable(OnResume resume, const KeyTable<Base>& base, std::vector<Key<S>> rows) {
    for (const Key<Base>& b : base.rows()) {
      Key<S> k;
      k.info = b.info, k.resume_set = true;
      k.read = [read = b.read](ConfigNode& n, S& s) { read(n, static_cast<Base&>(s)); };
      rows_.push_back(std::move(k));
    }
    for (auto& k : rows)
      rows_.push_back(k.resume_set ? std::move(k) : std::move(k).on_resume(resume));
  }

  // Each row in order: the resolved config lists the keys in this order.
  void read(ConfigNode& node, S& s) const {
    for (const auto& k : rows_) {
      k.read(node, s);
      list_key(node, k.info);
    }
  }
  const std::vector<Key<S>>& rows() const { return rows_; }

 private:
  std::vector<Key<S>> rows_;
};

// The rows, one function per kind of value. The struct type comes from the member pointer.
namespace keys {

template <class S>
Key<S> row(std::string name, std::string type, std::string range, std::string meaning,
           std::function<void(ConfigNode&, S&)> read) {
  Key<S> k;
  k.info.path = std::move(name), k.info.type = std::move(type), k.info.range = std::move(range);
  k.info.meaning = std::move(meaning);
  k.read = std::move(read);
  return k;
}

template <class S>
Key<S> integer(const std::string& name, int64_t S::*m, int64_t lo, int64_t hi, std::string meaning) {
  return row<S>(name, "integer", integer_range_text(lo, hi), std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.integer(name, s.*m, lo, hi); });
}
// At least `lo`, no upper bound.
template <class S>
Key<S> integer(const std::string& name, int64_t S::*m, int64_t lo, std::string meaning) {
  return integer(name, m, lo, std::numeric_limits<int64_t>::max(), std::move(meaning));
}

// One of a few integers (out of their span: the span's error; inside it: "expected one of").
template <class S>
Key<S> integer_of(const std::string& name, int64_t S::*m, std::vector<int64_t> values, std::string meaning) {
  std::string list;
  for (auto v : values) list += (list.empty() ? "" : ", ") + std::to_string(v);
  return row<S>(name, "integer", list, std::move(meaning), [=](ConfigNode& n, S& s) {
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.*m = n.integer(name, s.*m, *lo, *hi);
    for (auto v : values)
      if (v == s.*m) return;
    n.fail_key(name, "expected one of " + list + ", got " + std::to_string(s.*m));
  });
}

void check_interval(ConfigNode& n, const std::string& name, double v, const Interval& in);

// A number whose default is another member's, read by an earlier row (D's Adam beta1: G's
// unless given), so a config that sets only the other keeps its meaning.
template <class S>
Key<S> real_or(const std::string& name, double S::*m, double S::*fallback, Interval in, std::string meaning) {
  return row<S>(name, "number", in.text(), std::move(meaning), [=](ConfigNode& n, S& s) {
    s.*m = n.real(name, s.*fallback, in.lo, in.hi);
    check_interval(n, name, s.*m, in);
  });
}

// A number whose default is its member's initializer.
template <class S>
Key<S> real(const std::string& name, double S::*m, Interval in, std::string meaning) {
  return real_or(name, m, m, in, std::move(meaning));
}

template <class S>
Key<S> boolean(const std::string& name, bool S::*m, std::string meaning) {
  return row<S>(name, "boolean", "true, false", std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.boolean(name, s.*m); });
}

template <class S, class E>
Key<S> word(const std::string& name, E S::*m, const Words<E>& words, std::string meaning) {
  std::string list;
  for (const auto& w : words) list += (list.empty() ? "" : ", ") + w.second;
  return row<S>(name, "word", list, std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.word(name, s.*m, words); });
}

// A word of a list a registry holds (context modules, metrics), asked for when read.
template <class S>
Key<S> choice(const std::string& name, std::string S::*m, std::vector<std::string> (*allowed)(),
              std::string meaning) {
  std::string list;
  for (const auto& w : allowed()) list += (list.empty() ? "" : ", ") + w;
  return row<S>(name, "word", list, std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.choice(name, s.*m, allowed()); });
}

// Free text: `range` says what it is ("a path; \"\": none").
template <class S>
Key<S> text(const std::string& name, std::string S::*m, std::string range, std::string meaning) {
  return row<S>(name, "text", std::move(range), std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.string(name, s.*m); });
}

// Text read into a T by `parse` (which fails through the node, naming the key); `show` writes
// the default back as text.
template <class T>
struct Exactly {  // a parameter type that takes no part in deducing T (lambdas convert to it)
  using type = T;
};
template <class S, class T>
Key<S> parsed(const std::string& name, T S::*m, std::string range, std::string meaning,
              typename Exactly<std::function<std::string(const T&)>>::type show,
              typename Exactly<std::function<T(ConfigNode&, const std::string&, const std::string&)>>::type parse) {
  return row<S>(name, "text", std::move(range), std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = parse(n, name, n.string(name, show(s.*m))); });
}

template <class S>
Key<S> integers(const std::string& name, std::vector<int64_t> S::*m, int64_t lo, int64_t hi,
                std::string meaning) {
  return row<S>(name, "integers", "a list, each " + integer_range_text(lo, hi), std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = n.integers(name, s.*m, lo, hi); });
}

// A nested mapping read by `parse` (a context module: its keys are its own table's).
template <class S, class T>
Key<S> mapping(const std::string& name, T S::*m, T (*parse)(ConfigNode), std::string range, std::string meaning) {
  return row<S>(name, "mapping", std::move(range), std::move(meaning),
                [=](ConfigNode& n, S& s) { s.*m = parse(n.child(name)); });
}

}  // namespace keys

}  // namespace hamgan
