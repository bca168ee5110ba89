// DC QPs in the Vnic (datapath/engine/vnic/dc.h): a DCI on host A and DCTs
// on host B (one SRQ), through the shared rings, the doorbells, the AH
// table and a simulated link: every operation with its bytes checked, one
// DCI over three DCTs, four streams, what the first message to a new DCT
// costs on the wire, a wrong key and an unknown AH, DC packets to the wrong
// kind of QP, the DC path MTU, IPv6, and the status lines.
#include <gtest/gtest.h>

#include <cstring>

#include "datapath/wire/ipv6.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

namespace qa = transport::qp_attr;

constexpr std::uint64_t kKey = 0x1122334455667788ull;
constexpr ObjId kAh = 5;
constexpr ObjId kSrq = 40;

struct Dc : TwoHosts {
  std::unique_ptr<ProvCq> ascq, brcq;
  std::unique_ptr<ProvSrq> srq;

  void SetUp() override {
    ascq = a.make_cq(1);
    brcq = b.make_cq(2);
    srq = std::make_unique<ProvSrq>(kSrq, 63);
    SrqCreate sc;
    sc.id = kSrq;
    sc.srq_num = 3;
    sc.pd = Host::kPd;
    sc.max_sge = ProvQp::kMaxSge;
    sc.ring = srq->ring.mem();
    sc.async_fd = b.async.wr;
    sc.client = Host::kClient;
    ASSERT_EQ(b.vnic.create_srq(sc), 0);
    b.bind_srq(*srq, kSrq);
    AhCreate h;
    h.id = kAh;
    h.client = Host::kClient;
    h.pd = Host::kPd;
    h.dmac = kMacB;
    h.dip = kIpB;
    ASSERT_EQ(a.vnic.create_ah(h), 0);
  }

  // A DCI on A (send CQ 1) in RTS.
  std::unique_ptr<ProvQp> dci(ObjId id, std::uint8_t log_streams = 0,
                              std::uint8_t log_errored = 0) {
    auto q = std::make_unique<ProvQp>(31, false);
    q->id = id;
    EXPECT_EQ(a.vnic.alloc_qpn(&q->qpn), 0);
    QpCreate c = create(id, q->qpn, QpType::kDci);
    c.send_cq = 1;
    c.sq = q->sq->mem();
    c.dci_log_streams = log_streams;
    c.dci_log_errored = log_errored;
    EXPECT_EQ(a.vnic.create_qp(c), 0);
    q->bells = &a.bells;
    EXPECT_EQ(a.vnic.qp_doorbells(id, &q->sq_db, &q->rq_db), 0);
    transport::QpAttrValues v;
    v.qp_state = QpState::kInit;
    EXPECT_EQ(a.modify(id, qa::kState | qa::kPkeyIndex | qa::kPort, v), 0);
    v.qp_state = QpState::kRtr;
    v.path_mtu = wire::PathMtu::k1024;
    EXPECT_EQ(a.modify(id, qa::kState | qa::kPathMtu, v), 0);
    v.qp_state = QpState::kRts;
    v.timeout = 10;
    v.retry_cnt = 3;
    v.rnr_retry = 7;
    v.sq_psn = 0;
    v.max_rd_atomic = 4;
    EXPECT_EQ(a.modify(id,
                       qa::kState | qa::kTimeout | qa::kRetryCnt | qa::kRnrRetry | qa::kSqPsn |
                           qa::kMaxQpRdAtomic,
                       v),
              0);
    return q;
  }

  // A DCT on B (receive CQ 2, the SRQ) in RTR; returns its DCT number.
  std::uint32_t dct(ObjId id, std::uint64_t key = kKey) {
    std::uint32_t qpn = 0;
    EXPECT_EQ(b.vnic.alloc_qpn(&qpn), 0);
    QpCreate c = create(id, qpn, QpType::kDct);
    c.recv_cq = 2;
    c.srq = kSrq;
    c.dct_key = key;
    c.async_fd = b.async.wr;
    EXPECT_EQ(b.vnic.create_qp(c), 0);
    transport::QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qp_access_flags = transport::access::kRemoteAny;
    EXPECT_EQ(b.modify(id, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v), 0);
    v.qp_state = QpState::kRtr;
    v.min_rnr_timer = 1;
    v.path_mtu = wire::PathMtu::k1024;
    EXPECT_EQ(b.modify(id, qa::kState | qa::kMinRnrTimer | qa::kAv | qa::kPathMtu, v), 0);
    return qpn;
  }

