// One client connection (one ibv_context of one application): its handle
// tables and the handling of every request it sends (protocol.h).
//
// Threading: run() is the connection's own control thread (blocking reads,
// blocking waits such as ARP resolution are fine there). Engine state is
// reached only through Device (Engine::call). summary() and shutdown() may
// be called from any thread; summary() reads a copy the session refreshes
// after each request under a mutex, so status never waits for a request in
// progress.
//
// Trust: every byte and fd from the client is hostile. Each request passes
// check_request (message_check.h), then the connection state (the first
// request must be Hello or Status: EPROTO otherwise), then its own field
// checks; handles are looked up in this session's own tables only, so a
// handle of another client (handles are unique daemon-wide) or one already
// destroyed gets ENOENT, exactly as one never issued. Bad input gets its
// error reply and a log line (at most kBadInputLogBurst per second per
// client), and the session goes on serving.
//
// Ownership: the session owns the socket fd, the async pipe fd, the comp
// channel write ends, the client's arena (ring_arena.h: one memfd holding
// its doorbell page and every ring, sent once with Hello's reply) and the MR
// mappings. A ring's extent goes back to the arena only after the
// Engine::call that destroys its object has returned (vnic_api.h). When the connection ends (close, crash,
// SIGKILL, or shutdown()), reclaim() destroys everything in the order QPs,
// SRQs, CQs, AHs, MRs, comp channels, PDs, and logs what it reclaimed.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "apps/uroced/capture_service.h"
#include "apps/uroced/cm_service.h"
#include "apps/uroced/device.h"
#include "apps/uroced/mr_memory.h"
#include "apps/uroced/quotas.h"
#include "apps/uroced/rate_limiter.h"
#include "apps/uroced/ring_arena.h"
#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/shared_region.h"
#include "datapath/transport/srq.h"

namespace uroce::daemon {

// Handles, unique across the daemon and never reused while it runs (the
// counter would need 2^32 objects to wrap), so a handle is also a valid
// engine ObjId and AH number, and one client's handle means nothing in
// another's tables. Thread-safe.
class HandleCounter {
 public:
  std::uint32_t next() {
    std::uint32_t h = next_.fetch_add(1, std::memory_order_relaxed);
    while (h == 0) h = next_.fetch_add(1, std::memory_order_relaxed);
    return h;
  }

 private:
  std::atomic<std::uint32_t> next_{1};
};

// How long create_ah / modify_qp wait for ARP: one lookup every `interval`
// until `timeout` (then EHOSTUNREACH).
struct ResolveTiming {
  TimeNs interval = 10 * kNsPerMs;
  TimeNs timeout = 3 * kNsPerSec;
};

// What every session shares: the daemon's devices, the handle counter and
// the status producer. Outlives every session.
struct SessionEnv {
  std::vector<Device*> devices;
  HandleCounter* handles = nullptr;
  // Builds the Status reply body (JSON) for the kStatus* `flags`, as the
  // peer `asker` may see it (Server::status_for).
  std::function<std::string(std::uint32_t flags, const ctl::PeerCred& asker)> status;
  // Per-user and per-client limits; null: none (tests).
  Quotas* quotas = nullptr;
  ResolveTiming resolve{};
  // The rdma_cm service (null: CmOpen gets EOPNOTSUPP).
  CmService* cm = nullptr;
  // Live captures (null: Capture gets EOPNOTSUPP).
  CaptureService* capture = nullptr;
  // The CPU the engine thread is pinned to, told to clients in Hello
  // (HelloRep.engine_cpu); -1: not pinned to one CPU, or not known.
  int engine_cpu = -1;
};

inline constexpr std::uint32_t kBadInputLogBurst = 5;

// A QP of a client, as `uroce-ctl clients` shows it.
struct ClientQp {
  std::uint32_t handle = 0;
  std::uint32_t qpn = 0;
  std::uint32_t mcast_groups = 0;  // the groups it is attached to (session_mcast.cpp)
};

// A client as `uroce-ctl clients` shows it.
struct ClientSummary {
  std::uint32_t id = 0;
  ctl::PeerCred cred{};
  std::string device;  // "" before Hello
  std::vector<std::uint32_t> pds, mrs, channels, cqs, srqs, ahs;
  std::vector<ClientQp> qps;
  std::uint64_t requests = 0;
  std::uint64_t bad_requests = 0;
  Usage used;  // what it holds against its limits
};

class ClientSession {
 public:
  // Takes `sock` (a connected SOCK_SEQPACKET socket).
  ClientSession(const SessionEnv& env, int sock, std::uint32_t id);
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Serves requests until the peer closes, a fatal protocol error, or
  // shutdown(); then reclaims every object.
  void run();
  // Instead of run(), for a connection the server has no thread for (at
  // its descriptor or connection limit): reads one request (the socket's
  // receive timeout bounds the wait) and answers it if it is Status, with
  // `refusal` otherwise. Nothing is created, so nothing needs reclaiming.
  void serve_status_only(int refusal);
  // Any thread: makes run() return (its blocking read sees end of file).
  void shutdown();
  // Any thread (the server's link monitor): if this client has opened
  // `dev`, writes one async event for port 1 (PORT_ACTIVE, PORT_ERR) into
  // its async pipe, non-blocking. True when a record was written.
  bool post_port_event(const Device* dev, ibv_event_type type);

