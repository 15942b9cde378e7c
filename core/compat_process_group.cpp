#include "core/compat_process_group.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <c10/util/Logging.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include "core/compat.h"
#include "core/error.h"

#ifndef HAMGAN_NO_GLOO
#ifndef USE_C10D_GLOO  // LibTorch's CMake usually defines it already
#define USE_C10D_GLOO
#endif
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// NCCL only where LibTorch was built with it (its headers ship without it, too).
#if defined(USE_C10D_NCCL) && __has_include(<torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define HAMGAN_HAVE_NCCL 1
#endif
#endif

namespace hamgan::compat {

#ifndef HAMGAN_NO_GLOO

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#ifdef HAMGAN_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
  // Calls f on the process group in use (both classes have the same collective methods).
  template <class F>
  void with_pg(F&& f) {
#ifdef HAMGAN_HAVE_NCCL
    if (nccl) return f(*nccl);
#endif
    f(*gloo);
  }
};

namespace {

// Runs `f` on a thread of its own and waits at most `limit` for it; nullopt when it is still
// running then. A listener that accepts the connection and never answers leaves LibTorch's
// TCPStore in a recv without a timeout, which nothing interrupts: that thread is left behind
// (blocked, it touches nothing, and ends with the process).
template <class T>
std::optional<T> within(std::chrono::milliseconds limit, std::function<T()> f) {
  auto task = std::make_shared<std::packaged_task<T()>>(std::move(f));
  std::future<T> result = task->get_future();
  std::thread worker([task] { (*task)(); });
  if (result.wait_for(limit) != std::future_status::ready) {
    worker.detach();
    return std::nullopt;
  }
  worker.join();
  return result.get();  // f's exception, if any
}

// Whether something at addr:port accepts a TCP connection within a second: after a store that
// never answered, it tells a silent listener from a port where nothing listens (LibTorch 2.x
// keeps retrying such a connect past the timeout).
bool accepts_connections(const std::string& addr, int port) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(addr.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return false;
  bool accepted = false;
  for (addrinfo* a = found; a && !accepted; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      accepted = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      accepted = poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return accepted;
}

// LibTorch's message without its C++ backtrace ("Exception raised from ...").
std::string without_backtrace(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  return c10 ? c10->what_without_backtrace() : e.what();
}

}  // namespace

ProcessGroup::ProcessGroup(const std::string& addr, int port, int rank, int world_size, bool nccl,
                           std::chrono::milliseconds timeout, bool host_store,
                           const std::string& key_prefix)
    : impl_(std::make_unique<Impl>()) {
  if (nccl && !has_nccl())
    fail("this LibTorch (", libtorch_description(), ") has no NCCL; the process group can be Gloo only");
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(port);
  opts.isServer = host_store;
  opts.numWorkers = static_cast<std::size_t>(world_size);
  // The wait for the other ranks is the process group's own, below: the store's wait for its
  // workers would come first and spend a timeout of its own (two in all for a missing rank).
  opts.waitWorkers = false;
  opts.timeout = timeout;
  // The store, and one query it answers at once: a store answers within moments, and connecting
  // has the timeout of its own; the margin keeps a connect that times out from reading as silence.
  std::optional<c10::intrusive_ptr<c10d::Store>> store;
  // LibTorch 2.x logs each connect retry as a warning, and its giving up as an error, with the
  // C++ backtrace of its exception (whether the error comes before this wait's own deadline
  // depends on the load). The outcome is this constructor's own error, which quotes LibTorch's
  // message without the backtrace, so only LibTorch's fatal messages are printed meanwhile.
  const int log_level = FLAGS_caffe2_log_level;
  FLAGS_caffe2_log_level = std::max(log_level, 3);
  struct RestoreLogLevel {
    int level;
    bool keep_raised = false;
    ~RestoreLogLevel() {
      if (!keep_raised) FLAGS_caffe2_log_level = level;
    }
  } restore{log_level};
  try {
    store = within<c10::intrusive_ptr<c10d::Store>>(timeout + std::chrono::seconds(1), [addr, opts] {
      auto s = c10::make_intrusive<c10d::TCPStore>(addr, opts);
      s->check({"hamgan/handshake"});  // reads only: a launcher's store is left as it is
      return c10::intrusive_ptr<c10d::Store>(s);
    });
  } catch (const std::exception& e) {
    throw RendezvousError(without_backtrace(e), false);
  }
  if (!store) {
    // The connect left behind keeps retrying and may log its giving up later, backtrace and all:
    // LibTorch's level stays raised for it (this error ends the process).
    restore.keep_raised = true;
    if (accepts_connections(addr, port)) throw RendezvousError("connected, but no TCPStore answered", true);
    throw RendezvousError("no store accepted the connection in time", false);
  }
  impl_->store = *store;
  if (!key_prefix.empty()) impl_->store = c10::make_intrusive<c10d::PrefixStore>(key_prefix, impl_->store);
  try {
#ifdef HAMGAN_HAVE_NCCL
    if (nccl) {
      auto nccl_opts = c10d::ProcessGroupNCCL::Options::create();
      nccl_opts->timeout = timeout;
      impl_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, rank, world_size, nccl_opts);
      return;
    }
#endif
    auto pg_opts = c10d::ProcessGroupGloo::Options::create();
    pg_opts->timeout = timeout;
    pg_opts->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(addr == "localhost" ? "127.0.0.1" : addr));
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rank, world_size, pg_opts);
  } catch (const std::exception& e) {
    throw RendezvousError(without_backtrace(e), false);
  }
}

