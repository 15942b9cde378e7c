// `hamgan info --json`: the facts about this build and machine that scripts decide by, as one
// JSON object with stable keys (docs/user-guide.md "Machine facts"), so that no script parses
// the prose of `hamgan --version`.
#pragma once
#include <string>

namespace hamgan::cli {

// One line: {"hamgan_version": ..., ...}. Throws hamgan::Error for a bad HAMGAN_CPU_ISA.
std::string machine_facts_json();

}  // namespace hamgan::cli
