// Selective repeat's handshake and pool as a QP extension
// (datapath/policy/lossy.h), between two Vnics over the simulated link with
// a virtual clock: both on attach it on both ends, a peer with it off keeps
// both plain with at most 4 probes, an empty pool declines, a path MTU
// without room for SR's headers never probes, a destroyed or reset QP gives
// its state back, and a lossy link resends only what was lost.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "datapath/port/pcap_writer.h"
#include "datapath/port/rss.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/sr_hello.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

struct Lossy : ::testing::Test, RcQpPair {
  port::SimLinkConfig link_cfg = link_1us(10'000'000'000, 7);
  std::unique_ptr<port::SimLink> link;
  bool a_on = true, b_on = true;
  std::uint32_t b_pool = 4;
  std::uint32_t eth_mtu = 1500;
  // Both devices' spray_paths and steer_src_port.
  std::uint32_t spray = 1;
  bool steer = false;
  std::uint32_t cap = 256;  // both devices' lossy_cap
  std::unique_ptr<Host> a, b;
  VirtualClock clock;

  VnicConfig config(const wire::MacAddr& mac, wire::Ipv4Addr ip, bool on, std::uint32_t pool) {
    VnicConfig c = Host::config(mac, ip, eth_mtu);
    c.lossy = on;
    c.lossy_qps = pool;
    c.spray_paths = spray;
    c.steer_src_port = steer;
    c.lossy_cap = cap;
    return c;
  }
  void start() {
    link = std::make_unique<port::SimLink>(link_cfg);
    a = std::make_unique<Host>(*link, 0, config(kMacA, kIpA, a_on, 4));
    b = std::make_unique<Host>(*link, 1, config(kMacB, kIpB, b_on, b_pool));
    open(*a, *b);
    run(20);
  }
  void run(int n) { poll_both(*a, *b, clock, n); }
  std::vector<ib_uverbs_wc> wait_send(std::size_t n, int limit = 400'000) {
    return poll_until(*a, *b, clock, *ascq, n, limit);
  }
  static policy::LossyCounters ctr(const Host& h) {
    return h.vnic.policy<policy::Lossy>().counters();
  }
  // The state attached to the host's one RC QP, or null.
  static const transport::RcSr* sr_of(const Host& h) {
    for (std::uint32_t s = 0; s < h.vnic.config().max_qps; ++s) {
      if (const transport::RcSr* r = h.vnic.policy<policy::Lossy>().state_of(s)) return r;
    }
    return nullptr;
  }
  void fill(Host& h, std::size_t off, std::size_t n, std::uint8_t seed) {
    for (std::size_t i = 0; i < n; ++i) h.mem[off + i] = static_cast<std::uint8_t>(seed + i * 7);
  }
  // A `len`-byte WRITE from A to B, completed and intact.
  void write(std::uint64_t id, std::uint32_t len, std::uint8_t seed) {
    fill(*a, 0, len, seed);
    std::memset(b->mem.data(), 0, len);
    aqp->post_send(write_wqe(id, b->va(0), b->key), {a->sge(0, len)});
    const auto wc = wait_send(1);
    ASSERT_EQ(wc.size(), 1u) << id;
    ASSERT_EQ(wc[0].status, IBV_WC_SUCCESS) << id;
    ASSERT_EQ(std::memcmp(a->mem.data(), b->mem.data(), len), 0) << id;
  }
  // The handshake over a lossy link may need more probes, which packets of
  // the connection prompt: small WRITEs (at most 20) until A's connection
  // runs selective repeat; returns how many of A's connections do.
  std::uint64_t negotiate_over_loss() {
    for (int i = 0; i < 20 && ctr(*a).sr_qps == 0; ++i) {
      write(900 + i, 64, 1);
      run(2000);
    }
    return ctr(*a).sr_qps;
  }
};

TEST_F(Lossy, Handshake_BothOn_SrAttachedOnBoth) {
  start();
  for (const Host* h : {a.get(), b.get()}) {
    const policy::LossyCounters c = ctr(*h);
    EXPECT_EQ(c.sr_hello_tx_probes, 1u);
    EXPECT_EQ(c.sr_hello_tx_answers, 1u);
    EXPECT_EQ(c.sr_hello_rx, 2u);
    EXPECT_EQ(c.sr_hello_bad, 0u);
    EXPECT_EQ(c.sr_connections, 1u);
    EXPECT_EQ(c.sr_qps, 1u);
    ASSERT_NE(sr_of(*h), nullptr);
  }
  EXPECT_EQ(ctr(*a).sr_pool_free, 3u);
  EXPECT_EQ(ctr(*b).sr_pool_free, b_pool - 1);
  // The first WQE after the handshake runs selective repeat.
  write(1, 8192, 3);
  EXPECT_TRUE(sr_of(*a)->tx_on);
  EXPECT_EQ(status_of(b->vnic, 10).rc.drop_not_rc, 0u);
}

// lossy_cap: an SR connection never has more packets in flight than the
// device's cap (here 4 of a 64-packet WRITE); the default is the window.
TEST_F(Lossy, Cap_DeviceKeyBoundsPacketsInFlight) {
  cap = 4;
  start();
  ASSERT_NE(sr_of(*a), nullptr);
  EXPECT_EQ(sr_of(*a)->cap, 4u);
  write(1, 64, 1);  // the first WQE after the handshake turns SR on
  ASSERT_TRUE(sr_of(*a)->tx_on);
  const std::uint32_t len = 64 * 1024;
  fill(*a, 0, len, 9);
  aqp->post_send(write_wqe(2, b->va(0), b->key), {a->sge(0, len)});
  std::uint32_t most = 0;
  std::vector<ib_uverbs_wc> wc;
  for (int i = 0; i < 400'000 && wc.empty(); ++i) {
    run(1);
    most = std::max(most, sr_of(*a)->tx.in_flight());
    for (const ib_uverbs_wc& w : ascq->poll()) wc.push_back(w);
  }
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(a->mem.data(), b->mem.data(), len), 0);
  EXPECT_EQ(most, 4u);
}

