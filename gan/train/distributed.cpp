#include "gan/train/distributed.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "core/error.h"

#ifndef HAMGAN_NO_GLOO
#ifndef USE_C10D_GLOO  // LibTorch's CMake usually defines it already
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// NCCL only where LibTorch was built with it (its headers ship without it, too).
#if defined(USE_C10D_NCCL) && __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define HAMGAN_HAVE_NCCL 1
#endif
#endif

#include <iostream>

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
}  // namespace

DistEnv dist_env_from_environment() {
  DistEnv e;
  e.world_size = env_int("WORLD_SIZE", 1, 1, 1 << 16);
  e.rank = env_int("RANK", 0, 0, e.world_size - 1);
  if (const char* a = std::getenv("MASTER_ADDR")) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", 29500, 1, 65535);
  e.local_rank = env_int("LOCAL_RANK", e.rank, 0, 1 << 16);
  return e;
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

#ifndef HAMGAN_NO_GLOO

struct DataParallel::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef HAMGAN_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  // Calls f on the process group in use (both classes have the same collective methods).
  template <class F>
  auto with_pg(F&& f) {
#ifdef HAMGAN_HAVE_NCCL
    if (nccl) return f(*nccl);
#endif
    return f(*gloo);
  }
};

DataParallel::DataParallel(const DistEnv& env, torch::Device device)
    : env_(env), impl_(std::make_unique<Impl>()) {
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(env.master_port);
  opts.isServer = env.rank == 0;
  opts.numWorkers = static_cast<std::size_t>(env.world_size);
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, opts);
#ifdef HAMGAN_HAVE_NCCL
    if (device.is_cuda()) {
      impl_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          impl_->store, env.rank, env.world_size, c10d::ProcessGroupNCCL::Options::create());
      return;
    }
#else
    if (device.is_cuda() && env.rank == 0)
      std::cerr << "note: this LibTorch has no NCCL; data parallel on CUDA uses Gloo\n";
#endif
    auto pg_opts = c10d::ProcessGroupGloo::Options::create();
    pg_opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
        env.master_addr == "localhost" ? "127.0.0.1" : env.master_addr));
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank,
                                                              env.world_size, pg_opts);
  } catch (const std::exception& e) {
    fail("distributed rendezvous at ", env.master_addr, ":", env.master_port, " (rank ",
         env.rank, " of ", env.world_size, ") failed: ", e.what());
  }
}

DataParallel::~DataParallel() = default;

void DataParallel::broadcast(torch::nn::Module& m) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> all;
  for (auto& p : m.parameters()) all.push_back(p);
  for (auto& b : m.buffers()) all.push_back(b);
  for (auto& t : all) {
    std::vector<torch::Tensor> one{t};
    impl_->with_pg([&](auto& pg) { pg.broadcast(one)->wait(); });
  }
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
    std::vector<torch::Tensor> flat{torch::cat(flat_in)};
    impl_->with_pg([&](auto& pg) { pg.allreduce(flat)->wait(); });
    flat[0].div_(env_.world_size);
    int64_t off = 0;
    for (size_t k = i; k < j; ++k) {
      const int64_t n = grads[k].numel();
      grads[k].copy_(flat[0].narrow(0, off, n).view_as(grads[k]));
      off += n;
    }
    i = j;
  }
}

void DataParallel::all_reduce_sum(torch::Tensor& t) {
#ifdef HAMGAN_HAVE_NCCL
  if (impl_->nccl && !t.is_cuda()) {  // NCCL reduces device memory only (e.g. the stop flags)
    const auto gpu = env_.local_rank % static_cast<int>(torch::cuda::device_count());
    torch::Tensor d = t.to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)));
    all_reduce_sum(d);
    t.copy_(d);
    return;
  }
#endif
  std::vector<torch::Tensor> one{t};
  impl_->with_pg([&](auto& pg) { pg.allreduce(one)->wait(); });
}

void DataParallel::barrier() {
  impl_->with_pg([&](auto& pg) { pg.barrier()->wait(); });
}

#else  // built without Gloo headers

struct DataParallel::Impl {};
DataParallel::DataParallel(const DistEnv& env, torch::Device) : env_(env) {
  fail("hamgan was built without Gloo (c10d); multi-process training is unavailable");
}
DataParallel::~DataParallel() = default;
void DataParallel::broadcast(torch::nn::Module&) {}
void DataParallel::average_gradients(torch::nn::Module&, int64_t) {}
void DataParallel::all_reduce_sum(torch::Tensor&) {}
void DataParallel::barrier() {}

#endif

}  // namespace hamgan
