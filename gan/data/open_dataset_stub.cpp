// TEMPORARY (branch `train`): the data pipeline (open_dataset, Loader) lives in branch
// `data`. This stub lets `hamgan train` link before the merge. DELETE THIS FILE AT MERGE.
#include "core/error.h"
#include "gan/data/dataset.h"

namespace hamgan {

std::shared_ptr<Dataset> open_dataset(const DataConfig& data, int64_t, int64_t) {
  fail("data.format '", data.format, "': the data pipeline is not merged yet (branch data); "
       "use --synthetic for now");
}

struct Loader::Impl {};
Loader::Loader(std::shared_ptr<Dataset>, LoaderOptions, LoaderState) {
  fail("Loader: the data pipeline is not merged yet (branch data)");
}
Loader::~Loader() = default;
Batch Loader::next() { fail("Loader: not merged yet"); }
LoaderState Loader::state() const { fail("Loader: not merged yet"); }
int64_t Loader::skipped() const { return 0; }

}  // namespace hamgan
