// RX of RoCEv2 over IPv6 and of neighbour discovery in the Vnic (vnic/rx.h),
// with the TX side it answers: two Vnics on a simulated link resolve each
// other's link-local and global addresses with NS/NA, run an RC SEND and a
// UD SEND over IPv6, and drop what is not for them with its counter (DC
// packets too, for which the engine has no target yet). And "control frames
// first": the ACK a QP owes leaves before the data the same iteration pumps;
// with the plain pump one ACK answers a QP's whole RX burst.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "datapath/wire/ipv6.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

const wire::Ipv6Addr kLlA = wire::Ipv6Addr::link_local(kMacA);
const wire::Ipv6Addr kLlB = wire::Ipv6Addr::link_local(kMacB);
const wire::Ipv6Addr kGlobalB = *wire::Ipv6Addr::parse("2001:db8::b");

// From our link-local address (`src`) to the peer's (`dst`).
transport::PathAddr path6(const wire::MacAddr& dmac, const wire::Ipv6Addr& src,
                          const wire::Ipv6Addr& dst) {
  transport::PathAddr p;
  p.dmac = dmac;
  p.ipv6 = true;
  p.route6 = wire::Ipv6Route{src, dst, 0};
  p.ttl = 1;  // on-link, as rdma-core's pingpongs ask
  return p;
}

TEST_F(TwoHosts, Resolve6_NeighbourDiscoveryBetweenTwoVnics) {
  wire::MacAddr mac;
  EXPECT_FALSE(a.vnic.resolve6(kLlB, clock.now(), &mac));
  run(10);
  ASSERT_TRUE(a.vnic.resolve6(kLlB, clock.now(), &mac));
  EXPECT_EQ(mac, kMacB);
  EXPECT_EQ(b.vnic.nd_counters().rx_solicits, 1u);
  EXPECT_EQ(a.vnic.nd_counters().learned, 1u);
  EXPECT_EQ(b.vnic.counters().rx_nd, 1u);
  EXPECT_EQ(b.vnic.counters().rx_parse_errors, 0u);
  // B learned A from the solicitation's source link-layer option.
  EXPECT_TRUE(b.vnic.resolve6(kLlA, clock.now(), &mac));
  EXPECT_EQ(mac, kMacA);
  // An address nobody has stays unresolved.
  EXPECT_FALSE(a.vnic.resolve6(kGlobalB, clock.now(), &mac));
  run(10);
  EXPECT_FALSE(a.vnic.resolve6(kGlobalB, clock.now(), &mac));
}

TEST(Vnic_Resolve6, GlobalAddressAnswers) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  port::SimLink link{port::SimLinkConfig::symmetric(d, 5)};
  Host a{link, 0, kMacA, kIpA};
  VnicConfig cb = Host::config(kMacB, kIpB, 1500);
  cb.ip6 = kGlobalB;
  port::SimPort pb(link, 1);
  SimPortIo iob(pb);
  TestVnic vb(cb, iob);
  VirtualClock clock;
  wire::MacAddr mac;
  EXPECT_FALSE(a.vnic.resolve6(kGlobalB, clock.now(), &mac));
  for (int i = 0; i < 10; ++i) {
    a.vnic.poll(clock.now());
    vb.poll(clock.now());
    clock.advance_by(500);
  }
  ASSERT_TRUE(a.vnic.resolve6(kGlobalB, clock.now(), &mac));
  EXPECT_EQ(mac, kMacB);
}

