// Test support for the Vnic and Engine tests (not a source mirror): the
// provider's side of the shared rings (memfd regions from
// shm::SharedRegion, WQEs posted and CQEs polled through the in-process
// driver, inproc/post.h, exactly as the provider writes and reads them),
// and a "host" = one Vnic on one end of a simulated link, with registered
// memory, whose QPs come up through inproc/bring_up.h.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/sim_port_io.h"
#include "datapath/engine/vnic.h"
#include "datapath/port/sim_link.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/shared_region.h"
#include "datapath/shm/wqe_write.h"
#include "inproc/bring_up.h"
#include "inproc/post.h"

namespace uroce::engine::test {

using transport::QpState;
using transport::QpType;
using transport::WcStatus;

inline const wire::MacAddr kMacA{{2, 0, 0, 0, 0, 0xa}};
inline const wire::MacAddr kMacB{{2, 0, 0, 0, 0, 0xb}};
inline const wire::Ipv4Addr kIpA{0x0a000001};
inline const wire::Ipv4Addr kIpB{0x0a000002};

// One ring region as the control plane creates it (sealed memfd,
// ring_init'ed); `extra` bytes follow the ring (a CQ's CqNotify).
struct RingRegion {
  shm::SharedRegion region;
  shm::RingGeometry geo{};

  RingRegion(std::size_t elem_bytes, std::uint32_t depth, std::size_t extra = 0) {
    EXPECT_EQ(shm::make_geometry(elem_bytes, depth, &geo), shm::RingError::kOk);
    EXPECT_TRUE(shm::SharedRegion::create("vnic-test", geo.bytes() + extra, &region).ok());
    EXPECT_EQ(shm::ring_init(region.data(), geo.bytes(), geo), shm::RingError::kOk);
  }
  RingMem mem() const { return RingMem{region.data(), geo.bytes(), geo}; }
};

// A CQ: the ring plus its CqNotify word; the provider's consumer.
struct ProvCq {
  ObjId id;
  RingRegion ring;
  shm::CqConsumer cons;

  ProvCq(ObjId i, std::uint32_t depth)
      : id(i), ring(shm::cq_elem_bytes(), depth, ctl::kCqNotifyBytes) {
    EXPECT_EQ(cons.attach(ring.region.data(), ring.geo.bytes(), ring.geo), shm::RingError::kOk);
  }
  ctl::CqNotify* notify() {
    return reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(ring.region.data()) +
                                            ring.geo.bytes());
  }
  void arm(std::uint32_t how = ctl::kCqArmedNext) {
    std::atomic_ref<std::uint32_t>(notify()->armed).store(how, std::memory_order_release);
  }
  std::vector<ib_uverbs_wc> poll() {
    std::vector<ib_uverbs_wc> out;
    ib_uverbs_wc wc[16];
    while (const std::uint32_t n = inproc::poll_cq(cons, wc)) out.insert(out.end(), wc, wc + n);
    return out;
  }
};

// A WQE's fixed fields: its id, opcode and flags (its SGEs are given to
// post_send).
inline shm::SendWqeFields wqe(std::uint64_t wr_id, std::uint32_t opcode,
                              std::uint32_t flags = IBV_SEND_SIGNALED) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = opcode;
  f.send_flags = flags;
  return f;
}

// A signaled SEND WQE's fixed fields.
inline shm::SendWqeFields send_wqe(std::uint64_t wr_id) { return wqe(wr_id, IBV_WR_SEND); }

// A completion's status.
inline WcStatus st(const ib_uverbs_wc& w) { return static_cast<WcStatus>(w.status); }

// A QP's rings on the provider side, and its two doorbells in the client's
// page (rung after every publish, as the provider does).
struct ProvQp {
  static constexpr std::uint32_t kMaxSge = 4;
  static constexpr std::uint32_t kMaxInline = 64;
  ObjId id = 0;
  std::uint32_t qpn = 0;
  std::unique_ptr<RingRegion> sq;
  std::unique_ptr<RingRegion> rq;
  shm::SqProducer sqp;
  shm::RqProducer rqp;
  shm::DoorbellRinger* bells = nullptr;
  std::uint32_t sq_db = 0;
  std::uint32_t rq_db = 0;

  ProvQp(std::uint32_t depth, bool with_rq) {
    sq = std::make_unique<RingRegion>(shm::sq_elem_bytes(kMaxSge, kMaxInline), depth);
    EXPECT_EQ(sqp.attach(sq->region.data(), sq->geo.bytes(), sq->geo), shm::RingError::kOk);
    if (with_rq) {
      rq = std::make_unique<RingRegion>(shm::rq_elem_bytes(kMaxSge), depth);
      EXPECT_EQ(rqp.attach(rq->region.data(), rq->geo.bytes(), rq->geo), shm::RingError::kOk);
    }
  }