  std::uint32_t id() const { return id_; }
  ClientSummary summary() const;

 private:
  // Up to the fds one message may carry; closes whatever was not taken.
  struct InFds {
    int fd[16];
    int n = 0;
    ~InFds();
    int take(int i);
  };
  // Borrowed fds for a reply (the objects keep owning them).
  struct OutFds {
    int fd[2] = {-1, -1};
    int n = 0;
    void add(int f) { fd[n++] = f; }
  };

  struct PdObj {
    std::uint32_t refs = 0;
  };
  struct MrObj {
    std::uint32_t pd = 0;
    std::uint32_t key = 0;
    std::uint32_t access = 0;
    std::uint64_t addr = 0;
    std::uint64_t length = 0;
    std::uint64_t iova = 0;
    MrMemory mem;               // the daemon's mapping of the bytes (mr_memory.h)
    std::uint64_t map_len = 0;  // as charged (quotas.h)
  };
  struct MwObj {
    std::uint32_t pd = 0;
    std::uint32_t key = 0;  // the key it was allocated with (binds change its low byte)
  };
  struct ChannelObj {
    int fd = -1;  // the pipe's write end
    std::uint32_t refs = 0;
  };
  struct CqObj {
    std::uint32_t channel = 0;
    std::uint64_t user_handle = 0;
    std::uint32_t cqe = 0;
    ArenaExtent region;  // ring + CqNotify
    std::uint32_t refs = 0;
  };
  struct SrqObj {
    std::uint32_t pd = 0;
    ArenaExtent region;
    transport::SrqAttr attr{};
    std::uint32_t refs = 0;
  };
  struct QpObj {
    // send_cq 0 for a DCT, recv_cq 0 for a DCI (neither is referenced).
    std::uint32_t pd = 0, send_cq = 0, recv_cq = 0, srq = 0;
    std::uint32_t qpn = 0;
    std::uint32_t type = 0;  // ibv_qp_type (IBV_QPT_DRIVER for DC)
    bool dc = false;         // a DCI or a DCT
    ibv_qp_cap cap{};
    bool sq_sig_all = false;
    ArenaExtent sq, rq;  // sq: none for a DCT; rq: none with an SRQ or DC
    // The multicast groups it is attached to (session_mcast.cpp): while
    // any, DestroyQp answers EBUSY, as the kernel's uverbs does.
    std::vector<wire::Ipv6Addr> mcast;
  };
  struct AhObj {
    std::uint32_t pd = 0;
  };

  // One received message: checks, state, dispatch, reply.
  bool handle_message(std::span<const std::byte> msg, InFds& fds);
  void dispatch(const ctl::MsgHeader& h, std::span<const std::byte> body, InFds& fds);
  template <ctl::Op O, class Handler>
  void serve(const ctl::MsgHeader& h, std::span<const std::byte> body, InFds& fds, Handler handler);
  bool send_reply(const ctl::MsgHeader& h, int status, const void* rep, std::size_t rep_bytes,
                  const OutFds& fds);
  void bad_input(const ctl::MsgHeader& h, int status, const std::string& why);
  void refresh_summary();
  void reclaim();

