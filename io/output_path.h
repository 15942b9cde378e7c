// The one rule for every file hamgan writes under a name the user chose (or a fixed name in a
// folder the user chose): an existing file is replaced only when it is an earlier output of
// the same kind, recognised by its content, never by its name:
//   - nothing at the path: written (its folder must exist; hamgan does not create folders
//     for a single file);
//   - a regular file of the same kind (a PNG for a PNG, an .npz of .npy arrays for an .npz, a
//     table with the same header for a table): replaced, atomically (io/atomic_file.h);
//   - anything else (a checkpoint, config.yaml, fid.csv, a folder, an empty file, a link to
//     nothing): hamgan::Error naming the option, the path, what was expected and what is
//     there, and nothing is written.
// Commands check every output path before any work (so a refusal costs nothing and leaves no
// partial result); the format writers (write_png, npz::write) check again when they write.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hamgan::io {

// A kind of output file, recognised by its first bytes (at most kOutputHeadBytes), and for a
// kind whose first bytes are not its own (a torch.save archive starts with a tensor's data)
// also by `recognises_file`, which reads what it needs of the file at `path`.
struct OutputKind {
  std::string what;  // for messages: "a PNG image", "an .npz of arrays"
  std::function<bool(std::string_view head)> recognises;
  std::function<bool(const std::string& path)> recognises_file = nullptr;
};
constexpr size_t kOutputHeadBytes = 4096;

// The PNG signature.
const OutputKind& png_output();
// A zip archive whose first member is a .npy array (numpy's savez, npz::write). A checkpoint
// is a zip archive too, but its first member is a pickle: not an .npz.
const OutputKind& npz_output();
// A text file whose first line (without its line end) is one of `first_lines`.
OutputKind text_output(std::string what, std::vector<std::string> first_lines);

// Applies the rule to `path`; `option` ("--grid", or "" when no option names it) starts the
// message. Also refuses a path that names no file ("", "dir/", ".", "..").
void check_output_path(const std::string& path, const OutputKind& kind, const std::string& option = "");

// What lies at `path`, in words, for messages ("a PNG image", "a directory", "a text file
// whose first line is '...'", "a zip archive whose first member is '...', as in a checkpoint").
std::string describe_existing(const std::string& path);

}  // namespace hamgan::io