  std::span<std::byte> sq_slot() { return {sqp.slot_bytes(), sqp.elem_size()}; }

  // Publishes `n` written slots and rings the ring's doorbell.
  void publish_sq(std::uint32_t n = 1) {
    sqp.publish(n);
    if (bells != nullptr) bells->ring(sq_db);
  }
  void publish_rq(std::uint32_t n = 1) {
    rqp.publish(n);
    if (bells != nullptr) bells->ring(rq_db);
  }

  // Writes one send WQE with `sges` and publishes it.
  void post_send(const shm::SendWqeFields& f, std::vector<shm::WqeSge> sges = {}) {
    ASSERT_EQ(inproc::post_send(sqp, bells, sq_db, f, sges, kMaxSge), 0);
  }
  void post_send_inline(const shm::SendWqeFields& f, const void* p, std::size_t n) {
    ASSERT_EQ(shm::write_send_fixed(sq_slot(), f), shm::WqeWriteError::kOk);
    const shm::InlineBuf b{p, n};
    ASSERT_EQ(shm::set_send_inline(sq_slot(), std::span<const shm::InlineBuf>(&b, 1), kMaxInline),
              shm::WqeWriteError::kOk);
    publish_sq();
  }
  void post_recv(std::uint64_t wr_id, std::vector<shm::WqeSge> sges) {
    ASSERT_EQ(inproc::post_recv(rqp, bells, rq_db, wr_id, sges, kMaxSge), 0);
  }
};

// An SRQ's ring on the provider side; its doorbell once bound to the Host
// that created it (Host::bind_srq).
struct ProvSrq {
  ObjId id;
  RingRegion ring;
  shm::RqProducer rqp;
  shm::DoorbellRinger* bells = nullptr;
  std::uint32_t db = 0;
  ProvSrq(ObjId i, std::uint32_t depth) : id(i), ring(shm::rq_elem_bytes(ProvQp::kMaxSge), depth) {
    EXPECT_EQ(rqp.attach(ring.region.data(), ring.geo.bytes(), ring.geo), shm::RingError::kOk);
  }
  void post_recv(std::uint64_t wr_id, std::vector<shm::WqeSge> sges) {
    ASSERT_EQ(inproc::post_recv(rqp, bells, db, wr_id, sges, ProvQp::kMaxSge), 0);
  }
};

// A pipe both of whose ends the test holds (comp channel, async events);
// the read end is non-blocking so a test can check "nothing written".
struct Pipe {
  int rd = -1;
  int wr = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    rd = fds[0];
    wr = fds[1];
    ::fcntl(rd, F_SETFL, ::fcntl(rd, F_GETFL) | O_NONBLOCK);
  }
  ~Pipe() {
    if (rd >= 0) ::close(rd);
    if (wr >= 0) ::close(wr);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  // Everything readable now.
  std::vector<std::uint8_t> drain() {
    std::vector<std::uint8_t> out;
    std::uint8_t buf[256];
    for (;;) {
      const ssize_t n = ::read(rd, buf, sizeof(buf));
      if (n <= 0) break;
      out.insert(out.end(), buf, buf + n);
    }
    return out;
  }
};

inline std::vector<ib_uverbs_async_event_desc> async_records(Pipe& p) {
  const std::vector<std::uint8_t> b = p.drain();
  std::vector<ib_uverbs_async_event_desc> out(b.size() / sizeof(ib_uverbs_async_event_desc));
  if (!out.empty()) std::memcpy(out.data(), b.data(), out.size() * sizeof(out[0]));
  EXPECT_EQ(b.size() % sizeof(ib_uverbs_async_event_desc), 0u);
  return out;
}

using TestVnic = Vnic<SimPortIo>;

// The status of QP `id` (a test failure when there is none).
template <class V>
QpStatus status_of(const V& v, ObjId id) {
  std::vector<QpStatus> all;
  v.qp_status(&all);
  for (const QpStatus& s : all) {
    if (s.id == id) return s;
  }
  ADD_FAILURE() << "no QP " << id;
  return {};
}

// A signaled RDMA WRITE to `remote` under `rkey`.
inline shm::SendWqeFields write_wqe(std::uint64_t wr_id, std::uint64_t remote, std::uint32_t rkey) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = IBV_WR_RDMA_WRITE;
  f.send_flags = IBV_SEND_SIGNALED;
  f.remote_addr = remote;
  f.rkey = rkey;
  return f;
}

