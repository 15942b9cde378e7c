// c10d process groups behind one class (gan/train/distributed.h builds on it): Gloo, and NCCL
// for CUDA where LibTorch was built with it. The one place that knows which of them this build
// of LibTorch has (HAMGAN_NO_GLOO from CMake, USE_C10D_NCCL from LibTorch's targets).
#pragma once
#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

namespace hamgan::compat {

// A rendezvous that failed, its message without LibTorch's C++ backtrace.
class RendezvousError : public std::runtime_error {
 public:
  RendezvousError(const std::string& what, bool silent_store)
      : std::runtime_error(what), silent_store(silent_store) {}
  // Something accepted the connection at addr:port but did not answer as a TCPStore within the
  // timeout (another program's port, or a launcher whose store speaks another protocol).
  bool silent_store;
};

// Whether this LibTorch was built with NCCL (USE_C10D_NCCL and its headers).
bool has_nccl();

class ProcessGroup {
 public:
  // Rendezvous through a TCPStore at addr:port, then NCCL when `nccl`, else Gloo (which also
  // reduces CUDA tensors, staged through the host, so ranks may share a GPU). A build without
  // Gloo, or `nccl` where has_nccl() is false: hamgan::Error; a failed rendezvous: RendezvousError.
  // `timeout` bounds each wait on a socket: the store's answer, the other ranks at the rendezvous
  // (one timeout in all, not one for the store and one for the group), and every collective.
  // `host_store`: this rank serves the store
  // (else it joins one served by another rank or by a launcher such as torchrun's agent);
  // `key_prefix`: the process group's keys live under it (a store shared with a launcher).
  ProcessGroup(const std::string& addr, int port, int rank, int world_size, bool nccl,
               std::chrono::milliseconds timeout, bool host_store, const std::string& key_prefix);
  ~ProcessGroup();
  bool nccl() const;  // NCCL reduces device memory only
  void broadcast(torch::Tensor& t);   // rank 0's values into every rank
  void all_reduce(torch::Tensor& t);  // sum over ranks, in place
  void barrier();
  // The rendezvous store's keys, under the group's prefix: a small value for every rank to read,
  // and whether a key is there yet (answered at once, never waited for).
  void store_set(const std::string& key, const std::string& value);
  bool store_has(const std::string& key);
  std::string store_get(const std::string& key);  // a key that store_has found

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamgan::compat