  QpCreate create(ObjId id, std::uint32_t qpn, QpType type) {
    QpCreate c;
    c.id = id;
    c.client = Host::kClient;
    c.type = type;
    c.qpn = qpn;
    c.pd = Host::kPd;
    c.max_send_sge = ProvQp::kMaxSge;
    c.max_inline = ProvQp::kMaxInline;
    c.user_handle = 0xA0000000ull + id;
    c.async_fd = a.async.wr;
    return c;
  }

  // One WQE on the DCI for DCT `dctn` (through AH `ah`, on `stream`).
  void post(ProvQp& q, const shm::SendWqeFields& f, std::vector<shm::WqeSge> sges,
            std::uint32_t dctn, std::uint64_t key = kKey, std::uint16_t stream = 0,
            std::uint32_t ah = kAh) {
    ASSERT_GT(q.sqp.free_slots(), 0u);
    ASSERT_EQ(shm::write_send_fixed(q.sq_slot(), f), shm::WqeWriteError::kOk);
    if (!sges.empty()) {
      ASSERT_EQ(shm::set_send_sges(q.sq_slot(), sges, ProvQp::kMaxSge), shm::WqeWriteError::kOk);
    }
    ASSERT_EQ(shm::set_send_dc(q.sq_slot(), shm::WqeDcAddr{ah, dctn, key, stream}),
              shm::WqeWriteError::kOk);
    q.publish_sq();
  }

  // Polls both hosts until A's send CQ gave `n` completions (or a bound).
  std::vector<ib_uverbs_wc> wait_send(std::size_t n, int limit = 20'000) {
    std::vector<ib_uverbs_wc> got;
    for (int i = 0; i < limit && got.size() < n; ++i) {
      run(1);
      for (const ib_uverbs_wc& w : ascq->poll()) got.push_back(w);
    }
    return got;
  }

  void fill(Host& h, std::size_t off, std::size_t n, std::uint8_t seed) {
    for (std::size_t i = 0; i < n; ++i) h.mem[off + i] = static_cast<std::uint8_t>(seed + i * 13);
  }
};

shm::SendWqeFields op(std::uint64_t id, std::uint32_t opcode, std::uint64_t remote,
                      std::uint32_t rkey) {
  shm::SendWqeFields f;
  f.wr_id = id;
  f.opcode = opcode;
  f.send_flags = IBV_SEND_SIGNALED;
  f.remote_addr = remote;
  f.rkey = rkey;
  return f;
}

TEST_F(Dc, Ops_SendWriteReadAtomicsBytesChecked) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  srq->post_recv(100, {b.sge(0x100, 256)});
  fill(a, 0, 200, 1);
  post(*q, send_wqe(1), {a.sge(0, 200)}, t);
  fill(a, 0x1000, 5000, 2);
  post(*q, op(2, IBV_WR_RDMA_WRITE, b.va(0x2000), b.key), {a.sge(0x1000, 5000)}, t);
  fill(b, 0x5000, 3000, 3);
  post(*q, op(3, IBV_WR_RDMA_READ, b.va(0x5000), b.key), {a.sge(0x8000, 3000)}, t);
  const std::uint64_t v = 40;
  std::memcpy(b.mem.data() + 0x9000, &v, 8);
  shm::SendWqeFields fa = op(4, IBV_WR_ATOMIC_FETCH_AND_ADD, b.va(0x9000), b.key);
  fa.compare_add = 2;
  post(*q, fa, {a.sge(0x9100, 8)}, t);
  shm::SendWqeFields cs = op(5, IBV_WR_ATOMIC_CMP_AND_SWP, b.va(0x9000), b.key);
  cs.compare_add = 42;
  cs.swap = 99;
  post(*q, cs, {a.sge(0x9108, 8)}, t);
  const auto wc = wait_send(5);
  ASSERT_EQ(wc.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(wc[i].wr_id, i + 1);
    EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << i;
    EXPECT_EQ(wc[i].qp_num, q->qpn);
  }
  const auto r = brcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 100u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[0].byte_len, 200u);
  EXPECT_EQ(r[0].qp_num, t);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x100, 200), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 0x1000, b.mem.data() + 0x2000, 5000), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 0x8000, b.mem.data() + 0x5000, 3000), 0);
  std::uint64_t got = 0;
  std::memcpy(&got, a.mem.data() + 0x9100, 8);
  EXPECT_EQ(got, 40u);
  std::memcpy(&got, a.mem.data() + 0x9108, 8);
  EXPECT_EQ(got, 42u);
  std::memcpy(&got, b.mem.data() + 0x9000, 8);
  EXPECT_EQ(got, 99u);
  EXPECT_EQ(a.vnic.counters().rx_dc_no_target + b.vnic.counters().rx_dc_no_target, 0u);
  ASSERT_NE(b.vnic.dc_pool(), nullptr);
  EXPECT_EQ(b.vnic.dc_pool()->table().counters().opened, 1u);
  EXPECT_EQ(a.vnic.dc_pool(), nullptr);  // no DCT on A: no pool
}