// One Vnic on one end of the link, with 64 KiB of registered memory (PD 1,
// every access) whose iova is its address, as ibv_reg_mr gives, and the
// doorbell page of its one client (kClient), open from the start.
// Io: SimPortIo, or a port type of a test's own over the simulated link (one
// that registers other QP extensions: tests/datapath/policy/test_noop_policy.cpp).
template <class Io>
struct BasicHost {
  static constexpr std::size_t kMem = 64 * 1024;
  static constexpr transport::PdHandle kPd = 1;
  static constexpr std::uint32_t kClient = 7;

  port::SimPort port;
  Io io;
  Vnic<Io> vnic;
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(kMem);
  std::uint32_t key = 0;
  Pipe async;
  shm::SharedRegion page;
  shm::DoorbellRinger bells;

  BasicHost(port::SimLink& link, unsigned ep, const wire::MacAddr& mac, wire::Ipv4Addr ip,
            std::uint32_t eth_mtu = 1500)
      : BasicHost(link, ep, config(mac, ip, eth_mtu)) {}
  BasicHost(port::SimLink& link, unsigned ep, const VnicConfig& cfg)
      : port(link, ep), io(port), vnic(cfg, io) {
    const shm::DoorbellGeometry& g = vnic.doorbell_geometry();
    EXPECT_TRUE(shm::SharedRegion::create("vnic-test-bells", g.bytes(), &page).ok());
    EXPECT_EQ(vnic.open_client(kClient, page.data(), page.size()), 0);
    EXPECT_EQ(bells.attach(page.data(), page.size(), g), shm::DoorbellError::kOk);
    MrCreate m;
    m.desc = {kPd, va(0), mem.size(),
              transport::access::kLocalWrite | transport::access::kRemoteAny, mem.data()};
    int err = -1;
    key = vnic.reg_mr(m, &err);
    EXPECT_EQ(err, 0);
    EXPECT_NE(key, 0u);
  }
  static VnicConfig config(const wire::MacAddr& mac, wire::Ipv4Addr ip, std::uint32_t mtu) {
    VnicConfig c;
    c.name = "test";
    c.mac = mac;
    c.ip = ip;
    c.eth_mtu = mtu;
    c.max_qps = 16;
    c.max_cqs = 16;
    c.max_srqs = 4;
    c.max_mrs = 16;
    c.max_ahs = 16;
    return c;
  }
  std::uint64_t va(std::size_t off) const {
    return reinterpret_cast<std::uint64_t>(mem.data()) + off;
  }
  shm::WqeSge sge(std::size_t off, std::uint32_t len) const {
    return shm::WqeSge{va(off), len, key};
  }

  std::unique_ptr<ProvCq> make_cq(ObjId id, std::uint32_t depth = 63, int channel_fd = -1) {
    auto cq = std::make_unique<ProvCq>(id, depth);
    CqCreate c;
    c.id = id;
    c.ring = cq->ring.mem();
    c.notify = cq->notify();
    c.channel_fd = channel_fd;
    c.user_handle = 0xC0000000ull + id;
    c.async_fd = async.wr;
    EXPECT_EQ(vnic.create_cq(c), 0);
    return cq;
  }

  std::unique_ptr<ProvQp> make_qp(ObjId id, QpType type, ObjId scq, ObjId rcq, ObjId srq = 0,
                                  std::uint32_t depth = 31) {
    auto q = std::make_unique<ProvQp>(depth, srq == 0);
    q->id = id;
    EXPECT_EQ(vnic.alloc_qpn(&q->qpn), 0);
    QpCreate c;
    c.id = id;
    c.client = kClient;
    c.type = type;
    c.qpn = q->qpn;
    c.pd = kPd;
    c.send_cq = scq;
    c.recv_cq = rcq;
    c.srq = srq;
    c.max_send_wr = depth;
    c.max_recv_wr = depth;
    c.max_send_sge = ProvQp::kMaxSge;
    c.max_recv_sge = ProvQp::kMaxSge;
    c.max_inline = ProvQp::kMaxInline;
    c.sq = q->sq->mem();
    if (q->rq) c.rq = q->rq->mem();
    c.user_handle = 0xA0000000ull + id;
    c.async_fd = async.wr;
    EXPECT_EQ(vnic.create_qp(c), 0);
    q->bells = &bells;
    EXPECT_EQ(vnic.qp_doorbells(id, &q->sq_db, &q->rq_db), 0);
    return q;
  }

  // After vnic.create_srq(id) with client kClient: the SRQ's posts ring its
  // doorbell.
  void bind_srq(ProvSrq& s, ObjId id) {
    s.bells = &bells;
    EXPECT_EQ(vnic.srq_doorbell(id, &s.db), 0);
  }

  int modify(ObjId id, std::uint32_t mask, const transport::QpAttrValues& v) {
    QpModify m;
    m.mask = mask;
    m.values = v;
    return vnic.modify_qp(id, m);
  }

