#include "gan/train/shm_all_reduce.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <regex>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace hamgan {

namespace {

// One cache line per rank: a rank's stores never share a line with another's.
struct alignas(64) RankState {
  std::atomic<uint64_t> epoch;       // the barriers this rank has reached
  std::atomic<int64_t> pid;          // 0 until it has attached
  std::atomic<uint64_t> start_time;  // /proc/<pid>/stat field 22: a reused pid is another process
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<int64_t>::is_always_lock_free,
              "shared-memory atomics must be lock-free to work across processes");

constexpr uint64_t kMagic = 0x68616d67616e3031ULL;  // "hamgan01"

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The state letter and start time (clock ticks since boot) of a process from /proc/<pid>/stat;
// state '\0' when there is no such process here.
struct ProcState {
  char state = '\0';
  uint64_t start_time = 0;
};
ProcState proc_state(int64_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = s.rfind(')');  // the command name in parentheses may hold spaces
  if (close == std::string::npos) return {};
  std::istringstream rest(s.substr(close + 1));
  ProcState p;
  rest >> p.state;
  std::string field;
  for (int i = 4; i <= 21 && rest >> field; ++i) {}  // fields 4-21
  rest >> p.start_time;                              // field 22
  return rest ? p : ProcState{};
}

bool alive(const ProcState& p) { return p.state != '\0' && p.state != 'Z' && p.state != 'X'; }

}  // namespace

struct ShmAllReduce::Header {
  uint64_t magic, world, slot_bytes;
  RankState* ranks() { return reinterpret_cast<RankState*>(reinterpret_cast<char*>(this) + 64); }
};

ShmAllReduce::ShmAllReduce(const std::string& name, int rank, int world_size, bool create,
                           std::chrono::seconds timeout, size_t slot_bytes)
    : name_(name), rank_(rank), world_(world_size), creator_(create), linked_(create), timeout_(timeout),
      slot_bytes_(round_up(slot_bytes, 64)) {
  if (world_size < 1 || rank < 0 || rank >= world_size) fail("ShmAllReduce: rank ", rank, " of ", world_size);
  data_offset_ = round_up(64 + sizeof(RankState) * static_cast<size_t>(world_), 4096);
  bytes_ = data_offset_ + 2 * static_cast<size_t>(world_) * slot_bytes_;
  auto error = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    return "shared memory " + name_ + " (" + std::to_string(bytes_) + " bytes, for the data-parallel all-reduce): " +
           what + ": " + reason;
  };
  const int fd = shm_open(name_.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) fail(error(create ? "cannot create it" : "cannot open it"));
  std::string problem;
  if (create) {
    // posix_fallocate reserves the pages now: a /dev/shm too small fails here, not with SIGBUS
    // at the first write.
    if (ftruncate(fd, static_cast<off_t>(bytes_)) != 0) problem = error("cannot size it");
    else if (const int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes_)); e != 0) {
      errno = e;
      problem = error("cannot reserve it (is /dev/shm large enough?)");
    }
  } else {
    struct stat st {};
    if (fstat(fd, &st) != 0) problem = error("cannot stat it");
    else if (static_cast<size_t>(st.st_size) != bytes_)
      problem = "shared memory " + name_ + ": " + std::to_string(st.st_size) + " bytes, expected " +
                std::to_string(bytes_) + " (another world size or slot size?)";
  }
  if (problem.empty()) {
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      problem = error("cannot map it");
    }
  }
  close(fd);
  if (!problem.empty()) {
    if (create) shm_unlink(name_.c_str());
    fail(problem);
  }
  header_ = static_cast<Header*>(base_);
  if (create) {
    header_->world = static_cast<uint64_t>(world_);
    header_->slot_bytes = slot_bytes_;
    for (int r = 0; r < world_; ++r) new (&header_->ranks()[r]) RankState{{0}, {0}, {0}};
    std::atomic_thread_fence(std::memory_order_release);
    header_->magic = kMagic;
  } else if (header_->magic != kMagic || header_->world != static_cast<uint64_t>(world_) ||
             header_->slot_bytes != slot_bytes_) {
    munmap(base_, bytes_);
    fail("shared memory ", name_, " is not a hamgan all-reduce segment of ", world_, " ranks");
  }
  RankState& me = header_->ranks()[rank_];
  me.start_time.store(proc_state(getpid()).start_time, std::memory_order_relaxed);
  me.pid.store(getpid(), std::memory_order_release);
}

