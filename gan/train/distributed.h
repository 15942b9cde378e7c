// Multi-process data parallel over c10d: a TCPStore rendezvous and a Gloo process group
// (CPU, and CUDA tensors through Gloo's host staging). Rank 0 broadcasts parameters and
// buffers; gradients are averaged with all-reduce over flattened buckets.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

namespace hamgan {

// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them; world 1 when unset.
struct DistEnv {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  bool enabled() const { return world_size > 1; }
};
DistEnv dist_env_from_environment();

class DataParallel {
 public:
  explicit DataParallel(const DistEnv& env);
  ~DataParallel();
  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }

  // Copies rank 0's parameters and buffers into every rank.
  void broadcast(torch::nn::Module& m);
  // Averages the gradients of m's parameters over ranks, `bucket_bytes` at a time.
  void average_gradients(torch::nn::Module& m, int64_t bucket_bytes = 25 << 20);
  // Sums `t` in place over ranks.
  void all_reduce_sum(torch::Tensor& t);
  void barrier();

 private:
  DistEnv env_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamgan
