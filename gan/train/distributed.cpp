#include "gan/train/distributed.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "core/compat.h"
#include "core/compat_process_group.h"
#include "core/device.h"
#include "core/error.h"

namespace hamgan {

namespace {

int env_int(const char* name, int def, int lo, int hi) {
  const char* v = std::getenv(name);
  if (!v) return def;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || x < lo || x > hi)
    fail("environment variable ", name, "='", v, "': expected an integer in [", lo, ", ", hi, "]");
  return static_cast<int>(x);
}

// Prints `text` once, when `after` passes before it is destroyed.
class WaitNotice {
 public:
  WaitNotice(std::chrono::milliseconds after, std::string text)
      : thread_([this, after, text = std::move(text)] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!done_changed_.wait_for(lock, after, [this] { return done_; })) std::cerr << text << std::flush;
        }) {}
  ~WaitNotice() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_changed_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace

DistEnv dist_env_from_environment() {
  DistEnv e;
  e.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  // A rank beyond 0 needs a world to be in: without WORLD_SIZE the world is this process alone.
  const char* rank = std::getenv("RANK");
  if (rank && !std::getenv("WORLD_SIZE") && env_int("RANK", 0, 0, 1 << 16) > 0)
    fail("environment variable RANK='", rank, "' but WORLD_SIZE is not set: set WORLD_SIZE to the number of ranks "
         "(RANK in [0, WORLD_SIZE-1]), as torchrun does, or unset RANK for one process");
  e.rank = env_int("RANK", 0, 0, e.world_size - 1);
  if (const char* a = std::getenv("MASTER_ADDR")) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", 29500, 1, 65535);
  e.local_rank = env_int("LOCAL_RANK", e.rank, 0, 1 << 16);
  e.local_world_size = env_int("LOCAL_WORLD_SIZE", e.world_size, 1, e.world_size);
  if (const char* a = std::getenv("TORCHELASTIC_USE_AGENT_STORE")) e.agent_store = std::string(a) == "True";
  if (const char* id = std::getenv("TORCHELASTIC_RUN_ID")) {
    const int restart = env_int("TORCHELASTIC_RESTART_COUNT", 0, 0, 1 << 30);
    e.store_prefix = std::string("hamgan/") + id + "/" + std::to_string(restart) + "/";
  }
  e.timeout_s = env_int("HAMGAN_RENDEZVOUS_TIMEOUT", e.timeout_s, 1, 7 * 24 * 3600);
  return e;
}

namespace {

// train.dist_backend=nccl where NCCL cannot run, or shm on CUDA: an error naming the key, before
// any rendezvous.
void check_backend(DistBackend backend, const std::string& device, bool cuda) {
  if (backend == DistBackend::Shm && cuda)
    fail("train.dist_backend=shm sums CPU tensors through shared memory, and train.device ", device,
         " puts the ranks on CUDA; set train.dist_backend=auto (NCCL, else Gloo) or train.device=cpu");
  if (backend != DistBackend::Nccl) return;
  if (!cuda)
    fail("train.dist_backend=nccl reduces CUDA tensors only, and train.device ", device, " puts the ranks on the ",
         "CPU", device == "auto" ? " (no GPU is visible)" : "", "; set train.dist_backend=auto (Gloo on the CPU)");
  if (!compat::has_nccl())
    fail("train.dist_backend=nccl, but this LibTorch (", compat::libtorch_description(), ") was built without NCCL; ",
         "set train.dist_backend=gloo (or auto)");
}

}  // namespace

torch::Device train_device(const std::string& device, int local_rank, int64_t gpus, DistBackend backend) {
  const bool injected = gpus >= 0;
  const torch::Device d = !injected ? resolve_device(device)
                          : device == "cpu" || (device == "auto" && gpus == 0) ? torch::Device(torch::kCPU)
                                                                                : torch::Device(torch::kCUDA);
  if (local_rank < 0) return d;
  check_backend(backend, device, d.is_cuda());
  if (!d.is_cuda()) return d;
  if (!injected) gpus = static_cast<int64_t>(torch::cuda::device_count());
  // Gloo copies each collective's CUDA tensors to the host and back, so ranks may share a GPU.
  if (backend == DistBackend::Gloo && gpus > 0)
    return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % gpus));
  if (local_rank >= gpus)
    fail("local rank ", local_rank, ": train.device ", device, " gives each rank on a machine its own GPU, and this ",
         "one has ", gpus, "; start at most ", gpus, " ranks here (--nproc ", gpus, "), set train.dist_backend=gloo ",
         "to share the GPUs (local rank r on cuda:(r % ", gpus, ")), or set train.device=cpu");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank));
}

int free_loopback_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = s >= 0 && bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (s >= 0) close(s);
  if (!ok) fail("cannot find a free loopback port for the rendezvous");
  return ntohs(a.sin_port);
}

DataParallel::DataParallel(const DistEnv& env, torch::Device device, DistBackend backend) : env_(env) {
  check_backend(backend, device.is_cuda() ? "cuda" : "cpu", device.is_cuda());
  // A peer that dies closes its sockets; the next write to one raises SIGPIPE, whose default
  // action ends this rank before the collective's error reaches the trainer, which would name
  // the lost rank and the checkpoint kept. Ignored (as Python's runtime, torchrun's ranks, does),
  // the write fails with EPIPE and Gloo throws.
  std::signal(SIGPIPE, SIG_IGN);
  const bool nccl =
      device.is_cuda() && (backend == DistBackend::Nccl || (backend == DistBackend::Auto && compat::has_nccl()));
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port) + " (MASTER_ADDR:MASTER_PORT" +
                            (env.agent_store ? ", the store of torchrun's agent)" : ")");
  try {
    // A rank that waits says for whom, and for how long: a missing peer is never a silent hang,
    // and a normal start, whose ranks meet within moments, prints nothing.
    const WaitNotice notice(std::min(std::chrono::milliseconds(5000), std::chrono::milliseconds(env.timeout_s * 500)),
                            "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                                ": still waiting for the other ranks at " + where + "; giving up after " +
                                std::to_string(env.timeout_s) + " s (HAMGAN_RENDEZVOUS_TIMEOUT)\n");
    pg_ = std::make_unique<compat::ProcessGroup>(env.master_addr, env.master_port, env.rank,
                                                 env.world_size, nccl,
                                                 std::chrono::seconds(env.timeout_s),
                                                 !env.agent_store && env.rank == 0, env.store_prefix);
  } catch (const compat::RendezvousError& e) {
    const std::string agent =
        env.agent_store ? " torchrun's agent serves this store (TORCHELASTIC_USE_AGENT_STORE): its PyTorch must be the "
                          "one whose LibTorch hamgan is built with, here " + compat::libtorch_description() +
                              " (TCPStore's protocol changed in PyTorch 2.x)."
                        : std::string();
    if (e.silent_store)
      fail("rank ", env.rank, " of ", env.world_size, ": something accepted the connection at ", where,
           " but did not answer as a TCPStore within ", env.timeout_s, " s (HAMGAN_RENDEZVOUS_TIMEOUT); expected ",
           env.agent_store ? "the store of torchrun's agent" : "the store that rank 0 serves",
           " there: is MASTER_PORT another program's port?", agent);
    fail("distributed rendezvous at ", where, " (rank ", env.rank, " of ", env.world_size, ") failed within ",
         env.timeout_s, " s (HAMGAN_RENDEZVOUS_TIMEOUT): are all ", env.world_size, " ranks started with the same "
         "MASTER_ADDR and MASTER_PORT?", agent, " (LibTorch: ", e.what(), ")");
  }
  // Where the ranks met, said once and after the fact: the store in use (rank 0's or a launcher's).
  if (env.rank == 0) std::cerr << "the " << env.world_size << " ranks met at " << where << "\n";
  if (device.is_cuda() && backend == DistBackend::Auto && !nccl && env.rank == 0)
    std::cerr << "note: this LibTorch has no NCCL; data parallel on CUDA uses Gloo\n";
  if (!device.is_cuda() && (backend == DistBackend::Auto || backend == DistBackend::Shm))
    shm_ = open_shared_memory(backend == DistBackend::Shm);
  if (device.is_cuda() && env.rank == 0) {
    const int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
    if (env.local_world_size > gpus)
      std::cerr << "note: the " << env.local_world_size << " ranks on this machine share its " << gpus
                << (gpus == 1 ? " GPU" : " GPUs") << " (train.dist_backend=" << word_of(backend, kDistBackendWords)
                << ": local rank r on cuda:(r % " << gpus << "); each all-reduce goes through the host)\n";
  }
}

DataParallel::~DataParallel() = default;

// Rank 0 creates the segment and sends its name's parts; every rank attaches, and only when all
// have, and each sees the others as live processes, do they use it. Every step of this runs on
// every rank, whatever happened on the others, so no rank is left waiting in a collective.
std::unique_ptr<ShmAllReduce> DataParallel::open_shared_memory(bool required) {
  const auto timeout = std::chrono::seconds(env_.timeout_s);
  const bool one_machine = env_.local_world_size == env_.world_size;
  std::unique_ptr<ShmAllReduce> shm;
  bool local_failure = false;  // this rank's own reason, which only its note tells
  std::string why = one_machine ? "" : "the ranks are on more than one machine (LOCAL_WORLD_SIZE < WORLD_SIZE)";
  auto name_of = [](int64_t pid, int64_t nonce) {
    std::ostringstream s;
    s << "/hamgan-" << pid << "-" << std::hex << nonce;
    return s.str();
  };
  // 2 sets of a slot per rank: 16 MB for 2 ranks, at most 32 MB for up to 64 (Docker's default
  // /dev/shm is 64 MB); a step's gradients (about 1 MB for the quickstart) fit one slot.
  const size_t slot_bytes = std::clamp<size_t>((size_t{16} << 20) / static_cast<size_t>(env_.world_size),
                                               size_t{256} << 10, size_t{4} << 20);
  torch::Tensor id = torch::zeros({3}, torch::kLong);  // [created, pid, nonce]
  if (env_.rank == 0 && one_machine) {
    ShmAllReduce::remove_orphans();  // a killed run's segment (gan/train/shm_all_reduce.h)
    const int64_t pid = getpid();
    const int64_t nonce = static_cast<int64_t>(std::random_device{}() & 0x7fffffff);
    try {
      shm = std::make_unique<ShmAllReduce>(name_of(pid, nonce), 0, env_.world_size, true, timeout, slot_bytes);
      id = torch::tensor({int64_t{1}, pid, nonce});
    } catch (const std::exception& e) {
      why = e.what();
      local_failure = true;
    }
  }
  pg_->broadcast(id);
  // host read: CPU ranks only, once at the start (id, missing and unseen live on the host).
  if (env_.rank != 0 && id[0].item<int64_t>() == 1) {
    try {
      shm = std::make_unique<ShmAllReduce>(name_of(id[1].item<int64_t>(), id[2].item<int64_t>()), env_.rank,
                                           env_.world_size, false, timeout, slot_bytes);
    } catch (const std::exception& e) {
      why = e.what();
      local_failure = true;
    }
  } else if (env_.rank != 0 && why.empty()) {
    why = "rank 0 could not create the shared memory (its message says why)";
  }
  torch::Tensor missing = torch::tensor({shm ? int64_t{0} : int64_t{1}});
  pg_->all_reduce(missing);  // every rank attached before any checks for the others' pids
  // host read: on the host, once at the start.
  if (missing.item<int64_t>() == 0) {
    torch::Tensor unseen = torch::tensor({shm->peers_visible() ? int64_t{0} : int64_t{1}});
    pg_->all_reduce(unseen);
    if (unseen.item<int64_t>() == 0) {
      shm->unlink();  // every rank has it mapped: nothing stays in /dev/shm after the run
      return shm;
    }
    why = "the ranks' processes do not see each other (another PID namespace?)";
  } else if (why.empty()) {
    why = "another rank could not attach to the shared memory (its message says why)";
  }
  shm.reset();
  if (required)
    fail("rank ", env_.rank, " of ", env_.world_size, ": train.dist_backend=shm, but the ranks cannot sum through "
         "shared memory: ", why, "; set train.dist_backend=auto or gloo");
  if ((env_.rank == 0 && one_machine) || local_failure)
    std::cerr << "note: rank " << env_.rank << " of " << env_.world_size
              << ": the ranks sum through Gloo, not shared memory: " << why << "\n";
  return nullptr;
}

