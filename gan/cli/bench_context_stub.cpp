// TEMPORARY (branch `train`): `bench context` is implemented in gan/cli/bench_context.cpp
// by another branch. DELETE THIS FILE AT MERGE.
#include "core/error.h"
#include "gan/cli/commands.h"

namespace hamgan::cli {

int bench_context(int, char**) { fail("bench context: not merged yet"); }

}  // namespace hamgan::cli