// A receive published to the DCT's SRQ without its doorbell (so no
// doorbell phase takes it) is found by the RX path when the SEND arrives
// (doorbells.h, rx_refill_srq): no RNR NAK.
TEST_F(Dc, Dct_SendFindsASrqReceiveWhoseDoorbellNeverRang) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  run(4);
  srq->bells = nullptr;
  srq->post_recv(100, {b.sge(0x100, 256)});
  fill(a, 0, 200, 1);
  post(*q, send_wqe(1), {a.sge(0, 200)}, t);
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  const auto r = brcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 100u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[0].byte_len, 200u);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x100, 200), 0);
  EXPECT_EQ(b.vnic.counters().rx_recv_refills, 1u);
  EXPECT_EQ(status_of(b.vnic, 20).rc.tx_rnr_naks, 0u);
}

// The first message to a DCT opens its context on the way: one request
// and one ACK, no handshake round trip.
TEST_F(Dc, FirstMessage_OneRequestOneResponse) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  run(4);
  const std::uint64_t a0 = a.vnic.counters().tx_frames;
  const std::uint64_t b0 = b.vnic.counters().tx_frames;
  fill(a, 0, 64, 7);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0x400), b.key), {a.sge(0, 64)}, t);
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(a.vnic.counters().tx_frames - a0, 1u);
  EXPECT_EQ(b.vnic.counters().tx_frames - b0, 1u);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x400, 64), 0);
  const QpStatus s = status_of(a.vnic, 10);
  ASSERT_EQ(s.dci_streams.size(), 1u);
  EXPECT_TRUE(s.dci_streams[0].bound);
  EXPECT_FALSE(s.dci_streams[0].syn);
  EXPECT_EQ(s.dci_streams[0].dctn, t);
  EXPECT_EQ(s.dci_streams[0].ctr.connects, 1u);
  const QpStatus d = status_of(b.vnic, 20);
  EXPECT_EQ(d.type, QpType::kDct);
  EXPECT_EQ(d.dct.rx_requests, 1u);
  EXPECT_EQ(d.dct_contexts, 1u);
  // Idle just short of the device's dc_idle_disconnect_us the stream stays
  // connected; past it, it lets its context go (run() steps 500 ns).
  const int idle = static_cast<int>(VnicConfig{}.dc_idle_disconnect_us) * 2;
  run(idle - 20);
  EXPECT_TRUE(status_of(a.vnic, 10).dci_streams[0].bound);
  EXPECT_EQ(status_of(b.vnic, 20).dct_contexts, 1u);
  run(200);
  EXPECT_FALSE(status_of(a.vnic, 10).dci_streams[0].bound);
  EXPECT_EQ(status_of(b.vnic, 20).dct_contexts, 0u);
  EXPECT_EQ(b.vnic.dc_pool()->table().counters().retired_disconnect, 1u);
}

