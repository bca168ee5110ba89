// Test helpers (not a source mirror): uroced's control plane in-process,
// without DPDK. Two Vnic<SimPortIo> devices ("uroce0" 10.0.0.1 MTU 9000,
// "uroce1" 10.0.0.2 MTU 1500) joined by a simulated link, one Engine running
// on its own thread, and a Server listening on a socket in a temporary
// directory; plus a raw protocol client that can send anything, malformed
// messages included.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/uroced/server.h"
#include "apps/uroced/vnic_device.h"
#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/sim_port_io.h"
#include "datapath/port/sim_link.h"
#include "datapath/shm/arena_map.h"

namespace uroce::daemon::testing {

// Wall-clock time for the engine thread: ARP timers and the control
// plane's 10 ms polling need time that moves by itself.
struct SteadyClock {
  TimeNs now() const {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
  }
};

using SimEngine = engine::Engine<engine::SimPortIo, SteadyClock>;

class SimDaemon {
 public:
  // `engine_cpu`: what DaemonInfo says of the engine thread's CPU (-1: not
  // pinned), told to clients in Hello.
  explicit SimDaemon(ResolveTiming resolve = {1 * kNsPerMs, 300 * kNsPerMs}, int engine_cpu = -1)
      : link_(port::SimLinkConfig{}),
        p0_(link_, 0),
        p1_(link_, 1),
        io0_(p0_),
        io1_(p1_),
        engine_(engine_config(), clock_) {
    char tmpl[] = "/tmp/uroce_test_daemon.XXXXXX";
    dir_ = mkdtemp(tmpl);
    v0_ = std::make_unique<SimEngine::VnicT>(vnic_config("uroce0", 1, 9000), io0_);
    v1_ = std::make_unique<SimEngine::VnicT>(vnic_config("uroce1", 2, 1500), io1_);
    engine_.add_vnic(v0_.get());
    engine_.add_vnic(v1_.get());
    d0_ = std::make_unique<VnicDevice<SimEngine>>(*v0_, engine_, 0, "sim:0");
    d1_ = std::make_unique<VnicDevice<SimEngine>>(*v1_, engine_, 1, "sim:1");
    DaemonInfo info;
    info.version = "test";
    info.pid = static_cast<long>(getpid());
    info.run_dir = dir_;
    info.poll = "backoff";
    info.engine_cpu = engine_cpu;
    server_ = std::make_unique<Server>(std::vector<Device*>{d0_.get(), d1_.get()}, info, resolve);
    std::string err;
    listen_rc_ = server_->listen(socket_path(), &err);
    if (listen_rc_ == 0) server_->start(nullptr);
    engine_thread_ = std::thread([this] { engine_.run(stop_); });
  }