// A's probe finds B's QP in INIT (no address yet): B answers at its RTR
// instead of probing, and both ends use it.
TEST_F(Lossy, Handshake_ProbeBeforePeerRtr_AnsweredAtRtr) {
  link = std::make_unique<port::SimLink>(link_cfg);
  a = std::make_unique<Host>(*link, 0, config(kMacA, kIpA, true, 4));
  b = std::make_unique<Host>(*link, 1, config(kMacB, kIpB, true, b_pool));
  ascq = a->make_cq(1);
  arcq = a->make_cq(2);
  bscq = b->make_cq(1);
  brcq = b->make_cq(2);
  aqp = a->make_qp(10, transport::QpType::kRc, 1, 2);
  bqp = b->make_qp(10, transport::QpType::kRc, 1, 2);
  inproc::ConnectAttrs c;
  c.type = transport::QpType::kRc;
  c.av.dmac = kMacA;
  c.av.dip = kIpA;
  c.dest_qpn = aqp->qpn;
  c.sq_psn = 500;
  c.rq_psn = 100;
  c.timeout = 10;
  c.retry_cnt = 3;
  c.rnr_retry = 3;
  inproc::BringUp init = inproc::connected_bring_up(c);
  const inproc::BringUp rest = init;
  init.count = 1;  // RESET -> INIT only
  ASSERT_EQ(inproc::bring_up(b->vnic, 10, init), 0);
  a->connect(10, transport::QpType::kRc, bqp->qpn, kMacB, kIpB, 100, 500);
  run(20);
  EXPECT_EQ(ctr(*b).sr_hello_rx, 1u);
  EXPECT_EQ(ctr(*b).sr_hello_tx_answers, 0u);
  EXPECT_EQ(ctr(*a).sr_qps, 0u);
  for (std::size_t i = 1; i < rest.count; ++i) {
    ASSERT_EQ(b->vnic.modify_qp(10, rest.steps[i]), 0);
  }
  run(20);
  EXPECT_EQ(ctr(*b).sr_hello_tx_probes, 0u);
  EXPECT_EQ(ctr(*b).sr_hello_tx_answers, 1u);
  EXPECT_EQ(ctr(*a).sr_hello_tx_probes, 1u);
  EXPECT_EQ(ctr(*a).sr_qps, 1u);
  EXPECT_EQ(ctr(*b).sr_qps, 1u);
  write(1, 8192, 4);
  EXPECT_TRUE(sr_of(*a)->tx_on);
}