  // Handlers: 0 or an errno; fill *rep and *out on success.
  int on_hello(const ctl::HelloReq& r, ctl::HelloRep* rep, InFds& in, OutFds* out);
  int on_cm_open(const ctl::CmOpenReq& r, ctl::CmOpenRep* rep, InFds& in, OutFds* out);
  int on_cm_command(const ctl::CmCommandReq& r, ctl::CmCommandRep* rep, InFds& in, OutFds* out);
  int on_query_port(const ctl::QueryPortReq& r, ctl::QueryPortRep* rep, InFds& in, OutFds* out);
  int on_alloc_pd(const ctl::AllocPdReq& r, ctl::AllocPdRep* rep, InFds& in, OutFds* out);
  int on_dealloc_pd(const ctl::DeallocPdReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  // The bytes of a registration (mr_memory.h), from the memfd `fd` (taken)
  // or from the client's own shared object; 0 or errno.
  int map_mr(ctl::MrSource source, int fd, std::uint64_t addr, std::uint64_t length,
             std::uint64_t map_len, std::uint64_t map_offset, std::uint32_t access, MrMemory* out);
  int on_reg_mr(const ctl::RegMrReq& r, ctl::RegMrRep* rep, InFds& in, OutFds* out);
  int on_rereg_mr(const ctl::ReregMrReq& r, ctl::ReregMrRep* rep, InFds& in, OutFds* out);
  int on_dereg_mr(const ctl::DeregMrReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_alloc_mw(const ctl::AllocMwReq& r, ctl::AllocMwRep* rep, InFds& in, OutFds* out);
  int on_dealloc_mw(const ctl::DeallocMwReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_create_channel(const ctl::CreateCompChannelReq& r, ctl::CreateCompChannelRep* rep,
                        InFds& in, OutFds* out);
  int on_destroy_channel(const ctl::DestroyCompChannelReq& r, ctl::NoReply* rep, InFds& in,
                         OutFds* out);
  int on_create_cq(const ctl::CreateCqReq& r, ctl::CreateCqRep* rep, InFds& in, OutFds* out);
  int on_resize_cq(const ctl::ResizeCqReq& r, ctl::ResizeCqRep* rep, InFds& in, OutFds* out);
  int on_destroy_cq(const ctl::DestroyCqReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_create_qp(const ctl::CreateQpReq& r, ctl::CreateQpRep* rep, InFds& in, OutFds* out);
  int on_modify_qp(const ctl::ModifyQpReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_query_qp(const ctl::QueryQpReq& r, ctl::QueryQpRep* rep, InFds& in, OutFds* out);
  int on_destroy_qp(const ctl::DestroyQpReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_set_qp_sched(const ctl::SetQpSchedReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_create_srq(const ctl::CreateSrqReq& r, ctl::CreateSrqRep* rep, InFds& in, OutFds* out);
  int on_modify_srq(const ctl::ModifySrqReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_query_srq(const ctl::QuerySrqReq& r, ctl::QuerySrqRep* rep, InFds& in, OutFds* out);
  int on_destroy_srq(const ctl::DestroySrqReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_create_ah(const ctl::CreateAhReq& r, ctl::CreateAhRep* rep, InFds& in, OutFds* out);
  int on_attach_mcast(const ctl::McastReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_detach_mcast(const ctl::McastReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  int on_destroy_ah(const ctl::DestroyAhReq& r, ctl::NoReply* rep, InFds& in, OutFds* out);
  void on_status(const ctl::MsgHeader& h, const ctl::StatusReq& r);
  // Root only; the socket in fds[0] goes to the capture service.
  int on_capture(const ctl::CaptureReq& r, ctl::CaptureRep* rep, InFds& in, OutFds* out);

  // The CQ region for `cqe` entries: ring + CqNotify, initialised, in the
  // arena.
  int make_cq_region(std::uint32_t cqe, ArenaExtent* region, engine::RingMem* ring,
                     ctl::CqNotify** notify);
  // A ring of `depth` elements of `elem_bytes`, initialised, in the arena.
  int make_ring(std::size_t elem_bytes, std::uint32_t depth, ArenaExtent* region,
                engine::RingMem* ring);
  // Charges a fresh extent to the map_bytes quota; on refusal gives it back
  // and returns the quota's error.
  int charge_extent(ArenaExtent* region);
  // Gives a ring's extent back to the arena (nothing for an empty one) and
  // its bytes back to the quota.
  void release_extent(ArenaExtent& e);
  // ARP for `ip` on this session's device, polling (env_.resolve timing).
  // The MAC of the path's IPv4 (ARP) or IPv6 (neighbour discovery)
  // destination, waiting up to env_.resolve.timeout; EHOSTUNREACH.
  int resolve_mac(const transport::PathAddr& av, wire::MacAddr* mac);
  // Sleeps until `left()` (the sends a destroyed AH or UD QP still owes:
  // session_queues.cpp) is 0, or it has not fallen for kSendStallWait (a
  // paused wire), or kSendDrainCap has passed. The client's own thread;
  // the engine goes on sending meanwhile.
  static constexpr TimeNs kSendStallWait = 1'000'000'000;
  static constexpr TimeNs kSendDrainCap = 10'000'000'000;
  void wait_sends(const std::function<std::uint32_t()>& left);
  // Destroy one object in the engine and drop its memory; when the engine
  // refuses, the memory is kept mapped for the rest of the process (an MR's
  // through keep_mapped, a ring's by never giving its extent back and
  // keeping the whole arena mapped: arena_pinned_): safer than unmapping
  // what the engine may still touch.
  void destroy_qp_obj(std::uint32_t h, QpObj& q);
  void destroy_srq_obj(std::uint32_t h, SrqObj& s);
  void destroy_cq_obj(std::uint32_t h, CqObj& c);
  void destroy_mr_obj(MrObj& m);
  void destroy_mw_obj(MwObj& m);
  void keep_mapped(shm::SharedRegion&& r);

  const SessionEnv& env_;
  int sock_;
  std::uint32_t id_;
  ctl::PeerCred cred_{};    // who connected (SO_PEERCRED): the connection's user
  ctl::PeerCred sender_{};  // who sent the request being handled (SCM_CREDENTIALS)
  Device* dev_ = nullptr;   // set by Hello
  // Where this client's objects live (Hello: dev_->place_client()): dev_
  // itself, or on an engine of several lcores one shard of it. Every object
  // and doorbell call goes here; the device-wide ones (PDs, resolution,
  // the configuration) to dev_.
  Device* shard_ = nullptr;
  int async_fd_ = -1;
  // The rdma_cm file this connection opened (0: none) and our copy of its
  // event pipe's read end.
  std::uint32_t cm_file_ = 0;
  int cm_event_fd_ = -1;
  // This connection's arena and, at its start, the doorbell page (Hello);
  // the engine reads the page from Hello until reclaim() has closed the
  // client. Pinned: an object the engine refused to destroy still has a
  // ring in it, so reclaim() leaves it mapped for the life of the process.
  std::unique_ptr<RingArena> arena_;
  ArenaExtent bells_;
  bool arena_pinned_ = false;
  std::vector<std::byte> buf_;
  RateLimiter log_limit_;
  std::uint64_t requests_ = 0;
  std::uint64_t bad_requests_ = 0;
  bool reclaimed_ = false;
  // Said once per connection: its pid is not visible here (map_mr).
  bool told_pid_unseen_ = false;
  Usage used_;  // charged to this client (quotas.h)

  std::map<std::uint32_t, PdObj> pds_;
  std::map<std::uint32_t, MrObj> mrs_;
  std::map<std::uint32_t, MwObj> mws_;
  std::map<std::uint32_t, ChannelObj> channels_;
  std::map<std::uint32_t, CqObj> cqs_;
  std::map<std::uint32_t, SrqObj> srqs_;
  std::map<std::uint32_t, QpObj> qps_;
  std::map<std::uint32_t, AhObj> ahs_;

  mutable std::mutex summary_mu_;
  // Guards dev_ and async_fd_ against post_port_event: the session thread
  // takes it when it sets or clears them, other threads to read them.
  std::mutex event_mu_;
  ClientSummary summary_;
};

}  // namespace uroce::daemon
