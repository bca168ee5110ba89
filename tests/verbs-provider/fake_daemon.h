// A stand-in for uroced in the provider's unit tests: the server end of a
// SOCK_SEQPACKET socketpair served by a thread that answers each request
// with a handler's reply, and helpers that build what the provider's verbs
// run against without libibverbs opening a device (a UroceContext whose
// ContextState talks to the fake).
//
// The default handler (MiniDaemon) behaves like uroced for one client:
// handles, rings in a real arena (shm::ArenaMap, sent with Hello's reply;
// ring_init) that the test can then drive as the engine would (push CQEs,
// consume WQEs), and a record of every request. Individual tests override replies to
// inject errors.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "datapath/ctl/protocol.h"
#include "datapath/ctl/socket.h"
#include "datapath/shm/arena_map.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/shared_region.h"
#include "verbs-provider/context.h"
#include "verbs-provider/ops.h"
#include "verbs-provider/qp.h"

namespace uroce::provider::testing {

struct Request {
  ctl::Op op;
  std::vector<std::byte> body;  // the <Op>Req bytes
  std::vector<int> fds;         // owned by the handler (closed after it runs)

  template <class T>
  T as() const {
    T v{};
    std::memcpy(&v, body.data(), std::min(sizeof(T), body.size()));
    return v;
  }
};

struct Reply {
  int status = 0;
  std::vector<std::byte> body;
  std::vector<int> fds;         // sent, then closed by the server
  bool fds_with_error = false;  // send fds even with a non-zero status
  // Applied to the whole outgoing message (header included) before it is
  // sent: lets a test break the protocol on purpose.
  std::function<void(std::vector<std::byte>&)> tamper;
  bool no_reply = false;  // swallow the request (the client waits)

  template <class T>
  static Reply of(const T& rep, std::vector<int> fds = {}) {
    Reply r;
    r.body.resize(sizeof(T));
    std::memcpy(r.body.data(), &rep, sizeof(T));
    r.fds = std::move(fds);
    return r;
  }
  static Reply error(int status) {
    Reply r;
    r.status = status;
    return r;
  }
  static Reply ok() { return Reply{}; }
};

using Handler = std::function<Reply(const Request&)>;

class FakeServer {
 public:
  explicit FakeServer(Handler h) : handler_(std::move(h)) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    client_ = sv[0];
    server_ = sv[1];
    thread_ = std::thread([this] { serve(); });
  }
  // Listens at `path` instead; the first connection is served.
  FakeServer(Handler h, const char* path) : handler_(std::move(h)), path_(path) {
    const int lfd = ctl::listen_at(path, 0600);
    if (lfd < 0) std::abort();
    thread_ = std::thread([this, lfd] {
      const int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      ::close(lfd);
      {
        std::lock_guard<std::mutex> g(mu_);
        server_ = fd;
        if (hung_up_ && fd >= 0) ::shutdown(fd, SHUT_RDWR);
      }
      if (fd >= 0) serve();
    });
  }
  ~FakeServer() {
    hang_up();
    bool waiting;
    {
      std::lock_guard<std::mutex> g(mu_);
      waiting = !path_.empty() && server_ < 0;
    }
    if (waiting) {  // release a thread still blocked in accept()
      const int c = ctl::connect_to(path_.c_str());
      if (c >= 0) ::close(c);
    }
    if (thread_.joinable()) thread_.join();
    if (client_ >= 0) ::close(client_);
  }
  FakeServer(const FakeServer&) = delete;
  FakeServer& operator=(const FakeServer&) = delete;

  // The client end; whoever takes it (CtlClient::adopt) owns it.
  int take_client() {
    const int fd = client_;
    client_ = -1;
    return fd;
  }
  // Closes the server end: the client sees the daemon die.
  void hang_up() {
    std::lock_guard<std::mutex> g(mu_);
    hung_up_ = true;
    if (server_ >= 0) {
      ::shutdown(server_, SHUT_RDWR);
    }
  }
  std::vector<ctl::Op> ops() {
    std::lock_guard<std::mutex> g(mu_);
    return ops_;
  }

