// A training run's statistics log, DIR/metrics.jsonl: one flat JSON object of numbers per line
// (the trainer's progress reports), read by the plot of metrics.png and by `hamgan compare`.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace hamgan {

// The records, each as key -> value. A resumed run continues from its checkpoint, so when a
// record's iteration is not past the one before, the interrupted run's later records are
// dropped. Malformed lines: hamgan::Error naming the line. No file: no records.
std::vector<std::map<std::string, double>> read_train_stats_log(const std::string& path);
// Before a run resumes from its checkpoint at `iteration` (0: a new run), the file keeps only the
// records up to it (rewritten atomically, only when something goes): what a killed run logged
// after its checkpoint, and a line it left half written, would read as a second history.
void cut_train_stats_log(const std::string& path, int64_t iteration);

}  // namespace hamgan