// One stream, three DCTs in turn: each switch waits for the stream to
// drain; every WR completes in order with its bytes where they belong.
TEST_F(Dc, RoundRobin_OneDciThreeDcts) {
  auto q = dci(10);
  const std::uint32_t t[3] = {dct(20), dct(21), dct(22)};
  for (std::uint32_t i = 0; i < 12; ++i) {
    fill(a, i * 256, 256, static_cast<std::uint8_t>(i));
    post(*q, op(i + 1, IBV_WR_RDMA_WRITE, b.va(0x4000 + i * 256), b.key), {a.sge(i * 256, 256)},
         t[i % 3]);
  }
  const auto wc = wait_send(12);
  ASSERT_EQ(wc.size(), 12u);
  for (std::uint32_t i = 0; i < 12; ++i) {
    EXPECT_EQ(wc[i].wr_id, i + 1);
    EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
  }
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x4000, 12 * 256), 0);
  const QpStatus s = status_of(a.vnic, 10);
  EXPECT_EQ(s.dci_streams[0].ctr.connects, 12u);
  EXPECT_GE(s.dci_streams[0].ctr.wait_switch, 1u);
  for (ObjId id : {20u, 21u, 22u}) EXPECT_EQ(status_of(b.vnic, id).dct.rx_requests, 4u);
  EXPECT_EQ(b.vnic.dc_pool()->table().counters().retired_disconnect, 11u);
}

// Four streams to four DCTs at once: one connection each, per-stream
// order, no switch waits.
TEST_F(Dc, Streams_FourInParallel) {
  auto q = dci(10, 2);
  std::uint32_t t[4];
  for (std::uint32_t k = 0; k < 4; ++k) t[k] = dct(20 + k);
  fill(a, 0, 2048, 9);
  std::uint64_t id = 1;
  for (std::uint32_t n = 0; n < 5; ++n) {
    for (std::uint16_t st = 0; st < 4; ++st) {
      post(*q, op(id++, IBV_WR_RDMA_WRITE, b.va(0x2000 * st), b.key), {a.sge(0, 2048)}, t[st], kKey,
           st);
    }
  }
  const auto wc = wait_send(20);
  ASSERT_EQ(wc.size(), 20u);
  std::uint64_t last[4] = {0, 0, 0, 0};
  for (const ib_uverbs_wc& w : wc) {
    EXPECT_EQ(w.status, IBV_WC_SUCCESS);
    const std::uint64_t st = (w.wr_id - 1) % 4;
    EXPECT_GT(w.wr_id, last[st]);
    last[st] = w.wr_id;
  }
  for (std::uint32_t st = 0; st < 4; ++st) {
    EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x2000 * st, 2048), 0);
  }
  const QpStatus s = status_of(a.vnic, 10);
  ASSERT_EQ(s.dci_streams.size(), 4u);
  for (const QpStatus::DcStream& x : s.dci_streams) {
    EXPECT_EQ(x.ctr.connects, 1u);
    EXPECT_EQ(x.ctr.wait_switch, 0u);
  }
  EXPECT_EQ(b.vnic.dc_pool()->table().size(), 4u);
  // A stream the DCI lacks fails its WQE (and, as any bad WQE, the DCI).
  post(*q, op(99, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 8)}, t[0], kKey, 4);
  const auto bad = wait_send(1);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].wr_id, 99u);
  EXPECT_NE(bad[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(a.vnic.counters().wqe_error[static_cast<std::size_t>(shm::WqeError::kBadDcStream)], 1u);
}

TEST_F(Dc, WrongKey_RemoteAccessErrorAndTheDctsEvent) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t, kKey ^ 1);
  post(*q, op(2, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t);
  const auto wc = wait_send(2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
  // No errored streams: the DCI is in ERR and flushes the rest.
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
  QpQuery qq;
  ASSERT_EQ(a.vnic.query_qp(10, &qq), 0);
  EXPECT_EQ(qq.state, QpState::kErr);
  const QpStatus d = status_of(b.vnic, 20);
  EXPECT_EQ(d.dct.key_violations, 1u);
  EXPECT_EQ(d.dct.tx_key_violation, 1u);
  EXPECT_EQ(d.dct_contexts, 0u);
  const auto ev = async_records(b.async);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].element, 0xA0000000ull + 20);
  EXPECT_EQ(ev[0].event_type, static_cast<std::uint32_t>(IBV_EVENT_QP_ACCESS_ERR));
}

// With errored streams only the failing stream's WRs complete in error.
TEST_F(Dc, WrongKey_ErroredStreamOthersGoOn) {
  auto q = dci(10, 1, 1);
  const std::uint32_t t = dct(20);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t, 7, 0);
  post(*q, op(2, IBV_WR_RDMA_WRITE, b.va(64), b.key), {a.sge(0, 64)}, t, kKey, 1);
  const auto wc = wait_send(2);
  ASSERT_EQ(wc.size(), 2u);
  for (const ib_uverbs_wc& w : wc) {
    EXPECT_EQ(w.status, w.wr_id == 1 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS) << w.wr_id;
  }
  QpQuery qq;
  ASSERT_EQ(a.vnic.query_qp(10, &qq), 0);
  EXPECT_EQ(qq.state, QpState::kRts);
  EXPECT_EQ(status_of(a.vnic, 10).dci.stream_recoveries, 1u);
}