 private:
  void serve() {
    for (;;) {
      alignas(8) std::byte buf[ctl::kMaxMessageBytes];
      int fds[ctl::kMaxFds];
      const ctl::IoResult r = ctl::recv_msg(server_, buf, fds);
      if (!r.ok() || r.bytes < sizeof(ctl::MsgHeader)) break;
      ctl::MsgHeader h;
      std::memcpy(&h, buf, sizeof(h));
      Request req;
      req.op = static_cast<ctl::Op>(h.op);
      req.body.assign(buf + sizeof(h), buf + r.bytes);
      req.fds.assign(fds, fds + r.nfds);
      {
        std::lock_guard<std::mutex> g(mu_);
        ops_.push_back(req.op);
      }
      Reply rep = handler_(req);
      for (int fd : req.fds) ::close(fd);
      std::vector<std::byte> out(sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus) +
                                 (rep.status == 0 ? rep.body.size() : 0));
      ctl::MsgHeader rh = h;
      rh.length = static_cast<std::uint32_t>(out.size());
      ctl::ReplyStatus st{rep.status, 0};
      std::memcpy(out.data(), &rh, sizeof(rh));
      std::memcpy(out.data() + sizeof(rh), &st, sizeof(st));
      if (rep.status == 0 && !rep.body.empty()) {
        std::memcpy(out.data() + sizeof(rh) + sizeof(st), rep.body.data(), rep.body.size());
      }
      if (rep.tamper) rep.tamper(out);
      if (!rep.no_reply) {
        const bool with_fds = rep.status == 0 || rep.fds_with_error;
        ctl::send_msg(server_, out,
                      with_fds ? std::span<const int>(rep.fds) : std::span<const int>());
      }
      for (int fd : rep.fds) ::close(fd);
    }
    std::lock_guard<std::mutex> g(mu_);
    ::close(server_);
    server_ = -1;
  }

  Handler handler_;
  std::mutex mu_;
  std::vector<ctl::Op> ops_;
  int client_ = -1;
  int server_ = -1;
  bool hung_up_ = false;
  std::string path_;
  std::thread thread_;
};

// A ring region the mini daemon placed in its arena, kept so the test can
// play engine.
struct FakeRing {
  void* mem = nullptr;       // the daemon's address
  std::uint64_t offset = 0;  // in the arena
  std::uint64_t bytes = 0;   // the region (page multiple)
  shm::RingGeometry geo;
  std::size_t ring_bytes = 0;
};

// The daemon's end of a fake ring (engine side): a CqProducer, SqConsumer
// or RqConsumer attached to the same memory the provider maps.
template <class End>
End engine_end(FakeRing& r) {
  End e;
  if (e.attach(r.mem, r.ring_bytes, r.geo) != shm::RingError::kOk) std::abort();
  return e;
}

// uroced's behaviour for one client, minus the network.
class MiniDaemon {
 public:
  Reply operator()(const Request& r) {
    Reply rep = handle(r);
    if (tweak) tweak(r, rep);
    return rep;
  }
  Reply handle(const Request& r);
  // Runs on every reply before it is sent (tests break replies with it).
  std::function<void(const Request&, Reply&)> tweak;