// A SEND of 3000 bytes over a path MTU of 1024 (three packets) on a
// connected QP of `type` over IPv6 between the link-local addresses.
void connected_send_over_ipv6(Host& a, Host& b, QpType type, TwoHosts& t) {
  auto ascq = a.make_cq(1), arcq = a.make_cq(2), bscq = b.make_cq(1), brcq = b.make_cq(2);
  auto aqp = a.make_qp(10, type, 1, 2);
  auto bqp = b.make_qp(10, type, 1, 2);
  a.connect_path(10, type, bqp->qpn, path6(kMacB, kLlA, kLlB), 100, 500);
  b.connect_path(10, type, aqp->qpn, path6(kMacA, kLlB, kLlA), 500, 100);
  std::memset(a.mem.data(), 0x5c, 3000);
  bqp->post_recv(1, {b.sge(0, 4096)});
  aqp->post_send(send_wqe(2), {a.sge(0, 3000)});
  t.run(40);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kSuccess);
  const auto r = brcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 3000u);
  EXPECT_EQ(std::memcmp(b.mem.data(), a.mem.data(), 3000), 0);
  EXPECT_GE(b.vnic.counters().rx_roce_ipv6, 3u);
  EXPECT_EQ(b.vnic.counters().rx_not_our_ip, 0u);
}

TEST_F(TwoHosts, RcSendOverIpv6LinkLocal) {
  connected_send_over_ipv6(a, b, QpType::kRc, *this);
  EXPECT_GE(a.vnic.counters().rx_roce_ipv6, 1u);  // the ACKs, over IPv6 too
}

TEST_F(TwoHosts, UcSendOverIpv6LinkLocal) { connected_send_over_ipv6(a, b, QpType::kUc, *this); }

TEST_F(TwoHosts, RcOverIpv6DropsAPeerOnIpv4) {
  // B's QP expects A over IPv6; A sends over IPv4: rxe's check_addr drops
  // it (the QP counts drop_addr), nothing is delivered.
  auto ascq = a.make_cq(1), arcq = a.make_cq(2), bscq = b.make_cq(1), brcq = b.make_cq(2);
  auto aqp = a.make_qp(10, QpType::kRc, 1, 2);
  auto bqp = b.make_qp(10, QpType::kRc, 1, 2);
  a.connect(10, QpType::kRc, bqp->qpn, kMacB, kIpB, 100, 500);
  b.connect_path(10, QpType::kRc, aqp->qpn, path6(kMacA, kLlB, kLlA), 500, 100);
  bqp->post_recv(1, {b.sge(0, 4096)});
  aqp->post_send(send_wqe(2), {a.sge(0, 100)});
  run(20);
  EXPECT_TRUE(brcq->poll().empty());
  EXPECT_EQ(b.vnic.counters().rx_roce_ipv6, 0u);
  EXPECT_GE(b.vnic.counters().rx_dispatched, 1u);
}

TEST_F(TwoHosts, UdSendOverIpv6CarriesTheIpv6HeaderAsGrh) {
  constexpr std::uint32_t kQkey = 0x22222222;
  auto acq = a.make_cq(1), bcq = b.make_cq(1);
  auto aqp = a.make_qp(20, QpType::kUd, 1, 1);
  auto bqp = b.make_qp(20, QpType::kUd, 1, 1);
  a.ud_up(20, kQkey);
  b.ud_up(20, kQkey);
  AhCreate h;
  h.id = 5;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.dscp = 26;
  h.ttl = 7;
  h.ipv6 = true;
  h.dip6 = kLlB;
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  bqp->post_recv(3, {b.sge(0, 40 + 256)});
  shm::SendWqeFields f = send_wqe(4);
  f.remote_qpn = bqp->qpn;
  f.remote_qkey = kQkey;
  f.ah_num = 5;
  std::memset(a.mem.data() + 1024, 0x77, 256);
  aqp->post_send(f, {a.sge(1024, 256)});
  run(10);
  ASSERT_EQ(acq->poll().size(), 1u);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 40u + 256u);
  EXPECT_EQ(r[0].sl, transport::kWcSlRoceIpv6);
  EXPECT_NE(r[0].wc_flags & transport::wc_flag::kGrh, 0u);
  // The GRH area is the IPv6 header as received.
  const wire::Ipv6Hdr grh = wire::Ipv6Hdr::read(b.mem.data());
  EXPECT_EQ(grh.version(), 6);
  EXPECT_EQ(grh.src(), kLlA);
  EXPECT_EQ(grh.dst(), kLlB);
  EXPECT_EQ(grh.dscp(), 26);
  EXPECT_EQ(grh.hop_limit(), 7);
  EXPECT_EQ(grh.flow_label(), 0u);  // as rxe sends it
  EXPECT_EQ(grh.next_header(), wire::kIpProtoUdp);
  EXPECT_EQ(b.mem[40], 0x77);
}

