// Which steps a TensorBoard events folder already holds for the tags of one prefix: what a scorer
// reads before it adds a run's earlier scores to the run's view, so that none is written twice.
// A decoder of the fields io/tfevents_writer.h writes that this needs (Event.step, Event.summary
// -> Summary.value -> Value.tag); every other field is skipped by its wire type, so files that
// TensorBoard's own writers made read too.
#pragma once
#include <cstdint>
#include <set>
#include <string>

namespace hamgan::io {

// The steps of the events in `dir`'s files events.out.tfevents.* (not its subfolders) that hold a
// summary value whose tag starts with `prefix`; none when `dir` does not exist. A file's torn
// last record (its writer killed inside a write) ends that file, as it ends TensorBoard's reading;
// a record whose checksum does not match, or that does not parse, is an error naming the file and
// the record's offset.
std::set<int64_t> tagged_steps(const std::string& dir, const std::string& prefix);

}  // namespace hamgan::io
