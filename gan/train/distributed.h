// Multi-process data parallel over c10d: a TCPStore rendezvous and a process group: NCCL
// for CUDA when LibTorch has it (USE_C10D_NCCL) and train.dist_backend allows, else Gloo (CPU,
// and CUDA tensors through Gloo's host staging, which lets ranks share one GPU). Ranks on one
// machine's CPU sum through shared memory instead (gan/train/shm_all_reduce.h) where
// train.dist_backend allows. Rank 0 broadcasts parameters and buffers; gradients are averaged
// with all-reduce over flattened buckets.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "gan/checkpoint/checkpoint_hook.h"
#include "gan/config/config.h"
#include "gan/train/shm_all_reduce.h"
#include "layers/all_reduce_sum.h"

namespace hamgan {

namespace compat {
class ProcessGroup;
}

// RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them; world 1 when unset.
struct DistEnv {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int local_rank = 0;  // LOCAL_RANK (the GPU of this worker), else rank
  int local_world_size = 1;  // LOCAL_WORLD_SIZE (ranks on this machine), else world_size
  // TORCHELASTIC_USE_AGENT_STORE=True: torchrun's elastic agent already serves the TCPStore at
  // MASTER_ADDR:MASTER_PORT, so every rank joins it as a client (PyTorch's
  // torch/distributed/rendezvous.py, _create_c10d_store); otherwise rank 0 serves it.
  bool agent_store = false;
  // Under torchrun: "hamgan/<TORCHELASTIC_RUN_ID>/<TORCHELASTIC_RESTART_COUNT>/". The agent's
  // store outlives a worker group (its rendezvous keys are in it too, and a restarted group
  // finds the keys of the one before), so each attempt keeps its process group's keys apart.
  std::string store_prefix;
  // HAMGAN_RENDEZVOUS_TIMEOUT (seconds): how long a rank waits for the others, at the
  // rendezvous and in each collective, before it gives up with an error naming them.
  int timeout_s = 300;
  bool enabled() const { return world_size > 1; }
};
DistEnv dist_env_from_environment();
// This rank's device: `device` (train.device: cpu, cuda or auto) resolved once. On CUDA each
// local rank (local_rank >= 0) gets its own GPU, cuda:<local_rank>, and more local ranks than
// GPUs is an error (NCCL refuses two ranks on one GPU: "Duplicate GPU detected"), unless
// `backend` (train.dist_backend: auto, nccl or gloo) is gloo: Gloo stages CUDA tensors through
// the host, so local rank r shares cuda:<r % GPUs>. nccl on the CPU, or where this LibTorch
// has no NCCL, is an error. local_rank -1: one process (the backend plays no part).
// `gpus` -1: this machine's count (tests inject one).
torch::Device train_device(const std::string& device, int local_rank = -1, int64_t gpus = -1,
                           DistBackend backend = DistBackend::Auto);
// A TCP port on 127.0.0.1 that is free now (for a local rendezvous); hamgan::Error if none.
int free_loopback_port();

class DataParallel : public BatchReducer {
 public:
  // `device`: where the tensors live (train_device's); `backend` (train.dist_backend): on CUDA,
  // auto selects NCCL where this LibTorch has it, nccl always, gloo never; the CPU uses Gloo.
  explicit DataParallel(const DistEnv& env, torch::Device device = torch::kCPU,
                        DistBackend backend = DistBackend::Auto);
  ~DataParallel() override;
  int rank() const { return env_.rank; }
  int world_size() const { return env_.world_size; }
  int local_rank() const { return env_.local_rank; }

  // Copies rank 0's parameters and buffers into every rank.
  void broadcast(torch::nn::Module& m);
  // Averages the gradients of m's parameters over ranks, `bucket_bytes` at a time.
  void average_gradients(torch::nn::Module& m, int64_t bucket_bytes = 25 << 20);
  // Sums `t` (dense, contiguous) in place over ranks; also the synchronised-BN reducer.
  void all_reduce_sum(torch::Tensor& t) override;
  void barrier();
  // Words from rank 0 through the rendezvous store, and a meeting of all ranks, both waited for
  // as long as it takes rather than HAMGAN_RENDEZVOUS_TIMEOUT: rank 0 may work alone for minutes
  // (scoring a checkpoint) while the others stand by. A rank 0 that is gone (its store with it)
  // ends the wait with LibTorch's error, as a collective's would.
  void tell(const std::string& word);  // rank 0: the next word
  std::string hear();                  // the other ranks: rank 0's next word, in order
  void meet();                         // every rank: returns once all have come
  // Whether the CPU all-reduces go through shared memory (else through the process group).
  bool shared_memory() const { return shm_ != nullptr; }

 private:
  // The all-reduce through shared memory, where every rank has it; else null, and an error
  // naming why where `required` (train.dist_backend=shm). A collective.
  std::unique_ptr<ShmAllReduce> open_shared_memory(bool required);
  void reduce(torch::Tensor& t);

  DistEnv env_;
  std::unique_ptr<compat::ProcessGroup> pg_;
  std::unique_ptr<ShmAllReduce> shm_;
  int64_t words_ = 0, meetings_ = 0;  // the same counts on every rank: keys are never reused
};

// The ranks as a score sees them (gan/checkpoint/checkpoint_hook.h): `dp`'s, or one rank alone
// when null. `dp` must outlive the result.
EvalRanks eval_ranks(DataParallel* dp);

}  // namespace hamgan