// HELLOs sent to B's QP from A's port by hand: what B drops and counts.
TEST_F(Lossy, Control_BadHellos_DroppedAndCounted) {
  start();
  const policy::LossyCounters before = ctr(*b);
  auto send = [&](std::span<const std::uint8_t> payload, wire::Ipv4Addr src) {
    wire::PacketSpec s;
    s.eth_src = kMacA;
    s.eth_dst = kMacB;
    s.ip_src = src;
    s.ip_dst = kIpB;
    s.dest_qp = bqp->qpn;
    s.opcode = wire::op::kSrHello;
    s.payload = payload;
    std::vector<std::uint8_t> f(wire::roce_frame_size(s));
    ASSERT_GT(wire::build_roce(s, f), 0);
    ASSERT_TRUE(a->port.tx(f, clock.now()));
    run(10);
  };
  const wire::SrHelloHdr ok = wire::SrHelloHdr::make(true, 256, 64);
  send({ok.raw, 4}, kIpA);  // short
  wire::SrHelloHdr v2 = ok;
  v2.set_version(2);
  send({v2.raw, sizeof v2.raw}, kIpA);                        // another version
  send({ok.raw, sizeof ok.raw}, wire::Ipv4Addr{0x0a000063});  // not from the peer
  EXPECT_EQ(ctr(*b).sr_hello_bad - before.sr_hello_bad, 3u);
  EXPECT_EQ(ctr(*b).sr_hello_rx, before.sr_hello_rx);
  // A well-formed answer declining: counted, and B probes no more.
  const wire::SrHelloHdr no = wire::SrHelloHdr::make(true, 0, 0);
  send({no.raw, sizeof no.raw}, kIpA);
  EXPECT_EQ(ctr(*b).sr_hello_rx_declined, 1u);
  EXPECT_EQ(ctr(*b).sr_hello_bad - before.sr_hello_bad, 3u);
}

TEST_F(Lossy, Handshake_PeerOff_BothPlainProbesCapped) {
  b_on = false;
  start();
  // Traffic for longer than 4 probe gaps: A probes again as it flows.
  for (int i = 0; i < 12; ++i) {
    write(i + 1, 4096, static_cast<std::uint8_t>(i));
    run(1000);
  }
  const policy::LossyCounters c = ctr(*a);
  EXPECT_EQ(c.sr_hello_tx_probes, policy::Lossy::kMaxProbes);
  EXPECT_EQ(c.sr_hello_rx, 0u);
  EXPECT_EQ(c.sr_connections, 0u);
  EXPECT_EQ(c.sr_qps, 0u);
  EXPECT_FALSE(status_of(a->vnic, 10).sr_peer);
  // B's transport dropped every probe as a foreign opcode.
  EXPECT_EQ(status_of(b->vnic, 10).rc.drop_not_rc, policy::Lossy::kMaxProbes);
  // A keeps its state (its probes promised its responder takes SR) but
  // never switched its requester.
  ASSERT_NE(sr_of(*a), nullptr);
  EXPECT_FALSE(sr_of(*a)->tx_on);
  EXPECT_FALSE(sr_of(*a)->tx_pending);
  EXPECT_EQ(ctr(*a).sr_tx_resends + ctr(*a).tx_sacks, 0u);
}

