// core/host_allocator: after keep_freed_memory_for_reuse(), a 16 MiB block comes from the heap
// (glibc's default would mmap it: mallinfo2's hblkhd, the bytes in mmapped blocks, would grow
// by 16 MiB) and stays in the process when freed; HAMGAN_MALLOC=default leaves glibc alone, and
// any other value is refused, naming the variable and the values it takes.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include <sys/wait.h>

#include <string>

#include "core/error.h"
#include "core/host_allocator.h"
#include "support/process.h"

namespace test_host_allocator {

TEST(HostAllocator, LargeBlocksComeFromTheHeapAndAreKept) {
  const size_t n = 16u << 20;
  void* probe = std::malloc(n);  // before: glibc's default threshold (128 KiB) mmaps this
  ASSERT_NE(probe, nullptr);
  const size_t mmapped_default = mallinfo2().hblkhd;
  std::free(probe);
  EXPECT_GE(mmapped_default, n) << "glibc's default should mmap a 16 MiB block";

  unsetenv("HAMGAN_MALLOC");
  ASSERT_TRUE(hamgan::keep_freed_memory_for_reuse());
  const size_t before = mallinfo2().hblkhd;
  void* p = std::malloc(n);
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, n);
  EXPECT_EQ(mallinfo2().hblkhd, before) << "the block should come from the heap";
  const size_t arena_in_use = mallinfo2().uordblks;
  std::free(p);
  EXPECT_LT(mallinfo2().uordblks, arena_in_use);
  EXPECT_GE(mallinfo2().arena, n) << "freed, the heap keeps it (no trim below 1 GiB)";

  setenv("HAMGAN_MALLOC", "default", 1);
  EXPECT_FALSE(hamgan::keep_freed_memory_for_reuse());
  unsetenv("HAMGAN_MALLOC");
}

TEST(HostAllocator, AnUnknownHamganMallocIsRefused) {
  setenv("HAMGAN_MALLOC", "garbage", 1);
  std::string msg;
  try {
    hamgan::keep_freed_memory_for_reuse();
  } catch (const hamgan::Error& e) {
    msg = e.what();
  }
  unsetenv("HAMGAN_MALLOC");
  EXPECT_NE(msg.find("HAMGAN_MALLOC='garbage'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected 'default'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("or unset"), std::string::npos) << msg;

  // The binary refuses it before any command runs.
  const std::string bin = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/hamgan";
  const std::string log = std::string(std::getenv("HAMGAN_BINARY_DIR")) + "/host_allocator_garbage.log";
  const pid_t pid = hamgan::test::spawn({bin, "--version"}, {"HAMGAN_MALLOC=garbage"}, log);
  const int status = hamgan::test::wait_for(pid, 60);
  const std::string out = hamgan::test::read_text(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("hamgan: error: environment variable HAMGAN_MALLOC='garbage': expected 'default'"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("hamgan, "), std::string::npos) << "no --version output after the error: " << out;
}

}  // namespace test_host_allocator