TEST_F(TwoHosts, UdOverIpv6ToAnotherAddressIsNotOurs) {
  constexpr std::uint32_t kQkey = 0x22222222;
  auto acq = a.make_cq(1), bcq = b.make_cq(1);
  auto aqp = a.make_qp(20, QpType::kUd, 1, 1);
  auto bqp = b.make_qp(20, QpType::kUd, 1, 1);
  a.ud_up(20, kQkey);
  b.ud_up(20, kQkey);
  AhCreate h;
  h.id = 5;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.ipv6 = true;
  h.dip6 = kGlobalB;  // B has no global address
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  bqp->post_recv(3, {b.sge(0, 40 + 256)});
  shm::SendWqeFields f = send_wqe(4);
  f.remote_qpn = bqp->qpn;
  f.remote_qkey = kQkey;
  f.ah_num = 5;
  aqp->post_send(f, {a.sge(0, 64)});
  run(10);
  EXPECT_TRUE(bcq->poll().empty());
  EXPECT_EQ(b.vnic.counters().rx_not_our_ip, 1u);
  EXPECT_EQ(b.vnic.counters().rx_roce_ipv6, 1u);
}

// DC packets (docs/dc.md) reach only DCTs and DCIs (vnic/dc.h): to an RC
// QP's QPN or to none they are counted and dropped before the demux, over
// IPv4 and IPv6.
TEST(Vnic_Rx, DcPacketsCountedAndDropped) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  auto cq = a.make_cq(1);
  auto q = a.make_qp(2, QpType::kRc, 1, 1);
  auto send = [&](wire::PacketSpec sp) {
    std::vector<std::uint8_t> f(wire::roce_frame_size(sp));
    ASSERT_GT(wire::build_roce(sp, f), 0);
    ASSERT_TRUE(peer.tx(f, 0));
  };
  const std::uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kDcSendOnly;
  sp.dc_eth = wire::DcEthHdr::make(1, true, 0x33, 0, 1, 0);
  sp.payload = payload;
  sp.dest_qp = q->qpn;
  send(sp);
  wire::PacketSpec unknown_qpn = sp;
  unknown_qpn.dest_qp = q->qpn ^ 0x800;
  send(unknown_qpn);
  wire::PacketSpec ack;
  ack.eth_src = kMacB;
  ack.eth_dst = kMacA;
  ack.ip_src = kIpB;
  ack.ip_dst = kIpA;
  ack.opcode = wire::op::kDcAck;
  ack.dc_aeth = wire::DcAethHdr::make(0, wire::DcStatus::kGone, 1);
  ack.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
  ack.dest_qp = q->qpn;
  send(ack);
  const wire::Ipv6Route route{kLlB, kLlA, 0};
  wire::PacketSpec v6 = sp;
  v6.ip6 = &route;
  send(v6);
  a.vnic.poll(0);
  const VnicCounters& c = a.vnic.counters();
  EXPECT_EQ(c.rx_roce, 4u);
  EXPECT_EQ(c.rx_roce_ipv6, 1u);
  EXPECT_EQ(c.rx_dc_no_target, 4u);
  EXPECT_EQ(c.rx_dispatched, 0u);
  EXPECT_EQ(c.rx_no_qp, 0u);
  EXPECT_EQ(c.rx_parse_errors, 0u);
  std::vector<QpStatus> st;
  a.vnic.qp_status(&st);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].engine.rx_packets, 0u);
  EXPECT_EQ(st[0].rc.drop_not_rc, 0u);
}

