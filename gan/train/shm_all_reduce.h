// All-reduce through shared memory for data-parallel ranks on one machine's CPU. Gloo sends a
// CPU all-reduce over loopback TCP: on 2 cores its gradient averages took 3 ms each for 1 MB,
// about 9% of the quickstart's step. Here each rank copies its chunk into its own slot of a
// POSIX shared-memory segment, waits at a barrier, and sums the slots in rank order: every rank
// does the same additions in the same order, so all hold the same bits (as Gloo's for 2 ranks,
// whose a + b is b + a).
//
// Two sets of slots alternate between calls, so one barrier per chunk suffices: a rank writes a
// set again only after the next barrier, which no rank reaches before it has read that set.
// A waiting rank spins briefly, then yields, then sleeps; it checks that the ranks it waits for
// are alive (a dead or zombie process fails the collective with an error naming the rank, as
// Gloo's closed socket would) and gives up after the timeout.
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace hamgan {

// A rank that exited, or did not come within the timeout, while the others waited for it: what a
// Gloo collective's closed socket or timeout is, not a user's error (hamgan::Error), so the
// trainer names the lost rank and the checkpoint kept.
class ShmPeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShmAllReduce {
 public:
  // Rank 0 creates the segment `name` ("/hamgan-..."; `create`), the other ranks attach to it.
  // `slot_bytes`: the largest chunk one barrier moves. Throws hamgan::Error naming the segment
  // and the system's reason (no /dev/shm, too little space) when it cannot.
  ShmAllReduce(const std::string& name, int rank, int world_size, bool create, std::chrono::seconds timeout,
               size_t slot_bytes = 4 << 20);
  ~ShmAllReduce();
  ShmAllReduce(const ShmAllReduce&) = delete;
  ShmAllReduce& operator=(const ShmAllReduce&) = delete;

  // Removes /dev/shm/hamgan-<pid>-<nonce> segments whose creating process is gone: what a rank 0
  // killed between creating its segment and the others attaching (when the name is removed)
  // left behind. Returns how many went. Segments of live processes are left alone.
  static int remove_orphans();

  // Whether every rank has attached and is a live process that this one can see (the same
  // machine and process namespace; its pid and start time match): only then may the ranks rely
  // on it. Call once all ranks have attached.
  bool peers_visible() const;
  // Removes the segment's name (the mapping stays): once every rank has attached, nothing is
  // left in /dev/shm whatever happens to the ranks later. Creator only; repeat calls do nothing.
  void unlink();

  // Replaces `t` (a contiguous CPU tensor, any dtype) by its sum over the ranks; every rank
  // calls it in the same order with tensors of the same size and dtype. Throws ShmPeerError.
  void all_reduce_sum(torch::Tensor& t);
  void barrier();

 private:
  struct Header;
  void* slot(int set, int rank) const;
  void wait_for(int rank, uint64_t epoch) const;

  std::string name_;
  int rank_, world_;
  bool creator_, linked_;
  std::chrono::seconds timeout_;
  size_t slot_bytes_, data_offset_ = 0, bytes_ = 0;  // data_offset_: the header's page(s), then the slots
  void* base_ = nullptr;
  Header* header_ = nullptr;
  uint64_t epoch_ = 0;  // barriers passed
};

}  // namespace hamgan
