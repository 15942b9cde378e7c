// Every file hamgan writes goes through here: PNGs, grids, .npz statistics, checkpoints,
// config.yaml, fid.csv and metrics.jsonl. A whole file is written to a temporary name in the
// same directory, checked (each write, fsync, close), renamed into place and the directory
// fsync'ed, so a full disk or a crash never leaves a partial or zero-byte file under the
// final name; on failure the temporary is removed and hamgan::Error names the file.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace hamgan::io {

// Replaces `path` with `bytes`, all or nothing. Whether an existing `path` may be replaced at
// all is decided before, by io/output_path.h's rule (write_png and npz::write apply it).
void write_file_atomically(const std::string& path, std::string_view bytes);

// Appends `bytes` in one write (O_APPEND: concurrent appenders never interleave a line);
// checks the write, fsyncs when `sync`. A short write is truncated away again.
void append_to_file(const std::string& path, std::string_view bytes, bool sync = true);

// The temporary name write_file_atomically uses for `path` (<path>.tmp.<pid>).
std::string temporary_name(const std::string& path);
// True for a name temporary_name produces (a leftover of a killed process).
bool is_temporary_name(const std::string& filename);
// True for a temporary_name of `final_name` whose process is gone: a leftover of a killed
// writer, safe to remove (a live writer's temporary is not).
bool is_stale_temporary_of(const std::string& filename, const std::string& final_name);

// strerror(err), and for the errors that mean the file cannot grow the cause in words (the
// file-size limit, `ulimit -f`; a full disk; a used-up quota), for every writer's message.
// main() ignores SIGXFSZ, so a write past the file-size limit fails with EFBIG instead of
// killing hamgan with its temporaries left behind.
std::string write_error_text(int err);

// Test hook: the next writes fail with `error` (an errno value such as ENOSPC) once
// `after_bytes` more bytes have been written by this process; 0 clears it. Lets a test
// play a full disk without one.
void inject_write_failure(int error, uint64_t after_bytes = 0);

}  // namespace hamgan::io