// Both sides stream WRITEs. B's iteration receives A's requests (their ACK
// is due) and pumps its own WRITEs on the same QP: the ACK goes first (the
// QP's turn sends responder output before requests), so it never waits
// behind the data that QP sends.
TEST_F(TwoHosts, ControlFramesFirst_AckOfAnIterationLeavesBeforeItsData) {
  RcQpPair p;
  p.open(a, b);
  for (std::uint64_t i = 0; i < 4; ++i) {
    p.aqp->post_send(write_wqe(i, b.va(0), b.key), {a.sge(0, 1024)});
    p.bqp->post_send(write_wqe(i, a.va(0), a.key), {b.sge(0, 1024)});
  }
  a.vnic.poll(clock.now());  // A's four WRITEs go out
  clock.advance_by(5000);    // and reach B
  b.vnic.poll(clock.now());  // B: RX (A's WRITEs), doorbells, pump
  std::vector<std::uint8_t> ops;
  link.receive(0, clock.now() + 1'000'000, [&](const port::SimDelivery& d) {
    wire::ParsedPacket pkt;
    if (wire::parse_roce(d.frame, pkt) == wire::ParseError::kOk) ops.push_back(pkt.bth.opcode());
  });
  ASSERT_GE(ops.size(), 5u);
  EXPECT_EQ(ops.front(), wire::op::kRcAck);
  const auto first_data =
      std::find_if(ops.begin(), ops.end(), [](std::uint8_t o) { return o != wire::op::kRcAck; });
  ASSERT_NE(first_data, ops.end());
  EXPECT_EQ(std::count(first_data, ops.end(), wire::op::kRcAck), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), wire::op::kRcAck) + 4, ops.size());
}

// A posts `n` SENDs (every one asks for an ACK) that reach B in one RX
// burst; returns the ACKs B's QP sent for them in that iteration, then
// checks that every SEND completes.
std::uint64_t acks_for_one_burst(Host& a, Host& b, VirtualClock& clock, std::uint64_t n) {
  RcQpPair p;
  p.open(a, b);
  for (std::uint64_t i = 0; i < n; ++i) p.bqp->post_recv(i, {b.sge(64 * i, 64)});
  b.vnic.poll(clock.now());  // B takes its receive WRs
  for (std::uint64_t i = 0; i < n; ++i) p.aqp->post_send(send_wqe(i), {a.sge(64 * i, 64)});
  a.vnic.poll(clock.now());  // A's SENDs go out
  clock.advance_by(5000);    // and reach B
  b.vnic.poll(clock.now());  // B: one RX burst, then its pump
  const std::uint64_t acks = status_of(b.vnic, 10).rc.tx_acks;
  for (int i = 0; i < 20; ++i) {
    clock.advance_by(500);
    a.vnic.poll(clock.now());
    b.vnic.poll(clock.now());
  }
  const auto s = p.ascq->poll();
  EXPECT_EQ(s.size(), n);
  for (const auto& c : s) EXPECT_EQ(st(c), WcStatus::kSuccess);
  EXPECT_EQ(p.brcq->poll().size(), n);
  EXPECT_EQ(status_of(b.vnic, 10).rc.tx_acks, acks);  // no ACK owed later
  return acks;
}

// With the plain pump the ACK a request makes due waits for the QP's turn
// in the same iteration (rc_qp.h, AckTiming::kPump): the newest PSN
// acknowledges the whole burst, so one ACK answers eight SENDs.
TEST_F(TwoHosts, AckTiming_PlainPumpSendsOneAckPerBurst) {
  EXPECT_EQ(acks_for_one_burst(a, b, clock, 8), 1u);
}

// With traffic classes the pump may hold a QP back, so ACKs leave from the
// RX phase, one per request that asked for one (control frames first).
TEST(Vnic_Rx, AckTiming_ClassesAckFromTheRxPhase) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  port::SimLink link{port::SimLinkConfig::symmetric(d, 5)};
  Host a{link, 0, kMacA, kIpA};
  VnicConfig cb = Host::config(kMacB, kIpB, 1500);
  cb.sched.isolation = sched::Isolation::kClasses;
  Host b{link, 1, cb};
  VirtualClock clock;
  EXPECT_EQ(acks_for_one_burst(a, b, clock, 8), 8u);
}

}  // namespace
}  // namespace uroce::engine::test

