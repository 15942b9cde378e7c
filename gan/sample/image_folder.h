// Writing samples as an ImageFolder tree DIR/<class>/<k>.png (class directories zero-padded
// to 3 digits, file names to 6, so they sort), readable by any tool that reads ImageFolder.
#pragma once
#include <string>
#include <vector>

#include "io/output_path.h"

namespace hamgan::sample {

// Refuses (hamgan::Error) when `dir` exists and is not empty, unless `overwrite`: outputs
// are never lost by accident. With `overwrite`, an earlier sample's <class>/<k>.png files go
// (other files stay), so the folder then holds this run's images only. Creates `dir`.
void prepare_output_dir(const std::string& dir, bool overwrite);
std::string sample_path(const std::string& dir, int64_t cls, int64_t k);
// classes.txt: a line per class, "<its directory> <name>" ("000 n01440764"): a training run
// writes its data's class names there, and `hamgan sample` copies it beside the numbered class
// directories, so an ImageNet-style run's samples keep their synsets.
std::string classes_text(const std::vector<std::string>& names);
// classes.txt as an output kind (io/output_path.h): a text file whose first line is
// "<digits> <name>", as classes_text writes it.
const io::OutputKind& classes_output();
// The run's classes.txt for a checkpoint RUN/checkpoints/ckpt_*.pt, or "" when it has none.
std::string run_classes_file(const std::string& checkpoint);
// The class names of the run's classes.txt for a checkpoint RUN/checkpoints/ckpt_*.pt, or none
// when it has no such file or the file is not this run's list: not n_classes lines "<dir> <name>"
// of UTF-8 without control characters (read up to a bound, whatever the file's size).
std::vector<std::string> run_class_names(const std::string& checkpoint, int64_t n_classes);

}  // namespace hamgan::sample
