// TensorBoard event files (TFEvents): TFRecord framing around serialized `tensorboard.Event`
// protocol buffers, as tensorboard/compat/proto/event.proto and summary.proto define them.
//
// A minimal encoder of exactly the fields written here instead of code generated from those
// .proto files: generating it needs protoc at build time and libprotobuf at run time, which the
// GPU machine's dependency bundle does not carry, for five messages of a few fields each.
// Field numbers (checked against the descriptors of TensorBoard's event_pb2/summary_pb2):
//   Event         wall_time=1 double, step=2 int64, file_version=3 string, summary=5,
//                 session_log=7 (6 is log_message)
//   Summary       value=1 repeated
//   Summary.Value tag=1 string, simple_value=2 float, image=4
//   Summary.Image height=1, width=2, colorspace=3 int32, encoded_image_string=4 bytes
//   SessionLog    status=1 enum (START=1), checkpoint_path=2, msg=3
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hamgan::io {

namespace tfevents {

// One TFRecord: uint64 length (little-endian), masked CRC-32C of those 8 bytes, the data, the
// masked CRC-32C of the data (tensorflow/core/lib/io/record_writer.cc).
std::string record(const std::string& data);

struct Image {
  int64_t height = 0, width = 0, channels = 0;  // channels: 1 gray, 3 RGB, 4 RGBA (colorspace)
  std::string png;                              // encoded_image_string
};

// Serialized Events (no framing).
std::string file_version_event(double wall_time);  // "brain.Event:2": restarts are SessionLog STARTs
std::string session_start_event(double wall_time, int64_t step);
std::string scalars_event(double wall_time, int64_t step, const std::vector<std::pair<std::string, double>>& values);
std::string image_event(double wall_time, int64_t step, const std::string& tag, const Image& image);

}  // namespace tfevents

// Appends events to a new file `dir`/events.out.tfevents.<seconds>.<host>.<microseconds>.<pid>
// (`dir` created when missing). TensorBoard reads the event files of a directory in name order,
// so a name never sorts before an existing one of the directory, whatever the clock did. Events
// are kept in memory until flush(), which hands them to the kernel in one write: a process
// killed at any point leaves whole records up to its last flush (a torn last record, if the kill
// lands inside that write, is one that TensorBoard's reader stops at).
class TfEventsWriter {
 public:
  explicit TfEventsWriter(const std::string& dir);  // writes and flushes the file_version event
  ~TfEventsWriter();                                 // flushes what it can, never throws
  TfEventsWriter(const TfEventsWriter&) = delete;
  TfEventsWriter& operator=(const TfEventsWriter&) = delete;

  const std::string& path() const { return path_; }
  // SessionLog START at `step`: TensorBoard drops the events of earlier files at steps >= `step`
  // (event_accumulator.py, _CheckForRestartAndMaybePurge), those a killed session wrote past the
  // checkpoint this one resumes from.
  void session_start(int64_t step);
  void scalars(int64_t step, const std::vector<std::pair<std::string, double>>& values);  // as float32
  void image(int64_t step, const std::string& tag, const tfevents::Image& image);
  void flush();  // errors name the file

 private:
  void add(const std::string& event);
  std::string path_;
  int fd_ = -1;
  std::string pending_;
};

}  // namespace hamgan::io