namespace uroce::engine::test {
namespace {

// Every frame a raw peer sends is counted once in rx_frames and once in
// exactly one class (rx_frames_accounted): random bytes, cut and bit-flipped
// RoCEv2 frames, ARP, MAC Control (PAUSE), other EtherTypes, runts.
TEST(Vnic_RxPhase, EveryFrameCountedOnceWhateverItHolds) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  auto cq = a.make_cq(1);
  auto q = a.make_qp(2, transport::QpType::kUd, 1, 1);
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kUdSendOnly;
  sp.deth = wire::DethHdr::make(1, 5);
  sp.dest_qp = q->qpn;
  const std::uint8_t body[32] = {1, 2, 3};
  sp.payload = body;
  std::vector<std::uint8_t> good(wire::roce_frame_size(sp));
  ASSERT_GT(wire::build_roce(sp, good), 0);

  std::uint32_t seed = 12345;
  auto rnd = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  std::uint64_t sent = 0;
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::uint8_t> f;
    switch (i % 6) {
      case 0: {  // random bytes, any length up to a jumbo frame
        f.resize(rnd() % 1600);
        for (auto& b : f) b = static_cast<std::uint8_t>(rnd());
        break;
      }
      case 1:  // a RoCEv2 frame cut short
        f.assign(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(rnd() % good.size()));
        break;
      case 2:  // one flipped bit
        f = good;
        f[rnd() % f.size()] ^= static_cast<std::uint8_t>(1u << (rnd() % 8));
        break;
      case 3:  // MAC Control (PAUSE) and other EtherTypes
        f.assign(64, 0);
        std::memcpy(f.data(), kMacA.b.data(), 6);
        wire::store_be16(f.data() + 12, i % 12 == 3 ? 0x8808 : static_cast<std::uint16_t>(rnd()));
        break;
      case 4:  // ARP, possibly malformed
        f.assign(42, 0);
        std::memset(f.data(), 0xff, 6);
        wire::store_be16(f.data() + 12, wire::kEtherTypeArp);
        for (std::size_t k = 14; k < f.size(); ++k) f[k] = static_cast<std::uint8_t>(rnd());
        break;
      default: f = good; break;
    }
    if (f.empty()) f.push_back(0);  // the empty span is the port's "unreadable" (below)
    ASSERT_TRUE(peer.tx(f, 0));
    ++sent;
    if (i % 16 == 15) a.vnic.poll(0);
  }
  // What EthPortIo hands on for a chain of too many segments (eth_port_io.h).
  ASSERT_TRUE(peer.tx(std::span<const std::uint8_t>{}, 0));
  ++sent;
  for (int k = 0; k < 4; ++k) a.vnic.poll(0);
  const VnicCounters& c = a.vnic.counters();
  EXPECT_EQ(c.rx_unreadable, 1u);
  EXPECT_EQ(c.rx_frames, sent);
  EXPECT_EQ(rx_frames_accounted(c), c.rx_frames);
  EXPECT_GT(c.rx_roce, 0u);
  EXPECT_GT(c.rx_parse_errors, 0u);
  EXPECT_GT(c.rx_arp, 0u);
}