// Ping-pong SENDs both ways over a lossy link between a device with it on
// (its QP's responder has the state attached, its requester stays plain)
// and one with it off: every one completes, as plain RC.
TEST_F(Lossy, PeerOff_LossyLink_SendsBothWaysComplete) {
  b_on = false;
  link_cfg.dir[0].loss = 0.03;
  link_cfg.dir[1].loss = 0.03;
  start();
  for (int i = 0; i < 200; ++i) {
    ProvQp& tx = i % 2 == 0 ? *aqp : *bqp;
    ProvQp& rx = i % 2 == 0 ? *bqp : *aqp;
    ProvCq& scq = i % 2 == 0 ? *ascq : *bscq;
    ProvCq& rcq = i % 2 == 0 ? *brcq : *arcq;
    Host& from = i % 2 == 0 ? *a : *b;
    Host& to = i % 2 == 0 ? *b : *a;
    rx.post_recv(i, {to.sge(8192, 4096)});
    tx.post_send(send_wqe(i), {from.sge(0, 4096)});
    std::vector<ib_uverbs_wc> s, r;
    for (int k = 0; k < 400'000 && (s.empty() || r.empty()); ++k) {
      run(1);
      for (const ib_uverbs_wc& w : scq.poll()) s.push_back(w);
      for (const ib_uverbs_wc& w : rcq.poll()) r.push_back(w);
    }
    ASSERT_EQ(s.size(), 1u) << i;
    ASSERT_EQ(s[0].status, IBV_WC_SUCCESS) << i;
    ASSERT_EQ(r.size(), 1u) << i;
    ASSERT_EQ(r[0].status, IBV_WC_SUCCESS) << i;
  }
  EXPECT_EQ(ctr(*a).sr_connections, 0u);
  EXPECT_LE(ctr(*a).sr_hello_tx_probes, policy::Lossy::kMaxProbes);
  EXPECT_GT(status_of(a->vnic, 10).rc.tx_retransmits + status_of(b->vnic, 10).rc.tx_retransmits,
            0u);
}

TEST_F(Lossy, Handshake_PoolEmpty_Declined) {
  b_pool = 0;
  start();
  const policy::LossyCounters cb = ctr(*b);
  EXPECT_EQ(cb.sr_pool_empty, 1u);
  EXPECT_EQ(cb.sr_hello_tx_probes, 0u);
  EXPECT_EQ(cb.sr_hello_tx_declined, 1u);
  EXPECT_EQ(cb.sr_qps, 0u);
  EXPECT_EQ(sr_of(*b), nullptr);
  const policy::LossyCounters ca = ctr(*a);
  EXPECT_EQ(ca.sr_hello_rx_declined, 1u);
  EXPECT_EQ(ca.sr_qps, 0u);
  write(1, 8192, 5);
  EXPECT_FALSE(sr_of(*a)->tx_on);
  // Declined: no probe more as traffic flows.
  for (int i = 0; i < 5; ++i) {
    write(i + 2, 1024, 1);
    run(3000);
  }
  EXPECT_EQ(ctr(*a).sr_hello_tx_probes, 1u);
}

TEST_F(Lossy, Handshake_PathMtuWithoutRoom_NeverProbes) {
  // Path MTU 1024: RC's 64 header bytes fit 1090, SR's 72 do not.
  eth_mtu = 1090;
  start();
  for (const Host* h : {a.get(), b.get()}) {
    EXPECT_EQ(ctr(*h).sr_hello_tx_probes, 0u);
    EXPECT_EQ(ctr(*h).sr_pool_free, h == a.get() ? 4u : b_pool);
    EXPECT_EQ(sr_of(*h), nullptr);
  }
  write(1, 4096, 9);
}

// The state the key's help and docs/lossy.md call "about 4 KiB".
TEST(LossyPool, StateSize_AtMost4KiB) { EXPECT_LE(sizeof(transport::RcSr), 4096u); }

TEST_F(Lossy, DestroyQp_StateReturned) {
  start();
  ASSERT_EQ(ctr(*b).sr_pool_free, b_pool - 1);
  EXPECT_EQ(b->vnic.destroy_qp(10), 0);
  EXPECT_EQ(ctr(*b).sr_pool_free, b_pool);
  EXPECT_EQ(ctr(*b).sr_qps, 0u);
  EXPECT_EQ(ctr(*b).sr_connections, 1u);
  EXPECT_EQ(sr_of(*b), nullptr);
}

