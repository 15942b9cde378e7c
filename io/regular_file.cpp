#include "io/regular_file.h"

#include <sys/stat.h>

#include "core/error.h"

namespace hamgan::io {

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return;
  const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode) ? "a character device"
                     : S_ISBLK(st.st_mode) ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  fail(path, ": is ", kind, "; expected ", what, ", a regular file (a pipe would be waited on for a writer, "
       "perhaps forever)");
}

}  // namespace hamgan::io