  ~SimDaemon() {
    // Clients first (their objects are destroyed through the running
    // engine), then the engine.
    server_->stop();
    stop_.store(true);
    engine_thread_.join();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string socket_path() const { return dir_ + "/uroced.sock"; }
  const std::string& dir() const { return dir_; }
  int listen_rc() const { return listen_rc_; }
  Server& server() { return *server_; }
  // uroce0 (0) or uroce1 (1).
  Device& device(int i) { return i == 0 ? *d0_ : *d1_; }

 private:
  static engine::EngineConfig engine_config() {
    engine::EngineConfig c;
    c.mode = engine::PollMode::kBackoff;
    c.backoff_max_us = 100;
    return c;
  }
  static engine::VnicConfig vnic_config(const char* name, std::uint8_t last, std::uint32_t mtu) {
    engine::VnicConfig c;
    c.name = name;
    c.mac = wire::MacAddr{{0x02, 0, 0, 0, 0, last}};
    c.ip = wire::Ipv4Addr{(10u << 24) | last};
    c.eth_mtu = mtu;
    return c;
  }

  std::string dir_;
  port::SimLink link_;
  port::SimPort p0_, p1_;
  engine::SimPortIo io0_, io1_;
  SteadyClock clock_;
  SimEngine engine_;
  std::unique_ptr<SimEngine::VnicT> v0_, v1_;
  std::unique_ptr<VnicDevice<SimEngine>> d0_, d1_;
  std::unique_ptr<Server> server_;
  int listen_rc_ = -1;
  std::atomic<bool> stop_{false};
  std::thread engine_thread_;
};

// One reply as received.
struct Reply {
  bool received = false;  // false: nothing within the timeout
  bool closed = false;    // the daemon closed the connection
  ctl::MsgHeader h{};
  int status = -1;
  std::vector<std::byte> body;  // after ReplyStatus
  std::vector<int> fds;         // owned by the Reply
  Reply() = default;
  Reply(Reply&& o) noexcept { *this = std::move(o); }
  Reply& operator=(Reply&& o) noexcept {
    received = o.received;
    closed = o.closed;
    h = o.h;
    status = o.status;
    body = std::move(o.body);
    fds.swap(o.fds);
    return *this;
  }
  ~Reply() {
    for (int f : fds) close(f);
  }
  template <class T>
  T as() const {
    T t{};
    std::memcpy(&t, body.data(), std::min(sizeof(T), body.size()));
    return t;
  }
  std::string text() const {
    return std::string(reinterpret_cast<const char*>(body.data()), body.size());
  }
};

class RawClient {
 public:
  explicit RawClient(const std::string& path) : fd_(ctl::connect_to(path.c_str())) {}
  // A connected socket of the caller's (one end of a socketpair), now ours.
  explicit RawClient(int fd) : fd_(fd) {}
  ~RawClient() {
    if (fd_ >= 0) close(fd_);
    for (int f : async_) close(f);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool send_raw(const void* p, std::size_t n, std::vector<int> fds = {}) {
    const ctl::IoResult r =
        ctl::send_msg(fd_, std::span<const std::byte>(static_cast<const std::byte*>(p), n), fds);
    return r.ok();
  }

  template <class Req>
  bool send(ctl::Op op, const Req& req, std::vector<int> fds = {}, std::uint32_t seq = 0) {
    struct {
      ctl::MsgHeader h;
      Req r;
    } m{};
    m.h = {ctl::kMagic, ctl::kVersion, static_cast<std::uint16_t>(op),
           static_cast<std::uint32_t>(sizeof(ctl::MsgHeader) + sizeof(Req)),
           seq != 0 ? seq : ++seq_};
    m.r = req;
    return send_raw(&m, sizeof(ctl::MsgHeader) + sizeof(Req), std::move(fds));
  }

  Reply recv(int timeout_ms = 5000) {
    Reply rep;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) <= 0) return rep;
    std::vector<std::byte> buf(ctl::kMaxMessageBytes);
    int fds[8];
    const ctl::IoResult r = ctl::recv_msg(fd_, buf, fds);
    rep.received = true;
    if (r.err == ctl::IoError::kClosed || r.err == ctl::IoError::kSys) {
      rep.closed = true;
      return rep;
    }
    for (int i = 0; i < r.nfds; ++i) rep.fds.push_back(fds[i]);
    constexpr std::size_t kHead = sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus);
    if (r.bytes < kHead) return rep;
    std::memcpy(&rep.h, buf.data(), sizeof(rep.h));
    ctl::ReplyStatus st;
    std::memcpy(&st, buf.data() + sizeof(rep.h), sizeof(st));
    rep.status = st.status;
    rep.body.assign(buf.begin() + kHead, buf.begin() + static_cast<long>(r.bytes));
    return rep;
  }

  template <class Req>
  Reply call(ctl::Op op, const Req& req, std::vector<int> fds = {}) {
    if (!send(op, req, std::move(fds))) return Reply{};
    return recv();
  }

  // Hello with a fresh async pipe (we keep the read end).
  Reply hello(const char* ibdev) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return Reply{};
    ctl::HelloReq req{};
    std::strncpy(req.ibdev, ibdev, sizeof(req.ibdev) - 1);
    Reply r = call(ctl::Op::kHello, req, {p[1]});
    close(p[1]);
    async_.push_back(p[0]);
    if (r.status == 0 && r.fds.size() == 1) {
      const auto rep = r.as<ctl::HelloRep>();
      (void)arena_.adopt(dup(r.fds[0]), rep.arena_chunk_bytes, rep.arena_max_chunks);
    }
    return r;
  }

  // The address of a reply's region in the arena Hello's reply carried, as
  // the provider maps it (null when the range is not in it).
  void* in_arena(std::uint64_t offset, std::uint64_t bytes) {
    void* p = nullptr;
    return arena_.locate(offset, bytes, &p).ok() ? p : nullptr;
  }

  std::uint32_t alloc_pd() {
    Reply r = call(ctl::Op::kAllocPd, ctl::AllocPdReq{});
    return r.status == 0 ? r.as<ctl::AllocPdRep>().pd_handle : 0;
  }

  std::uint32_t last_seq() const { return seq_; }
  // The read end of the last Hello's async pipe (-1 before any Hello).
  int async_fd() const { return async_.empty() ? -1 : async_.back(); }

 private:
  int fd_;
  std::uint32_t seq_ = 0;
  std::vector<int> async_;
  shm::ArenaMap arena_;
};

}  // namespace uroce::daemon::testing