void DataParallel::reduce(torch::Tensor& t) {
  if (shm_ && !t.is_cuda()) shm_->all_reduce_sum(t);
  else pg_->all_reduce(t);
}

void DataParallel::broadcast(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> all;
  for (auto& p : m.parameters()) all.push_back(p);
  for (auto& b : m.buffers()) all.push_back(b);
  for (auto& t : all) pg_->broadcast(t);
}

void DataParallel::average_gradients(torch::nn::Module& m, int64_t bucket_bytes) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> grads;
  for (auto& p : m.parameters()) {
    if (!p.requires_grad()) continue;
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  // Buckets of same-dtype gradients: one flat all-reduce each instead of one per tensor.
  size_t i = 0;
  while (i < grads.size()) {
    size_t j = i;
    int64_t bytes = 0;
    while (j < grads.size() && grads[j].scalar_type() == grads[i].scalar_type() &&
           (j == i || bytes + grads[j].nbytes() <= static_cast<size_t>(bucket_bytes))) {
      bytes += grads[j].nbytes();
      ++j;
    }
    std::vector<torch::Tensor> flat_in;
    for (size_t k = i; k < j; ++k) flat_in.push_back(grads[k].reshape({-1}));
    torch::Tensor flat = torch::cat(flat_in);
    reduce(flat);
    flat.div_(env_.world_size);
    int64_t off = 0;
    for (size_t k = i; k < j; ++k) {
      const int64_t n = grads[k].numel();
      grads[k].copy_(flat.narrow(0, off, n).view_as(grads[k]));
      off += n;
    }
    i = j;
  }
}

void DataParallel::all_reduce_sum(torch::Tensor& t) {
  if (pg_->nccl() && !t.is_cuda()) {  // NCCL reduces device memory only (e.g. the stop flags)
    const auto gpu = env_.local_rank % static_cast<int>(torch::cuda::device_count());
    torch::Tensor d = t.to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)));
    all_reduce_sum(d);
    t.copy_(d);  // host read: the stop flags, at report points only on GPUs (StopPolicy)
    return;
  }
  reduce(t);
}

void DataParallel::barrier() { pg_->barrier(); }

namespace {

// Polls the store until `ready`: a store answers at once, and 20 ms is nothing beside the work
// waited for.
template <class Ready>
void wait_untimed(Ready&& ready) {
  while (!ready()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

void DataParallel::tell(const std::string& word) {
  pg_->store_set("hamgan/word/" + std::to_string(words_++), word);
}

std::string DataParallel::hear() {
  const std::string key = "hamgan/word/" + std::to_string(words_++);
  wait_untimed([&] { return pg_->store_has(key); });
  return pg_->store_get(key);
}

void DataParallel::meet() {
  const std::string at = "hamgan/meet/" + std::to_string(meetings_++) + "/";
  pg_->store_set(at + std::to_string(env_.rank), "");
  for (int r = 0; r < env_.world_size; ++r) wait_untimed([&] { return pg_->store_has(at + std::to_string(r)); });
}

EvalRanks eval_ranks(DataParallel* dp) {
  EvalRanks r;
  if (!dp) return r;
  r.rank = dp->rank();
  r.world = dp->world_size();
  r.sum = [dp](torch::Tensor& t) { dp->all_reduce_sum(t); };
  r.tell = [dp](const std::string& w) { dp->tell(w); };
  r.hear = [dp] { return dp->hear(); };
  r.meet = [dp] { dp->meet(); };
  return r;
}

}  // namespace hamgan