  std::mutex mu;
  std::uint32_t next_handle = 1;
  std::uint32_t next_qpn = 0x11;
  std::map<std::uint32_t, std::shared_ptr<FakeRing>> cqs, sqs, rqs, srqs;
  std::map<std::uint32_t, ctl::CreateQpReq> qps;
  std::map<std::uint32_t, ctl::RegMrReq> mrs;
  std::map<std::uint32_t, ctl::CreateAhReq> ahs;
  std::map<std::uint32_t, ctl::ModifyQpReq> last_modify;
  std::vector<int> channel_fds;  // write ends the provider registered
  int async_fd = -1;             // Hello's pipe write end
  std::vector<ctl::Op> refuse;   // ops answered with EINVAL
  int mr_fd = -1;                // dup of the last RegMr memfd
  std::uint64_t mr_map_len = 0;
  // The arena Hello hands out: chunks of kChunk, regions placed one after
  // the other (a region that would cross a chunk starts the next one), never
  // reused. Its first page is the doorbell page (kBells doorbells); a QP
  // with handle h gets doorbells 2h and 2h+1 (mod kBells), an SRQ h gets h
  // (mod kBells).
  static constexpr std::uint64_t kChunk = 1 << 20;
  static constexpr std::uint32_t kMaxChunks = 64;
  static constexpr std::uint32_t kBells = 64;
  shm::ArenaMap arena;
  std::uint64_t arena_next = 0;
  void* bell_page = nullptr;
  std::size_t bell_bytes = 0;
  shm::DoorbellGeometry bell_geo{};
  // `bytes` (rounded up to a page) of the arena: *offset and the address.
  void* place(std::uint64_t bytes, std::uint64_t* offset) {
    bytes = (bytes + 4095) & ~std::uint64_t{4095};
    if (bytes > kChunk) std::abort();
    if (arena_next / kChunk != (arena_next + bytes - 1) / kChunk) {
      arena_next = (arena_next / kChunk + 1) * kChunk;
    }
    while (arena.grown() * kChunk < arena_next + bytes) {
      std::uint32_t i = 0;
      if (!arena.grow(&i).ok()) std::abort();
    }
    void* p = nullptr;
    if (!arena.locate(arena_next, bytes, &p).ok()) std::abort();
    *offset = arena_next;
    arena_next += bytes;
    return p;
  }
  // Clears the page and returns the doorbells that were rung since the last
  // call.
  std::vector<std::uint32_t> rung() {
    shm::DoorbellCollector c;
    std::vector<std::uint32_t> out;
    if (c.attach(bell_page, bell_bytes, bell_geo) != shm::DoorbellError::kOk) {
      std::abort();
    }
    c.collect([&](std::uint32_t i) { out.push_back(i); });
    return out;
  }

  ~MiniDaemon() {
    for (int fd : channel_fds) ::close(fd);
    if (async_fd >= 0) ::close(async_fd);
    if (mr_fd >= 0) ::close(mr_fd);
  }

  std::shared_ptr<FakeRing> make_ring(std::size_t elem_bytes, std::uint32_t depth,
                                      std::size_t extra = 0) {
    auto ring = std::make_shared<FakeRing>();
    if (shm::make_geometry(elem_bytes, depth, &ring->geo) != shm::RingError::kOk) std::abort();
    ring->ring_bytes = ring->geo.bytes();
    ring->bytes = (ring->ring_bytes + extra + 4095) & ~std::size_t{4095};
    ring->mem = place(ring->bytes, &ring->offset);
    if (shm::ring_init(ring->mem, ring->ring_bytes, ring->geo) != shm::RingError::kOk) {
      std::abort();
    }
    return ring;
  }
};