// B is shard 0 of 2 (VnicConfig::shard). A SEND to a QPN of shard 1 is not
// parsed here and reaches neither a QP nor rx_no_qp: it is for the other
// shard. Over a port adapter that cannot hand frames to another lcore
// (SimPortIo), it is dropped and counted rx_handoff_drop (eth_port_io.h
// hands it off).
TEST(VnicRx_Shards, FrameForAnotherShardsQpIsNotDeliveredHere) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  port::SimLink link{port::SimLinkConfig::symmetric(d, 5)};
  Host a{link, 0, kMacA, kIpA};
  VnicConfig cb = Host::config(kMacB, kIpB, 1500);
  cb.shard = 0;
  cb.shards = 2;
  Host b{link, 1, cb};
  VirtualClock clock;
  auto acq = a.make_cq(1);
  auto aqp = a.make_qp(10, QpType::kUc, 1, 1);
  // A QPN of shard 1 of 2 (odd low bits).
  std::uint32_t other = 0x31;
  ASSERT_EQ(port::shard_of_qpn(other, 2), 1u);
  a.connect(10, QpType::kUc, other, kMacB, kIpB, 100, 500);
  aqp->post_send(send_wqe(1), {a.sge(0, 64)});
  for (int i = 0; i < 20; ++i) {
    a.vnic.poll(clock.now());
    b.vnic.poll(clock.now());
    clock.advance_by(500);
  }
  const VnicCounters c = b.vnic.counters();
  EXPECT_EQ(c.rx_roce, 0u);
  EXPECT_EQ(c.rx_handoff_drop, 1u);
  EXPECT_EQ(rx_frames_accounted(c), c.rx_frames);
  EXPECT_EQ(c.rx_handoff, 0u);
  EXPECT_EQ(c.rx_no_qp, 0u);
  EXPECT_EQ(c.rx_dispatched, 0u);
}

// Neighbours are shard 0's: B as shard 1 of 2 neither answers A's ARP
// request or IPv6 neighbour solicitation nor learns from it, and hands it
// over (over SimPortIo, which cannot, it is dropped and counted
// rx_handoff_drop); so A stays unresolved. Shard 0 answers (the control:
// same set-up, shard 0).
TEST(VnicRx_Shards, ArpAndNdGoToShardZero) {
  for (const bool v6 : {false, true}) {
    for (const std::uint16_t shard : {std::uint16_t{1}, std::uint16_t{0}}) {
      port::SimDirectionConfig d;
      d.propagation_ns = 1000;
      port::SimLink link{port::SimLinkConfig::symmetric(d, 5)};
      Host a{link, 0, kMacA, kIpA};
      VnicConfig cb = Host::config(kMacB, kIpB, 1500);
      cb.shard = shard;
      cb.shards = 2;
      Host b{link, 1, cb};
      VirtualClock clock;
      wire::MacAddr mac{};
      auto resolved = [&] {
        return v6 ? a.vnic.resolve6(kLlB, clock.now(), &mac)
                  : a.vnic.resolve(kIpB, clock.now(), &mac);
      };
      EXPECT_FALSE(resolved());
      for (int i = 0; i < 20; ++i) {
        a.vnic.poll(clock.now());
        b.vnic.poll(clock.now());
        clock.advance_by(500);
      }
      const VnicCounters c = b.vnic.counters();
      SCOPED_TRACE(::testing::Message() << "v6 " << v6 << " shard " << shard);
      EXPECT_EQ(rx_frames_accounted(c), c.rx_frames);
      const std::uint64_t seen = v6 ? c.rx_nd : c.rx_arp;
      const std::uint64_t answered =
          v6 ? b.vnic.nd_counters().rx_solicits : b.vnic.arp_counters().tx_replies;
      if (shard == 1) {
        EXPECT_EQ(seen, 0u);
        EXPECT_EQ(c.rx_handoff_drop, 1u);
        EXPECT_EQ(answered, 0u);
        EXPECT_FALSE(resolved());
      } else {
        EXPECT_EQ(seen, 1u);
        EXPECT_EQ(c.rx_handoff_drop, 0u);
        EXPECT_EQ(answered, 1u);
        EXPECT_TRUE(resolved());
        EXPECT_EQ(mac, kMacB);
      }
    }
  }
}