ShmAllReduce::~ShmAllReduce() {
  if (base_) munmap(base_, bytes_);
  unlink();
}

void ShmAllReduce::unlink() {
  if (creator_ && linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

bool ShmAllReduce::peers_visible() const {
  for (int r = 0; r < world_; ++r) {
    const RankState& s = header_->ranks()[r];
    const int64_t pid = s.pid.load(std::memory_order_acquire);
    if (pid <= 0) return false;
    const ProcState p = proc_state(pid);
    if (!alive(p) || p.start_time != s.start_time.load(std::memory_order_relaxed)) return false;
  }
  return true;
}

void* ShmAllReduce::slot(int set, int rank) const {
  return static_cast<char*>(base_) + data_offset_ + (static_cast<size_t>(set) * world_ + rank) * slot_bytes_;
}

void ShmAllReduce::wait_for(int rank, uint64_t epoch) const {
  const RankState& s = header_->ranks()[rank];
  auto arrived = [&] { return s.epoch.load(std::memory_order_acquire) >= epoch; };
  // The other rank usually comes within a millisecond: spin (its own core is otherwise idle), then
  // yield the core, then sleep, so that more ranks than cores still make progress.
  for (int i = 0; i < 4096; ++i) {
    if (arrived()) return;
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto next_check = t0 + std::chrono::milliseconds(50);
  while (!arrived()) {
    const auto now = clock::now();
    if (now - t0 < std::chrono::milliseconds(1)) sched_yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (now < next_check) continue;
    next_check = now + std::chrono::milliseconds(50);
    if (arrived()) return;
    const int64_t pid = s.pid.load(std::memory_order_relaxed);
    const ProcState p = proc_state(pid);
    const std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
    if (!alive(p) || p.start_time != s.start_time.load(std::memory_order_relaxed))
      throw ShmPeerError(who + " exited during an all-reduce through shared memory " + name_);
    if (now - t0 > timeout_)
      throw ShmPeerError(who + " did not reach the all-reduce through shared memory " + name_ + " within " +
                         std::to_string(timeout_.count()) + " s (HAMGAN_RENDEZVOUS_TIMEOUT)");
  }
}

void ShmAllReduce::barrier() {
  ++epoch_;
  header_->ranks()[rank_].epoch.store(epoch_, std::memory_order_release);
  for (int r = 0; r < world_; ++r)
    if (r != rank_) wait_for(r, epoch_);
}

void ShmAllReduce::all_reduce_sum(torch::Tensor& t) {
  if (!t.device().is_cpu() || !t.is_contiguous())
    fail("ShmAllReduce: expected a contiguous CPU tensor, got one on ", t.device(),
         t.is_contiguous() ? "" : ", not contiguous");
  torch::NoGradGuard no_grad;
  const int64_t n = t.numel();
  const int64_t per = static_cast<int64_t>(slot_bytes_ / t.element_size());
  const auto opts = torch::TensorOptions().dtype(t.dtype());
  torch::Tensor flat = t.view({-1});
  for (int64_t off = 0; off < n; off += per) {
    const int64_t m = std::min(per, n - off);
    const int set = static_cast<int>((epoch_ + 1) % 2);  // the set of the barrier below
    torch::Tensor part = flat.narrow(0, off, m);
    torch::from_blob(slot(set, rank_), {m}, opts).copy_(part);
    barrier();
    // Rank order on every rank: the same additions, the same bits everywhere.
    part.copy_(torch::from_blob(slot(set, 0), {m}, opts));
    for (int r = 1; r < world_; ++r) part.add_(torch::from_blob(slot(set, r), {m}, opts));
  }
}

int ShmAllReduce::remove_orphans() {
  static const std::regex name(R"(hamgan-(\d+)-[0-9a-f]+)");
  int removed = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    if (!std::regex_match(file, m, name)) continue;
    const long pid = std::atol(m[1].str().c_str());
    if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    if (shm_unlink(("/" + file).c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace hamgan
