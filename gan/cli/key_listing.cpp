#include "gan/cli/key_listing.h"

#include <sstream>

#include "gan/config/config.h"
#include "io/safetensors_writer.h"
#include "layers/context/context.h"
#include "metrics/metric.h"

namespace hamgan::cli {

void write_config_json(std::ostream& o, const YAML::Node& n) {
  if (n.IsMap()) {
    o << "{";
    bool first = true;
    for (const auto& kv : n) {
      o << (first ? "" : ", ") << io::json_string(kv.first.Scalar()) << ": ";
      write_config_json(o, kv.second);
      first = false;
    }
    o << "}";
  } else if (n.IsSequence()) {
    o << "[";
    for (size_t i = 0; i < n.size(); ++i) {
      o << (i ? ", " : "");
      write_config_json(o, n[i]);
    }
    o << "]";
  } else if (n.IsNull() || !n.IsDefined()) {
    o << "null";
  } else {
    o << io::json_string(n.Scalar());
  }
}

namespace {

// A default as JSON of its type: numbers and booleans as such (yaml-cpp writes both in JSON's
// spelling), lists of integers as arrays, words and text as strings.
void write_value(std::ostream& o, const KeyInfo& k) {
  const bool plain = k.type == "integer" || k.type == "number" || k.type == "boolean";
  if (plain && k.value.IsScalar()) {
    o << k.value.Scalar();
  } else if (k.type == "integers" && k.value.IsSequence()) {
    o << "[";
    for (size_t i = 0; i < k.value.size(); ++i) o << (i ? ", " : "") << k.value[i].Scalar();
    o << "]";
  } else {
    write_config_json(o, k.value);
  }
}

void write_keys(std::ostream& o, const std::vector<KeyInfo>& keys) {
  o << "[";
  for (size_t i = 0; i < keys.size(); ++i) {
    const KeyInfo& k = keys[i];
    o << (i ? ",\n" : "\n") << "      {\"key\": " << io::json_string(k.path) << ", \"type\": " << io::json_string(k.type)
      << ", \"default\": ";
    write_value(o, k);
    o << ", \"range\": " << io::json_string(k.range) << ", \"meaning\": " << io::json_string(k.meaning)
      << ", \"resume\": " << io::json_string(on_resume_word(k.resume)) << "}";
  }
  o << "]";
}

// The sections' own keys (a context block's are listed per type).
std::vector<std::pair<std::string, std::vector<KeyInfo>>> sections() {
  std::vector<std::pair<std::string, std::vector<KeyInfo>>> out;
  for (const KeyInfo& k : config_keys()) {
    const auto dot = k.path.find('.');
    if (k.path.find('.', dot + 1) != std::string::npos) continue;
    if (out.empty() || out.back().first != k.path.substr(0, dot)) out.push_back({k.path.substr(0, dot), {}});
    out.back().second.push_back(k);
  }
  return out;
}

}  // namespace

std::string key_listing_json() {
  std::ostringstream o;
  o << "{\"sections\": [";
  bool first = true;
  for (const auto& [name, keys] : sections()) {
    o << (first ? "\n" : ",\n") << "  {\"name\": " << io::json_string(name) << ", \"keys\": ";
    write_keys(o, keys);
    o << "}";
    first = false;
  }
  o << "],\n\"context_types\": [";
  first = true;
  for (const auto& type : context_names()) {
    o << (first ? "\n" : ",\n") << "  {\"name\": " << io::json_string(type) << ", \"keys\": ";
    write_keys(o, context_keys(type));
    o << "}";
    first = false;
  }
  o << "],\n\"metrics\": [";
  first = true;
  for (const auto& m : metrics::metric_registry()) {
    o << (first ? "\n" : ",\n") << "  {\"name\": " << io::json_string(m.name) << ", \"better\": \""
      << (m.better == metrics::Better::Lower ? "lower" : "higher") << "\", \"per_checkpoint\": "
      << (m.per_checkpoint ? "true" : "false") << ", \"help\": " << io::json_string(m.help) << "}";
    first = false;
  }
  o << "]}\n";
  return o.str();
}

std::string key_listing_text() {
  std::ostringstream o;
  const auto line = [&](const KeyInfo& k) {
    o << k.path << " (" << k.type << ") = " << (k.value.IsScalar() ? k.value.Scalar() : to_yaml(k.value))
      << "; " << k.range << "; resume: " << on_resume_word(k.resume) << "\n    " << k.meaning << "\n";
  };
  o << "# KEY (TYPE) = DEFAULT; RANGE; RESUME (change: may change, model: builds G or D, keep: the "
       "optimizers' state depends on it)\n";
  for (const auto& [name, keys] : sections())
    for (const KeyInfo& k : keys)
      if (k.type != "mapping") line(k);
  for (const auto& type : context_names()) {
    o << "\n# context module " << type << " (generator.context, discriminator.context)\n";
    for (const KeyInfo& k : context_keys(type)) line(k);
  }
  o << "\n# metrics:";
  for (const auto& m : metrics::metric_registry()) o << " " << m.name;
  o << "\n";
  return o.str();
}

}  // namespace hamgan::cli