// Ports whose RX buffers are 1 KiB (SimPortIo::set_rx_buf) at path MTU
// 4096: every data frame arrives as a chain of five segments, and RC SEND,
// WRITE and READ and a UD SEND land intact, read in place (rx.h, payload.h).
TEST(VnicRx_Chained, RcAndUdOverOneKibBuffersLandIntact) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  port::SimLink link{port::SimLinkConfig::symmetric(d, 5)};
  Host a{link, 0, kMacA, kIpA, 9000};
  Host b{link, 1, kMacB, kIpB, 9000};
  a.io.set_rx_buf(1024);
  b.io.set_rx_buf(1024);
  VirtualClock clock;
  auto run = [&](int n) {
    for (int i = 0; i < n; ++i) {
      a.vnic.poll(clock.now());
      b.vnic.poll(clock.now());
      clock.advance_by(500);
    }
  };
  for (std::size_t i = 0; i < Host::kMem; ++i) {
    a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1);
    b.mem[i] = static_cast<std::uint8_t>(i * 13 + 5);
  }
  auto ascq = a.make_cq(1), arcq = a.make_cq(2), bscq = b.make_cq(1), brcq = b.make_cq(2);
  auto aqp = a.make_qp(10, QpType::kRc, 1, 2);
  auto bqp = b.make_qp(10, QpType::kRc, 1, 2);
  a.connect(10, QpType::kRc, bqp->qpn, kMacB, kIpB, 100, 500);
  b.connect(10, QpType::kRc, aqp->qpn, kMacA, kIpA, 500, 100);
  const std::vector<std::uint8_t> b_before = b.mem;

  // SEND a[0, 10000) -> b[16384, ...); WRITE a[10000, 20000) -> b[32768, ...);
  // READ b[0, 9000) -> a[40000, ...).
  bqp->post_recv(1, {b.sge(16384, 16384)});
  aqp->post_send(send_wqe(2), {a.sge(0, 10000)});
  aqp->post_send(write_wqe(3, b.va(32768), b.key), {a.sge(10000, 10000)});
  shm::SendWqeFields rd = wqe(4, IBV_WR_RDMA_READ);
  rd.remote_addr = b.va(0);
  rd.rkey = b.key;
  aqp->post_send(rd, {a.sge(40000, 9000)});
  run(200);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 3u);
  for (const auto& w : s) EXPECT_EQ(st(w), WcStatus::kSuccess);
  const auto r = brcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 10000u);
  EXPECT_EQ(std::memcmp(b.mem.data() + 16384, a.mem.data(), 10000), 0);
  EXPECT_EQ(std::memcmp(b.mem.data() + 32768, a.mem.data() + 10000, 10000), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 40000, b_before.data(), 9000), 0);

  // UD: one 4000-byte datagram (GRH area + payload).
  constexpr std::uint32_t kQkey = 0x22222222;
  auto aud = a.make_qp(20, QpType::kUd, 1, 2);
  auto bud = b.make_qp(20, QpType::kUd, 1, 2);
  a.ud_up(20, kQkey);
  b.ud_up(20, kQkey);
  AhCreate h;
  h.id = 5;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.dip = kIpB;
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  bud->post_recv(6, {b.sge(50000, 40 + 4000)});
  shm::SendWqeFields u = send_wqe(7);
  u.ah_num = 5;
  u.remote_qpn = bud->qpn;
  u.remote_qkey = kQkey;
  aud->post_send(u, {a.sge(20000, 4000)});
  run(40);
  const auto ur = brcq->poll();
  ASSERT_EQ(ur.size(), 1u);
  EXPECT_EQ(st(ur[0]), WcStatus::kSuccess);
  EXPECT_EQ(ur[0].byte_len, 40u + 4000u);
  EXPECT_EQ(std::memcmp(b.mem.data() + 50040, a.mem.data() + 20000, 4000), 0);

  EXPECT_GE(b.io.chained(), 3u + 3u + 1u);  // SEND and WRITE packets, the datagram
  EXPECT_GE(a.io.chained(), 3u);            // READ responses
  for (const Host* x : {&a, &b}) {
    const VnicCounters& c = x->vnic.counters();
    EXPECT_EQ(c.rx_parse_errors, 0u);
    EXPECT_EQ(c.rx_unreadable, 0u);
    EXPECT_EQ(rx_frames_accounted(c), c.rx_frames);
  }
}

}  // namespace
}  // namespace uroce::engine::test