// An AH the device does not have fails the WR as UD's does, and the DCI.
TEST_F(Dc, UnknownAh_LocalQpOperationError) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t, kKey, 0, 77);
  const auto wc = wait_send(1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_QP_OP_ERR);
  EXPECT_EQ(a.vnic.counters().ah_missing, 1u);
  EXPECT_EQ(b.vnic.counters().rx_roce, 0u);
  QpQuery qq;
  ASSERT_EQ(a.vnic.query_qp(10, &qq), 0);
  EXPECT_EQ(qq.state, QpState::kErr);
}

// A DC request reaches only a DCT: to a DCI's QPN it is counted and
// dropped. A packet of another transport to a DC QP reaches it, and its
// transport counts and drops it.
TEST_F(Dc, Rx_WrongKindOfQpCounted) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  const std::uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kDcSendOnly;
  sp.dc_eth = wire::DcEthHdr::make(kKey, true, 0x33, 0, 1, 0);
  sp.payload = payload;
  sp.dest_qp = q->qpn;  // a request to a DCI
  std::vector<std::uint8_t> f(wire::roce_frame_size(sp));
  ASSERT_GT(wire::build_roce(sp, f), 0);
  ASSERT_TRUE(b.port.tx(f, clock.now()));
  wire::PacketSpec r;
  r.eth_src = kMacA;
  r.eth_dst = kMacB;
  r.ip_src = kIpA;
  r.ip_dst = kIpB;
  r.opcode = wire::op::kRcSendOnly;
  r.payload = payload;
  r.dest_qp = t;  // an RC request to a DCT
  std::vector<std::uint8_t> g(wire::roce_frame_size(r));
  ASSERT_GT(wire::build_roce(r, g), 0);
  ASSERT_TRUE(a.port.tx(g, clock.now()));
  run(6);
  EXPECT_EQ(a.vnic.counters().rx_dc_no_target, 1u);
  EXPECT_EQ(status_of(a.vnic, 10).engine.rx_packets, 0u);
  EXPECT_EQ(b.vnic.counters().rx_dc_no_target, 0u);
  EXPECT_EQ(status_of(b.vnic, 20).dct.drop_not_dc, 1u);
  EXPECT_EQ(status_of(b.vnic, 20).dct_contexts, 0u);
}

// A DC QP's path MTU is what fits the port with the DC header: at an
// Ethernet MTU of 4160 RC takes 4096 and DC 2048.
TEST(Vnic_Dc, PathMtu_ClampedToTheDcMtu) {
  port::SimLink link(port::SimLinkConfig{});
  Host h(link, 0, kMacA, kIpA, 4160);
  auto cq = h.make_cq(1);
  ProvQp q(15, false);
  ASSERT_EQ(h.vnic.alloc_qpn(&q.qpn), 0);
  QpCreate c;
  c.id = 10;
  c.client = Host::kClient;
  c.type = QpType::kDci;
  c.qpn = q.qpn;
  c.pd = Host::kPd;
  c.send_cq = 1;
  c.max_send_sge = 1;
  c.sq = q.sq->mem();
  ASSERT_EQ(h.vnic.create_qp(c), 0);
  transport::QpAttrValues v;
  v.qp_state = QpState::kInit;
  ASSERT_EQ(h.modify(10, qa::kState | qa::kPkeyIndex | qa::kPort, v), 0);
  v.qp_state = QpState::kRtr;
  v.path_mtu = wire::PathMtu::k4096;
  ASSERT_EQ(h.modify(10, qa::kState | qa::kPathMtu, v), 0);
  QpQuery qq;
  ASSERT_EQ(h.vnic.query_qp(10, &qq), 0);
  EXPECT_EQ(qq.values.path_mtu, wire::PathMtu::k2048);
  EXPECT_EQ(h.vnic.active_mtu(), wire::PathMtu::k4096);
}