bool has_nccl() {
#ifdef HAMGAN_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

bool ProcessGroup::nccl() const {
#ifdef HAMGAN_HAVE_NCCL
  return static_cast<bool>(impl_->nccl);
#else
  return false;
#endif
}

void ProcessGroup::broadcast(torch::Tensor& t) {
  std::vector<torch::Tensor> one{t};
  impl_->with_pg([&](auto& pg) { pg.broadcast(one)->wait(); });
}

void ProcessGroup::all_reduce(torch::Tensor& t) {
  std::vector<torch::Tensor> one{t};
  impl_->with_pg([&](auto& pg) { pg.allreduce(one)->wait(); });
}

void ProcessGroup::barrier() {
  impl_->with_pg([&](auto& pg) { pg.barrier()->wait(); });
}

void ProcessGroup::store_set(const std::string& key, const std::string& value) {
  impl_->store->set(key, std::vector<uint8_t>(value.begin(), value.end()));
}

bool ProcessGroup::store_has(const std::string& key) { return impl_->store->check({key}); }

std::string ProcessGroup::store_get(const std::string& key) {
  const std::vector<uint8_t> v = impl_->store->get(key);
  return std::string(v.begin(), v.end());
}

#else  // built without Gloo headers

struct ProcessGroup::Impl {};
ProcessGroup::ProcessGroup(const std::string&, int, int, int, bool, std::chrono::milliseconds, bool,
                           const std::string&) {
  fail("hamgan was built without Gloo (c10d); multi-process training is unavailable");
}
bool has_nccl() { return false; }
bool ProcessGroup::nccl() const { return false; }
void ProcessGroup::broadcast(torch::Tensor&) {}
void ProcessGroup::all_reduce(torch::Tensor&) {}
void ProcessGroup::barrier() {}
void ProcessGroup::store_set(const std::string&, const std::string&) {}
bool ProcessGroup::store_has(const std::string&) { return false; }
std::string ProcessGroup::store_get(const std::string&) { return {}; }

#endif

#if !defined(HAMGAN_NO_GLOO) && defined(HAMGAN_HAVE_NCCL) && HAMGAN_TORCH_AT_LEAST(2, 2)
// NCCL's communicators are torn down explicitly (2.x warns at exit otherwise; 1.13 has no call).
ProcessGroup::~ProcessGroup() {
  if (impl_ && impl_->nccl) impl_->nccl->shutdown();
}
#else
ProcessGroup::~ProcessGroup() = default;
#endif

}  // namespace hamgan::compat