  // RC or UC: RESET -> INIT -> RTR -> RTS towards (peer_qpn, mac, ip).
  void connect(ObjId id, QpType type, std::uint32_t peer_qpn, const wire::MacAddr& dmac,
               wire::Ipv4Addr dip, std::uint32_t sq_psn, std::uint32_t rq_psn) {
    transport::PathAddr av;
    av.dmac = dmac;
    av.dip = dip;
    connect_path(id, type, peer_qpn, av, sq_psn, rq_psn);
  }
  // The same towards any resolved path (over IPv6 too).
  void connect_path(ObjId id, QpType type, std::uint32_t peer_qpn, const transport::PathAddr& av,
                    std::uint32_t sq_psn, std::uint32_t rq_psn) {
    inproc::ConnectAttrs c;
    c.type = type;
    c.av = av;
    c.dest_qpn = peer_qpn;
    c.sq_psn = sq_psn;
    c.rq_psn = rq_psn;
    c.timeout = 10;
    c.retry_cnt = 3;
    c.rnr_retry = 3;
    ASSERT_EQ(inproc::bring_up(vnic, id, inproc::connected_bring_up(c)), 0);
  }

  // UD: RESET -> INIT -> RTR -> RTS with `qkey`.
  void ud_up(ObjId id, std::uint32_t qkey) {
    ASSERT_EQ(inproc::bring_up(vnic, id, inproc::ud_bring_up({.qkey = qkey})), 0);
  }
};

using Host = BasicHost<SimPortIo>;

// Two hosts on one simulated link (1 us propagation) and a virtual clock.
// One RC QP (id 10, send CQ 1, recv CQ 2) on each of two hosts, connected
// to each other (A's PSNs start at 100, B's at 500).
struct RcQpPair {
  std::unique_ptr<ProvCq> ascq, arcq, bscq, brcq;
  std::unique_ptr<ProvQp> aqp, bqp;

  template <class A, class B>
  void open(A& a, B& b) {
    ascq = a.make_cq(1);
    arcq = a.make_cq(2);
    bscq = b.make_cq(1);
    brcq = b.make_cq(2);
    aqp = a.make_qp(10, transport::QpType::kRc, 1, 2);
    bqp = b.make_qp(10, transport::QpType::kRc, 1, 2);
    a.connect(10, transport::QpType::kRc, bqp->qpn, kMacB, kIpB, 100, 500);
    b.connect(10, transport::QpType::kRc, aqp->qpn, kMacA, kIpA, 500, 100);
  }
};

// A link of 1 us each way, `bps` of bandwidth (0: unlimited), its random
// faults drawn from `seed`.
inline port::SimLinkConfig link_1us(std::uint64_t bps, std::uint64_t seed) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  d.bandwidth_bps = bps;
  return port::SimLinkConfig::symmetric(d, seed);
}

// Both hosts' Vnics, `n` iterations, 500 ns of `clock` apart.
template <class A, class B>
void poll_both(A& a, B& b, VirtualClock& clock, int n) {
  for (int i = 0; i < n; ++i) {
    a.vnic.poll(clock.now());
    b.vnic.poll(clock.now());
    clock.advance_by(500);
  }
}

// Polls both hosts until `cq` holds `n` completions or `limit` iterations
// pass; the completions, in order.
template <class A, class B>
std::vector<ib_uverbs_wc> poll_until(A& a, B& b, VirtualClock& clock, ProvCq& cq, std::size_t n,
                                     int limit) {
  std::vector<ib_uverbs_wc> got;
  for (int i = 0; i < limit && got.size() < n; ++i) {
    poll_both(a, b, clock, 1);
    for (const ib_uverbs_wc& w : cq.poll()) got.push_back(w);
  }
  return got;
}

struct TwoHosts : ::testing::Test {
  port::SimLinkConfig link_cfg = link_1us(0, 5);
  port::SimLink link{link_cfg};
  Host a{link, 0, kMacA, kIpA};
  Host b{link, 1, kMacB, kIpB};
  VirtualClock clock;

  // Both Vnics, `n` iterations, 500 ns apart.
  void run(int n) { poll_both(a, b, clock, n); }
};

// TwoHosts with RcQpPair's QPs open and each host's memory filled with a
// pattern of its own (A: i * 7 + 1, B: i * 13 + 5).
struct RcPair : TwoHosts, RcQpPair {
  void SetUp() override {
    open(a, b);
    for (std::size_t i = 0; i < Host::kMem; ++i) {
      a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1);
      b.mem[i] = static_cast<std::uint8_t>(i * 13 + 5);
    }
  }
};

}  // namespace uroce::engine::test
