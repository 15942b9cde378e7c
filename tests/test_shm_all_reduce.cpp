// The all-reduce through shared memory (gan/train/shm_all_reduce.h) between this process, rank 0,
// and forked ranks: sums of several dtypes over many chunks equal the same additions done in rank
// order in one process, bit for bit; a rank that exits (a zombie, not yet reaped) or never comes
// fails the collective with an error naming it; the segment leaves nothing in /dev/shm; a segment
// of another shape is refused by name.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <functional>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "gan/train/shm_all_reduce.h"
#include "support/process.h"

namespace test_shm_all_reduce {

using namespace hamgan;

namespace {

std::string unique_name(const std::string& what) {
  return "/hamgan-test-" + what + "-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}());
}

bool in_dev_shm(const std::string& name) { return std::filesystem::exists("/dev/shm" + name); }

// Rank r's inputs: a deterministic function of (seed, r), so every process makes the same ones.
std::vector<torch::Tensor> inputs(int rank) {
  torch::manual_seed(100 + rank);
  return {torch::randn({10007}),                                  // 10 chunks of 4 KiB and a rest
          torch::randn({3, 5, 7}, torch::kDouble),                // one chunk, 3-d
          torch::randint(-1000, 1000, {2500}, torch::kLong),      // integers: 5 chunks
          torch::randn({4000}).to(torch::kBFloat16),              // bf16 grads under autocast
          torch::tensor({double(rank), 1.0, 0.25 * rank}),        // the stop flags' shape
          torch::empty({0})};                                     // nothing to move
}

// What every rank must hold: the inputs added in rank order, as the collective adds them.
std::vector<torch::Tensor> expected(int world) {
  std::vector<torch::Tensor> sum = inputs(0);
  for (int r = 1; r < world; ++r) {
    const auto x = inputs(r);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + x[i];
  }
  return sum;
}

constexpr size_t kSlot = 4096;  // small slots: every tensor above but two spans several chunks

// Forks ranks 1..world-1 running `child(rank)` (its return value is the exit status) and returns
// their pids.
std::vector<pid_t> fork_ranks(int world, const std::function<int(int)>& child) {
  std::vector<pid_t> pids;
  for (int r = 1; r < world; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      int status = 3;
      try {
        status = child(r);
      } catch (const std::exception& e) {
        fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      _exit(status);
    }
    pids.push_back(pid);
  }
  return pids;
}

int sums_match(ShmAllReduce& shm, int rank, int world) {
  auto xs = inputs(rank);
  const auto want = expected(world);
  for (int round = 0; round < 3; ++round) {  // the two sets of slots alternate: reuse both
    auto ys = inputs(rank);
    for (auto& y : ys) shm.all_reduce_sum(y);
    for (size_t i = 0; i < ys.size(); ++i)
      if (!torch::equal(ys[i], want[i])) return 10 + static_cast<int>(i);
  }
  shm.barrier();
  return 0;
}

void sum_over(int world) {
  at::set_num_threads(1);
  const std::string name = unique_name("sum" + std::to_string(world));
  ShmAllReduce shm(name, 0, world, true, std::chrono::seconds(60), kSlot);
  EXPECT_TRUE(in_dev_shm(name));
  EXPECT_FALSE(shm.peers_visible()) << "no other rank has attached yet";
  std::deque<test::ChildGuard> guards;  // not movable: a deque grows without moving them
  for (pid_t pid : fork_ranks(world, [&](int r) {
         ShmAllReduce mine(name, r, world, false, std::chrono::seconds(60), kSlot);
         mine.barrier();  // attached
         mine.barrier();  // rank 0 has checked
         return sums_match(mine, r, world);
       }))
    guards.emplace_back(pid);
  shm.barrier();
  EXPECT_TRUE(shm.peers_visible());
  shm.unlink();
  EXPECT_FALSE(in_dev_shm(name)) << "the name outlived every rank's attach";
  shm.barrier();
  EXPECT_EQ(sums_match(shm, 0, world), 0);
  for (auto& g : guards) {
    const int status = test::wait_for(g.pid(), 60);
    g.release();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a forked rank's sums differ: status " << status;
  }
}

// Rank 0's all-reduce while forked rank 1 attaches, passes one barrier, then does `then` instead
// of coming: rank 1's pid, the error rank 0 ends with ("" if none) and how long it waited.
struct Abandoned {
  pid_t rank1;
  std::string error;
  double waited_s;
};
Abandoned all_reduce_without_rank1(const std::string& name, int timeout_s, const std::function<void()>& then) {
  const auto timeout = std::chrono::seconds(timeout_s);
  ShmAllReduce shm(name, 0, 2, true, timeout, kSlot);
  const pid_t rank1 = fork_ranks(2, [&](int r) {
    ShmAllReduce mine(name, r, 2, false, timeout, kSlot);
    mine.barrier();
    then();
    return 0;
  })[0];
  test::ChildGuard guard(rank1);  // killed and reaped on return
  shm.barrier();
  torch::Tensor t = torch::ones({8});
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    shm.all_reduce_sum(t);
  } catch (const ShmPeerError& e) {
    error = e.what();
  }
  return {rank1, error, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

}  // namespace

TEST(ShmAllReduce, TwoRanksSumEveryDtypeOverManyChunksBitForBit) { sum_over(2); }

// More ranks than the machine's 2 cores: the waiting ranks must yield and sleep, not spin forever.
TEST(ShmAllReduce, ThreeRanksSumInRankOrder) { sum_over(3); }

// Gone before the all-reduce and not reaped by its parent: a zombie, which is no rank.
TEST(ShmAllReduce, ARankThatExitsIsNamed) {
  const std::string name = unique_name("exit");
  const Abandoned a = all_reduce_without_rank1(name, 60, [] {});
  EXPECT_EQ(a.error, "rank 1 (pid " + std::to_string(a.rank1) + ") exited during an all-reduce through shared memory " +
                         name);
  EXPECT_LT(a.waited_s, 10.0) << "found long after the exit";
}

TEST(ShmAllReduce, ARankThatNeverComesTimesOut) {
  const std::string name = unique_name("late");
  const Abandoned a = all_reduce_without_rank1(name, 1, [] { sleep(60); });  // alive, never at the all-reduce
  EXPECT_EQ(a.error, "rank 1 (pid " + std::to_string(a.rank1) + ") did not reach the all-reduce through shared memory " +
                         name + " within 1 s (HAMGAN_RENDEZVOUS_TIMEOUT)");
  EXPECT_GE(a.waited_s, 1.0);
  EXPECT_LT(a.waited_s, 5.0);
}

TEST(ShmAllReduce, ASegmentOfAnotherShapeOrNoneIsRefusedByName) {
  const std::string name = unique_name("shape");
  {
    ShmAllReduce shm(name, 0, 2, true, std::chrono::seconds(1), kSlot);
    try {
      ShmAllReduce other(name, 1, 3, false, std::chrono::seconds(1), kSlot);
      ADD_FAILURE() << "attached as a world of 3 to a segment of 2";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("shared memory " + name + ": "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("another world size or slot size?"), std::string::npos) << e.what();
    }
    try {
      ShmAllReduce dup(name, 0, 2, true, std::chrono::seconds(1), kSlot);
      ADD_FAILURE() << "created a segment whose name exists";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot create it: File exists"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(in_dev_shm(name)) << "the creator's destructor leaves its name behind";
  try {
    ShmAllReduce gone(name, 1, 2, false, std::chrono::seconds(1), kSlot);
    ADD_FAILURE() << "attached to a segment that does not exist";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared memory " + name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot open it: No such file or directory"), std::string::npos) << e.what();
  }
  torch::Tensor strided = torch::ones({4, 4}).t();
  ShmAllReduce alone(unique_name("alone"), 0, 1, true, std::chrono::seconds(1), kSlot);
  EXPECT_THROW(alone.all_reduce_sum(strided), Error);
  torch::Tensor x = torch::arange(10.0);
  alone.all_reduce_sum(x);  // a world of one: the identity
  EXPECT_TRUE(torch::equal(x, torch::arange(10.0)));
}

// A rank 0 killed after creating its segment and before the others attached (when its name is
// removed) leaves it in /dev/shm; the next run's rank 0 removes every hamgan segment whose
// creator is gone, and none of a live process.
TEST(ShmAllReduce, OrphanedSegmentsOfDeadCreatorsAreRemoved) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  int st = 0;
  ASSERT_EQ(waitpid(gone, &st, 0), gone);
  const std::string orphan = "/hamgan-" + std::to_string(gone) + "-abc123";
  const std::string live = "/hamgan-" + std::to_string(getpid()) + "-abc124";
  for (const std::string& n : {orphan, live}) {
    const int fd = shm_open(n.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << n;
    close(fd);
  }
  EXPECT_GE(ShmAllReduce::remove_orphans(), 1);
  EXPECT_FALSE(std::filesystem::exists("/dev/shm" + orphan));
  EXPECT_TRUE(std::filesystem::exists("/dev/shm" + live));
  shm_unlink(live.c_str());
}

}  // namespace test_shm_all_reduce