inline Reply MiniDaemon::handle(const Request& r) {
  std::lock_guard<std::mutex> g(mu);
  for (ctl::Op op : refuse) {
    if (op == r.op) return Reply::error(EINVAL);
  }
  switch (r.op) {
    case ctl::Op::kHello: {
      if (r.fds.size() != 1) return Reply::error(EBADMSG);
      async_fd = ::dup(r.fds[0]);
      ctl::HelloRep rep{};
      std::snprintf(rep.device.fw_ver, sizeof(rep.device.fw_ver), "fake 1.0");
      rep.device.max_qp_wr = 16384;
      rep.device.max_sge = 32;
      rep.device.max_cqe = 65535;
      rep.device.phys_port_cnt = 1;
      rep.device.device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN;
      rep.gid_table_len = 16;
      if (shm::make_doorbell_geometry(kBells, &bell_geo) != shm::DoorbellError::kOk ||
          !arena.create("fake-arena", kChunk, kMaxChunks).ok()) {
        std::abort();
      }
      std::uint64_t bell_offset = 0;
      bell_page = place(bell_geo.bytes(), &bell_offset);
      bell_bytes = bell_geo.bytes();
      rep.doorbell_count = kBells;
      rep.doorbell_bytes = bell_bytes;
      rep.doorbell_offset = bell_offset;
      rep.arena_chunk_bytes = kChunk;
      rep.arena_max_chunks = kMaxChunks;
      return Reply::of(rep, {::dup(arena.fd())});
    }
    case ctl::Op::kQueryPort: {
      ctl::QueryPortRep rep{};
      rep.attr.state = IBV_PORT_ACTIVE;
      rep.attr.active_mtu = IBV_MTU_4096;
      rep.attr.gid_tbl_len = 16;
      return Reply::of(rep);
    }
    case ctl::Op::kAllocPd: {
      ctl::AllocPdRep rep{};
      rep.pd_handle = next_handle++;
      return Reply::of(rep);
    }
    case ctl::Op::kRegMr: {
      const auto req = r.as<ctl::RegMrReq>();
      const std::size_t fds = req.source == ctl::MrSource::kMemfd ? 1 : 0;
      if (r.fds.size() != fds) return Reply::error(EBADMSG);
      ctl::RegMrRep rep{};
      rep.mr_handle = next_handle++;
      rep.lkey = 0x100 + rep.mr_handle;
      rep.rkey = 0x200 + rep.mr_handle;
      mrs[rep.mr_handle] = req;
      if (mr_fd >= 0) ::close(mr_fd);
      mr_fd = fds == 1 ? ::dup(r.fds[0]) : -1;
      mr_map_len = req.map_len;
      return Reply::of(rep);
    }
    case ctl::Op::kReregMr: {
      const auto req = r.as<ctl::ReregMrReq>();
      if (mrs.count(req.mr_handle) == 0) return Reply::error(ENOENT);
      ctl::ReregMrRep rep{};
      rep.lkey = 0x300 + req.mr_handle;
      rep.rkey = 0x400 + req.mr_handle;
      return Reply::of(rep);
    }
    case ctl::Op::kCreateCompChannel: {
      if (r.fds.size() != 1) return Reply::error(EBADMSG);
      channel_fds.push_back(::dup(r.fds[0]));
      ctl::CreateCompChannelRep rep{};
      rep.channel_handle = next_handle++;
      return Reply::of(rep);
    }
    case ctl::Op::kCreateCq:
    case ctl::Op::kResizeCq: {
      std::uint32_t cqe = 0, handle = 0;
      if (r.op == ctl::Op::kCreateCq) {
        cqe = r.as<ctl::CreateCqReq>().cqe;
        handle = next_handle++;
      } else {
        const auto req = r.as<ctl::ResizeCqReq>();
        cqe = req.cqe;
        handle = req.cq_handle;
        if (cqs.count(handle) == 0) return Reply::error(ENOENT);
      }
      auto ring = make_ring(shm::cq_elem_bytes(), cqe, ctl::kCqNotifyBytes);
      if (r.op == ctl::Op::kResizeCq) {
        // Move what was not polled yet, as uroced does.
        shm::CqConsumer from;
        shm::CqProducer to;
        FakeRing& old = *cqs[handle];
        from.attach(old.mem, old.ring_bytes, old.geo);
        to.attach(ring->mem, ring->ring_bytes, ring->geo);
        ib_uverbs_wc wc;
        while (from.try_pop(&wc)) to.try_push(wc);
      }
      cqs[handle] = ring;
      ctl::CreateCqRep rep{};
      rep.cq_handle = handle;
      rep.cqe = ring->geo.capacity();
      rep.log2_elem_size = ring->geo.log2_elem_size;
      rep.log2_slots = ring->geo.log2_slots;
      rep.ring_bytes = ring->ring_bytes;
      rep.region_bytes = ring->bytes;
      rep.region_offset = ring->offset;
      return Reply::of(rep);
    }
    case ctl::Op::kCreateQp: {
      // As uroced: a DCT has no SQ ring, no DC QP an RQ ring.
      const auto req = r.as<ctl::CreateQpReq>();
      const std::uint32_t handle = next_handle++;
      qps[handle] = req;
      ctl::CreateQpRep rep{};
      rep.qp_handle = handle;
      rep.qpn = next_qpn++;
      rep.cap = req.cap;
      if (req.dc_type != ctl::kDcDct) {
        const std::uint32_t max_sge = std::max(req.cap.max_send_sge, 1u);
        auto sq = make_ring(shm::sq_elem_bytes(max_sge, req.cap.max_inline_data),
                            std::max(req.cap.max_send_wr, 1u));
        sqs[handle] = sq;
        rep.cap.max_send_wr = sq->geo.capacity();
        rep.sq_log2_elem_size = sq->geo.log2_elem_size;
        rep.sq_log2_slots = sq->geo.log2_slots;
        rep.sq_bytes = sq->bytes;
        rep.sq_offset = sq->offset;
      }
      rep.sq_doorbell = (2 * handle) % kBells;
      rep.rq_doorbell = (2 * handle + 1) % kBells;
      if (req.srq_handle == 0 && req.dc_type == ctl::kDcNone) {
        auto rq = make_ring(shm::rq_elem_bytes(std::max(req.cap.max_recv_sge, 1u)),
                            std::max(req.cap.max_recv_wr, 1u));
        rqs[handle] = rq;
        rep.cap.max_recv_wr = rq->geo.capacity();
        rep.rq_log2_elem_size = rq->geo.log2_elem_size;
        rep.rq_log2_slots = rq->geo.log2_slots;
        rep.rq_bytes = rq->bytes;
        rep.rq_offset = rq->offset;
      }
      return Reply::of(rep);
    }
    case ctl::Op::kModifyQp: {
      const auto req = r.as<ctl::ModifyQpReq>();
      if (qps.count(req.qp_handle) == 0) return Reply::error(ENOENT);
      last_modify[req.qp_handle] = req;
      return Reply::ok();
    }
    case ctl::Op::kQueryQp: {
      const auto req = r.as<ctl::QueryQpReq>();
      if (qps.count(req.qp_handle) == 0) return Reply::error(ENOENT);
      ctl::QueryQpRep rep{};
      if (last_modify.count(req.qp_handle) != 0) rep.attr = last_modify[req.qp_handle].attr;
      rep.cap = qps[req.qp_handle].cap;
      rep.sq_sig_all = qps[req.qp_handle].sq_sig_all;
      return Reply::of(rep);
    }
    case ctl::Op::kCreateSrq: {
      const auto req = r.as<ctl::CreateSrqReq>();
      const std::uint32_t handle = next_handle++;
      auto ring = make_ring(shm::rq_elem_bytes(std::max(req.attr.max_sge, 1u)),
                            std::max(req.attr.max_wr, 1u));
      srqs[handle] = ring;
      ctl::CreateSrqRep rep{};
      rep.srq_handle = handle;
      rep.srq_num = 0x77;
      rep.attr = req.attr;
      rep.attr.max_wr = ring->geo.capacity();
      rep.log2_elem_size = ring->geo.log2_elem_size;
      rep.log2_slots = ring->geo.log2_slots;
      rep.rq_bytes = ring->bytes;
      rep.rq_offset = ring->offset;
      rep.doorbell = handle % kBells;
      return Reply::of(rep);
    }
    case ctl::Op::kQuerySrq: {
      ctl::QuerySrqRep rep{};
      rep.attr.max_wr = 7;
      rep.attr.srq_limit = 3;
      return Reply::of(rep);
    }
    case ctl::Op::kCreateAh: {
      const auto req = r.as<ctl::CreateAhReq>();
      const std::uint32_t handle = next_handle++;
      ahs[handle] = req;
      ctl::CreateAhRep rep{};
      rep.ah_handle = handle;
      return Reply::of(rep);
    }
    case ctl::Op::kDestroyQp: {
      const auto h = r.as<ctl::DestroyQpReq>().qp_handle;
      if (qps.erase(h) == 0) return Reply::error(ENOENT);
      sqs.erase(h);
      rqs.erase(h);
      return Reply::ok();
    }
    case ctl::Op::kDestroyCq:
      return cqs.erase(r.as<ctl::DestroyCqReq>().cq_handle) != 0 ? Reply::ok()
                                                                 : Reply::error(ENOENT);
    case ctl::Op::kDestroySrq:
      return srqs.erase(r.as<ctl::DestroySrqReq>().srq_handle) != 0 ? Reply::ok()
                                                                    : Reply::error(ENOENT);
    case ctl::Op::kDeregMr:
      return mrs.erase(r.as<ctl::DeregMrReq>().mr_handle) != 0 ? Reply::ok() : Reply::error(ENOENT);
    case ctl::Op::kDestroyAh:
      return ahs.erase(r.as<ctl::DestroyAhReq>().ah_handle) != 0 ? Reply::ok()
                                                                 : Reply::error(ENOENT);
    case ctl::Op::kDeallocPd:
    case ctl::Op::kModifySrq:
    case ctl::Op::kDestroyCompChannel: return Reply::ok();
    default: return Reply::error(EOPNOTSUPP);
  }
}