TEST_F(Lossy, ResetQp_StateReturnedAndNegotiatedAgain) {
  start();
  transport::QpAttrValues v;
  v.qp_state = transport::QpState::kReset;
  ASSERT_EQ(a->modify(10, transport::qp_attr::kState, v), 0);
  EXPECT_EQ(ctr(*a).sr_pool_free, 4u);
  EXPECT_EQ(ctr(*a).sr_qps, 0u);
  EXPECT_EQ(sr_of(*a), nullptr);
  a->connect(10, transport::QpType::kRc, bqp->qpn, kMacB, kIpB, 100, 500);
  run(20);
  EXPECT_EQ(ctr(*a).sr_pool_free, 3u);
  EXPECT_EQ(ctr(*a).sr_hello_tx_probes, 2u);
  EXPECT_EQ(ctr(*a).sr_qps, 1u);
}

TEST_F(Lossy, LossyLink_OnlyLostPacketsResent) {
  link_cfg.dir[0].loss = 0.02;
  link_cfg.dir[1].loss = 0.02;
  start();
  ASSERT_EQ(negotiate_over_loss(), 1u);
  for (int m = 0; m < 20; ++m) write(m + 1, 48 * 1024, static_cast<std::uint8_t>(m));
  const policy::LossyCounters ca = ctr(*a);
  const policy::LossyCounters cb = ctr(*b);
  EXPECT_TRUE(sr_of(*a)->tx_on);
  EXPECT_GT(ca.sr_rx_sacks, 0u);
  EXPECT_GT(cb.tx_sacks, 0u);
  EXPECT_GT(cb.sr_rx_held, 0u);
  EXPECT_GT(ca.sr_tx_resends, 0u);
  // The QP's status has its connection's share (here all of it).
  const QpStatus qa = status_of(a->vnic, 10);
  EXPECT_TRUE(qa.sr_peer);
  EXPECT_EQ(qa.sr.sr_tx_resends, ca.sr_tx_resends);
  EXPECT_EQ(status_of(b->vnic, 10).sr.tx_sacks, cb.tx_sacks);
  // 960 packets sent once at least: what went again is a few per cent of
  // them, not whole windows as go-back-N sends.
  EXPECT_LT(ca.sr_tx_resends, 100u);
}

// Spraying (docs/lossy.md "Spraying") ------------------------------------

// The UDP source port and opcode of every RoCEv2 frame in a pcap file
// (IPv4, no options).
std::vector<std::pair<std::uint16_t, std::uint8_t>> frames_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> f((std::istreambuf_iterator<char>(in)),
                                    std::istreambuf_iterator<char>());
  std::vector<std::pair<std::uint16_t, std::uint8_t>> out;
  std::size_t at = 24;
  while (at + 16 <= f.size()) {
    const std::uint32_t len = f[at + 8] | f[at + 9] << 8 | f[at + 10] << 16 | f[at + 11] << 24;
    const std::uint8_t* fr = f.data() + at + 16;
    if (len >= 43 && fr[12] == 0x08 && fr[13] == 0x00 && fr[23] == 17) {
      out.emplace_back(static_cast<std::uint16_t>(fr[34] << 8 | fr[35]), fr[42]);
    }
    at += 16 + len;
  }
  return out;
}

bool is_sr_write(std::uint8_t op) {
  return op >= wire::sr_opcode(wire::op::kRcWriteFirst) &&
         op <= wire::sr_opcode(wire::op::kRcWriteOnlyImm);
}

// What A sent to B during `fn`, captured where B receives it.
template <class Fn>
std::vector<std::pair<std::uint16_t, std::uint8_t>> captured(port::SimLink& link, Fn&& fn) {
  const std::string path = ::testing::TempDir() + "uroce_lossy_spray.pcap";
  port::PcapWriter w;
  EXPECT_EQ(w.open(path), 0);
  link.attach_pcap(1, &w);
  fn();
  link.attach_pcap(1, nullptr);
  EXPECT_EQ(w.close(), 0);
  auto f = frames_in(path);
  std::remove(path.c_str());
  return f;
}