TEST(Vnic_Dc, Create_ShapeRules) {
  port::SimLink link(port::SimLinkConfig{});
  Host h(link, 0, kMacA, kIpA);
  auto cq = h.make_cq(1);
  ProvQp q(15, false);
  QpCreate c;
  c.id = 10;
  c.client = Host::kClient;
  c.pd = Host::kPd;
  ASSERT_EQ(h.vnic.alloc_qpn(&c.qpn), 0);
  // A DCT needs an SRQ.
  c.type = QpType::kDct;
  c.recv_cq = 1;
  EXPECT_EQ(h.vnic.create_qp(c), EINVAL);
  // A DCI takes none, and at most 16 streams.
  c.type = QpType::kDci;
  c.recv_cq = 0;
  c.send_cq = 1;
  c.sq = q.sq->mem();
  c.srq = 9;
  EXPECT_EQ(h.vnic.create_qp(c), EINVAL);
  c.srq = 0;
  c.dci_log_streams = 5;
  EXPECT_EQ(h.vnic.create_qp(c), EINVAL);
  c.dci_log_streams = 1;
  c.dci_log_errored = 2;
  EXPECT_EQ(h.vnic.create_qp(c), EINVAL);
  c.dci_log_errored = 1;
  EXPECT_EQ(h.vnic.create_qp(c), 0);
  EXPECT_EQ(h.vnic.qp_count(), 1u);
  // The send CQ it refers to is held.
  EXPECT_EQ(h.vnic.destroy_cq(1), EBUSY);
  EXPECT_EQ(h.vnic.destroy_qp(10), 0);
  EXPECT_EQ(h.vnic.destroy_cq(1), 0);
}

// Destroying a DCT gives its contexts back to the pool; the pool stays.
TEST_F(Dc, Destroy_DctContextsGoBack) {
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t);
  ASSERT_EQ(wait_send(1).size(), 1u);
  EXPECT_EQ(b.vnic.dc_pool()->table().size(), 1u);
  EXPECT_EQ(b.vnic.destroy_srq(kSrq), EBUSY);
  ASSERT_EQ(b.vnic.destroy_qp(20), 0);
  EXPECT_EQ(b.vnic.dc_pool()->table().size(), 0u);
  EXPECT_EQ(b.vnic.destroy_srq(kSrq), 0);
  // A late packet for the gone DCT is counted, not delivered.
  post(*q, op(2, IBV_WR_RDMA_WRITE, b.va(0), b.key), {a.sge(0, 64)}, t);
  run(20);
  EXPECT_GE(b.vnic.counters().rx_dc_no_target, 1u);
}

// Over IPv6 (an AH to B's link-local address): the requests, their ACKs
// and the READ's responses all travel as RoCEv2 over IPv6 (every frame
// either host sent was received as IPv6), one context opens, the bytes
// land.
TEST_F(Dc, Ipv6_WriteAndReadOverLinkLocal) {
  constexpr ObjId kAh6 = 6;
  AhCreate h;
  h.id = kAh6;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.ipv6 = true;
  h.dip6 = wire::Ipv6Addr::link_local(kMacB);
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  auto q = dci(10);
  const std::uint32_t t = dct(20);
  fill(a, 0, 3000, 5);
  post(*q, op(1, IBV_WR_RDMA_WRITE, b.va(0x2000), b.key), {a.sge(0, 3000)}, t, kKey, 0, kAh6);
  fill(b, 0x6000, 2000, 6);
  post(*q, op(2, IBV_WR_RDMA_READ, b.va(0x6000), b.key), {a.sge(0x4000, 2000)}, t, kKey, 0, kAh6);
  const auto wc = wait_send(2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[1].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + 0x2000, 3000), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 0x4000, b.mem.data() + 0x6000, 2000), 0);
  // 3 WRITE packets and the READ request at 1 KiB of path MTU less DC's
  // headers; the ACK and 2 READ responses back.
  EXPECT_GE(b.vnic.counters().rx_roce_ipv6, 4u);
  EXPECT_GE(a.vnic.counters().rx_roce_ipv6, 2u);
  EXPECT_EQ(a.vnic.counters().rx_roce_ipv6 + b.vnic.counters().rx_roce_ipv6,
            a.vnic.counters().tx_frames + b.vnic.counters().tx_frames);
  EXPECT_EQ(status_of(b.vnic, 20).dct_contexts, 1u);
  EXPECT_EQ(a.vnic.counters().rx_dc_no_target + b.vnic.counters().rx_dc_no_target, 0u);
}

}  // namespace
}  // namespace uroce::engine::test