// An ibv_context the provider's verbs accept, without libibverbs: our
// UroceContext with a ContextState connected to a FakeServer running a
// MiniDaemon. The verbs libibverbs would wrap (ibv_create_cq's
// verbs_init_cq, ibv_alloc_pd's context, ...) are completed by the
// helpers below the way libibverbs does it.
class FakeContext {
 public:
  FakeContext() : server_([this](const Request& r) { return daemon(r); }) {
    uctx_ = static_cast<UroceContext*>(std::calloc(1, sizeof(UroceContext)));
    st_ = make_object<ContextState>();
    st_->ctl.adopt(server_.take_client());
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) std::abort();
    async_rd_ = p[0];
    st_->async_write_fd = p[1];
    ctl::HelloReq req{};
    std::strcpy(req.ibdev, "uroce0");
    const int fds[1] = {p[1]};
    int arena_fd = -1;
    if (st_->ctl.call<ctl::Op::kHello>(req, &st_->hello, fds, {&arena_fd, 1}, 1) != 0 ||
        attach_arena(st_, arena_fd) != 0) {
      std::abort();
    }
    uctx_->st = st_;
    uctx_->vctx.context.num_comp_vectors = 1;
    uctx_->vctx.context.async_fd = async_rd_;
    pthread_mutex_init(&uctx_->vctx.context.mutex, nullptr);
  }
  ~FakeContext() {
    free_object(st_);
    ::close(async_rd_);
    std::free(uctx_);
  }
  FakeContext(const FakeContext&) = delete;
  FakeContext& operator=(const FakeContext&) = delete;

  ibv_context* ctx() { return &uctx_->vctx.context; }
  ContextState* st() { return st_; }
  FakeServer& server() { return server_; }
  int async_read_fd() const { return async_rd_; }

  // ibv_create_cq as libibverbs runs it (verbs_init_cq after the op).
  ibv_cq* create_cq(int cqe, ibv_comp_channel* ch = nullptr) {
    ibv_cq* cq = provider::create_cq(ctx(), cqe, ch, 0);
    if (cq != nullptr) init_cq(cq, ch);
    return cq;
  }
  void init_cq(ibv_cq* cq, ibv_comp_channel* ch) {
    cq->context = ctx();
    cq->channel = ch;
    cq->comp_events_completed = 0;
    cq->async_events_completed = 0;
    pthread_mutex_init(&cq->mutex, nullptr);
    pthread_cond_init(&cq->cond, nullptr);
  }
  ibv_pd* alloc_pd() { return provider::alloc_pd(ctx()); }
  ibv_srq* create_srq(ibv_pd* pd, std::uint32_t max_wr, std::uint32_t max_sge) {
    ibv_srq_init_attr a{};
    a.attr.max_wr = max_wr;
    a.attr.max_sge = max_sge;
    ibv_srq* srq = provider::create_srq(pd, &a);
    if (srq != nullptr) {
      srq->context = ctx();
      srq->pd = pd;
      srq->events_completed = 0;
      pthread_mutex_init(&srq->mutex, nullptr);
      pthread_cond_init(&srq->cond, nullptr);
    }
    return srq;
  }
  ibv_ah* create_ah(ibv_pd* pd) {
    ibv_ah_attr a{};
    a.is_global = 1;
    a.port_num = 1;
    ibv_ah* ah = provider::create_ah(pd, &a);
    if (ah != nullptr) {
      ah->context = ctx();
      ah->pd = pd;
    }
    return ah;
  }

  // ibv_create_qp_ex on our provider; `send_ops` != 0 asks for ibv_qp_ex.
  ibv_qp* create_qp(ibv_pd* pd, ibv_cq* cq, ibv_qp_type type, ibv_srq* srq = nullptr,
                    std::uint64_t send_ops = 0, std::uint32_t max_wr = 8, std::uint32_t max_sge = 2,
                    std::uint32_t max_inline = 64) {
    ibv_qp_init_attr_ex a{};
    a.qp_type = type;
    a.send_cq = cq;
    a.recv_cq = cq;
    a.srq = srq;
    a.cap.max_send_wr = max_wr;
    a.cap.max_recv_wr = max_wr;
    a.cap.max_send_sge = max_sge;
    a.cap.max_recv_sge = max_sge;
    a.cap.max_inline_data = max_inline;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    if (send_ops != 0) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = send_ops;
    }
    return provider::create_qp_ex(ctx(), &a);
  }
  // uroce_dv_create_qp on our provider (dv.cpp has checked the context):
  // a DCT with `key` over an SRQ and a receive CQ, or a DCI over a send CQ
  // with 2^log_streams streams and the ibv_wr_* API (every RC send op).
  ibv_qp* create_dct(ibv_pd* pd, ibv_cq* cq, ibv_srq* srq, std::uint64_t key) {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.recv_cq = cq;
    a.srq = srq;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    uroce_dv_qp_init_attr dv{};
    dv.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
    dv.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCT;
    dv.dc_init_attr.dct_access_key = key;
    return provider::dv_create_qp(ctx(), &a, &dv);
  }
  ibv_qp* create_dci(ibv_pd* pd, ibv_cq* cq, std::uint8_t log_streams = 0,
                     std::uint8_t log_errored = 0) {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.send_cq = cq;
    a.cap.max_send_wr = 8;
    a.cap.max_send_sge = 2;
    a.cap.max_inline_data = 64;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.pd = pd;
    a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
    uroce_dv_qp_init_attr dv{};
    dv.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC | UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
    dv.dc_init_attr.dc_type = UROCE_DV_DCTYPE_DCI;
    dv.dc_init_attr.dci_streams = {log_streams, log_errored};
    return provider::dv_create_qp(ctx(), &a, &dv);
  }
  // The daemon's rings of a QP.
  FakeRing& sq_of(ibv_qp* qp) {
    std::lock_guard<std::mutex> g(daemon.mu);
    return *daemon.sqs.at(qp->handle);
  }
  FakeRing& rq_of(ibv_qp* qp) {
    std::lock_guard<std::mutex> g(daemon.mu);
    return *daemon.rqs.at(qp->handle);
  }

  MiniDaemon daemon;

 private:
  FakeServer server_;
  UroceContext* uctx_ = nullptr;
  ContextState* st_ = nullptr;
  int async_rd_ = -1;
};

}  // namespace uroce::provider::testing