// spray_paths = 4 with steering: the connection's 4 ports are fixed when
// the peer accepts, the first its own steered port, each landing on the
// peer QP's queue; a WRITE's packets rotate over them.
TEST_F(Lossy, Spray_FourPathsSteeredInRotation) {
  spray = 4;
  steer = true;
  start();
  const transport::RcSr* sr = sr_of(*a);
  ASSERT_NE(sr, nullptr);
  ASSERT_EQ(sr->spray.paths(), 4u);
  const std::uint16_t own = port::steered_src_port_v4(kIpA, kIpB, aqp->qpn, bqp->qpn);
  EXPECT_EQ(sr->spray.port(0), own);
  std::set<std::uint16_t> ports;
  for (std::uint32_t i = 0; i < 4; ++i) {
    const std::uint16_t p = sr->spray.port(i);
    ports.insert(p);
    EXPECT_GE(p, port::kSteerPortBase);
    EXPECT_EQ(port::rss_hash_v4(kIpA, kIpB, p, wire::kRoceV2Port) & port::kSteerMask,
              bqp->qpn & port::kSteerMask)
        << i;
  }
  EXPECT_EQ(ports.size(), 4u);
  const auto f = captured(*link, [&] { write(1, 16 * 1024, 2); });
  std::vector<std::uint16_t> sent;
  for (const auto& [port, op] : f) {
    if (is_sr_write(op)) sent.push_back(port);
  }
  ASSERT_EQ(sent.size(), 16u);
  for (std::size_t i = 0; i < sent.size(); ++i) EXPECT_EQ(sent[i], sr->spray.port(i % 4)) << i;
  EXPECT_EQ(ctr(*a).sr_spray_tx, 16u);
  const engine::QpStatus st = status_of(a->vnic, 10);
  EXPECT_EQ(st.sr.sr_spray_tx, 16u);
  EXPECT_EQ(st.sr_paths, 4u);  // uroce-ctl qps: "sr 4/0"
  EXPECT_EQ(st.sr_avoided, 0u);
}

// The same device with a peer that has selective repeat off: the
// connection stays go-back-N and every packet leaves from its one port.
TEST_F(Lossy, Spray_GoBackNConnectionKeepsOnePort) {
  spray = 4;
  b_on = false;
  start();
  const auto f = captured(*link, [&] { write(1, 16 * 1024, 2); });
  std::set<std::uint16_t> ports;
  std::size_t n = 0;
  for (const auto& [port, op] : f) {
    if (op == wire::op::kRcWriteFirst || op == wire::op::kRcWriteMiddle ||
        op == wire::op::kRcWriteLast) {
      ports.insert(port);
      ++n;
    }
  }
  EXPECT_EQ(n, 16u);
  EXPECT_EQ(ports.size(), 1u);
  EXPECT_EQ(ctr(*a).sr_spray_tx, 0u);
}

// spray_paths = 1: the connection's packets all leave from its own port and
// nothing is counted, as before the key existed.
TEST_F(Lossy, Spray_OnePathAsBefore) {
  start();
  ASSERT_NE(sr_of(*a), nullptr);
  EXPECT_FALSE(sr_of(*a)->spray.on());
  const auto f = captured(*link, [&] { write(1, 16 * 1024, 2); });
  std::set<std::uint16_t> ports;
  for (const auto& [port, op] : f) {
    if (is_sr_write(op)) ports.insert(port);
  }
  EXPECT_EQ(ports.size(), 1u);
  const policy::LossyCounters c = ctr(*a);
  EXPECT_EQ(c.sr_spray_tx + c.sr_spray_losses + c.sr_spray_avoided, 0u);
  EXPECT_EQ(status_of(a->vnic, 10).sr_paths, 0u);  // uroce-ctl qps: "sr"
}

// Over a lossy link a spraying connection delivers everything intact, and
// its losses are charged to paths.
TEST_F(Lossy, Spray_LossyLinkChargesPaths) {
  spray = 4;
  link_cfg.dir[0].loss = 0.02;
  link_cfg.dir[1].loss = 0.02;
  start();
  ASSERT_EQ(negotiate_over_loss(), 1u);
  for (int m = 0; m < 20; ++m) write(m + 1, 48 * 1024, static_cast<std::uint8_t>(m));
  const policy::LossyCounters c = ctr(*a);
  EXPECT_GE(c.sr_spray_tx, 20u * 48u);
  EXPECT_GT(c.sr_spray_losses, 0u);
  EXPECT_GT(c.sr_spray_avoided, 0u);
  EXPECT_LT(c.sr_tx_resends, 100u);
}

}  // namespace
}  // namespace uroce::engine::test
