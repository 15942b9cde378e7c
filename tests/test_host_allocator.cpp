// core/host_allocator: after keep_freed_memory_for_reuse(), a 16 MiB block comes from the heap
// (glibc's default would mmap it: mallinfo2's hblkhd, the bytes in mmapped blocks, would grow
// by 16 MiB) and stays in the process when freed; HAMGAN_MALLOC=default leaves glibc alone.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "core/host_allocator.h"

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
